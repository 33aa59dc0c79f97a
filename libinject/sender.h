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

#include "libinject/activity.h"
#include "proto/wire_encoder.h"
#include "libinject/sink.h"

namespace rooftrace::inject {

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
  // The application threads' records of the pass being written: queue
  // positions [held_from_, held_to_), freed once its frames are written;
  // per RecordType, the sequence of the pass's first packet of that type.
  uint64_t held_from_ = 0, held_to_ = 0;
  std::array<uint64_t, kLiveRecordTypes> inflight_first_seq_{};
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_SENDER_H_
