// Where the rows of a run go (pipeline/rows.h): the SQLite store
// (store/store.h), the analyzer's in-memory report (report/report_sink.h),
// or anything else that takes rows. The RunRecorder is the only caller:
// it begins the run, emits each joined window's or session's rows
// (pipeline/emit_rows.h), then finishes the run.
//
// Called with the recorder's lock held, one call at a time. The trap: row
// text is a view, valid during the call only.
#ifndef ROOFTRACE_PIPELINE_SINK_H_
#define ROOFTRACE_PIPELINE_SINK_H_

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "pipeline/import_stats.h"
#include "pipeline/rows.h"

namespace rooftrace {

// The rows and columns a sink reads, so that EmitRows does no work for
// the rest (the in-memory report reads a dozen of a kernel row's 60
// columns). What a sink does not need is not given: its calls are not
// made, its columns keep their defaults (pipeline/rows.h). Default: all.
struct RowNeeds {
  // AddGemmCall; without it kernel rows have no gemm_call_id.
  bool gemm_calls = true;
  // Kernel columns only a store keeps: grid, block, cluster, registers,
  // shared memory, graph ids, the launching thread and API start, FLOPs
  // per precision, DRAM read/write bytes.
  bool kernel_details = true;
  bool kernel_metrics = true;  // AddKernelMetric
  bool nvtx = true;            // AddNvtx
};

class RunSink {
 public:
  virtual ~RunSink() = default;

  // Asked once per write; constant for a sink.
  virtual RowNeeds Needs() const { return RowNeeds(); }

  // Starts a run; returns its run_id.
  virtual StatusOr<int64_t> BeginRun(const RunRow& run) = 0;
  // The final run row (run.run_id set) and the run's import statistics.
  virtual Status FinishRun(const RunRow& run, const ImportStats& stats) = 0;
  // One compute roof of one device of the run (each once).
  virtual Status AddRoof(const RoofRow& roof) = 0;
  // A session and the devices it declared; returns its session_id.
  virtual StatusOr<int64_t> AddSession(const SessionRow& session,
                                       const std::vector<DeviceRow>& devices) =
      0;
  // The final figures of a session whose row was added by an earlier
  // window (session.session_id set).
  virtual Status UpdateSession(const SessionRow& session) = 0;
  // Returns the gemm_call_id kernel rows refer to (0: none kept).
  virtual StatusOr<int64_t> AddGemmCall(const GemmCallRow& gemm) = 0;
  virtual Status AddStep(const StepRow& step) = 0;
  virtual Status AddKernel(const KernelRow& kernel) = 0;
  virtual Status AddKernelMetric(const KernelMetricRow& metric) = 0;
  virtual Status AddMemcpy(const MemcpyRow& memcpy) = 0;
  virtual Status AddNvtx(const NvtxRow& range) = 0;
  // Every row of one write (a window or an ended session) has been given.
  virtual Status EndWrite() = 0;
  // After a call of the current write failed: how many of its kernel and
  // NVTX rows the sink had already made durable (a store commits a long
  // write in batches); the rest are lost. Default: none.
  virtual void KeptOfFailedWrite(uint64_t* kernels, uint64_t* ranges) const {
    *kernels = 0;
    *ranges = 0;
  }
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_SINK_H_
