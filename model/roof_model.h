// The roof model of DESIGN.md ("Annotation"): the roofs of a device (peak
// FLOP/s per precision class and DRAM bandwidth, from a calibrated device
// profile or the datasheet table), analytic GEMM FLOPs and minimum bytes from
// cuBLAS shapes, and the annotation of one kernel: arithmetic intensity,
// achieved FLOP/s and B/s, the roof at that intensity, the fraction of it
// reached, and what bounds the kernel.
//
// Used by the collector at ingest and by the analyzer to re-annotate a run
// against other roofs. Pure functions over plain data; thread-safe.
//
// The trap: analytic bytes are a lower bound on DRAM traffic, so an AI
// computed from them is an upper bound; the source of every number travels
// with it (`counters`, `analytic`, `inherited`, `none`) and reports must
// print it.
#ifndef ROOFTRACE_MODEL_ROOF_MODEL_H_
#define ROOFTRACE_MODEL_ROOF_MODEL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/datasheet.h"
#include "model/device_profile.h"
#include "model/gemm.h"

namespace rooftrace {

// The roofs one run is annotated with.
struct Roofs {
  // Dense peak per Precision (index = static_cast<int>(Precision)); 0 when
  // unknown or unsupported.
  std::array<double, kNumPrecisions> peak_flops_per_s{};
  double dram_bytes_per_s = 0;
  // 'calibrated:<profile path>' | 'datasheet:<key>' | 'none'.
  std::string source = "none";
  // 'calibrated' | 'datasheet' | '' (the store's roofs.source).
  std::string kind;
  std::string device_name;
  // The SM clock the compute peaks assume, in Hz: the datasheet's boost
  // clock, or a calibrated profile's maximum SM clock. 0 when not known.
  double sm_clock_hz = 0;
  // Set by ScaleRoofsToClock: one sentence on the clock of the compute roofs
  // (scaled, and from what; or why they were not). Empty when no measured
  // clock was given or it was not below sm_clock_hz.
  std::string clock_note;
  // The GPU-to-GPU link roof a collective's bus bandwidth is judged
  // against: bytes per second one GPU sends, one direction (NVLink, xGMI,
  // else the PCIe slot: model/datasheet.h DatasheetLink), and its name
  // ("NVLink 5 (18 links, 1.8 TB/s both ways)"). 0 when not known.
  double link_bytes_per_s = 0;
  std::string link_name;

  bool known() const { return dram_bytes_per_s > 0; }
  // The compute roof that applies to FLOPs of class `p`: its own peak, or
  // when that is not published, the peak of the unit that would run them
  // (fp64-tensor -> fp64, tf32-tensor -> fp32, fp8-tensor -> fp16/bf16-tensor,
  // fp16/bf16-tensor -> fp16). 0 when none is known.
  double Peak(Precision p) const;
  // Peak(p) / dram_bytes_per_s in FLOP/byte; 0 when either is unknown.
  double Ridge(Precision p) const;
  // The lowest compute peak the device has (of any precision); 0 when none
  // is known. Below its ridge a kernel is memory-bound whatever its
  // precision's own peak.
  double LowestPeak() const;
};

// Datasheet roofs for a CUDA device name ("NVIDIA H100 80GB HBM3") or a
// datasheet key; source 'none' and all zero when the GPU is unknown.
Roofs RoofsFromDatasheet(std::string_view device_name_or_key);
// Roofs of a calibrated profile loaded from `path` (measured figures, each
// falling back to the datasheet figure the profile carries).
Roofs RoofsFromProfile(const DeviceProfile& profile, const std::string& path);

// The roofs of kernels that ran at `measured_sm_clock_hz` (the SM clock a
// profiler measured them at: Nsight Compute locks it to base by default).
// When it is below the clock the roofs assume, every compute peak is scaled
// by measured / sm_clock_hz; the DRAM roof is not (locking the SM clock
// leaves the memory clock where it was). A clock at or above the roofs', or
// 0 (not measured), changes nothing. Roofs whose clock is unknown (a
// datasheet entry without a boost clock) stay unscaled, and clock_note says
// why.
Roofs ScaleRoofsToClock(Roofs roofs, double measured_sm_clock_hz);

// Where a number came from. Values only grow (stored as their names).
// kInherited: analytic figures of another kernel with the same signature,
// for a kernel without its op (pipeline/inherit.h). kSampled: counters of
// earlier launches of the same kernel signature, for a launch counters mode
// did not profile (pipeline/sampled.h); its rows say
// `counters (sampled k of n)`. kPmSampled: device-wide PM samples given to
// the kernel by time overlap (pipeline/pm_sampled.h); its rows say
// `pm-sampling (exact)` or `pm-sampling (attributed, error e%)`.
enum class Source {
  kNone = 0,
  kAnalytic = 1,
  kCounters = 2,
  kInherited = 3,
  kSampled = 4,
  kPmSampled = 5
};
// "none", "analytic", "counters", "inherited", "counters (sampled)" (a row
// of a sampled kernel carries its own label, with k and n).
std::string_view SourceName(Source s);
// Whether a stored source is a sampled one ("counters (sampled ...").
bool IsSampledSourceName(std::string_view stored);
// Whether a stored source is a PM-sampled one ("pm-sampling ...").
bool IsPmSampledSourceName(std::string_view stored);
// The attribution error a PM-sampled source states, as a fraction:
// "pm-sampling (attributed, error 12.5%)" -> 0.125; 0 for
// "pm-sampling (exact)" and any other text.
double PmSampledErrorFraction(std::string_view stored);

enum class Bound { kUnknown = 0, kMemory, kCompute, kLatency };
std::string_view BoundName(Bound b);  // "unknown", "memory", ...

// --------------------------------------------------------------- kernels

// What is known about one kernel execution. (The two sources sit side by
// side: one per kernel of a run is held until its rows are written, and
// padding after each would cost 8 bytes a kernel.)
struct KernelFacts {
  uint64_t duration_ns = 0;
  // FLOPs per Precision; all zero with flops_source kNone when unknown.
  std::array<uint64_t, kNumPrecisions> flops{};
  // DRAM bytes moved (read + write); unknown when bytes_source is kNone.
  uint64_t dram_bytes = 0;
  Source flops_source = Source::kNone;
  Source bytes_source = Source::kNone;
};

struct AnnotateOptions {
  // A kernel shorter than this that reaches less than `latency_fraction` of
  // both the compute roof and the bandwidth roof is latency / launch bound.
  uint64_t latency_max_ns = 20000;
  double latency_fraction = 0.10;
};

struct Annotation {
  // Class with the most FLOPs; kUnknown when there are none.
  Precision precision = Precision::kUnknown;
  std::optional<uint64_t> flops;           // all classes summed
  std::optional<double> ai;                // FLOP / byte
  std::optional<double> achieved_flops_per_s;
  std::optional<double> achieved_bytes_per_s;
  std::optional<double> roof_flops_per_s;  // min(P, AI * B)
  // achieved / roof, or bandwidth / B for kernels judged on bandwidth alone.
  std::optional<double> fraction_of_roof;
  Bound bound = Bound::kUnknown;
};

// Annotates one kernel against `roofs` (DESIGN.md "Annotation"):
//  - with FLOPs and bytes: AI = F/Q, roof = min(P, AI*B), fraction =
//    achieved / roof, bound memory when AI < ridge else compute;
//  - without FLOPs (copies, layout kernels): judged on bandwidth alone,
//    fraction = (Q/t) / B, bound memory;
//  - with FLOPs and bytes but no peak for their precision: memory-bound
//    on AI*B when AI is below the ridge of every roof the device has
//    (LowestPeak), else bound unknown, with fraction (Q/t) / B only when
//    that is above 1 (above any roof: a lower bound of its fraction);
//  - with FLOPs but no bytes: fraction = achieved / P, bound unknown;
//  - short kernels far below both roofs: latency;
//  - unknown roofs or zero duration: the achieved figures only, bound unknown.
Annotation Annotate(const KernelFacts& facts, const Roofs& roofs,
                    const AnnotateOptions& options = {});

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_ROOF_MODEL_H_
