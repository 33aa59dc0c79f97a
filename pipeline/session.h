// One producer session of a run (a process, a forked child, or one process
// of an imported trace): who it was (header, devices), its records in
// compact form, its interned strings, its import statistics and how it
// ended. A source fills it (sources/rft/wire_session.h decodes the wire
// stream into one; importers fill it from other tools' traces); the
// pipeline joins it (pipeline/join.h) once it ends, or earlier for its
// settled forward steps (RunRecorder::MaybeFlush), which are stored and
// then dropped with DropRecords(), so a long session holds a bounded
// window of records.
//
// Owned by one source; not thread-safe. Holds no wire or protobuf type.
#ifndef ROOFTRACE_PIPELINE_SESSION_H_
#define ROOFTRACE_PIPELINE_SESSION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pipeline/import_stats.h"
#include "pipeline/records.h"

namespace rooftrace {

// What earlier flushes of a session already stored (RunRecorder).
struct FlushedState {
  int64_t session_row = 0;        // sessions.session_id; 0: not stored yet
  int64_t last_step_tokens = -1;  // token count of the last stored step
  uint64_t steps = 0, kernels = 0, flushes = 0;
  size_t next_flush_records = 0;  // RecordCount() that triggers a try
};

// Which records DropRecords() removes: one flag per record, in the order
// of the accessors below (an empty vector drops none of that kind).
struct RecordMask {
  std::vector<char> kernels, launches, memcpys, gemms, nvtx, counters, ops,
      metrics, pm_samples;
};

// Session identity and what its producer declared.
struct SessionHeader {
  std::string host;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start_unix_ns = 0;
  uint64_t start_ns = 0;
  std::string argv;  // space-joined
  std::string producer_version;
  std::string mode;  // "trace" | "counters" | "sampling" | "import" | ...
  uint32_t counter_passes = 0;
  uint32_t protocol_version = 0;
};

// A GPU the session ran on.
struct DeviceInfo {
  uint32_t device_id = 0;
  std::string name, uuid, chip_name;
  uint32_t sm_count = 0, cc_major = 0, cc_minor = 0;
  uint64_t core_clock_khz = 0, memory_clock_khz = 0;
  // The SM clock the kernels were measured at, when a source knows it (a
  // profiler that locks clocks: Nsight Compute); 0 when not measured. The
  // compute roofs are scaled to it (ScaleRoofsToClock); core_clock_khz alone
  // is a device's rated clock for the other sources.
  uint64_t measured_sm_clock_khz = 0;
  uint32_t memory_bus_width_bits = 0;
  uint64_t l2_cache_bytes = 0, global_memory_bytes = 0;
  std::string driver_version;
};

// How the session's stream ended, as far as it has: packets counted, the
// producer's Goodbye, and whether everything it announced arrived.
struct SessionEnd {
  uint64_t packets = 0;
  uint64_t last_sequence = 0;
  uint64_t sequence_gaps = 0;
  uint64_t nvtx_marks = 0;
  bool goodbye = false;
  // Everything the producer said it sent arrived (a source that reads a
  // whole file sets it when the file was read to its end).
  bool complete = false;
  int32_t exit_code = -1;
  uint64_t end_unix_ns = 0;
};

class Session {
 public:
  // `name` names the session in messages until Start() names it better.
  explicit Session(std::string name);

  // The producer is known: keeps its header, names the session
  // "host:pid" and counts it (ImportStat::k_sessions).
  void Start(const SessionHeader& header);
  // False until Start(): such a session only contributes statistics.
  bool started() const { return started_; }
  const std::string& name() const { return name_; }
  const SessionHeader& header() const { return header_; }

  const std::vector<DeviceInfo>& devices() const { return devices_; }
  void AddDevice(DeviceInfo device) { devices_.push_back(std::move(device)); }

  // The records, for the source to append to.
  SessionRecords& records() { return rec_; }
  const std::vector<KernelRecord>& kernels() const { return rec_.kernels; }
  const std::vector<LaunchRecord>& launches() const { return rec_.launches; }
  const std::vector<MemcpyRecord>& memcpys() const { return rec_.memcpys; }
  const std::vector<GemmRecord>& gemms() const { return rec_.gemms; }
  // Correlation ids the GEMM calls held here listed, by call id.
  const std::vector<GemmLink>& gemm_links() const { return rec_.gemm_links; }
  const std::vector<NvtxRecord>& nvtx_ranges() const { return rec_.nvtx; }
  const std::vector<CounterRecord>& counters() const { return rec_.counters; }
  const std::vector<OpRecord>& ops() const { return rec_.ops; }
  // Correlation ids the operations held here launched, by op id.
  const std::vector<OpLink>& op_links() const { return rec_.op_links; }
  const std::vector<MetricRecord>& metrics() const { return rec_.metrics; }
  // PM samples (sampling mode), in arrival order.
  const std::vector<PmSampleRecord>& pm_samples() const {
    return rec_.pm_samples;
  }

  // Interned strings (kernel names, NVTX names and domains) by id.
  void SetString(uint64_t iid, std::string_view str) {
    strings_[iid].assign(str.data(), str.size());
  }
  // The interned string `iid`, or nullptr when never defined.
  const std::string* String(uint64_t iid) const;
  const std::unordered_map<uint64_t, std::string>& strings() const {
    return strings_;
  }

  // Counters of this session (frames and bytes are added by the reader).
  ImportStats& stats() { return stats_; }
  const ImportStats& stats() const { return stats_; }

  SessionEnd& end() { return end_; }
  const SessionEnd& end() const { return end_; }
  bool Complete() const { return end_.complete; }

  // Records held, for memory accounting.
  size_t RecordCount() const;

  // Removes the records flagged in `mask` (already stored and joined);
  // pointers into the record vectors are invalid afterwards. Each record
  // vector keeps its memory for up to `retain` records (the next window
  // fills it again without growing) and gives back the rest.
  void DropRecords(const RecordMask& mask, size_t retain = 0);
  FlushedState& flushed() { return flushed_; }
  const FlushedState& flushed() const { return flushed_; }

 private:
  std::string name_;
  bool started_ = false;
  SessionHeader header_;
  std::vector<DeviceInfo> devices_;
  SessionRecords rec_;
  std::unordered_map<uint64_t, std::string> strings_;
  ImportStats stats_;
  SessionEnd end_;
  FlushedState flushed_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_SESSION_H_
