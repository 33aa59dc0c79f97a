// Import statistics of a run, declared once here (perfetto's stats.h habit):
// every counter the collector keeps has one name, one meaning, and is
// stored in the store's import_stats table and printed in every report.
// Per record kind (kernel, memcpy, gemm, nvtx_range, nvtx_mark, counters,
// launch, device) there are received_<kind>, producer_dropped_<kind>,
// producer_filtered_<kind> and unmatched_<kind>.
//
// Plain value type; thread-compatible (one per session, merged into the
// run's under the caller's lock).
#ifndef ROOFTRACE_PIPELINE_IMPORT_STATS_H_
#define ROOFTRACE_PIPELINE_IMPORT_STATS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rooftrace {

// X(name, meaning)
#define ROOFTRACE_IMPORT_STATS(X)                                             \
  X(frames, "frames read")                                                   \
  X(packets, "packets decoded")                                              \
  X(bytes, "bytes read")                                                     \
  X(corrupt_frames, "streams closed on a corrupt frame")                     \
  X(undecodable_packets, "frames whose payload is not a Packet")            \
  X(unknown_fields, "fields skipped because this collector does not know "  \
                    "them (a newer producer)")                              \
  X(truncated_streams, "streams that ended inside a frame")                  \
  X(sessions, "producer sessions accepted")                                  \
  X(sessions_incomplete, "sessions without a Goodbye or whose totals did "  \
                         "not match")                                       \
  X(refused_sessions, "connections refused (magic, version, no Hello)")     \
  X(timed_out_connections, "connections closed for sending nothing or "     \
                           "stalling inside a frame")                       \
  X(memory_refused_connections, "connections closed because their next "   \
                                "frame would pass the collector's memory "  \
                                "budget (collect --memory-budget-mib)")     \
  X(sequence_gaps, "packets missing by sequence number")                     \
  X(unresolved_strings, "interned string ids never defined")                 \
  X(unmatched_nvtx_refs, "launches naming an NVTX range never received")     \
  X(producer_cupti_dropped, "records CUPTI itself dropped")                  \
  X(producer_activity_buffers_requested, "CUPTI activity buffers the "    \
                                         "producer handed CUPTI")          \
  X(producer_activity_buffers_completed, "CUPTI activity buffers CUPTI "  \
                                         "handed back")                    \
  X(producer_activity_buffers_outstanding, "CUPTI activity buffers CUPTI " \
                                           "still held at the last Stats") \
  X(producer_activity_buffers_refused, "CUPTI buffer requests refused "   \
                                       "(the pool's byte budget spent)")   \
  X(producer_kernels_from_launch, "kernel records made from a profiled "   \
                                  "launch (counters mode)")                \
  X(producer_kernels_untimed, "kernel records sent without timestamps "    \
                              "(CUPTI could not collect them)")            \
  X(windows_stored, "settled parts of long sessions stored while they ran") \
  X(store_write_failures, "writes the store refused or that were not "    \
                          "tried after one was refused (the run is "      \
                          "incomplete)")                                  \
  X(kernels_not_stored, "kernels lost to a failed store write")            \
  X(nvtx_ranges_not_stored, "NVTX ranges lost to a failed store write")   \
  X(records_recovered, "records read from the live buffer of a producer "  \
                       "that ended without a Goodbye")                     \
  X(records_lost_at_exit, "records a producer that ended without a "      \
                          "Goodbye had taken but that neither arrived nor " \
                          "were in its live buffer")                       \
  X(kernels_inherited, "kernels without figures of their own given those " \
                       "of the one shape their signature (name, grid, "    \
                       "block, registers, shared memory) ran in the run")  \
  X(kernels_signature_ambiguous, "kernels without figures left blank: "    \
                                 "their signature ran two or more shapes")  \
  X(kernels_sampled, "kernels counters mode did not profile given the "     \
                     "mean counters of the profiled launches of their "    \
                     "signature before them (counters (sampled k of n))")  \
  X(pm_samples, "PM samples received (sampling mode)")                     \
  X(producer_pm_samples, "PM samples the producers said they sent")        \
  X(producer_pm_samples_lost, "PM samples the producers lost (hardware "   \
                              "buffer overflow, incomplete, failed)")      \
  X(pm_samples_exact, "PM samples that overlapped one kernel, given to it " \
                      "whole")                                             \
  X(pm_samples_split, "PM samples that overlapped several kernels, split " \
                      "by overlap")                                        \
  X(pm_samples_unattributed, "PM samples that overlapped no kernel (idle, " \
                             "copies)")                                    \
  X(kernels_pm_sampled, "kernels given DRAM bytes by PM sampling "          \
                        "(pm-sampling (exact | attributed, error e%))")      \
  X(ops_received, "torch operators the ops route received (profile --ops "  \
                  "torch)")                                                  \
  X(ops_malformed, "operator ranges of the ops route that could not be "    \
                   "read (skipped)")                                         \
  X(kernels_from_ops, "kernels tied to an operator of the ops route")      \
  X(kernels_inherited_by_position, "kernels without their launch given "    \
                                   "the figures of the kernel in the same " \
                                   "place of a launched run of the same "   \
                                   "kernels")                               \
  X(kernels_position_ambiguous, "kernels without their launch left blank: " \
                                "the launched runs of the same kernels "    \
                                "around them disagree on their figures")

enum class ImportStat : int {
#define ROOFTRACE_STAT_ENUM_(name, meaning) k_##name,
  ROOFTRACE_IMPORT_STATS(ROOFTRACE_STAT_ENUM_)
#undef ROOFTRACE_STAT_ENUM_
      kCount
};

// Record kinds with per-kind counters; index = wire::RecordKind value.
inline constexpr int kNumRecordKinds = 9;
// "kernel", "memcpy", "gemm", "nvtx_range", "nvtx_mark", "counters",
// "launch", "device"; "unknown" for 0.
std::string_view RecordKindKey(int kind);

struct ImportStats {
  std::array<uint64_t, static_cast<int>(ImportStat::kCount)> values{};
  std::array<uint64_t, kNumRecordKinds> received{};
  std::array<uint64_t, kNumRecordKinds> producer_dropped{};
  std::array<uint64_t, kNumRecordKinds> producer_filtered{};
  std::array<uint64_t, kNumRecordKinds> unmatched{};

  uint64_t& operator[](ImportStat s) { return values[static_cast<int>(s)]; }
  uint64_t operator[](ImportStat s) const {
    return values[static_cast<int>(s)];
  }
  void Add(const ImportStats& other);
  // Every counter as (name, value), in declaration order, per-kind counters
  // for kinds 1..8; zero values included so a reader sees the full set.
  std::vector<std::pair<std::string, uint64_t>> Named() const;
  uint64_t TotalProducerDropped() const;

  bool operator==(const ImportStats&) const = default;
};

std::string_view ImportStatName(ImportStat s);
std::string_view ImportStatMeaning(ImportStat s);

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_IMPORT_STATS_H_
