// The store's layout: the collector's schema is the one docs/store.md
// documents, kernel names are stored once, a schema 1 or 2 store is upgraded
// in place (rows unchanged, new runs appended) or, if it cannot be, left
// exactly as it was, and an atomic run that fails leaves nothing behind.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <type_traits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "sources/rft/ingest.h"
#include "sources/rft/testing/trace_builder.h"
#include "base/cli.h"
#include "store/schema_version.h"
#include "store/store.h"
#include "store/store_reader.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/store_schema1.h"
#include "tests/support/aborted_run.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::LlmTraceOptions;
using test_support::StoreQuery;
using test_support::TraceBuilder;

void Exec(const std::string& path, const std::string& sql) {
  ASSERT_EQ(test_support::ExecSql(path, sql), "");
}

// Every row of a query, each as "v1|v2|...", NULL as "<null>".
std::vector<std::string> Rows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::vector<std::string> out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    return {"<cannot open>"};
  }
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    out.push_back(std::string("<error: ") + sqlite3_errmsg(db) + ">");
  } else {
    while (sqlite3_step(s) == SQLITE_ROW) {
      std::string row;
      for (int i = 0; i < sqlite3_column_count(s); ++i) {
        const auto* t = sqlite3_column_text(s, i);
        row += (i ? "|" : "");
        row += t ? reinterpret_cast<const char*>(t) : "<null>";
      }
      out.push_back(std::move(row));
    }
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

// Name, type, NOT NULL and primary key of every column of every table and
// view, and the names of the indexes and triggers.
std::map<std::string, std::vector<std::string>> Layout(const std::string& path) {
  std::map<std::string, std::vector<std::string>> out;
  for (const std::string& obj :
       Rows(path, "SELECT type || ' ' || name FROM sqlite_master WHERE name "
                  "NOT LIKE 'sqlite_%' ORDER BY name")) {
    const std::string name = obj.substr(obj.find(' ') + 1);
    out[obj] = obj.starts_with("index") || obj.starts_with("trigger")
                   ? std::vector<std::string>{}
                   : Rows(path, "SELECT name, type, \"notnull\", pk FROM "
                                "pragma_table_info('" + name + "')");
  }
  return out;
}

class StoreSchemaTest : public ::testing::Test {
 protected:
  // A generated LLM trace (225 kernels, 8 distinct names) as a file.
  std::string Trace() {
    LlmTraceOptions o;
    TraceBuilder b(o.session);
    test_support::GenerateLlmTrace(o, &b);
    const std::string path = dir_.File("llm.rft");
    EXPECT_TRUE(b.WriteFile(path).ok());
    return path;
  }

  // Stores `trace` as run 1, then turns the store back into an older
  // schema with `downgrade`; returns run 1's kernels as they were.
  std::vector<std::string> IngestThenDowngrade(const std::string& trace,
                                               const char* downgrade) {
    EXPECT_TRUE(IngestTraceFile(trace, store_, {}).ok());
    std::vector<std::string> before =
        Rows(store_, "SELECT * FROM kernels ORDER BY kernel_id");
    Exec(store_, downgrade);
    return before;
  }

  // Stores `trace` again (which upgrades the store), then checks the store
  // is at the current schema with a new store's layout, and run 1's
  // kernels are `before`, each column as it was.
  void ExpectUpgradedKeepingRows(const std::string& trace,
                                 const std::vector<std::string>& before) {
    ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
    EXPECT_EQ(StoreQuery(store_).Text(
                  "SELECT value FROM schema_info WHERE key='schema_version'"),
              std::to_string(kStoreSchemaVersion));
    EXPECT_EQ(Layout(store_), FreshLayout());
    EXPECT_EQ(Rows(store_, "SELECT * FROM kernels WHERE run_id = 1 ORDER BY "
                           "kernel_id"),
              before);
  }

  // The layout of a store created now: what an upgraded one must have.
  std::map<std::string, std::vector<std::string>> FreshLayout() {
    const std::string fresh = dir_.File("fresh.sqlite");
    { EXPECT_TRUE(Store::Open(fresh).ok()); }
    return Layout(fresh);
  }

  test_support::TempDir dir_{"store_schema"};
  std::string store_ = dir_.File("runs.sqlite");
};

TEST_F(StoreSchemaTest, TheCollectorWritesTheDocumentedSchema) {
  { ASSERT_TRUE(Store::Open(store_).ok()); }
  const std::string ddl = test_support::DocsStoreDdl(ROOFTRACE_SOURCE_DIR);
  ASSERT_FALSE(ddl.empty()) << "docs/store.md has no ```sql block";
  const std::string doc = dir_.File("doc.sqlite");
  Exec(doc, ddl);
  const auto written = Layout(store_);
  EXPECT_EQ(written, Layout(doc));
  EXPECT_TRUE(written.contains("view kernels"));
  EXPECT_TRUE(written.contains("table kernel_rows"));
  EXPECT_TRUE(written.contains("trigger kernels_insert"));
  EXPECT_EQ(StoreQuery(store_).Text(
                "SELECT value FROM schema_info WHERE key='schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(StoreQuery(store_).Int("PRAGMA page_size"), 65536);
}

// A store created elsewhere keeps its page size (SQLite cannot change it in
// WAL mode, and rewriting a user's file is not ours to do).
TEST_F(StoreSchemaTest, AnExistingStoreKeepsItsPageSize) {
  // A store of 4 KiB pages (only its schema_info written yet).
  Exec(store_,
       "PRAGMA page_size=4096; CREATE TABLE schema_info (key TEXT PRIMARY "
       "KEY, value TEXT NOT NULL); INSERT INTO schema_info VALUES "
       "('schema_version', '" + std::to_string(kStoreSchemaVersion) + "')");
  { ASSERT_TRUE(Store::Open(store_).ok()); }
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("PRAGMA page_size"), 4096);
  EXPECT_EQ(q.Text("SELECT type FROM sqlite_master WHERE name='kernels'"),
            "view");
}

// Issue 18 item 11: another program's SQLite file, or an empty file, given
// as the store got rooftrace's tables added. Both are refused with the fix,
// and the file is left as it was; a new file is still a new store.
TEST_F(StoreSchemaTest, ForeignDatabasesAndEmptyFilesAreRefused) {
  Exec(store_, "CREATE TABLE user_notes (t TEXT); INSERT INTO user_notes "
               "VALUES ('mine')");
  auto foreign = Store::Open(store_);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("another program (tables "
                                            "user_notes)"),
            std::string::npos)
      << foreign.status().message();
  EXPECT_EQ(StoreQuery(store_).Int("SELECT count(*) FROM sqlite_master"), 1);
  const std::string empty = dir_.File("empty.sqlite");
  { std::ofstream touch(empty); }
  auto refused = Store::Open(empty);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("an empty file"),
            std::string::npos);
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);
  EXPECT_TRUE(Store::Open(dir_.File("new.sqlite")).ok());
}

// Issue 37 item 13: schema_version was read with atoi, so "abc" (read as
// 0), "-1" and 20 digits were read and written with exit 0. Every value
// that is not a plain version is refused by the writer and the reader
// alike, as bad input (exit 2), naming the store and the value, and the
// store is left as it was.
TEST_F(StoreSchemaTest, SchemaVersionIsParsedStrictly) {
  EXPECT_EQ(*ParseSchemaVersion("7", "s"), 7);
  EXPECT_EQ(*ParseSchemaVersion("123456789", "s"), 123456789);
  const std::vector<std::string> bad = {
      "abc", "-1", "12345678901234567890", "", " 7", "7 ", "+7", "7.0",
      "0",   "0x7", "1234567890"};
  for (const std::string& v : bad) {
    const std::string path = dir_.File("bad" + std::to_string(&v - &bad[0]) +
                                       ".sqlite");
    { ASSERT_TRUE(Store::Open(path).ok()); }
    Exec(path, "UPDATE schema_info SET value='" + v +
                   "' WHERE key='schema_version'");
    const std::string before =
        StoreQuery(path).Text("SELECT group_concat(name) FROM sqlite_master");
    const std::string said = "schema_version is '" + v + "'";
    auto writer = Store::Open(path);
    ASSERT_FALSE(writer.ok()) << "'" << v << "' was written to";
    EXPECT_EQ(writer.status().code(), StatusCode::kInvalidArgument) << v;
    EXPECT_EQ(ExitCodeForFailedRun(writer.status()), 2) << v;
    EXPECT_NE(writer.status().message().find(said), std::string::npos)
        << writer.status().message();
    EXPECT_NE(writer.status().message().find(path), std::string::npos);
    StoreReader reader;
    const Status read = reader.Open(path, path);
    ASSERT_FALSE(read.ok()) << "'" << v << "' was read";
    EXPECT_EQ(read.code(), StatusCode::kInvalidArgument) << v;
    EXPECT_NE(read.message().find(said), std::string::npos) << read.message();
    EXPECT_EQ(StoreQuery(path).Text(
                  "SELECT value FROM schema_info WHERE key='schema_version'"),
              v);
    EXPECT_EQ(StoreQuery(path).Text(
                  "SELECT group_concat(name) FROM sqlite_master"),
              before);
  }
}

TEST_F(StoreSchemaTest, KernelNamesAreStoredOnceAcrossRuns) {
  const std::string trace = Trace();
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  StoreQuery q(store_);
  const int64_t distinct = q.Int("SELECT COUNT(DISTINCT name) FROM kernels");
  EXPECT_GT(distinct, 3);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernel_names"), distinct);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernel_sigs WHERE name_id IS NULL"), 0);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels WHERE family IS NULL OR "
                  "demangled IS NULL"),
            0);
  // A second run of the same program adds rows, not names.
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 2 * 225);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernel_names"), distinct);
}

// Rows written through the kernels view (by hand, or by a schema 1 tool)
// land in the two tables; a NULL name stays NULL.
TEST_F(StoreSchemaTest, InsertsThroughTheViewSplitTheRow) {
  { ASSERT_TRUE(Store::Open(store_).ok()); }
  Exec(store_,
       "INSERT INTO kernels (run_id, session_id, name, demangled, family, "
       "duration_ns) VALUES (1, 1, '_Z1kv', 'k()', 'k', 5), "
       "(1, 1, '_Z1kv', 'k()', 'k', 7), (1, 1, NULL, NULL, NULL, 9)");
  EXPECT_EQ(Rows(store_, "SELECT name, demangled, family, duration_ns FROM "
                         "kernels ORDER BY kernel_id"),
            (std::vector<std::string>{"_Z1kv|k()|k|5", "_Z1kv|k()|k|7",
                                      "<null>|<null>|<null>|9"}));
  EXPECT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM kernel_names"), 1);
}

TEST_F(StoreSchemaTest, Schema1StoreIsUpgradedInPlaceAndAppendedTo) {
  const std::string trace = Trace();
  auto first = IngestTraceFile(trace, store_, {});
  ASSERT_TRUE(first.ok()) << first.status().message();
  const std::string all = "SELECT * FROM kernels ORDER BY kernel_id";
  const auto current = Rows(store_, all);
  ASSERT_EQ(current.size(), 225u);
  Exec(store_, test_support::kDowngradeToSchema1);
  {
    StoreQuery q(store_);
    ASSERT_EQ(q.Text("SELECT type FROM sqlite_master WHERE name='kernels'"),
              "table");
    ASSERT_EQ(q.Int("SELECT COUNT(*) FROM sqlite_master WHERE "
                    "name='kernel_names'"),
              0);
  }
  // Schema 1's columns are the current view's first ones (op came later,
  // NULL here).
  const auto before = Rows(store_, all);
  ASSERT_EQ(before.size(), current.size());
  for (size_t i = 0; i < before.size(); ++i) {
    ASSERT_EQ(before[i] + "|<null>", current[i]);
  }

  auto second = IngestTraceFile(trace, store_, {});
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->run_id, first->run_id + 1);
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT value FROM schema_info WHERE key='schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(q.Text("SELECT type FROM sqlite_master WHERE name='kernels'"),
            "view");
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sqlite_master WHERE "
                  "name='kernels_schema1' OR name='kernels_run'"),
            0);
  // The old run's rows are unchanged, ids included; the new run follows.
  EXPECT_EQ(Rows(store_, "SELECT * FROM kernels WHERE run_id=" +
                             std::to_string(first->run_id) +
                             " ORDER BY kernel_id"),
            current);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels WHERE run_id=" +
                  std::to_string(second->run_id)),
            225);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernel_names"),
            q.Int("SELECT COUNT(DISTINCT name) FROM kernels"));
  EXPECT_EQ(Layout(store_), FreshLayout());
}

// A schema 1 store the upgrade cannot handle (here: a column added by hand)
// is refused with the reason and the fix, and left as it was.
TEST_F(StoreSchemaTest, FailedUpgradeLeavesTheStoreUntouched) {
  ASSERT_TRUE(IngestTraceFile(Trace(), store_, {}).ok());
  Exec(store_, test_support::kDowngradeToSchema1);
  Exec(store_, "ALTER TABLE kernels ADD COLUMN note TEXT");
  const auto before = Rows(store_, "SELECT * FROM kernels ORDER BY kernel_id");
  auto s = Store::Open(store_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("cannot upgrade the store from schema 1"),
            std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("write to a new store"),
            std::string::npos);
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT value FROM schema_info WHERE key='schema_version'"),
            "1");
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sqlite_master WHERE "
                  "name='kernel_rows' OR name='kernels_schema1'"),
            0);
  EXPECT_EQ(Rows(store_, "SELECT * FROM kernels ORDER BY kernel_id"), before);
}

// A schema 2 store gains the provenance columns and kernel_metrics (and
// schema 4's incomplete_reason); its
// runs keep their rows (with no provenance) and new runs record theirs.
TEST_F(StoreSchemaTest, Schema2StoreIsUpgradedToTheCurrentSchema) {
  const std::string trace = Trace();
  auto first = IngestTraceFile(trace, store_, {});
  ASSERT_TRUE(first.ok()) << first.status().message();
  const std::string all = "SELECT * FROM kernels ORDER BY kernel_id";
  const auto before = Rows(store_, all);
  Exec(store_, test_support::kDowngradeToSchema2);
  ASSERT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM sqlite_master "
                                   "WHERE name='kernel_metrics'"),
            0);
  auto second = IngestTraceFile(trace, store_, {});
  ASSERT_TRUE(second.ok()) << second.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT value FROM schema_info WHERE key='schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(Rows(store_, "SELECT * FROM kernels WHERE run_id=" +
                             std::to_string(first->run_id) +
                             " ORDER BY kernel_id"),
            before);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs WHERE source_format IS NULL"), 1);
  EXPECT_EQ(q.Text("SELECT source_format FROM runs WHERE run_id=" +
                   std::to_string(second->run_id)),
            "rft");
  EXPECT_EQ(q.Text("SELECT source_file FROM runs WHERE run_id=" +
                   std::to_string(second->run_id)),
            trace);
  EXPECT_EQ(Layout(store_), FreshLayout());
}

// With atomic runs, a run aborted part-way (or whose store is closed before
// it finished) leaves nothing; the runs before it stay.
TEST_F(StoreSchemaTest, AnAbortedAtomicRunLeavesNothing) {
  ASSERT_TRUE(IngestTraceFile(Trace(), store_, {}).ok());
  const auto before = Rows(store_, "SELECT * FROM kernels");
  for (int close_without_finishing = 0; close_without_finishing < 2;
       ++close_without_finishing) {
    test_support::WriteAbortedAtomicRun(store_, close_without_finishing);
    if (HasFatalFailure()) return;
  }
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sessions"), 1);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernel_names WHERE "
                  "name='never_stored_kernel'"),
            0);
  EXPECT_EQ(Rows(store_, "SELECT * FROM kernels"), before);
}

// A schema 3 store gains runs.incomplete_reason (and schema 5's column);
// its runs keep their rows (reason NULL), and the reader reads both.
TEST_F(StoreSchemaTest, Schema3StoreIsUpgradedToTheCurrentSchema) {
  const std::string trace = Trace();
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  Exec(store_, test_support::kDowngradeToSchema3);
  {
    StoreReader reader;
    ASSERT_TRUE(reader.Open(store_, store_).ok());
  }
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT value FROM schema_info WHERE key='schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs WHERE incomplete_reason IS "
                  "NULL"),
            2);
  EXPECT_EQ(Layout(store_), FreshLayout());
}

// A schema 4 store, read as it is (no measured clock: 0), then written to:
// it gains devices.measured_sm_clock_khz, NULL on the devices it had.
TEST_F(StoreSchemaTest, Schema4StoreIsUpgradedToSchema5) {
  const std::string trace = Trace();
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  Exec(store_, test_support::kDowngradeToSchema4);
  {
    StoreReader reader;
    ASSERT_TRUE(reader.Open(store_, store_).ok());
    auto clock = reader.MeasuredSmClockKhz(1);
    ASSERT_TRUE(clock.ok()) << clock.status().message();
    EXPECT_EQ(*clock, 0);
  }
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT value FROM schema_info WHERE key='schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_GT(q.Int("SELECT COUNT(*) FROM devices"), 0);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM devices WHERE measured_sm_clock_khz "
                  "IS NOT NULL"),
            0);
  EXPECT_EQ(Layout(store_), FreshLayout());
}

// Labels given to a run are stored in run_labels and read back by the one
// reader in the order given; an empty value stays '' (not NULL).
TEST_F(StoreSchemaTest, LabelsAreStoredWithTheRunAndReadBack) {
  // Scenario: two ingests, the first labelled, the second not.
  const std::string trace = Trace();
  IngestOptions labelled;
  labelled.labels = {{"commit", "abc123"}, {"batch", "8"}, {"note", ""}};
  ASSERT_TRUE(IngestTraceFile(trace, store_, labelled).ok());
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  EXPECT_EQ(Rows(store_, "SELECT run_id, key, value FROM run_labels ORDER BY "
                         "rowid"),
            (std::vector<std::string>{"1|commit|abc123", "1|batch|8",
                                      "1|note|"}));
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  const std::vector<RunRow> runs = reader.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].labels, labelled.labels);
  EXPECT_TRUE(runs[1].labels.empty());
}

// A schema 5 store reads as it is (no labels), then written to gains
// run_labels: its old runs have none, new runs keep theirs.
TEST_F(StoreSchemaTest, Schema5StoreIsUpgradedToSchema6) {
  // Scenario: one run, downgraded to schema 5; a labelled run appended.
  const std::string trace = Trace();
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  Exec(store_, test_support::kDowngradeToSchema5);
  {
    StoreReader reader;
    ASSERT_TRUE(reader.Open(store_, store_).ok());
    ASSERT_EQ(reader.runs().size(), 1u);
    EXPECT_TRUE(reader.runs()[0].labels.empty());
  }
  IngestOptions labelled;
  labelled.labels = {{"branch", "main"}};
  ASSERT_TRUE(IngestTraceFile(trace, store_, labelled).ok());
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT value FROM schema_info WHERE key='schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(Rows(store_, "SELECT run_id, key, value FROM run_labels"),
            (std::vector<std::string>{"2|branch|main"}));
  EXPECT_EQ(Layout(store_), FreshLayout());
}

// A schema 6 store reads as it is (no operators: --by op is refused for
// it), then written to gains kernels.op and kernel_metrics.graph_node_id,
// its view and trigger made again; its old kernels keep every column.
TEST_F(StoreSchemaTest, Schema6StoreIsUpgradedToSchema7) {
  const std::string trace = Trace();
  const std::vector<std::string> before =
      IngestThenDowngrade(trace, test_support::kDowngradeToSchema6);
  if (HasFailure()) return;
  {
    StoreReader reader;
    ASSERT_TRUE(reader.Open(store_, store_).ok());
    EXPECT_FALSE(reader.KeepsOperators());
    int kernels = 0;
    ASSERT_TRUE(reader
                    .ForEachKernel(1, [&](const KernelRow& k) {
                      kernels += k.op.empty();
                      return OkStatus();
                    })
                    .ok());
    EXPECT_EQ(kernels, 225);
  }
  // The first run's rows as they were (a NULL operator as before).
  ExpectUpgradedKeepingRows(trace, before);
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  EXPECT_TRUE(reader.KeepsOperators());
}

// Store schema 8: each run's aggregates sum its kernels: per group (name,
// shape, phase, operator, precision, bound, sources) the same launches,
// time, extremes, FLOPs and bytes as the kernel rows give.
TEST_F(StoreSchemaTest, AggregatesSumTheRunsKernels) {
  ASSERT_TRUE(IngestTraceFile(Trace(), store_, {}).ok());
  const std::string by_group =
      "name, IFNULL(shape, ''), IFNULL(phase, ''), IFNULL(op, ''), "
      "IFNULL(precision, ''), bound, flops_source, bytes_source";
  const std::vector<std::string> from_kernels = Rows(
      store_, "SELECT " + by_group +
                  ", COUNT(*), SUM(duration_ns), MIN(duration_ns), "
                  "MAX(duration_ns), TOTAL(flops), TOTAL(dram_bytes), "
                  "COUNT(flops), COUNT(dram_bytes) FROM kernels GROUP BY " +
                  by_group + " ORDER BY 1, 2, 3, 4, 5, 6, 7, 8");
  const std::vector<std::string> from_aggregates = Rows(
      store_,
      "SELECT n.name, IFNULL(a.shape, ''), IFNULL(a.phase, ''), "
      "IFNULL(a.op, ''), IFNULL(a.precision, ''), a.bound, a.flops_source, "
      "a.bytes_source, SUM(a.launches), SUM(a.time_ns), MIN(a.min_ns), "
      "MAX(a.max_ns), TOTAL(a.flops), TOTAL(a.dram_bytes), "
      "SUM(a.flops_launches), SUM(a.bytes_launches) FROM kernel_aggregates a "
      "JOIN kernel_names n ON n.name_id = a.name_id GROUP BY 1, 2, 3, 4, 5, "
      "6, 7, 8 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8");
  ASSERT_GT(from_kernels.size(), 4u);
  EXPECT_EQ(from_aggregates, from_kernels);
  EXPECT_EQ(StoreQuery(store_).Text("SELECT store_kernels FROM runs"), "all");
}

// --store-kernels sampled keeps, per aggregate group, its first 8 launches
// and then every 64th; none keeps no kernel row (nor raw metric); both
// keep the aggregates of every launch.
TEST_F(StoreSchemaTest, StoreKernelsKeepsTheRowsItSays) {
  LlmTraceOptions o;
  o.decode_steps = 400;
  TraceBuilder b(o.session);
  const auto truth = test_support::GenerateLlmTrace(o, &b);
  const std::string trace = dir_.File("long.rft");
  ASSERT_TRUE(b.WriteFile(trace).ok());
  for (StoreKernels kept :
       {StoreKernels::kAll, StoreKernels::kSampled, StoreKernels::kNone}) {
    IngestOptions io;
    io.store_kernels = kept;
    ASSERT_TRUE(IngestTraceFile(trace, store_, io).ok());
  }
  StoreQuery q(store_);
  auto rows_of = [&](int run) {
    return q.Int("SELECT COUNT(*) FROM kernel_rows WHERE run_id = " +
                 std::to_string(run));
  };
  auto launches_of = [&](int run) {
    return q.Int("SELECT SUM(launches) FROM kernel_aggregates WHERE run_id = " +
                 std::to_string(run));
  };
  const int64_t kernels = static_cast<int64_t>(truth.kernels);
  EXPECT_EQ(rows_of(1), kernels);
  EXPECT_EQ(rows_of(3), 0);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernel_metrics WHERE run_id = 3"), 0);
  for (int run = 1; run <= 3; ++run) EXPECT_EQ(launches_of(run), kernels);
  // A group of n launches keeps min(n, 8) and, past them, n / 64.
  const int64_t sampled = q.Int(
      "SELECT SUM(MIN(launches, 8) + launches / 64) FROM kernel_aggregates "
      "WHERE run_id = 2");
  EXPECT_EQ(rows_of(2), sampled);
  EXPECT_LT(sampled, kernels / 4);
  EXPECT_EQ(Rows(store_, "SELECT store_kernels FROM runs ORDER BY run_id"),
            (std::vector<std::string>{"all", "sampled", "none"}));
  EXPECT_FALSE(ParseStoreKernels("every").ok());
  EXPECT_EQ(*ParseStoreKernels("sampled"), StoreKernels::kSampled);
}

// A schema 7 store reads as it is (no aggregates: its runs' store_kernels
// empty), then written to gains kernel_aggregates and runs.store_kernels:
// its old runs keep their kernels and have no aggregates (NULL), new runs
// have both.
TEST_F(StoreSchemaTest, Schema7StoreIsUpgradedToSchema8) {
  const std::string trace = Trace();
  const std::vector<std::string> before =
      IngestThenDowngrade(trace, test_support::kDowngradeToSchema7);
  if (HasFailure()) return;
  {
    StoreReader reader;
    ASSERT_TRUE(reader.Open(store_, store_).ok());
    ASSERT_EQ(reader.runs().size(), 1u);
    EXPECT_EQ(reader.runs()[0].store_kernels, "");
    int aggregates = 0;
    ASSERT_TRUE(reader
                    .ForEachAggregateOfRuns({1}, [&](const KernelAggregateRow&) {
                      ++aggregates;
                      return OkStatus();
                    })
                    .ok());
    EXPECT_EQ(aggregates, 0);
  }
  ExpectUpgradedKeepingRows(trace, before);
  StoreQuery q(store_);
  EXPECT_EQ(Rows(store_, "SELECT run_id, IFNULL(store_kernels, '<null>') FROM "
                         "runs ORDER BY run_id"),
            (std::vector<std::string>{"1|<null>", "2|all"}));
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernel_aggregates WHERE run_id = 1"),
            0);
  EXPECT_EQ(q.Int("SELECT SUM(launches) FROM kernel_aggregates WHERE "
                  "run_id = 2"),
            225);
}

// The writer finds a kernel's group by where its texts are, and checks
// the texts: a buffer reused for another name (a window's memory given to
// the next) starts a group of its own, never adds to the first.
TEST_F(StoreSchemaTest, ATextReusedAtTheSameAddressIsAnotherGroup) {
  auto store = Store::Open(store_);
  ASSERT_TRUE(store.ok()) << store.status().message();
  (*store)->set_store_kernels(StoreKernels::kNone);
  RunRow run;
  auto run_id = (*store)->BeginRun(run);
  ASSERT_TRUE(run_id.ok());
  std::string name = "kernel_a";
  KernelRow k;
  k.run_id = *run_id;
  k.session_id = 1;
  k.name = name;
  k.phase = "decode";
  k.bound = "memory";
  k.flops_source = "none";
  k.bytes_source = "none";
  for (const char* text : {"kernel_a", "kernel_a", "kernel_b"}) {
    name.assign(text);  // same length: the same buffer
    k.duration_ns = 1000;
    ASSERT_TRUE((*store)->AddKernel(k).ok());
  }
  ASSERT_TRUE((*store)->EndWrite().ok());
  run.run_id = *run_id;
  ASSERT_TRUE((*store)->FinishRun(run, ImportStats()).ok());
  store->reset();
  EXPECT_EQ(Rows(store_, "SELECT n.name, a.launches, a.time_ns FROM "
                         "kernel_aggregates a JOIN kernel_names n ON "
                         "n.name_id = a.name_id ORDER BY n.name"),
            (std::vector<std::string>{"kernel_a|2|2000", "kernel_b|1|1000"}));
  EXPECT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM kernel_rows"), 0);
}

// A long run's aggregates are stored with its first window and brought up
// to date at most once a second after that, and at its end: a reader sees
// them while the writer still runs (a collector that dies keeps them).
TEST_F(StoreSchemaTest, ALongRunsAggregatesAreStoredAsItGoes) {
  auto store = Store::Open(store_);
  ASSERT_TRUE(store.ok()) << store.status().message();
  (*store)->set_store_kernels(StoreKernels::kNone);
  RunRow run;
  auto run_id = (*store)->BeginRun(run);
  ASSERT_TRUE(run_id.ok());
  KernelRow k;
  k.run_id = *run_id;
  k.session_id = 1;
  k.name = "kernel_a";
  k.duration_ns = 1000;
  auto launches = [&] {
    return StoreQuery(store_).Int("SELECT IFNULL(SUM(launches), 0) FROM "
                                  "kernel_aggregates");
  };
  const auto first = std::chrono::steady_clock::now();
  for (int window = 0; window < 2; ++window) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*store)->AddKernel(k).ok());
    ASSERT_TRUE((*store)->EndWrite().ok());
    // The first window's are written at once; the second's wait for the
    // next second (or the end), unless a loaded machine took that long.
    if (std::chrono::steady_clock::now() - first <
        std::chrono::milliseconds(900)) {
      EXPECT_EQ(launches(), 3) << "window " << window;
    }
  }
  run.run_id = *run_id;
  ASSERT_TRUE((*store)->FinishRun(run, ImportStats()).ok());
  EXPECT_EQ(launches(), 6);
}

// The store fills up in the middle of a write that has already committed
// batches of it: what the store holds plus kernels_not_stored is every
// kernel, exactly (the committed batches are not counted as lost).
TEST_F(StoreSchemaTest, FullStoreCountsExactlyWhatIsMissing) {
  setenv("ROOFTRACE_TEST_STORE_PAGE_BUDGET", "14", 1);
  auto store = Store::Open(store_);
  unsetenv("ROOFTRACE_TEST_STORE_PAGE_BUDGET");
  ASSERT_TRUE(store.ok()) << store.status().message();
  (*store)->set_batch_rows(100);
  LlmTraceOptions o;
  // Enough kernels to outgrow the budget: schema 9's slim kernel rows take
  // a third of the pages schema 8's did.
  o.decode_steps = 400;
  TraceBuilder b(o.session);
  const auto truth = test_support::GenerateLlmTrace(o, &b);
  const std::string trace = dir_.File("long.rft");
  ASSERT_TRUE(b.WriteFile(trace).ok());
  IngestOptions io;
  io.flush_records = 0;  // one write of the whole session
  auto result = IngestTraceFile(trace, store->get(), io);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kResourceExhausted);
  store->reset();
  StoreQuery q(store_);
  const int64_t stored = q.Int("SELECT COUNT(*) FROM kernel_rows");
  EXPECT_GT(stored, 0);
  EXPECT_EQ(stored + q.Int("SELECT value FROM import_stats WHERE "
                           "name='kernels_not_stored'"),
            static_cast<int64_t>(truth.kernels));
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
}


// Every field of a kernel row as text, NULL as "-": what two reads of the
// same kernels compare.
std::string Describe(const KernelRow& k) {
  std::string out;
  auto add = [&out](const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::string_view>) {
      out += std::string(v);
    } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
      out += v ? std::to_string(*v) : "-";
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
      char buf[40] = "-";
      if (v) std::snprintf(buf, sizeof buf, "%.17g", *v);
      out += buf;
    } else {
      out += std::to_string(v);
    }
    out += '|';
  };
  add(k.kernel_id); add(k.run_id); add(k.session_id); add(k.correlation_id);
  add(k.device_id); add(k.context_id); add(k.stream_id); add(k.name);
  add(k.demangled); add(k.family); add(k.start_ns); add(k.end_ns);
  add(k.duration_ns);
  for (int i = 0; i < 3; ++i) {
    add(k.grid[i]);
    add(k.block[i]);
    add(k.cluster[i]);
  }
  add(k.registers_per_thread); add(k.static_shared_memory_bytes);
  add(k.dynamic_shared_memory_bytes); add(k.graph_id); add(k.graph_node_id);
  add(k.thread_id); add(k.api_start_ns); add(k.nvtx_path); add(k.op);
  add(k.gemm_call_id); add(k.shape); add(k.token_count); add(k.precision);
  add(k.flops);
  for (const std::optional<int64_t>& f : k.flops_by_precision) add(f);
  add(k.flops_source); add(k.dram_bytes); add(k.dram_read_bytes);
  add(k.dram_write_bytes); add(k.bytes_source); add(k.ai);
  add(k.achieved_flops_per_s); add(k.achieved_bytes_per_s);
  add(k.roof_flops_per_s); add(k.fraction_of_roof); add(k.bound);
  add(k.step_id); add(k.phase);
  return out;
}

// The fields of `k` StoreReader::ForEachKernel fills (store_reader.h),
// the others left unset; kernel_id too (the store's).
KernelRow ReaderFields(const KernelRow& k) {
  KernelRow r;
  r.run_id = k.run_id;
  r.session_id = k.session_id;
  r.name = k.name;
  r.demangled = k.demangled;
  r.family = k.family;
  r.shape = k.shape;
  r.token_count = k.token_count;
  r.precision = k.precision;
  r.flops = k.flops;
  r.flops_source = k.flops_source;
  r.dram_bytes = k.dram_bytes;
  r.bytes_source = k.bytes_source;
  r.bound = k.bound;
  r.phase = k.phase;
  r.nvtx_path = k.nvtx_path;
  r.duration_ns = k.duration_ns;
  r.start_ns = k.start_ns;
  r.end_ns = k.end_ns;
  r.step_id = k.step_id;
  r.stream_id = k.stream_id;
  r.device_id = k.device_id;
  r.thread_id = k.thread_id;
  r.correlation_id = k.correlation_id;
  r.fraction_of_roof = k.fraction_of_roof;
  r.roof_flops_per_s = k.roof_flops_per_s;
  r.graph_node_id = k.graph_node_id;
  r.op = k.op;
  return r;
}

// What StoreReader returns of every run's kernels (one run at a time, and
// all runs at once), and every column of the kernels view as the CSV
// export reads it.
std::vector<std::string> ReadKernels(const std::string& path) {
  std::vector<std::string> out;
  StoreReader reader;
  Status opened = reader.Open(path, path);
  EXPECT_TRUE(opened.ok()) << opened.message();
  if (!opened.ok()) return out;
  std::vector<int64_t> ids;
  for (const RunRow& run : reader.runs()) {
    ids.push_back(run.run_id);
    EXPECT_TRUE(reader
                    .ForEachKernel(run.run_id,
                                   [&](const KernelRow& k) {
                                     out.push_back("one " + Describe(k));
                                     return OkStatus();
                                   })
                    .ok());
    EXPECT_TRUE(reader
                    .ForEachTableRow(
                        "kernels", run.run_id,
                        [&](const std::vector<std::string>& header) {
                          std::string h = "header";
                          for (const std::string& c : header) h += " " + c;
                          out.push_back(h);
                        },
                        [&](const std::vector<std::string_view>& row,
                            const std::vector<bool>& is_null) {
                          std::string r = "csv";
                          for (size_t i = 0; i < row.size(); ++i) {
                            r += " " + (is_null[i] ? std::string("<null>")
                                                   : std::string(row[i]));
                          }
                          out.push_back(r);
                        })
                    .ok());
    auto count = reader.KernelCount(run.run_id);
    EXPECT_TRUE(count.ok());
    out.push_back("count " + std::to_string(count.ok() ? *count : -1));
  }
  for (auto set : {StoreReader::KernelColumnSet::kAll,
                   StoreReader::KernelColumnSet::kGrouping}) {
    EXPECT_TRUE(reader
                    .ForEachKernelOfRuns(
                        ids,
                        [&](const KernelRow& k) {
                          out.push_back("runs " + Describe(k));
                          return OkStatus();
                        },
                        set)
                    .ok());
  }
  return out;
}

// Schema 9 keeps a kernel as its launch's row and its signature's; the
// reader returns the same rows, field by field, as from schema 8's one wide
// row: the same runs (a plain trace, one with NVTX ranges and counters on
// every kernel) read from a store written now, from that store turned into
// schema 8's layout, and from that one upgraded in place to schema 9
// again.
TEST_F(StoreSchemaTest, TheSlimLayoutReadsAsTheWideOne) {
  const std::string plain = Trace();
  LlmTraceOptions o;
  o.nvtx = true;
  o.counters = true;
  TraceBuilder b(o.session);
  test_support::GenerateLlmTrace(o, &b);
  const std::string counters = dir_.File("counters.rft");
  ASSERT_TRUE(b.WriteFile(counters).ok());
  for (const std::string& trace : {plain, counters, plain}) {
    auto ingested = IngestTraceFile(trace, store_, {});
    ASSERT_TRUE(ingested.ok()) << ingested.status().message();
  }
  const std::vector<std::string> slim = ReadKernels(store_);
  ASSERT_GT(slim.size(), 3u * 225);
  // Signatures are shared: far fewer than launches.
  StoreQuery q(store_);
  EXPECT_LT(q.Int("SELECT COUNT(*) FROM kernel_sigs"),
            q.Int("SELECT COUNT(*) FROM kernel_rows"));

  const std::string wide = dir_.File("wide.sqlite");
  std::filesystem::copy_file(store_, wide);
  Exec(wide, test_support::kDowngradeToSchema8);
  ASSERT_EQ(StoreQuery(wide).Int("SELECT COUNT(*) FROM sqlite_master WHERE "
                                 "name = 'kernel_sigs'"),
            0);
  ASSERT_EQ(StoreQuery(wide).Text("SELECT value FROM schema_info WHERE "
                                  "key = 'schema_version'"),
            "8");
  EXPECT_EQ(ReadKernels(wide), slim);

  // Upgraded in place: the same rows again, ids included, in a store laid
  // out as a new one.
  { ASSERT_TRUE(Store::Open(wide).ok()); }
  EXPECT_EQ(StoreQuery(wide).Text("SELECT value FROM schema_info WHERE "
                                  "key = 'schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(Layout(wide), FreshLayout());
  EXPECT_EQ(ReadKernels(wide), slim);
  // And it takes new runs, whose ids follow.
  ASSERT_TRUE(IngestTraceFile(plain, wide, {}).ok());
  EXPECT_EQ(StoreQuery(wide).Int("SELECT COUNT(*) FROM kernels"),
            q.Int("SELECT COUNT(*) FROM kernels") + 225);
  EXPECT_EQ(StoreQuery(wide).Int("SELECT COUNT(DISTINCT kernel_id) FROM "
                                 "kernels"),
            StoreQuery(wide).Int("SELECT COUNT(*) FROM kernels"));
}

// A launch's signature is found in the writer's memory: launches that
// differ from another in one signature column each, interleaved, keep
// their own values, and a name buffer reused for another name (at the
// same address) is the other name.
TEST_F(StoreSchemaTest, EachLaunchKeepsItsOwnSignature) {
  auto store = Store::Open(store_);
  ASSERT_TRUE(store.ok()) << store.status().message();
  RunRow run;
  auto run_id = (*store)->BeginRun(run);
  ASSERT_TRUE(run_id.ok());
  char name[] = "kernel_a";
  KernelRow base;
  base.run_id = *run_id;
  base.session_id = 1;
  base.name = name;
  base.duration_ns = 1000;
  base.stream_id = 7;
  base.thread_id = 11;
  base.nvtx_path = "step/attn";
  base.grid = {4, 1, 1};
  base.shape = "m=1";
  base.flops = 100;
  base.flops_source = "counters";
  base.bytes_source = "none";
  base.bound = "unknown";
  std::vector<KernelRow> variants(10, base);
  variants[1].stream_id = 8;
  variants[2].thread_id = std::nullopt;
  variants[3].thread_id = 0;
  variants[4].nvtx_path = "step/mlp";
  variants[5].grid[2] = 2;
  variants[6].flops = 101;
  variants[7].flops_source = "counters (sampled 1 of 2)";
  variants[8].ai = 0.5;
  variants[9].roof_flops_per_s = 1e12;
  std::vector<KernelRow> written;
  for (int turn = 0; turn < 3; ++turn) {
    for (KernelRow k : variants) {
      k.start_ns = static_cast<int64_t>(written.size());
      ASSERT_TRUE((*store)->AddKernel(k).ok());
      written.push_back(k);
    }
  }
  std::vector<std::string> expected;
  for (const KernelRow& k : written) {
    expected.push_back(Describe(ReaderFields(k)));
  }
  std::memcpy(name, "kernel_b", sizeof name);
  {
    KernelRow k = base;
    k.start_ns = static_cast<int64_t>(written.size());
    ASSERT_TRUE((*store)->AddKernel(k).ok());
    expected.push_back(Describe(ReaderFields(k)));
  }
  run.run_id = *run_id;
  ASSERT_TRUE((*store)->FinishRun(run, ImportStats()).ok());
  store->reset();

  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  std::vector<std::string> read;
  ASSERT_TRUE(reader
                  .ForEachKernel(*run_id,
                                 [&](const KernelRow& k) {
                                   read.push_back(
                                       Describe(ReaderFields(k)));
                                   return OkStatus();
                                 })
                  .ok());
  EXPECT_EQ(read, expected);
  EXPECT_EQ(Rows(store_, "SELECT name, stream_id, thread_id, nvtx_path, "
                         "grid_z, flops, flops_source, ai, roof_flops_per_s "
                         "FROM kernels WHERE start_ns < 10 ORDER BY start_ns"),
            (std::vector<std::string>{
                "kernel_a|7|11|step/attn|1|100|counters|<null>|<null>",
                "kernel_a|8|11|step/attn|1|100|counters|<null>|<null>",
                "kernel_a|7|<null>|step/attn|1|100|counters|<null>|<null>",
                "kernel_a|7|0|step/attn|1|100|counters|<null>|<null>",
                "kernel_a|7|11|step/mlp|1|100|counters|<null>|<null>",
                "kernel_a|7|11|step/attn|2|100|counters|<null>|<null>",
                "kernel_a|7|11|step/attn|1|101|counters|<null>|<null>",
                "kernel_a|7|11|step/attn|1|100|counters (sampled 1 of "
                "2)|<null>|<null>",
                "kernel_a|7|11|step/attn|1|100|counters|0.5|<null>",
                "kernel_a|7|11|step/attn|1|100|counters|<null>|1000000000000.0",
            }));
  EXPECT_EQ(Rows(store_, "SELECT name FROM kernels ORDER BY start_ns DESC "
                         "LIMIT 1"),
            std::vector<std::string>{"kernel_b"});
  // One signature per variant and one for the other name, not per launch.
  EXPECT_EQ(StoreQuery(store_).Int("SELECT COUNT(*) FROM kernel_sigs"),
            static_cast<int64_t>(variants.size()) + 1);
}

// kernel_rows has no index on run_id: a run's kernels are found by their
// ids (run_kernel_ids) and read in start order, NULL first, whether they
// were written in it (read without a sort: in_start_order 1) or not.
TEST_F(StoreSchemaTest, KernelsAreReadInStartOrderWhateverOrderTheyCameIn) {
  auto store = Store::Open(store_);
  ASSERT_TRUE(store.ok()) << store.status().message();
  const std::vector<std::vector<std::optional<int64_t>>> starts = {
      {10, 20, 20, 30}, {30, std::nullopt, 10, 20}, {std::nullopt, 5, 7}};
  std::vector<int64_t> runs;
  for (const auto& run_starts : starts) {
    RunRow run;
    auto run_id = (*store)->BeginRun(run);
    ASSERT_TRUE(run_id.ok());
    runs.push_back(*run_id);
    for (const std::optional<int64_t>& start : run_starts) {
      KernelRow k;
      k.run_id = *run_id;
      k.session_id = 1;
      k.name = "k";
      k.start_ns = start;
      k.duration_ns = 1;
      ASSERT_TRUE((*store)->AddKernel(k).ok());
      // A write each, as windows are: the run's ids grow with each.
      ASSERT_TRUE((*store)->EndWrite().ok());
    }
    run.run_id = *run_id;
    ASSERT_TRUE((*store)->FinishRun(run, ImportStats()).ok());
  }
  store->reset();
  EXPECT_EQ(Rows(store_, "SELECT run_id, first_kernel_id, last_kernel_id, "
                         "in_start_order FROM run_kernel_ids ORDER BY run_id"),
            (std::vector<std::string>{"1|1|4|1", "2|5|8|0", "3|9|11|1"}));
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  const std::vector<std::string> expected = {"10 20 20 30 ", "- 10 20 30 ",
                                             "- 5 7 "};
  for (size_t r = 0; r < runs.size(); ++r) {
    std::string read;
    ASSERT_TRUE(reader
                    .ForEachKernel(runs[r],
                                   [&](const KernelRow& k) {
                                     read += k.start_ns
                                                 ? std::to_string(*k.start_ns)
                                                 : "-";
                                     read += ' ';
                                     return OkStatus();
                                   })
                    .ok());
    EXPECT_EQ(read, expected[r]) << "run " << runs[r];
    auto count = reader.KernelCount(runs[r]);
    ASSERT_TRUE(count.ok());
    EXPECT_EQ(*count, static_cast<int64_t>(starts[r].size()));
  }
  std::string all;
  ASSERT_TRUE(reader
                  .ForEachKernelOfRuns(runs,
                                       [&](const KernelRow& k) {
                                         all += std::to_string(k.run_id) +
                                                ":" +
                                                (k.start_ns ? std::to_string(
                                                                  *k.start_ns)
                                                            : "-") +
                                                " ";
                                         return OkStatus();
                                       })
                  .ok());
  EXPECT_EQ(all, "1:10 1:20 1:20 1:30 2:- 2:10 2:20 2:30 3:- 3:5 3:7 ");
}

}  // namespace
}  // namespace rooftrace
