// Which kernel launches counters mode profiles. Profiled launches are
// serialized and replayed once per pass; every other launch runs untouched,
// so selection is the overhead control (like ncu's --kernel-name,
// --launch-skip/--launch-count and --nvtx-include).
//
// Order of the checks, each one counted separately:
//   1. name:   ROOFTRACE_KERNEL_INCLUDE must match (when set) and
//              ROOFTRACE_KERNEL_EXCLUDE must not (ECMAScript, searched in
//              the mangled and the demangled name, as trace mode does)
//   2. NVTX:   ROOFTRACE_NVTX_INCLUDE must match the launch's NVTX path
//              ("outer/inner"); a launch outside any range never matches
//   3. sample: of the launches that passed 1 and 2, every N-th
//              (ROOFTRACE_SAMPLE_EVERY, the 1st, N+1-th, ...)
//   4. max:    at most ROOFTRACE_MAX_KERNELS profiled (0 = no limit)
// Graph-node launches and launches during stream capture are never
// profiled (see CudaGraphNote()).
//
// Thread-safe: Decide() is called from any application thread. Regex
// results are cached per kernel name (one allocation per new name, under a
// mutex); counters are atomics. std::regex throws on a bad pattern: Create()
// catches it and returns InvalidArgument, nothing throws past it.
#ifndef ROOFTRACE_LIBINJECT_COUNTERS_KERNEL_SELECTOR_H_
#define ROOFTRACE_LIBINJECT_COUNTERS_KERNEL_SELECTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"

namespace rooftrace::counters {

struct SelectorConfig {
  std::string kernel_include;  // empty: every name
  std::string kernel_exclude;  // empty: none
  std::string nvtx_include;    // empty: no NVTX condition
  uint64_t sample_every = 1;
  uint64_t max_kernels = 0;  // 0: unlimited
};

// Reads the ROOFTRACE_* selection variables through `get_env` (getenv in
// libinject, a map in tests). Bad values fail with the variable, the value
// and an example of a good one.
StatusOr<SelectorConfig> SelectorConfigFromEnv(
    const std::function<const char*(const char*)>& get_env);

enum class Selection {
  kProfile,
  kFilteredName,
  kFilteredNvtx,
  kFilteredSample,
  kFilteredMax,
  kFilteredGraph,  // graph node or stream capture
};

struct LaunchInfo {
  std::string_view kernel_name;  // as CUPTI gives it (usually mangled)
  std::string_view nvtx_path;    // "" outside any NVTX range
  bool in_graph_or_capture = false;
  // The demangled name when libinject has it ("" otherwise). The cache is
  // keyed by kernel_name, so this must be a function of kernel_name.
  std::string_view demangled_name = {};
};

struct SelectorStats {
  uint64_t profiled = 0;
  uint64_t filtered_name = 0;
  uint64_t filtered_nvtx = 0;
  uint64_t filtered_sample = 0;
  uint64_t filtered_max = 0;
  uint64_t filtered_graph = 0;
  uint64_t Filtered() const {
    return filtered_name + filtered_nvtx + filtered_sample + filtered_max +
           filtered_graph;
  }
};

class KernelSelector {
 public:
  static StatusOr<std::unique_ptr<KernelSelector>> Create(
      const SelectorConfig& config);

  Selection Decide(const LaunchInfo& launch);
  SelectorStats Stats() const;
  // True once max_kernels launches were profiled: libinject can stop
  // calling into counters mode at all.
  bool Exhausted() const;

 private:
  explicit KernelSelector(const SelectorConfig& config) : config_(config) {}
  bool NameMatches(std::string_view name, std::string_view demangled);

  SelectorConfig config_;
  std::optional<std::regex> include_;
  std::optional<std::regex> exclude_;
  std::optional<std::regex> nvtx_;

  // Looked up by string_view without building a std::string per launch.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>()(s);
    }
  };
  std::mutex name_cache_mu_;  // guards name_cache_ only
  std::unordered_map<std::string, bool, NameHash, std::equal_to<>> name_cache_;

  std::atomic<uint64_t> candidates_{0};  // passed name and NVTX
  std::atomic<uint64_t> profiled_{0};
  std::atomic<uint64_t> filtered_name_{0};
  std::atomic<uint64_t> filtered_nvtx_{0};
  std::atomic<uint64_t> filtered_sample_{0};
  std::atomic<uint64_t> filtered_max_{0};
  std::atomic<uint64_t> filtered_graph_{0};
};

}  // namespace rooftrace::counters

#endif  // ROOFTRACE_LIBINJECT_COUNTERS_KERNEL_SELECTOR_H_
