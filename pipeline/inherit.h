// Figures for kernels without their op (issue 28, item 3; DESIGN.md
// "Annotation": `inherited`). A kernel that no GEMM call, operation or
// counter gives figures (its launch happened before the profiler's first
// CPU event, or no operator was attached to it) takes the analytic figures
// of the kernels with the same signature -- name, grid, block, registers
// per thread, static and dynamic shared memory -- when that signature has
// run exactly one shape in the run: its FLOPs per precision, minimum bytes
// and shape text, with source `inherited`. The same code at the same launch
// configuration computing the same shape does the same work; a signature
// seen with two or more shapes says it does not, and its kernels stay blank
// and are counted.
//
// Who teaches: the carrier of a GEMM call or an operation (join.h: the
// kernel its analytic figures went to, whatever counters it also has).
// Who learns: a kernel with no GEMM call, no operation and no counters.
// Split-K and other second kernels of a call neither teach nor learn: they
// belong to a call whose figures one kernel already carries.
//
// Learning is run-wide and survives windows: RunRecorder keeps one
// SignatureFigures for the run, so a signature learned in an earlier window
// (or session) serves the later ones. Within one join every kernel sees
// every shape the join holds, whatever their order. Rows are not rewritten:
//  - a kernel stored before any window showed its signature's shape stays
//    blank (like any kernel without figures: not counted apart, since
//    telling them apart costs a signature lookup for every kernel without
//    an op in every window: a seventh of the join's time on 500 k
//    synthetic kernels, against a twenty-fifth without it);
//  - a kernel that inherited while its signature had one shape keeps it if
//    a later window shows a second; from then on the signature's kernels
//    stay blank (kernels_signature_ambiguous).
// A source that stores each session whole (Kineto) learns every shape of
// a session before any of its kernels is stored.
//
// By position (issue 36): a kernel without its launch (it ran before the
// profiler's first CPU event) that its signature leaves blank -- two
// shapes, or none taught -- is found again in the launched part of the
// same join: the launched kernels of its signature whose neighbours, up
// to kPositionContext either side on the same device and stream, have the
// same signatures as its own neighbours (a place with fewer neighbours, at
// the end of its run, on those it has). Those are the places a repeating
// sequence (a model's layers, step after step) puts the same kernel. When
// there is at least one and every one of them carries the same figures
// (FLOPs per precision, minimum bytes, shape), the kernel takes them,
// `inherited` (kernels_inherited_by_position); when they disagree (the
// same run of kernels computing two shapes) it stays blank and is counted
// (kernels_position_ambiguous), never guessed. A signature launched more
// than kMaxPositionCandidates times in the join is not searched (blank,
// counted as ambiguous), which bounds the pass. Only within one join:
// a windowed stream's orphans are in its first window.
//
// Not thread-safe: the recorder calls it under its lock.
#ifndef ROOFTRACE_PIPELINE_INHERIT_H_
#define ROOFTRACE_PIPELINE_INHERIT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/precision.h"
#include "model/roof_model.h"
#include "pipeline/flush.h"
#include "pipeline/import_stats.h"
#include "pipeline/join.h"

namespace rooftrace {

class SignatureFigures {
 public:
  // For one joined session or window, in order: learns the shape and
  // analytic figures of every carrier in it (held kernels of a window too:
  // learning the same shape twice changes nothing); gives every kernel
  // without figures of its own those of its signature's one shape (its
  // shape text points into this object, which must outlive the rows);
  // then counts in `stats`, among the kernels a write with `scope` stores
  // (nullptr: all), those that inherited (kernels_inherited) and those left
  // blank by an ambiguous signature (kernels_signature_ambiguous).
  void Apply(JoinedSession* joined, const WriteScope* scope,
             ImportStats* stats);

  // Neighbours compared either side, and the most launched kernels of one
  // signature searched, by position (above).
  static constexpr int kPositionContext = 8;
  static constexpr size_t kMaxPositionCandidates = 4096;

  // Whether a kernel may inherit: nothing of its own gives it figures
  // (its own counters, or its signature's sampled counters).
  static bool Eligible(const JoinedKernel& k) {
    return k.gemm < 0 && k.op < 0 && k.counters == nullptr &&
           k.sampled == nullptr;
  }

 private:
  struct Key {
    int name = 0;  // index into name_ids_' values
    uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    uint32_t registers = 0, static_shared = 0, dynamic_shared = 0;
    bool operator==(const Key&) const = default;
  };
  // What a signature's carriers showed.
  struct Entry {
    Key key;
    uint64_t hash = 0;
    int shapes = 0;  // distinct figure sets seen: 0, 1, or 2 (two or more)
    std::array<uint64_t, kNumPrecisions> flops{};
    uint64_t min_bytes = 0;
    std::string shape;
    bool has_figures = false;  // any FLOPs, or minimum bytes
  };

  // The run-wide name id of each of `joined`'s names (window_names_).
  void MapNames(const JoinedSession& joined);
  Key KeyOf(const JoinedKernel& k) const;
  static uint64_t HashOf(const Key& k);
  // The entry of `key`, made (with no shape) if there is none.
  Entry& Lookup(const Key& key);
  // The entry of `key`, or nullptr.
  const Entry* Find(const Key& key) const;
  void Learn(const JoinedSession& joined);
  // Learns what one carrier's call or op gives it.
  void LearnOne(const JoinedKernel& carrier, Precision precision,
                uint64_t flops, uint64_t min_bytes, const std::string& shape);
  // Inherits and counts, with one lookup per kernel whose name has taught
  // a signature (this runs over every kernel of every window).
  void InheritAndCount(JoinedSession* joined, const WriteScope* scope,
                       ImportStats* stats) const;
  // The pass by position (above), after InheritAndCount.
  void InheritByPosition(JoinedSession* joined, const WriteScope* scope,
                         ImportStats* stats);
  // The shape text of launched kernel `k`'s figures ("" for none), into
  // `out`.
  static void ShapeOf(const JoinedSession& j, const JoinedKernel& k,
                      std::string* out);

  std::unordered_map<std::string, int> name_ids_;
  std::vector<int> window_names_;  // joined.names index -> name id
  // By name id: a carrier of that name has taught a signature. Kernels of
  // other names (most of a stream's: elementwise kernels without ops) are
  // passed over without a signature lookup.
  std::vector<char> learned_names_;
  // Entries by signature: a deque, so the shape text a kernel points at
  // stays where it is as entries are added; indexed by an open-addressing
  // table of entry indices (-1: empty), at least twice the entries. With
  // std::unordered_map and a lookup for every kernel, this pass took half
  // the time of the join before it (500 k kernels, 10% GEMMs).
  std::deque<Entry> entries_;
  std::vector<int32_t> slots_;
  std::string shape_scratch_;  // Learn's, reused
  // Shape texts of kernels that inherited by position (a deque: the
  // kernels point at them).
  std::deque<std::string> position_shapes_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_INHERIT_H_
