// The store's two backends (store/db.h): the same writer and the one reader
// against SQLite and a real, throwaway PostgreSQL server
// (tests/support/pg_server.h); a run reads back through analyze, diff,
// export and history with the same bytes from both; many writers into one
// PostgreSQL store lose nothing. Skipped (saying so) only when the
// PostgreSQL server binaries are not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/cli.h"
#include "analyzer/commands.h"
#include "analyzer/export.h"
#include "analyzer/history.h"
#include "report/report.h"
#include "collector/commands.h"
#include "sources/rft/ingest.h"
#include "sources/rft/testing/trace_builder.h"
#include "store/db.h"
#include "store/indexed_text.h"
#include "store/store.h"
#include "store/store_reader.h"
#include "tests/support/pg_server.h"
#include "tests/support/store_schema1.h"
#include "tests/support/aborted_run.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

using test_support::LlmTraceOptions;
using test_support::TraceBuilder;

// A database name from the running test's name: unique per test.
std::string DatabaseName(const std::string& suffix = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string("t_") + info->name() + suffix;
  for (char& c : name) {
    c = std::isalnum(static_cast<unsigned char>(c))
            ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
            : '_';
  }
  return name.substr(0, 60);
}

// A fresh empty PostgreSQL database's URL; skips the test when the server
// binaries are absent, fails it when the server cannot be started.
#define RT_NEW_PG_DATABASE(url, suffix)                                     \
  do {                                                                      \
    std::string pg_error;                                                   \
    bool pg_missing = false;                                                \
    test_support::PgServer* pg_server =                                     \
        test_support::SharedPgServer(&pg_error, &pg_missing);               \
    if (pg_server == nullptr && pg_missing) GTEST_SKIP() << pg_error;       \
    ASSERT_NE(pg_server, nullptr) << pg_error;                              \
    url = pg_server->CreateDatabase(DatabaseName(suffix), &pg_error);       \
    ASSERT_FALSE(url.empty()) << pg_error;                                  \
  } while (0)

// Every row of `sql` on `store`, each as "v1|v2|...", NULL as "<null>".
std::vector<std::string> Rows(const std::string& store, const std::string& sql) {
  auto db = OpenDbForRead(store, store);
  if (!db.ok()) return {"<cannot open: " + db.status().message() + ">"};
  auto q = (*db)->Prepare(sql);
  if (!q.ok()) return {"<error: " + q.status().message() + ">"};
  std::vector<std::string> out;
  while (true) {
    StatusOr<bool> row = (*q)->Step();
    if (!row.ok()) return {"<error: " + row.status().message() + ">"};
    if (!*row) break;
    std::string line;
    for (int i = 0; i < (*q)->ColumnCount(); ++i) {
      line += i ? "|" : "";
      line += (*q)->ColumnType(i) == DbType::kNull ? std::string("<null>")
                                                   : std::string((*q)->Text(i));
    }
    out.push_back(std::move(line));
  }
  return out;
}

int64_t Int(const std::string& store, const std::string& sql) {
  const std::vector<std::string> rows = Rows(store, sql);
  if (rows.size() != 1) return -1;
  return std::atoll(rows[0].c_str());
}

void Exec(const std::string& store, const std::string& sql) {
  auto db = OpenDbForWrite(store);
  ASSERT_TRUE(db.ok()) << db.status().message();
  ASSERT_TRUE((*db)->PrepareForWrites(false).ok());
  ASSERT_TRUE((*db)->Exec(sql).ok()) << sql;
}

// One row by `insert`: `values` bound in order (a negative one as NULL).
void InsertRow(DbStatement* insert, std::initializer_list<int64_t> values) {
  insert->Reset();
  int i = 0;
  for (const int64_t v : values) {
    if (v < 0) {
      insert->BindNull(++i);
    } else {
      insert->BindInt(++i, v);
    }
  }
  ASSERT_TRUE(insert->Step().ok());
}

// Rows written by hand into `store` (created by Store::Open), in one
// transaction: `setup` (SQL: runs, names, signatures), then `fill`'s, given
// statements inserting a kernel row (its id, run, session, start, end)
// and a run 1 copy (its id, start, end).
void WriteRowsByHand(
    const std::string& store, const std::string& setup,
    const std::function<void(DbStatement* kernel, DbStatement* copy)>& fill) {
  auto db = OpenDbForWrite(store);
  ASSERT_TRUE(db.ok()) << db.status().message();
  ASSERT_TRUE((*db)->PrepareForWrites(false).ok());
  ASSERT_TRUE((*db)->Begin().ok());
  ASSERT_TRUE((*db)->Exec(setup).ok()) << setup;
  auto kernel = (*db)->Prepare(
      "INSERT INTO kernel_rows (kernel_id, run_id, session_id, sig_id, "
      "start_ns, end_ns) VALUES (?, ?, ?, 1, ?, ?)");
  auto copy = (*db)->Prepare(
      "INSERT INTO memcpys (memcpy_id, run_id, session_id, kind, bytes, "
      "start_ns, end_ns) VALUES (?, 1, 1, 'htod', 64, ?, ?)");
  ASSERT_TRUE(kernel.ok() && copy.ok());
  fill(kernel->get(), copy->get());
  ASSERT_TRUE((*db)->Commit().ok());
}

// A generated LLM trace (225 kernels, 8 distinct names) as a file.
std::string WriteTrace(const test_support::TempDir& dir) {
  LlmTraceOptions o;
  TraceBuilder b(o.session);
  test_support::GenerateLlmTrace(o, &b);
  const std::string path = dir.File("llm.rft");
  EXPECT_TRUE(b.WriteFile(path).ok());
  return path;
}

enum class Backend { kSqlite, kPostgres };
void PrintTo(Backend b, std::ostream* os) {
  *os << (b == Backend::kSqlite ? "sqlite" : "postgresql");
}

class StoreBackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSqlite) {
      store_ = dir_.File("runs.sqlite");
    } else {
      RT_NEW_PG_DATABASE(store_, "");
    }
    trace_ = WriteTrace(dir_);
  }

  test_support::TempDir dir_{"store_backend"};
  std::string store_;
  std::string trace_;
};

// The schema is created once with its version; kernel names are stored
// once however many runs use them (a second run adds rows, not names).
TEST_P(StoreBackendTest, KernelNamesAreStoredOnceAcrossRuns) {
  ASSERT_TRUE(IngestTraceFile(trace_, store_, {}).ok());
  EXPECT_EQ(Rows(store_, "SELECT value FROM schema_info WHERE "
                         "key='schema_version'"),
            std::vector<std::string>{std::to_string(kStoreSchemaVersion)});
  const int64_t distinct =
      Int(store_, "SELECT COUNT(DISTINCT name) FROM kernels");
  EXPECT_GT(distinct, 3);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernel_names"), distinct);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernel_sigs WHERE name_id IS "
                        "NULL"),
            0);
  ASSERT_TRUE(IngestTraceFile(trace_, store_, {}).ok());
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernels"), 2 * 225);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernel_names"), distinct);
}

// A run, its labels (in the order given, an empty value kept as ''), its
// kernels, steps and statistics read back through the one reader.
TEST_P(StoreBackendTest, ARunReadsBackThroughTheOneReader) {
  IngestOptions o;
  o.labels = {{"commit", "abc123"}, {"branch", "main"}, {"note", ""}};
  auto result = IngestTraceFile(trace_, store_, o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  const std::vector<RunRow> runs = reader.runs();
  ASSERT_EQ(runs.size(), 1u);
  const RunRow& run = runs[0];
  EXPECT_EQ(run.run_id, result->run_id);
  EXPECT_EQ(run.complete, 1);
  EXPECT_EQ(run.source_format, "rft");
  EXPECT_EQ(run.labels, o.labels);
  int kernels = 0;
  int64_t last_start = INT64_MIN;
  ASSERT_TRUE(reader
                  .ForEachKernel(run.run_id,
                                 [&](const KernelRow& k) {
                                   ++kernels;
                                   EXPECT_GE(k.start_ns.value_or(0),
                                             last_start);
                                   last_start = k.start_ns.value_or(0);
                                   EXPECT_FALSE(k.name.empty());
                                   return OkStatus();
                                 })
                  .ok());
  EXPECT_EQ(kernels, 225);
  EXPECT_EQ(*reader.KernelCount(run.run_id), 225);
  int steps = 0;
  ASSERT_TRUE(reader
                  .ForEachStep(run.run_id,
                               [&](const StepRow&) {
                                 ++steps;
                                 return OkStatus();
                               })
                  .ok());
  EXPECT_GT(steps, 0);
  auto stats = reader.ImportStats(run.run_id);
  ASSERT_TRUE(stats.ok());
  EXPECT_FALSE(stats->empty());
  EXPECT_TRUE(std::is_sorted(stats->begin(), stats->end()));
}

// 300 runs written with ids out of time order: run r has r % 7 kernels
// (none for every 7th), one of them without a start, and r % 3 steps. The
// history's run labels are branch=main on every run.
void WriteManyRuns(const std::string& store, int runs) {
  ASSERT_TRUE(Store::Open(store).ok());
  auto db = OpenDbForWrite(store);
  ASSERT_TRUE(db.ok()) << db.status().message();
  ASSERT_TRUE((*db)->PrepareForWrites(false).ok());
  ASSERT_TRUE((*db)->Begin().ok());
  ASSERT_TRUE((*db)->Exec("INSERT INTO kernel_names (name_id, name, family) "
                          "VALUES (1, 'gemm_a', 'gemm'), (2, 'norm_b', "
                          "'norm'); INSERT INTO kernel_sigs (sig_id, "
                          "name_id) VALUES (1, 1), (2, 2)")
                  .ok());
  auto run = (*db)->Prepare(
      "INSERT INTO runs (run_id, started_unix_ns, complete) VALUES (?, ?, 1)");
  auto label = (*db)->Prepare(
      "INSERT INTO run_labels (run_id, key, value) VALUES (?, 'branch', "
      "'main')");
  auto kernel = (*db)->Prepare(
      "INSERT INTO kernel_rows (kernel_id, run_id, session_id, sig_id, "
      "start_ns, end_ns, duration_ns, fraction_of_roof) VALUES (?, ?, 1, ?, "
      "?, ?, ?, 0.5)");
  auto step = (*db)->Prepare(
      "INSERT INTO steps (run_id, step_id, session_id, start_ns, end_ns, "
      "phase, token_count) VALUES (?, ?, 1, ?, ?, 'decode', 8)");
  ASSERT_TRUE(run.ok() && label.ok() && kernel.ok() && step.ok());
  int64_t kernel_id = 0;
  for (int r = 1; r <= runs; ++r) {
    (*run)->Reset();
    (*run)->BindInt(1, r);
    (*run)->BindInt(2, 1000000 - 10 * r + (r % 2) * 5000);  // not id order
    ASSERT_TRUE((*run)->Step().ok());
    (*label)->Reset();
    (*label)->BindInt(1, r);
    ASSERT_TRUE((*label)->Step().ok());
    for (int k = 0; k < r % 7; ++k) {
      (*kernel)->Reset();
      (*kernel)->BindInt(1, ++kernel_id);
      (*kernel)->BindInt(2, r);
      (*kernel)->BindInt(3, 1 + k % 2);
      if (k == 1) {
        (*kernel)->BindNull(4);  // read first, as SQLite orders NULL
      } else {
        (*kernel)->BindInt(4, 1000 * (7 - k));  // written late to early
      }
      (*kernel)->BindInt(5, 1000 * (7 - k) + 500 + r);
      (*kernel)->BindInt(6, 500 + r);
      ASSERT_TRUE((*kernel)->Step().ok());
    }
    for (int s = 0; s < r % 3; ++s) {
      (*step)->Reset();
      (*step)->BindInt(1, r);
      (*step)->BindInt(2, s);
      (*step)->BindInt(3, 100 * s);
      (*step)->BindInt(4, 100 * s + 50);
      ASSERT_TRUE((*step)->Step().ok());
    }
  }
  ASSERT_TRUE((*db)->Commit().ok());
}

// The grouping read (history's) leaves out exactly the columns it names,
// and gives every other column as the full read does.
TEST_P(StoreBackendTest, GroupingReadLeavesOutOnlyItsColumns) {
  ASSERT_TRUE(Store::Open(store_).ok());
  {
    auto db = OpenDbForWrite(store_);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE((*db)->PrepareForWrites(false).ok());
    ASSERT_TRUE((*db)->Begin().ok());
    ASSERT_TRUE(
        (*db)->Exec("INSERT INTO kernel_names (name_id, name, demangled, "
                    "family) VALUES (1, '_Z4gemmv', 'gemm()', 'gemm')")
            .ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO runs (run_id, complete) VALUES (1, 1)")
                    .ok());
    ASSERT_TRUE(
        (*db)->Exec(
                 "INSERT INTO kernel_sigs (sig_id, device_id, stream_id, "
                 "name_id, thread_id, nvtx_path, shape, token_count, "
                 "precision, flops, flops_source, dram_bytes, bytes_source, "
                 "roof_flops_per_s, bound, phase, op) VALUES (5, 1, 4, 1, "
                 "55, 'step/layer', 'm=8 n=64 k=64', 8, 'bf16_tc', 65536, "
                 "'analytic', 4096, 'analytic', 1.5e12, 'memory', 'decode', "
                 "'aten::mm'); "
                 "INSERT INTO kernel_rows (kernel_id, run_id, session_id, "
                 "correlation_id, sig_id, start_ns, end_ns, duration_ns, "
                 "graph_node_id, fraction_of_roof, step_id) VALUES (7, 1, 2, "
                 "30, 5, 1000, 3000, 2000, 9, 0.25, 3)")
            .ok());
    ASSERT_TRUE((*db)->Commit().ok());
  }
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  // Every column the reader fills, as text, with the leave-outs marked.
  auto read = [&](StoreReader::KernelColumnSet columns) {
    std::vector<std::string> out;
    EXPECT_TRUE(
        reader
            .ForEachKernelOfRuns(
                {1},
                [&](const KernelRow& k) {
                  auto i = [](std::optional<int64_t> v) {
                    return v ? std::to_string(*v) : std::string("-");
                  };
                  auto d = [](std::optional<double> v) {
                    return v ? std::to_string(*v) : std::string("-");
                  };
                  out = {std::to_string(k.kernel_id), std::string(k.name),
                         std::string(k.demangled), std::string(k.family),
                         std::string(k.shape), std::string(k.precision),
                         std::string(k.flops_source),
                         std::string(k.bytes_source), std::string(k.bound),
                         std::string(k.phase), std::string(k.nvtx_path),
                         std::to_string(k.duration_ns), i(k.start_ns),
                         i(k.end_ns), i(k.step_id), i(k.stream_id),
                         i(k.device_id), i(k.thread_id), i(k.correlation_id),
                         i(k.flops), i(k.dram_bytes), d(k.fraction_of_roof),
                         d(k.roof_flops_per_s), std::to_string(k.session_id),
                         i(k.token_count), std::to_string(k.run_id),
                         std::to_string(k.graph_node_id), std::string(k.op)};
                  return OkStatus();
                },
                columns)
            .ok());
    return out;
  };
  const std::vector<std::string> all = read(StoreReader::KernelColumnSet::kAll);
  std::vector<std::string> expected = all;
  ASSERT_EQ(expected.size(), 28u);
  EXPECT_EQ(all[0], "7");
  EXPECT_EQ(all[2], "gemm()");
  EXPECT_EQ(all[27], "aten::mm");
  // kernel_id, demangled, stream_id, thread_id, roof_flops_per_s, op.
  expected[0] = "0";
  expected[2] = "";
  expected[15] = "-";
  expected[17] = "-";
  expected[22] = "-";
  expected[27] = "";
  EXPECT_EQ(read(StoreReader::KernelColumnSet::kGrouping), expected);
}

// The reads of many runs (what history uses) give each asked run's rows
// as its one-run read does, run by run in id order, whatever order the
// ids come in, an id given twice once and one that is no run nothing; on
// PostgreSQL they cost a few round trips, not 3 per run, and so does
// history over the 300 runs (6 per run before: 1,800).
TEST_P(StoreBackendTest, ManyRunsAreReadInAFewQueries) {
  constexpr int kRuns = 300;
  WriteManyRuns(store_, kRuns);
  if (HasFatalFailure()) return;
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  std::vector<int64_t> ask;
  for (int r = kRuns; r >= 1; --r) ask.push_back(r);
  ask.push_back(5);     // twice
  ask.push_back(9999);  // no such run
  std::vector<std::string> expected_kernels, expected_steps;
  for (int r = 1; r <= kRuns; ++r) {
    ASSERT_TRUE(reader
                    .ForEachKernel(r,
                                   [&](const KernelRow& k) {
                                     expected_kernels.push_back(
                                         std::to_string(k.run_id) + "/" +
                                         std::to_string(k.kernel_id) + "/" +
                                         std::string(k.name));
                                     return OkStatus();
                                   })
                    .ok());
    ASSERT_TRUE(reader
                    .ForEachStep(r,
                                 [&](const StepRow& s) {
                                   expected_steps.push_back(
                                       std::to_string(s.run_id) + "/" +
                                       std::to_string(s.step_id));
                                   return OkStatus();
                                 })
                    .ok());
  }
  ASSERT_GT(expected_kernels.size(), 800u);
  ASSERT_GT(expected_steps.size(), 250u);
  const int64_t trips_before = reader.round_trips();
  std::vector<std::string> kernels, steps;
  ASSERT_TRUE(reader
                  .ForEachKernelOfRuns(ask,
                                       [&](const KernelRow& k) {
                                         kernels.push_back(
                                             std::to_string(k.run_id) + "/" +
                                             std::to_string(k.kernel_id) +
                                             "/" + std::string(k.name));
                                         return OkStatus();
                                       })
                  .ok());
  ASSERT_TRUE(reader
                  .ForEachStepOfRuns(ask,
                                     [&](const StepRow& s) {
                                       steps.push_back(
                                           std::to_string(s.run_id) + "/" +
                                           std::to_string(s.step_id));
                                       return OkStatus();
                                     })
                  .ok());
  const int64_t trips = reader.round_trips() - trips_before;
  EXPECT_EQ(kernels, expected_kernels);
  EXPECT_EQ(steps, expected_steps);
  // A kernel without a start is its run's first, on both backends: run 2
  // wrote kernel 2 (at 7 us) and then 3 (no start).
  ASSERT_GE(kernels.size(), 3u);
  EXPECT_EQ(kernels[1], "2/3/norm_b");
  EXPECT_EQ(kernels[2], "2/2/gemm_a");
  if (GetParam() == Backend::kSqlite) {
    EXPECT_EQ(trips, 0);
    return;
  }
  EXPECT_LE(trips, 30) << "kernels and steps of " << kRuns << " runs";
  StoreReader counted;
  ASSERT_TRUE(counted.Open(store_, store_).ok());
  const int64_t opened = counted.round_trips();
  analyzer::HistoryOptions options;
  options.where = {{"branch", "main"}};
  auto h = analyzer::BuildHistory(counted, store_, options);
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->runs.size(), static_cast<size_t>(kRuns));
  EXPECT_LE(counted.round_trips() - opened, 30);
}

// A run longer than a batch (PostgreSQL fetches 4,096 rows at a time and
// asks for the next batch before the caller has read this one): 9,000
// kernels and 9,000 copies, each copy starting between two kernels, read
// together come back alternating, all of them; a query of its own in the
// middle of that (a kernel count, a run's steps) neither loses nor mixes
// up a batch.
TEST_P(StoreBackendTest, RunsLongerThanABatchStreamWhileOtherQueriesRun) {
  constexpr int kRows = 9000;
  ASSERT_TRUE(Store::Open(store_).ok());
  WriteRowsByHand(
      store_,
      "INSERT INTO runs (run_id, complete) VALUES (1, 1); INSERT INTO "
      "kernel_names (name_id, name) VALUES (1, 'k'); INSERT INTO kernel_sigs "
      "(sig_id, name_id) VALUES (1, 1); INSERT INTO steps (run_id, step_id) "
      "VALUES (1, 1)",
      [&](DbStatement* kernel, DbStatement* copy) {
        for (int i = 0; i < kRows; ++i) {
          InsertRow(kernel, {i + 1, 1, 1, 10 * i, 10 * i + 1});
          InsertRow(copy, {i + 1, 10 * i + 5, 10 * i + 6});
        }
      });
  ASSERT_FALSE(HasFatalFailure());
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  std::string order;  // k or c per row, as read
  int64_t last_start = -1;
  bool in_order = true;
  int kernels = 0;
  auto at = [&](std::optional<int64_t> start) {
    in_order = in_order && start.value_or(-1) > last_start;
    last_start = start.value_or(-1);
  };
  ASSERT_TRUE(reader
                  .ForEachKernelAndMemcpy(
                      1,
                      [&](const KernelRow& k) {
                        order += 'k';
                        at(k.start_ns);
                        if (++kernels == 5000) {
                          EXPECT_EQ(*reader.KernelCount(1), kRows);
                          int steps = 0;
                          EXPECT_TRUE(reader
                                          .ForEachStep(1,
                                                       [&](const StepRow&) {
                                                         ++steps;
                                                         return OkStatus();
                                                       })
                                          .ok());
                          EXPECT_EQ(steps, 1);
                        }
                        return OkStatus();
                      },
                      [&](const MemcpyRow& m) {
                        order += 'c';
                        at(m.start_ns);
                        return OkStatus();
                      })
                  .ok());
  EXPECT_TRUE(in_order);
  std::string expected;
  for (int i = 0; i < kRows; ++i) expected += "kc";
  EXPECT_EQ(order, expected);
  // Reading the kernels alone, stopped by the caller half-way, leaves the
  // connection fit for the next read.
  int seen = 0;
  const Status stopped = reader.ForEachKernel(1, [&](const KernelRow&) {
    return ++seen == 4097 ? InternalError("enough") : OkStatus();
  });
  EXPECT_FALSE(stopped.ok());
  EXPECT_EQ(*reader.KernelCount(1), kRows);
}

// A run not written in start order (in_start_order 0): three producers
// (sessions) write windows of their kernels in turn, starting at the same
// times, a few without a start (NULL), with another run's rows among them;
// and a run in no producers' order at all (a start per row from a
// shuffle). Both read, alone and with their copies, in the order the
// readers promise: start, NULL first, then kernel_id, as the database's
// ORDER BY gives it.
TEST_P(StoreBackendTest, InterleavedProducersReadInStartOrder) {
  ASSERT_TRUE(Store::Open(store_).ok());
  constexpr int kProducers = 3, kWindow = 50, kRounds = 10;
  int64_t id = 0;
  WriteRowsByHand(
      store_,
      "INSERT INTO runs (run_id, complete) VALUES (1, 1); INSERT INTO runs "
      "(run_id, complete) VALUES (2, 1); INSERT INTO runs (run_id, complete) "
      "VALUES (3, 1); INSERT INTO kernel_names (name_id, name) VALUES (1, "
      "'k'); INSERT INTO kernel_sigs (sig_id, name_id) VALUES (1, 1)",
      [&](DbStatement* kernel, DbStatement* copy) {
        // `at` < 0: no start.
        auto add = [&](int64_t run, int64_t session, int64_t at) {
          InsertRow(kernel, {++id, run, session, at, at < 0 ? -1 : at + 3});
        };
        for (int round = 0; round < kRounds; ++round) {
          for (int p = 0; p < kProducers; ++p) {
            for (int i = 0; i < kWindow; ++i) {
              const int64_t n = round * kWindow + i;
              // Producers 0 and 1 start together; 2 between them, and
              // each window's first kernel of producer 2 has no start.
              add(1, p + 1,
                  p == 2 && i == 0 ? -1 : 10 * n + (p == 2 ? 5 : 0));
              if (i % 7 == 0) add(3, 1, 10 * n);  // another run's row
            }
          }
        }
        uint32_t x = 12345;
        for (int i = 0; i < 600; ++i) {
          x = x * 1103515245u + 12345u;
          add(2, 1 + i % 2, (x >> 8) % 400);  // ties, in no order
        }
        for (int i = 0; i < 200; ++i) {
          InsertRow(copy, {i + 1, 25 * i + 1, 25 * i + 2});
        }
      });
  ASSERT_FALSE(HasFatalFailure());
  Exec(store_,
       "INSERT INTO run_kernel_ids (run_id, first_kernel_id, last_kernel_id, "
       "in_start_order) SELECT run_id, MIN(kernel_id), MAX(kernel_id), 0 "
       "FROM kernel_rows GROUP BY run_id");
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  auto key = [](const KernelRow& k) {
    return std::to_string(k.kernel_id) + "|" + std::to_string(k.session_id);
  };
  for (int run : {1, 2}) {
    SCOPED_TRACE(run);
    const std::vector<std::string> expected =
        Rows(store_, "SELECT kernel_id, session_id FROM kernels WHERE run_id "
                     "= " + std::to_string(run) +
                     " ORDER BY start_ns NULLS FIRST, kernel_id");
    ASSERT_EQ(expected.size(), run == 1 ? 1500u : 600u);
    std::vector<std::string> alone, with_copies;
    std::string kinds;  // k or c per row, with the copies
    ASSERT_TRUE(reader
                    .ForEachKernel(run,
                                   [&](const KernelRow& k) {
                                     alone.push_back(key(k));
                                     return OkStatus();
                                   })
                    .ok());
    EXPECT_EQ(alone, expected);
    std::optional<int64_t> last;
    bool in_order = true;
    ASSERT_TRUE(reader
                    .ForEachKernelAndMemcpy(
                        run,
                        [&](const KernelRow& k) {
                          with_copies.push_back(key(k));
                          in_order = in_order && (!k.start_ns || !last ||
                                                  *k.start_ns >= *last);
                          if (k.start_ns) last = k.start_ns;
                          kinds += 'k';
                          return OkStatus();
                        },
                        [&](const MemcpyRow& m) {
                          in_order = in_order && *m.start_ns >= last.value_or(0);
                          last = m.start_ns;
                          kinds += 'c';
                          return OkStatus();
                        })
                    .ok());
    EXPECT_EQ(with_copies, expected);
    EXPECT_TRUE(in_order);
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), 'c'), run == 1 ? 200 : 0);
  }
}

// With atomic runs, a run aborted part-way (or whose store is closed
// before it finished) leaves no run, session or kernel; the run before it
// stays as it was.
TEST_P(StoreBackendTest, AnAbortedAtomicRunLeavesNothing) {
  ASSERT_TRUE(IngestTraceFile(trace_, store_, {}).ok());
  const auto before = Rows(store_, "SELECT * FROM kernels ORDER BY kernel_id");
  for (int close_without_finishing = 0; close_without_finishing < 2;
       ++close_without_finishing) {
    test_support::WriteAbortedAtomicRun(store_, close_without_finishing);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM sessions"), 1);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernels WHERE "
                        "name='never_stored_kernel'"),
            0);
  EXPECT_EQ(Rows(store_, "SELECT * FROM kernels ORDER BY kernel_id"), before);
}

// A schema 6 store (no kernels.op, no kernel_metrics.graph_node_id) reads
// as it is, and a writer brings it to schema 7 in place: on SQLite its view
// and trigger made again, on PostgreSQL its view replaced. Its run keeps
// every kernel.
TEST_P(StoreBackendTest, ASchema6StoreIsUpgradedToSchema7) {
  ASSERT_TRUE(IngestTraceFile(trace_, store_, {}).ok());
  std::string down = test_support::kDowngradeToSchema6;
  if (GetParam() == Backend::kPostgres) {
    // PostgreSQL's store has no trigger (PostgresSql leaves it out).
    const std::string trigger = "DROP TRIGGER kernels_insert;\n";
    for (size_t at; (at = down.find(trigger)) != std::string::npos;) {
      down.erase(at, trigger.size());
    }
  }
  Exec(store_, down);
  const std::string version =
      "SELECT value FROM schema_info WHERE key='schema_version'";
  EXPECT_EQ(Int(store_, version), 6);
  {
    StoreReader reader;
    ASSERT_TRUE(reader.Open(store_, store_).ok());
    EXPECT_FALSE(reader.KeepsOperators());
  }
  ASSERT_TRUE(IngestTraceFile(trace_, store_, {}).ok());
  EXPECT_EQ(Int(store_, version), kStoreSchemaVersion);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernels WHERE op IS NULL AND "
                        "run_id = 1"),
            225);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernel_metrics WHERE "
                        "graph_node_id IS NOT NULL"),
            0);
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  EXPECT_TRUE(reader.KeepsOperators());
}

// Another program's database is refused with the fix and left as it was;
// a store of a newer schema is refused by the writer and the reader.
TEST_P(StoreBackendTest, ForeignAndNewerStoresAreRefused) {
  Exec(store_, "CREATE TABLE user_notes (t TEXT)");
  auto foreign = Store::Open(store_);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("of another program (tables "
                                            "user_notes)"),
            std::string::npos)
      << foreign.status().message();
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM user_notes"), 0);
  Exec(store_, "DROP TABLE user_notes");

  { ASSERT_TRUE(Store::Open(store_).ok()); }
  Exec(store_, "UPDATE schema_info SET value='99' WHERE key='schema_version'");
  auto newer = Store::Open(store_);
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("schema version 99 is newer"),
            std::string::npos)
      << newer.status().message();
  StoreReader reader;
  const Status read = reader.Open(store_, store_);
  EXPECT_NE(read.message().find("schema version 99 is newer"),
            std::string::npos)
      << read.message();
}

// `n` bytes of printable text no compressor shrinks (PostgreSQL compresses
// index entries before it judges their size), from `seed`.
std::string Incompressible(size_t n, uint32_t seed) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    out += static_cast<char>('!' + (seed >> 24) % 94);
  }
  return out;
}

// The series of every group of `h`, as text with figures to 9 digits
// (the two reads sum the same doubles in another order).
std::vector<std::string> Series(const analyzer::HistoryResult& h) {
  std::vector<std::string> out;
  auto fig = [](const std::optional<double>& v) {
    if (!v) return std::string("-");
    char buf[32];
    snprintf(buf, sizeof(buf), "%.9g", *v);
    return std::string(buf);
  };
  for (const analyzer::HistoryRun& r : h.runs) {
    out.push_back("run kernels=" + std::to_string(r.kernel_count) +
                  " ns=" + std::to_string(r.total_ns) +
                  " steps=" + std::to_string(r.steps));
  }
  for (const analyzer::HistoryGroup& g : h.groups) {
    std::string line = g.key + " | " + g.name + " | " + g.shape + " |";
    for (size_t i = 0; i < g.mean_ns.size(); ++i) {
      line += " " + fig(g.mean_ns[i]) + "/" + fig(g.fraction_of_roof[i]) +
              "/" + fig(g.time_share[i]);
    }
    line += std::string(" ") + analyzer::HistoryVerdictName(g.verdict);
    out.push_back(std::move(line));
  }
  return out;
}

// Issue 37 item 7: a 9 KB kernel name passed PostgreSQL's bound on an index
// entry, and collect stored no run (import: "current transaction is
// aborted"), while SQLite took it. On both, a name past
// kMaxIndexedNameBytes is stored as its head and a hash (two long names
// with one head stay two), the whole name kept as its demangled form, the
// run complete with every kernel; ingested again, it is the same name.
TEST_P(StoreBackendTest, LongKernelNamesAreBoundedAlikeOnBothBackends) {
  const std::string head = Incompressible(4000, 1);
  const std::string long1 = head + Incompressible(5000, 2);
  const std::string long2 = head + Incompressible(5216, 3);
  TraceBuilder b;
  b.Hello();
  b.AddDevice(0, "NVIDIA H100 80GB HBM3");
  b.AddKernel(long1, 1, 1000000, 1030000);
  b.AddLaunch(1, 990000);
  b.AddKernel(long2, 2, 1040000, 1060000);
  b.AddLaunch(2, 991000);
  b.AddKernel("_Z3addPfS_", 3, 1070000, 1080000);
  b.AddLaunch(3, 992000);
  b.Goodbye();
  const std::string trace = dir_.File("long_names.rft");
  ASSERT_TRUE(b.WriteFile(trace).ok());
  for (int pass = 0; pass < 2; ++pass) {
    auto r = IngestTraceFile(trace, store_, {});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM runs WHERE complete = 1"), 2);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernels"), 6);
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernel_names"), 3);
  const std::vector<std::string> names = Rows(
      store_, "SELECT name FROM kernel_names ORDER BY name_id");
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], IndexedKernelName(long1));
  EXPECT_EQ(names[1], IndexedKernelName(long2));
  EXPECT_NE(names[0], names[1]);
  EXPECT_EQ(names[2], "_Z3addPfS_");
  for (const std::string& n : names) {
    EXPECT_LE(n.size(), kMaxIndexedNameBytes);
  }
  EXPECT_EQ(names[0].substr(0, 100), head.substr(0, 100));
  EXPECT_NE(names[0].find("... [9000 bytes, sha256 "), std::string::npos);
  EXPECT_EQ(Rows(store_, "SELECT demangled FROM kernel_names ORDER BY "
                         "name_id LIMIT 2"),
            (std::vector<std::string>{long1, long2}));
}

// The same item for labels: a key past kMaxLabelKeyBytes or a value past
// kMaxLabelValueBytes is refused where labels are parsed (--label,
// --where), naming the key and the bound, before anything is collected;
// the longest label allowed, incompressible, is stored on both backends.
TEST_P(StoreBackendTest, LabelsAtTheBoundAreStoredAndLongerOnesRefused) {
  const std::string value = Incompressible(kMaxLabelValueBytes, 4);
  const std::string key(kMaxLabelKeyBytes, 'k');
  auto ok = ParseKeyValues({key + "=" + value}, "--label");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  IngestOptions o;
  o.labels = *ok;
  ASSERT_TRUE(IngestTraceFile(trace_, store_, o).ok());
  EXPECT_EQ(Rows(store_, "SELECT value FROM run_labels"),
            std::vector<std::string>{value});
  auto long_value = ParseKeyValues({"note=" + value + "x"}, "--label");
  ASSERT_FALSE(long_value.ok());
  EXPECT_EQ(long_value.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(long_value.status().message().find(
                "--label 'note=...': the value is 1025 bytes; a label's key "
                "may hold 128 bytes and its value 1024"),
            std::string::npos)
      << long_value.status().message();
  auto long_key = ParseKeyValues({key + "k=v"}, "--where");
  ASSERT_FALSE(long_key.ok());
  EXPECT_NE(long_key.status().message().find("the key is 129 bytes"),
            std::string::npos)
      << long_key.status().message();
}

// Store schema 8: every run keeps per-group aggregates, and `history`
// reads them instead of the kernels. Three nights stored with every kernel
// row and the same three with none (aggregates only) give the same series
// by every grouping the aggregates serve, as the kernel-by-kernel read of
// the first three does; --by nvtx over the aggregate-only runs is refused
// with the fix.
TEST_P(StoreBackendTest, HistoryReadsAggregatesAsItReadKernels) {
  for (StoreKernels kept : {StoreKernels::kAll, StoreKernels::kNone}) {
    for (int night = 0; night < 3; ++night) {
      IngestOptions o;
      o.labels = {{"kept", StoreKernelsName(kept)},
                  {"night", std::to_string(night)}};
      o.store_kernels = kept;
      auto r = IngestTraceFile(trace_, store_, o);
      ASSERT_TRUE(r.ok()) << r.status().message();
    }
  }
  EXPECT_EQ(Rows(store_, "SELECT store_kernels, COUNT(*) FROM runs GROUP BY "
                         "store_kernels ORDER BY store_kernels"),
            (std::vector<std::string>{"all|3", "none|3"}));
  EXPECT_EQ(Int(store_, "SELECT COUNT(*) FROM kernel_rows WHERE run_id > 3"),
            0);
  EXPECT_EQ(Int(store_, "SELECT SUM(launches) FROM kernel_aggregates WHERE "
                        "run_id > 3"),
            3 * 225);
  for (GroupBy by : {GroupBy::kFamilyShape, GroupBy::kFamily, GroupBy::kPhase,
                     GroupBy::kOp, GroupBy::kKernel, GroupBy::kCategory}) {
    SCOPED_TRACE(GroupByName(by));
    StoreReader reader;
    ASSERT_TRUE(reader.Open(store_, store_).ok());
    analyzer::HistoryOptions kernels;
    kernels.where = {{"kept", "all"}};
    kernels.group_by = by;
    kernels.read_aggregates = false;
    analyzer::HistoryOptions aggregates = kernels;
    aggregates.read_aggregates = true;
    analyzer::HistoryOptions none = aggregates;
    none.where = {{"kept", "none"}};
    auto from_kernels = analyzer::BuildHistory(reader, store_, kernels);
    ASSERT_TRUE(from_kernels.ok()) << from_kernels.status().message();
    auto from_aggregates = analyzer::BuildHistory(reader, store_, aggregates);
    ASSERT_TRUE(from_aggregates.ok()) << from_aggregates.status().message();
    auto from_none = analyzer::BuildHistory(reader, store_, none);
    ASSERT_TRUE(from_none.ok()) << from_none.status().message();
    const std::vector<std::string> expected = Series(*from_kernels);
    ASSERT_GT(expected.size(), 3u);  // the 3 runs, then the groups
    EXPECT_EQ(Series(*from_aggregates), expected);
    EXPECT_EQ(Series(*from_none), expected);
  }
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  analyzer::HistoryOptions nvtx;
  nvtx.group_by = GroupBy::kNvtx;
  nvtx.where = {{"kept", "none"}};
  auto refused = analyzer::BuildHistory(reader, store_, nvtx);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "runs 4, 5, 6 were stored with --store-kernels sampled or none"),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("--store-kernels all"),
            std::string::npos);
}

// `analyze` of a run stored with --store-kernels none groups its
// aggregates as the same run stored whole groups its kernels: the same
// groups, launches, time, FLOPs, bytes and % of roof; the per-kernel
// timeline export is refused, saying why and what to do.
TEST_P(StoreBackendTest, AnAggregateOnlyRunAnalyzesAsItsKernels) {
  for (StoreKernels kept : {StoreKernels::kAll, StoreKernels::kNone}) {
    IngestOptions o;
    o.store_kernels = kept;
    ASSERT_TRUE(IngestTraceFile(trace_, store_, o).ok());
  }
  for (GroupBy by : {GroupBy::kFamilyShape, GroupBy::kPhase, GroupBy::kOp}) {
    SCOPED_TRACE(GroupByName(by));
    std::vector<std::vector<std::string>> groups;
    for (int64_t run : {1, 2}) {
      StoreReader reader;
      ASSERT_TRUE(reader.Open(store_, store_).ok());
      ReportOptions ro;
      ro.run_id = run;
      ro.group_by = by;
      auto report = BuildReport(reader, ro);
      ASSERT_TRUE(report.ok()) << report.status().message();
      std::vector<std::string> lines = {
          std::to_string(report->kernel_count) + " " +
          std::to_string(report->total_ns)};
      for (const GroupRow& g : report->groups) {
        char fig[128];
        snprintf(fig, sizeof(fig), " %.9g %.9g %.9g",
                 g.flops.value_or(-1), g.bytes.value_or(-1),
                 g.fraction_of_roof.value_or(-1));
        lines.push_back(g.key + " " + g.phase + " " +
                        std::to_string(g.count) + " " +
                        std::to_string(g.total_ns) + fig);
      }
      for (const PhaseRow& p : report->phases) {
        lines.push_back(p.phase + " " + std::to_string(p.count) + " " +
                        std::to_string(p.steps));
      }
      groups.push_back(std::move(lines));
    }
    ASSERT_GT(groups[0].size(), 2u);
    EXPECT_EQ(groups[1], groups[0]);
  }
  StoreReader reader;
  ASSERT_TRUE(reader.Open(store_, store_).ok());
  std::ostringstream json;
  const Status refused = analyzer::WritePerfettoJson(reader, 2, json, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("run 2 was stored with --store-kernels "
                                   "none"),
            std::string::npos)
      << refused.message();
  // The CSV export writes its aggregates beside its (empty) kernels.
  std::vector<std::string> files;
  ASSERT_TRUE(
      analyzer::WriteCsvTables(reader, 2, dir_.File("csv"), &files).ok());
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files.back(), dir_.File("csv") + "/kernel_aggregates.csv");
  std::ifstream csv(files.back());
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("run_id,name_id,shape,phase,op,", 0), 0u) << header;
  int64_t launches_rows = 0;
  while (std::getline(csv, line)) ++launches_rows;
  EXPECT_EQ(launches_rows,
            Int(store_, "SELECT COUNT(*) FROM kernel_aggregates WHERE "
                        "run_id = 2"));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreBackendTest,
                         ::testing::Values(Backend::kSqlite,
                                           Backend::kPostgres),
                         [](const auto& info) {
                           return info.param == Backend::kSqlite
                                      ? std::string("Sqlite")
                                      : std::string("Postgres");
                         });

class PostgresStoreTest : public ::testing::Test {
 protected:
  test_support::TempDir dir_{"pg_store"};
};

// What a command prints, with the store's name replaced by STORE so that
// the outputs of two stores can be compared.
struct Output {
  int code = -1;
  std::string out, err;
};
Output RunCommand(int (*main_fn)(int, char**), const std::string& name,
           std::vector<std::string> args, const std::string& store) {
  Output o;
  o.code = testing::RunMain(main_fn, name, args, &o.out, &o.err);
  for (std::string* s : {&o.out, &o.err}) {
    for (size_t p = s->find(store); p != std::string::npos;
         p = s->find(store, p)) {
      s->replace(p, store.size(), "STORE");
    }
  }
  return o;
}

// Issue 27's acceptance: the same runs stored in SQLite and in PostgreSQL
// read back into analyze, diff, export (Perfetto JSON and CSV) and history
// with byte-identical output.
TEST_F(PostgresStoreTest, TheSameRunsGiveTheSameOutputFromBothBackends) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  const std::string sqlite = dir_.File("runs.sqlite");
  const std::string trace = WriteTrace(dir_);
  for (const std::string& store : {sqlite, pg}) {
    for (int night = 0; night < 3; ++night) {
      IngestOptions o;
      o.labels = {{"branch", "main"}, {"night", std::to_string(night)}};
      auto r = IngestTraceFile(trace, store, o);
      ASSERT_TRUE(r.ok()) << store << ": " << r.status().message();
    }
  }
  struct Command {
    int (*fn)(int, char**);
    const char* name;
    std::vector<std::string> args;  // STORE for the store
  };
  const std::vector<Command> commands = {
      {AnalyzeMain, "analyze", {"STORE"}},
      {AnalyzeMain, "analyze", {"STORE", "--run", "2", "--by",
                                          "family", "--format", "json"}},
      {AnalyzeMain, "analyze", {"STORE", "--by", "phase",
                                          "--format", "csv"}},
      {DiffMain, "diff", {"STORE", "STORE"}},
      {HistoryMain, "history", {"STORE", "--where", "branch=main"}},
      {HistoryMain, "history", {"STORE", "--where", "branch=main",
                                          "--format", "json"}},
  };
  for (const Command& c : commands) {
    std::vector<Output> outs;
    for (const std::string& store : {sqlite, pg}) {
      std::vector<std::string> args = c.args;
      for (std::string& a : args) {
        if (a == "STORE") a = store;
      }
      outs.push_back(RunCommand(c.fn, c.name, args, store));
    }
    const std::string what = std::string(c.name) + " " + c.args.back();
    EXPECT_EQ(outs[0].code, outs[1].code) << what << "\n" << outs[1].err;
    EXPECT_EQ(outs[0].out, outs[1].out) << what;
    EXPECT_EQ(outs[0].err, outs[1].err) << what;
    EXPECT_FALSE(outs[0].out.empty()) << what;
  }
  // Exports: every file byte for byte.
  for (const std::string& store : {sqlite, pg}) {
    const std::string tag = store == sqlite ? "sqlite" : "pg";
    const Output json = RunCommand(
        ExportMain, "export", {store, "--perfetto", dir_.File(tag + ".json")},
        store);
    ASSERT_EQ(json.code, 0) << json.err;
    const Output csv = RunCommand(
        ExportMain, "export", {store, "--csv", dir_.File(tag + "_csv")},
        store);
    ASSERT_EQ(csv.code, 0) << csv.err;
  }
  EXPECT_EQ(testing::ReadFile(dir_.File("sqlite.json")),
            testing::ReadFile(dir_.File("pg.json")));
  int files = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(dir_.File("sqlite_csv"))) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(testing::ReadFile(e.path().string()),
              testing::ReadFile(dir_.File("pg_csv/" + name)))
        << name;
    ++files;
  }
  EXPECT_GE(files, 10);
}

// `collect --store URL --ingest` and `import -o URL` write a PostgreSQL
// store; a real Nsight Compute capture (raw metrics, a measured clock)
// imported into both backends analyzes to the same bytes.
TEST_F(PostgresStoreTest, CollectAndImportWriteToAUrl) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  const std::string trace = WriteTrace(dir_);
  Output collect = RunCommand(CollectMain, "collect",
                              {"--store", pg, "--ingest", trace}, pg);
  ASSERT_EQ(collect.code, 0) << collect.err;
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM runs WHERE complete = 1"), 1);
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM kernels"), 225);

  const std::string ncu = std::string(ROOFTRACE_SOURCE_DIR) +
                          "/tests/data/ncu/h100_hf_generate_tiny.csv.gz";
  const std::string sqlite = dir_.File("ncu.sqlite");
  std::string pg_ncu;
  RT_NEW_PG_DATABASE(pg_ncu, "_ncu");
  std::vector<Output> outs;
  for (const std::string& store : {sqlite, pg_ncu}) {
    Output import = RunCommand(ImportMain, "import",
                               {ncu, "-o", store, "--quiet"}, store);
    ASSERT_EQ(import.code, 0) << import.err;
    outs.push_back(RunCommand(AnalyzeMain, "analyze",
                              {store, "--format", "json"}, store));
  }
  EXPECT_GT(Int(pg_ncu, "SELECT COUNT(*) FROM kernel_metrics"), 0);
  EXPECT_EQ(Rows(sqlite, "SELECT name, value, unit FROM kernel_metrics "
                         "ORDER BY session_id, correlation_id, rowid"),
            Rows(pg_ncu, "SELECT name, value, unit FROM kernel_metrics "
                         "ORDER BY session_id, correlation_id, rowid"));
  ASSERT_EQ(outs[0].code, 0) << outs[0].err;
  EXPECT_EQ(outs[0].out, outs[1].out);
  EXPECT_EQ(outs[0].err, outs[1].err);
}

// `profile -o URL` (the collector serving a producer process, as in
// production) stores its run in PostgreSQL and passes the command's exit
// code through.
TEST_F(PostgresStoreTest, ProfileStoresItsRunInAUrl) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  const std::string tests = std::string(ROOFTRACE_BINARY_DIR) + "/tests";
  const std::string log = dir_.File("profile.log");
  const std::string command =
      "cd " + dir_.path().string() + " && ROOFTRACE_INJECT_LIB=" + tests +
      "/librooftrace_fake_inject.so " + tests + "/collector_cli profile -o '" +
      pg + "' -- " + tests + "/test_producer --exit-code 3 > " + log +
      " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << testing::ReadFile(log);
  EXPECT_EQ(Rows(pg, "SELECT origin, complete FROM runs"),
            std::vector<std::string>{"profile|1"});
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM kernels"), 125);
  EXPECT_NE(testing::ReadFile(log).find("prefill"), std::string::npos)
      << testing::ReadFile(log);
}

// Eight writers (threads, each with its own Store and connection) store
// runs into one PostgreSQL store at once: every run is stored, complete,
// with all its kernels, under its own run id; no name is stored twice.
TEST_F(PostgresStoreTest, ConcurrentWritersLoseNothing) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  const std::string trace = WriteTrace(dir_);
  constexpr int kWriters = 8, kRunsEach = 4;
  std::atomic<int> failures{0};
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int r = 0; r < kRunsEach; ++r) {
        IngestOptions o;
        o.labels = {{"writer", std::to_string(w)}};
        auto result = IngestTraceFile(trace, pg, o);
        if (!result.ok()) {
          ++failures;
          errors[w] = result.status().message();
        }
      }
    });
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0) << errors[0];
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM runs"), kWriters * kRunsEach);
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM runs WHERE complete = 1"),
            kWriters * kRunsEach);
  EXPECT_EQ(Int(pg, "SELECT COUNT(DISTINCT run_id) FROM runs"),
            kWriters * kRunsEach);
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM kernels"),
            kWriters * kRunsEach * 225);
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM run_labels WHERE key = 'writer'"),
            kWriters * kRunsEach);
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM kernel_names"),
            Int(pg, "SELECT COUNT(DISTINCT name) FROM kernel_names"));
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM (SELECT run_id FROM kernels GROUP "
                    "BY run_id HAVING COUNT(*) <> 225) AS short_runs"),
            0);
  // A run's rows lie within its run_kernel_ids, other writers' rows among
  // them: the reader finds every one of each run's.
  StoreReader reader;
  ASSERT_TRUE(reader.Open(pg, pg).ok());
  ASSERT_EQ(reader.runs().size(), static_cast<size_t>(kWriters * kRunsEach));
  for (const RunRow& run : reader.runs()) {
    int64_t n = 0;
    ASSERT_TRUE(reader
                    .ForEachKernel(run.run_id,
                                   [&](const KernelRow&) {
                                     ++n;
                                     return OkStatus();
                                   })
                    .ok());
    EXPECT_EQ(n, 225) << "run " << run.run_id;
  }
}

// A batch's writes are queued (one round trip per batch, not per row):
// one the server refuses (here a kernel a constraint forbids) fails the
// batch when it is read: the write reports it, none of the batch's rows
// is stored, and the store counts what earlier batches kept.
TEST_F(PostgresStoreTest, ARefusedQueuedWriteFailsItsBatch) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  { ASSERT_TRUE(Store::Open(pg).ok()); }
  Exec(pg, "ALTER TABLE kernel_rows ADD CONSTRAINT no_negative_time CHECK "
           "(duration_ns >= 0)");
  auto store = Store::Open(pg);
  ASSERT_TRUE(store.ok());
  (*store)->set_batch_rows(10);
  RunRow run;
  auto id = (*store)->BeginRun(run);
  ASSERT_TRUE(id.ok());
  SessionRow session;
  session.run_id = *id;
  auto sid = (*store)->AddSession(session, {});
  ASSERT_TRUE(sid.ok());
  Status failed;
  int added = 0;
  for (int i = 0; i < 25 && failed.ok(); ++i) {
    KernelRow k;
    k.run_id = *id;
    k.session_id = *sid;
    k.name = "k";
    k.flops_source = k.bytes_source = "none";
    k.bound = "unknown";
    k.duration_ns = i == 14 ? -1 : 100;  // in the second batch
    failed = (*store)->AddKernel(k);
    if (failed.ok()) ++added;
  }
  if (failed.ok()) failed = (*store)->EndWrite();
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("no_negative_time"), std::string::npos)
      << failed.message();
  uint64_t kernels = 0, ranges = 0;
  (*store)->KeptOfFailedWrite(&kernels, &ranges);
  EXPECT_EQ(kernels, 10u);  // the first batch, committed
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM kernel_rows"), 10);
  EXPECT_GE(added, 14);
}

// A COPY returns once its rows are sent, before the server has stored
// them (the writer builds its next batch meanwhile): here the server's
// check of each row waits on a lock another connection holds, and CopyRows still
// returns at once; the rows are there after the commit. A writer that
// waited for the server's verdict would wait out ROOFTRACE_DB_TIMEOUT_S.
TEST_F(PostgresStoreTest, ACopyReturnsBeforeTheServerHasStoredItsRows) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  auto holder = OpenDbForWrite(pg);
  ASSERT_TRUE(holder.ok()) << holder.status().message();
  for (const char* sql :
       {"CREATE TABLE copied (a BIGINT)",
        "CREATE FUNCTION wait_for_lock(v BIGINT) RETURNS BOOLEAN LANGUAGE "
        "plpgsql AS 'BEGIN PERFORM pg_advisory_xact_lock_shared(7); "
        "RETURN true; END'",
        "ALTER TABLE copied ADD CONSTRAINT copied_waits CHECK "
        "(wait_for_lock(a))"}) {
    const Status made = (*holder)->Exec(sql);
    ASSERT_TRUE(made.ok()) << sql << ": " << made.message();
  }
  ASSERT_TRUE((*holder)->Exec("SELECT pg_advisory_lock(7)").ok());
  ASSERT_EQ(setenv("ROOFTRACE_DB_TIMEOUT_S", "5", 1), 0);
  auto writer = OpenDbForWrite(pg);
  unsetenv("ROOFTRACE_DB_TIMEOUT_S");
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_TRUE((*writer)->CanCopyRows());
  ASSERT_TRUE((*writer)->Begin().ok());
  std::vector<DbCell> cells(3);
  for (size_t i = 0; i < cells.size(); ++i) {
    cells[i].type = DbType::kInt;
    cells[i].i = static_cast<int64_t>(i);
  }
  Status copied = (*writer)->CopyRows("copied", "a", 1, cells);
  EXPECT_TRUE(copied.ok()) << copied.message();
  // The server has the COPY, in the binary format, and waits.
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM pg_stat_activity WHERE query = "
                    "'COPY copied (a) FROM STDIN (FORMAT binary)'"),
            1);
  ASSERT_TRUE((*holder)->Exec("SELECT pg_advisory_unlock(7)").ok());
  // The next COPY first reads the verdict of this one.
  copied = (*writer)->CopyRows("copied", "a", 1, cells);
  EXPECT_TRUE(copied.ok()) << copied.message();
  const Status committed = (*writer)->Commit();
  EXPECT_TRUE(committed.ok()) << committed.message();
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM copied"), 6);
}

// CopyRows sends numbers in COPY's binary format (the server parses no
// text), and they arrive exactly: the extremes of BIGINT, reals that need
// all 17 digits, a subnormal, -0, the infinities, an integer into a
// DOUBLE PRECISION column, NULLs, and NaN as NULL (as the text format
// stores it). A column of another type (SMALLINT) goes by the text format.
TEST_F(PostgresStoreTest, CopiedNumbersGoInBinaryAndArriveExactly) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  Exec(pg, "CREATE TABLE copied (n INTEGER, i INTEGER, r REAL)");
  Exec(pg, "CREATE TABLE small (s SMALLINT, r REAL)");
  auto writer = OpenDbForWrite(pg);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  auto cell = [](DbType type, int64_t i, double r) {
    DbCell c;
    c.type = type;
    c.i = i;
    c.r = r;
    return c;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<DbCell> cells = {
      cell(DbType::kInt, 1, 0), cell(DbType::kInt, INT64_MIN, 0),
      cell(DbType::kReal, 0, 0.1),
      cell(DbType::kInt, 2, 0), cell(DbType::kInt, INT64_MAX, 0),
      cell(DbType::kReal, 0, 4.9406564584124654e-324),
      cell(DbType::kInt, 3, 0), cell(DbType::kNull, 0, 0),
      cell(DbType::kReal, 0, -0.0),
      cell(DbType::kInt, 4, 0), cell(DbType::kInt, -1, 0),
      cell(DbType::kReal, 0, inf),
      cell(DbType::kInt, 5, 0), cell(DbType::kInt, 0, 0),
      cell(DbType::kReal, 0, -inf),
      cell(DbType::kInt, 6, 0), cell(DbType::kInt, 7, 0),
      cell(DbType::kReal, 0, std::nan("")),
      cell(DbType::kInt, 7, 0), cell(DbType::kInt, 8, 0),
      cell(DbType::kInt, 9007199254740993, 0),
      cell(DbType::kInt, 8, 0), cell(DbType::kInt, 9, 0),
      cell(DbType::kReal, 0, 1.7976931348623157e308)};
  ASSERT_TRUE((*writer)->Begin().ok());
  Status copied = (*writer)->CopyRows("copied", "n, i,\n r", 3, cells);
  EXPECT_TRUE(copied.ok()) << copied.message();
  copied = (*writer)->CopyRows(
      "small", "s, r", 2,
      {cell(DbType::kInt, -7, 0), cell(DbType::kReal, 0, 2.5)});
  EXPECT_TRUE(copied.ok()) << copied.message();
  // While the COPY's verdict is still to be read, the server shows the
  // writer's last statement.
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM pg_stat_activity WHERE query "
                    "LIKE 'COPY small (s, r) FROM STDIN'"),
            1);
  const Status committed = (*writer)->Commit();
  ASSERT_TRUE(committed.ok()) << committed.message();
  EXPECT_EQ(Rows(pg, "SELECT n, i, CAST(r AS TEXT), r = 0 AND "
                     "CAST(r AS TEXT) = '-0' FROM copied ORDER BY n"),
            (std::vector<std::string>{
                "1|-9223372036854775808|0.1|f",
                "2|9223372036854775807|5e-324|f",
                "3|<null>|-0|t",
                "4|-1|Infinity|f",
                "5|0|-Infinity|f",
                "6|7|<null>|<null>",
                "7|8|9.007199254740992e+15|f",
                "8|9|1.7976931348623157e+308|f"}));
  EXPECT_EQ(Rows(pg, "SELECT s, r FROM small"),
            (std::vector<std::string>{"-7|2.5"}));
}

// A refused COPY, whose verdict is read after CopyRows returned, fails
// the transaction's commit with the server's reason.
TEST_F(PostgresStoreTest, ARefusedCopyFailsItsCommit) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  Exec(pg, "CREATE TABLE copied (a BIGINT CONSTRAINT a_is_small CHECK "
           "(a < 2))");
  auto writer = OpenDbForWrite(pg);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_TRUE((*writer)->Begin().ok());
  std::vector<DbCell> cells(3);
  for (size_t i = 0; i < cells.size(); ++i) {
    cells[i].type = DbType::kInt;
    cells[i].i = static_cast<int64_t>(i);
  }
  (void)(*writer)->CopyRows("copied", "a", 1, cells);
  const Status committed = (*writer)->Commit();
  EXPECT_FALSE(committed.ok());
  EXPECT_NE(committed.message().find("a_is_small"), std::string::npos)
      << committed.message();
  EXPECT_EQ(Int(pg, "SELECT COUNT(*) FROM copied"), 0);
}

// Text PostgreSQL cannot hold (bytes that are not UTF-8, a NUL) is stored
// with U+FFFD in their place, so that one odd name does not fail a run.
TEST_F(PostgresStoreTest, TextThatIsNotUtf8IsStoredWithReplacements) {
  std::string pg;
  RT_NEW_PG_DATABASE(pg, "");
  auto store = Store::Open(pg);
  ASSERT_TRUE(store.ok());
  RunRow run;
  run.command = std::string("serve \xff\xfe x\0y", 12);
  run.host = "h\xc3\xa9";  // valid: kept
  auto id = (*store)->BeginRun(run);
  ASSERT_TRUE(id.ok()) << id.status().message();
  ASSERT_TRUE((*store)->EndWrite().ok());
  EXPECT_EQ(Rows(pg, "SELECT command, host FROM runs"),
            std::vector<std::string>{
                "serve \xEF\xBF\xBD\xEF\xBF\xBD x\xEF\xBF\xBDy|h\xc3\xa9"});
}

// A URL that reaches no server is refused with the URL (its password
// hidden) and the fix.
TEST(PostgresUrlTest, AnUnreachableServerIsNamedWithTheFix) {
  const std::string url =
      "postgresql://ci:secret@/none?host=/nonexistent-rooftrace-dir";
  auto store = Store::Open(url);
  ASSERT_FALSE(store.ok());
  const std::string m(store.status().message());
  EXPECT_NE(m.find("postgresql://ci:***@/none"), std::string::npos) << m;
  EXPECT_EQ(m.find("secret"), std::string::npos) << m;
  EXPECT_NE(m.find("cannot connect to PostgreSQL"), std::string::npos) << m;
  EXPECT_NE(m.find("check the URL"), std::string::npos) << m;
}

// Which backend a store names, how messages name it, and where its raw
// streams are kept.
TEST(PostgresUrlTest, UrlsPickTheBackendAndHideTheirPassword) {
  EXPECT_TRUE(IsPostgresUrl("postgresql://host/db"));
  EXPECT_TRUE(IsPostgresUrl("postgres://host/db"));
  EXPECT_FALSE(IsPostgresUrl("runs.sqlite"));
  EXPECT_FALSE(IsPostgresUrl("./postgresql://x"));
  EXPECT_EQ(StoreDisplayName("postgresql://u:pw@h:5432/db?password=x&a=b"),
            "postgresql://u:***@h:5432/db?password=***&a=b");
  EXPECT_EQ(StoreDisplayName("runs.sqlite"), "runs.sqlite");
  EXPECT_EQ(RawStreamDir("runs.sqlite"), "runs.sqlite.raw");
  EXPECT_EQ(RawStreamDir("postgresql://h/nightly?sslmode=require"),
            "rooftrace-nightly.raw");
  EXPECT_EQ(RawStreamDir("postgres://h"), "rooftrace-postgresql.raw");
}

// PostgreSQL's text of the store's SQL: numbered placeholders (not inside
// literals), BIGINT and DOUBLE PRECISION columns, an identity column for
// INTEGER PRIMARY KEY and a rowid column for a table without one, no
// REFERENCES, no trigger, and a view that can be re-created.
TEST(PostgresSqlTest, TheStoresSqlIsTranslated) {
  EXPECT_EQ(PostgresSql("SELECT a FROM t WHERE b = ? AND c = '?' AND d = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2");
  EXPECT_EQ(PostgresSql("CREATE TABLE IF NOT EXISTS runs (run_id INTEGER "
                        "PRIMARY KEY, host TEXT, x REAL);"),
            "CREATE TABLE IF NOT EXISTS runs (run_id BIGINT GENERATED BY "
            "DEFAULT AS IDENTITY PRIMARY KEY, host TEXT COLLATE \"C\", x "
            "DOUBLE PRECISION);");
  EXPECT_EQ(PostgresSql("CREATE TABLE l (run_id INTEGER NOT NULL REFERENCES "
                        "runs(run_id), PRIMARY KEY (run_id));"),
            "CREATE TABLE l (run_id BIGINT NOT NULL, PRIMARY KEY (run_id), "
            "rowid BIGINT GENERATED ALWAYS AS IDENTITY);");
  EXPECT_EQ(PostgresSql("CREATE VIEW IF NOT EXISTS v AS SELECT 1;\n"
                        "CREATE TRIGGER IF NOT EXISTS g INSTEAD OF INSERT ON "
                        "v BEGIN INSERT INTO t VALUES (NEW.a); END;\n"
                        "-- a comment with INTEGER ?\nSELECT 2"),
            "CREATE OR REPLACE VIEW v AS SELECT 1;\n\n\nSELECT 2");
  // Outside DDL, words are left alone.
  EXPECT_EQ(PostgresSql("SELECT CAST(x AS TEXT) FROM t"),
            "SELECT CAST(x AS TEXT) FROM t");
}

// `--store-kernels` on collect (and profile, import): `none` stores the
// run's aggregates and no kernel row, and says so in runs.store_kernels; a
// value it does not take exits 2 naming the flag and its values, with
// nothing stored.
TEST_F(PostgresStoreTest, CollectStoresKernelsAsTold) {
  const std::string store = dir_.File("runs.sqlite");
  const std::string trace = WriteTrace(dir_);
  Output bad = RunCommand(CollectMain, "collect",
                          {"--store", store, "--store-kernels", "some",
                           "--ingest", trace},
                          store);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--store-kernels some: unknown value; give all"),
            std::string::npos)
      << bad.err;
  EXPECT_FALSE(std::filesystem::exists(store));
  Output ok = RunCommand(CollectMain, "collect",
                         {"--store", store, "--store-kernels", "none",
                          "--ingest", trace},
                         store);
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(Rows(store, "SELECT store_kernels FROM runs"),
            std::vector<std::string>{"none"});
  EXPECT_EQ(Int(store, "SELECT COUNT(*) FROM kernel_rows"), 0);
  EXPECT_EQ(Int(store, "SELECT SUM(launches) FROM kernel_aggregates"), 225);
}

}  // namespace
}  // namespace rooftrace
