#include "libinject/sender.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <vector>

#include "libinject/clock.h"
#include "libinject/counters_mode.h"
#include "libinject/log.h"
#include "libinject/producer.h"
#include "libinject/sampling_mode.h"
#include "proto/field_numbers.h"
#include "proto/framing.h"

namespace rooftrace::inject {

namespace f = wire::fields;

// Records of one sender pass, grouped by packet type.
struct Sender::Cycle {
  std::vector<LaunchRecord> launches;
  std::vector<GemmRecord> gemms;
  std::vector<NvtxRangeRecord> ranges;
  std::vector<NvtxMarkRecord> marks;
  std::vector<KernelInfo> kernels;
  std::vector<MemcpyInfo> memcpys;
  std::vector<DeviceInfo> devices;
  std::vector<KernelCountersInfo> counters;
  std::vector<PmSampleInfo> pm_samples;
  bool stats = false;
  bool goodbye = false;
  int32_t exit_code = -1;
  bool empty() const {
    return launches.empty() && gemms.empty() && ranges.empty() &&
           marks.empty() && kernels.empty() && memcpys.empty() &&
           devices.empty() && counters.empty() && pm_samples.empty() &&
           !stats && !goodbye;
  }
};

Sender::Sender(Producer* producer) : producer_(producer) {}

Sender::~Sender() = default;

void Sender::Run() {
  // The host's signals are for the host's threads.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "rooftrace-send");
  Producer::MarkSenderThread();

  OpenSink();
  WriteHello();
  last_stats_ns_ = MonotonicNs();
  const uint64_t capacity = producer_->queue_capacity();
  for (;;) {
    // Producers never wake the sender (no syscalls on their side), so it
    // polls: every flush interval when idle, every millisecond while the
    // queue is an eighth full or more, at once after a pass that hit its
    // limit.
    const size_t queued = producer_->queued();
    const uint64_t wait_ms = queued >= capacity ? 0
                             : queued >= capacity / 8
                                 ? 1
                                 : producer_->options().flush_interval_ms;
    if (!producer_->WaitForWork(wait_ms)) break;
    RunCycle(false);
  }
  const Producer::ActivityHooks activity = producer_->activity();
  if (activity.flush) activity.flush();  // CUPTI hands over what it holds
  RunCycle(true);
  sink_.reset();  // closes
  producer_->SenderDone();
}

// ------------------------------------------------------------------ sinks

StatusOr<std::string> Sender::DefaultSpoolPath(const HelloInfo& hello) const {
  std::string dir = producer_->config().spool_dir;
  if (producer_->config().spool_dir_shared) {
    RT_ASSIGN_OR_RETURN(dir, PrivateSpoolDir(dir));
  }
  return dir + "/rooftrace-" + hello.host + "-" + std::to_string(hello.pid) +
         "-" + std::to_string(hello.start_unix_ns) + ".rft";
}

StatusOr<std::unique_ptr<Sink>> Sender::OpenSpool(std::string* path) const {
  RT_ASSIGN_OR_RETURN(*path, DefaultSpoolPath(producer_->hello()));
  return OpenFileSink(*path, /*exclusive=*/true);
}

void Sender::OpenSink() {
  const SinkSpec& spec = producer_->config().sink;
  if (spec.kind == SinkSpec::Kind::kDefaultSpool) {
    std::string path;
    auto sink = OpenSpool(&path);
    if (!sink.ok()) {
      producer_->Warn(sink.status().message() + "; nothing will be recorded");
      return;
    }
    sink_ = std::move(*sink);
    producer_->set_spool_path(path);
    Say(LogLevel::kWarn, "no ROOFTRACE_SINK set: writing spool %s",
        path.c_str());
    return;
  }
  if (spec.kind == SinkSpec::Kind::kFile) {
    std::string actual;
    auto file = OpenSharedFileSink(spec.path, &actual);
    if (!file.ok()) {
      producer_->Warn(file.status().message() + "; nothing will be recorded");
      return;
    }
    sink_ = std::move(*file);
    producer_->set_spool_path(actual);
    if (actual != spec.path) {
      Say(LogLevel::kInfo,
          "%s is written by another process of this run: writing %s",
          spec.path.c_str(), actual.c_str());
    }
    return;
  }
  auto sink = ConnectSink(spec, producer_->options().connect_timeout_ms);
  if (sink.ok()) {
    sink_ = std::move(*sink);
    return;
  }
  SwitchToSpool(sink.status().message());
}

bool Sender::SwitchToSpool(const std::string& why) {
  const HelloInfo hello = producer_->hello();
  std::string path;
  auto spool = OpenSpool(&path);
  if (!spool.ok()) {
    sink_.reset();
    producer_->Warn(why + "; and " + spool.status().message() +
                    ": records from now on are lost (counted as dropped)");
    return false;
  }
  sink_ = std::move(*spool);
  producer_->set_spool_path(path);
  producer_->Warn(why + "; spooling to " + path +
                  " instead (nothing captured is lost; load it with "
                  "`rooftrace collect --ingest " +
                  path + "`)");
  // The spool is a complete stream on its own: the Hello (sequence 1 again)
  // restating every string defined so far, then the packets the collector
  // may not have read before it went away (the collector drops sequences it
  // already has), then what comes next.
  std::string head;
  const uint64_t next = encoder_.next_sequence();
  encoder_.set_next_sequence(1);
  ProtoWriter& w = encoder_.Begin(hello.start_ns);
  EncodeHello(w, f::packet::kHello, hello);
  std::vector<StringInterner::Definition> all;
  producer_->interner()->TakeAll(&all);
  encoder_.Finish(all, &head);
  encoder_.set_next_sequence(next);
  for (const std::string& frames : replay_) head += frames;
  replay_.clear();
  replay_bytes_ = 0;
  if (!sink_->Write(head).ok()) {
    producer_->Warn(sink_->name() +
                    ": cannot write the spool; records from now on are lost "
                    "(counted as dropped)");
    sink_.reset();
    return false;
  }
  hello_in_sink_ = true;
  return true;
}

void Sender::WriteHello() {
  // Capabilities attached before this point are included; CUPTI attached
  // later (an NVTX-first process that initialises CUDA afterwards) is
  // announced by the next Stats packet (Stats.capabilities, Stats.mode).
  const HelloInfo hello = producer_->hello();
  ProtoWriter& w = encoder_.Begin(hello.start_ns);
  EncodeHello(w, f::packet::kHello, hello);
  std::vector<StringInterner::Definition> none;
  encoder_.Finish(none, &hello_frame_);
  if (sink_ == nullptr) return;
  if (hello_in_sink_) {
    // The collector could not be reached: the spool opened instead already
    // begins with this Hello (sequence 1, taken above all the same).
    ++packets_sent_;
    bytes_sent_ += hello_frame_.size();
    return;
  }
  if (sink_->Write(hello_frame_).ok()) {
    ++packets_sent_;
    bytes_sent_ += hello_frame_.size();
    if (sink_->is_socket()) WaitForHelloReply();
    return;
  }
  if (sink_->is_socket()) {
    if (SwitchToSpool("collector at " + sink_->name() +
                      " closed the connection at Hello")) {
      ++packets_sent_;
      bytes_sent_ += hello_frame_.size();
    }
  } else {
    producer_->Warn(sink_->name() +
                    ": cannot write the trace; nothing will be recorded");
    sink_.reset();
  }
}

void Sender::WaitForHelloReply() {
  const int timeout_ms = producer_->options().hello_reply_timeout_ms;
  wire::FrameReader reader;
  const uint64_t deadline =
      MonotonicNs() + static_cast<uint64_t>(timeout_ms) * 1000000ull;
  while (MonotonicNs() < deadline) {
    const int left_ms =
        static_cast<int>((deadline - MonotonicNs()) / 1000000ull) + 1;
    auto bytes = sink_->ReadSome(left_ms);
    if (!bytes.ok()) {
      SwitchToSpool("collector at " + sink_->name() +
                    " closed the connection after Hello");
      return;
    }
    if (bytes->empty()) continue;
    reader.Feed(*bytes);
    std::string_view payload;
    if (reader.Next(&payload) == wire::FrameReader::Result::kFrame) {
      bool accepted = false;
      uint32_t version = 0;
      std::string reason;
      if (ParseHelloReply(payload, &accepted, &version, &reason) && !accepted) {
        SwitchToSpool("collector at " + sink_->name() +
                      " refused this session (" + reason + ")");
      }
      return;
    }
  }
  // No reply: an older or busy collector; keep streaming.
  Say(LogLevel::kDebug, "no HelloReply from %s within %d ms; streaming anyway",
      sink_->name().c_str(), timeout_ms);
}

void Sender::RememberForReplay(const std::string& frames) {
  replay_.push_back(frames);
  replay_bytes_ += frames.size();
  while (replay_bytes_ > kReplayBytes && replay_.size() > 1) {
    replay_bytes_ -= replay_.front().size();
    replay_.pop_front();
  }
}

bool Sender::WriteFrames(const std::string& frames) {
  if (sink_ == nullptr) return false;
  return sink_->Write(frames).ok();
}

// ------------------------------------------------------------------ passes

void Sender::DrainActivity(ActivityBufferPool* pool, ActivityDecoder* decoder,
                           Cycle* cycle) {
  if (pool == nullptr || decoder == nullptr) return;
  ActivityBufferPool::Completed done;
  while (pool->TakeCompleted(&done)) {
    decoder->Decode(done.buffer, done.valid_bytes, &cycle->kernels,
                    &cycle->memcpys, &cycle->devices, &decode_counts_);
    pool->Release(done.buffer);
  }
}

namespace {

// What CUPTI's record of a profiled launch knows and the launch callback
// may not: registers, static shared memory, the cluster, and the geometry
// of a launch whose API publishes no parameters.
void CompleteFromCuptiRecord(const KernelInfo& cupti, KernelInfo* made) {
  if (made->grid[0] == 0 && made->block[0] == 0) {
    for (int i = 0; i < 3; ++i) {
      made->grid[i] = cupti.grid[i];
      made->block[i] = cupti.block[i];
    }
    if (made->dynamic_shared_memory_bytes == 0) {
      made->dynamic_shared_memory_bytes = cupti.dynamic_shared_memory_bytes;
    }
  }
  for (int i = 0; i < 3; ++i) made->cluster[i] = cupti.cluster[i];
  made->registers_per_thread = cupti.registers_per_thread;
  made->static_shared_memory_bytes = cupti.static_shared_memory_bytes;
}

}  // namespace

void Sender::ReplaceReplayedKernels(CountersMode* counters, Cycle* cycle,
                                    size_t first_counters, bool final_pass) {
  std::vector<KernelInfo>& kernels = cycle->kernels;
  CountersMode::LaunchFacts facts;
  std::vector<KernelInfo> completed;  // made kernels waiting, now complete
  // CUPTI's records of this pass.
  size_t kept = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const uint64_t id = kernels[i].correlation_id;
    if (made_from_launch_.erase(id) > 0) {
      ++kernels_replaced_;
      continue;
    }
    if (auto waiting = made_waiting_.find(id); waiting != made_waiting_.end()) {
      const bool timed = kernels[i].start_ns != 0 || kernels[i].end_ns != 0;
      if (!timed) {
        // The made kernel, with what CUPTI's record adds; the record goes.
        CompleteFromCuptiRecord(kernels[i], &waiting->second);
        completed.push_back(waiting->second);
        ++kernels_from_launch_;
        ++kernels_replaced_;
        made_waiting_.erase(waiting);
        continue;
      }
      // CUPTI timed it after all: its record is the kernel.
      made_waiting_.erase(waiting);
    }
    if (counters->FindLaunchFacts(id, &facts)) {
      if (kernels[i].start_ns == 0 && kernels[i].end_ns == 0) {
        untimed_held_.emplace(id, kernels[i]);
        continue;
      }
      timed_profiled_.insert(id);
    }
    if (kept != i) kernels[kept] = std::move(kernels[i]);
    ++kept;
  }
  kernels.resize(kept);
  // The counters of this pass.
  for (size_t i = first_counters; i < cycle->counters.size(); ++i) {
    const KernelCountersInfo& c = cycle->counters[i];
    if (timed_profiled_.erase(c.correlation_id) > 0) continue;
    // Facts gone (kFactSlots later launches): CUPTI's record stays the
    // kernel, held or to come.
    if (!counters->FindLaunchFacts(c.correlation_id, &facts)) continue;
    KernelInfo made = KernelFromLaunch(facts, c.gpu_time_ns);
    if (auto held = untimed_held_.find(c.correlation_id);
        held != untimed_held_.end()) {
      CompleteFromCuptiRecord(held->second, &made);
      untimed_held_.erase(held);
      ++kernels_replaced_;
    } else if (made.grid[0] == 0 && made.block[0] == 0) {
      made_waiting_.emplace(c.correlation_id, made);  // for CUPTI's record
      continue;
    } else {
      made_from_launch_.insert(c.correlation_id);
    }
    kernels.push_back(made);
    ++kernels_from_launch_;
  }
  kernels.insert(kernels.end(), completed.begin(), completed.end());
  if (final_pass) {
    // Made kernels whose CUPTI record never came: as made.
    for (auto& [id, k] : made_waiting_) {
      kernels.push_back(k);
      ++kernels_from_launch_;
    }
    made_waiting_.clear();
    // Profiled launches whose counters never came: CUPTI's record as is.
    for (auto& [id, k] : untimed_held_) kernels.push_back(k);
    untimed_held_.clear();
  }
}

void Sender::DrainInto(Cycle* cycle, bool final_pass) {
  const Producer::ActivityHooks hooks = producer_->activity();
  if (hooks.periodic_flush && !final_pass) hooks.periodic_flush();
  DrainActivity(hooks.pool, hooks.decoder, cycle);
  if (CountersMode* counters = producer_->counters()) {
    // Evaluating counter images runs here, on the thread that also hands
    // CUPTI its activity buffers back: a long evaluation leaves CUPTI
    // without buffers (counters mode dropped records on the H100). The
    // debug log says how long each one took, to find out.
    const uint64_t start = MonotonicNs();
    const size_t before = cycle->counters.size();
    counters->Flush(final_pass, &cycle->counters);
    const uint64_t took_us = (MonotonicNs() - start) / 1000;
    if (took_us >= 1000) {
      Say(LogLevel::kDebug,
          "counters: evaluated %zu launch(es) in %llu us; %zu activity "
          "buffer(s) waiting",
          cycle->counters.size() - before,
          static_cast<unsigned long long>(took_us),
          hooks.pool != nullptr ? hooks.pool->completed_count() : size_t{0});
    }
    DrainActivity(hooks.pool, hooks.decoder, cycle);  // completed meanwhile
    ReplaceReplayedKernels(counters, cycle, before, final_pass);
  }
  // Sampling mode: decoding and evaluating PM samples happens here, never
  // on the application's threads; at the final pass the samplers stop.
  if (SamplingMode* sampling = producer_->sampling()) {
    sampling->Collect(final_pass, &cycle->pm_samples);
  }
  // Kernel records going out without timestamps: CUPTI could not collect
  // them, or a forced flush returned them unfinished (counters mode
  // forces only when it believes no such record can be left: a non-zero
  // count on a GPU says that belief was wrong).
  for (const KernelInfo& k : cycle->kernels) {
    kernels_untimed_ += k.start_ns == 0 && k.end_ns == 0;
  }
  // Bounded per pass so a flood cannot starve the writes; the final pass
  // takes everything.
  const size_t limit = final_pass ? ~size_t{0} : producer_->queue_capacity();
  uint64_t position = 0;
  held_from_ = held_to_ = 0;
  // Each record is copied once, from its slot into its type's list.
  const auto take = [cycle](const CapturedRecord& r) {
    switch (r.type) {
      case RecordType::kLaunch:
        cycle->launches.push_back(r.launch);
        break;
      case RecordType::kGemm:
        cycle->gemms.push_back(r.gemm);
        break;
      case RecordType::kNvtxRange:
        cycle->ranges.push_back(r.range);
        break;
      case RecordType::kNvtxMark:
        cycle->marks.push_back(r.mark);
        break;
      default:
        break;
    }
  };
  for (size_t i = 0; i < limit && producer_->PopRecord(take, &position);
       ++i) {
    if (i == 0) held_from_ = position;
    held_to_ = position + 1;
  }
}

StatsInfo Sender::SnapshotStats() {
  StatsInfo s;
  s.counts = producer_->ProducedCounts();
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    s.counts[k].sent = sent_[k].sent;
  }
  // Kernels made from profiled launches are seen records of their own;
  // the CUPTI records they replaced count as filtered (not sent by choice).
  s.counts[wire::enums::kRecordKernel].seen +=
      decode_counts_.kernels_seen + kernels_from_launch_;
  s.counts[wire::enums::kRecordKernel].filtered +=
      decode_counts_.kernels_filtered + kernels_replaced_;
  s.kernels_from_launch = kernels_from_launch_;
  s.kernels_untimed = kernels_untimed_;
  s.counts[wire::enums::kRecordMemcpy].seen += decode_counts_.memcpys_seen;
  s.counts[wire::enums::kRecordDevice].seen += decode_counts_.devices_seen;
  s.packets_sent = packets_sent_;
  s.bytes_sent = bytes_sent_;
  s.warnings = producer_->TakeWarnings();
  const HelloInfo hello = producer_->hello();  // capabilities as they are now
  s.capabilities = hello.capabilities;
  s.mode = hello.mode;
  const Producer::ActivityHooks activity = producer_->activity();
  if (activity.dropped_records) {
    s.cupti_records_dropped = activity.dropped_records();
  }
  if (const ActivityBufferPool* pool = activity.pool) {
    // Returned first: a buffer is given before it is returned, so the
    // difference never goes below zero.
    s.activity_buffers_completed = pool->buffers_returned();
    s.activity_buffers_requested = pool->buffers_given();
    s.activity_buffers_outstanding =
        s.activity_buffers_requested - s.activity_buffers_completed;
    s.activity_buffers_refused = pool->times_exhausted();
  }
  if (CountersMode* counters = producer_->counters()) {
    const RecordCountValues c = counters->Counts();
    RecordCountValues& out = s.counts[wire::enums::kRecordCounters];
    out.seen += c.seen;
    out.dropped += c.dropped;
    out.filtered += c.filtered;
    s.counter_passes = counters->passes();
    for (std::string& line : counters->TakeWarnings()) {
      Say(LogLevel::kWarn, "%s", line.c_str());
      s.warnings.push_back(std::move(line));
    }
  }
  if (SamplingMode* sampling = producer_->sampling()) {
    s.pm_samples = pm_samples_sent_;
    s.pm_samples_lost = sampling->samples_lost();
    for (std::string& line : sampling->TakeWarnings()) {
      Say(LogLevel::kWarn, "%s", line.c_str());
      s.warnings.push_back(std::move(line));
    }
    if (sampling->failed()) {
      // Sampling never started (or stopped everywhere): what the run
      // recorded is trace mode's.
      s.mode = wire::enums::kModeTrace;
      std::erase(s.capabilities, uint32_t{wire::enums::kCapPmSampling});
    }
  }
  return s;
}

void Sender::EncodeCycle(const Cycle& c, std::string* frames,
                         CountTable* sent) {
  std::vector<StringInterner::Definition> defs;
  producer_->interner()->TakePending(&defs);
  uint64_t packets = 0;
  const size_t max_batch = producer_->options().max_batch_records;
  for (const DeviceInfo& d : c.devices) {
    ProtoWriter& w = encoder_.Begin(MonotonicNs());
    EncodeDevice(w, f::packet::kDevice, d);
    encoder_.Finish(defs, frames);
    defs.clear();
    ++packets;
  }
  // Each type's packets, in this order; the live buffer is told where the
  // application threads' records (launches, GEMMs, ranges, marks) start.
  const auto batches = [&](const auto& items, size_t batch, uint32_t packet,
                           uint32_t item, auto encode_item) {
    packets += EncodeInBatches(encoder_, items, batch, packet, item,
                               encode_item, MonotonicNs(), &defs, frames);
  };
  const auto first_sequence = [&](RecordType type, bool any) {
    inflight_first_seq_[static_cast<size_t>(type)] =
        any ? encoder_.next_sequence() : 0;
  };
  batches(c.kernels, max_batch, f::packet::kKernelBatch,
          f::kernel_batch::kKernels, EncodeKernel);
  first_sequence(RecordType::kLaunch, !c.launches.empty());
  batches(c.launches, max_batch, f::packet::kKernelBatch,
          f::kernel_batch::kLaunches, EncodeLaunch);
  batches(c.memcpys, max_batch, f::packet::kMemcpyBatch,
          f::memcpy_batch::kMemcpys, EncodeMemcpy);
  // KernelCounters carry a dozen metric values each: smaller batches.
  batches(c.counters, std::max<size_t>(1, max_batch / 4),
          f::packet::kCounterBatch, f::counter_batch::kCounters,
          EncodeKernelCounters);
  // Eight numbers each: PM samples go in full batches.
  batches(c.pm_samples, max_batch, f::packet::kPmSampleBatch,
          f::pm_sample_batch::kSamples, EncodePmSample);
  pm_samples_sent_ += c.pm_samples.size();
  first_sequence(RecordType::kGemm, !c.gemms.empty());
  batches(c.gemms, max_batch, f::packet::kGemmBatch, f::gemm_batch::kGemms,
          EncodeGemm);
  first_sequence(RecordType::kNvtxRange, !c.ranges.empty());
  batches(c.ranges, max_batch, f::packet::kNvtxBatch, f::nvtx_batch::kRanges,
          EncodeNvtxRange);
  first_sequence(RecordType::kNvtxMark, !c.marks.empty());
  batches(c.marks, max_batch, f::packet::kNvtxBatch, f::nvtx_batch::kMarks,
          EncodeNvtxMark);
  (*sent)[wire::enums::kRecordDevice].sent += c.devices.size();
  (*sent)[wire::enums::kRecordKernel].sent += c.kernels.size();
  (*sent)[wire::enums::kRecordLaunch].sent += c.launches.size();
  (*sent)[wire::enums::kRecordMemcpy].sent += c.memcpys.size();
  (*sent)[wire::enums::kRecordGemm].sent += c.gemms.size();
  (*sent)[wire::enums::kRecordCounters].sent += c.counters.size();
  (*sent)[wire::enums::kRecordNvtxRange].sent += c.ranges.size();
  (*sent)[wire::enums::kRecordNvtxMark].sent += c.marks.size();

  // Definitions taken with no record in this pass still need a packet:
  // they ride on a Stats packet.
  if (!c.stats && !c.goodbye && defs.empty()) return;
  EncodeStatsAndGoodbye(c, *sent, packets, &defs, frames, &packets);
}

void Sender::EncodeStatsAndGoodbye(
    const Cycle& c, const CountTable& sent, uint64_t packets_so_far,
    std::vector<StringInterner::Definition>* defs, std::string* frames,
    uint64_t* packets) {
  // Stats and Goodbye state the counts as they will be once this pass's
  // frames are written.
  StatsInfo stats = SnapshotStats();
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    stats.counts[k].sent += sent[k].sent;
  }
  stats.packets_sent = packets_sent_ + packets_so_far + 1;
  stats.bytes_sent = bytes_sent_ + frames->size();
  {
    ProtoWriter& w = encoder_.Begin(MonotonicNs());
    EncodeStats(w, f::packet::kStats, stats);
    encoder_.Finish(*defs, frames);
    defs->clear();
    ++*packets;
  }
  if (c.goodbye) {
    ProtoWriter& w = encoder_.Begin(MonotonicNs());
    EncodeGoodbye(w, f::packet::kGoodbye, stats.counts,
                  packets_sent_ + *packets + 1, RealtimeNs(), MonotonicNs(),
                  c.exit_code);
    encoder_.Finish(*defs, frames);
    ++*packets;
  }
}

void Sender::AnnounceHeld() {
  LiveHeader* h = producer_->live_buffer()->header();
  h->inflight_batch.store(producer_->options().max_batch_records,
                          std::memory_order_relaxed);
  for (int t = 0; t < kLiveRecordTypes; ++t) {
    h->inflight_first_seq[t].store(inflight_first_seq_[t],
                                   std::memory_order_relaxed);
  }
  h->inflight_from.store(held_from_, std::memory_order_relaxed);
  h->inflight_to.store(held_to_, std::memory_order_release);
}

void Sender::ReleaseHeld() {
  if (held_to_ == held_from_) return;
  LiveHeader* h = producer_->live_buffer()->header();
  h->inflight_to.store(held_from_, std::memory_order_release);
  for (uint64_t p = held_from_; p < held_to_; ++p) producer_->ReleaseRecord(p);
  held_from_ = held_to_ = 0;
}

void Sender::RunCycle(bool final_pass) {
  Cycle cycle;
  DrainInto(&cycle, final_pass);
  const uint64_t now = MonotonicNs();
  if (final_pass || now - last_stats_ns_ >=
                        producer_->options().stats_interval_ms * 1000000ull) {
    cycle.stats = true;
    last_stats_ns_ = now;
  }
  if (final_pass) {
    cycle.goodbye = true;
    cycle.exit_code = producer_->exit_code();
  }
  if (cycle.empty()) return;

  const uint64_t first_sequence = encoder_.next_sequence();
  std::string frames;
  CountTable sent{};
  inflight_first_seq_ = {};
  EncodeCycle(cycle, &frames, &sent);
  if (frames.empty()) {
    ReleaseHeld();
    return;
  }
  AnnounceHeld();
  const bool to_socket = sink_ != nullptr && sink_->is_socket();
  bool written = WriteFrames(frames);
  if (!written && to_socket) {
    // The collector went away: the spool gets this pass too.
    if (SwitchToSpool("collector at " + sink_->name() + " went away")) {
      written = WriteFrames(frames);
    }
  } else if (written && to_socket) {
    RememberForReplay(frames);
  }
  ReleaseHeld();
  if (!written) {
    // No sink at all: everything of this pass is lost; say so in counts.
    producer_->CountLost(sent);
    return;
  }
  packets_sent_ += encoder_.next_sequence() - first_sequence;
  bytes_sent_ += frames.size();
  for (int k = 0; k < wire::enums::kRecordKindCount; ++k) {
    sent_[k].sent += sent[k].sent;
  }
}

}  // namespace rooftrace::inject
