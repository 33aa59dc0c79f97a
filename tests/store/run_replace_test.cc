// A recovered run replaces its incomplete twin (store/run_replace.h,
// #37.4), on SQLite and on a real throwaway PostgreSQL server: the raw
// stream a collector kept, ingested with --recovers-run, leaves one run
// holding every kernel once with the twin's labels; a twin another process
// is writing, a complete run or one holding sessions the streams do not
// hold is never deleted.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "sources/rft/ingest.h"
#include "sources/rft/testing/trace_builder.h"
#include "store/db.h"
#include "store/run_replace.h"
#include "store/store.h"
#include "tests/support/pg_server.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::LlmTraceOptions;
using test_support::TraceBuilder;

enum class Backend { kSqlite, kPostgres };
void PrintTo(Backend b, std::ostream* os) {
  *os << (b == Backend::kSqlite ? "sqlite" : "postgresql");
}

// The generated LLM trace (225 kernels, frames of 20 records) of the
// producer with `pid`, as `dir`/`name`.
std::string WriteTrace(const test_support::TempDir& dir,
                       const std::string& name, uint32_t pid = 4242) {
  LlmTraceOptions o;
  o.max_batch_records = 20;
  o.session.pid = pid;
  TraceBuilder b(o.session);
  test_support::GenerateLlmTrace(o, &b);
  const std::string path = dir.File(name);
  EXPECT_TRUE(b.WriteFile(path).ok());
  return path;
}

// The first `fraction` of `path`'s bytes as `dir`/`name`: what a store had
// committed of a stream when it failed.
std::string CutCopy(const test_support::TempDir& dir, const std::string& path,
                    double fraction, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  const std::string out = dir.File(name);
  std::ofstream(out, std::ios::binary)
      .write(bytes.data(),
             static_cast<std::streamsize>(bytes.size() * fraction));
  return out;
}

class RunReplaceTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSqlite) {
      store_ = dir_.File("runs.sqlite");
      return;
    }
    std::string error;
    bool missing = false;
    test_support::PgServer* pg = test_support::SharedPgServer(&error, &missing);
    if (pg == nullptr && missing) GTEST_SKIP() << error;
    ASSERT_NE(pg, nullptr) << error;
    std::string name =
        std::string("rr_") +
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) {
      c = std::isalnum(static_cast<unsigned char>(c))
              ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
              : '_';
    }
    store_ = pg->CreateDatabase(name.substr(0, 60), &error);
    ASSERT_FALSE(store_.empty()) << error;
  }

  // The one integer `sql` answers on the store; -1 without a row.
  int64_t Int(const std::string& sql) {
    auto db = OpenDbForRead(store_, store_);
    if (!db.ok()) return -2;
    auto q = (*db)->Prepare(sql);
    if (!q.ok()) return -3;
    StatusOr<bool> row = (*q)->Step();
    if (!row.ok() || !*row) return -1;
    return (*q)->Int(0);
  }

  // The stream cut at 60 %, ingested as the collector's incomplete run
  // (labels night=7); its run id.
  int64_t StoreTwin(const std::string& trace) {
    IngestOptions io;
    io.labels = {{"night", "7"}, {"gpu", "h100"}};
    auto twin = IngestTraceFile(CutCopy(dir_, trace, 0.6, "cut.rft"), store_,
                                io);
    EXPECT_TRUE(twin.ok()) << twin.status().message();
    return twin.ok() ? twin->run_id : 0;
  }

  // Storing `trace` with --recovers-run `twin` is refused as bad input
  // (exit 2), the message holding `says` and the option.
  void ExpectRefused(const std::string& trace, int64_t twin,
                     const std::string& says) {
    IngestOptions io;
    io.recovers_run = twin;
    auto recovered = IngestTraceFiles({trace}, {trace}, store_, io);
    ASSERT_FALSE(recovered.ok()) << twin;
    EXPECT_EQ(recovered.status().code(), StatusCode::kInvalidArgument);
    const std::string& m = recovered.status().message();
    EXPECT_NE(m.find(says), std::string::npos) << m;
    if (says != "being written") {
      EXPECT_NE(m.find("--recovers-run"), std::string::npos) << m;
    }
  }

  test_support::TempDir dir_{"run_replace"};
  std::string store_;
};

// The twin holds part of the session; the whole stream, stored with
// --recovers-run and only one of the labels given again, leaves one
// complete run: all 225 kernels once, both labels.
TEST_P(RunReplaceTest, RecoveredRunReplacesItsTwin) {
  const std::string trace = WriteTrace(dir_, "llm.rft");
  const int64_t twin = StoreTwin(trace);
  ASSERT_GT(twin, 0);
  const int64_t held = Int("SELECT COUNT(*) FROM kernels");
  ASSERT_GT(held, 0);
  ASSERT_LT(held, 225);
  IngestOptions io;
  io.labels = {{"night", "7"}};
  io.recovers_run = twin;
  auto recovered = IngestTraceFiles({trace}, {trace}, store_, io);
  ASSERT_TRUE(recovered.ok()) << recovered.status().message();
  EXPECT_EQ(recovered->replace_note,
            "it replaces incomplete run " + std::to_string(twin));
  EXPECT_EQ(Int("SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM runs WHERE run_id = " +
                std::to_string(twin)),
            0);
  EXPECT_EQ(Int("SELECT complete FROM runs"), 1);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM kernels"), 225);
  EXPECT_EQ(Int("SELECT COUNT(DISTINCT correlation_id) FROM kernels"), 225);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM sessions"), 1);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM run_labels WHERE run_id <> " +
                std::to_string(recovered->run_id)),
            0);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM run_labels WHERE (key = 'night' AND "
                "value = '7') OR (key = 'gpu' AND value = 'h100')"),
            2);
  EXPECT_EQ(Int("SELECT SUM(launches) FROM kernel_aggregates"), 225);
}

// The collector kept two streams (two producers): they are stored as one
// run holding both sessions whole, which replaces the twin; a third stream
// cut short does not stop the files after it from being read.
TEST_P(RunReplaceTest, SeveralStreamsAreOneRun) {
  const std::string a = WriteTrace(dir_, "a.rft");
  const std::string b = WriteTrace(dir_, "b.rft", /*pid=*/777);
  const std::string c =
      CutCopy(dir_, WriteTrace(dir_, "c.rft", /*pid=*/888), 0.5, "c-cut.rft");
  const int64_t twin = StoreTwin(a);
  ASSERT_GT(twin, 0);
  IngestOptions io;
  io.recovers_run = twin;
  auto recovered = IngestTraceFiles({a, c, b}, {a, c, b}, store_, io);
  ASSERT_TRUE(recovered.ok()) << recovered.status().message();
  EXPECT_TRUE(recovered->cut_short);
  EXPECT_EQ(recovered->replace_note,
            "it replaces incomplete run " + std::to_string(twin));
  EXPECT_EQ(Int("SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM sessions"), 3);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM kernels k JOIN sessions s ON "
                "s.session_id = k.session_id WHERE s.pid IN (4242, 777)"),
            450);
}

// A twin whose writer still holds it (its lease, store/run_lease.h) is
// never taken: refused before anything is stored, the twin untouched.
TEST_P(RunReplaceTest, TwinBeingWrittenIsNeverTaken) {
  const std::string trace = WriteTrace(dir_, "llm.rft");
  auto writer = Store::Open(store_);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  RunRow run;
  run.origin = "collect";
  auto live = (*writer)->BeginRun(run);
  ASSERT_TRUE(live.ok()) << live.status().message();
  ExpectRefused(trace, *live, "being written");
  EXPECT_EQ(Int("SELECT COUNT(*) FROM runs"), 1);
}

// A complete run, or one missing from the store, is refused with the fix.
TEST_P(RunReplaceTest, CompleteOrMissingRunsAreRefused) {
  const std::string trace = WriteTrace(dir_, "llm.rft");
  auto done = IngestTraceFile(trace, store_, IngestOptions());
  ASSERT_TRUE(done.ok()) << done.status().message();
  ExpectRefused(trace, done->run_id, "is complete");
  ExpectRefused(trace, 99, "holds no run 99");
  EXPECT_EQ(Int("SELECT COUNT(*) FROM runs"), 1);
}

// A twin holding a session the streams do not (another producer's, stored
// whole before the failure) is kept: replacing it would lose that session.
TEST_P(RunReplaceTest, TwinWithOtherSessionsIsKept) {
  const std::string trace = WriteTrace(dir_, "llm.rft");
  const int64_t twin =
      StoreTwin(WriteTrace(dir_, "other.rft", /*pid=*/777));
  ASSERT_GT(twin, 0);
  IngestOptions io;
  io.recovers_run = twin;
  auto recovered = IngestTraceFiles({trace}, {trace}, store_, io);
  ASSERT_TRUE(recovered.ok()) << recovered.status().message();
  EXPECT_NE(recovered->replace_note.find("is kept: it holds 1 session"),
            std::string::npos)
      << recovered->replace_note;
  EXPECT_EQ(Int("SELECT COUNT(*) FROM runs"), 2);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM runs WHERE run_id = " +
                std::to_string(twin)),
            1);
}

// A stream that holds less than the twin stored (cut shorter than what
// the twin holds) does not replace it: the twin keeps all 225 kernels.
TEST_P(RunReplaceTest, ShorterStreamKeepsTheTwin) {
  const std::string trace = WriteTrace(dir_, "llm.rft");
  IngestOptions whole;
  whole.incomplete_reason = "the collector stopped";
  auto twin = IngestTraceFile(trace, store_, whole);
  ASSERT_TRUE(twin.ok()) << twin.status().message();
  ASSERT_EQ(Int("SELECT complete FROM runs"), 0);
  const std::string cut = CutCopy(dir_, trace, 0.5, "half.rft");
  IngestOptions io;
  io.recovers_run = twin->run_id;
  auto recovered = IngestTraceFiles({cut}, {cut}, store_, io);
  ASSERT_TRUE(recovered.ok()) << recovered.status().message();
  EXPECT_NE(recovered->replace_note.find("the streams hold less of 1"),
            std::string::npos)
      << recovered->replace_note;
  EXPECT_EQ(Int("SELECT COUNT(*) FROM kernels WHERE run_id = " +
                std::to_string(twin->run_id)),
            225);
}

INSTANTIATE_TEST_SUITE_P(Backends, RunReplaceTest,
                         ::testing::Values(Backend::kSqlite,
                                           Backend::kPostgres),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace rooftrace
