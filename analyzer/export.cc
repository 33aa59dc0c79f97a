#include "analyzer/export.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "report/text_util.h"
#include "model/kernel_names.h"

namespace rooftrace::analyzer {
namespace {

// Microseconds with nanosecond resolution, as the trace event format wants.
std::string Micros(int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000 < 0 ? -(ns % 1000) : ns % 1000));
  return buf;
}

void Metadata(std::ostream& out, bool* first, const char* what, int64_t pid,
              std::optional<int64_t> tid, const std::string& name) {
  out << (*first ? "\n" : ",\n") << "{\"ph\":\"M\",\"name\":\"" << what
      << "\",\"pid\":" << pid;
  if (tid) out << ",\"tid\":" << *tid;
  out << ",\"args\":{\"name\":" << JsonString(name) << "}}";
  *first = false;
}

void Arg(std::ostream& out, const char* key, std::string_view value) {
  if (value.empty()) return;
  out << ",\"" << key << "\":" << JsonString(value);
}
void Arg(std::ostream& out, const char* key, std::optional<double> value) {
  if (!value) return;
  out << ",\"" << key << "\":" << JsonNumber(value);
}
void Arg(std::ostream& out, const char* key, double value) {
  Arg(out, key, std::optional<double>(value));
}
void Arg(std::ostream& out, const char* key, std::optional<int64_t> value) {
  if (!value) return;
  out << ",\"" << key << "\":" << *value;
}

}  // namespace

Status WritePerfettoJson(StoreReader& store, int64_t run_id, std::ostream& out,
                         PerfettoStats* stats) {
  PerfettoStats local;
  if (!stats) stats = &local;
  RT_ASSIGN_OR_RETURN(const RunRow run, store.ResolveRun(run_id));
  if (run.store_kernels == "none") {
    return InvalidArgument(
        store.display_name() + ": run " + std::to_string(run_id) +
        " was stored with --store-kernels none: it has per-group aggregates "
        "and no kernel rows, so there is no kernel timeline to export; "
        "`export --csv` writes its kernel_aggregates, or store the run with "
        "--store-kernels all (sampled keeps some launches)");
  }
  RT_ASSIGN_OR_RETURN(const auto devices, store.Devices(run_id));
  RT_ASSIGN_OR_RETURN(const auto sessions, store.SessionPids(run_id));
  std::map<int64_t, int64_t> pid_of_session(sessions.begin(), sessions.end());
  std::map<int64_t, std::string> device_names(devices.begin(), devices.end());

  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"rooftrace\","
         "\"run_id\":"
      << run_id << "},\"traceEvents\":[";
  bool first = true;
  // Track names are declared when a track is first used, so the writer
  // never needs more than the set of tracks in memory.
  std::set<int64_t> named_gpus;
  std::set<std::pair<int64_t, int64_t>> named_streams;
  auto gpu_track = [&](std::optional<int64_t> device, std::optional<int64_t> stream) {
    const int64_t pid = kGpuPidBase + device.value_or(0);
    const int64_t tid = stream.value_or(0);
    if (named_gpus.insert(pid).second) {
      auto it = device_names.find(device.value_or(0));
      Metadata(out, &first, "process_name", pid, std::nullopt,
               "GPU " + std::to_string(device.value_or(0)) +
                   (it != device_names.end() && !it->second.empty()
                        ? " " + it->second
                        : ""));
    }
    if (named_streams.insert({pid, tid}).second) {
      Metadata(out, &first, "thread_name", pid, tid,
               "stream " + std::to_string(tid));
    }
    return std::make_pair(pid, tid);
  };

  RT_RETURN_IF_ERROR(store.ForEachKernel(run_id, [&](const KernelRow& k) {
    if (!k.start_ns) return OkStatus();
    const auto [pid, tid] = gpu_track(k.device_id, k.stream_id);
    const std::string_view full = k.demangled.empty() ? k.name : k.demangled;
    out << ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":"
        << JsonString(ShortKernelName(full)) << ",\"pid\":" << pid
        << ",\"tid\":" << tid << ",\"ts\":" << Micros(*k.start_ns)
        << ",\"dur\":" << Micros(k.duration_ns) << ",\"args\":{\"kernel\":"
        << JsonString(full);
    Arg(out, "family", k.family);
    Arg(out, "shape", k.shape);
    Arg(out, "phase", k.phase);
    Arg(out, "step_id", k.step_id);
    Arg(out, "bound", k.bound);
    Arg(out, "precision", k.precision);
    Arg(out, "flops", k.flops);
    Arg(out, "flops_source", k.flops_source);
    Arg(out, "dram_bytes", k.dram_bytes);
    Arg(out, "bytes_source", k.bytes_source);
    if (k.flops && k.dram_bytes && *k.dram_bytes > 0) {
      Arg(out, "ai_flops_per_byte", *k.flops / *k.dram_bytes);
    }
    if (k.duration_ns > 0) {
      if (k.flops) Arg(out, "achieved_tflops_per_s", *k.flops / k.duration_ns * 1e-3);
      if (k.dram_bytes) Arg(out, "achieved_gb_per_s", *k.dram_bytes / k.duration_ns);
    }
    Arg(out, "roof_tflops_per_s",
        k.roof_flops_per_s ? std::optional<double>(*k.roof_flops_per_s * 1e-12)
                           : std::nullopt);
    Arg(out, "percent_of_roof",
        k.fraction_of_roof ? std::optional<double>(*k.fraction_of_roof * 100)
                           : std::nullopt);
    Arg(out, "nvtx_path", k.nvtx_path);
    Arg(out, "correlation_id", k.correlation_id);
    Arg(out, "launch_thread_id", k.thread_id);
    out << "}}";
    first = false;
    ++stats->kernels;
    return OkStatus();
  }));

  RT_RETURN_IF_ERROR(store.ForEachMemcpy(run_id, [&](const MemcpyRow& m) {
    if (!m.start_ns || !m.end_ns) return OkStatus();
    const auto [pid, tid] = gpu_track(m.device_id, m.stream_id);
    const int64_t dur = *m.end_ns - *m.start_ns;
    out << ",\n{\"ph\":\"X\",\"cat\":\"memcpy\",\"name\":"
        << JsonString(std::string(m.kind.empty() ? "copy" : m.kind) + " " +
                      SiPrefix(static_cast<double>(m.bytes)) + "B")
        << ",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":"
        << Micros(*m.start_ns) << ",\"dur\":" << Micros(dur)
        << ",\"args\":{\"bytes\":" << m.bytes;
    if (dur > 0) Arg(out, "achieved_gb_per_s", static_cast<double>(m.bytes) / dur);
    Arg(out, "phase", m.phase);
    Arg(out, "correlation_id", m.correlation_id);
    out << "}}";
    first = false;
    ++stats->memcpys;
    return OkStatus();
  }));

  int64_t async_id = 0;
  std::set<int64_t> named_processes;
  std::set<std::pair<int64_t, int64_t>> named_threads;
  RT_RETURN_IF_ERROR(store.ForEachNvtx(run_id, [&](const NvtxRow& r) {
    if (!r.start_ns) return OkStatus();
    if (!r.end_ns) {
      ++stats->open_ranges;
      return OkStatus();
    }
    auto it = pid_of_session.find(r.session_id);
    const int64_t pid = it != pid_of_session.end() && it->second > 0
                            ? it->second
                            : r.session_id;
    const int64_t tid = r.thread_id.value_or(0);
    if (named_processes.insert(pid).second) {
      Metadata(out, &first, "process_name", pid, std::nullopt,
               "host process " + std::to_string(pid));
    }
    if (named_threads.insert({pid, tid}).second) {
      Metadata(out, &first, "thread_name", pid, tid,
               "thread " + std::to_string(tid) + " (NVTX)");
    }
    auto args = [&] {
      out << ",\"args\":{\"kind\":" << JsonString(r.kind.empty() ? "push_pop" : r.kind);
      Arg(out, "domain", r.domain);
      Arg(out, "path", r.path);
      Arg(out, "depth", r.depth);
      out << "}}";
    };
    if (r.kind == "start_end") {
      // Start/end ranges may overlap on a thread (and end on another): an
      // async slice pair, which Perfetto never needs to nest.
      ++async_id;
      out << ",\n{\"ph\":\"b\",\"cat\":\"nvtx\",\"id\":" << async_id
          << ",\"name\":" << JsonString(r.name) << ",\"pid\":" << pid
          << ",\"tid\":" << tid << ",\"ts\":" << Micros(*r.start_ns);
      args();
      out << ",\n{\"ph\":\"e\",\"cat\":\"nvtx\",\"id\":" << async_id
          << ",\"name\":" << JsonString(r.name) << ",\"pid\":" << pid
          << ",\"tid\":" << tid << ",\"ts\":" << Micros(*r.end_ns) << "}";
    } else {
      out << ",\n{\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":" << JsonString(r.name)
          << ",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":"
          << Micros(*r.start_ns) << ",\"dur\":" << Micros(*r.end_ns - *r.start_ns);
      args();
    }
    first = false;
    ++stats->nvtx_ranges;
    return OkStatus();
  }));
  out << "\n]}\n";
  if (!out) return InvalidArgument("writing the Perfetto JSON failed (disk full?)");
  return OkStatus();
}

Status WriteCsvTables(StoreReader& store, int64_t run_id, const std::string& dir,
                      std::vector<std::string>* files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return InvalidArgument("--csv " + dir + ": cannot create the directory (" +
                           ec.message() + ")");
  }
  std::vector<const char*> tables = {
      "runs",    "sessions", "devices",    "roofs",       "import_stats",
      "kernels", "memcpys",  "gemm_calls", "nvtx_ranges", "steps"};
  // A run that kept only some kernel rows: its groups' sums too.
  RT_ASSIGN_OR_RETURN(const RunRow run, store.ResolveRun(run_id));
  if (run.store_kernels == "none" || run.store_kernels == "sampled") {
    tables.push_back("kernel_aggregates");
  }
  for (const char* table : tables) {
    const std::string path = dir + "/" + table + ".csv";
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) return InvalidArgument("--csv " + path + ": cannot write");
    RT_RETURN_IF_ERROR(store.ForEachTableRow(
        table, run_id,
        [&](const std::vector<std::string>& names) {
          for (size_t i = 0; i < names.size(); ++i) {
            f << (i ? "," : "") << CsvField(names[i]);
          }
          f << "\n";
        },
        [&](const std::vector<std::string_view>& values,
            const std::vector<bool>& nulls) {
          for (size_t i = 0; i < values.size(); ++i) {
            if (i) f << ',';
            if (!nulls[i]) f << CsvField(values[i]);
          }
          f << "\n";
        }));
    f.close();
    if (!f) return InvalidArgument("--csv " + path + ": write failed (disk full?)");
    if (files) files->push_back(path);
  }
  return OkStatus();
}

}  // namespace rooftrace::analyzer
