// Sampled counters (issue 25, item 2; DESIGN.md "Annotation": `counters
// (sampled k of n)`). Counters mode profiles the first K launches of each
// kernel signature and then one in N (libinject/kernel_filter.h); every
// launch it did not profile takes here the mean per-launch counters of the
// profiled launches of its signature that came before it: DRAM bytes read
// and written, FLOPs per precision class. Its row's sources say
// `counters (sampled k of n, spread s%)`: k profiled launches of the n
// launches of the signature so far (this one included), and how far apart
// the k samples were ((max - min) / mean of their DRAM bytes or FLOPs,
// whichever is larger; left out with one sample). A launch's own counters,
// when it has them, always win; sampled counters beat analytic figures
// (bytes from shapes are a lower bound; FLOPs from shapes are the same
// signature's work that the samples counted).
//
// A signature is the kernel's name, grid, block, dynamic shared memory
// and, when the launch was made inside a GEMM call, the call's shape (m,
// n, k, batch, types, transposes): what libinject's KernelSignature hashes.
// Not registers or static shared memory: the function fixes them, and the
// Kernel record libinject makes for a profiled launch (from the launch
// callback, counters_mode.h KernelFromLaunch) does not have them.
//
// Only samples BEFORE a launch (by correlation id) count, so a long session
// stored window by window gives every row exactly what a whole-session join
// gives it: a window is stored only once counters at least as new as its
// kernels arrived (pipeline/flush.h). Learning is per session (correlation
// ids are a process's own) and survives windows; held kernels are seen
// again by the next window and learned once (by correlation id).
//
// Memory: per session with counters, the samples and launches of the
// kernels it still holds (about a window), and per signature the running
// figures of everything older. A window's kernels are stored once; what
// the kernels still to come need of the older ones is only how many there
// were and their running sums, smallest and largest figures (every later
// launch counts all of them), so those are folded into one entry per
// signature. The fold point (the floor) is the oldest correlation id the
// session still holds, a kernel or a launch: the flush (pipeline/flush.h)
// declares a launch older than every held launch unmatched for good, so no
// kernel older than that comes later. The folded sums are added in
// correlation order, as a whole-session join adds them: every figure is
// the same. A kernel that arrives below the floor all the same is kept
// like any other until a later fold: every later launch counts it, as it
// would have (the order of its term in the sums may differ); it itself
// counts every folded sample, newer ones too. Freed by EndSession().
//
// Not thread-safe: the recorder calls it under its lock.
#ifndef ROOFTRACE_PIPELINE_SAMPLED_H_
#define ROOFTRACE_PIPELINE_SAMPLED_H_

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/precision.h"
#include "model/roof_model.h"
#include "pipeline/flush.h"
#include "pipeline/import_stats.h"
#include "pipeline/join.h"
#include "pipeline/session.h"

namespace rooftrace {

class SampledCounters {
 public:
  // For one joined session or window of `session`:
  // learns the counters of every kernel that has them and the correlation
  // id of every launch, then gives every kernel without counters that has
  // a sample before it the sampled figures (the label lives in
  // joined->sampled), and counts, among the kernels a write with `scope`
  // stores (nullptr: all), those that took sampled figures
  // (kernels_sampled). A session that is not in libinject's
  // counters mode (trace mode, an import) is left alone and costs nothing.
  void Apply(const Session& session, JoinedSession* joined,
             const WriteScope* scope, ImportStats* stats);
  // The session ended (it is stored whole, or dropped): its samples are
  // freed. Sessions are told apart by address while they live.
  void EndSession(const Session* session) { sessions_.erase(session); }
  // Samples and launches held unfolded, over every live session: what the
  // memory bound above is about (for tests).
  size_t HeldEntries() const;

 private:
  struct Key {
    int name = 0;  // the session's id of the kernel name (Signatures::names)
    uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    uint32_t dynamic_shared = 0;
    bool gemm = false;
    int64_t m = 0, n = 0, k = 0, batch = 0;
    int32_t types[5] = {0, 0, 0, 0, 0};
    int32_t trans[2] = {0, 0};
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  // Running figures over samples in correlation order: how many, sums,
  // and the smallest and largest of their DRAM bytes and total FLOPs.
  struct Running {
    uint64_t n = 0;
    double sum_read = 0, sum_write = 0;
    std::array<double, kNumPrecisions> sum_flops{};
    uint64_t with_flops = 0, with_dram = 0;
    double min_bytes = 0, max_bytes = 0, min_flops = 0, max_flops = 0;
  };
  // One profiled launch, and the running figures up to it (those folded
  // into its signature included).
  struct Sample {
    uint64_t correlation_id = 0;
    uint64_t read = 0, write = 0;
    std::array<uint64_t, kNumPrecisions> flops{};
    bool has_flops = false, has_dram = false;
    Running running;  // over samples [first, this]
  };
  struct Signature {
    // Samples and launches below the session's floor, folded.
    Running folded;
    uint64_t folded_launches = 0;
    std::vector<Sample> samples;     // at or above the floor, by id, unique
    std::vector<uint64_t> launches;  // at or above the floor, sorted, unique
  };
  // One session's: its signatures, and an id per kernel name (names are
  // hashed once per window, not once per kernel).
  struct Signatures {
    std::unordered_map<Key, Signature, KeyHash> by_key;
    std::unordered_map<std::string, int> names;
    uint64_t floor = 0;  // samples and launches below it are folded
  };

  // `name_ids`: the session's id of each of the join's names.
  static Key KeyOf(const JoinedSession& j, const JoinedKernel& k,
                   const std::vector<int>& name_ids);
  static void Learn(Signature* s, const JoinedKernel& k);
  static void NoteLaunch(Signature* s, uint64_t correlation_id);
  // `r` followed by sample `x`.
  static Running Then(const Running& r, const Sample& x);
  // Recomputes the running figures of samples [from, end).
  static void Accumulate(Signature* s, size_t from);
  // Raises the floor of `signatures` to the oldest correlation id that
  // `session` holds (`joined`'s kernels, the session's launches) and folds
  // what lies below it.
  static void Fold(const Session& session, const JoinedSession& joined,
                   Signatures* signatures);

  std::unordered_map<const Session*, Signatures> sessions_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_SAMPLED_H_
