// Which kernels rooftrace keeps: the one kernel filter of both modes, built
// from the ROOFTRACE_* selection variables that Config (config.h) parsed.
// Trace mode asks it which kernel records to send (Keep(), on the sender
// thread, in the order CUPTI delivers them); counters mode asks it which
// launches to profile (Decide(), on the launching thread at API enter).
//
// Order of the checks, each one counted separately:
//   0. graph:  launches of CUDA graphs and launches made during stream
//              capture are never selected (counters mode; see
//              counters::CudaGraphNote())
//   1. name:   ROOFTRACE_KERNEL_INCLUDE must match (when set) and
//              ROOFTRACE_KERNEL_EXCLUDE must not. POSIX extended regular
//              expressions (regcomp(3) with REG_EXTENDED: `|`, `(...)`,
//              `[...]`, `.*`, `^`, `$`, `+`, `?`, `{n,m}`; no `\d`, `\w`
//              or lookaround), searched anywhere in the mangled and in the
//              demangled name; the verdict is cached per name.
//   1b. communication: with exclude_communication (counters mode's
//              default), kernels of multi-GPU communication (NCCL,
//              NVSHMEM, custom all-reduce; kCommunicationPattern) are not
//              selected
//   2. NVTX:   nvtx_include (ROOFTRACE_NVTX_INCLUDE, counters mode) must
//              match the launch's NVTX path "outer/inner"; a launch outside
//              every range never matches
//   3. sample: of the launches that passed 1 and 2, every N-th (the 1st,
//              N+1-th, ...)
//   4. max:    at most max_kernels selected (0 = no limit)
//
// Owned by whoever built it (the producer for trace mode, the counters
// runtime for counters mode). Thread-safe: the name cache is under a mutex
// (a new name costs one demangling, one regexec and one cache entry; a known
// name one hash lookup), the counts are atomics. Without a name regex no
// lock is taken. No exceptions: a bad pattern is an InvalidArgument from
// Create() naming the variable.
#ifndef ROOFTRACE_LIBINJECT_KERNEL_FILTER_H_
#define ROOFTRACE_LIBINJECT_KERNEL_FILTER_H_

#include <regex.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"
#include "proto/capture_records.h"

namespace rooftrace::inject {

struct KernelFilterConfig {
  std::string kernel_include;  // empty: every name
  std::string kernel_exclude;  // empty: none
  std::string nvtx_include;    // empty: no NVTX condition
  uint64_t sample_every = 1;
  uint64_t max_kernels = 0;  // 0: unlimited
  bool exclude_communication = false;
  // Counters mode, per kernel signature (LaunchInfo::signature): profile
  // its first `signature_first` launches, then one in `signature_every`
  // (0: none after the first ones); a signature marked unsettled (its
  // samples disagree, MarkUnsettled) one in signature_every / 10 (at least
  // every one). Both 0: off, every launch is a candidate.
  uint64_t signature_first = 0;
  uint64_t signature_every = 0;
};

enum class Selection {
  kSelected,
  kFilteredName,
  kFilteredCommunication,
  kFilteredNvtx,
  kFilteredSample,
  kFilteredMax,
  kFilteredGraph,  // graph launch or stream capture
  kFilteredSignature,  // its signature was sampled enough (counters mode)
};

struct LaunchInfo {
  std::string_view kernel_name;  // as CUPTI gives it (usually mangled)
  std::string_view nvtx_path;    // "" outside any NVTX range
  bool in_graph_or_capture = false;
  // Counters mode: the launch's kernel signature (KernelSignature); 0: none
  // (no per-signature sampling for it).
  uint64_t signature = 0;
};

struct FilterStats {
  uint64_t selected = 0;
  uint64_t filtered_name = 0;
  uint64_t filtered_communication = 0;
  uint64_t filtered_nvtx = 0;
  uint64_t filtered_sample = 0;
  uint64_t filtered_max = 0;
  uint64_t filtered_graph = 0;
  uint64_t filtered_signature = 0;
  uint64_t signatures = 0;  // distinct signatures seen
  uint64_t signatures_unsettled = 0;  // sampled more (MarkUnsettled)
  uint64_t Filtered() const {
    return filtered_name + filtered_communication + filtered_nvtx +
           filtered_sample + filtered_max + filtered_graph + filtered_signature;
  }
};

// Kernels that take part in multi-GPU communication (NCCL's ncclKernel_ /
// ncclDevKernel_, NVSHMEM, vLLM's and TensorRT-LLM's custom all-reduce and
// all-gather kernels). Counters mode does not profile them by default: the
// Range Profiler's auto range serializes and replays each profiled kernel
// on its own, and a collective that waits for its peers on other GPUs can
// then wait forever (CUPTI: kernel replay of launches that depend on each
// other can hang).
inline constexpr const char* kCommunicationPattern =
    "nccl|nvshmem|cross_device_reduce|[Aa]ll[Rr]educe|all_reduce|"
    "[Aa]ll[Gg]ather|all_gather|[Rr]educe[Ss]catter|reduce_scatter|"
    "[Aa]ll[Tt]o[Aa]ll|all_to_all";

class KernelFilter {
 public:
  // Errors name the variable, the pattern, what regcomp said and a good
  // example.
  static StatusOr<std::unique_ptr<KernelFilter>> Create(
      const KernelFilterConfig& config);
  ~KernelFilter();
  KernelFilter(const KernelFilter&) = delete;
  KernelFilter& operator=(const KernelFilter&) = delete;

  // Counters mode: decides for one launch and counts the verdict.
  Selection Decide(const LaunchInfo& launch);
  // Trace mode: Decide() for a kernel record (no NVTX path, no graph).
  bool Keep(std::string_view kernel_name) {
    return Decide(LaunchInfo{kernel_name, {}, false}) == Selection::kSelected;
  }

  // Counters mode (sender thread): the samples of `signature` disagree
  // beyond the tolerance, so its later launches are profiled ten times as
  // often. False when the signature is unknown or already marked.
  bool MarkUnsettled(uint64_t signature);

  FilterStats Stats() const;
  uint64_t kept() const { return selected_.load(std::memory_order_relaxed); }
  // True once max_kernels were selected.
  bool Exhausted() const;

 private:
  // A compiled POSIX regex (null when its pattern is empty).
  struct Regex {
    regex_t re{};
    bool compiled = false;
    ~Regex();
    bool Search(const std::string& text) const;
  };
  explicit KernelFilter(const KernelFilterConfig& config) : config_(config) {}
  Selection NameVerdict(std::string_view name);
  // The launch's ordinal within its signature (1 for the first); 0 when the
  // signature table is full (the launch is then a candidate like any).
  // `unsettled`: whether the signature was marked unsettled.
  uint64_t CountSignatureLaunch(uint64_t signature, bool* unsettled);
  bool SignatureSampled(uint64_t ordinal, bool unsettled) const;
  bool NvtxMatches(std::string_view path) const;

  const KernelFilterConfig config_;
  Regex include_, exclude_, communication_, nvtx_;
  bool any_name_condition_ = false;

  // Looked up by string_view without building a std::string per launch.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>()(s);
    }
  };
  std::mutex name_cache_mu_;  // guards name_cache_ only
  std::unordered_map<std::string, Selection, NameHash, std::equal_to<>>
      name_cache_;

  std::atomic<uint64_t> candidates_{0};  // passed name and NVTX
  std::atomic<uint64_t> selected_{0};
  std::atomic<uint64_t> filtered_name_{0};
  std::atomic<uint64_t> filtered_communication_{0};
  std::atomic<uint64_t> filtered_nvtx_{0};
  std::atomic<uint64_t> filtered_sample_{0};
  std::atomic<uint64_t> filtered_max_{0};
  std::atomic<uint64_t> filtered_graph_{0};
  std::atomic<uint64_t> filtered_signature_{0};
  std::atomic<uint64_t> signatures_{0};
  std::atomic<uint64_t> signatures_unsettled_{0};
  // Launches per signature: open addressing over a table made at creation
  // (no heap on the launching thread); a key, once set, never moves.
  struct SignatureSlot {
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> launches{0};
    std::atomic<bool> unsettled{false};
  };
  static constexpr size_t kSignatureSlots = size_t{1} << 16;
  std::unique_ptr<SignatureSlot[]> signature_slots_;
};

// A kernel launch's signature for per-signature sampling: its mangled name,
// grid, block and dynamic shared memory and, inside a hooked cuBLAS call,
// the call's shape (m, n, k, batch, types, transposes). Never 0.
uint64_t KernelSignature(std::string_view name, const uint32_t grid[3],
                         const uint32_t block[3], uint32_t dynamic_smem,
                         const GemmRecord* gemm);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_KERNEL_FILTER_H_
