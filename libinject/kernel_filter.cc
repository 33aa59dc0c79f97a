#include "libinject/kernel_filter.h"

#include <cxxabi.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <unordered_map>

namespace rooftrace::inject {

struct KernelFilter::Regexes {
  bool has_include = false;
  bool has_exclude = false;
  std::regex include;
  std::regex exclude;
  // Regex verdict per distinct mangled name (kernels repeat by the million).
  std::unordered_map<std::string, bool> verdicts;
};

namespace {
// "_Z5scalePffi" -> "scale(float*, float, int)"; the name itself when it
// is not a mangled C++ name.
std::string Demangle(const std::string& name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string result(out);
  std::free(out);
  return result;
}
}  // namespace

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
  if (regexes_->has_include || regexes_->has_exclude) {
    const std::string key(name);
    auto it = regexes_->verdicts.find(key);
    if (it == regexes_->verdicts.end()) {
      bool pass = true;
      try {
        // A pattern matches when it is found in the mangled or the
        // demangled name ("gemm" and "scale(float" both work).
        const std::string demangled = Demangle(key);
        auto found = [&](const std::regex& re) {
          return std::regex_search(key, re) || std::regex_search(demangled, re);
        };
        if (regexes_->has_include && !found(regexes_->include)) pass = false;
        if (pass && regexes_->has_exclude && found(regexes_->exclude)) {
          pass = false;
        }
      } catch (const std::exception&) {
        pass = false;  // pathological pattern on this name: not recorded
      }
      it = regexes_->verdicts.emplace(key, pass).first;
    }
    if (!it->second) return false;
  }
  const uint64_t index = candidates_++;
  if (index % sample_every_ != 0) return false;
  if (max_kernels_ != 0 && kept_ >= max_kernels_) return false;
  ++kept_;
  return true;
}

}  // namespace rooftrace::inject
