// json_bench: what reading JSON costs through json::Value (json::Parse:
// simdjson's DOM, then the Value tree) against the parser it replaced and
// against simdjson alone (DOM; On-Demand walking every value; On-Demand
// reading only what an importer needs). The importers read hundreds of MB
// of Kineto JSON with simdjson directly; this says what the Value layer
// would add. Prints figures; never a timed test.
//
//   json_bench [--mb N] [--runs R] [--dir DIR]
//
// Large document: N MB (default 100) of Chrome-trace events laid out as
// Kineto writes them (kernels with launch geometry, runtime calls, CPU ops
// with input shapes, flow events), indented, written to DIR (default the
// temporary folder) and removed at the end. Each step runs in its own child
// process, so heaps do not mix and the peak RSS is the step's own: the child
// reads the file, then parses it R times (default 3) and reports the best
// wall and the best CPU time (the process's own; steadier on a shared
// machine). MB/s = file bytes / 2^20 / best seconds. The file's bytes are
// part of every child's RSS; the "read the file" line is that floor.
// Counting the values (to check every parser saw the same document) and
// destroying a Value tree are not timed; the latter is printed apart.
//
// Every step runs twice: cold, with a fresh parser in fresh memory per run,
// as one import of one file; and warm, the same with malloc told to keep
// its pages (no mmap, no trimming), so runs after the first reuse memory
// already touched. Touching new memory is the largest cost on some
// machines (the "faults" column); warm figures leave it out.
//
// Small documents: what json::Parse is for, a 1.2 KB device profile parsed
// 20000 times in this process (microseconds per parse, CPU).
#include <malloc.h>
#include <simdjson.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>

#include "base/json.h"
#include "bench/base/legacy_json.h"

namespace {

using Clock = std::chrono::steady_clock;
using rooftrace::json::Value;

// ------------------------------------------------------------ the document

// Deterministic numbers, so every run of the bench parses the same bytes.
class Lcg {
 public:
  uint64_t Next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return state_ >> 17;
  }
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_ = 42;
};

constexpr const char* kKernelNames[] = {
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}"
    "::operator()() const::{lambda(c10::BFloat16)#1}, "
    "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl"
    "(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::"
    "operator()() const::{lambda()#2}::operator()() const::"
    "{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize"
    "1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, "
    "false, cutlass::bfloat16_t>, false, true, false, false, true, true, "
    "false>(Flash_fwd_params)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, "
    "c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)"
    "::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
};
constexpr const char* kCpuOps[] = {"aten::mm",         "aten::addmm",
                                   "aten::gelu",       "aten::softmax",
                                   "aten::layer_norm", "aten::copy_"};

void AppendF(std::string* out, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
void AppendF(std::string* out, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  out->append(buf, static_cast<size_t>(n));
}

// One forward-step-like group: a CPU op, its runtime call, the flow pair and
// the kernel it launched. ~1.5 KB.
void AppendGroup(Lcg* rng, uint64_t corr, double* ts, std::string* out) {
  const char* op = kCpuOps[rng->Below(std::size(kCpuOps))];
  const char* kernel = kKernelNames[rng->Below(std::size(kKernelNames))];
  const uint64_t m = 1 + rng->Below(8192), k = 4096, n = 4096;
  const double cpu_ts = *ts, cpu_dur = 5 + rng->Below(20000) / 1000.0;
  AppendF(
      out,
      "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", "
      "\"pid\": 3187, \"tid\": 3187,\n    \"ts\": %.3f, \"dur\": %.3f,\n"
      "    \"args\": {\n      \"External id\": %llu,\"Record function id\": "
      "0, \"Ev Idx\": %llu, \"Sequence number\": %llu, \"Fwd thread id\": "
      "0,\n      \"Input Dims\": [[%llu, %llu], [%llu, %llu], []], "
      "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"\"]\n"
      "    }\n  },\n",
      op, cpu_ts, cpu_dur, static_cast<unsigned long long>(corr),
      static_cast<unsigned long long>(corr * 3),
      static_cast<unsigned long long>(corr / 2),
      static_cast<unsigned long long>(m), static_cast<unsigned long long>(k),
      static_cast<unsigned long long>(k), static_cast<unsigned long long>(n));
  const double rt_ts = cpu_ts + 1.25;
  AppendF(out,
          "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
          "\"cudaLaunchKernel\", \"pid\": 3187, \"tid\": 3187,\n    \"ts\": "
          "%.3f, \"dur\": %.3f,\n    \"args\": {\n      \"External id\": %llu,"
          "\n      \"cbid\": 211, \"correlation\": %llu\n    }\n  },\n",
          rt_ts, 3 + rng->Below(4000) / 1000.0,
          static_cast<unsigned long long>(corr),
          static_cast<unsigned long long>(corr));
  const double k_ts = rt_ts + 8 + rng->Below(100000) / 1000.0;
  AppendF(out,
          "  {\n    \"ph\": \"s\", \"id\": %llu, \"pid\": 3187, \"tid\": 3187, "
          "\"ts\": %.3f,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n",
          static_cast<unsigned long long>(corr), rt_ts);
  AppendF(out,
          "  {\n    \"ph\": \"f\", \"id\": %llu, \"pid\": 0, \"tid\": 7, "
          "\"ts\": %.3f,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": "
          "\"e\"\n  },\n",
          static_cast<unsigned long long>(corr), k_ts);
  AppendF(
      out,
      "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", "
      "\"pid\": 0, \"tid\": 7,\n    \"ts\": %.3f, \"dur\": %.3f,\n    "
      "\"args\": {\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
      "      \"stream\": 7, \"correlation\": %llu,\n      \"registers per "
      "thread\": %llu,\n      \"shared memory\": %llu,\n      \"blocks per "
      "SM\": %.6f,\n      \"warps per SM\": %.6f,\n      \"grid\": [%llu, 1, "
      "1],\n      \"block\": [256, 1, 1],\n      \"est. achieved occupancy "
      "%%\": %llu\n    }\n  },\n",
      kernel, k_ts, 2 + rng->Below(500000) / 1000.0,
      static_cast<unsigned long long>(corr),
      static_cast<unsigned long long>(32 + rng->Below(224)),
      static_cast<unsigned long long>(rng->Below(228) * 1024),
      rng->Below(1000000) / 1e5, rng->Below(1000000) / 1e5,
      static_cast<unsigned long long>(1 + rng->Below(1024)),
      static_cast<unsigned long long>(rng->Below(100)));
  *ts = k_ts + 1;
}

// Returns the number of trace events written.
uint64_t WriteDocument(const std::string& path, size_t target_bytes) {
  Lcg rng;
  std::string doc;
  doc.reserve(target_bytes + 4096);
  doc +=
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      "
      "\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": "
      "85045149696,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      "
      "\"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
      "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n      "
      "\"sharedMemPerBlock\": 49152, \"numSms\": 132\n    }\n  ],\n  "
      "\"traceEvents\": [\n";
  uint64_t corr = 1, events = 0;
  double ts = 5385706651447.614;
  while (doc.size() < target_bytes) {
    AppendGroup(&rng, corr++, &ts, &doc);
    events += 5;
  }
  doc +=
      "  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
      "    \"pid\": \"\", \"tid\": \"\", \"ts\": 5385706651447.614\n  }\n],\n"
      "  \"traceName\": \"bench.pt.trace.json\"\n}\n";
  ++events;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(doc.data(), static_cast<std::streamsize>(doc.size()));
  if (!out) {
    fprintf(stderr, "json_bench: cannot write %s\n", path.c_str());
    std::exit(2);
  }
  return events;
}

// ------------------------------------------------------------ measuring

// Wall and CPU clocks together. The machine the bench runs on may be
// shared, so both are reported: CPU seconds (this process only) are the
// steadier figure under load, wall seconds the one a user waits for.
struct Stamp {
  double wall_s = 0;
  double cpu_s = 0;

  static Stamp Now() {
    timespec cpu{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    return {
        std::chrono::duration<double>(Clock::now().time_since_epoch()).count(),
        static_cast<double>(cpu.tv_sec) + cpu.tv_nsec * 1e-9};
  }
  Stamp operator-(const Stamp& o) const {
    return {wall_s - o.wall_s, cpu_s - o.cpu_s};
  }
  Stamp& operator+=(const Stamp& o) {
    wall_s += o.wall_s;
    cpu_s += o.cpu_s;
    return *this;
  }
};

// What one parse reports besides success.
struct StepOut {
  uint64_t check = 0;  // what the step counted, to compare steps
  Stamp excluded;      // time inside the step that is not parsing
  double free_s = 0;   // of which: destroying a json::Value tree (wall)
};

// What a child sends back through its pipe.
struct Report {
  double best_wall_s;
  double best_cpu_s;
  double free_s;
  uint64_t check;
  int ok;
};

struct Result {
  Report report{};
  long max_rss_kb = 0;
  long minor_faults = 0;  // the whole child: reading the file and every run
  bool ok = false;
};

simdjson::padded_string ReadFile(const std::string& path) {
  auto loaded = simdjson::padded_string::load(path);
  if (loaded.error()) {
    fprintf(stderr, "json_bench: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return std::move(loaded).value_unsafe();
}

// One step: parses `text` once, fills *out; false on failure. Timed `runs`
// times in a child process.
using Step = bool (*)(const simdjson::padded_string& text, StepOut* out);

// warm: malloc keeps all memory in its heap (no mmap, no trimming), so
// after the first run every run reuses pages it already touched.
Result InChild(const std::string& path, int runs, const Step& run, bool warm) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (warm) {
      mallopt(M_MMAP_MAX, 0);
      mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
    }
    const simdjson::padded_string text = ReadFile(path);
    Report r{1e30, 1e30, 0, 0, 1};
    for (int i = 0; i < runs && r.ok; ++i) {
      StepOut out;
      const Stamp t0 = Stamp::Now();
      r.ok = run(text, &out) ? 1 : 0;
      const Stamp t = Stamp::Now() - t0 - out.excluded;
      r.check = out.check;
      if (t.wall_s < r.best_wall_s) {
        r.best_wall_s = t.wall_s;
        r.free_s = out.free_s;
      }
      if (t.cpu_s < r.best_cpu_s) r.best_cpu_s = t.cpu_s;
    }
    if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  Report r{};
  const bool got = read(fds[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  Result out;
  out.ok = got && r.ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  out.report = r;
  out.max_rss_kb = ru.ru_maxrss;
  out.minor_faults = ru.ru_minflt;
  return out;
}

// ------------------------------------------------------------ the steps

uint64_t CountValues(const Value& v) {
  uint64_t n = 1;
  if (v.is_array()) {
    for (const Value& e : v.as_array()) n += CountValues(e);
  } else if (v.is_object()) {
    for (const auto& m : v.as_object()) n += CountValues(m.second);
  }
  return n;
}

uint64_t CountValues(simdjson::dom::element e) {
  uint64_t n = 1;
  // Copies first: a range-for over value_unsafe() of a temporary result
  // would walk a destroyed object.
  if (e.is_array()) {
    const simdjson::dom::array a = e.get_array().value_unsafe();
    for (simdjson::dom::element c : a) n += CountValues(c);
  } else if (e.is_object()) {
    const simdjson::dom::object o = e.get_object().value_unsafe();
    for (auto kv : o) n += CountValues(kv.value);
  }
  return n;
}

// Counts the tree, then destroys it; neither is parsing.
void CountAndFree(Value* v, StepOut* out) {
  const Stamp t0 = Stamp::Now();
  out->check = CountValues(*v);
  const Stamp t1 = Stamp::Now();
  *v = Value();
  out->free_s = (Stamp::Now() - t1).wall_s;
  out->excluded += Stamp::Now() - t0;
}

bool LegacyStep(const simdjson::padded_string& text, StepOut* out) {
  auto v = rooftrace::bench::LegacyParse(std::string_view(text), "bench.json");
  if (!v.ok()) return false;
  CountAndFree(&*v, out);
  return true;
}

bool ValueStep(const simdjson::padded_string& text, StepOut* out) {
  auto v = rooftrace::json::Parse(std::string_view(text), "bench.json");
  if (!v.ok()) {
    fprintf(stderr, "%s\n", v.status().message().c_str());
    return false;
  }
  CountAndFree(&*v, out);
  return true;
}

bool DomStep(const simdjson::padded_string& text, StepOut* out) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text).get(root)) return false;
  const Stamp t0 = Stamp::Now();
  out->check = CountValues(root);
  out->excluded += Stamp::Now() - t0;
  return true;
}

// Visits every value; numbers are read as doubles and strings unescaped, as
// building a Value would.
simdjson::error_code Walk(simdjson::ondemand::value v, uint64_t* n) {
  using simdjson::ondemand::json_type;
  ++*n;
  json_type t;
  if (auto e = v.type().get(t)) return e;
  switch (t) {
    case json_type::array: {
      simdjson::ondemand::array a;
      if (auto e = v.get_array().get(a)) return e;
      for (auto el : a) {
        simdjson::ondemand::value ev;
        if (auto e = el.get(ev)) return e;
        if (auto e = Walk(ev, n)) return e;
      }
      return simdjson::SUCCESS;
    }
    case json_type::object: {
      simdjson::ondemand::object o;
      if (auto e = v.get_object().get(o)) return e;
      for (auto field : o) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) return e;
        simdjson::ondemand::value fv;
        if (auto e = field.value().get(fv)) return e;
        if (auto e = Walk(fv, n)) return e;
      }
      return simdjson::SUCCESS;
    }
    case json_type::number: {
      double d;
      return v.get_double().get(d);
    }
    case json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case json_type::boolean: {
      bool b;
      return v.get_bool().get(b);
    }
    case json_type::null: {
      bool is_null;
      if (auto e = v.is_null().get(is_null)) return e;
      return is_null ? simdjson::SUCCESS : simdjson::INCORRECT_TYPE;
    }
  }
  return simdjson::UNEXPECTED_ERROR;
}

bool OnDemandWalk(simdjson::ondemand::parser& parser,
                  const simdjson::padded_string& text, StepOut* out) {
  simdjson::ondemand::document doc;
  if (parser.iterate(text).get(doc)) return false;
  simdjson::ondemand::object top;
  if (doc.get_object().get(top)) return false;
  uint64_t n = 1;
  for (auto field : top) {
    simdjson::ondemand::value v;
    if (field.value().get(v)) return false;
    if (Walk(v, &n)) return false;
  }
  out->check = n;
  return true;
}

// What an importer reads: per event its phase, name, timestamp and
// duration; everything else is skipped. check = events.
bool OnDemandFields(simdjson::ondemand::parser& parser,
                    const simdjson::padded_string& text, StepOut* out) {
  simdjson::ondemand::document doc;
  if (parser.iterate(text).get(doc)) return false;
  simdjson::ondemand::array events;
  if (doc["traceEvents"].get_array().get(events)) return false;
  uint64_t n = 0;
  double total_dur = 0;
  for (auto ev : events) {
    simdjson::ondemand::object o;
    if (ev.get_object().get(o)) return false;
    // Members in any order, as Kineto does not promise one.
    for (auto field : o) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      if (key == "dur") {
        double d;
        if (field.value().get_double().get(d)) return false;
        total_dur += d;
      } else if (key == "ts") {
        double d;
        if (field.value().get_double().get(d)) return false;
      } else if (key == "ph" || key == "name") {
        std::string_view s;
        if (field.value().get_string().get(s)) return false;
      }
    }
    ++n;
  }
  out->check = n + (total_dur < 0 ? 1 : 0);
  return true;
}

bool OnDemandWalkStep(const simdjson::padded_string& text, StepOut* out) {
  simdjson::ondemand::parser parser;
  return OnDemandWalk(parser, text, out);
}

bool OnDemandFieldsStep(const simdjson::padded_string& text, StepOut* out) {
  simdjson::ondemand::parser parser;
  return OnDemandFields(parser, text, out);
}

bool ReadOnlyStep(const simdjson::padded_string& text, StepOut* out) {
  out->check = text.size();
  return true;
}

// ------------------------------------------------------ small documents

// What json::Parse mostly reads: a device profile (docs/device-profile.md's
// example, 1.2 KB). Parsed `count` times in this process; best of `runs`.
constexpr char kProfile[] = R"({
  "format": "rooftrace-device-profile",
  "version": 1,
  "rooftrace_version": "0.1.0",
  "created_utc": "2026-11-23T02:14:17Z",
  "sample": false,
  "device": {
    "name": "NVIDIA H100 80GB HBM3",
    "uuid": "GPU-5f3c0000-1111-2222-3333-444444444444",
    "chip": "sm_90",
    "sm_count": 132,
    "sm_clock_mhz": 1980,
    "memory_clock_mhz": 2619,
    "memory_bus_width_bits": 5120,
    "memory_bytes": 85520809984,
    "l2_bytes": 52428800,
    "driver_version": "13.0",
    "runtime_version": "13.0"
  },
  "datasheet_key": "h100-sxm",
  "dram": {
    "measured_bytes_per_s": 3.0e12,
    "datasheet_bytes_per_s": 3350000000000,
    "ratio": 0.8955,
    "kernel": "stream-triad 3 x 1 GiB fp32"
  },
  "compute": {
    "bf16_tc": {
      "measured_flops_per_s": 7.5e14,
      "datasheet_flops_per_s": 989400000000000,
      "ratio": 0.758,
      "ridge_flops_per_byte": 250,
      "source": "measured",
      "kernel": "cublasLt bf16 8192x8192x8192",
      "note": ""
    },
    "fp8_tc": {"datasheet_flops_per_s": 1978900000000000, "note": "skipped"}
  },
  "counter_validation": [
    {"kernel": "gemm_own_fp32 4096x4096x4096", "quantity": "flops",
     "expected": 137438953472, "counted": 137438953472, "error_pct": 0}
  ]
}
)";

template <typename Fn>
void TimeSmall(const char* name, int count, int runs, Fn parse_once) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const Stamp t0 = Stamp::Now();
    for (int i = 0; i < count; ++i) {
      if (!parse_once()) {
        printf("%-44s FAILED\n", name);
        return;
      }
    }
    best = std::min(best, (Stamp::Now() - t0).cpu_s);
  }
  const double us = best / count * 1e6;
  printf("%-44s %8.2f %8.0f\n", name, us,
         sizeof kProfile / us);  // bytes per microsecond = MB/s (1e6)
}

void SmallDocuments(int runs) {
  constexpr int kCount = 20000;
  const std::string_view text(kProfile, sizeof kProfile - 1);
  const simdjson::padded_string padded(text);
  printf(
      "\nsmall documents: a %zu-byte device profile, %d parses, best of "
      "%d (CPU)\n\n%-44s %8s %8s\n",
      text.size(), kCount, runs, "step", "us each", "MB/s");
  TimeSmall("old parser -> json::Value", kCount, runs,
            [&] { return rooftrace::bench::LegacyParse(text, "p.json").ok(); });
  TimeSmall("json::Parse -> json::Value (simdjson DOM)", kCount, runs,
            [&] { return rooftrace::json::Parse(text, "p.json").ok(); });
  TimeSmall("simdjson DOM alone, fresh parser", kCount, runs, [&] {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    return parser.parse(padded).get(root) == simdjson::SUCCESS;
  });
  simdjson::dom::parser reused;
  TimeSmall("simdjson DOM alone, parser reused", kCount, runs, [&] {
    simdjson::dom::element root;
    return reused.parse(padded).get(root) == simdjson::SUCCESS;
  });
}

}  // namespace

int main(int argc, char** argv) {
  size_t mb = 100;
  int runs = 3;
  std::string dir = std::filesystem::temp_directory_path().string();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mb" && i + 1 < argc) {
      mb = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      fprintf(stderr, "usage: json_bench [--mb N] [--runs R] [--dir DIR]\n");
      return 2;
    }
  }
  if (mb == 0 || runs < 1) {
    fprintf(stderr, "json_bench: --mb and --runs must be at least 1\n");
    return 2;
  }
  const std::string path =
      dir + "/json_bench_" + std::to_string(::getpid()) + ".json";
  const uint64_t events = WriteDocument(path, mb << 20);
  const double file_mb =
      static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
  printf(
      "json_bench: %.1f MB of Kineto-like JSON, %llu trace events; "
      "simdjson %s (%s kernels); best of %d runs, each step in its "
      "own process\n\n",
      file_mb, static_cast<unsigned long long>(events),
      SIMDJSON_STRINGIFY(SIMDJSON_VERSION),
      simdjson::get_active_implementation()->name().c_str(), runs);
  printf("%-42s %19s %13s\n", "", "cold (fresh memory)", "warm memory");
  printf("%-42s %6s %5s %6s %6s %6s %9s %8s %9s  %s\n", "step", "wall s",
         "CPU s", "MB/s", "CPU s", "MB/s", "peak RSS", "faults", "free tree",
         "counted");
  struct Named {
    const char* name;
    Step step;
    bool floor;
  };
  const Named steps[] = {
      {"read the file (floor)", ReadOnlyStep, true},
      {"old parser -> json::Value", LegacyStep, false},
      {"json::Parse -> json::Value (simdjson DOM)", ValueStep, false},
      {"simdjson DOM alone", DomStep, false},
      {"simdjson On-Demand, every value", OnDemandWalkStep, false},
      {"simdjson On-Demand, ph/name/ts/dur", OnDemandFieldsStep, false},
  };
  int failed = 0;
  for (const Named& s : steps) {
    const Result cold = InChild(path, runs, s.step, /*warm=*/false);
    const Result warm = InChild(path, std::max(runs, 2), s.step, true);
    if (!cold.ok || !warm.ok) {
      printf("%-42s FAILED\n", s.name);
      ++failed;
      continue;
    }
    char cold_wall[32] = "-", cold_cpu[32] = "-", cold_rate[32] = "-",
         warm_cpu[32] = "-", warm_rate[32] = "-", freeing[32] = "-";
    if (!s.floor) {
      const Report& c = cold.report;
      const Report& w = warm.report;
      snprintf(cold_wall, sizeof cold_wall, "%.3f", c.best_wall_s);
      snprintf(cold_cpu, sizeof cold_cpu, "%.3f", c.best_cpu_s);
      snprintf(cold_rate, sizeof cold_rate, "%.0f", file_mb / c.best_cpu_s);
      snprintf(warm_cpu, sizeof warm_cpu, "%.3f", w.best_cpu_s);
      snprintf(warm_rate, sizeof warm_rate, "%.0f", file_mb / w.best_cpu_s);
    }
    if (cold.report.free_s > 0) {
      snprintf(freeing, sizeof freeing, "%.3f s", cold.report.free_s);
    }
    printf("%-42s %6s %5s %6s %6s %6s %5ld MiB %7ldk %9s  %llu\n", s.name,
           cold_wall, cold_cpu, cold_rate, warm_cpu, warm_rate,
           cold.max_rss_kb / 1024, cold.minor_faults / 1000, freeing,
           static_cast<unsigned long long>(cold.report.check));
  }
  std::filesystem::remove(path);
  printf(
      "\ncold: each run with a fresh parser in fresh memory, as one import "
      "of one file; warm: the same, but the heap keeps pages between runs "
      "(best of at least 2), so touching new memory is left out. MB/s from "
      "CPU seconds.\npeak RSS, faults (minor page faults, whole child), "
      "free tree (destroying the json::Value tree, wall, not timed): cold "
      "child.\ncounted: values seen (old parser, json::Parse, DOM, On-Demand "
      "every value must agree), trace events (ph/name/ts/dur), bytes "
      "(floor).\n");
  SmallDocuments(runs);
  return failed ? 1 : 0;
}
