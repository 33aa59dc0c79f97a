// `rooftrace profile -- CMD ARGS...`: runs CMD with the injection
// environment, an embedded collector on a private Unix socket, and prints
// the run's kernel table when CMD ends. Returns CMD's exit code.
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <regex.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "base/cli.h"
#include "collector/commands.h"
#include "sources/rft/ingest_internal.h"
#include "pipeline/recorder.h"
#include "store/store.h"
#include "collector/server.h"
#include "collector/summary.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace rooftrace {
namespace {

std::atomic<int> g_forward_signal{0};
extern "C" void OnForwardSignal(int sig) { g_forward_signal.store(sig); }

// The injection library: $ROOFTRACE_INJECT_LIB, else <bin>/../lib/.
std::string FindInjectLibrary() {
  if (const char* env = getenv("ROOFTRACE_INJECT_LIB"); env && *env) {
    return env;
  }
  char exe[PATH_MAX] = {0};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  return (fs::path(std::string(exe, n)).parent_path().parent_path() / "lib" /
          "librooftrace_inject.so")
      .string();
}

// CMD as execvp would find it; empty when it cannot be run.
std::string ResolveCommand(const std::string& cmd) {
  if (cmd.find('/') != std::string::npos) {
    return access(cmd.c_str(), X_OK) == 0 ? cmd : "";
  }
  const char* path = getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    const size_t end = p.find(':', start);
    std::string dir = p.substr(start, end == std::string::npos ? std::string::npos
                                                               : end - start);
    if (dir.empty()) dir = ".";
    const std::string cand = dir + "/" + cmd;
    struct stat st {};
    if (stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(cand.c_str(), X_OK) == 0) {
      return cand;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

// --kernels is compiled by libinject inside the profiled process with
// regcomp(REG_EXTENDED) (libinject/kernel_filter.cc); the same call here
// refuses a pattern it would reject before anything runs.
Status CheckKernelRegex(const std::string& pattern) {
  if (pattern.empty()) return OkStatus();
  regex_t re;
  const int rc = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&re);
    return OkStatus();
  }
  char why[256];
  regerror(rc, &re, why, sizeof why);
  return InvalidArgument("--kernels '" + pattern +
                         "': not a POSIX extended regular expression (" +
                         why + "): fix the pattern (|, (), [], .*, ^, $; no "
                         "\\d)");
}

}  // namespace

int ProfileMain(int argc, char** argv) {
  std::vector<std::string> cmd = SplitAtDoubleDash(&argc, argv);
  CommandSpec spec;
  spec.name = "profile";
  spec.usage = "rooftrace profile [-o run.sqlite] [options] -- CMD ARGS...";
  spec.summary =
      "Runs CMD (never modified) with rooftrace injected, collects every "
      "kernel into a run store, and prints the kernel table: top kernels by "
      "time with FLOPs, bytes, AI, % of roof, bound and phase; phase totals; "
      "drops. Exits with CMD's exit code; when CMD succeeded but the store "
      "refused a write (a full disk), with 3: the run is stored as "
      "incomplete with the reason and its raw streams are kept in "
      "OUTPUT.raw/ to store again with `rooftrace collect --ingest`.";
  spec.epilog = "Example: rooftrace profile -o run.sqlite -- python serve.py";
  std::string out = "rooftrace.sqlite", mode = "trace", kernels, profile;
  // Signed, so that a negative value is refused rather than wrapped.
  int64_t sample_every = 1;
  int top = 15;
  spec.options.add_options()("output,o", po::value(&out)->default_value(out),
                             "SQLite run store")(
      "mode", po::value(&mode)->default_value(mode),
      "trace (timing + cuBLAS shapes) or counters (hardware FLOPs/bytes, "
      "kernel replay; NCCL and other communication kernels are not "
      "profiled, their replay can hang: "
      "ROOFTRACE_COUNTERS_COMMUNICATION=profile to profile them)")(
      "kernels", po::value(&kernels),
      "only kernels whose mangled or demangled name matches REGEX (POSIX "
      "extended regular expression: |, (), [], .*, ^, $; no \\d)")(
      "sample-every", po::value(&sample_every)->default_value(1),
      "record every N-th launch")(
      "device-profile", po::value(&profile),
      "calibrated roofs (rooftrace calibrate -o); default: datasheet")(
      "top", po::value(&top)->default_value(15), "kernel rows in the table");
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  auto usage_error = [](const std::string& msg) {
    std::cerr << "rooftrace profile: " << msg << "\n";
    return kExitUsage;
  };
  if (cmd.empty()) {
    return usage_error(
        "no command given: put the command after --, e.g. rooftrace profile "
        "-o run.sqlite -- python serve.py");
  }
  if (mode != "trace" && mode != "counters") {
    return usage_error("--mode " + mode + ": use trace or counters");
  }
  if (sample_every < 1) {
    return usage_error("--sample-every " + std::to_string(sample_every) +
                       ": give 1 (every launch) or more");
  }
  if (top < 0) {
    return usage_error("--top " + std::to_string(top) +
                       ": give the number of kernel rows, 0 or more");
  }
  if (Status s = CheckKernelRegex(kernels); !s.ok()) {
    return usage_error(s.message());
  }
  struct stat cmd_stat {};
  if (cmd[0].find('/') != std::string::npos &&
      stat(cmd[0].c_str(), &cmd_stat) == 0 && S_ISDIR(cmd_stat.st_mode)) {
    return usage_error(cmd[0] + " is a directory, not a program: give the "
                                "command to run");
  }
  const std::string exe = ResolveCommand(cmd[0]);
  if (exe.empty()) {
    return usage_error(cmd[0] +
                       ": command not found or not executable: check the "
                       "name and PATH");
  }
  const std::string inject = FindInjectLibrary();
  if (inject.empty() || access(inject.c_str(), R_OK) != 0) {
    return usage_error(
        "the injection library was not found at " +
        (inject.empty() ? std::string("<bin>/../lib/librooftrace_inject.so")
                        : inject) +
        ": build rooftrace with CUDA (cmake -DROOFTRACE_WITH_CUDA=ON) or set "
        "ROOFTRACE_INJECT_LIB to librooftrace_inject.so");
  }

  // Private directory: the socket and any fallback spool files.
  std::string tmpl = (fs::temp_directory_path() / "rooftrace-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return usage_error("cannot create a private directory in " +
                       fs::temp_directory_path().string() + ": " +
                       strerror(errno));
  }
  const std::string dir = tmpl;
  const std::string socket_path = dir + "/collector.sock";
  std::string command;
  for (const auto& a : cmd) command += (command.empty() ? "" : " ") + a;

  RecorderOptions ro;
  ro.origin = "profile";
  ro.command = command;
  ro.device_profile_path = profile;
  auto rec = CreateStoreRecorder(ro, out);
  if (!rec.ok()) {
    fs::remove_all(dir);
    return usage_error(rec.status().message());
  }
  ServerOptions so;
  so.listen = {"unix:" + socket_path};
  // Raw streams are kept only if the store loses them (a failed write).
  so.raw_dir = out + ".raw";
  so.delete_stored_raw = true;
  if (mkdir(so.raw_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    so.raw_dir.clear();
  }
  so.log = [](const std::string& line) {
    std::cerr << "rooftrace profile: " << line << "\n";
  };
  CollectorServer server(rec->get(), so);
  if (Status s = server.Listen(); !s.ok()) {
    fs::remove_all(dir);
    return usage_error(s.message());
  }
  // One malloc arena: the server thread is the only one that allocates
  // much, and in a second arena glibc gave windows' memory back less
  // readily (64 producers into a threaded server: peak RSS 206 MiB at 2 M
  // kernels, 284 MiB at 8 M; with one arena 232 and 242 MiB, as `collect`,
  // whose server runs on the main thread).
  mallopt(M_ARENA_MAX, 1);
  std::atomic<bool> stop{false};
  std::thread serve([&] { (void)server.Run(&stop); });

  // Everything the child needs is prepared before fork().
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("LD_PRELOAD=", 0) == 0 ||
        kv.rfind("CUDA_INJECTION64_PATH=", 0) == 0 ||
        kv.rfind("NVTX_INJECTION64_PATH=", 0) == 0 ||
        kv.rfind("ROOFTRACE_SINK=", 0) == 0 ||
        kv.rfind("ROOFTRACE_SPOOL_DIR=", 0) == 0 ||
        kv.rfind("ROOFTRACE_MODE=", 0) == 0 ||
        kv.rfind("ROOFTRACE_KERNEL_INCLUDE=", 0) == 0 ||
        kv.rfind("ROOFTRACE_SAMPLE_EVERY=", 0) == 0) {
      continue;
    }
    env_strings.push_back(kv);
  }
  const char* user_preload = getenv("LD_PRELOAD");
  env_strings.push_back("LD_PRELOAD=" +
                        (user_preload && *user_preload
                             ? std::string(user_preload) + ":" + inject
                             : inject));
  env_strings.push_back("CUDA_INJECTION64_PATH=" + inject);
  env_strings.push_back("NVTX_INJECTION64_PATH=" + inject);
  env_strings.push_back("ROOFTRACE_SINK=unix:" + socket_path);
  env_strings.push_back("ROOFTRACE_SPOOL_DIR=" + dir);
  env_strings.push_back("ROOFTRACE_MODE=" + mode);
  env_strings.push_back("ROOFTRACE_SAMPLE_EVERY=" + std::to_string(sample_every));
  if (!kernels.empty()) env_strings.push_back("ROOFTRACE_KERNEL_INCLUDE=" + kernels);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& a : cmd) args.push_back(a.data());
  args.push_back(nullptr);

  struct sigaction sa {}, old_int {}, old_term {}, old_hup {};
  sa.sa_handler = OnForwardSignal;
  sigemptyset(&sa.sa_mask);
  g_forward_signal.store(0);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);

  // Built before fork(): the child of a threaded process may only call
  // async-signal-safe functions.
  const std::string exec_failed =
      "rooftrace profile: cannot execute " + exe + "\n";
  const pid_t child = fork();
  if (child == 0) {
    execve(exe.c_str(), args.data(), envp.data());
    (void)!write(2, exec_failed.data(), exec_failed.size());
    _exit(127);
  }
  int exit_code = kExitFailure;
  if (child < 0) {
    std::cerr << "rooftrace profile: fork failed: " << strerror(errno) << "\n";
  } else {
    int status = 0;
    for (;;) {
      const pid_t w = waitpid(child, &status, WNOHANG);
      if (w == child) break;
      if (w < 0 && errno != EINTR) break;
      if (const int sig = g_forward_signal.exchange(0)) kill(child, sig);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                      : kExitFailure;
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);

  // Producers flush at exit within ROOFTRACE_EXIT_TIMEOUT_MS (3 s); forked
  // grandchildren may still be streaming. Wait for their connections to end.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  while (server.open_connections() > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop.store(true);
  serve.join();

  // Sessions that could not reach the socket spooled into our directory.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".rft") continue;
    IngestResult result;
    Status s = IngestFileInto(entry.path().string(), rec->get(), &result, false);
    if (!s.ok()) std::cerr << "rooftrace profile: " << s.message() << "\n";
  }
  fs::remove_all(dir, ec);
  if (Status s = (*rec)->Finish(); !s.ok()) {
    std::cerr << "rooftrace profile: " << s.message() << "\n";
  }
  if (!so.raw_dir.empty()) rmdir(so.raw_dir.c_str());  // only if empty
  const Status write_error = (*rec)->write_error();
  std::cerr << "\n";
  if (Status s = PrintRunSummary(out, (*rec)->run_id(), std::cerr, top); !s.ok()) {
    std::cerr << "rooftrace profile: " << s.message() << "\n";
  }
  if (!write_error.ok()) {
    const ImportStats st = (*rec)->stats();
    std::cerr << "rooftrace profile: run " << (*rec)->run_id()
              << " INCOMPLETE: " << write_error.message() << "; "
              << st[ImportStat::k_kernels_not_stored] << " kernels and "
              << st[ImportStat::k_nvtx_ranges_not_stored]
              << " NVTX ranges not stored";
    if (!server.kept_raw().empty()) {
      std::cerr << "; store them again with: rooftrace collect --store "
                << out << " --ingest";
      for (const auto& path : server.kept_raw()) std::cerr << " " << path;
    }
    std::cerr << "\n";
    if (exit_code == 0) return kExitIncomplete;
  }
  return exit_code;
}

}  // namespace rooftrace
