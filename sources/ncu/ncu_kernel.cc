#include "sources/ncu/ncu_kernel.h"

#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

namespace rooftrace::ncu {
namespace {

constexpr std::string_view kSol = "GPU Speed Of Light Throughput";
constexpr std::string_view kTensorOps = "sm__ops_path_tensor_";

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

uint64_t ToU64(double v) {
  return v <= 0 ? 0 : v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(
                                                      std::llround(v));
}
uint32_t ToU32(double v) {
  return v <= 0 ? 0 : v >= 4294967295.0 ? UINT32_MAX
                                        : static_cast<uint32_t>(
                                              std::llround(v));
}

// A kernel's metrics by name (the first of a name wins) and by
// "section/name" for the human-named metrics of ncu's sections.
class Lookup {
 public:
  explicit Lookup(const Kernel& k) {
    for (const Metric& m : k.metrics) {
      by_name_.try_emplace(m.name, &m);
      if (!m.section.empty()) by_name_.try_emplace(m.section + "/" + m.name, &m);
    }
  }
  const Metric* Find(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : it->second;
  }
  std::optional<double> Number(std::string_view name) const {
    const Metric* m = Find(name);
    return m ? ParseNumber(m->value) : std::nullopt;
  }
  // The value in bytes, ns, Hz or a count; per-block units ("byte/block")
  // read as their numerator's.
  std::optional<double> Base(std::string_view name, Dimension d) const {
    const Metric* m = Find(name);
    if (m == nullptr) return std::nullopt;
    const std::optional<double> v = ParseNumber(m->value);
    if (!v) return std::nullopt;
    std::string_view unit = m->unit;
    if (EndsWith(unit, "/block")) unit.remove_suffix(6);
    return ToBase(*v, unit, d);
  }

 private:
  std::unordered_map<std::string, const Metric*> by_name_;
};

void DeriveBytesAndTime(const Lookup& l, KernelFacts* f) {
  // GB20x (RTX Blackwell) names them dram__bytes_op_read / _write.
  auto read = l.Base("dram__bytes_read.sum", Dimension::kBytes);
  auto write = l.Base("dram__bytes_write.sum", Dimension::kBytes);
  if (!read && !write) {
    read = l.Base("dram__bytes_op_read.sum", Dimension::kBytes);
    write = l.Base("dram__bytes_op_write.sum", Dimension::kBytes);
  }
  const auto total = l.Base("dram__bytes.sum", Dimension::kBytes);
  if (read || write) {
    f->dram_read_bytes = ToU64(read.value_or(0));
    f->dram_write_bytes = ToU64(write.value_or(0));
  } else if (total) {
    f->dram_read_bytes = ToU64(*total);
    f->dram_write_bytes = 0;
    f->dram_total_only = true;
  }
  if (auto t = l.Base("gpu__time_duration.sum", Dimension::kNanoseconds)) {
    f->duration_ns = ToU64(*t);
    f->duration_from = "gpu__time_duration.sum";
  } else if (auto d = l.Base(std::string(kSol) + "/Duration",
                             Dimension::kNanoseconds)) {
    f->duration_ns = ToU64(*d);
    f->duration_from = std::string(kSol) + " Duration";
  } else {
    const auto cycles = l.Base("sm__cycles_elapsed.avg", Dimension::kCount);
    const auto hz =
        l.Base("sm__cycles_elapsed.avg.per_second", Dimension::kHertz);
    if (cycles && hz && *hz > 0) {
      f->duration_ns = ToU64(*cycles / *hz * 1e9);
      f->duration_from =
          "sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second";
    }
  }
  if (auto hz = l.Base("sm__cycles_elapsed.avg.per_second", Dimension::kHertz)) {
    f->sm_clock_hz = *hz;
  } else if (auto sol = l.Base(std::string(kSol) + "/SM Frequency",
                               Dimension::kHertz)) {
    f->sm_clock_hz = *sol;
  }
}

void DeriveCudaCoreFlops(const Lookup& l, KernelFacts* f) {
  struct Op {
    std::string_view op;
    Precision precision;
    uint64_t flops;
  };
  static constexpr Op kOps[] = {
      {"dadd", Precision::kFp64, 1}, {"dmul", Precision::kFp64, 1},
      {"dfma", Precision::kFp64, 2}, {"fadd", Precision::kFp32, 1},
      {"fmul", Precision::kFp32, 1}, {"ffma", Precision::kFp32, 2},
      {"hadd", Precision::kFp16, 1}, {"hmul", Precision::kFp16, 1},
      {"hfma", Precision::kFp16, 2}};
  for (const Op& op : kOps) {
    for (std::string_view unit : {"smsp__", "sm__"}) {
      const std::string name = std::string(unit) +
                               "sass_thread_inst_executed_op_" +
                               std::string(op.op) + "_pred_on.sum";
      const auto v = l.Base(name, Dimension::kCount);
      if (!v) continue;
      f->flops[static_cast<size_t>(op.precision)] += ToU64(*v) * op.flops;
      f->has_flops = true;
      break;
    }
  }
}

// The precision class of a tensor-path source type ("bf16_dst_fp32");
// kUnknown for the types rooftrace has no roof for. UTCQMMA's
// "fp4_fp6_fp8" is booked as fp8, as libinject's counters mode does.
Precision TensorPrecision(std::string_view spec) {
  if (StartsWith(spec, "fp16") || StartsWith(spec, "bf16")) {
    return Precision::kFp16Tensor;
  }
  if (StartsWith(spec, "tf32")) return Precision::kTf32Tensor;
  if (spec.find("fp8") != std::string_view::npos) return Precision::kFp8Tensor;
  if (StartsWith(spec, "int8")) return Precision::kInt8Tensor;
  if (StartsWith(spec, "fp64")) return Precision::kFp64Tensor;
  return Precision::kUnknown;
}

// One tensor-path op counter: sm__ops_path_tensor_src_<spec>.sum (all
// instructions, source level) or sm__ops_path_tensor_op_<inst>_src_<spec>
// .sum (one instruction kind: hmma, hgmma, utchmma, ...).
struct TensorCounter {
  std::string inst;  // empty: source level
  std::string spec;  // "bf16_dst_fp32_sparsity_off"
  double ops = 0;
};

std::optional<TensorCounter> ParseTensorCounter(std::string_view name,
                                                const Lookup& l) {
  if (!StartsWith(name, kTensorOps) || !EndsWith(name, ".sum")) {
    return std::nullopt;
  }
  std::string_view rest = name.substr(kTensorOps.size());
  rest.remove_suffix(4);
  TensorCounter c;
  if (StartsWith(rest, "src_")) {
    c.spec = rest.substr(4);
  } else if (StartsWith(rest, "op_")) {
    const size_t src = rest.find("_src_");
    if (src == std::string_view::npos) return std::nullopt;
    c.inst = rest.substr(3, src - 3);
    c.spec = rest.substr(src + 5);
  } else {
    return std::nullopt;
  }
  const auto v = l.Base(name, Dimension::kCount);
  if (!v) return std::nullopt;
  c.ops = *v;
  return c;
}

void DeriveTensorFlops(const Kernel& k, const Lookup& l, KernelFacts* f) {
  std::vector<TensorCounter> counters;
  bool tensor_instructions = false;
  for (const Metric& m : k.metrics) {
    if (auto c = ParseTensorCounter(m.name, l)) {
      counters.push_back(std::move(*c));
    } else if (StartsWith(m.name, "sm__inst_executed_pipe_tensor") &&
               EndsWith(m.name, ".sum")) {
      const auto v = ParseNumber(m.value);
      tensor_instructions |= v && *v > 0;
    }
  }
  auto source_type = [](const std::string& spec) {
    return spec.substr(0, spec.find('_'));
  };
  for (const TensorCounter& c : counters) {
    bool skip = false;
    for (const TensorCounter& o : counters) {
      // A part of a wider counter of the same level ("fp16" beside
      // "fp16_dst_fp32", "..._sparsity_off"): not added again.
      skip |= o.inst == c.inst && o.spec.size() < c.spec.size() &&
              StartsWith(c.spec, o.spec) && c.spec[o.spec.size()] == '_';
      // An instruction kind's share of a source-level total.
      skip |= !c.inst.empty() && o.inst.empty() &&
              source_type(o.spec) == source_type(c.spec);
    }
    const Precision p = TensorPrecision(c.spec);
    if (skip || p == Precision::kUnknown) continue;
    f->flops[static_cast<size_t>(p)] += ToU64(c.ops);
    f->has_flops = f->has_tensor_flops = true;
  }
  f->tensor_instructions_without_flops =
      tensor_instructions && !f->has_tensor_flops;
}

void DeriveLaunch(const Kernel& k, const Lookup& l, KernelFacts* f) {
  auto dim3 = [&](const std::string& column, std::string_view prefix,
                  std::string_view section_name) {
    if (auto d = ParseDim3(column)) return *d;
    std::array<uint32_t, 3> out = {0, 0, 0};
    const char* axes[] = {"x", "y", "z"};
    for (size_t i = 0; i < 3; ++i) {
      const auto v = l.Number(std::string(prefix) + axes[i]);
      if (v) out[i] = ToU32(*v);
    }
    if (out[0] != 0) return out;
    if (const Metric* m = l.Find(std::string("Launch Statistics/") +
                                 std::string(section_name))) {
      if (auto d = ParseDim3(m->value)) return *d;
    }
    return out;
  };
  f->grid = dim3(k.grid_size, "launch__grid_dim_", "Grid Size");
  f->block = dim3(k.block_size, "launch__block_dim_", "Block Size");
  auto first = [&](std::initializer_list<std::string_view> names,
                   Dimension d) -> uint32_t {
    for (std::string_view n : names) {
      if (auto v = l.Base(n, d)) return ToU32(*v);
    }
    return 0;
  };
  // "register/thread": a count whatever ncu calls its unit.
  for (std::string_view n : {"launch__registers_per_thread",
                             "Launch Statistics/Registers Per Thread"}) {
    if (auto v = l.Number(n)) {
      f->registers_per_thread = ToU32(*v);
      break;
    }
  }
  f->static_shared_bytes =
      first({"launch__shared_mem_per_block_static",
             "Launch Statistics/Static Shared Memory Per Block"},
            Dimension::kBytes);
  f->dynamic_shared_bytes =
      first({"launch__shared_mem_per_block_dynamic",
             "Launch Statistics/Dynamic Shared Memory Per Block"},
            Dimension::kBytes);
  if (const Metric* m = l.Find("device__attribute_display_name")) {
    f->device_name = m->value;
  }
}

}  // namespace

KernelFacts DeriveFacts(const Kernel& kernel) {
  const Lookup l(kernel);
  KernelFacts f;
  DeriveBytesAndTime(l, &f);
  DeriveCudaCoreFlops(l, &f);
  DeriveTensorFlops(kernel, l, &f);
  DeriveLaunch(kernel, l, &f);
  return f;
}

bool IsDescriptiveMetric(std::string_view name) {
  for (std::string_view p :
       {"device__attribute_", "launch__", "nvlink__", "numa__", "c2clink__",
        "profiler__", "pmsampling:"}) {
    if (StartsWith(name, p)) return true;
  }
  return false;
}

}  // namespace rooftrace::ncu
