// Kernel names for people: demangling, a short display name, and the
// kernel family that groups template instances and launch variants
// (all `ampere_bf16_s16816gemm_*` tiles, all `flash_fwd_*` instances).
// Pure functions; thread-safe.
#ifndef ROOFTRACE_COLLECTOR_KERNEL_NAMES_H_
#define ROOFTRACE_COLLECTOR_KERNEL_NAMES_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace rooftrace {

// Itanium C++ demangling; returns the input unchanged when it is not a
// mangled name (C kernels, cuBLAS SASS names).
std::string Demangle(std::string_view mangled);

// The family of a kernel, from its mangled or demangled name.
std::string KernelFamily(std::string_view name);

// A display name of at most `max_chars` characters.
std::string ShortKernelName(std::string_view name, size_t max_chars = 60);

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_KERNEL_NAMES_H_
