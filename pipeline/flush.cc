#include "pipeline/flush.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <unordered_map>
#include <vector>

#include "proto/field_numbers.h"

namespace rooftrace {

FlushPlan PlanFlush(const Session& s, const JoinedSession& j,
                    int trailing_steps, bool wait_for_counters) {
  FlushPlan plan;
  int cut = static_cast<int>(j.steps.size()) - 1 - trailing_steps;
  if (cut < 0) {
    plan.held_by = "too few forward steps held";
    return plan;
  }
  plan.held_by = "the trailing steps";

  // ---- how far the settled prefix reaches
  std::unordered_map<uint64_t, const NvtxRecord*> range_of;
  range_of.reserve(s.nvtx_ranges().size());
  for (const NvtxRecord& r : s.nvtx_ranges()) range_of.emplace(r.range_id, &r);
  auto chain_complete = [&](uint64_t id) {
    for (int depth = 0; id != 0 && depth < 64; ++depth) {
      auto it = range_of.find(id);
      if (it == range_of.end()) return false;
      if (it->second->parent_range_id == id) break;  // corrupt self-parent
      id = it->second->parent_range_id;
    }
    return true;
  };
  auto path_complete = [&](const LaunchRecord* l) {
    return l == nullptr || l->nvtx_range_id == 0 ||
           chain_complete(l->nvtx_range_id);
  };
  // Counters mode by the Hello, or by counters received (a producer whose
  // CUDA started after its Hello went out in trace mode).
  const bool counters_mode =
      wait_for_counters && (s.header().mode == "counters" ||
                            s.stats().received[wire::enums::kRecordCounters] > 0);
  uint64_t newest_counters = 0;
  for (const CounterRecord& c : s.counters()) {
    newest_counters = std::max(newest_counters, c.correlation_id);
  }
  auto hold_from = [&](int step, const char* why) {
    if (step <= cut) {
      cut = step - 1;
      plan.held_by = why;
    }
  };
  for (const JoinedKernel& jk : j.kernels) {
    if (jk.step < 0 || jk.step > cut) continue;
    const LaunchRecord* l = jk.launch;
    if (!path_complete(l)) {
      hold_from(jk.step, "an NVTX range still open");
    } else if (l != nullptr && l->gemm_call_id != 0 && jk.gemm < 0) {
      hold_from(jk.step, "a GEMM call not received yet");
    } else if (counters_mode && jk.kernel->correlation_id > newest_counters) {
      hold_from(jk.step, "counters not received yet");
    }
  }
  for (const JoinedMemcpy& jm : j.memcpys) {
    if (jm.step >= 0 && jm.step <= cut && !path_complete(jm.launch)) {
      hold_from(jm.step, "an NVTX range still open");
    }
  }
  // A GEMM call's kernels are stored together (its FLOPs go to one of them).
  std::vector<int> gemm_min(j.gemms.size(), INT_MAX);
  std::vector<int> gemm_max(j.gemms.size(), -1);
  for (const JoinedKernel& jk : j.kernels) {
    if (jk.gemm < 0) continue;
    gemm_min[jk.gemm] = std::min(gemm_min[jk.gemm], jk.step);
    gemm_max[jk.gemm] = std::max(gemm_max[jk.gemm], jk.step);
  }
  for (bool moved = true; moved && cut >= 0;) {
    moved = false;
    for (size_t g = 0; g < j.gemms.size(); ++g) {
      if (gemm_min[g] <= cut && gemm_max[g] > cut) {
        cut = gemm_min[g] - 1;
        plan.held_by = "a GEMM call across the cut";
        moved = true;
      }
    }
  }
  if (cut < 0) return plan;
  plan.last_step = cut;
  plan.scope.last_step = cut;

  // ---- the settled records
  const std::vector<LaunchRecord>& launches = s.launches();
  RecordMask& drop = plan.drop;
  drop.kernels.assign(s.kernels().size(), 0);
  drop.launches.assign(launches.size(), 0);
  drop.counters.assign(s.counters().size(), 0);
  drop.memcpys.assign(s.memcpys().size(), 0);
  drop.gemms.assign(s.gemms().size(), 0);
  drop.nvtx.assign(s.nvtx_ranges().size(), 0);
  auto& unmatched = plan.unmatched.unmatched;
  for (size_t i = 0; i < j.kernels.size(); ++i) {
    const JoinedKernel& jk = j.kernels[i];
    if (jk.step < 0 || jk.step > cut) continue;
    drop.kernels[i] = 1;
    ++plan.kernels;
    if (jk.launch != nullptr) {
      drop.launches[jk.launch - launches.data()] = 1;
    } else {
      ++unmatched[wire::enums::kRecordKernel];
    }
    if (jk.counters != nullptr) {
      drop.counters[jk.counters - s.counters().data()] = 1;
    }
  }
  for (size_t i = 0; i < j.memcpys.size(); ++i) {
    const JoinedMemcpy& jm = j.memcpys[i];
    // Copies before the window's first step belong to stored history, unless
    // their NVTX path is not complete yet.
    if (jm.step > cut || !path_complete(jm.launch)) continue;
    drop.memcpys[i] = 1;
    if (jm.launch != nullptr) {
      drop.launches[jm.launch - launches.data()] = 1;
    } else {
      ++unmatched[wire::enums::kRecordMemcpy];
    }
  }

  // Host time of the oldest launch whose work is still held: what was
  // launched or ended before it will meet nothing new.
  uint64_t held_host = std::numeric_limits<uint64_t>::max();
  for (size_t i = 0; i < j.kernels.size(); ++i) {
    const LaunchRecord* l = j.kernels[i].launch;
    if (!drop.kernels[i] && l != nullptr) {
      held_host = std::min(held_host, l->api_start_ns);
    }
  }
  for (size_t i = 0; i < j.memcpys.size(); ++i) {
    const LaunchRecord* l = j.memcpys[i].launch;
    if (!drop.memcpys[i] && l != nullptr) {
      held_host = std::min(held_host, l->api_start_ns);
    }
  }
  // A launch not yet dropped that started before held_host serves no record
  // here (held records' launches start at held_host or later): its kernel
  // never came (filtered by the producer) and it is unmatched for good.
  uint64_t kept_host = std::numeric_limits<uint64_t>::max();
  for (size_t i = 0; i < launches.size(); ++i) {
    if (drop.launches[i]) continue;
    if (launches[i].api_start_ns < held_host) {
      drop.launches[i] = 1;
      ++unmatched[wire::enums::kRecordLaunch];
    } else {
      kept_host = std::min(kept_host, launches[i].api_start_ns);
    }
  }

  plan.scope.gemms.assign(j.gemms.size(), 0);
  for (size_t g = 0; g < j.gemms.size(); ++g) {
    const bool settled = gemm_max[g] >= 0 && gemm_max[g] <= cut;
    const bool stale = gemm_max[g] < 0 && j.gemms[g].gemm->end_ns < held_host;
    if (!settled && !stale) continue;
    plan.scope.gemms[g] = drop.gemms[g] = 1;
    if (stale) ++unmatched[wire::enums::kRecordGemm];
  }
  // A range that ended before every launch still held encloses none of them
  // (nor any launch yet to come).
  plan.scope.memcpys = drop.memcpys;
  plan.scope.nvtx.assign(j.nvtx.size(), 0);
  for (size_t i = 0; i < j.nvtx.size(); ++i) {
    if (j.nvtx[i].range->end_ns < kept_host) {
      plan.scope.nvtx[i] = drop.nvtx[i] = 1;
    }
  }
  return plan;
}

}  // namespace rooftrace
