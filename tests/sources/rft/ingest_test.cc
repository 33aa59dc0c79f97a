// IngestTraceFile end to end on generated traces: join, annotation, steps
// and phases, import statistics, truncation and refusal.
#include "sources/rft/ingest.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sources/rft/testing/trace_builder.h"
#include "proto/field_numbers.h"
#include "proto/framing.h"
#include "proto/live_buffer.h"
#include "sources/rft/live_recovery.h"
#include "sources/rft/wire_session.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::GenerateLlmTrace;
using test_support::LlmTraceOptions;
using test_support::StoreQuery;
using test_support::TraceBuilder;

class IngestTest : public ::testing::Test {
 protected:
  std::string Write(const TraceBuilder& b, const std::string& name) {
    const std::string path = dir_.File(name);
    EXPECT_TRUE(b.WriteFile(path).ok());
    return path;
  }

  test_support::TempDir dir_{"ingest"};
  std::string store_ = dir_.File("runs.sqlite");
};

// A sampling-mode trace (Hello MODE_SAMPLING, kernels, PM samples) stored:
// the run's mode, each kernel's PM-sampled DRAM bytes and their
// provenance in bytes_source, the run's sources and the samples' counts
// in import_stats.
TEST_F(IngestTest, SamplingModeTraceStoresPmSampledBytes) {
  test_support::SessionInfo info;
  info.mode = wire::MODE_SAMPLING;
  TraceBuilder b(info);
  b.Hello();
  b.AddDevice(0, "NVIDIA H100 80GB HBM3");
  b.AddKernel("_Z3addPfS_", 1, 1000000, 1030000);
  b.AddLaunch(1, 990000);
  b.AddKernel("_Z6reducePf", 2, 1040000, 1060000).set_stream_id(7);
  b.AddLaunch(2, 991000);
  b.AddKernel("_Z4copyPf", 3, 1050000, 1080000).set_stream_id(8);
  b.AddLaunch(3, 992000);
  for (uint64_t t = 1000000; t < 1100000; t += 10000) {
    b.AddPmSample(0, t, t + 10000, 1000, 400);
  }
  b.Goodbye();
  auto r = IngestTraceFile(Write(b, "sampling.rft"), store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Text("SELECT mode FROM runs"), "sampling");
  EXPECT_EQ(q.Int("SELECT dram_bytes FROM kernels WHERE correlation_id=1"),
            4200);
  EXPECT_EQ(q.Int("SELECT dram_read_bytes FROM kernels WHERE "
                  "correlation_id=1"),
            3000);
  EXPECT_EQ(q.Text("SELECT bytes_source FROM kernels WHERE correlation_id=1"),
            "pm-sampling (exact)");
  EXPECT_EQ(q.Text("SELECT bytes_source FROM kernels WHERE correlation_id=2"),
            "pm-sampling (attributed, error 33.3%)");
  EXPECT_EQ(q.Text("SELECT bytes_source FROM kernels WHERE correlation_id=3"),
            "pm-sampling (attributed, error 20.0%)");
  EXPECT_NE(q.Text("SELECT flops_sources FROM runs").find("pm-sampling"),
            std::string::npos);
  auto stat = [&](const std::string& name) {
    return q.Int("SELECT value FROM import_stats WHERE name='" + name + "'");
  };
  EXPECT_EQ(stat("pm_samples"), 10);
  EXPECT_EQ(stat("pm_samples_exact"), 6);
  EXPECT_EQ(stat("pm_samples_split"), 1);
  EXPECT_EQ(stat("pm_samples_unattributed"), 3);
  EXPECT_EQ(stat("kernels_pm_sampled"), 3);
}

// Batch 4, prompt 128, 8 decode steps, 2 layers: 9 steps of 25 kernels and
// 9 GEMMs; step 1 is prefill (512 tokens), steps 2-9 decode (4 tokens).
TEST_F(IngestTest, LlmTraceStepsPhasesAndFlops) {
  LlmTraceOptions o;
  TraceBuilder b(o.session);
  const auto truth = GenerateLlmTrace(o, &b);
  auto r = IngestTraceFile(Write(b, "llm.rft"), store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->kernels, 225u);
  EXPECT_TRUE(r->warning.empty());
  StoreQuery q(store_);
  const std::string run = " WHERE run_id=" + std::to_string(r->run_id);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels" + run), 225);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps" + run), 9);
  EXPECT_EQ(q.Text("SELECT phase FROM steps" + run + " AND step_id=1"),
            "prefill");
  EXPECT_EQ(q.Int("SELECT token_count FROM steps" + run + " AND step_id=1"),
            512);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps" + run +
                  " AND phase='decode' AND token_count=4"),
            8);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels" + run +
                  " AND phase='prefill'"),
            25);
  // Every GEMM found its weight operand (A) and its kernel.
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM gemm_calls" + run +
                  " AND weight_operand='a' AND kernel_count=1"),
            81);
  EXPECT_EQ(q.Int("SELECT SUM(flops) FROM kernels" + run),
            static_cast<int64_t>(truth.gemm_flops));
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels" + run +
                  " AND flops_source='analytic' AND precision='bf16_tc'"),
            81);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels" + run +
                  " AND flops_source='none' AND flops IS NULL"),
            225 - 81);
  // Prefill qkv GEMM of layer 0: m=3072 n=512 k=1024, AI =
  // 2*3072*512*1024 / ((3072*1024 + 1024*512 + 3072*512)*2) =
  // 3221225472 / 10485760 = 307.2.
  EXPECT_NEAR(q.Real("SELECT ai FROM kernels" + run +
                     " AND shape='m=3072 n=512 k=1024 batch=1' AND step_id=1"),
              307.2, 1e-9);
  EXPECT_EQ(q.Text("SELECT roof_source FROM runs" + run),
            "datasheet:h100-sxm");
  EXPECT_EQ(q.Text("SELECT flops_sources FROM runs" + run), "analytic");
  EXPECT_EQ(q.Int("SELECT complete FROM runs" + run), 1);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats" + run +
                  " AND name='received_kernel'"),
            225);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats" + run +
                  " AND name='unmatched_kernel'"),
            0);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM memcpys" + run +
                  " AND kind='dtoh' AND step_id IS NOT NULL"),
            9);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM roofs" + run +
                  " AND precision='bf16_tc' AND source='datasheet'"),
            1);
}

// The analyzer's temporary store is written without a journal: the same
// rows, and the file is left in rollback mode (a durable store stays WAL).
TEST_F(IngestTest, ScratchStoreHoldsTheSameRowsWithoutAJournal) {
  LlmTraceOptions o;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  const std::string trace = Write(b, "llm.rft");
  const std::string scratch_store = dir_.File("scratch.sqlite");
  auto r = IngestTraceFile(trace, scratch_store, {},
                           Store::Durability::kScratch);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(IngestTraceFile(trace, store_, {}).ok());
  StoreQuery s(scratch_store), d(store_);
  EXPECT_EQ(s.Int("SELECT COUNT(*) FROM kernels"), 225);
  EXPECT_EQ(s.Int("SELECT SUM(flops) FROM kernels"),
            d.Int("SELECT SUM(flops) FROM kernels"));
  EXPECT_EQ(s.Text("PRAGMA journal_mode"), "delete");
  EXPECT_EQ(d.Text("PRAGMA journal_mode"), "wal");
}

// With NVTX ranges and no token copies, steps follow the outermost range and
// kernels carry their path.
TEST_F(IngestTest, NvtxStepsAndPaths) {
  LlmTraceOptions o;
  o.nvtx = true;
  o.host_gap_only = true;
  o.decode_steps = 3;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  auto r = IngestTraceFile(Write(b, "nvtx.rft"), store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps"), 4);
  EXPECT_EQ(q.Text("SELECT boundary FROM steps WHERE step_id=1"), "nvtx");
  EXPECT_EQ(q.Text("SELECT phase FROM steps WHERE step_id=1"), "prefill");
  EXPECT_EQ(q.Text("SELECT nvtx_path FROM kernels ORDER BY start_ns LIMIT 1"),
            "prefill/layer.0");
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE path='decode/layer.1'"),
            3);
}

// No copies and no NVTX: the 5 ms host pauses between steps split them.
TEST_F(IngestTest, HostGapSteps) {
  LlmTraceOptions o;
  o.host_gap_only = true;
  o.decode_steps = 4;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  auto r = IngestTraceFile(Write(b, "gap.rft"), store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps"), 5);
  EXPECT_EQ(q.Text("SELECT boundary FROM steps WHERE step_id=1"), "host_gap");
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps WHERE phase='decode'"), 4);
}

// Counters mode: hardware numbers win over the analytic ones.
TEST_F(IngestTest, CountersModeUsesCountedFlopsAndBytes) {
  LlmTraceOptions o;
  o.counters = true;
  o.session.mode = wire::MODE_COUNTERS;
  o.decode_steps = 1;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  auto r = IngestTraceFile(Write(b, "ctr.rft"), store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels WHERE bytes_source='counters'"),
            50);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels WHERE flops_source='counters'"),
            50);
  EXPECT_EQ(q.Text("SELECT flops_sources FROM runs"), "counters");
  EXPECT_EQ(q.Text("SELECT mode FROM runs"), "counters");
  // Elementwise kernels counted zero FLOPs: judged on bandwidth alone
  // (50 kernels - 18 GEMMs - 4 attention kernels).
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels WHERE flops=0 AND ai IS NULL "
                  "AND fraction_of_roof IS NOT NULL"),
            28);
}

// Records of one kernel arrive in any order across packets: the kernel
// first, its launch later, the GEMM call last, the kernel name defined in
// the very last packet. Leftovers are kept and counted.
TEST_F(IngestTest, JoinAcrossPacketsInAnyOrderAndCountLeftovers) {
  TraceBuilder b;
  b.Hello();
  b.AddDevice(0, "NVIDIA H100 80GB HBM3");
  wire::Packet kernels;
  auto* k = kernels.mutable_kernel_batch()->add_kernels();
  k->set_correlation_id(7);
  k->set_start_ns(1000000);
  k->set_end_ns(1012000);  // 12 us
  k->set_name_iid(1);
  auto* orphan = kernels.mutable_kernel_batch()->add_kernels();
  orphan->set_correlation_id(8);  // never launched: unmatched kernel
  orphan->set_start_ns(2000000);
  orphan->set_end_ns(2001000);
  orphan->set_name_iid(1);
  b.EmitRaw(kernels);
  b.AddLaunch(7, 990000, /*gemm_call_id=*/3);
  b.AddLaunch(99, 995000);  // launch without kernel
  b.Flush();
  b.AddGemm(3, 4096, 8, 4096, 0x1000, 0x2000, 989000);
  b.AddGemm(4, 16, 16, 16, 0x3000, 0x4000, 999000);  // no kernel
  b.AddCounters(1234, 10, 10, wire::PRECISION_FP32, 5);  // no kernel
  b.Flush();
  wire::Packet names;
  auto* s = names.add_interned_strings();
  s->set_iid(1);
  s->set_str("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64");
  b.EmitRaw(names);
  auto r = IngestTraceFile(Write(b, "order.rft"), store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 2);
  // 2*4096*8*4096 FLOPs, bytes (4096*4096+4096*8+4096*8)*2, 12 us:
  // fraction of roof 0.838 (see roof_model_test).
  EXPECT_EQ(q.Int("SELECT flops FROM kernels WHERE correlation_id=7"),
            268435456);
  EXPECT_EQ(q.Int("SELECT dram_bytes FROM kernels WHERE correlation_id=7"),
            33685504);
  EXPECT_NEAR(q.Real("SELECT fraction_of_roof FROM kernels WHERE "
                     "correlation_id=7"),
              0.837948, 1e-5);
  EXPECT_EQ(q.Text("SELECT bound FROM kernels WHERE correlation_id=7"),
            "memory");
  EXPECT_EQ(q.Text("SELECT family FROM kernels WHERE correlation_id=7"),
            "sm90_xmma_gemm");
  EXPECT_EQ(q.Int("SELECT thread_id FROM kernels WHERE correlation_id=8"), -1);
  auto stat = [&](const std::string& name) {
    return q.Int("SELECT value FROM import_stats WHERE name='" + name + "'");
  };
  EXPECT_EQ(stat("unmatched_kernel"), 1);
  EXPECT_EQ(stat("unmatched_launch"), 1);
  EXPECT_EQ(stat("unmatched_gemm"), 1);
  EXPECT_EQ(stat("unmatched_counters"), 1);
  EXPECT_EQ(stat("unresolved_strings"), 0);
  // No Goodbye: the session and the run are incomplete.
  EXPECT_EQ(stat("sessions_incomplete"), 1);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
  EXPECT_EQ(q.Int("SELECT kernel_count FROM gemm_calls WHERE call_id=4"), 0);
}

// A producer's Stats say what its CUPTI activity buffers did (cumulative):
// the latest values are the session's import statistics, beside CUPTI's
// dropped records.
TEST_F(IngestTest, ActivityBufferFiguresOfTheLatestStatsAreStored) {
  TraceBuilder b;
  b.Hello();
  for (uint64_t i : {1u, 2u}) {
    wire::Packet p;
    auto* s = p.mutable_stats();
    s->set_cupti_records_dropped(10 * i);
    s->set_activity_buffers_requested(40 * i);
    s->set_activity_buffers_completed(30 * i);
    s->set_activity_buffers_outstanding(10 * i);
    s->set_activity_buffers_refused(i);
    s->set_kernels_from_launch(100 * i);
    s->set_kernels_untimed(3 * i);
    b.EmitRaw(p);
  }
  b.Goodbye();
  auto r = IngestTraceFile(Write(b, "stats.rft"), store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  auto stat = [&](const std::string& name) {
    return q.Int("SELECT value FROM import_stats WHERE name='" + name + "'");
  };
  EXPECT_EQ(stat("producer_cupti_dropped"), 20);
  EXPECT_EQ(stat("producer_activity_buffers_requested"), 80);
  EXPECT_EQ(stat("producer_activity_buffers_completed"), 60);
  EXPECT_EQ(stat("producer_activity_buffers_outstanding"), 20);
  EXPECT_EQ(stat("producer_activity_buffers_refused"), 2);
  EXPECT_EQ(stat("producer_kernels_from_launch"), 200);
  EXPECT_EQ(stat("producer_kernels_untimed"), 6);
}

// A file cut inside a frame keeps every complete frame, says at which byte
// it broke and stores the run as incomplete for that reason (issue 18
// item 18: it used to be a warning only); producer drops reported in
// Goodbye reach the statistics.
TEST_F(IngestTest, TruncatedFileKeepsWhatWasRead) {
  LlmTraceOptions o;
  o.decode_steps = 2;
  o.max_batch_records = 10;
  TraceBuilder b(o.session);
  b.AddDropped(wire::RECORD_KERNEL, 3);
  GenerateLlmTrace(o, &b);
  std::string bytes = b.Framed();
  const std::string full = Write(b, "full.rft");
  const std::string cut = dir_.File("cut.rft");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  auto r = IngestTraceFile(cut, store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->warning.find("cut.rft"), std::string::npos) << r->warning;
  EXPECT_NE(r->warning.find("at byte"), std::string::npos) << r->warning;
  EXPECT_TRUE(r->cut_short);
  EXPECT_FALSE(r->interrupted);
  EXPECT_GT(r->kernels, 0u);
  EXPECT_LT(r->kernels, 75u);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT complete FROM runs WHERE run_id=" +
                  std::to_string(r->run_id)),
            0);
  const std::string reason =
      q.Text("SELECT incomplete_reason FROM runs WHERE run_id=" +
             std::to_string(r->run_id));
  EXPECT_NE(reason.find("cut short"), std::string::npos) << reason;
  EXPECT_NE(reason.find("at byte"), std::string::npos) << reason;
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE name='truncated_streams'"),
            1);
  // The full file as a second run in the same store (reopen appends).
  auto r2 = IngestTraceFile(full, store_, {});
  ASSERT_TRUE(r2.ok());
  EXPECT_FALSE(r2->cut_short);
  EXPECT_EQ(r2->run_id, r->run_id + 1);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE run_id=" +
                  std::to_string(r2->run_id) +
                  " AND name='producer_dropped_kernel'"),
            3);
}

// Not a trace, wrong magic, newer protocol: clear errors, no run stored.
TEST_F(IngestTest, RefusesFilesThatAreNotTraces) {
  const std::string garbage = dir_.File("garbage.rft");
  std::ofstream(garbage, std::ios::binary) << "hello world, not a trace";
  auto r = IngestTraceFile(garbage, store_, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("garbage.rft"), std::string::npos);
  EXPECT_NE(r.status().message().find("not a rooftrace trace"),
            std::string::npos);

  test_support::SessionInfo bad;
  bad.magic = 0x1234;
  TraceBuilder b(bad);
  b.Hello();
  r = IngestTraceFile(Write(b, "magic.rft"), store_, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("magic"), std::string::npos);

  test_support::SessionInfo newer;
  newer.protocol_version = wire::kProtocolVersion + 1;
  TraceBuilder c(newer);
  c.Hello();
  r = IngestTraceFile(Write(c, "newer.rft"), store_, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("upgrade"), std::string::npos);

  auto missing = IngestTraceFile(dir_.File("nope.rft"), store_, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs"), -2);  // store never created
}

// Two sessions concatenated in one file (spools of a parent and its forked
// child): two session rows, step ids unique in the run.
TEST_F(IngestTest, ConcatenatedSessionsInOneFile) {
  LlmTraceOptions o;
  o.decode_steps = 1;
  TraceBuilder a(o.session);
  GenerateLlmTrace(o, &a);
  o.session.pid = 4343;
  TraceBuilder c(o.session);
  GenerateLlmTrace(o, &c);
  const std::string path = dir_.File("two.rft");
  std::ofstream(path, std::ios::binary) << a.Framed() << c.Framed();
  auto r = IngestTraceFile(path, store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sessions"), 2);
  EXPECT_EQ(q.Int("SELECT COUNT(DISTINCT pid) FROM sessions"), 2);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps"), 4);
  EXPECT_EQ(q.Int("SELECT MAX(step_id) FROM steps"), 4);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 100);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 1);
}

// SIGINT/SIGTERM during `collect --ingest` (the stop flag set): reading
// stops, what was read is stored, and the run says it is incomplete and
// why (it used to be left with complete NULL by a killed collector).
TEST_F(IngestTest, StopFlagEndsTheRunIncompleteWithTheReason) {
  LlmTraceOptions o;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  const std::string trace = Write(b, "llm.rft");
  std::atomic<bool> stop{true};
  IngestOptions io;
  io.stop = &stop;
  auto r = IngestTraceFile(trace, store_, io);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->interrupted);
  EXPECT_NE(r->warning.find("interrupted"), std::string::npos) << r->warning;
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
  EXPECT_NE(q.Text("SELECT incomplete_reason FROM runs").find("interrupted"),
            std::string::npos)
      << q.Text("SELECT incomplete_reason FROM runs");
}


// What a producer that died leaves in its live buffer: `ranges` NVTX ranges
// (ids from `first_id`, named "step") committed in its queue and `seen`
// ranges counted in its header. Written by a child process that ends
// without clean-up, so the buffer's lock is gone as after a SIGKILL.
void WriteDeadProducersBuffer(const std::string& path,
                              const test_support::SessionInfo& info,
                              uint64_t first_id, uint64_t ranges,
                              uint64_t seen) {
  const pid_t child = fork();
  if (child == 0) {
    auto live = inject::LiveBuffer::Create(path, 8, 4096, "hello", info.pid,
                                           info.start_unix_ns);
    if (!live.ok()) _exit(1);
    (*live)->AppendString(1, "step");
    inject::LiveSlot* slots = (*live)->slots();
    for (uint64_t p = 0; p < ranges; ++p) {
      inject::CapturedRecord r{};
      r.type = inject::RecordType::kNvtxRange;
      r.range.range_id = first_id + p;
      r.range.name_iid = 1;
      r.range.start_ns = 2000000000ull + p * 1000;
      r.range.end_ns = r.range.start_ns + 500;
      slots[p].value = r;
      slots[p].seq.store(1);  // committed (position p stored as p + 1 - p)
    }
    (*live)->header()->counts.seen[wire::enums::kRecordNvtxRange].store(seen);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A spool of that producer: its Hello naming the buffer and `ranges`
// NVTX ranges (ids 1..), no Goodbye (it died).
TraceBuilder SpoolOfADeadProducer(const test_support::SessionInfo& info,
                                  uint64_t ranges) {
  TraceBuilder b(info);
  b.Hello();
  for (uint64_t i = 1; i <= ranges; ++i) {
    b.AddNvtxRange(i, "step", 1000000000ull + i * 1000,
                   1000000000ull + i * 1000 + 500);
  }
  b.Flush();
  return b;
}

// #29 D2: an ingest that does not read the whole spool (here: it was cut
// short) stores an incomplete run and must leave the producer's live
// buffer in place, so that ingesting the whole spool again stores every
// record; that complete read then stores the buffer's records and removes
// it. (The buffer used to be deleted by the first, incomplete ingest.)
TEST_F(IngestTest, LiveBufferStaysUntilItsRecordsAreStoredWhole) {
  test_support::SessionInfo info;
  info.live_buffer = dir_.File("producer.live");
  WriteDeadProducersBuffer(info.live_buffer, info, 100, 5, 8);
  TraceBuilder b = SpoolOfADeadProducer(info, 3);
  const std::string spool = Write(b, "spool.rft");
  const std::string cut = dir_.File("cut.rft");
  // The spool and the first bytes of a frame after it: cut short.
  std::ofstream(cut, std::ios::binary) << b.Framed() << b.Frames()[1].substr(0, 5);

  auto r = IngestTraceFile(cut, store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->cut_short);
  EXPECT_TRUE(std::filesystem::exists(info.live_buffer))
      << "an incomplete ingest deleted the live buffer";

  const std::string again = dir_.File("again.sqlite");
  r = IngestTraceFile(spool, again, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->cut_short);
  StoreQuery q(again);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'step'"), 8);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats "
                  "WHERE name = 'records_recovered'"),
            5);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats "
                  "WHERE name = 'records_lost_at_exit'"),
            0);
  EXPECT_FALSE(std::filesystem::exists(info.live_buffer));
}

// #29 D8: a live buffer whose header claims more records than a queue can
// ever have lost (a forged or damaged header: 2^64 - 1 seen) does not
// make records_lost_at_exit wrap to a huge number: its counts are not
// used, and the records it holds are still recovered.
TEST_F(IngestTest, ForgedLiveBufferCountsAreNotCountedAsLost) {
  test_support::SessionInfo info;
  info.live_buffer = dir_.File("forged.live");
  WriteDeadProducersBuffer(info.live_buffer, info, 100, 5, ~0ull);
  TraceBuilder b = SpoolOfADeadProducer(info, 3);
  auto r = IngestTraceFile(Write(b, "spool.rft"), store_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE name = 'step'"), 8);
  EXPECT_EQ(q.Int("SELECT value FROM import_stats "
                  "WHERE name = 'records_lost_at_exit'"),
            0)
      << q.Text("SELECT group_concat(name || '=' || value) FROM import_stats");
}

// #29 D8: the buffer of a producer whose first records went elsewhere (a
// collector stored them up to sequence 40 before the buffer was found)
// does not count those as lost: the session rebuilt from the buffer holds
// only its tail, so the loss at exit is unknown, not "everything else".
TEST_F(IngestTest, RecordsThatWentElsewhereAreNotCountedAsLost) {
  test_support::SessionInfo info;
  const std::string path = dir_.File("orphan.live");
  // The Hello a producer keeps in its buffer.
  TraceBuilder hello(info);
  hello.Hello();
  const pid_t child = fork();
  if (child == 0) {
    auto live = inject::LiveBuffer::Create(path, 8, 4096, hello.Framed(),
                                           info.pid, info.start_unix_ns);
    if (!live.ok()) _exit(1);
    (*live)->AppendString(1, "step");
    inject::CapturedRecord r{};
    r.type = inject::RecordType::kNvtxRange;
    r.range.range_id = 7;
    r.range.name_iid = 1;
    (*live)->slots()[0].value = r;
    (*live)->slots()[0].seq.store(1);
    (*live)->header()->counts.seen[wire::enums::kRecordNvtxRange].store(5000);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  WireSession ws(path);
  auto rec = RecoverOrphanLiveBuffer(path, getuid(), 40, &ws);
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  EXPECT_EQ(rec->recovered, 1u);
  EXPECT_EQ(rec->lost, 0u) << rec->summary;
  EXPECT_EQ(ws.session().stats()[ImportStat::k_records_lost_at_exit], 0u);
  EXPECT_NE(rec->summary.find("not counted"), std::string::npos)
      << rec->summary;
}

// #29 D7: a producer that fell back to its spool before reaching any
// collector wrote its Hello twice, both with sequence 1. That is one
// session: no phantom second one without a Goodbye, the run is complete
// (it lost nothing), and no live buffer is looked for.
TEST_F(IngestTest, RestatedHelloInASpoolIsOneSession) {
  test_support::SessionInfo info;
  info.live_buffer = dir_.File("retired.live");  // removed at its Goodbye
  LlmTraceOptions o;
  o.session = info;
  o.decode_steps = 1;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  const std::string path = dir_.File("spool.rft");
  std::ofstream(path, std::ios::binary) << b.Frames()[0] << b.Framed();
  testing::internal::CaptureStderr();
  auto r = IngestTraceFile(path, store_, {});
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreQuery q(store_);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sessions"), 1);
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 1)
      << q.Text("SELECT incomplete_reason FROM runs");
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"), 50);
  EXPECT_EQ(err.find("live buffer"), std::string::npos) << err;
}


// #29 D9: the store fills up while a long session is stored in windows.
// Reading goes on to the end of the file (nothing more is written), so
// what the store holds plus kernels_not_stored is every kernel of the
// trace, and the reason names the failed write, not "no producer session".
// (The read used to stop at the first failed window: the rest of the file
// was counted nowhere and the session was never ended.)
TEST_F(IngestTest, FullStoreDuringWindowsCountsEveryKernel) {
  LlmTraceOptions o;
  o.decode_steps = 400;
  TraceBuilder b(o.session);
  const auto truth = GenerateLlmTrace(o, &b);
  const std::string trace = Write(b, "long.rft");
  IngestOptions io;
  io.flush_records = 4096;  // several windows
  setenv("ROOFTRACE_TEST_STORE_PAGE_BUDGET", "10", 1);
  auto r = IngestTraceFile(trace, store_, io);
  unsetenv("ROOFTRACE_TEST_STORE_PAGE_BUDGET");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted)
      << r.status().message();
  StoreQuery q(store_);
  const int64_t stored = q.Int("SELECT COUNT(*) FROM kernels");
  EXPECT_GT(stored, 0);
  EXPECT_LT(stored, static_cast<int64_t>(truth.kernels));
  EXPECT_EQ(stored + q.Int("SELECT value FROM import_stats WHERE "
                           "name='kernels_not_stored'"),
            static_cast<int64_t>(truth.kernels));
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE name='sessions'"), 1);
  const std::string reason = q.Text("SELECT incomplete_reason FROM runs");
  EXPECT_NE(reason.find("store write failed"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("no producer session"), std::string::npos) << reason;
}

}  // namespace
}  // namespace rooftrace
