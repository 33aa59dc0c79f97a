#include "libinject/kernel_filter.h"

#include <regex>

namespace rooftrace::inject {

struct KernelFilter::Regexes {
  bool has_include = false;
  bool has_exclude = false;
  std::regex include;
  std::regex exclude;
};

KernelFilter::KernelFilter() : regexes_(std::make_unique<Regexes>()) {}
KernelFilter::~KernelFilter() = default;
KernelFilter::KernelFilter(KernelFilter&&) noexcept = default;
KernelFilter& KernelFilter::operator=(KernelFilter&&) noexcept = default;

StatusOr<KernelFilter> KernelFilter::Create(const std::string& include,
                                            const std::string& exclude,
                                            uint64_t sample_every,
                                            uint64_t max_kernels) {
  KernelFilter filter;
  filter.sample_every_ = sample_every == 0 ? 1 : sample_every;
  filter.max_kernels_ = max_kernels;
  const char* which = "ROOFTRACE_KERNEL_INCLUDE";
  const std::string* pattern = &include;
  try {
    if (!include.empty()) {
      filter.regexes_->include =
          std::regex(include, std::regex::ECMAScript | std::regex::optimize);
      filter.regexes_->has_include = true;
    }
    which = "ROOFTRACE_KERNEL_EXCLUDE";
    pattern = &exclude;
    if (!exclude.empty()) {
      filter.regexes_->exclude =
          std::regex(exclude, std::regex::ECMAScript | std::regex::optimize);
      filter.regexes_->has_exclude = true;
    }
  } catch (const std::exception& e) {
    return InvalidArgument(std::string(which) + "='" + *pattern +
                           "' is not a valid ECMAScript regular expression (" +
                           e.what() + "): fix the pattern, e.g. 'gemm|attn'");
  }
  return filter;
}

bool KernelFilter::Keep(std::string_view name) {
  try {
    if (regexes_->has_include &&
        !std::regex_search(name.begin(), name.end(), regexes_->include)) {
      return false;
    }
    if (regexes_->has_exclude &&
        std::regex_search(name.begin(), name.end(), regexes_->exclude)) {
      return false;
    }
  } catch (const std::exception&) {
    return false;  // pathological pattern on this name: not recorded
  }
  const uint64_t index = candidates_++;
  if (index % sample_every_ != 0) return false;
  if (max_kernels_ != 0 && kept_ >= max_kernels_) return false;
  ++kept_;
  return true;
}

}  // namespace rooftrace::inject
