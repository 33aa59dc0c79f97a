// Kernel names for people: demangling, a short display name, and the
// kernel family that groups template instances and launch variants
// (all `ampere_bf16_s16816gemm_*` tiles, all `flash_fwd_*` instances).
// Pure functions; thread-safe.
#ifndef ROOFTRACE_MODEL_KERNEL_NAMES_H_
#define ROOFTRACE_MODEL_KERNEL_NAMES_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace rooftrace {

// Itanium C++ demangling; returns the input unchanged when it is not a
// mangled name (C kernels, cuBLAS SASS names).
std::string Demangle(std::string_view mangled);

// The family of a kernel, from its mangled or demangled name. Rules:
//  - C++ kernels: the qualified name without template arguments, parameters
//    or return type ("flash_fwd_kernel<Traits<128>, true>(...)" ->
//    "flash_fwd_kernel"); "(anonymous namespace)" reads "{anon}".
//  - Wrappers cutlass::Kernel, cutlass::Kernel2, cutlass::device_kernel: the
//    wrapped kernel (its first template argument) is the family.
//  - NVIDIA library SASS names (ampere_*, volta_*, sm80_*, sm90_*, cutlass_*,
//    nvjet_*, ...): tokens up to the algorithm token ("...gemm", "gemv",
//    "conv"), else up to the first tile/stage/layout token:
//    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_..." -> "ampere_bf16_s16816gemm".
//  - Triton kernels lose their per-graph index: "triton_poi_fused_add_3" ->
//    "triton_poi_fused_add".
//  - PyTorch elementwise launchers (vectorized_, unrolled_, elementwise_kernel)
//    -> "at::native::elementwise_kernel<OP>" with OP the functor or the
//    launching function ("CUDAFunctor_add", "silu_kernel").
std::string KernelFamily(std::string_view name);

// A display name of at most `max_chars` characters: the name without
// template arguments (unwrapped like KernelFamily, elementwise kernels keep
// their operation); long names keep their head and tail around "...".
std::string ShortKernelName(std::string_view name, size_t max_chars = 60);

}  // namespace rooftrace

#endif  // ROOFTRACE_MODEL_KERNEL_NAMES_H_
