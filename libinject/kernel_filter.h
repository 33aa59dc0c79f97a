// Which kernel records are kept: the name regexes (include / exclude,
// ECMAScript, searched anywhere in the mangled or the demangled name; the
// verdict is cached per distinct name), then every N-th of the remaining
// launches, then at most M kernels.
//
// Used by the sender thread only; not thread-safe. The one file of libinject
// compiled with exceptions, because std::regex reports bad patterns by
// throwing: they are caught here and returned as a Status.
#ifndef ROOFTRACE_LIBINJECT_KERNEL_FILTER_H_
#define ROOFTRACE_LIBINJECT_KERNEL_FILTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rooftrace::inject {

class KernelFilter {
 public:
  KernelFilter();
  ~KernelFilter();
  KernelFilter(KernelFilter&&) noexcept;
  KernelFilter& operator=(KernelFilter&&) noexcept;

  // Errors name ROOFTRACE_KERNEL_INCLUDE / _EXCLUDE and the pattern.
  static StatusOr<KernelFilter> Create(const std::string& include,
                                       const std::string& exclude,
                                       uint64_t sample_every,
                                       uint64_t max_kernels);

  // Decides for one kernel, in arrival order. Counts what it keeps.
  bool Keep(std::string_view name);

  uint64_t kept() const { return kept_; }

 private:
  struct Regexes;
  std::unique_ptr<Regexes> regexes_;
  uint64_t sample_every_ = 1;
  uint64_t max_kernels_ = 0;
  uint64_t candidates_ = 0;  // passed the regexes
  uint64_t kept_ = 0;
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_KERNEL_FILTER_H_
