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
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "base/cli.h"
#include "base/executable.h"
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
// A signal the terminal generated (Ctrl-C, Ctrl-\\: si_code SI_KERNEL) went
// to the whole foreground process group, the command included: forwarding
// it would deliver it twice. One sent with kill() to rooftrace is passed on.
extern "C" void OnForwardSignal(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  g_forward_signal.store(sig);
}

// Signals whose default action would end rooftrace and orphan the command:
// each is passed on to the command instead (issue 18 items 5, 10).
constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT,
                                     SIGUSR1, SIGUSR2, SIGALRM};
constexpr size_t kNumForwarded = std::size(kForwardedSignals);

// The injection library: $ROOFTRACE_INJECT_LIB, else <bin>/../lib/.
std::string FindInjectLibrary() {
  if (const char* env = getenv("ROOFTRACE_INJECT_LIB"); env && *env) {
    return env;
  }
  const std::string prefix = ExecutablePrefix();
  return prefix.empty() ? "" : prefix + "/lib/librooftrace_inject.so";
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

// What `profile` was asked to do, checked.
struct ProfileOptions {
  std::vector<std::string> cmd;
  std::string out = "rooftrace.sqlite", mode = "trace", kernels, profile;
  // Signed, so that a negative value is refused rather than wrapped.
  int64_t sample_every = 1;
  int top = 15;
  std::string exe, inject;  // resolved by CheckProfileOptions
};

// Checks every option and finds the command and the injection library.
// Errors are one line naming the input and the fix.
Status CheckProfileOptions(ProfileOptions* o) {
  if (o->cmd.empty()) {
    return InvalidArgument(
        "no command given: put the command after --, e.g. rooftrace profile "
        "-o run.sqlite -- python serve.py");
  }
  if (o->mode != "trace" && o->mode != "counters") {
    return InvalidArgument("--mode " + o->mode + ": use trace or counters");
  }
  if (o->sample_every < 1) {
    return InvalidArgument("--sample-every " +
                           std::to_string(o->sample_every) +
                           ": give 1 (every launch) or more");
  }
  if (o->top < 0) {
    return InvalidArgument("--top " + std::to_string(o->top) +
                           ": give the number of kernel rows, 0 or more");
  }
  RT_RETURN_IF_ERROR(CheckKernelRegex(o->kernels));
  struct stat st {};
  const std::string& cmd = o->cmd[0];
  if (cmd.find('/') != std::string::npos && stat(cmd.c_str(), &st) == 0 &&
      S_ISDIR(st.st_mode)) {
    return InvalidArgument(cmd + " is a directory, not a program: give the "
                                 "command to run");
  }
  o->exe = ResolveCommand(cmd);
  if (o->exe.empty()) {
    return InvalidArgument(cmd +
                           ": command not found or not executable: check the "
                           "name and PATH");
  }
  o->inject = FindInjectLibrary();
  if (o->inject.empty() || access(o->inject.c_str(), R_OK) != 0) {
    return InvalidArgument(
        "the injection library was not found at " +
        (o->inject.empty()
             ? std::string("<bin>/../lib/librooftrace_inject.so")
             : o->inject) +
        ": build rooftrace with CUDA (cmake -DROOFTRACE_WITH_CUDA=ON) or set "
        "ROOFTRACE_INJECT_LIB to librooftrace_inject.so");
  }
  return OkStatus();
}

// The child's environment: ours without any rooftrace or injection
// variable, then the injection pointing at our socket and spool folder.
std::vector<std::string> ChildEnvironment(const ProfileOptions& o,
                                          const std::string& socket_path,
                                          const std::string& spool_dir) {
  std::vector<std::string> env;
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
    env.push_back(kv);
  }
  const char* user_preload = getenv("LD_PRELOAD");
  env.push_back("LD_PRELOAD=" + (user_preload && *user_preload
                                     ? std::string(user_preload) + ":" +
                                           o.inject
                                     : o.inject));
  env.push_back("CUDA_INJECTION64_PATH=" + o.inject);
  env.push_back("NVTX_INJECTION64_PATH=" + o.inject);
  env.push_back("ROOFTRACE_SINK=unix:" + socket_path);
  env.push_back("ROOFTRACE_SPOOL_DIR=" + spool_dir);
  env.push_back("ROOFTRACE_MODE=" + o.mode);
  env.push_back("ROOFTRACE_SAMPLE_EVERY=" + std::to_string(o.sample_every));
  if (!o.kernels.empty()) env.push_back("ROOFTRACE_KERNEL_INCLUDE=" + o.kernels);
  return env;
}

// Runs the command with `env`, forwarding kForwardedSignals to it; returns
// its exit code (128 + signal when killed).
int RunChild(const ProfileOptions& o, std::vector<std::string> env) {
  std::vector<std::string> cmd = o.cmd;
  std::vector<char*> envp, args;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& a : cmd) args.push_back(a.data());
  args.push_back(nullptr);
  struct sigaction sa {};
  struct sigaction old[kNumForwarded] = {};
  sa.sa_sigaction = OnForwardSignal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  g_forward_signal.store(0);
  for (size_t i = 0; i < kNumForwarded; ++i) {
    sigaction(kForwardedSignals[i], &sa, &old[i]);
  }
  // Built before fork(): the child of a threaded process may only call
  // async-signal-safe functions.
  const std::string exec_failed =
      "rooftrace profile: cannot execute " + o.exe + "\n";
  const pid_t child = fork();
  if (child == 0) {
    // The command starts with the dispositions rooftrace was given.
    for (size_t i = 0; i < kNumForwarded; ++i) {
      sigaction(kForwardedSignals[i], &old[i], nullptr);
    }
    execve(o.exe.c_str(), args.data(), envp.data());
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
  for (size_t i = 0; i < kNumForwarded; ++i) {
    sigaction(kForwardedSignals[i], &old[i], nullptr);
  }
  return exit_code;
}

// Stores the spool files producers wrote when they could not reach the
// socket. Once a store write has failed they cannot be stored: they are
// moved to `raw_dir` (added to `kept`) instead of being deleted with the
// private folder.
void IngestSpools(const std::string& dir, RunRecorder* rec,
                  const std::string& raw_dir, std::vector<std::string>* kept) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".rft") continue;
    IngestResult result;
    Status s = IngestFileInto(entry.path().string(), rec, &result, false);
    if (!s.ok()) std::cerr << "rooftrace profile: " << s.message() << "\n";
    if (rec->write_error().ok() || raw_dir.empty()) continue;
    const fs::path to = fs::path(raw_dir) / entry.path().filename();
    fs::copy_file(entry.path(), to, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      std::cerr << "rooftrace profile: cannot keep " << entry.path().string()
                << " in " << to.string() << ": " << ec.message() << "\n";
    } else {
      kept->push_back(to.string());
    }
  }
}

// A store write failed: what was lost and how to store it again.
void ReportIncompleteRun(const RunRecorder& rec, const std::string& out,
                         const std::vector<std::string>& kept) {
  const ImportStats st = rec.stats();
  std::cerr << "rooftrace profile: run " << rec.run_id()
            << " INCOMPLETE: " << rec.write_error().message() << "; "
            << st[ImportStat::k_kernels_not_stored] << " kernels and "
            << st[ImportStat::k_nvtx_ranges_not_stored]
            << " NVTX ranges not stored";
  if (!kept.empty()) {
    std::cerr << "; store them again with: rooftrace collect --store " << out
              << " --ingest";
    for (const auto& path : kept) std::cerr << " " << path;
  }
  std::cerr << "\n";
}

// Serves the producers while the command runs, then stores what arrived
// and prints the summary. Returns the exit code. `dir` is the private
// folder (socket, spools), removed here.
int ProfileRun(const ProfileOptions& o, const std::string& dir) {
  const std::string socket_path = dir + "/collector.sock";
  std::string command;
  for (const auto& a : o.cmd) command += (command.empty() ? "" : " ") + a;
  RecorderOptions ro;
  ro.origin = "profile";
  ro.command = command;
  ro.device_profile_path = o.profile;
  auto rec = CreateStoreRecorder(ro, o.out);
  if (!rec.ok()) {
    fs::remove_all(dir);
    std::cerr << "rooftrace profile: " << rec.status().message() << "\n";
    return kExitUsage;
  }
  ServerOptions so;
  so.listen = {"unix:" + socket_path};
  // Raw streams are kept only if the store loses them (a failed write).
  so.raw_dir = o.out + ".raw";
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
    std::cerr << "rooftrace profile: " << s.message() << "\n";
    return kExitUsage;
  }
  // One malloc arena: the server thread is the only one that allocates
  // much, and in a second arena glibc gave windows' memory back less
  // readily (64 producers into a threaded server: peak RSS 206 MiB at 2 M
  // kernels, 284 MiB at 8 M; with one arena 232 and 242 MiB, as `collect`,
  // whose server runs on the main thread).
  mallopt(M_ARENA_MAX, 1);
  std::atomic<bool> stop{false};
  std::thread serve([&] { (void)server.Run(&stop); });
  const int exit_code = RunChild(o, ChildEnvironment(o, socket_path, dir));

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

  std::vector<std::string> kept = server.kept_raw();
  IngestSpools(dir, rec->get(), so.raw_dir, &kept);
  // Producers killed before their stream reached the server left only
  // their live buffers.
  IngestOrphanLiveBuffers(dir, rec->get());
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (Status s = (*rec)->Finish(); !s.ok()) {
    std::cerr << "rooftrace profile: " << s.message() << "\n";
  }
  if (!so.raw_dir.empty()) rmdir(so.raw_dir.c_str());  // only if empty
  std::cerr << "\n";
  if (Status s = PrintRunSummary(o.out, (*rec)->run_id(), std::cerr, o.top);
      !s.ok()) {
    std::cerr << "rooftrace profile: " << s.message() << "\n";
  }
  if ((*rec)->write_error().ok()) return exit_code;
  ReportIncompleteRun(**rec, o.out, kept);
  return exit_code == 0 ? kExitIncomplete : exit_code;
}

}  // namespace

int ProfileMain(int argc, char** argv) {
  ProfileOptions o;
  o.cmd = SplitAtDoubleDash(&argc, argv);
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
      "OUTPUT.raw/ to store again with `rooftrace collect --ingest`. 2 on "
      "bad input.";
  spec.epilog = "Example: rooftrace profile -o run.sqlite -- python serve.py";
  spec.options.add_options()("output,o", po::value(&o.out)->default_value(o.out),
                             "SQLite run store")(
      "mode", po::value(&o.mode)->default_value(o.mode),
      "trace (timing + cuBLAS shapes) or counters (hardware FLOPs/bytes, "
      "kernel replay; NCCL and other communication kernels are not "
      "profiled, their replay can hang: "
      "ROOFTRACE_COUNTERS_COMMUNICATION=profile to profile them)")(
      "kernels", po::value(&o.kernels),
      "only kernels whose mangled or demangled name matches REGEX (POSIX "
      "extended regular expression: |, (), [], .*, ^, $; no \\d)")(
      "sample-every", po::value(&o.sample_every)->default_value(1),
      "record every N-th launch")(
      "device-profile", po::value(&o.profile),
      "calibrated roofs (rooftrace calibrate -o); default: datasheet")(
      "top", po::value(&o.top)->default_value(15), "kernel rows in the table");
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  if (Status s = CheckProfileOptions(&o); !s.ok()) {
    std::cerr << "rooftrace profile: " << s.message() << "\n";
    return kExitUsage;
  }
  // Private directory: the socket and any fallback spool files.
  std::string tmpl = (fs::temp_directory_path() / "rooftrace-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::cerr << "rooftrace profile: cannot create a private directory in "
              << fs::temp_directory_path().string() << ": " << strerror(errno)
              << "\n";
    return kExitUsage;
  }
  return ProfileRun(o, tmpl);
}

}  // namespace rooftrace
