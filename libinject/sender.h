// The sender of a Producer: on its own thread it drains the records
// application threads queued, the CUPTI activity buffers and the counters
// mode results, encodes them into framed packets (Hello first, Stats every
// stats interval, Goodbye last) and writes them to the sink. When the
// collector is unreachable, goes away or refuses the session it switches to
// a spool file that is a complete stream on its own.
//
// Created and run by Producer::Start(); its thread is the only one that
// touches it. Not thread-safe, and needs none: what it shares with
// application threads is reached through the Producer.
#ifndef ROOFTRACE_LIBINJECT_SENDER_H_
#define ROOFTRACE_LIBINJECT_SENDER_H_

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "libinject/activity.h"
#include "proto/wire_encoder.h"
#include "libinject/sink.h"

namespace rooftrace::inject {

class CountersMode;
class Producer;

class Sender {
 public:
  explicit Sender(Producer* producer);
  ~Sender();
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  // The thread's body: returns after the final pass (Goodbye written).
  void Run();

 private:
  struct Cycle;  // records of one pass

  void OpenSink();
  bool SwitchToSpool(const std::string& why);
  // The spool of this process (in a private folder when spool_dir is a
  // shared one); an error names the folder and the fix.
  StatusOr<std::string> DefaultSpoolPath(const HelloInfo& hello) const;
  // Creates that spool (never an existing file, never through a link).
  StatusOr<std::unique_ptr<Sink>> OpenSpool(std::string* path) const;
  void WriteHello();
  void WaitForHelloReply();
  void RunCycle(bool final_pass);
  // Tells the live buffer which records the pass about to be written holds
  // (before the write), then frees their slots (after it).
  void AnnounceHeld();
  void ReleaseHeld();
  void DrainInto(Cycle* cycle, bool final_pass);
  // Decodes every activity buffer CUPTI completed and hands it back.
  void DrainActivity(ActivityBufferPool* pool, ActivityDecoder* decoder,
                     Cycle* cycle);
  // Counters mode: one Kernel per correlation id. A profiled launch's
  // Kernel is made from its launch facts and counted time when its
  // counters arrive (CountersMode::LaunchFacts); CUPTI's own record of it
  // (which never completes: timestamps 0, returned by a forced flush) is
  // held until then and dropped, or dropped on arrival when the made one
  // went first. A CUPTI record of a profiled launch that does have
  // timestamps is kept, and then none is made. Untimed records nothing
  // replaced are sent as they are at exit.
  void ReplaceReplayedKernels(CountersMode* counters, Cycle* cycle,
                              size_t first_counters, bool final_pass);
  void EncodeCycle(const Cycle& cycle, std::string* frames, CountTable* sent);
  void EncodeStatsAndGoodbye(const Cycle& cycle, const CountTable& sent,
                             uint64_t packets_so_far,
                             std::vector<StringInterner::Definition>* defs,
                             std::string* frames, uint64_t* packets);
  StatsInfo SnapshotStats();
  void RememberForReplay(const std::string& frames);
  bool WriteFrames(const std::string& frames);

  Producer* producer_;
  PacketEncoder encoder_;
  std::unique_ptr<Sink> sink_;
  std::string hello_frame_;
  // The spool SwitchToSpool opened begins with the Hello (sequence 1):
  // WriteHello must not write it a second time (#29 D7).
  bool hello_in_sink_ = false;
  // Frames recently written to a socket, restated in the spool if the
  // collector goes away (it may not have read them). Bounded.
  static constexpr size_t kReplayBytes = 8u << 20;
  std::deque<std::string> replay_;
  size_t replay_bytes_ = 0;
  CountTable sent_{};
  uint64_t packets_sent_ = 0;
  uint64_t bytes_sent_ = 0;
  uint64_t last_stats_ns_ = 0;
  DecodeCounts decode_counts_;
  // ReplaceReplayedKernels' state, by correlation id: Kernels made and sent
  // whose CUPTI record has not come; CUPTI records with timestamps of
  // profiled launches whose counters have not come; CUPTI records without
  // timestamps of profiled launches, held.
  std::unordered_set<uint64_t> made_from_launch_;
  std::unordered_set<uint64_t> timed_profiled_;
  std::unordered_map<uint64_t, KernelInfo> untimed_held_;
  // Kernels made from a launch whose API published no geometry (nvcc 13's
  // <<<>>> stub, __cudaLaunchKernel): held until CUPTI's record of the
  // launch gives grid, block and registers (the collector matches a
  // profiled launch to the unprofiled ones of its signature by them).
  std::unordered_map<uint64_t, KernelInfo> made_waiting_;
  uint64_t kernels_from_launch_ = 0;  // Kernels made (counted as seen)
  uint64_t kernels_replaced_ = 0;     // CUPTI's records dropped (filtered)
  uint64_t pm_samples_sent_ = 0;      // PmSample records encoded
  uint64_t kernels_untimed_ = 0;      // Kernels sent with start = end = 0
  // The application threads' records of the pass being written: queue
  // positions [held_from_, held_to_), freed once its frames are written;
  // per RecordType, the sequence of the pass's first packet of that type.
  uint64_t held_from_ = 0, held_to_ = 0;
  std::array<uint64_t, kLiveRecordTypes> inflight_first_seq_{};
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_SENDER_H_
