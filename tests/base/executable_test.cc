#include "base/executable.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rooftrace {
namespace {

namespace fs = std::filesystem;

constexpr char kReportEnv[] = "ROOFTRACE_TEST_EXECUTABLE_REPORT";

std::string SelfFromProc() {
  char exe[4096] = {0};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, static_cast<size_t>(n)) : "";
}

// Started as usual, the program's path is /proc/self/exe's.
TEST(ExecutableTest, PathOfAProgramStartedDirectly) {
  EXPECT_EQ(ExecutablePath(), SelfFromProc());
  const fs::path self(SelfFromProc());
  EXPECT_EQ(ExecutablePrefix(), self.parent_path().parent_path().string());
}

// The child half of the next test: writes what it sees when asked to.
TEST(ExecutableTest, ReportsItsPathWhenAsked) {
  const char* report = std::getenv(kReportEnv);
  if (report == nullptr) GTEST_SKIP() << "runs as the child of LoaderStarted";
  std::ofstream(report) << ExecutablePath() << "\n" << SelfFromProc();
}

// Started through the dynamic loader (as scripts/gpu-check.sh starts
// rooftrace), /proc/self/exe names the loader; the program's own path must
// still be found, or lib/ beside bin/ is looked for under the loader's
// folder (the calibrate stage failed so on the GPU machine: "/usr/lib/lib/
// librooftrace_calibrate.so").
TEST(ExecutableTest, PathOfAProgramStartedThroughTheLoader) {
  const std::string loader = "/lib64/ld-linux-x86-64.so.2";
  if (!fs::exists(loader)) GTEST_SKIP() << loader << " absent on this machine";
  const std::string self = SelfFromProc();
  const std::string report =
      (fs::temp_directory_path() /
       ("executable_test_" + std::to_string(getpid()) + ".txt"))
          .string();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv(kReportEnv, report.c_str(), 1);
    execl(loader.c_str(), loader.c_str(), self.c_str(),
          "--gtest_filter=ExecutableTest.ReportsItsPathWhenAsked",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::ifstream in(report);
  std::string seen, proc;
  std::getline(in, seen);
  std::getline(in, proc);
  fs::remove(report);
  EXPECT_NE(proc, self) << "the child did not run through the loader";
  EXPECT_EQ(seen, self);
}

}  // namespace
}  // namespace rooftrace
