#include "pipeline/flush.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <vector>

#include "pipeline/flat_index.h"
#include "proto/field_numbers.h"

namespace rooftrace {

namespace {

// The stages of one plan, in order: how far the settled prefix reaches (the
// cut), then which records it settles.
class Planner {
 public:
  Planner(const Session& s, const JoinedSession& j, int trailing_steps,
          bool wait_for_counters)
      : s_(s),
        j_(j),
        wait_for_counters_(wait_for_counters),
        cut_(static_cast<int>(j.steps.size()) - 1 - trailing_steps) {}

  FlushPlan Run() {
    if (cut_ < 0) {
      plan_.held_by = "too few forward steps held";
      return std::move(plan_);
    }
    plan_.held_by = "the trailing steps";
    IndexRanges();
    HoldIncompleteSteps();
    KeepCallsWhole();
    if (cut_ < 0) return std::move(plan_);
    plan_.last_step = cut_;
    plan_.scope.last_step = cut_;
    SettleKernelsAndCopies();
    SettleLaunches();
    SettleCallsAndOps();
    SettleRanges();
    return std::move(plan_);
  }

 private:
  void HoldFrom(int step, const char* why) {
    if (step <= cut_) {
      cut_ = step - 1;
      plan_.held_by = why;
    }
  }

  void IndexRanges() {
    const std::vector<NvtxRecord>& ranges = s_.nvtx_ranges();
    range_of_.Reset(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
      range_of_.Emplace(ranges[i].range_id, static_cast<int32_t>(i));
    }
  }

  // Whether every range of the chain ending at `id` has arrived (ranges
  // arrive when they end, so an open range holds its kernels back).
  bool ChainComplete(uint64_t id) const {
    for (int depth = 0; id != 0 && depth < 64; ++depth) {
      const int32_t i = range_of_.Find(id);
      if (i < 0) return false;
      const NvtxRecord& r = s_.nvtx_ranges()[static_cast<size_t>(i)];
      if (r.parent_range_id == id) break;  // corrupt self-parent
      id = r.parent_range_id;
    }
    return true;
  }
  bool PathComplete(const LaunchRecord* l) const {
    return l == nullptr || l->nvtx_range_id == 0 ||
           ChainComplete(l->nvtx_range_id);
  }

  // Steps whose kernels or copies still wait for something are not settled.
  void HoldIncompleteSteps() {
    // Counters mode by the Hello, or by counters received (a producer whose
    // CUDA started after its Hello went out in trace mode).
    const bool counters_mode =
        wait_for_counters_ &&
        (s_.header().mode == "counters" ||
         s_.stats().received[wire::enums::kRecordCounters] > 0);
    uint64_t newest_counters = 0;
    for (const CounterRecord& c : s_.counters()) {
      newest_counters = std::max(newest_counters, c.correlation_id);
    }
    // Sampling mode: a kernel waits until PM samples reaching past its end
    // on its device have arrived (the sender sends them every pass), so
    // the samples that overlap it are all here when it is stored.
    // By the samples received: a producer whose sampling never started
    // sends none and is not waited for; one whose CUDA started after its
    // Hello (in trace mode) is.
    const bool sampling_mode =
        wait_for_counters_ && s_.stats()[ImportStat::k_pm_samples] > 0;
    std::vector<std::pair<uint32_t, uint64_t>> newest_sample;  // per device
    if (sampling_mode) {
      for (const PmSampleRecord& p : s_.pm_samples()) {
        auto it = std::find_if(
            newest_sample.begin(), newest_sample.end(),
            [&p](const auto& d) { return d.first == p.device_id; });
        if (it == newest_sample.end()) {
          newest_sample.emplace_back(p.device_id, p.end_ns);
        } else {
          it->second = std::max(it->second, p.end_ns);
        }
      }
    }
    auto sampled_past = [&newest_sample](const KernelRecord& k) {
      for (const auto& [device, end] : newest_sample) {
        if (device == k.device_id) return end >= k.end_ns;
      }
      return false;
    };
    for (const JoinedKernel& jk : j_.kernels) {
      if (jk.step < 0 || jk.step > cut_) continue;
      const LaunchRecord* l = jk.launch;
      if (!PathComplete(l)) {
        HoldFrom(jk.step, "an NVTX range still open");
      } else if (l != nullptr && l->gemm_call_id != 0 && jk.gemm < 0) {
        HoldFrom(jk.step, "a GEMM call not received yet");
      } else if (counters_mode &&
                 jk.kernel->correlation_id > newest_counters) {
        HoldFrom(jk.step, "counters not received yet");
      } else if (sampling_mode && !sampled_past(*jk.kernel)) {
        HoldFrom(jk.step, "PM samples not received yet");
      }
    }
    for (const JoinedMemcpy& jm : j_.memcpys) {
      if (jm.step >= 0 && jm.step <= cut_ && !PathComplete(jm.launch)) {
        HoldFrom(jm.step, "an NVTX range still open");
      }
    }
  }

  // A GEMM call's (or an operation's) kernels are stored together: its
  // FLOPs go to one of them.
  void KeepCallsWhole() {
    gemm_min_.assign(j_.gemms.size(), INT_MAX);
    gemm_max_.assign(j_.gemms.size(), -1);
    op_min_.assign(j_.ops.size(), INT_MAX);
    op_max_.assign(j_.ops.size(), -1);
    for (const JoinedKernel& jk : j_.kernels) {
      if (jk.gemm >= 0) {
        gemm_min_[jk.gemm] = std::min(gemm_min_[jk.gemm], jk.step);
        gemm_max_[jk.gemm] = std::max(gemm_max_[jk.gemm], jk.step);
      }
      if (jk.op >= 0) {
        op_min_[jk.op] = std::min(op_min_[jk.op], jk.step);
        op_max_[jk.op] = std::max(op_max_[jk.op], jk.step);
      }
    }
    for (bool moved = true; moved && cut_ >= 0;) {
      moved = false;
      for (size_t g = 0; g < j_.gemms.size(); ++g) {
        if (gemm_min_[g] <= cut_ && gemm_max_[g] > cut_) {
          cut_ = gemm_min_[g] - 1;
          plan_.held_by = "a GEMM call across the cut";
          moved = true;
        }
      }
      for (size_t o = 0; o < j_.ops.size(); ++o) {
        if (op_min_[o] <= cut_ && op_max_[o] > cut_) {
          cut_ = op_min_[o] - 1;
          plan_.held_by = "an operation across the cut";
          moved = true;
        }
      }
    }
  }

  void SettleKernelsAndCopies() {
    const std::vector<LaunchRecord>& launches = s_.launches();
    RecordMask& drop = plan_.drop;
    drop.kernels.assign(s_.kernels().size(), 0);
    drop.launches.assign(launches.size(), 0);
    drop.counters.assign(s_.counters().size(), 0);
    drop.metrics.assign(s_.metrics().size(), 0);
    drop.memcpys.assign(s_.memcpys().size(), 0);
    auto& unmatched = plan_.unmatched.unmatched;
    for (size_t i = 0; i < j_.kernels.size(); ++i) {
      const JoinedKernel& jk = j_.kernels[i];
      if (jk.step < 0 || jk.step > cut_) continue;
      drop.kernels[i] = 1;
      ++plan_.kernels;
      if (jk.launch != nullptr) {
        drop.launches[jk.launch - launches.data()] = 1;
      } else {
        ++unmatched[wire::enums::kRecordKernel];
      }
      if (jk.counters != nullptr) {
        drop.counters[jk.counters - s_.counters().data()] = 1;
      }
      for (int m = jk.metrics_begin; m < jk.metrics_end; ++m) {
        drop.metrics[j_.metric_order[m]] = 1;
      }
    }
    for (size_t i = 0; i < j_.memcpys.size(); ++i) {
      const JoinedMemcpy& jm = j_.memcpys[i];
      // Copies before the window's first step belong to stored history,
      // unless their NVTX path is not complete yet.
      if (jm.step > cut_ || !PathComplete(jm.launch)) continue;
      drop.memcpys[i] = 1;
      if (jm.launch != nullptr) {
        drop.launches[jm.launch - launches.data()] = 1;
      } else {
        ++unmatched[wire::enums::kRecordMemcpy];
      }
    }
  }

  // Launches that can meet nothing new: unmatched for good.
  void SettleLaunches() {
    const std::vector<LaunchRecord>& launches = s_.launches();
    RecordMask& drop = plan_.drop;
    // Host time of the oldest launch whose work is still held: what was
    // launched or ended before it will meet nothing new.
    for (size_t i = 0; i < j_.kernels.size(); ++i) {
      const LaunchRecord* l = j_.kernels[i].launch;
      if (!drop.kernels[i] && l != nullptr) {
        held_host_ = std::min(held_host_, l->api_start_ns);
      }
    }
    for (size_t i = 0; i < j_.memcpys.size(); ++i) {
      const LaunchRecord* l = j_.memcpys[i].launch;
      if (!drop.memcpys[i] && l != nullptr) {
        held_host_ = std::min(held_host_, l->api_start_ns);
      }
    }
    // A launch not yet dropped that started before held_host serves no
    // record here (held records' launches start at held_host or later): its
    // kernel never came (filtered by the producer) and it is unmatched for
    // good.
    for (size_t i = 0; i < launches.size(); ++i) {
      if (drop.launches[i]) continue;
      if (launches[i].api_start_ns < held_host_) {
        drop.launches[i] = 1;
        ++plan_.unmatched.unmatched[wire::enums::kRecordLaunch];
      } else {
        kept_host_ = std::min(kept_host_, launches[i].api_start_ns);
      }
    }
  }

  // GEMM calls and operations whose kernels are all settled, or that ended
  // before every held launch without meeting a kernel (unmatched).
  void SettleCallsAndOps() {
    RecordMask& drop = plan_.drop;
    plan_.scope.gemms.assign(j_.gemms.size(), 0);
    drop.gemms.assign(s_.gemms().size(), 0);
    for (size_t g = 0; g < j_.gemms.size(); ++g) {
      const bool settled = gemm_max_[g] >= 0 && gemm_max_[g] <= cut_;
      const bool stale =
          gemm_max_[g] < 0 && j_.gemms[g].gemm->end_ns < held_host_;
      if (!settled && !stale) continue;
      plan_.scope.gemms[g] = drop.gemms[g] = 1;
      if (stale) ++plan_.unmatched.unmatched[wire::enums::kRecordGemm];
    }
    drop.ops.assign(s_.ops().size(), 0);
    for (size_t o = 0; o < j_.ops.size(); ++o) {
      const bool settled = op_max_[o] >= 0 && op_max_[o] <= cut_;
      const bool stale = op_max_[o] < 0 && j_.ops[o].op->end_ns < held_host_;
      if (settled || stale) drop.ops[o] = 1;
    }
  }

  // A range that ended before every launch still held encloses none of
  // them (nor any launch yet to come).
  void SettleRanges() {
    plan_.scope.memcpys = plan_.drop.memcpys;
    plan_.scope.nvtx.assign(j_.nvtx.size(), 0);
    plan_.drop.nvtx.assign(s_.nvtx_ranges().size(), 0);
    for (size_t i = 0; i < j_.nvtx.size(); ++i) {
      if (j_.nvtx[i].range->end_ns < kept_host_) {
        plan_.scope.nvtx[i] = plan_.drop.nvtx[i] = 1;
      }
    }
  }

  const Session& s_;
  const JoinedSession& j_;
  const bool wait_for_counters_;
  int cut_;
  FlushPlan plan_;
  FlatIndex range_of_;  // range id -> index in s_.nvtx_ranges()
  std::vector<int> gemm_min_, gemm_max_, op_min_, op_max_;
  uint64_t held_host_ = std::numeric_limits<uint64_t>::max();
  uint64_t kept_host_ = std::numeric_limits<uint64_t>::max();
};

}  // namespace

FlushPlan PlanFlush(const Session& s, const JoinedSession& j,
                    int trailing_steps, bool wait_for_counters) {
  return Planner(s, j, trailing_steps, wait_for_counters).Run();
}

}  // namespace rooftrace
