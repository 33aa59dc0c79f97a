// `rooftrace collect`: the standalone collector (many producers, one run per
// server lifetime or per --window, Prometheus metrics) and post-hoc ingest of .rft files (one run per file).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "base/cli.h"
#include "collector/commands.h"
#include "sources/rft/ingest_internal.h"
#include "sources/stream_input.h"
#include "pipeline/recorder.h"
#include "store/db.h"
#include "store/run_replace.h"
#include "store/store.h"
#include "collector/server.h"
#include "collector/server_limits.h"
#include "collector/summary.h"
#include "collector/metrics.h"
#include "collector/window_sink.h"
#include "sources/rft/live_ops.h"

namespace po = boost::program_options;

namespace rooftrace {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_stop_signal{0};  // the signal that set g_stop

// Only sets the flag: the server loop sees it within 50 ms.
extern "C" void OnStopSignal(int signo) {
  g_stop_signal.store(signo);
  g_stop.store(true);
}

// SIGINT/SIGTERM set g_stop: the server drains, an ingest stops reading
// and stores its run as incomplete.
void InstallStopHandler() {
  g_stop.store(false);
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // A PostgreSQL store that stops answering then holds the process no
  // longer than a second (store/db.h SetDbStopCheck).
  SetDbStopCheck([] { return g_stop.load(); });
}

std::string DefaultSocket() {
  const char* tmp = getenv("TMPDIR");
  return std::string("unix:") + (tmp && *tmp ? tmp : "/tmp") +
         "/rooftrace.sock";
}

// A store write failed: say what was lost, where the raw streams are and
// how to store them again. Returns the exit code. `twin`: the run the
// command recovers (--recovers-run), 0 for none: with --window a stream
// spans windows, each a run of its own, so no one run is its twin.
int ReportIncompleteRun(const RunRecorder& rec, const CollectorServer& server,
                        const std::string& store_target, const RunLabels& labels,
                        const Status& finish, int64_t twin) {
  const std::string store = StoreDisplayName(store_target);
  const ImportStats st = rec.stats();
  std::cerr << "rooftrace collect: stopped; run " << rec.run_id()
            << " INCOMPLETE: " << rec.write_error().message() << "; "
            << rec.kernels_stored() << " kernels stored, "
            << st[ImportStat::k_kernels_not_stored] << " kernels not stored ("
            << st[ImportStat::k_nvtx_ranges_not_stored]
            << " NVTX ranges) in " << store << "\n";
  if (!finish.ok()) {
    std::cerr << "rooftrace collect: the run could not be marked incomplete "
                 "either (" << finish.message()
              << "); readers treat its unset complete flag as incomplete\n";
  }
  if (server.kept_raw().empty()) {
    std::cerr << "rooftrace collect: no raw stream could be kept: the lost "
                 "data is gone\n";
  } else {
    std::cerr << "rooftrace collect: " << server.kept_raw().size()
              << " raw stream(s) kept; once the store can be written again "
                 "(room on its disk, its server up), store them again with: "
                 "rooftrace collect --store "
              << ShellWord(store) << KeyValueWords("--label", labels)
              << RecoversRunWords(twin) << " --ingest";
    for (const auto& path : server.kept_raw()) {
      std::cerr << " " << ShellWord(path);
    }
    std::cerr << "\n";
  }
  return kExitIncomplete;
}

// What a listening `collect` was asked to do (Serve's input).
struct CollectOptions {
  std::vector<std::string> listen;
  std::string store, device_profile;
  RunLabels labels;
  bool keep_raw = false;
  // The limits on peers (--hello-timeout-ms and the rest), checked.
  ServerOptions limits;
  std::string token;  // TCP peers must send it; empty: none asked
  bool insecure_tcp = false;  // TCP on loopback without a token
  uint64_t window_ns = 0;     // --window: a run per window; 0: one run
  std::string metrics_listen;  // --metrics-listen; empty: no /metrics
  size_t metrics_top = 50;     // --metrics-top
  StoreKernels store_kernels = StoreKernels::kAll;  // --store-kernels
};

// A token shorter than this is refused: guessing one must stay hopeless
// even at the rate a throttled collector allows.
constexpr size_t kMinTokenChars = 16;

// `token` (from `where`) is long enough; else the error says how to make one.
Status CheckTokenLength(const std::string& token, const std::string& where) {
  if (token.size() >= kMinTokenChars) return OkStatus();
  return InvalidArgument(where + ": the token has " +
                         std::to_string(token.size()) +
                         " characters; use at least " +
                         std::to_string(kMinTokenChars) +
                         " (e.g. the output of `openssl rand -hex 16`)");
}

// The shared token: the first line of --token-file, else ROOFTRACE_TOKEN,
// else none. The file must be a regular file only its owner can read
// (0600), the token at least kMinTokenChars long. Errors name the file
// and the fix.
StatusOr<std::string> ReadToken(const std::string& token_file) {
  if (token_file.empty()) {
    const char* env = getenv("ROOFTRACE_TOKEN");
    return std::string(env != nullptr ? env : "");
  }
  struct stat st {};
  if (stat(token_file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      (st.st_mode & 077) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    return InvalidArgument("--token-file " + token_file +
                           ": other users may read it (mode " + mode +
                           "): chmod 600 " + token_file);
  }
  std::ifstream in(token_file);
  std::string token;
  if (!in || !std::getline(in, token)) {
    return InvalidArgument("--token-file " + token_file +
                           ": cannot read it: give a readable file whose "
                           "first line is the token");
  }
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t')) {
    token.pop_back();
  }
  if (token.empty()) {
    return InvalidArgument("--token-file " + token_file +
                           ": its first line is empty: write the token there");
  }
  RT_RETURN_IF_ERROR(CheckTokenLength(token, "--token-file " + token_file));
  return token;
}

// Stores each --ingest file as a run. Returns the exit code. `names`: the
// inputs as given, by `ingest` index (a stream's copy is named by it).
// `stopped`: non-empty when a stop signal cut the last input while it was
// still arriving (the reason); every file was then resolved before the
// signal and is on this machine, so each is stored whole, the last one as
// an incomplete run. `recovers_run` (--recovers-run; 0: none): the files
// are the raw streams of that incomplete run, stored as one run that
// replaces it (store/run_replace.h).
int IngestAll(const std::vector<std::string>& ingest,
              const std::vector<std::string>& names, const std::string& store,
              const std::string& profile, const RunLabels& labels,
              const std::string& stopped, StoreKernels store_kernels,
              int64_t recovers_run) {
  const std::string shown = StoreDisplayName(store);
  const size_t runs =
      recovers_run != 0 ? std::min<size_t>(1, ingest.size()) : ingest.size();
  for (size_t i = 0; i < runs; ++i) {
    std::string f = names[i];
    if (recovers_run != 0) {
      for (size_t j = 1; j < names.size(); ++j) f += " " + names[j];
    }
    IngestOptions io;
    io.device_profile_path = profile;
    io.labels = labels;
    io.store_kernels = store_kernels;
    io.progress = true;
    io.stop = stopped.empty() ? &g_stop : nullptr;
    io.shown_name = names[i];
    io.recovers_run = recovers_run;
    if (i + 1 == runs) io.incomplete_reason = stopped;
    auto result = recovers_run != 0
                      ? IngestTraceFiles(ingest, names, store, io)
                      : IngestTraceFile(ingest[i], store, io);
    if (!result.ok()) {
      // Bad input (the file, the store) exits 2 with nothing begun or the
      // run marked incomplete; anything else left a run incomplete: 3.
      std::cerr << "rooftrace collect: " << result.status().message() << "\n";
      return ExitCodeForFailedRun(result.status());
    }
    if (!result->warning.empty() &&
        result->warning != io.incomplete_reason) {
      std::cerr << "rooftrace collect: " << result->warning << "\n";
    }
    if (result->interrupted && !io.incomplete_reason.empty()) {
      std::cerr << "rooftrace collect: run " << result->run_id
                << " stored INCOMPLETE (" << result->kernels
                << " kernels): " << io.incomplete_reason << "\n";
      return kExitIncomplete;
    }
    if (result->stopped_storing_recovered) {
      // The run holds a part of the recovered records: storing the files
      // again as a recovery of it replaces it, so none is stored twice.
      std::cerr << "rooftrace collect: run " << result->run_id
                << " stored INCOMPLETE (" << result->kernels
                << " kernels); store all of it later with: rooftrace "
                   "collect --store "
                << ShellWord(shown) << KeyValueWords("--label", labels)
                << RecoversRunWords(result->run_id) << " --ingest";
      for (size_t j = 0; j < names.size(); ++j) {
        if (recovers_run != 0 || j == i) {
          std::cerr << " " << ShellWord(names[j]);
        }
      }
      std::cerr << "\n";
      return kExitIncomplete;
    }
    if (result->interrupted) {
      std::cerr << "rooftrace collect: run " << result->run_id
                << " stored INCOMPLETE (" << result->kernels
                << " kernels); ingest " << f
                << " again into a new store for all of it\n";
      return kExitIncomplete;
    }
    if (result->cut_short) {
      // The warning above says at which byte; the run says it too.
      std::cerr << "rooftrace collect: run " << result->run_id
                << " stored INCOMPLETE (" << result->kernels
                << " kernels read before the break); " << f
                << " was cut short: copy or write it again for all of it\n";
      return kExitIncomplete;
    }
    std::cout << "rooftrace collect: " << f << " -> run " << result->run_id
              << " (" << result->kernels << " kernels) in " << shown
              << (result->replace_note.empty() ? "" : "; ")
              << result->replace_note << "\n";
  }
  return kExitOk;
}

// Listens, then begins the run (a --listen that cannot start leaves no
// run behind), serves until SIGINT/SIGTERM and stores what arrived.
int Serve(const CollectOptions& co) {
  ServerOptions so = co.limits;
  so.listen = co.listen;
  so.token = co.token;
  so.insecure_tcp = co.insecure_tcp;
  // Every stream is written raw as it arrives; without --keep-raw a stream
  // is deleted once stored, so what a failed store write lost is kept.
  so.raw_dir = RawStreamDir(co.store);
  so.delete_stored_raw = !co.keep_raw;
  if (mkdir(so.raw_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::cerr << "rooftrace collect: cannot create " << so.raw_dir << ": "
              << strerror(errno)
              << ": raw streams are not kept (a failed store write would "
                 "lose them)\n";
    so.raw_dir.clear();
  }
  std::unique_ptr<CollectorMetrics> metrics;
  if (!co.metrics_listen.empty()) {
    MetricsOptions mo;
    mo.listen = co.metrics_listen;
    mo.top = co.metrics_top;
    mo.token = co.token;
    auto started = CollectorMetrics::Start(mo);
    if (!started.ok()) {
      if (!so.raw_dir.empty()) rmdir(so.raw_dir.c_str());  // if empty
      std::cerr << "rooftrace collect: " << started.status().message()
                << "\n";
      return kExitUsage;
    }
    metrics = std::move(*started);
    std::cerr << "rooftrace collect: metrics on http://" << metrics->bound()
              << "/metrics (top " << co.metrics_top << " families"
              << (co.token.empty() ? "" : "; basic auth, the token as "
                                          "password")
              << ")\n";
    if (co.window_ns == 0) {
      std::cerr << "rooftrace collect: without --window the counters move "
                   "only when a session's rows are stored (every 64 Ki "
                   "records or at its end) and the per-window gauges only "
                   "at exit: add --window 60s for live figures\n";
    }
  }
  CollectorServer server(nullptr, so);
  Status listening = server.Listen();
  StatusOr<WindowedRecorder> rec = InvalidArgument("no recorder");
  if (listening.ok()) {
    RecorderOptions ro;
    ro.origin = "collect";
    ro.device_profile_path = co.device_profile;
    ro.labels = co.labels;
    // Operators of Python hosts (the ops route) are costed by the importer.
    ro.preparer = LiveOpsPreparer(SourceOptions());
    rec = CreateWindowedRecorder(ro, co.store, co.window_ns > 0,
                                 metrics.get(), co.store_kernels);
  }
  if (!listening.ok() || !rec.ok()) {
    if (!so.raw_dir.empty()) rmdir(so.raw_dir.c_str());  // if empty
    std::cerr << "rooftrace collect: "
              << (listening.ok() ? rec.status() : listening).message() << "\n";
    return kExitUsage;
  }
  if (co.window_ns > 0) {
    server.set_window(co.window_ns / 1000000,
                      WindowEnder(*rec, [](const std::string& line) {
                        std::cerr << "rooftrace collect: " << line << "\n";
                      }));
  }
  RunRecorder* const recorder = rec->recorder.get();
  const WindowSink* const windows = rec->windows;
  server.set_recorder(recorder);
  // CollectMain installed the SIGINT/SIGTERM handler before any ingest.
  for (const auto& b : server.bound()) {
    std::cerr << "rooftrace collect: listening on " << b << ", run "
              << recorder->run_id() << " in " << StoreDisplayName(co.store);
    if (co.window_ns > 0) {
      std::cerr << " (window 0; a new run every "
                << co.window_ns / 1000000 << " ms)";
    }
    std::cerr << "\n";
  }
  Status s = server.Run(&g_stop);
  Status f = recorder->Finish();
  if (!co.keep_raw && !so.raw_dir.empty()) {
    rmdir(so.raw_dir.c_str());  // only if empty
  }
  if (!recorder->write_error().ok()) {
    return ReportIncompleteRun(*recorder, server, co.store, co.labels, f,
                               co.window_ns > 0 ? 0 : recorder->run_id());
  }
  if (!s.ok() || !f.ok()) {
    // The run may miss what came after, or is left with complete unset
    // (readers treat it as incomplete): 3, never 1 ("regression found").
    std::cerr << "rooftrace collect: " << (s.ok() ? f : s).message()
              << "; run " << recorder->run_id() << " is incomplete\n";
    return kExitIncomplete;
  }
  const ImportStats st = recorder->stats();
  if (co.window_ns > 0) {
    const auto& runs = windows->ended_runs();
    std::cerr << "rooftrace collect: stopped; " << runs.size()
              << " windows stored as runs "
              << (runs.empty() ? 0 : runs.front()) << ".."
              << (runs.empty() ? 0 : runs.back()) << " ("
              << windows->idle_windows() << " idle windows, no run): "
              << st[ImportStat::k_sessions] << " sessions, "
              << recorder->kernels_stored() << " kernels stored in "
              << StoreDisplayName(co.store) << "\n";
    return kExitOk;
  }
  std::cerr << "rooftrace collect: stopped; run " << recorder->run_id() << ": "
            << st[ImportStat::k_sessions] << " sessions, "
            << recorder->kernels_stored() << " kernels stored in "
            << StoreDisplayName(co.store) << "\n";
  return kExitOk;
}

}  // namespace

int CollectMain(int argc, char** argv) {
  CommandSpec spec;
  spec.name = "collect";
  spec.usage =
      "rooftrace collect [--listen unix:PATH|tcp:HOST:PORT]... --store S "
      "[--token-file FILE] [--window DURATION] [--metrics-listen ADDR] "
      "[--ingest FILE.rft... [--recovers-run N]]";
  spec.summary =
      "Standalone collector: accepts rooftrace producers (libinject in any "
      "number of processes and ranks) on Unix sockets (mode 0600) and/or TCP "
      "(loopback unless a non-loopback host is named; TCP needs a shared "
      "token, --token-file or ROOFTRACE_TOKEN, unless --insecure-tcp on "
      "loopback), joins and annotates "
      "every kernel against the roofs, and stores one run per server "
      "lifetime (with --window, one per window; --metrics-listen serves "
      "per-family figures to Prometheus). SIGINT/SIGTERM: stop accepting, store everything received, "
      "exit 0. With --ingest and no --listen: stores each file as a run and "
      "exits (SIGINT/SIGTERM: the file being read, or what came of a stream "
      "still arriving, is stored as an incomplete run, exit 3; a stop while "
      "the records recovered from a live buffer are stored keeps the part "
      "stored so far and prints the command that stores all of it). Exit 3 when "
      "the store refused a write (a "
      "full disk): the run is stored as incomplete with the reason, and the "
      "raw streams it lost are kept in STORE.raw/ to ingest again; 2 on bad "
      "input.";
  spec.epilog =
      "Producers: each process to profile gets CUDA_INJECTION64_PATH, "
      "NVTX_INJECTION64_PATH and LD_PRELOAD naming "
      "librooftrace_inject.so, and ROOFTRACE_SINK=unix:PATH (or "
      "tcp:HOST:PORT, or file:PATH for a spool to --ingest later). The ops "
      "route of a Python host (torch operators with shapes, types and "
      "strides; what `profile --ops torch` sets): also "
      "PYTHONPATH=<lib>/python:$PYTHONPATH (the startup hook installed "
      "beside the library), ROOFTRACE_OPS=torch and "
      "ROOFTRACE_INJECT_LIB=<lib>/librooftrace_inject.so; the collector "
      "costs their operators as `import` costs a torch.profiler trace's.\n"
      "Examples:\n"
      "  rooftrace collect --listen unix:/tmp/rt.sock --store runs.sqlite\n"
      "  rooftrace collect --store runs.sqlite --ingest spool/*.rft";
  std::vector<std::string> listen, ingest, label_words;
  std::string store = "runs.sqlite", profile, token_file,
              store_kernels = "all";
  bool keep_raw = false, insecure_tcp = false;
  std::string window, metrics_listen;
  size_t metrics_top = 50;
  int64_t recovers_run = 0;
  ServerLimitFlags limit_flags;
  spec.options.add_options()(
      "listen", po::value(&listen)->composing(),
      "unix:PATH or tcp:HOST:PORT (repeatable; default unix:$TMPDIR/rooftrace.sock "
      "when nothing is ingested)")(
      "store", po::value(&store)->default_value(store), "run store: an SQLite file or a postgresql:// URL (settings: $ROOFTRACE_DB_TIMEOUT_S, the seconds a PostgreSQL server may stay silent before its statement is cancelled, default 300; $ROOFTRACE_SQLITE_CACHE_MIB, SQLite's page cache and so most of a long-running collector's memory, default 64; docs/store.md)")(
      "store-kernels", po::value(&store_kernels)->default_value(store_kernels),
      kStoreKernelsHelp)(
      "ingest", po::value(&ingest)->multitoken()->composing(),
      "trace files (.rft) to store, one run each")(
      "device-profile", po::value(&profile),
      "calibrated roofs (rooftrace calibrate -o); default: datasheet")(
      "label", po::value(&label_words)->composing(),
      "KEY=VALUE stored with the run (repeatable): commit, branch, model, GPU, batch, anything; `rooftrace history --where KEY=VALUE` selects runs by them")(
      "recovers-run", po::value(&recovers_run),
      "with --ingest: the files are the raw streams a collector kept of "
      "this incomplete run, or the live buffer or spool an ingest stopped "
      "while storing its recovered records (the command it printed names "
      "it); they are "
      "stored as one run that replaces it, with its labels, when it holds "
      "nothing more than they do")(
      "keep-raw", po::bool_switch(&keep_raw),
      "keep every raw stream as STORE.raw/run<ID>-<N>.rft (without it only "
      "the streams a failed store write lost are kept)")(
      "token-file", po::value(&token_file),
      "a file whose first line is the shared token TCP producers must send "
      "(their ROOFTRACE_TOKEN or ROOFTRACE_TOKEN_FILE); default: "
      "$ROOFTRACE_TOKEN. Required for TCP, loopback included; the file "
      "must be 0600 and the token at least 16 characters")(
      "insecure-tcp", po::bool_switch(&insecure_tcp),
      "listen on TCP loopback without a token: any user of this machine "
      "can then send data into the run (said on every start)")(
      "window", po::value(&window),
      "cut the collection into consecutive windows of DURATION (500ms, "
      "60s, 5m, 1h), each stored as its own run with the --label labels "
      "plus window=N and window_start=UTC time: history, diff and the "
      "trend page read a server's windows as runs")(
      "metrics-listen", po::value(&metrics_listen),
      "serve Prometheus metrics on http://ADDR/metrics (HOST:PORT or PORT; "
      "loopback unless a host is named, which needs the token, asked as "
      "the basic-auth password)")(
      "metrics-top", po::value(&metrics_top)->default_value(metrics_top),
      "families with series of their own in the metrics; the rest are "
      "family=\"other\"");
  AddServerLimitOptions(&spec.options, &limit_flags);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  const auto labels = ParseKeyValues(label_words, "--label");
  if (!labels.ok()) {
    std::cerr << "rooftrace collect: " << labels.status().message() << "\n";
    return kExitUsage;
  }
  if (vm.count("recovers-run") != 0 &&
      (recovers_run <= 0 || ingest.empty() || !listen.empty())) {
    std::cerr << "rooftrace collect: --recovers-run " << recovers_run
              << ": give the number of the incomplete run the collector "
                 "named, with --ingest and the raw streams it kept (and no "
                 "--listen)\n";
    return kExitUsage;
  }
  uint64_t window_ns = 0;
  if (!window.empty()) {
    auto ns = ParseWindowDuration(window, "--window");
    if (!ns.ok()) {
      std::cerr << "rooftrace collect: " << ns.status().message() << "\n";
      return kExitUsage;
    }
    window_ns = *ns;
  }
  ServerOptions limits;
  if (Status s = ApplyServerLimits(limit_flags, &limits); !s.ok()) {
    std::cerr << "rooftrace collect: " << s.message() << "\n";
    return kExitUsage;
  }
  const StatusOr<StoreKernels> kept = ParseStoreKernels(store_kernels);
  if (!kept.ok()) {
    std::cerr << "rooftrace collect: " << kept.status().message() << "\n";
    return kExitUsage;
  }
  // From here SIGINT/SIGTERM end the command through its own exits (3 and
  // an incomplete run, the stream copies removed), never by the signal.
  InstallStopHandler();
  // "-", a pipe or a FIFO is read once into a private copy, ingested as a
  // file (an SQLite database is refused from them). A stop signal while
  // one is still arriving ends the copy: what came is stored as an
  // incomplete run, and the inputs after it are not read.
  StreamInputs streams;
  const std::vector<std::string> names = ingest;
  std::string stopped;
  for (size_t i = 0; i < ingest.size(); ++i) {
    auto path = streams.Resolve(ingest[i], GzipBudget(), &g_stop);
    if (!streams.stopped().empty()) {
      stopped = std::string(g_stop_signal.load() == SIGINT ? "SIGINT"
                                                           : "SIGTERM") +
                " arrived while " + streams.stopped() +
                " was still arriving: the " +
                std::to_string(streams.stopped_bytes()) +
                " bytes that came before it are stored; send it again for "
                "all of it";
    }
    Status s = path.ok() ? CheckTraceFile(*path) : path.status();
    if (!s.ok()) {
      std::cerr << "rooftrace collect: " << streams.Shown(s.message())
                << "\n";
      if (g_stop.load()) {
        std::cerr << "rooftrace collect: stopped by a signal; nothing of "
                  << names[i] << " is stored\n";
        return kExitIncomplete;
      }
      return kExitUsage;
    }
    ingest[i] = *path;
    if (!stopped.empty()) {
      ingest.resize(i + 1);
      break;
    }
  }
  // Before any ingest, so that a bad --token-file changes nothing.
  StatusOr<std::string> token = ReadToken(token_file);
  const bool tcp = std::any_of(listen.begin(), listen.end(),
                               [](const std::string& l) {
                                 return l.rfind("tcp:", 0) == 0;
                               });
  if (token.ok() && tcp && !token->empty()) {
    // ROOFTRACE_TOKEN is judged only where it is used (the file always).
    Status s = CheckTokenLength(
        *token, token_file.empty() ? "ROOFTRACE_TOKEN" : "--token-file " +
                                                             token_file);
    if (!s.ok()) token = s;
  }
  if (!token.ok()) {
    std::cerr << "rooftrace collect: " << token.status().message() << "\n";
    return kExitUsage;
  }
  if (const int rc = IngestAll(ingest, names, store, profile, *labels,
                               stopped, *kept, recovers_run);
      rc != kExitOk) {
    return rc;
  }
  if (!ingest.empty() && listen.empty()) return kExitOk;
  if (listen.empty()) listen.push_back(DefaultSocket());

  CollectOptions co;
  co.window_ns = window_ns;
  co.metrics_listen = metrics_listen;
  co.metrics_top = metrics_top;
  co.listen = listen;
  co.store = store;
  co.device_profile = profile;
  co.labels = *labels;
  co.keep_raw = keep_raw;
  co.limits = limits;
  co.token = *token;
  co.insecure_tcp = insecure_tcp;
  co.store_kernels = *kept;
  return Serve(co);
}

}  // namespace rooftrace
