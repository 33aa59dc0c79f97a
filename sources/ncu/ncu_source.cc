#include "sources/ncu/ncu_source.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/field_numbers.h"
#include "sources/file_reader.h"
#include "sources/ncu/ncu_kernel.h"

namespace rooftrace {
namespace ncu {
namespace {

namespace en = wire::enums;

constexpr char kHowTo[] =
    "export it with `ncu --import REPORT.ncu-rep --csv > ncu.csv` (or "
    "`--page raw`), or profile with `ncu --csv --metrics "
    "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,... "
    "APP > ncu.csv`";

// One process's session being filled.
struct ProcessSession {
  std::unique_ptr<Session> session;
  std::unordered_map<std::string, uint64_t> iids;
  uint64_t next_iid = 1;
  uint64_t clock_ns = 0;  // synthesized: kernels back to back
  // Per device id: its name, CC and the SM clocks its kernels ran at.
  struct Device {
    std::string name, cc;
    double clock_hz_sum = 0;
    uint64_t clocks = 0;
  };
  std::map<uint32_t, Device> devices;

  uint64_t Iid(std::string_view text) {
    if (text.empty()) return 0;
    auto [it, inserted] = iids.try_emplace(std::string(text), next_iid);
    if (inserted) session->SetString(next_iid++, text);
    return it->second;
  }
};

// What the warning says about the whole file, counted per kernel.
struct Notes {
  std::map<std::string, uint64_t> duration_from;  // other than gpu__time
  uint64_t no_duration = 0, no_bytes = 0, total_only = 0, no_flops = 0;
  uint64_t tensor_without_flops = 0;
  std::string first_tensor_kernel;
  bool device_named = false;
};

uint32_t U32Of(const std::string& text) {
  const std::optional<double> v = ParseNumber(text);
  return v && *v >= 0 && *v < 4294967295.0 ? static_cast<uint32_t>(*v) : 0;
}

// Raw metrics of the kernel's work (not the device's or the launch's), as
// written: the value without thousands separators, the unit as given; a
// section's human-named metric as "Section: Name"; the first of a name.
std::vector<CounterMetric> RawMetrics(const Kernel& k) {
  std::vector<CounterMetric> out;
  std::set<std::string> seen;
  for (const Metric& m : k.metrics) {
    if (IsDescriptiveMetric(m.name)) continue;
    const std::optional<double> v = ParseNumber(m.value);
    if (!v) continue;
    const bool raw = m.name.find("__") != std::string::npos;
    std::string name = raw || m.section.empty() ? m.name
                                                : m.section + ": " + m.name;
    if (!seen.insert(name).second) continue;
    out.push_back(CounterMetric{std::move(name), m.unit, *v});
  }
  return out;
}

void AddMetrics(const Kernel& k, uint64_t corr, ProcessSession* p) {
  for (const CounterMetric& m : RawMetrics(k)) {
    MetricRecord r;
    r.correlation_id = corr;
    r.name_iid = p->Iid(m.name);
    r.unit_iid = p->Iid(m.unit);
    r.value = m.value;
    p->session->records().metrics.push_back(r);
  }
}

void NoteFacts(const Kernel& k, const KernelFacts& f, Notes* n) {
  if (!f.duration_ns) {
    ++n->no_duration;
  } else if (f.duration_from != "gpu__time_duration.sum") {
    ++n->duration_from[f.duration_from];
  }
  if (!f.dram_read_bytes) ++n->no_bytes;
  if (f.dram_total_only) ++n->total_only;
  if (!f.has_flops) ++n->no_flops;
  if (f.tensor_instructions_without_flops) {
    if (n->tensor_without_flops++ == 0) {
      // Template names run to kilobytes: enough to recognise it.
      n->first_tensor_kernel = k.name.size() <= 96
                                   ? k.name
                                   : k.name.substr(0, 96) + "...";
    }
  }
  n->device_named |= !f.device_name.empty();
}

void AddKernel(const Kernel& k, ProcessSession* p, Notes* notes) {
  const KernelFacts f = DeriveFacts(k);
  NoteFacts(k, f, notes);
  Session& s = *p->session;
  KernelRecord r;
  r.correlation_id = static_cast<uint64_t>(k.id) + 1;  // 0 means none
  r.start_ns = p->clock_ns;
  r.end_ns = r.start_ns + f.duration_ns.value_or(0);
  p->clock_ns = r.end_ns;
  r.name_iid = p->Iid(k.name);
  r.device_id = U32Of(k.device);
  r.context_id = U32Of(k.context);
  r.stream_id = U32Of(k.stream);
  for (size_t i = 0; i < 3; ++i) {
    r.grid[i] = f.grid[i];
    r.block[i] = f.block[i];
  }
  r.registers_per_thread = f.registers_per_thread;
  r.static_shared_memory_bytes = f.static_shared_bytes;
  r.dynamic_shared_memory_bytes = f.dynamic_shared_bytes;
  s.records().kernels.push_back(r);
  ++s.stats().received[en::kRecordKernel];
  if (f.dram_read_bytes) {
    CounterRecord c;
    c.correlation_id = r.correlation_id;
    c.dram_read_bytes = *f.dram_read_bytes;
    c.dram_write_bytes = f.dram_write_bytes.value_or(0);
    c.flops = f.flops;
    c.has_flops = f.has_flops;
    s.records().counters.push_back(c);
    ++s.stats().received[en::kRecordCounters];
  }
  AddMetrics(k, r.correlation_id, p);
  ProcessSession::Device& d = p->devices[r.device_id];
  if (d.name.empty()) d.name = f.device_name;
  if (d.cc.empty()) d.cc = k.cc;
  if (f.sm_clock_hz) {
    d.clock_hz_sum += *f.sm_clock_hz;
    ++d.clocks;
  }
}

std::unique_ptr<ProcessSession> StartSession(const std::string& path,
                                             const Kernel& first) {
  auto p = std::make_unique<ProcessSession>();
  p->session = std::make_unique<Session>(path + ":pid " +
                                         std::to_string(first.pid));
  SessionHeader h;
  h.host = first.host.empty() ? "ncu" : first.host;
  h.pid = static_cast<uint32_t>(first.pid);
  h.argv = first.process;
  h.producer_version = "ncu";
  h.mode = "import";
  p->session->Start(h);
  return p;
}

// The devices a session's kernels ran on, with the mean SM clock their
// counters ran at (ncu locks it to base by default: --clock-control), which
// the pipeline scales the compute roofs to.
void AddDevices(ProcessSession* p) {
  for (const auto& [id, d] : p->devices) {
    DeviceInfo info;
    info.device_id = id;
    info.name = d.name;
    const size_t dot = d.cc.find('.');
    if (dot != std::string::npos) {
      info.cc_major = U32Of(d.cc.substr(0, dot));
      info.cc_minor = U32Of(d.cc.substr(dot + 1));
    }
    if (d.clocks > 0) {
      info.core_clock_khz = static_cast<uint64_t>(
          d.clock_hz_sum / static_cast<double>(d.clocks) / 1e3 + 0.5);
      // The counters ran at it: the compute roofs are scaled to it.
      info.measured_sm_clock_khz = info.core_clock_khz;
    }
    p->session->AddDevice(std::move(info));
    ++p->session->stats().received[en::kRecordDevice];
  }
}

std::string Warning(const Notes& n, uint64_t kernels,
                    const SourceOptions& options) {
  std::vector<std::string> out;
  auto of = [&](uint64_t count) {
    return std::to_string(count) + " of " + std::to_string(kernels) +
           " kernels";
  };
  for (const auto& [from, count] : n.duration_from) {
    out.push_back(of(count) + " have no gpu__time_duration.sum: duration from " +
                  from);
  }
  if (n.no_duration) {
    out.push_back(of(n.no_duration) +
                  " have no duration (add gpu__time_duration.sum to "
                  "--metrics): stored with zero time");
  }
  if (n.no_bytes) {
    out.push_back(of(n.no_bytes) +
                  " have no DRAM bytes (dram__bytes_read.sum, "
                  "dram__bytes_write.sum): judged on time alone");
  }
  if (n.total_only) {
    out.push_back(of(n.total_only) +
                  " have dram__bytes.sum only: read and write are not told "
                  "apart (the total is stored as read bytes)");
  }
  if (n.tensor_without_flops) {
    out.push_back(
        of(n.tensor_without_flops) + " (first: '" + n.first_tensor_kernel +
        "') ran tensor-core instructions (sm__inst_executed_pipe_tensor*) "
        "with no tensor FLOP counter: their tensor FLOPs are missing (the "
        "instruction counts are kept in kernel_metrics; FLOPs per "
        "instruction depend on its shape); profile with --metrics "
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum,... to measure them");
  }
  if (!n.device_named && options.device_key.empty() &&
      options.device_profile_path.empty()) {
    out.push_back(
        "the CSV names no GPU (add --metrics device__attribute_display_name, "
        "or give --device): no roofs");
  }
  std::string w;
  for (const std::string& s : out) w += (w.empty() ? "" : "; ") + s;
  return w;
}

}  // namespace

StatusOr<Report> ReadNcuFile(const std::string& path,
                             const GzipBudget& budget) {
  size_t size = 0;
  RT_ASSIGN_OR_RETURN(std::string text,
                      ReadWholeFile(path, 0, &size, budget));
  text.resize(size);
  if (text.empty()) {
    return InvalidArgument(path + ": the file is empty; " + kHowTo);
  }
  StatusOr<Report> report = ParseNcuCsv(text);
  if (!report.ok()) {
    return InvalidArgument(path + ": not a complete Nsight Compute CSV: " +
                           report.status().message() + "; " + kHowTo);
  }
  if (report->kernels.empty()) {
    return InvalidArgument(
        path + ": an Nsight Compute CSV without a profiled kernel (line " +
        std::to_string(report->header_line) +
        " is its header, no kernel row follows): check ncu's "
        "--kernel-name / --launch-skip / --launch-count filters");
  }
  return report;
}

Status ReadNcuReport(const std::string& path, const Report& report,
                     const SourceOptions& options, RunRecorder* recorder,
                     SourceResult* result) {
  if (options.rank) {
    return InvalidArgument(path +
                           ": --rank: an Nsight Compute CSV names no ranks; "
                           "use --pid");
  }
  // Sessions in order of the processes' first kernel; kernels by ID.
  std::vector<const Kernel*> kernels;
  std::set<int64_t> pids;
  for (const Kernel& k : report.kernels) {
    pids.insert(k.pid);
    if (!options.pid || k.pid == *options.pid) kernels.push_back(&k);
  }
  if (kernels.empty()) {
    std::string list;
    for (int64_t p : pids) list += (list.empty() ? "" : ", ") + std::to_string(p);
    return InvalidArgument(path + ": --pid " + std::to_string(*options.pid) +
                           ": no kernel of that process; the CSV has " + list);
  }
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const Kernel* a, const Kernel* b) { return a->id < b->id; });
  std::vector<std::unique_ptr<ProcessSession>> sessions;
  std::map<int64_t, ProcessSession*> by_pid;
  Notes notes;
  for (const Kernel* k : kernels) {
    ProcessSession*& p = by_pid[k->pid];
    if (p == nullptr) {
      sessions.push_back(StartSession(path, *k));
      p = sessions.back().get();
    }
    AddKernel(*k, p, &notes);
  }
  for (auto& p : sessions) {
    AddDevices(p.get());
    p->session->end().complete = p->session->end().goodbye = true;
    p->session->end().end_unix_ns = 0;
    RT_RETURN_IF_ERROR(recorder->AddSession(p->session.get()));
  }
  result->warning = Warning(notes, kernels.size(), options);
  if (!result->warning.empty()) result->warning = path + ": " + result->warning;
  return OkStatus();
}

StatusOr<CounterFile> ReadNcuCounterFile(const std::string& path,
                                         const GzipBudget& budget) {
  StatusOr<Report> report = ReadNcuFile(path, budget);
  if (!report.ok()) {
    return Status(report.status().code(),
                  "--counters " + report.status().message());
  }
  std::vector<const Kernel*> kernels;
  for (const Kernel& k : report->kernels) kernels.push_back(&k);
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const Kernel* a, const Kernel* b) { return a->id < b->id; });
  CounterFile file;
  file.path = path;
  std::unordered_map<std::string, int64_t> occurrences;
  for (const Kernel* k : kernels) {
    const int64_t occurrence = occurrences[k->name]++;
    const KernelFacts f = DeriveFacts(*k);
    if (!f.dram_read_bytes) continue;
    CounterSample s;
    s.kernel_name = k->name;
    s.occurrence = occurrence;
    s.values.dram_read_bytes = *f.dram_read_bytes;
    s.values.dram_write_bytes = f.dram_write_bytes.value_or(0);
    s.values.flops = f.flops;
    s.values.has_flops = f.has_flops;
    s.metrics = RawMetrics(*k);
    file.samples.push_back(std::move(s));
  }
  return file;
}

}  // namespace ncu

bool NcuSource::Detect(const std::string&, std::string_view head) const {
  return ncu::LooksLikeNcuCsv(head);
}

Status NcuSource::Read(const std::string& path, const SourceOptions& options,
                       RunRecorder* recorder, SourceResult* result) const {
  if (!options.counters_path.empty()) {
    return InvalidArgument(
        path + ": --counters " + options.counters_path +
        ": an Nsight Compute CSV has counters of its own and no timeline to "
        "attach others to; import it without --counters, or give the "
        "timeline (an nsys export) with --counters " + path);
  }
  RT_ASSIGN_OR_RETURN(const ncu::Report report,
                      ncu::ReadNcuFile(path, options.gzip_budget));
  return ncu::ReadNcuReport(path, report, options, recorder, result);
}

}  // namespace rooftrace
