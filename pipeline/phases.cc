#include "pipeline/phases.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <string_view>
#include <utility>

#include "pipeline/flat_index.h"

namespace rooftrace {
namespace {

std::string Num(int64_t v) { return std::to_string(v); }

// How many distinct steps each pointer value of one GEMM operand appears
// in. GEMMs nearly always come in step order (a GEMM's step is that of its
// first kernel): then one pass with a hash index counts each pointer's
// step changes, with no sort of every window's GEMMs. Otherwise the
// (pointer, step) pairs are sorted, which gives the same counts.
class DistinctSteps {
 public:
  DistinctSteps(const PhaseInput& in, const std::vector<int>& gemm_step,
                bool operand_b) {
    auto ptr = [&](size_t g) {
      return operand_b ? in.gemms[g].b_ptr : in.gemms[g].a_ptr;
    };
    bool in_order = true;
    size_t n = 0;
    for (size_t g = 0, last = 0; g < in.gemms.size(); ++g) {
      if (gemm_step[g] < 0) continue;
      if (n > 0 && gemm_step[g] < gemm_step[last]) in_order = false;
      last = g;
      ++n;
    }
    if (in_order) {
      hashed_ = true;
      index_.Reset(n);
      for (size_t g = 0; g < in.gemms.size(); ++g) {
        const int step = gemm_step[g];
        if (step < 0) continue;
        int32_t i = index_.Find(ptr(g));
        if (i < 0) {
          index_.Emplace(ptr(g), static_cast<int32_t>(slots_.size()));
          slots_.push_back({step, 1});
        } else if (slots_[i].first != step) {
          slots_[i] = {step, slots_[i].second + 1};
        }
      }
      return;
    }
    std::vector<std::pair<uint64_t, int>> pairs;
    pairs.reserve(n);
    for (size_t g = 0; g < in.gemms.size(); ++g) {
      if (gemm_step[g] >= 0) pairs.emplace_back(ptr(g), gemm_step[g]);
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (const auto& [p, step] : pairs) {
      (void)step;
      if (sorted_.empty() || sorted_.back().first != p) {
        sorted_.emplace_back(p, 0);
      }
      ++sorted_.back().second;
    }
  }

  // Distinct steps of `ptr` (0 when it is in none).
  int Count(uint64_t ptr) const {
    if (hashed_) {
      const int32_t i = index_.Find(ptr);
      return i < 0 ? 0 : slots_[i].second;
    }
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(),
                               std::make_pair(ptr, 0));
    return it != sorted_.end() && it->first == ptr ? it->second : 0;
  }

 private:
  bool hashed_ = false;
  FlatIndex index_;                          // pointer -> slot
  std::vector<std::pair<int, int>> slots_;   // (last step, distinct steps)
  std::vector<std::pair<uint64_t, int>> sorted_;  // (pointer, steps)
};

// Each GEMM's weight operand (the one whose pointer repeats across steps)
// and token count (its other dimension), then each step's token count: the
// count whose GEMMs do most of the step's FLOPs. Not the largest count: a
// small GEMM outside the weights can see another dimension (the rotary
// embedding's inv_freq x positions outer product, K = 1, sees 64 = head
// dim / 2 at every decode step of a Llama in transformers 5, which made
// decode steps look like prefills of 64 tokens on the H100 run).
std::vector<int64_t> StepTokenCounts(const PhaseInput& in, PhaseResult* r) {
  const DistinctSteps a_steps(in, r->gemm_step, /*operand_b=*/false);
  const DistinctSteps b_steps(in, r->gemm_step, /*operand_b=*/true);
  // (step, token count) -> FLOPs of the step's GEMMs that see that count.
  std::vector<std::pair<std::pair<int, int64_t>, double>> votes;
  for (size_t g = 0; g < in.gemms.size(); ++g) {
    const auto& gm = in.gemms[g];
    int sa = a_steps.Count(gm.a_ptr);
    int sb = b_steps.Count(gm.b_ptr);
    if (gm.weight_hint == 1) {
      sa = 1, sb = 0;
    } else if (gm.weight_hint == 2) {
      sa = 0, sb = 1;
    }
    const int step = r->gemm_step[g];
    if (step >= 0 && sa > sb) {
      r->gemm_weight[g] = 1;
      r->gemm_tokens[g] = gm.n;
    } else if (step >= 0 && sb > sa) {
      r->gemm_weight[g] = 2;
      r->gemm_tokens[g] = gm.m;
    } else {
      r->gemm_tokens[g] = std::min(gm.m, gm.n);  // no repeat evidence
    }
    if (step >= 0) {
      const double flops = 2.0 * static_cast<double>(gm.m) *
                           static_cast<double>(gm.n) *
                           static_cast<double>(std::max<int64_t>(gm.k, 1)) *
                           static_cast<double>(std::max<int64_t>(gm.batch, 1));
      votes.push_back({{step, r->gemm_tokens[g]}, flops});
    }
  }
  std::sort(votes.begin(), votes.end());
  std::vector<int64_t> step_tokens(r->steps.size(), -1);
  std::vector<double> best(r->steps.size(), -1.0);
  for (size_t i = 0; i < votes.size();) {
    const auto key = votes[i].first;
    double sum = 0;
    for (; i < votes.size() && votes[i].first == key; ++i) sum += votes[i].second;
    // Ascending token counts: a tie goes to the larger count.
    if (sum >= best[key.first]) {
      best[key.first] = sum;
      step_tokens[key.first] = key.second;
    }
  }
  return step_tokens;
}

constexpr char kNoTokenEvidence[] = "no GEMM with a token count in this step";

// ClassifySteps, leaving the evidence of a step without a token count empty:
// that sentence is the same for every such step, and a session of thousands
// of GEMM-less steps (an nsys export) would otherwise copy it into each.
void ClassifyStepsSparse(const std::vector<int64_t>& t,
                         int64_t max_decode_tokens,
                         std::vector<std::string>* phases,
                         std::vector<std::string>* evidence) {
  const int n = static_cast<int>(t.size());
  phases->assign(n, "other");
  evidence->assign(n, std::string());
  for (int i = 0; i < n; ++i) {
    if (t[i] < 0) continue;
    int prev = -1, next = -1;
    for (int j = i - 1; j >= 0; --j) {
      if (t[j] >= 0) { prev = j; break; }
    }
    for (int j = i + 1; j < n; ++j) {
      if (t[j] >= 0) { next = j; break; }
    }
    const std::string tok = "GEMMs see " + Num(t[i]) + " tokens";
    // Token count decides before regularity: equal neighbours mean steady
    // decode only for a count a decode batch can have (phases.h).
    const bool above_decode = t[i] > max_decode_tokens;
    if (!above_decode &&
        ((prev >= 0 && t[prev] == t[i]) || (next >= 0 && t[next] == t[i]))) {
      (*phases)[i] = "decode";
      (*evidence)[i] = tok + ", as in the neighbouring step: steady decode";
      continue;
    }
    const int ref_index = next >= 0 ? next : prev;
    if (ref_index < 0) {
      // One step of T > 1 tokens and nothing after it: the phase
      // vocabulary has no "forward", and a single pass over a whole
      // sequence does what a prefill does (compute-heavy GEMMs over all
      // tokens at once), so it is labelled prefill and the evidence says
      // why.
      (*phases)[i] = t[i] > 1 ? "prefill" : "decode";
      (*evidence)[i] =
          t[i] > 1 ? tok + " in a single forward step with no decode after "
                           "it: an encoder, or one prefill"
                   : tok + " in the only forward step";
      continue;
    }
    const int64_t ref = t[ref_index];
    const std::string where = ref_index == next ? "the next" : "the previous";
    if (above_decode && t[i] <= ref) {
      (*phases)[i] = "prefill";
      (*evidence)[i] = tok + ", more than the " + Num(max_decode_tokens) +
                       " tokens a decode step can batch: a prefill, whatever "
                       "its neighbours";
    } else if (t[i] < ref) {
      (*phases)[i] = "decode";
      (*evidence)[i] = tok + ", fewer than the " + Num(ref) + " of " + where +
                       " step";
    } else if (ref > 0 && t[i] % ref == 0) {
      (*phases)[i] = "prefill";
      (*evidence)[i] = tok + " = " + Num(ref) + " x " + Num(t[i] / ref) +
                       ": prompts of " + Num(ref) + " sequences, " + where +
                       " step sees " + Num(ref);
    } else {
      (*phases)[i] = "mixed";
      (*evidence)[i] = tok + ", more than the " + Num(ref) + " of " + where +
                       " step and not a multiple of it: prefill tokens "
                       "batched with decode tokens";
    }
  }
}

}  // namespace

void ClassifySteps(const std::vector<int64_t>& t,
                   std::vector<std::string>* phases,
                   std::vector<std::string>* evidence,
                   int64_t max_decode_tokens) {
  ClassifyStepsSparse(t, max_decode_tokens, phases, evidence);
  for (std::string& e : *evidence) {
    if (e.empty()) e = kNoTokenEvidence;
  }
}

namespace {

// Raw steps before compaction: a raw step per kernel (kernel index order)
// and, per raw step, the boundary that ended it.
// Boundaries are static names (dtoh_copy, nvtx, host_gap, end): one per raw
// step, and a window can hold tens of thousands of steps.
struct RawSteps {
  std::vector<int> step;
  std::vector<const char*> boundary;
};

// A step ends at each small device-to-host copy (sampled tokens).
RawSteps SplitAtTokenCopies(const PhaseInput& in,
                            const std::vector<uint32_t>& order,
                            std::vector<uint64_t> token_copies) {
  std::sort(token_copies.begin(), token_copies.end());
  RawSteps raw;
  raw.step.assign(in.kernels.size(), 0);
  size_t c = 0;
  for (uint32_t idx : order) {
    while (c < token_copies.size() &&
           token_copies[c] <= in.kernels[idx].start_ns) {
      ++c;
    }
    raw.step[idx] = static_cast<int>(c);
  }
  raw.boundary.assign(token_copies.size() + 1, "dtoh_copy");
  raw.boundary.back() = "end";
  return raw;
}

// A step starts at each new outermost NVTX range.
RawSteps SplitAtNvtxRoots(const PhaseInput& in,
                          const std::vector<uint32_t>& order) {
  RawSteps raw;
  raw.step.assign(in.kernels.size(), 0);
  int step = 0;
  uint64_t root = 0;
  for (uint32_t idx : order) {
    const uint64_t k_root = in.kernels[idx].nvtx_root;
    if (k_root != 0 && k_root != root) {
      if (root != 0) {
        ++step;
        raw.boundary.push_back("nvtx");
      }
      root = k_root;
    }
    raw.step[idx] = step;
  }
  raw.boundary.push_back("end");
  return raw;
}

// A step ends at each pause between launches longer than
// max(min_host_gap_ns, host_gap_factor x the median launch interval).
// `by_host` is the kernels in start order (SplitRawSteps' `order`, which
// it gives up): this split runs for a whole import without steps, where
// a copy of the order, the gaps grown by doubling and a second copy of
// them for the median cost 20 to 30 bytes a kernel beside everything the
// join holds; now the gaps alone (8), freed before the split.
RawSteps SplitAtHostGaps(const PhaseInput& in, const PhaseOptions& opt,
                         std::vector<uint32_t> by_host) {
  auto host = [&](uint32_t i) {
    return in.kernels[i].host_ns ? in.kernels[i].host_ns
                                 : in.kernels[i].start_ns;
  };
  const auto by_host_time = [&](uint32_t a, uint32_t b) {
    return host(a) < host(b);
  };
  if (!std::is_sorted(by_host.begin(), by_host.end(), by_host_time)) {
    std::stable_sort(by_host.begin(), by_host.end(), by_host_time);
  }
  auto gap_before = [&](size_t i) {
    return host(by_host[i]) - host(by_host[i - 1]);
  };
  uint64_t threshold = opt.min_host_gap_ns;
  if (by_host.size() > 1) {
    // Reordered by nth_element; the split below takes each gap again.
    std::vector<uint64_t> gaps(by_host.size() - 1);
    for (size_t i = 1; i < by_host.size(); ++i) gaps[i - 1] = gap_before(i);
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2,
                     gaps.end());
    const double median = static_cast<double>(gaps[gaps.size() / 2]);
    threshold = std::max<uint64_t>(
        threshold, static_cast<uint64_t>(opt.host_gap_factor * median));
  }
  RawSteps raw;
  raw.step.assign(in.kernels.size(), 0);
  int step = 0;
  for (size_t i = 0; i < by_host.size(); ++i) {
    if (i > 0 && gap_before(i) > threshold) {
      ++step;
      raw.boundary.push_back("host_gap");
    }
    raw.step[by_host[i]] = step;
  }
  raw.boundary.push_back("end");
  return raw;
}

// Raw steps by the first kind of evidence present (phases.h).
RawSteps SplitRawSteps(const PhaseInput& in, const PhaseOptions& opt) {
  std::vector<uint32_t> order(in.kernels.size());
  std::iota(order.begin(), order.end(), 0u);
  const auto by_start = [&](uint32_t a, uint32_t b) {
    return in.kernels[a].start_ns < in.kernels[b].start_ns;
  };
  // Sources hand kernels over in start order as a rule: check before sorting.
  if (!std::is_sorted(order.begin(), order.end(), by_start)) {
    std::sort(order.begin(), order.end(), by_start);
  }
  std::vector<uint64_t> token_copies;
  for (const auto& c : in.copies) {
    if (c.dtoh && c.bytes <= opt.max_token_copy_bytes) {
      token_copies.push_back(c.start_ns);
    }
  }
  if (!token_copies.empty()) {
    return SplitAtTokenCopies(in, order, std::move(token_copies));
  }
  const bool any_nvtx =
      std::any_of(in.kernels.begin(), in.kernels.end(),
                  [](const PhaseInput::Kernel& k) { return k.nvtx_root != 0; });
  if (any_nvtx) return SplitAtNvtxRoots(in, order);
  return SplitAtHostGaps(in, opt, std::move(order));
}

// Drops empty raw steps and merges GEMM-less ones into the next step with
// GEMMs (trailing ones into the last). Fills r->steps' boundaries; returns
// the step each raw step went to.
std::vector<int> CompactSteps(const PhaseInput& in, const RawSteps& raw,
                              PhaseResult* r) {
  const int nraw = static_cast<int>(raw.boundary.size());
  std::vector<uint64_t> raw_kernels(nraw, 0), raw_gemms(nraw, 0),
      raw_annotated(nraw, 0);
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    ++raw_kernels[raw.step[i]];
    if (in.kernels[i].gemm >= 0) ++raw_gemms[raw.step[i]];
    if (in.kernels[i].serving_step != nullptr) ++raw_annotated[raw.step[i]];
  }
  // A step the serving engine annotated is a step of its own, GEMMs or not
  // (a graph replay without its capture has no GEMM evidence).
  for (int s = 0; s < nraw; ++s) {
    if (2 * raw_annotated[s] > raw_kernels[s]) {
      raw_gemms[s] = std::max<uint64_t>(raw_gemms[s], 1);
    }
  }
  bool any_gemm = false;
  for (int s = 0; s < nraw; ++s) any_gemm |= raw_gemms[s] > 0;
  std::vector<int> target(nraw, -1);
  int last_kept = -1;
  std::vector<int> pending;  // GEMM-less raw steps waiting for a target
  std::vector<int> kept;     // raw ids of kept steps
  for (int s = 0; s < nraw; ++s) {
    if (raw_kernels[s] == 0) continue;
    if (any_gemm && raw_gemms[s] == 0) {
      pending.push_back(s);
      continue;
    }
    const int id = static_cast<int>(kept.size());
    kept.push_back(s);
    target[s] = id;
    for (int p : pending) target[p] = id;
    pending.clear();
    last_kept = id;
  }
  for (int p : pending) target[p] = last_kept;  // trailing bookkeeping
  r->steps.resize(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    r->steps[i].boundary = raw.boundary[kept[i]];
  }
  if (!pending.empty() && last_kept >= 0) {
    r->steps[last_kept].boundary = raw.boundary[pending.back()];
  }
  return target;
}

// Each kernel's step, each step's extent, counts and GPU time, and the step
// of each GEMM (the step of its first kernel).
void AssignKernels(const PhaseInput& in, const RawSteps& raw,
                   const std::vector<int>& target, PhaseResult* r) {
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    const int s = target[raw.step[i]];
    r->kernel_step[i] = s;
    StepInfo& st = r->steps[s];
    const auto& k = in.kernels[i];
    if (st.kernel_count == 0 || k.start_ns < st.start_ns) st.start_ns = k.start_ns;
    st.end_ns = std::max(st.end_ns, k.end_ns);
    ++st.kernel_count;
    st.gpu_time_ns += k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    if (k.gemm >= 0 && static_cast<size_t>(k.gemm) < in.gemms.size()) {
      if (r->gemm_step[k.gemm] < 0) {
        r->gemm_step[k.gemm] = s;
        ++st.gemm_count;
      }
    }
  }
}

std::string_view BoundaryEvidence(std::string_view boundary) {
  return boundary == "dtoh_copy" ? "a device-to-host copy of sampled tokens"
         : boundary == "nvtx"    ? "a new outermost NVTX range"
         : boundary == "host_gap" ? "a host gap between launches"
                                  : "the end of the session";
}

// Each step's token count, phase and evidence.
void LabelSteps(const PhaseInput& in, int64_t max_decode_tokens,
                PhaseResult* r) {
  std::vector<int64_t> step_tokens = StepTokenCounts(in, r);
  std::vector<std::string> phases, evidence;
  if (in.prev_step_tokens >= 0) {
    // The step before this window takes part as a neighbour, then leaves.
    step_tokens.insert(step_tokens.begin(), in.prev_step_tokens);
    ClassifyStepsSparse(step_tokens, max_decode_tokens, &phases, &evidence);
    step_tokens.erase(step_tokens.begin());
    phases.erase(phases.begin());
    evidence.erase(evidence.begin());
  } else {
    ClassifyStepsSparse(step_tokens, max_decode_tokens, &phases, &evidence);
  }
  // The engine's own word where most of a step's kernels ran inside one
  // of its step annotations.
  std::vector<std::map<const ServingStep*, uint64_t>> annotated(
      r->steps.size());
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    const int s = r->kernel_step[i];
    if (s >= 0 && in.kernels[i].serving_step != nullptr) {
      ++annotated[s][in.kernels[i].serving_step];
    }
  }
  for (size_t s = 0; s < r->steps.size(); ++s) {
    const ServingStep* best = nullptr;
    uint64_t count = 0;
    for (const auto& [step, n] : annotated[s]) {
      if (n > count) best = step, count = n;
    }
    if (best == nullptr || 2 * count <= r->steps[s].kernel_count) continue;
    phases[s] = best->mixed() ? "mixed" : best->decode() ? "decode" : "prefill";
    step_tokens[s] = best->tokens();
    evidence[s] = "the serving engine's step annotation: " +
                  std::to_string(best->context_requests) +
                  " prefill requests (" + std::to_string(best->c_sq) +
                  " tokens), " + std::to_string(best->generation_requests) +
                  " decode requests (" + std::to_string(best->g_sq) +
                  " tokens)";
  }
  constexpr std::string_view kEndedBy = "; step ended by ";
  for (size_t s = 0; s < r->steps.size(); ++s) {
    StepInfo& st = r->steps[s];
    st.phase = std::move(phases[s]);
    st.token_count = step_tokens[s];
    // Composed in one allocation: this runs once per step.
    const std::string_view why = evidence[s].empty()
                                     ? std::string_view(kNoTokenEvidence)
                                     : std::string_view(evidence[s]);
    const std::string_view end = BoundaryEvidence(st.boundary);
    st.evidence.clear();
    st.evidence.reserve(why.size() + kEndedBy.size() + end.size());
    st.evidence.append(why).append(kEndedBy).append(end);
  }
}

// A copy belongs to the last step that started at or before it.
// ("Last" in step order, which need not be start order: the steps' starts
// are sorted once, each with the highest step index among the starts up to
// it, so a copy costs a binary search, not a pass over every step.)
void AssignCopies(const PhaseInput& in, PhaseResult* r) {
  if (in.copies.empty()) return;
  if (r->steps.empty()) {
    r->copy_step.assign(in.copies.size(), -1);
    return;
  }
  std::vector<std::pair<uint64_t, int>> starts(r->steps.size());
  for (size_t s = 0; s < r->steps.size(); ++s) {
    starts[s] = {r->steps[s].start_ns, static_cast<int>(s)};
  }
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) {
    starts[i].second = std::max(starts[i].second, starts[i - 1].second);
  }
  for (size_t c = 0; c < in.copies.size(); ++c) {
    const uint64_t t = in.copies[c].start_ns;
    const auto it = std::upper_bound(
        starts.begin(), starts.end(), t,
        [](uint64_t v, const std::pair<uint64_t, int>& e) {
          return v < e.first;
        });
    r->copy_step[c] = it == starts.begin() ? 0 : std::prev(it)->second;
  }
}

}  // namespace

PhaseResult DetectPhases(const PhaseInput& in, const PhaseOptions& opt) {
  PhaseResult r;
  r.kernel_step.assign(in.kernels.size(), -1);
  r.copy_step.assign(in.copies.size(), -1);
  r.gemm_weight.assign(in.gemms.size(), 0);
  r.gemm_tokens.assign(in.gemms.size(), -1);
  r.gemm_step.assign(in.gemms.size(), -1);
  if (in.kernels.empty()) return r;

  const RawSteps raw = SplitRawSteps(in, opt);
  const std::vector<int> target = CompactSteps(in, raw, &r);
  AssignKernels(in, raw, target, &r);
  LabelSteps(in, opt.max_decode_tokens, &r);
  AssignCopies(in, &r);
  return r;
}

}  // namespace rooftrace
