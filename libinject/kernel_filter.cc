#include "libinject/kernel_filter.h"

#include <cxxabi.h>

#include <cstdlib>

namespace rooftrace::inject {

namespace {

// "_Z5scalePffi" -> "scale(float*, float, int)"; "" when `name` is not a
// mangled C++ name.
std::string Demangle(const std::string& name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string result = (status == 0 && out != nullptr) ? out : "";
  std::free(out);
  return result;
}

Status Compile(const char* variable, const std::string& pattern, regex_t* re) {
  const int rc = regcomp(re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) return OkStatus();
  char why[256];
  regerror(rc, re, why, sizeof why);
  return InvalidArgument(
      std::string(variable) + "='" + pattern +
      "' is not a valid POSIX extended regular expression (" + why +
      "): fix the pattern, e.g. " + variable + "='gemm|attention'");
}

}  // namespace

KernelFilter::Regex::~Regex() {
  if (compiled) regfree(&re);
}

bool KernelFilter::Regex::Search(const std::string& text) const {
  // regexec fails only when it runs out of memory (REG_ESPACE): treated as
  // no match.
  return regexec(&re, text.c_str(), 0, nullptr, 0) == 0;
}

KernelFilter::~KernelFilter() = default;

StatusOr<std::unique_ptr<KernelFilter>> KernelFilter::Create(
    const KernelFilterConfig& config) {
  if (config.sample_every == 0) {
    return InvalidArgument("sample_every must be at least 1");
  }
  std::unique_ptr<KernelFilter> f(new KernelFilter(config));
  const struct {
    const char* variable;
    const std::string& pattern;
    Regex* regex;
  } patterns[] = {
      {"ROOFTRACE_KERNEL_INCLUDE", config.kernel_include, &f->include_},
      {"ROOFTRACE_KERNEL_EXCLUDE", config.kernel_exclude, &f->exclude_},
      {"ROOFTRACE_NVTX_INCLUDE", config.nvtx_include, &f->nvtx_},
  };
  for (const auto& p : patterns) {
    if (p.pattern.empty()) continue;
    RT_RETURN_IF_ERROR(Compile(p.variable, p.pattern, &p.regex->re));
    p.regex->compiled = true;
  }
  if (config.exclude_communication) {
    RT_RETURN_IF_ERROR(Compile("kCommunicationPattern", kCommunicationPattern,
                               &f->communication_.re));
    f->communication_.compiled = true;
  }
  f->any_name_condition_ = f->include_.compiled || f->exclude_.compiled ||
                           f->communication_.compiled;
  return f;
}

Selection KernelFilter::NameVerdict(std::string_view name) {
  std::lock_guard<std::mutex> lock(name_cache_mu_);
  auto it = name_cache_.find(name);
  if (it != name_cache_.end()) return it->second;
  std::string key(name);
  // A pattern matches when it is found in the mangled or the demangled name
  // ("gemm" and "scale\(float" both work).
  const std::string demangled = Demangle(key);
  auto found = [&](const Regex& re) {
    return re.Search(key) || (!demangled.empty() && re.Search(demangled));
  };
  Selection verdict = Selection::kSelected;
  if ((include_.compiled && !found(include_)) ||
      (exclude_.compiled && found(exclude_))) {
    verdict = Selection::kFilteredName;
  } else if (communication_.compiled && found(communication_)) {
    verdict = Selection::kFilteredCommunication;
  }
  name_cache_.emplace(std::move(key), verdict);
  return verdict;
}

bool KernelFilter::NvtxMatches(std::string_view path) const {
  if (path.empty()) return false;
  // NVTX paths change per launch: not cached. The copy reuses this
  // thread's buffer.
  thread_local std::string text;
  text.assign(path);
  return nvtx_.Search(text);
}

Selection KernelFilter::Decide(const LaunchInfo& launch) {
  if (launch.in_graph_or_capture) {
    filtered_graph_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredGraph;
  }
  if (any_name_condition_) {
    const Selection verdict = NameVerdict(launch.kernel_name);
    if (verdict == Selection::kFilteredName) {
      filtered_name_.fetch_add(1, std::memory_order_relaxed);
      return verdict;
    }
    if (verdict == Selection::kFilteredCommunication) {
      filtered_communication_.fetch_add(1, std::memory_order_relaxed);
      return verdict;
    }
  }
  if (nvtx_.compiled && !NvtxMatches(launch.nvtx_path)) {
    filtered_nvtx_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredNvtx;
  }
  const uint64_t index = candidates_.fetch_add(1, std::memory_order_relaxed);
  if (index % config_.sample_every != 0) {
    filtered_sample_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredSample;
  }
  if (config_.max_kernels == 0) {
    selected_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kSelected;
  }
  // Claim a slot; none is left once the limit is reached.
  uint64_t n = selected_.load(std::memory_order_relaxed);
  do {
    if (n >= config_.max_kernels) {
      filtered_max_.fetch_add(1, std::memory_order_relaxed);
      return Selection::kFilteredMax;
    }
  } while (
      !selected_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  return Selection::kSelected;
}

FilterStats KernelFilter::Stats() const {
  FilterStats s;
  s.selected = selected_.load(std::memory_order_relaxed);
  s.filtered_name = filtered_name_.load(std::memory_order_relaxed);
  s.filtered_communication =
      filtered_communication_.load(std::memory_order_relaxed);
  s.filtered_nvtx = filtered_nvtx_.load(std::memory_order_relaxed);
  s.filtered_sample = filtered_sample_.load(std::memory_order_relaxed);
  s.filtered_max = filtered_max_.load(std::memory_order_relaxed);
  s.filtered_graph = filtered_graph_.load(std::memory_order_relaxed);
  return s;
}

bool KernelFilter::Exhausted() const {
  return config_.max_kernels != 0 &&
         selected_.load(std::memory_order_relaxed) >= config_.max_kernels;
}

}  // namespace rooftrace::inject
