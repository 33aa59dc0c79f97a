// Kineto JSON import throughput (prints figures; never a timed test).
// Builds a large plain-JSON trace by replicating the recorded H100 BERT
// trace's events (every event, python_function and cpu_op included) N
// times, each copy shifted past the previous one in time with fresh
// correlation, External and flow ids; then, each in a fresh process so that
// its peak RSS is its own:
//   (0) the file read and parsed (streamed: simdjson On-Demand over
//       chunks of the text) into the source's event vectors, nothing else;
//   (1) the Kineto source into the pipeline (join, annotate, steps), rows
//       discarded;
//   (2) the same into a SQLite store (what `rooftrace import` does).
// Prints wall time, MB/s of JSON, kernels/s, peak RSS and peak RSS over the
// JSON's size. --events N writes instead a synthetic trace of about N
// events: --shape torch (default) as torch.profiler writes a training step
// (BuildSynthetic), --shape lean only launches and kernels (BuildLean).
// For the comparison, time Python's json.load on the file kept
// with --keep.
//   kineto_bench [--copies N | --events N [--shape torch|lean]]
//                [--real TRACE.json.gz] [--keep DIR]
#include <simdjson.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/sink.h"
#include "sources/file_reader.h"
#include "sources/kineto/kineto_source.h"
#include "sources/kineto/kineto_trace.h"
#include "sources/registry.h"
#include "store/store.h"
#include "tests/support/discard_sink.h"

namespace rt = rooftrace;
namespace fs = std::filesystem;
namespace dom = simdjson::dom;

namespace {

constexpr char kRealTrace[] =
    "tracelens/tests/traces/h100/"
    "gaunernst_bert-small-uncased__1016001.redacted.json.gz";

double Seconds(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a)
      .count();
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

using rt::test_support::DiscardSink;

bool IsIdKey(std::string_view k) {
  return k == "correlation" || k == "External id" || k == "id";
}

// One event with its time shifted by `dt` µs and its ids by `did`.
void WriteEvent(dom::object e, double dt, int64_t did, std::string* out) {
  *out += '{';
  bool first = true;
  for (dom::key_value_pair kv : e) {
    if (!first) *out += ", ";
    first = false;
    *out += '"' + std::string(kv.key) + "\": ";
    dom::object args;
    if (kv.key == "ts" && kv.value.is_number()) {
      char buf[64];
      snprintf(buf, sizeof buf, "%.3f", double(kv.value) + dt);
      *out += buf;
    } else if (IsIdKey(kv.key) && kv.value.is_int64()) {
      *out += std::to_string(int64_t(kv.value) + did);
    } else if (kv.key == "args" && !kv.value.get_object().get(args)) {
      WriteEvent(args, 0, did, out);
    } else {
      *out += simdjson::to_string(kv.value);
    }
  }
  *out += '}';
}

// The replicated trace; its kernel count in *kernels.
bool BuildTrace(const std::string& real, const std::string& out_path,
                int copies, uint64_t* kernels) {
  size_t content = 0;
  auto text = rt::ReadWholeFile(real, simdjson::SIMDJSON_PADDING, &content);
  if (!text.ok()) return false;
  dom::parser parser;
  dom::element root;
  if (parser.parse(text->data(), content, false).get(root)) return false;
  dom::array events = root["traceEvents"].get_array().value();
  double t0 = 1e300, t1 = 0;
  uint64_t k = 0;
  for (dom::element e : events) {
    double ts = 0;
    if (!e["ts"].get_double().get(ts)) {
      t0 = std::min(t0, ts), t1 = std::max(t1, ts);
    }
    std::string_view cat;
    k += !e["cat"].get_string().get(cat) && cat == "kernel";
  }
  *kernels = k * copies;
  std::ofstream out(out_path, std::ios::binary);
  out << "{\"schemaVersion\": 1, \"deviceProperties\": "
      << simdjson::to_string(root["deviceProperties"].value())
      << ",\n\"traceEvents\": [\n";
  std::string buf;
  bool first = true;
  for (int c = 0; c < copies; ++c) {
    for (dom::element e : events) {
      dom::object o;
      if (e.get_object().get(o)) continue;
      buf.clear();
      if (!first) buf += ",\n";
      first = false;
      WriteEvent(o, c * (t1 - t0 + 1000.0),
                 static_cast<int64_t>(c) * 10000000, &buf);
      out << buf;
    }
  }
  out << "\n]}\n";
  return out.good();
}


// A synthetic trace of about `events` events laid out as torch.profiler
// writes a training step with record_shapes: per layer a ProfilerStep-like
// user annotation every 500 layers; an aten::linear cpu_op around an
// aten::addmm one (Input Dims, Input type, Input Strides, Concrete
// Inputs), its cudaLaunchKernel, the GEMM kernel and the ac2g flow between
// them; an aten::add with its launch, kernel and flow; a python_function
// and a memory instant event (13 events a layer). Kernel-dense:
// most events are kept by the reader, unlike the BERT trace (mostly
// python_function). Its kernel count in *kernels.
bool BuildSynthetic(const std::string& out_path, uint64_t events,
                    uint64_t* kernels) {
  std::FILE* f = std::fopen(out_path.c_str(), "wb");
  if (f == nullptr) return false;
  std::fputs(
      "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": "
      "\"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912, "
      "\"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": "
      "1024, \"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": "
      "65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": "
      "132}],\n\"traceEvents\": [\n",
      f);
  constexpr int kPerLayer = 13;
  const uint64_t layers = std::max<uint64_t>(1, events / kPerLayer);
  constexpr char kGemm[] =
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroup"
      "size1x1x1_execute_segment_k_off_kernel__5x_cublas";
  constexpr char kAdd[] =
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, "
      "3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
      "at::detail::Array<char*, 3>)";
  const int64_t pid = 19392, tid = 19392;
  double ts = 1419247332972.313;
  uint64_t corr = 8000, ext = 1, ev = 0;
  bool first = true;
  auto sep = [&] {
    if (!first) std::fputs(",\n", f);
    first = false;
  };
  for (uint64_t l = 0; l < layers; ++l) {
    if (l % 500 == 0) {
      sep();
      std::fprintf(f,
                   "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                   "\"ProfilerStep#%llu\", \"pid\": %lld, \"tid\": %lld, "
                   "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": "
                   "%llu, \"Record function id\": 0, \"Ev Idx\": %llu}}",
                   static_cast<unsigned long long>(l / 500),
                   static_cast<long long>(pid), static_cast<long long>(tid),
                   ts, 500 * 60.0 - 1, static_cast<unsigned long long>(ext++),
                   static_cast<unsigned long long>(ev++));
    }
    const int n = 128 + static_cast<int>(l % 7) * 64;
    sep();
    std::fprintf(
        f,
        "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": "
        "\"torch/nn/modules/linear.py(125): forward\", \"pid\": %lld, "
        "\"tid\": %lld, \"ts\": %.3f, \"dur\": 40.5, \"args\": {\"Python "
        "parent id\": %llu, \"Python id\": %llu, \"Ev Idx\": %llu}}",
        static_cast<long long>(pid), static_cast<long long>(tid), ts + 0.5,
        static_cast<unsigned long long>(l), static_cast<unsigned long long>(l + 1),
        static_cast<unsigned long long>(ev++));
    sep();
    std::fprintf(
        f,
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", "
        "\"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, \"dur\": 30.25, "
        "\"args\": {\"External id\": %llu, \"Record function id\": 0, "
        "\"Concrete Inputs\": [\"\", \"\", \"\"], \"Input type\": "
        "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"], \"Input "
        "Strides\": [[%d, 1], [512, 1], [1]], \"Input Dims\": [[%d, 512], "
        "[512, 512], [512]], \"Ev Idx\": %llu}}",
        static_cast<long long>(pid), static_cast<long long>(tid), ts + 1,
        static_cast<unsigned long long>(ext++), 512, n,
        static_cast<unsigned long long>(ev++));
    const uint64_t gemm_ext = ext++;
    sep();
    std::fprintf(
        f,
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", "
        "\"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, \"dur\": 25.125, "
        "\"args\": {\"External id\": %llu, \"Record function id\": 0, "
        "\"Concrete Inputs\": [\"\", \"\", \"\", \"1\", \"1\"], \"Input "
        "type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", "
        "\"Scalar\", \"Scalar\"], \"Input Strides\": [[1], [512, 1], [1, "
        "512], [], []], \"Input Dims\": [[512], [%d, 512], [512, 512], [], "
        "[]], \"Ev Idx\": %llu}}",
        static_cast<long long>(pid), static_cast<long long>(tid), ts + 2,
        static_cast<unsigned long long>(gemm_ext), n,
        static_cast<unsigned long long>(ev++));
    const double k0 = ts + 30;
    for (int k = 0; k < 2; ++k) {
      const uint64_t c = corr++;
      const uint64_t e = k == 0 ? gemm_ext : ext++;
      const double at = ts + (k == 0 ? 10 : 35);
      const double kt = k0 + k * 12;
      if (k == 1) {
        sep();
        std::fprintf(
            f,
            "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", "
            "\"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, \"dur\": 12.5, "
            "\"args\": {\"External id\": %llu, \"Record function id\": 0, "
            "\"Concrete Inputs\": [\"\", \"\", \"1\"], \"Input type\": "
            "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"], \"Input "
            "Strides\": [[512, 1], [512, 1], []], \"Input Dims\": [[%d, 512], "
            "[%d, 512], []], \"Ev Idx\": %llu}}",
            static_cast<long long>(pid), static_cast<long long>(tid),
            at - 2, static_cast<unsigned long long>(e), n, n,
            static_cast<unsigned long long>(ev++));
      }
      sep();
      std::fprintf(
          f,
          "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
          "\"cudaLaunchKernel\", \"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, "
          "\"dur\": 5.25, \"args\": {\"External id\": %llu, \"cbid\": 211, "
          "\"correlation\": %llu}}",
          static_cast<long long>(pid), static_cast<long long>(tid), at,
          static_cast<unsigned long long>(e), static_cast<unsigned long long>(c));
      sep();
      std::fprintf(f,
                   "{\"ph\": \"s\", \"id\": %llu, \"pid\": %lld, \"tid\": "
                   "%lld, \"ts\": %.3f, \"cat\": \"ac2g\", \"name\": "
                   "\"ac2g\"}",
                   static_cast<unsigned long long>(c),
                   static_cast<long long>(pid), static_cast<long long>(tid),
                   at);
      sep();
      std::fprintf(
          f,
          "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, "
          "\"tid\": 7, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External "
          "id\": %llu, \"queued\": 0, \"device\": 0, \"context\": 1, "
          "\"stream\": 7, \"correlation\": %llu, \"registers per thread\": "
          "%d, \"shared memory\": %d, \"blocks per SM\": 1.939394, \"warps "
          "per SM\": 7.757576, \"grid\": [%d, 1, 1], \"block\": [128, 1, 1], "
          "\"est. achieved occupancy %%\": 12}}",
          k == 0 ? kGemm : kAdd, kt, k == 0 ? 8.5 : 2.75,
          static_cast<unsigned long long>(e), static_cast<unsigned long long>(c),
          k == 0 ? 168 : 32, k == 0 ? 200704 : 0, n);
      sep();
      std::fprintf(f,
                   "{\"ph\": \"f\", \"id\": %llu, \"pid\": 0, \"tid\": 7, "
                   "\"ts\": %.3f, \"cat\": \"ac2g\", \"name\": \"ac2g\", "
                   "\"bp\": \"e\"}",
                   static_cast<unsigned long long>(c), kt);
      ++*kernels;
    }
    sep();
    std::fprintf(f,
                 "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": "
                 "\"t\", \"name\": \"[memory]\", \"pid\": %lld, \"tid\": "
                 "%lld, \"ts\": %.3f, \"args\": {\"Total Reserved\": "
                 "121634816, \"Total Allocated\": 91505152, \"Bytes\": "
                 "144384, \"Addr\": 128184607182336, \"Device Id\": 0, "
                 "\"Device Type\": 1, \"Ev Idx\": %llu}}",
                 static_cast<long long>(pid), static_cast<long long>(tid),
                 ts + 50, static_cast<unsigned long long>(ev++));
    ts += 60;
  }
  std::fputs("\n]}\n", f);
  return std::fclose(f) == 0;
}

// The leanest trace the reader joins: `events` / 2 cudaLaunchKernel calls,
// each with its kernel (50 names, correlation, device, stream), nothing
// else: about 155 bytes of JSON an event, every one kept, so the memory
// per byte of JSON is at its highest.
bool BuildLean(const std::string& out_path, uint64_t events,
               uint64_t* kernels) {
  std::FILE* f = std::fopen(out_path.c_str(), "wb");
  if (f == nullptr) return false;
  std::fputs(
      "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": "
      "\"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912, "
      "\"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n"
      "\"traceEvents\": [\n",
      f);
  double ts = 1000000.0;
  for (uint64_t i = 0; i < std::max<uint64_t>(1, events / 2); ++i) {
    const unsigned long long c = 10000 + i;
    std::fprintf(f,
                 "%s{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
                 "\"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": %.3f, "
                 "\"dur\": 3.5, \"args\": {\"correlation\": %llu}},\n"
                 "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                 "\"kernel_%llu\", \"pid\": 0, \"tid\": 7, \"ts\": %.3f, "
                 "\"dur\": 2.125, \"args\": {\"device\": 0, \"stream\": 7, "
                 "\"correlation\": %llu}}",
                 i == 0 ? "" : ",\n", ts, c,
                 static_cast<unsigned long long>(i % 50), ts + 5, c);
    ts += 10;
    ++*kernels;
  }
  std::fputs("\n]}\n", f);
  return std::fclose(f) == 0;
}

}  // namespace

namespace {

// (0), (1) or (2) in this process; prints "seconds cpu_seconds kernels
// peak_rss_kb".
int Run(const std::string& mode, const std::string& file,
        const std::string& store_path) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds();
  uint64_t kernels = 0;
  if (mode == "parse") {
    auto trace = rt::kineto::KinetoTrace::Read(file);
    if (!trace.ok()) {
      fprintf(stderr, "%s\n", trace.status().message().c_str());
      return 1;
    }
    for (const auto& g : (*trace)->gpu) kernels += g.name.size() > 0;
  } else {
    std::unique_ptr<rt::RunSink> sink;
    if (mode == "store") {
      auto store = rt::Store::Open(store_path);
      if (!store.ok()) return 1;
      sink = std::move(*store);
    } else {
      sink = std::make_unique<DiscardSink>();
    }
    const rt::KinetoSource source;
    auto result = rt::ReadSourceInto(source, file, {}, sink.get());
    sink.reset();
    if (!result.ok()) {
      fprintf(stderr, "%s\n", result.status().message().c_str());
      return 1;
    }
    kernels = result->kernels;
  }
  printf("%.6f %.6f %llu %ld\n", Seconds(t0), CpuSeconds() - c0,
         static_cast<unsigned long long>(kernels), PeakRssKb());
  return 0;
}

// Runs this binary on one mode, in a process of its own.
void Child(const char* what, const std::string& mode, const std::string& file,
           const std::string& store_path, double mb) {
  int fds[2];
  if (pipe(fds) != 0) return;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    execl("/proc/self/exe", "kineto_bench", "--run", mode.c_str(),
          file.c_str(), store_path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char buf[256] = {};
  const ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  double s = 0, cpu = 0;
  unsigned long long k = 0;
  long rss = 0;
  if (n <= 0 || sscanf(buf, "%lf %lf %llu %ld", &s, &cpu, &k, &rss) != 4) {
    printf("%-42s failed\n", what);
    return;
  }
  printf("%-42s wall %6.3f s (%6.1f MB/s)  cpu %6.3f s (%6.1f MB/s, "
         "%5.2f M kernels/s)  %7.1f MiB  %4.2fx the JSON\n",
         what, s, mb / s, cpu, mb / cpu, k / cpu / 1e6, rss / 1024.0,
         rss * 1024.0 / (mb * 1e6));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--run") {
    return Run(argv[2], argv[3], argv[4]);
  }
  int copies = 2000;
  uint64_t events = 0;  // > 0: a synthetic trace of this many events
  std::string shape = "torch";  // of the synthetic trace: torch or lean
  std::string real, keep;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--copies") copies = std::atoi(argv[i + 1]);
    if (a == "--real") real = argv[i + 1];
    if (a == "--keep") keep = argv[i + 1];
    if (a == "--events") events = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--shape") shape = argv[i + 1];
  }
  if (real.empty()) {
    real = (fs::path(ROOFTRACE_SOURCE_DIR) / ".." / "shared" / "real-data" /
            kRealTrace).lexically_normal().string();
  }
  const fs::path dir =
      keep.empty() ? fs::temp_directory_path() /
                         ("kineto_bench_" + std::to_string(getpid()))
                   : fs::path(keep);
  fs::create_directories(dir);
  const std::string file = (dir / "trace.json").string();
  uint64_t kernels = 0;
  if (events > 0) {
    if (shape != "torch" && shape != "lean") {
      fprintf(stderr, "kineto_bench: --shape %s: give torch or lean\n",
              shape.c_str());
      return 2;
    }
    if (!(shape == "lean" ? BuildLean(file, events, &kernels)
                          : BuildSynthetic(file, events, &kernels))) {
      fprintf(stderr, "kineto_bench: cannot write %s\n", file.c_str());
      return 1;
    }
  } else if (!BuildTrace(real, file, copies, &kernels)) {
    fprintf(stderr, "kineto_bench: cannot build a trace from %s\n",
            real.c_str());
    return 1;
  }
  const double mb = fs::file_size(file) / 1e6;
  if (events > 0) {
    printf("synthetic %s trace of about %llu events: %.1f MB, %llu kernels\n",
           shape.c_str(), static_cast<unsigned long long>(events), mb,
           static_cast<unsigned long long>(kernels));
  } else {
    printf("%d copies of %s: %.1f MB, %llu kernels\n", copies, real.c_str(),
           mb, static_cast<unsigned long long>(kernels));
  }
  Child("(0) streamed read + parse into events", "parse", file, "", mb);
  Child("(1) source -> pipeline, rows discarded", "source", file, "", mb);
  const std::string store = (dir / "runs.sqlite").string();
  Child("(2) source -> pipeline -> store", "store", file, store, mb);
  if (keep.empty()) fs::remove_all(dir);
  return 0;
}
