// Issue 37 item 6: `history --check` while another process wrote a run
// called that run incomplete (exit 3, "store it again"): 5 of 15 reads on
// PostgreSQL, 2 of 10 on SQLite. A run being written is in progress: left
// out, neither judged nor an error; a run whose writer died is still
// incomplete. The writer is a real `collect --listen`, whose run is open
// from its start to its stop, on SQLite and on a real PostgreSQL server.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/pg_server.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

std::string Binary() {
  return std::string(ROOFTRACE_BINARY_DIR) + "/bin/rooftrace";
}

struct Ran {
  int code = -1;
  std::string out;
};

Ran Rooftrace(const test_support::TempDir& dir, const std::string& tag,
              std::vector<std::string> args) {
  args.insert(args.begin(), Binary());
  const std::string log = dir.File(tag + ".log");
  Ran r;
  r.code = test_support::WaitExitWithin(
      test_support::SpawnLogged(args, dir.path().string(), log),
      std::chrono::seconds(60));
  r.out = testing::ReadFile(log);
  return r;
}

void RunsBeingWrittenAreInProgress(const test_support::TempDir& dir,
                                   const std::string& store) {
  const std::string trace = test_support::WriteLlmTrace(dir);
  for (int i = 0; i < 3; ++i) {
    const Ran in = Rooftrace(dir, "ingest", {"collect", "--ingest", trace,
                                             "--store", store, "--label",
                                             "bench=nightly"});
    ASSERT_EQ(in.code, 0) << in.out;
  }
  // The writer: its run is begun when it listens and ends when it stops.
  const std::string log = dir.File("writer.log");
  const pid_t writer = test_support::SpawnLogged(
      {Binary(), "collect", "--listen", "unix:" + dir.File("rt.sock"),
       "--store", store, "--label", "bench=nightly"},
      dir.path().string(), log);
  for (int i = 0; i < 1000; ++i) {
    if (testing::ReadFile(log).find("listening on") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(testing::ReadFile(log).find("run 4 in"), std::string::npos)
      << testing::ReadFile(log);
  for (const char* format : {"table", "json", "markdown"}) {
    const Ran h = Rooftrace(dir, "history", {"history", store, "--where",
                                             "bench=nightly", "--check",
                                             "--format", format});
    EXPECT_EQ(h.code, 0) << format << ": " << h.out;
    EXPECT_EQ(h.out.find("INCOMPLETE"), std::string::npos) << h.out;
    EXPECT_EQ(h.out.find("store it again"), std::string::npos) << h.out;
    if (std::string(format) == "json") {
      EXPECT_NE(h.out.find("\"incomplete_in_window\":[],\"in_progress\":[4]"),
                std::string::npos)
          << h.out;
    } else {
      EXPECT_NE(h.out.find("run(s) 4 in progress (another process is "
                           "writing them): left out, not judged"),
                std::string::npos)
          << h.out;
    }
  }
  // The writer dies without finishing its run: now it is incomplete.
  kill(writer, SIGKILL);
  EXPECT_EQ(test_support::WaitExitWithin(writer, std::chrono::seconds(10)),
            128 + SIGKILL);
  const Ran after = Rooftrace(dir, "history", {"history", store, "--where",
                                               "bench=nightly", "--check"});
  EXPECT_EQ(after.code, 3) << after.out;
  EXPECT_NE(after.out.find("run(s) 4 in the window are INCOMPLETE"),
            std::string::npos)
      << after.out;
  EXPECT_EQ(after.out.find("in progress"), std::string::npos) << after.out;
}

TEST(RunInProgressTest, RunsBeingWrittenAreInProgressOnSqlite) {
  test_support::TempDir dir{"run_in_progress"};
  RunsBeingWrittenAreInProgress(dir, dir.File("runs.sqlite"));
}

TEST(RunInProgressTest, RunsBeingWrittenAreInProgressOnPostgres) {
  std::string error;
  bool missing = false;
  test_support::PgServer* pg = test_support::SharedPgServer(&error, &missing);
  if (pg == nullptr && missing) GTEST_SKIP() << error;
  ASSERT_NE(pg, nullptr) << error;
  const std::string url = pg->CreateDatabase("in_progress", &error);
  ASSERT_FALSE(url.empty()) << error;
  test_support::TempDir dir{"run_in_progress_pg"};
  RunsBeingWrittenAreInProgress(dir, url);
}

}  // namespace
}  // namespace rooftrace
