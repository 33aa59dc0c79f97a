#include "analyzer/trace_report.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "collector/ingest.h"
#include "collector/join.h"
#include "collector/store.h"

namespace rooftrace::analyzer {
namespace {

// Run id of the one run a trace makes (as in a fresh store).
constexpr int64_t kTraceRunId = 1;

// Turns the rows a RunRecorder writes into what BuildReport reads back from
// a store: KernelViews in the builder, and the run, roofs, device name and
// import statistics for the header.
class ReportWriter : public RunWriter {
 public:
  explicit ReportWriter(ReportBuilder* builder) : builder_(builder) {}

  StatusOr<int64_t> BeginRun(const RunRow& run) override {
    run_ = run;
    return kTraceRunId;
  }

  Status FinishRun(int64_t, const RunRow& run,
                   const ImportStats& stats) override {
    run_ = run;
    import_stats_.clear();
    for (const auto& [name, value] : stats.Named()) {
      import_stats_.emplace_back(name, static_cast<int64_t>(value));
    }
    std::sort(import_stats_.begin(), import_stats_.end());
    return OkStatus();
  }

  Status AddRoofs(int64_t, uint32_t device_id, const Roofs& roofs) override {
    if (!roofs.known()) return OkStatus();
    for (int p = 1; p < kNumPrecisions; ++p) {
      const double peak = roofs.peak_flops_per_s[p];
      if (peak <= 0) continue;
      const auto prec = static_cast<Precision>(p);
      RoofRow row;
      row.device_id = device_id;
      row.precision = std::string(PrecisionKey(prec));
      row.peak_flops_per_s = peak;
      row.dram_bytes_per_s = roofs.dram_bytes_per_s;
      row.ridge_flops_per_byte = roofs.Ridge(prec);
      row.source = roofs.kind;
      roof_rows_.push_back(std::move(row));
    }
    return OkStatus();
  }

  Status WriteSession(int64_t, Session* session, const JoinedSession& j,
                      const WriteScope* scope) override {
    FlushedState& flushed = session->flushed();
    if (flushed.session_row == 0) {
      flushed.session_row = ++sessions_;
      // The store's device name: the first session's lowest device id.
      if (device_name_.empty() && !session->devices().empty()) {
        const auto& devices = session->devices();
        const auto first = std::min_element(
            devices.begin(), devices.end(), [](const auto& a, const auto& b) {
              return a.device_id() < b.device_id();
            });
        device_name_ = first->name();
      }
    }
    KernelView v;
    for (const JoinedKernel& jk : j.kernels) {
      if (!InScope(scope, jk)) continue;
      const KernelRecord& k = *jk.kernel;
      const NameInfo& name = j.names[jk.name];
      const KernelFacts& f = jk.facts;
      const Annotation& a = jk.annotation;
      v.kernel_id = ++kernels_;
      v.name = name.name;
      v.demangled = name.demangled;
      v.family = name.family;
      shape_.clear();
      if (jk.gemm >= 0) shape_ = GemmShapeText(*j.gemms[jk.gemm].gemm);
      v.shape = shape_;
      v.precision = a.precision == Precision::kUnknown
                        ? std::string_view()
                        : PrecisionKey(a.precision);
      v.flops_source = SourceName(f.flops_source);
      v.bytes_source = SourceName(f.bytes_source);
      v.bound = BoundName(a.bound);
      v.phase = jk.step >= 0 ? std::string_view(j.steps[jk.step].phase)
                             : std::string_view();
      v.nvtx_path = jk.nvtx_path >= 0 ? std::string_view(j.paths[jk.nvtx_path])
                                      : std::string_view();
      v.duration_ns = static_cast<int64_t>(f.duration_ns);
      v.start_ns = static_cast<int64_t>(k.start_ns);
      v.step_id = jk.step >= 0 ? std::optional<int64_t>(steps_ + 1 + jk.step)
                               : std::nullopt;
      v.stream_id = k.stream_id;
      v.device_id = k.device_id;
      v.thread_id = jk.launch ? std::optional<int64_t>(jk.launch->thread_id)
                              : std::nullopt;
      v.correlation_id = static_cast<int64_t>(k.correlation_id);
      v.flops = a.flops ? std::optional<double>(static_cast<double>(*a.flops))
                        : std::nullopt;
      v.dram_bytes =
          f.bytes_source != Source::kNone
              ? std::optional<double>(static_cast<double>(f.dram_bytes))
              : std::nullopt;
      v.fraction_of_roof = a.fraction_of_roof;
      v.roof_flops_per_s = a.roof_flops_per_s;
      builder_->Add(v);
    }
    // Step ids continue across windows and sessions, as in a store.
    steps_ += static_cast<int64_t>(StepsInScope(scope, j.steps.size()));
    return OkStatus();
  }

  RunInfo Run() const {
    RunInfo r;
    r.run_id = kTraceRunId;
    r.command = run_.command;
    r.host = run_.host;
    r.mode = run_.mode;
    r.device_name = run_.device_name;
    r.roof_source = run_.roof_source;
    r.flops_sources = run_.flops_sources;
    r.producer_version = run_.producer_version;
    r.origin = run_.origin;
    r.complete = run_.complete ? 1 : 0;
    if (run_.started_unix_ns != 0) {
      r.started_unix_ns = static_cast<int64_t>(run_.started_unix_ns);
    }
    return r;
  }
  std::vector<RoofRow> SortedRoofs() const {
    std::vector<RoofRow> rows = roof_rows_;
    std::stable_sort(rows.begin(), rows.end(),
                     [](const RoofRow& a, const RoofRow& b) {
                       return a.device_id != b.device_id
                                  ? a.device_id < b.device_id
                                  : a.peak_flops_per_s < b.peak_flops_per_s;
                     });
    return rows;
  }
  const std::string& device_name() const { return device_name_; }
  std::vector<std::pair<std::string, int64_t>>& import_stats() {
    return import_stats_;
  }

 private:
  ReportBuilder* builder_;
  RunRow run_;
  std::vector<RoofRow> roof_rows_;
  std::vector<std::pair<std::string, int64_t>> import_stats_;
  std::string device_name_;
  std::string shape_;
  int64_t sessions_ = 0;
  int64_t kernels_ = 0;
  int64_t steps_ = 0;
};

}  // namespace

StatusOr<Report> BuildTraceReport(const std::string& path,
                                  const std::string& device_profile_path,
                                  const ReportOptions& options,
                                  size_t flush_records) {
  if (options.run_id && *options.run_id != kTraceRunId) {
    return NotFound(path + ": run " + std::to_string(*options.run_id) +
                    " not found; a trace holds one run: 1");
  }
  ReportBuilder builder(options);
  ReportWriter writer(&builder);
  IngestOptions ingest;
  ingest.device_profile_path = device_profile_path;
  ingest.writer = &writer;
  ingest.flush_records = flush_records;
  RT_ASSIGN_OR_RETURN(const IngestResult result,
                      IngestTraceFile(path, std::string(), ingest));
  FillReportHeader(writer.Run(), writer.device_name(), writer.SortedRoofs(),
                   std::move(writer.import_stats()), options,
                   &builder.header());
  RT_ASSIGN_OR_RETURN(Report report, builder.Finish(path));
  report.header.ingest_warning = result.warning;
  return report;
}

}  // namespace rooftrace::analyzer
