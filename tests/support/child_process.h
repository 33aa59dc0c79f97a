// Running rooftrace's binaries from tests as a user does: a child process
// with its output in a log file, waited for under a deadline (a command
// that hangs fails the test instead of holding it), and the generated LLM
// trace such tests give it.
//
// Header-only; call from the test's main thread (fork).
#ifndef ROOFTRACE_TESTS_SUPPORT_CHILD_PROCESS_H_
#define ROOFTRACE_TESTS_SUPPORT_CHILD_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "sources/rft/testing/trace_builder.h"
#include "tests/support/temp_dir.h"

namespace rooftrace::test_support {

// Starts `args` (a program's path and its words) in `folder`, with `env`
// (NAME=VALUE) added, `input` on standard input and stdout and stderr
// into `log`; its pid.
inline pid_t SpawnLogged(const std::vector<std::string>& args,
                         const std::string& folder, const std::string& log,
                         const std::vector<std::string>& env = {},
                         const std::string& input = "/dev/null") {
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(folder.c_str()) != 0) _exit(126);
    const int in = open(input.c_str(), O_RDONLY);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    for (const std::string& a : args) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// The child's exit code (128 + the signal that ended it), or -1 when it
// still ran after `limit` (it is then killed).
inline int WaitExitWithin(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Milliseconds since `start`.
inline int64_t MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now() - start)
      .count();
}

// The generated LLM trace (225 kernels) as `dir`/llm.rft; its path.
inline std::string WriteLlmTrace(const TempDir& dir) {
  LlmTraceOptions o;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  const std::string path = dir.File("llm.rft");
  if (!b.WriteFile(path).ok()) return "";
  return path;
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_CHILD_PROCESS_H_
