// `rooftrace profile -- CMD ARGS...`: runs CMD with the injection
// environment, an embedded collector on a private Unix socket, and prints
// the run's kernel table when CMD ends, and the processes it left running
// (issue 18 item 4). Returns CMD's exit code.
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <regex.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <set>
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
#include "store/db.h"
#include "store/run_replace.h"
#include "store/store.h"
#include "collector/profile_wait.h"
#include "collector/server.h"
#include "collector/server_limits.h"
#include "collector/summary.h"
#include "collector/window_sink.h"
#include "sources/rft/live_ops.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace rooftrace {
namespace {

std::atomic<int> g_forward_signal{0};
// The last signal asking profile to stop (INT, TERM, HUP, QUIT), however
// sent: once the command has exited, it ends the wait for what the command
// left running. From the terminal (Ctrl-C), the processes in the
// foreground group got it too and may be flushing as they end.
std::atomic<int> g_stop_signal{0};
std::atomic<bool> g_stop_from_terminal{false};
// A signal the terminal generated (Ctrl-C, Ctrl-\\: si_code SI_KERNEL) went
// to the whole foreground process group, the command included: forwarding
// it would deliver it twice. One sent with kill() to rooftrace is passed on.
extern "C" void OnForwardSignal(int sig, siginfo_t* info, void*) {
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
    g_stop_from_terminal.store(info != nullptr && info->si_code == SI_KERNEL);
    g_stop_signal.store(sig);
  }
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
  // The producers' buffer budget (MiB, ROOFTRACE_BUFFER_MB) and whether a
  // full buffer makes the host wait (ROOFTRACE_ON_FULL=wait) or drop.
  int64_t buffer_mb = 32;
  bool lossless = false;
  int top = 15;
  // yes: after the command, wait for every process it left running (and
  // its connection); no: only the grace for producers flushing at exit.
  std::string wait_descendants = "yes";
  // The ops route (--ops): "torch" or "off".
  std::string ops = "off";
  std::string exe, inject;  // resolved by CheckProfileOptions
  std::string ops_hook;     // the startup hook's folder, for --ops torch
  std::vector<std::string> label_words;
  RunLabels labels;  // parsed by CheckProfileOptions
  std::string window;      // --window: a run per window of this length
  uint64_t window_ns = 0;  // parsed by CheckProfileOptions; 0: one run
  std::string store_kernels_word = "all";
  StoreKernels store_kernels = StoreKernels::kAll;  // parsed likewise
  // The embedded collector's limits on its peers, as given and checked.
  ServerLimitFlags limit_flags;
  ServerOptions limits;  // set by CheckProfileOptions
};

// Checks every option and finds the command and the injection library.
// Errors are one line naming the input and the fix.
Status CheckProfileOptions(ProfileOptions* o) {
  if (o->cmd.empty()) {
    return InvalidArgument(
        "no command given: put the command after --, e.g. rooftrace profile "
        "-o run.sqlite -- python serve.py");
  }
  if (o->mode != "trace" && o->mode != "counters" && o->mode != "sampling") {
    return InvalidArgument("--mode " + o->mode +
                           ": use trace, counters or sampling");
  }
  if (o->ops != "torch" && o->ops != "off") {
    return InvalidArgument("--ops " + o->ops +
                           ": use torch (a Python host's torch operators) "
                           "or off");
  }
  RT_ASSIGN_OR_RETURN(o->labels, ParseKeyValues(o->label_words, "--label"));
  if (!o->window.empty()) {
    RT_ASSIGN_OR_RETURN(o->window_ns,
                        ParseWindowDuration(o->window, "--window"));
  }
  RT_ASSIGN_OR_RETURN(o->store_kernels,
                      ParseStoreKernels(o->store_kernels_word));
  if (o->sample_every < 1) {
    return InvalidArgument("--sample-every " +
                           std::to_string(o->sample_every) +
                           ": give 1 (every launch) or more");
  }
  if (o->buffer_mb < 1 || o->buffer_mb > 16384) {
    return InvalidArgument("--buffer-mb " + std::to_string(o->buffer_mb) +
                           ": give 1 to 16384 (MiB per process)");
  }
  if (o->top < 0) {
    return InvalidArgument("--top " + std::to_string(o->top) +
                           ": give the number of kernel rows, 0 or more");
  }
  if (o->wait_descendants != "yes" && o->wait_descendants != "no") {
    return InvalidArgument("--wait-descendants " + o->wait_descendants +
                           ": use yes or no");
  }
  RT_RETURN_IF_ERROR(CheckKernelRegex(o->kernels));
  RT_RETURN_IF_ERROR(ApplyServerLimits(o->limit_flags, &o->limits));
  struct stat st {};
  const std::string& cmd = o->cmd[0];
  if (cmd.find('/') != std::string::npos && stat(cmd.c_str(), &st) == 0 &&
      S_ISDIR(st.st_mode)) {
    return InvalidArgument(cmd + " is a directory, not a program: give the "
                                 "command to run");
  }
  o->exe = ResolveCommand(cmd);
  if (o->exe.empty()) {
    return NotFound(cmd +
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
  if (o->ops == "torch") {
    // The hook is installed beside the library (<lib>/python).
    const size_t slash = o->inject.rfind('/');
    o->ops_hook = (slash == std::string::npos ? std::string(".")
                                              : o->inject.substr(0, slash)) +
                  "/python";
    if (access((o->ops_hook + "/sitecustomize.py").c_str(), R_OK) != 0) {
      return InvalidArgument(
          "--ops torch: the Python startup hook is missing (" + o->ops_hook +
          "/sitecustomize.py, installed beside the injection library): "
          "rebuild rooftrace, or run without --ops");
    }
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
        kv.rfind("ROOFTRACE_SAMPLE_EVERY=", 0) == 0 ||
        kv.rfind("ROOFTRACE_BUFFER_MB=", 0) == 0 ||
        kv.rfind("ROOFTRACE_ON_FULL=", 0) == 0 ||
        kv.rfind("ROOFTRACE_OPS=", 0) == 0 ||
        (!o.ops_hook.empty() && (kv.rfind("PYTHONPATH=", 0) == 0 ||
                                 kv.rfind("ROOFTRACE_INJECT_LIB=", 0) == 0))) {
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
  env.push_back("ROOFTRACE_BUFFER_MB=" + std::to_string(o.buffer_mb));
  env.push_back(std::string("ROOFTRACE_ON_FULL=") +
                (o.lossless ? "wait" : "drop"));
  if (!o.kernels.empty()) env.push_back("ROOFTRACE_KERNEL_INCLUDE=" + o.kernels);
  if (!o.ops_hook.empty()) {
    // The ops route: our sitecustomize first on the path (it runs the
    // host's own next), told where the library it hands operators to is.
    const char* path = getenv("PYTHONPATH");
    env.push_back("PYTHONPATH=" + o.ops_hook +
                  (path && *path ? std::string(":") + path : std::string()));
    env.push_back("ROOFTRACE_OPS=torch");
    env.push_back("ROOFTRACE_INJECT_LIB=" + o.inject);
  }
  return env;
}

// OnForwardSignal on kForwardedSignals for as long as it lives, the
// previous dispositions restored when destroyed. One per profile run, on
// the main thread: it spans the command and the wait for what the command
// left running (so that none of these signals ends profile then).
class ForwardedSignals {
 public:
  ForwardedSignals() {
    struct sigaction sa {};
    sa.sa_sigaction = OnForwardSignal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    g_forward_signal.store(0);
    g_stop_signal.store(0);
    for (size_t i = 0; i < kNumForwarded; ++i) {
      sigaction(kForwardedSignals[i], &sa, &old_[i]);
    }
    // A stop asked while a PostgreSQL store does not answer gives up on
    // it: the raw streams are kept and the run is left incomplete.
    SetDbStopCheck([] { return g_stop_signal.load() != 0; });
  }
  ~ForwardedSignals() {
    SetDbStopCheck(nullptr);
    Restore();
  }
  ForwardedSignals(const ForwardedSignals&) = delete;
  ForwardedSignals& operator=(const ForwardedSignals&) = delete;
  // The dispositions profile was given (async-signal-safe: for a child
  // between fork and exec).
  void Restore() const {
    for (size_t i = 0; i < kNumForwarded; ++i) {
      sigaction(kForwardedSignals[i], &old_[i], nullptr);
    }
  }

 private:
  struct sigaction old_[kNumForwarded] = {};
};

// Runs the command with `env`, forwarding kForwardedSignals to it; returns
// its exit code (128 + signal when killed). Processes it leaves running
// become profile's children (a child subreaper), for WaitForLeftovers.
int RunChild(const ProfileOptions& o, std::vector<std::string> env,
             const ForwardedSignals& signals) {
  std::vector<std::string> cmd = o.cmd;
  std::vector<char*> envp, args;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& a : cmd) args.push_back(a.data());
  args.push_back(nullptr);
  // Orphans of the command (`sh -c 'app &'`) are re-parented to us instead
  // of init: we can tell when the last one ends, and reap it. Not inherited
  // by the command.
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    std::cerr << "rooftrace profile: cannot adopt the processes the command "
                 "leaves running (prctl: "
              << strerror(errno) << "): they are not waited for\n";
  }
  // Built before fork(): the child of a threaded process may only call
  // async-signal-safe functions.
  const std::string exec_failed =
      "rooftrace profile: cannot execute " + o.exe + "\n";
  const pid_t child = fork();
  if (child == 0) {
    // The command starts with the dispositions rooftrace was given.
    signals.Restore();
    execve(o.exe.c_str(), args.data(), envp.data());
    (void)!write(2, exec_failed.data(), exec_failed.size());
    _exit(127);
  }
  if (child < 0) {
    std::cerr << "rooftrace profile: fork failed: " << strerror(errno) << "\n";
    return kExitFailure;
  }
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(child, &status, WNOHANG);
    if (w == child) break;
    if (w < 0 && errno != EINTR) break;
    if (const int sig = g_forward_signal.exchange(0)) kill(child, sig);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status)     ? WEXITSTATUS(status)
         : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                               : kExitFailure;
}

const char* SignalName(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return "a signal";
  }
}

std::string Processes(size_t n) {
  return std::to_string(n) + (n == 1 ? " process" : " processes");
}

// How the wait after the command ended.
struct WaitOutcome {
  int stop_signal = 0;  // the signal that ended the wait early; 0: none
  // Descendants alive, and producers connected, when the wait ended.
  std::vector<ProcessInfo> left_running;
  size_t open_connections = 0;
};

// After the command exits: reaps the processes it left running until none
// remains (`wait_descendants`; they re-parent to us, RunChild) and no
// producer is connected, then returns. Connections of producers that have
// ended get `kGrace` to be read (libinject flushes at exit within
// ROOFTRACE_EXIT_TIMEOUT_MS, 3 s). INT, TERM, HUP or QUIT sent to profile
// ends the wait at once; the processes are the user's and are not
// signalled. Ctrl-C at the terminal reached the foreground processes too:
// if any does not ignore it, they get `kGrace` to end and flush (a second
// Ctrl-C stops at once). Says one line when it waits for processes, one
// when it gives them time to end, none otherwise.
WaitOutcome WaitForLeftovers(const CollectorServer& server,
                             bool wait_descendants) {
  constexpr auto kGrace = std::chrono::seconds(5);
  // Short-lived leftovers (a shell's last pipeline stage) end in this time
  // without a word.
  constexpr auto kQuiet = std::chrono::milliseconds(200);
  using Clock = std::chrono::steady_clock;
  // Signals sent while the command ran were the command's.
  g_stop_signal.store(0);
  const auto started = Clock::now();
  auto grace_end = started + kGrace;
  bool announced = false, had_descendants = false, settling = false;
  auto settle_end = started;
  WaitOutcome out;
  // The server accepts connections made just before the command ended.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (;;) {
    bool descendants = false;
    for (;;) {
      int status = 0;
      const pid_t w = waitpid(-1, &status, WNOHANG);
      if (w > 0) continue;  // one ended; reap the next
      if (w == 0) descendants = true;
      if (w < 0 && errno == EINTR) continue;
      break;  // none ended, or none left (ECHILD)
    }
    if (!wait_descendants) descendants = false;
    const auto now = Clock::now();
    if (had_descendants && !descendants) grace_end = now + kGrace;
    had_descendants = descendants;
    if (!descendants &&
        (server.open_connections() == 0 || now >= grace_end)) {
      break;
    }
    g_forward_signal.store(0);  // there is no command to pass it to
    if (const int sig = g_stop_signal.exchange(0)) {
      out.stop_signal = sig;
      if (settling || !g_stop_from_terminal.load()) break;
      // Those in our (the foreground) group that do not ignore it got it.
      bool any_got_it = false;
      for (const ProcessInfo& p : ListDescendants(getpid())) {
        any_got_it |= p.pgid == getpgrp() && !IgnoresSignal(p.pid, sig);
      }
      if (!any_got_it) break;
      settling = true;
      settle_end = now + kGrace;
      std::cerr << "rooftrace profile: stopping; the processes that got "
                << SignalName(sig) << " have "
                << std::chrono::duration_cast<std::chrono::seconds>(kGrace)
                       .count()
                << " s to end; press it again to stop now" << std::endl;
    }
    if (settling && now >= settle_end) break;
    if (descendants && !announced && now - started >= kQuiet) {
      const std::vector<ProcessInfo> left = ListDescendants(getpid());
      if (!left.empty()) {
        std::cerr << "rooftrace profile: the command exited; waiting for "
                  << Processes(left.size()) << " it left running ("
                  << DescribeProcesses(left)
                  << "); Ctrl-C stops waiting and keeps what was received"
                  << std::endl;
        announced = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  out.left_running = ListDescendants(getpid());
  out.open_connections = server.open_connections();
  return out;
}

// Moves `path` into `to_dir` under its own name (a copy where rename
// cannot: another filesystem). Returns where it now is; "" with a line
// saying why when it could not be moved (it stays where it was).
std::string MoveInto(const std::string& path, const std::string& to_dir) {
  const fs::path to = fs::path(to_dir) / fs::path(path).filename();
  std::error_code ec;
  fs::rename(path, to, ec);
  if (ec) {
    ec.clear();
    fs::copy_file(path, to, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::remove(path, ec);
  }
  if (ec) {
    std::cerr << "rooftrace profile: cannot keep " << path << " in "
              << to.string() << ": " << ec.message() << "\n";
    return "";
  }
  return to.string();
}

// Stores the spool files producers wrote when they could not reach the
// socket, except those still being written (by the process their name
// names, or by one of `live`; added to `being_written`, left alone). Every
// spool read is added to `ingested`, and the live buffers their sessions
// read to `read_buffers`. Once a store write has failed they cannot be
// stored: each spool is copied to `raw_dir` (added to `kept`) with the
// live buffers it read moved beside it (found there when the copy is
// ingested) before the private folder goes; what could not be moved is
// added to `stranded`.
void IngestSpools(const std::string& dir, const std::vector<ProcessInfo>& live,
                  RunRecorder* rec, const std::string& raw_dir,
                  std::vector<std::string>* kept,
                  std::vector<std::string>* being_written,
                  std::vector<std::string>* ingested,
                  std::set<std::string>* read_buffers,
                  std::vector<std::string>* stranded) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".rft") continue;
    if (StillBeingWritten(entry.path().string()) ||
        OpenInAnyOf(entry.path().string(), live)) {
      being_written->push_back(entry.path().string());
      continue;
    }
    ingested->push_back(entry.path().string());
    IngestResult result;
    Status s = IngestFileInto(entry.path().string(), rec, &result, false);
    if (!s.ok()) std::cerr << "rooftrace profile: " << s.message() << "\n";
    read_buffers->insert(result.live_buffers_read.begin(),
                         result.live_buffers_read.end());
    // The live buffers it recovered go with it once what they held is
    // stored (the spool read to its end, no write refused).
    if (rec->write_error().ok() && !result.cut_short) {
      ingested->insert(ingested->end(), result.live_buffers_read.begin(),
                       result.live_buffers_read.end());
    }
    if (rec->write_error().ok()) continue;
    if (raw_dir.empty()) {
      stranded->push_back(entry.path().string());
      continue;
    }
    const std::string copy = MoveInto(entry.path().string(), raw_dir);
    if (copy.empty()) {
      stranded->push_back(entry.path().string());
      continue;
    }
    kept->push_back(copy);
    for (const auto& buffer : result.live_buffers_read) {
      if (MoveInto(buffer, raw_dir).empty()) stranded->push_back(buffer);
    }
  }
}

// A store write failed: what was lost and how to store it again.
void ReportIncompleteRun(const RunRecorder& rec, const std::string& out,
                         const RunLabels& labels,
                         const std::vector<std::string>& kept) {
  const ImportStats st = rec.stats();
  std::cerr << "rooftrace profile: run " << rec.run_id()
            << " INCOMPLETE: " << rec.write_error().message() << "; "
            << st[ImportStat::k_kernels_not_stored] << " kernels and "
            << st[ImportStat::k_nvtx_ranges_not_stored]
            << " NVTX ranges not stored";
  if (!kept.empty()) {
    std::cerr << "; store them again with: rooftrace collect --store "
              << ShellWord(StoreDisplayName(out))
              << KeyValueWords("--label", labels)
              << RecoversRunWords(rec.run_id()) << " --ingest";
    for (const auto& path : kept) std::cerr << " " << ShellWord(path);
  }
  std::cerr << "\n";
}

// Why the run misses records of what the command left running ("" when it
// misses none): profile stopped waiting for live processes, producers
// were still connected, or spools were still being written.
std::string LeftoverReason(const WaitOutcome& w,
                           const std::vector<std::string>& being_written,
                           const std::string& dir) {
  std::string reason;
  auto add = [&](const std::string& part) {
    reason += (reason.empty() ? "" : "; ") + part;
  };
  if (w.stop_signal != 0 && !w.left_running.empty()) {
    add(std::string("profile stopped waiting (") +
        SignalName(w.stop_signal) + ") for " +
        Processes(w.left_running.size()) + " the command left running (" +
        DescribeProcesses(w.left_running) + "): what " +
        (w.left_running.size() == 1 ? "it records" : "they record") +
        " afterwards is not in this run");
  } else if (!w.left_running.empty() && w.open_connections > 0) {
    add("profile did not wait (--wait-descendants=no) for " +
        Processes(w.left_running.size()) + " the command left running (" +
        DescribeProcesses(w.left_running) + ")");
  }
  if (w.open_connections > 0) {
    add(std::to_string(w.open_connections) +
        (w.open_connections == 1
             ? " producer was still connected: its session is"
             : " producers were still connected: their sessions are") +
        " stored up to that point");
  }
  if (!being_written.empty()) {
    add(std::to_string(being_written.size()) +
        (being_written.size() == 1 ? " spool was" : " spools were") +
        " still being written, not stored: kept in " + dir);
  }
  return reason;
}

// The processes the command left running go on: where their spools are
// kept and the command that stores them once they have ended.
void ReportLeftovers(const WaitOutcome& w,
                     const std::vector<std::string>& being_written,
                     const std::string& dir, const std::string& out) {
  std::cerr << "rooftrace profile: ";
  if (!w.left_running.empty()) {
    std::cerr << Processes(w.left_running.size())
              << " the command left running go"
              << (w.left_running.size() == 1 ? "es" : "") << " on ("
              << DescribeProcesses(w.left_running)
              << "); not signalled. Their spools are kept in " << dir;
  } else {
    std::cerr << "Spools still being written are kept in " << dir;
  }
  if (!being_written.empty()) {
    std::cerr << " (being written:";
    for (const auto& p : being_written) std::cerr << " " << p;
    std::cerr << ")";
  }
  std::cerr << "; once they have ended, store them with: rooftrace collect "
               "--store "
            << ShellWord(StoreDisplayName(out)) << " --ingest "
            << ShellWord(dir) << "/*.rft\n";
}

// Serves the producers while the command runs and while what it left
// running goes on, then stores what arrived and prints the summary.
// Returns the exit code. `dir` is the private folder (socket, spools),
// removed here unless a process that may still write a spool there lives.
int ProfileRun(const ProfileOptions& o, const std::string& dir) {
  const std::string socket_path = dir + "/collector.sock";
  std::string command;
  for (const auto& a : o.cmd) command += (command.empty() ? "" : " ") + a;
  RecorderOptions ro;
  ro.origin = "profile";
  ro.command = command;
  ro.device_profile_path = o.profile;
  ro.labels = o.labels;
  // Operators of a Python host (--ops torch) are costed by the importer.
  ro.preparer = LiveOpsPreparer(SourceOptions());
  auto windowed = CreateWindowedRecorder(ro, o.out, o.window_ns > 0, nullptr,
                                         o.store_kernels);
  if (!windowed.ok()) {
    fs::remove_all(dir);
    std::cerr << "rooftrace profile: " << windowed.status().message() << "\n";
    return kExitUsage;
  }
  std::unique_ptr<RunRecorder>* const rec = &windowed->recorder;
  ServerOptions so = o.limits;
  so.listen = {"unix:" + socket_path};
  // Raw streams are kept only if the store loses them (a failed write).
  so.raw_dir = RawStreamDir(o.out);
  so.delete_stored_raw = true;
  so.memory_budget_hint = "raise the budget with profile --memory-budget-mib N";
  if (mkdir(so.raw_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    so.raw_dir.clear();
  }
  so.log = [](const std::string& line) {
    std::cerr << "rooftrace profile: " << line << "\n";
  };
  if (o.window_ns > 0) {
    so.window_ms = o.window_ns / 1000000;
    so.on_window_end = WindowEnder(*windowed, so.log);
  }
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
  WaitOutcome waited;
  int exit_code = 0;
  {
    const ForwardedSignals signals;
    exit_code = RunChild(o, ChildEnvironment(o, socket_path, dir), signals);
    waited = WaitForLeftovers(server, o.wait_descendants == "yes");
  }
  stop.store(true);
  serve.join();

  std::vector<std::string> kept = server.kept_raw();
  std::vector<std::string> being_written, ingested;
  std::set<std::string> read_buffers;
  // Spools and buffers the store refused that could not be moved beside
  // it: the private folder keeps them.
  std::vector<std::string> stranded;
  IngestSpools(dir, waited.left_running, rec->get(), so.raw_dir, &kept,
               &being_written, &ingested, &read_buffers, &stranded);
  // Producers killed before their stream reached the server left only
  // their live buffers (those of processes still running stay). Those the
  // store refused are kept beside it, as the raw streams are.
  for (const auto& buffer : IngestOrphanLiveBuffers(
           dir, rec->get(), server.live_buffers_left(), read_buffers)) {
    const std::string moved =
        so.raw_dir.empty() ? "" : MoveInto(buffer, so.raw_dir);
    if (moved.empty()) stranded.push_back(buffer);
    kept.push_back(moved.empty() ? buffer : moved);
  }
  for (const auto& p : stranded) {
    if (fs::path(p).extension() == ".rft") kept.push_back(p);
  }
  // A process still alive may write a spool here later (its
  // ROOFTRACE_SPOOL_DIR names this folder; a producer cut off from the
  // socket spools what it had not sent): the folder stays, without what
  // was stored. So it does when it holds what the store refused.
  const bool keep_dir = !waited.left_running.empty() ||
                        !being_written.empty() || !stranded.empty();
  std::error_code ec;
  if (keep_dir) {
    for (const auto& p : ingested) {
      if (std::find(stranded.begin(), stranded.end(), p) == stranded.end()) {
        fs::remove(p, ec);
      }
    }
  } else {
    fs::remove_all(dir, ec);
  }
  const std::string leftover_reason =
      LeftoverReason(waited, being_written, dir);
  if (!leftover_reason.empty()) (*rec)->MarkIncomplete(leftover_reason);
  if (Status s = (*rec)->Finish(); !s.ok()) {
    std::cerr << "rooftrace profile: " << s.message() << "\n";
  }
  if (!so.raw_dir.empty()) rmdir(so.raw_dir.c_str());  // only if empty
  std::cerr << "\n";
  // With --window, the summary is the last window's; the line after it
  // names every window's run.
  const std::vector<int64_t>& window_runs = windowed->windows->ended_runs();
  const int64_t shown =
      window_runs.empty() ? (*rec)->run_id() : window_runs.back();
  if (Status s = PrintRunSummary(o.out, shown, std::cerr, o.top,
                                 o.ops == "torch");
      !s.ok()) {
    std::cerr << "rooftrace profile: " << s.message() << "\n";
  }
  if (o.window_ns > 0 && !window_runs.empty()) {
    std::cerr << "rooftrace profile: " << window_runs.size()
              << " windows stored as runs " << window_runs.front() << ".."
              << window_runs.back() << " ("
              << windowed->windows->idle_windows()
              << " idle windows, no run); the summary above is the last\n";
  }
  if (!leftover_reason.empty()) {
    std::cerr << "rooftrace profile: run " << shown
              << " INCOMPLETE: " << leftover_reason << "\n";
  }
  // (What the store refused is named by ReportIncompleteRun below.)
  if (!waited.left_running.empty() || !being_written.empty()) {
    ReportLeftovers(waited, being_written, dir, o.out);
  }
  if (!(*rec)->write_error().ok()) {
    ReportIncompleteRun(**rec, o.out, o.labels, kept);
  }
  if ((*rec)->write_error().ok() && leftover_reason.empty()) return exit_code;
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
      "drops. Processes CMD leaves running (`sh -c 'app &'`) are waited "
      "for, with one line naming them, until they end and their producers "
      "have sent everything; Ctrl-C (or SIGTERM) stops the wait without "
      "signalling them (those a terminal's Ctrl-C reached get 5 s to end): "
      "what was received is stored, the run marked incomplete, and their "
      "spools kept in profile's private folder with the command to store "
      "them once they end. Exits with CMD's exit code; "
      "when CMD succeeded but the run is incomplete (the wait was stopped, "
      "or the store refused a write: a full disk), with 3: the run is "
      "stored as incomplete with the reason; raw streams a failed write "
      "lost are kept in OUTPUT.raw/ to store again with `rooftrace collect "
      "--ingest`. 2 on bad input; 127 when CMD is not found.";
  spec.epilog = "Example: rooftrace profile -o run.sqlite -- python serve.py";
  spec.options.add_options()("output,o", po::value(&o.out)->default_value(o.out),
                             "run store: an SQLite file or a postgresql:// URL (settings: $ROOFTRACE_DB_TIMEOUT_S, the seconds a PostgreSQL server may stay silent before its statement is cancelled, default 300; $ROOFTRACE_SQLITE_CACHE_MIB, SQLite's page cache and so most of a long-running collector's memory, default 64; docs/store.md)")(
      "mode", po::value(&o.mode)->default_value(o.mode),
      "trace (timing + cuBLAS shapes), counters (hardware FLOPs/bytes per "
      "kernel, sampled per signature; NCCL and other communication kernels "
      "are not profiled, their replay can hang: "
      "ROOFTRACE_COUNTERS_COMMUNICATION=profile to profile them) or "
      "sampling (trace + device-wide PM sampling every "
      "ROOFTRACE_SAMPLING_INTERVAL_US, default 20: DRAM bytes given to "
      "kernels by time overlap, per-family totals with their attribution "
      "error; nothing serialized, CUDA graphs and NCCL included)")(
      "kernels", po::value(&o.kernels),
      "only kernels whose mangled or demangled name matches REGEX (POSIX "
      "extended regular expression: |, (), [], .*, ^, $; no \\d)")(
      "sample-every", po::value(&o.sample_every)->default_value(1),
      "record every N-th launch")(
      "buffer-mb", po::value(&o.buffer_mb)->default_value(o.buffer_mb),
      "per profiled process: memory for records waiting to be sent (MiB; "
      "a shared file in the private folder, so they survive the process "
      "ending abruptly). Records that find it full are dropped and counted, "
      "unless --lossless")(
      "lossless", po::bool_switch(&o.lossless),
      "a thread that finds the buffer full waits for room instead of "
      "dropping: nothing is lost, but a host recording faster than "
      "rooftrace sends (a few million records/s per process) is slowed; a "
      "sender stalled for 1 s is given up on (drops counted)")(
      "ops", po::value(&o.ops)->default_value(o.ops),
      "torch: a Python CMD reports every torch operator it runs (name, "
      "input dims, types, strides, scalars, thread, times) through a "
      "startup hook that runs torch's own profiler with CPU activity only "
      "(never a second CUPTI subscriber); each kernel is costed from the "
      "operator that launched it, by the same op models as `import` of a "
      "torch.profiler trace (flops/bytes source: analytic). A CMD that is "
      "not Python, has no torch, or profiles itself runs as without it, "
      "with one line saying why the route is off. Cost: docs/overhead.md. "
      "off: kernels, cuBLAS shapes and NVTX only")(
      "device-profile", po::value(&o.profile),
      "calibrated roofs (rooftrace calibrate -o); default: datasheet")(
      "label", po::value(&o.label_words)->composing(),
      "KEY=VALUE stored with the run (repeatable): commit, branch, model, GPU, batch, anything; `rooftrace history --where KEY=VALUE` selects runs by them")(
      "window", po::value(&o.window),
      "cut the run into consecutive windows of DURATION (500ms, 60s, 5m, "
      "1h), each stored as its own run with the --label labels plus "
      "window=N and window_start=UTC time (as collect --window); the "
      "summary printed is the last window's")(
      "store-kernels",
      po::value(&o.store_kernels_word)->default_value(o.store_kernels_word),
      kStoreKernelsHelp)(
      "top", po::value(&o.top)->default_value(15), "kernel rows in the table")(
      "wait-descendants",
      po::value(&o.wait_descendants)->default_value(o.wait_descendants),
      "yes: once CMD exits, wait for every process it left running; no: "
      "wait only 5 s for producers flushing at exit (for a CMD that starts "
      "a daemon); the run is marked incomplete if a producer is cut off");
  // The embedded collector takes the command's processes on a private
  // socket; these bound what they (or anything else there) may make it
  // hold, as for `collect`.
  AddServerLimitOptions(&spec.options, &o.limit_flags);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  if (Status s = CheckProfileOptions(&o); !s.ok()) {
    std::cerr << "rooftrace profile: " << s.message() << "\n";
    // A command that is not there exits 127, as a shell's would (and as
    // one that fails to execute does); any other bad input 2.
    return s.code() == StatusCode::kNotFound ? kExitCommandNotFound
                                             : kExitUsage;
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
