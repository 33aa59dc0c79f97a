// Issue 37 item 14: SIGTERM while `collect --ingest` recovered a dead
// producer's live buffer of millions of records waited for the whole of it
// (about 20 s for 3 M records: reading the buffer, re-encoding and decoding
// its records were one uninterrupted call). The stop is now looked at
// throughout the recovery: the command ends within a second with exit 3,
// its run stored incomplete, and the buffer left as it was, so that the
// next ingest stores every record.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

using Clock = std::chrono::steady_clock;
using test_support::SpawnLogged;
using test_support::WaitExitWithin;

std::string Rooftrace() {
  return std::string(ROOFTRACE_BINARY_DIR) + "/bin/rooftrace";
}

// Whether `pid` has `path` mapped (the reader maps a live buffer only while
// it reads it).
bool Maps(pid_t pid, const std::string& path) {
  return testing::ReadFile("/proc/" + std::to_string(pid) + "/maps")
             .find(path) != std::string::npos;
}

// The live buffer a producer left in `dir` when it died with `ranges` NVTX
// ranges in its queue ("" when none was left), and its stat in `*st`.
// With `spool` non-null, the producer also left a spool of 3 ranges whose
// Hello names the buffer: its path.
std::string DeadProducersBuffer(const test_support::TempDir& dir,
                                uint64_t ranges, struct stat* st,
                                std::string* spool = nullptr) {
  const std::string folder = dir.path().string();
  std::vector<std::string> args = {
      std::string(ROOFTRACE_BINARY_DIR) + "/tests/test_producer", "--dead",
      std::to_string(ranges)};
  if (spool != nullptr) args.push_back("--spool");
  const pid_t producer = SpawnLogged(args, folder, dir.File("producer.log"),
                                     {"ROOFTRACE_SPOOL_DIR=" + folder});
  EXPECT_EQ(WaitExitWithin(producer, std::chrono::seconds(60)), 0)
      << testing::ReadFile(dir.File("producer.log"));
  std::string live;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    if (e.path().extension() == ".live") live = e.path().string();
    if (spool != nullptr && e.path().extension() == ".rft") {
      *spool = e.path().string();
    }
  }
  if (!live.empty() && stat(live.c_str(), st) != 0) live.clear();
  return live;
}

// Sends SIGTERM to the `collect` at `pid` and waits for it (30 s at most):
// its exit code; `*ms`: from the signal to its exit, recorded as
// sigterm_to_exit_ms (the figure docs/reliability.md quotes;
// --gtest_output=xml keeps it).
int SigtermAndWait(pid_t pid, int64_t* ms) {
  const auto sent = Clock::now();
  kill(pid, SIGTERM);
  const int code = WaitExitWithin(pid, std::chrono::seconds(30));
  *ms = test_support::MsSince(sent);
  ::testing::Test::RecordProperty("sigterm_to_exit_ms", static_cast<int>(*ms));
  return code;
}

// The buffer at `live` is still there, as `before` saw it.
void ExpectUnchanged(const std::string& live, const struct stat& before) {
  struct stat after {};
  ASSERT_EQ(stat(live.c_str(), &after), 0) << "the buffer is gone";
  EXPECT_EQ(after.st_size, before.st_size);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

// A producer died leaving 500,000 NVTX ranges in its live buffer (143 MB).
// SIGTERM while `collect --ingest` reads it: exit 3 within a second, the
// run incomplete and empty, the buffer unchanged; ingested again, every
// range is stored.
TEST(StoppedRecoveryTest, SigtermDuringRecoveryKeepsTheBuffer) {
  test_support::TempDir dir{"stopped_recovery"};
  const std::string folder = dir.path().string();
  const uint64_t kRanges = 500000;
  struct stat before {};
  const std::string live = DeadProducersBuffer(dir, kRanges, &before);
  ASSERT_FALSE(live.empty());

  const std::string store = dir.File("s.sqlite");
  const std::string log = dir.File("collect.log");
  const pid_t collect = SpawnLogged(
      {Rooftrace(), "collect", "--store", store, "--ingest", live}, folder,
      log);
  bool reading = false;
  for (int i = 0; i < 20000 && !reading; ++i) {
    reading = Maps(collect, live);
    if (!reading) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ASSERT_TRUE(reading) << "the buffer was never read: "
                       << testing::ReadFile(log);
  int64_t took = 0;
  const int code = SigtermAndWait(collect, &took);
  const std::string shown = testing::ReadFile(log);
  EXPECT_EQ(code, 3) << shown;
  EXPECT_LT(took, 1000) << shown;
  EXPECT_NE(shown.find("recovery of its live buffer was interrupted"),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find(live + " is kept"), std::string::npos) << shown;
  ExpectUnchanged(live, before);
  {
    test_support::StoreQuery q(store);
    EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 1);
    EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
    EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges"), 0);
  }

  // Nothing was lost: the next ingest stores every range.
  const pid_t again = SpawnLogged(
      {Rooftrace(), "collect", "--store", store, "--ingest", live}, folder,
      dir.File("again.log"));
  EXPECT_EQ(WaitExitWithin(again, std::chrono::seconds(120)), 0)
      << testing::ReadFile(dir.File("again.log"));
  test_support::StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT COUNT(DISTINCT range_id) FROM nvtx_ranges WHERE "
                  "name = 'dead' AND run_id = 2"),
            static_cast<int64_t>(kRanges));
}

// The same buffer with 1,000,000 ranges, ingested as it is or (`spool`)
// through the spool that names it: the recovery is done and its records
// are being stored (a second or more) when SIGTERM comes. Exit 3 within a
// second, the run incomplete with a part of the ranges, the buffer
// unchanged, and the printed command, run as printed, replaces that run
// with one holding every range once, with the run's label.
void SigtermWhileStored(bool spool) {
  test_support::TempDir dir{spool ? "stopped_spool_store"
                                  : "stopped_recovery_store"};
  const std::string folder = dir.path().string();
  const uint64_t kRanges = 1000000;
  // The spool holds 3 ranges of its own.
  const int64_t all = static_cast<int64_t>(kRanges) + (spool ? 3 : 0);
  struct stat before {};
  std::string spooled;
  const std::string live =
      DeadProducersBuffer(dir, kRanges, &before, spool ? &spooled : nullptr);
  ASSERT_FALSE(live.empty());
  ASSERT_EQ(spooled.empty(), !spool);
  const std::string input = spool ? spooled : live;

  const std::string store = dir.File("s.sqlite");
  const std::string log = dir.File("collect.log");
  const pid_t collect = SpawnLogged({Rooftrace(), "collect", "--store", store,
                                     "--label", "night=7", "--ingest", input},
                                    folder, log);
  // The recovery's summary is printed once its records are in the session,
  // just before they are stored; then the store's first committed ranges.
  bool recovered = false;
  for (int i = 0; i < 60000 && !recovered; ++i) {
    recovered = testing::ReadFile(log).find(
                    "records recovered from its "
                    "live buffer") != std::string::npos;
    if (!recovered) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(recovered) << testing::ReadFile(log);
  for (int i = 0; i < 2000; ++i) {
    if (test_support::StoreQuery(store).Int(
            "SELECT COUNT(*) FROM nvtx_ranges") > 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  int64_t took = 0;
  const int code = SigtermAndWait(collect, &took);
  const std::string shown = testing::ReadFile(log);
  EXPECT_EQ(code, 3) << shown;
  EXPECT_LT(took, 1000) << shown;
  EXPECT_NE(shown.find(live + " is kept"), std::string::npos) << shown;
  ExpectUnchanged(live, before);
  {
    test_support::StoreQuery q(store);
    EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 1);
    EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
    const int64_t part = q.Int("SELECT COUNT(*) FROM nvtx_ranges");
    ::testing::Test::RecordProperty("ranges_stored_before_the_stop",
                                    static_cast<int>(part));
    EXPECT_LT(part, all) << "the store was not stopped";
  }

  // The command printed to store the rest, run as printed (a shell line).
  const std::string lead = "store all of it later with: ";
  const size_t at = shown.find(lead);
  ASSERT_NE(at, std::string::npos) << shown;
  const std::string command =
      shown.substr(at + lead.size(), shown.find('\n', at) - at - lead.size());
  EXPECT_NE(command.find("--recovers-run 1 "), std::string::npos) << command;
  EXPECT_NE(command.find("--label night=7 "), std::string::npos) << command;
  const char* path = getenv("PATH");
  const pid_t again =
      SpawnLogged({"/bin/sh", "-c", command}, folder, dir.File("again.log"),
                  {"PATH=" + std::string(ROOFTRACE_BINARY_DIR) +
                   "/bin:" + (path != nullptr ? path : "/usr/bin:/bin")});
  EXPECT_EQ(WaitExitWithin(again, std::chrono::seconds(120)), 0)
      << testing::ReadFile(dir.File("again.log"));
  test_support::StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(q.Int("SELECT run_id FROM runs"), 2);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM run_labels WHERE run_id = 2 AND "
                  "key = 'night' AND value = '7'"),
            1);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'dead'"), all);
  EXPECT_EQ(q.Int("SELECT COUNT(DISTINCT range_id) FROM nvtx_ranges WHERE "
                  "name = 'dead'"),
            all);
}

TEST(StoppedRecoveryTest, SigtermWhileTheRecoveredRecordsAreStored) {
  SigtermWhileStored(/*spool=*/false);
}

TEST(StoppedRecoveryTest, SigtermWhileASpoolsRecoveredRecordsAreStored) {
  SigtermWhileStored(/*spool=*/true);
}

}  // namespace
}  // namespace rooftrace
