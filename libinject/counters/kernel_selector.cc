#include "libinject/counters/kernel_selector.h"

#include <charconv>

namespace rooftrace::counters {
namespace {

// Parses an unsigned decimal; nullopt for anything else (sign, spaces,
// overflow, trailing text).
std::optional<uint64_t> ParseCount(std::string_view s) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

StatusOr<std::optional<std::regex>> Compile(const char* var,
                                            const std::string& pattern) {
  if (pattern.empty()) return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(
        std::regex(pattern, std::regex::ECMAScript | std::regex::optimize));
  } catch (const std::regex_error& e) {
    return InvalidArgument(std::string(var) + "='" + pattern +
                           "' is not a valid ECMAScript regular expression (" +
                           e.what() + "): fix the pattern, e.g. " + var +
                           "='gemm|attention'");
  }
}

}  // namespace

StatusOr<SelectorConfig> SelectorConfigFromEnv(
    const std::function<const char*(const char*)>& get_env) {
  SelectorConfig c;
  auto str = [&](const char* name) {
    const char* v = get_env(name);
    return std::string(v ? v : "");
  };
  c.kernel_include = str("ROOFTRACE_KERNEL_INCLUDE");
  c.kernel_exclude = str("ROOFTRACE_KERNEL_EXCLUDE");
  c.nvtx_include = str("ROOFTRACE_NVTX_INCLUDE");
  const std::string every = str("ROOFTRACE_SAMPLE_EVERY");
  if (!every.empty()) {
    std::optional<uint64_t> n = ParseCount(every);
    if (!n || *n == 0) {
      return InvalidArgument("ROOFTRACE_SAMPLE_EVERY='" + every +
                             "' is not a positive integer: use e.g. "
                             "ROOFTRACE_SAMPLE_EVERY=10 to profile every "
                             "10th launch");
    }
    c.sample_every = *n;
  }
  const std::string max = str("ROOFTRACE_MAX_KERNELS");
  if (!max.empty()) {
    std::optional<uint64_t> n = ParseCount(max);
    if (!n) {
      return InvalidArgument("ROOFTRACE_MAX_KERNELS='" + max +
                             "' is not a non-negative integer: use e.g. "
                             "ROOFTRACE_MAX_KERNELS=1000 (0 = no limit)");
    }
    c.max_kernels = *n;
  }
  return c;
}

StatusOr<std::unique_ptr<KernelSelector>> KernelSelector::Create(
    const SelectorConfig& config) {
  if (config.sample_every == 0) {
    return InvalidArgument("sample_every must be at least 1");
  }
  std::unique_ptr<KernelSelector> s(new KernelSelector(config));
  RT_ASSIGN_OR_RETURN(
      s->include_, Compile("ROOFTRACE_KERNEL_INCLUDE", config.kernel_include));
  RT_ASSIGN_OR_RETURN(
      s->exclude_, Compile("ROOFTRACE_KERNEL_EXCLUDE", config.kernel_exclude));
  RT_ASSIGN_OR_RETURN(s->nvtx_,
                      Compile("ROOFTRACE_NVTX_INCLUDE", config.nvtx_include));
  return s;
}

bool KernelSelector::NameMatches(std::string_view name,
                                 std::string_view demangled) {
  if (!include_ && !exclude_) return true;
  std::lock_guard<std::mutex> lock(name_cache_mu_);
  auto it = name_cache_.find(name);
  if (it != name_cache_.end()) return it->second;
  auto found = [&](const std::regex& re) {
    return std::regex_search(name.begin(), name.end(), re) ||
           (!demangled.empty() &&
            std::regex_search(demangled.begin(), demangled.end(), re));
  };
  bool ok = (!include_ || found(*include_)) && (!exclude_ || !found(*exclude_));
  name_cache_.emplace(std::string(name), ok);
  return ok;
}

Selection KernelSelector::Decide(const LaunchInfo& launch) {
  if (launch.in_graph_or_capture) {
    filtered_graph_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredGraph;
  }
  if (!NameMatches(launch.kernel_name, launch.demangled_name)) {
    filtered_name_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredName;
  }
  if (nvtx_) {
    // NVTX paths change per launch: not cached.
    if (launch.nvtx_path.empty() ||
        !std::regex_search(launch.nvtx_path.begin(), launch.nvtx_path.end(),
                           *nvtx_)) {
      filtered_nvtx_.fetch_add(1, std::memory_order_relaxed);
      return Selection::kFilteredNvtx;
    }
  }
  const uint64_t index = candidates_.fetch_add(1, std::memory_order_relaxed);
  if (index % config_.sample_every != 0) {
    filtered_sample_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredSample;
  }
  if (config_.max_kernels != 0) {
    // Claim a slot; give it back if the limit was already reached.
    uint64_t n = profiled_.load(std::memory_order_relaxed);
    do {
      if (n >= config_.max_kernels) {
        filtered_max_.fetch_add(1, std::memory_order_relaxed);
        return Selection::kFilteredMax;
      }
    } while (
        !profiled_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    return Selection::kProfile;
  }
  profiled_.fetch_add(1, std::memory_order_relaxed);
  return Selection::kProfile;
}

SelectorStats KernelSelector::Stats() const {
  SelectorStats s;
  s.profiled = profiled_.load(std::memory_order_relaxed);
  s.filtered_name = filtered_name_.load(std::memory_order_relaxed);
  s.filtered_nvtx = filtered_nvtx_.load(std::memory_order_relaxed);
  s.filtered_sample = filtered_sample_.load(std::memory_order_relaxed);
  s.filtered_max = filtered_max_.load(std::memory_order_relaxed);
  s.filtered_graph = filtered_graph_.load(std::memory_order_relaxed);
  return s;
}

bool KernelSelector::Exhausted() const {
  return config_.max_kernels != 0 &&
         profiled_.load(std::memory_order_relaxed) >= config_.max_kernels;
}

}  // namespace rooftrace::counters
