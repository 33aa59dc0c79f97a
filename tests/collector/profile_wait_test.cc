// What profile waits for after its command (issue 18 item 4): which
// descendants live, and which trace files a live process still writes.
#include "collector/profile_wait.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::TempDir;

void Touch(const std::string& path) { std::ofstream(path) << "x"; }

// A process id that belonged to a process that has ended and been reaped.
pid_t EndedPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

// Names as libinject writes them: spools (hosts may hold dashes), a
// `file:` sink's sibling; names without a process id give none.
TEST(ProfileWaitTest, WriterPidComesFromSpoolAndSiblingNames) {
  EXPECT_EQ(TraceWriterPid("rooftrace-gpu-node-7-4242-1700000000123456789.rft"),
            4242);
  EXPECT_EQ(TraceWriterPid("/tmp/d/rooftrace-h-1-1700000000123456789.rft"), 1);
  EXPECT_EQ(TraceWriterPid("/data/run-4242.rft"), 4242);
  EXPECT_EQ(TraceWriterPid("run-2024-11.rft"), 11);  // read as a sibling
  EXPECT_EQ(TraceWriterPid("run.rft"), std::nullopt);
  EXPECT_EQ(TraceWriterPid("run-0.rft"), std::nullopt);
  EXPECT_EQ(TraceWriterPid("run-4242.txt"), std::nullopt);
  EXPECT_EQ(TraceWriterPid("rooftrace-1700000000123456789.rft"), std::nullopt);
  EXPECT_EQ(TraceWriterPid("rooftrace-h-x-1700000000123456789.rft"),
            std::nullopt);
  EXPECT_EQ(TraceWriterPid("t-99999999999999999999999.rft"), std::nullopt);
  EXPECT_EQ(TraceWriterPid(".rft"), std::nullopt);
}

// A spool named after this (live) process is still being written; one
// named after a process that has ended is not.
TEST(ProfileWaitTest, SpoolOfALiveWriterIsStillBeingWritten) {
  TempDir dir("profile_wait");
  const std::string live = dir.File("rooftrace-h-" + std::to_string(getpid()) +
                                    "-1700000000123456789.rft");
  const std::string ended = dir.File(
      "rooftrace-h-" + std::to_string(EndedPid()) + "-1700000000123456789.rft");
  const std::string sibling =
      dir.File("run-" + std::to_string(getpid()) + ".rft");
  Touch(live);
  Touch(ended);
  Touch(sibling);
  EXPECT_TRUE(StillBeingWritten(live));
  EXPECT_FALSE(StillBeingWritten(ended));
  EXPECT_TRUE(StillBeingWritten(sibling));
  EXPECT_FALSE(StillBeingWritten(dir.File("missing-1.rft")));
}

// The first process of a `file:` sink holds its file's flock: still being
// written while that process lives, not once it has ended.
TEST(ProfileWaitTest, FlockedFileIsStillBeingWritten) {
  TempDir dir("profile_wait");
  const std::string path = dir.File("run.rft");
  const std::string ready = dir.File("ready");
  Touch(path);
  EXPECT_FALSE(StillBeingWritten(path));
  const pid_t writer = fork();
  if (writer == 0) {
    const int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) _exit(1);
    Touch(ready);
    for (;;) pause();
  }
  for (int i = 0; i < 1000 && access(ready.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(access(ready.c_str(), F_OK), 0);
  EXPECT_TRUE(StillBeingWritten(path));
  kill(writer, SIGKILL);
  waitpid(writer, nullptr, 0);
  EXPECT_FALSE(StillBeingWritten(path));
}

// A child holds a spool open under a name whose id means nothing here
// (as from another PID namespace): seen open while it lives, not after.
TEST(ProfileWaitTest, FileHeldOpenByADescendantIsSeen) {
  TempDir dir("profile_wait");
  const std::string path = dir.File(
      "rooftrace-h-" + std::to_string(EndedPid()) + "-1700000000123456789.rft");
  const std::string ready = dir.File("ready");
  Touch(path);
  const pid_t writer = fork();
  if (writer == 0) {
    const int fd = open(path.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0) _exit(1);
    Touch(ready);
    for (;;) pause();
  }
  for (int i = 0; i < 1000 && access(ready.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(access(ready.c_str(), F_OK), 0);
  EXPECT_FALSE(StillBeingWritten(path));  // its name's id has ended
  EXPECT_TRUE(OpenInAnyOf(path, ListDescendants(getpid())));
  EXPECT_FALSE(OpenInAnyOf(ready, ListDescendants(getpid())));
  kill(writer, SIGKILL);
  waitpid(writer, nullptr, 0);
  EXPECT_FALSE(OpenInAnyOf(path, ListDescendants(getpid())));
}

// A child that started a grandchild: both are listed, with their names;
// once they have ended, none is.
TEST(ProfileWaitTest, DescendantsIncludeGrandchildren) {
  EXPECT_TRUE(ListDescendants(getpid()).empty());
  const pid_t child = fork();
  if (child == 0) {
    if (fork() == 0) {
      execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
      _exit(127);
    }
    execlp("sleep", "sleep", "31", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<ProcessInfo> found;
  for (int i = 0; i < 1000; ++i) {
    found = ListDescendants(getpid());
    if (found.size() == 2 && found[0].comm == "sleep" &&
        found[1].comm == "sleep") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].pid, child);  // children before their own children
  EXPECT_EQ(found[0].pgid, getpgrp());
  EXPECT_EQ(found[1].comm, "sleep");
  kill(found[1].pid, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  for (int i = 0; i < 1000 && !ListDescendants(getpid()).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(ListDescendants(getpid()).empty());
}

// A process that ignores SIGUSR1 (as `app &` ignores SIGINT) is seen to;
// one that does not ignore SIGUSR2 is not.
TEST(ProfileWaitTest, IgnoredSignalsAreRead) {
  TempDir dir("profile_wait");
  const std::string ready = dir.File("ready");
  const pid_t child = fork();
  if (child == 0) {
    signal(SIGUSR1, SIG_IGN);
    Touch(ready);
    for (;;) pause();
  }
  for (int i = 0; i < 1000 && access(ready.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(IgnoresSignal(child, SIGUSR1));
  EXPECT_FALSE(IgnoresSignal(child, SIGUSR2));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(IgnoresSignal(child, SIGUSR1));  // gone
}

// Five processes are named, the rest counted.
TEST(ProfileWaitTest, DescriptionNamesFiveThenCounts) {
  std::vector<ProcessInfo> ps;
  for (pid_t pid = 100; pid < 107; ++pid) ps.push_back({pid, 1, "app"});
  EXPECT_EQ(DescribeProcesses({ps[0]}), "pid 100 app");
  EXPECT_EQ(DescribeProcesses({}), "");
  EXPECT_EQ(DescribeProcesses(ps),
            "pid 100 app, pid 101 app, pid 102 app, pid 103 app, pid 104 "
            "app, and 2 more");
}

}  // namespace
}  // namespace rooftrace
