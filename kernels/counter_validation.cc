#include "kernels/counter_validation.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "kernels/formulas.h"
#include "store/store_reader.h"

namespace rooftrace::kernels {
namespace {

std::string ShapeTag(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k);
}

// The innermost path component that is a rooftrace range, or "".
std::string ReferenceRange(const std::string& path) {
  std::string found;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.rfind("rooftrace:", 0) == 0) found = part;
    start = end + 1;
  }
  return found;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<ExpectedCounts> ExpectedReferenceCounts(
    const CalibrationResult& r) {
  std::vector<ExpectedCounts> out;
  for (const StreamRun& s : r.stream) {
    ExpectedCounts e;
    e.range = "rooftrace:stream_" + s.kernel;
    e.kernel = "stream_" + s.kernel + " n=" + std::to_string(s.elements);
    e.dram_bytes = s.Bytes();
    if (s.kernel == "triad") e.flops = StreamTriadFlops(s.elements);
    out.push_back(e);
  }
  for (const OwnKernelRun& o : r.own) {
    if (o.status != StepStatus::kOk) continue;
    ExpectedCounts e;
    e.range = "rooftrace:" + o.kernel + "_" + ShapeTag(o.shape);
    e.kernel = o.kernel + " " + ShapeTag(o.shape);
    e.flops = o.Flops();
    out.push_back(e);
  }
  return out;
}

std::vector<CounterValidation> ValidateCounters(
    const CalibrationResult& r, const std::vector<CountedKernel>& kernels) {
  std::map<std::string, std::vector<double>> flops, bytes;
  for (const CountedKernel& k : kernels) {
    const std::string range = ReferenceRange(k.nvtx_path);
    if (range.empty()) continue;
    if (k.flops) flops[range].push_back(*k.flops);
    if (k.dram_bytes) bytes[range].push_back(*k.dram_bytes);
  }
  std::vector<CounterValidation> out;
  for (const ExpectedCounts& e : ExpectedReferenceCounts(r)) {
    if (e.flops && flops.count(e.range)) {
      out.push_back({e.kernel, "flops", *e.flops, Median(flops[e.range])});
    }
    if (e.dram_bytes && bytes.count(e.range)) {
      out.push_back(
          {e.kernel, "dram_bytes", *e.dram_bytes, Median(bytes[e.range])});
    }
  }
  return out;
}

StatusOr<std::vector<CountedKernel>> ReadCountedKernels(
    const std::string& store_path, int64_t run_id) {
  if (!std::filesystem::exists(store_path)) {
    return NotFound(store_path +
                    ": no such store; record one with `rooftrace profile "
                    "--mode counters -o " + store_path +
                    " -- rooftrace calibrate --quick ...`");
  }
  StoreReader store;
  RT_RETURN_IF_ERROR(store.Open(store_path, store_path));
  RT_ASSIGN_OR_RETURN(
      const RunRow run,
      store.ResolveRun(run_id >= 0 ? std::optional<int64_t>(run_id)
                                   : std::nullopt));
  std::vector<CountedKernel> out;
  RT_RETURN_IF_ERROR(store.ForEachKernel(run.run_id, [&](const KernelRow& k) {
    if (k.nvtx_path.find("rooftrace:") == std::string_view::npos) {
      return OkStatus();
    }
    CountedKernel c;
    c.nvtx_path = std::string(k.nvtx_path);
    // Only counted values validate the counters; analytic ones would
    // compare the formula with itself.
    if (k.flops && k.flops_source == "counters") {
      c.flops = static_cast<double>(*k.flops);
    }
    if (k.dram_bytes && k.bytes_source == "counters") {
      c.dram_bytes = static_cast<double>(*k.dram_bytes);
    }
    out.push_back(std::move(c));
    return OkStatus();
  }));
  return out;
}

}  // namespace rooftrace::kernels
