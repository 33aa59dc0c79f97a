// Long sessions stored in windows (RunRecorder::MaybeFlush, flush.h): the
// rows must be exactly those of the same session stored whole at its end,
// while the windows keep memory bounded; an NVTX range still open, a GEMM
// call or counters not yet received hold the steps that need them back.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sources/rft/ingest.h"
#include "pipeline/recorder.h"
#include "pipeline/session.h"
#include "sources/rft/wire_session.h"
#include "store/store.h"
#include "sources/rft/testing/trace_builder.h"
#include "proto/framing.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::GenerateLlmTrace;
using test_support::LlmTraceOptions;
using test_support::StoreQuery;
using test_support::TraceBuilder;

// Every row of `sql`, columns joined by '|', rows by '\n'.
std::string Dump(const std::string& store, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(store.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  } else {
    while (sqlite3_step(s) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const unsigned char* t = sqlite3_column_text(s, c);
        out += t ? reinterpret_cast<const char*>(t) : "NULL";
        out += '|';
      }
      out += '\n';
    }
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

// The rows a run is judged by, free of row ids that differ by write order.
const char* const kKernels =
    "SELECT k.correlation_id, k.name, k.family, k.start_ns, k.end_ns, "
    "k.thread_id, k.api_start_ns, k.nvtx_path, g.call_id, k.shape, "
    "k.token_count, k.precision, k.flops, k.flops_source, k.dram_bytes, "
    "k.bytes_source, k.ai, k.fraction_of_roof, k.bound, k.step_id, k.phase "
    "FROM kernels k LEFT JOIN gemm_calls g ON g.gemm_call_id = k.gemm_call_id "
    "ORDER BY k.correlation_id";
const char* const kSteps =
    "SELECT step_id, start_ns, end_ns, phase, token_count, boundary, "
    "evidence, kernel_count, gemm_count FROM steps ORDER BY step_id";
const char* const kGemms =
    "SELECT call_id, m, n, k, precision, flops, weight_operand, "
    "token_count, kernel_count FROM gemm_calls ORDER BY call_id";
const char* const kCopies =
    "SELECT correlation_id, kind, bytes, start_ns, step_id, nvtx_path "
    "FROM memcpys ORDER BY start_ns, correlation_id";
const char* const kRanges =
    "SELECT range_id, name, path, start_ns, end_ns FROM nvtx_ranges "
    "ORDER BY range_id";
const char* const kStats =
    "SELECT name, value FROM import_stats WHERE name != 'windows_stored' "
    "ORDER BY name";

class FlushTest : public ::testing::Test {
 protected:
  // Ingests `b`'s trace into a new store, in windows of `flush_records`.
  std::string Ingest(const TraceBuilder& b, size_t flush_records,
                     const std::string& name) {
    const std::string trace = dir_.File(name + ".rft");
    const std::string store = dir_.File(name + ".sqlite");
    EXPECT_TRUE(b.WriteFile(trace).ok());
    IngestOptions o;
    o.flush_records = flush_records;
    auto r = IngestTraceFile(trace, store, o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return store;
  }

  // The same trace whole and in windows: identical rows; returns the
  // windowed store.
  std::string ExpectSameRows(const TraceBuilder& b, size_t flush_records) {
    const std::string whole = Ingest(b, 0, "whole");
    const std::string windowed = Ingest(b, flush_records, "windowed");
    for (const char* q : {kKernels, kSteps, kGemms, kCopies, kRanges, kStats}) {
      const std::string a = Dump(whole, q);
      if (q == kKernels || q == kSteps) {
        EXPECT_FALSE(a.empty()) << q;
      }
      EXPECT_EQ(a, Dump(windowed, q)) << q;
    }
    StoreQuery w(whole);
    EXPECT_EQ(w.Int("SELECT COUNT(*) FROM import_stats "
                    "WHERE name='windows_stored' AND value > 0"),
              0);
    StoreQuery q(windowed);
    EXPECT_EQ(q.Int("SELECT COUNT(*) FROM sessions"), 1);
    EXPECT_EQ(q.Int("SELECT complete FROM sessions"), 1);
    return windowed;
  }

  test_support::TempDir dir_{"flush"};
};

int64_t Windows(const std::string& store) {
  return StoreQuery(store).Int(
      "SELECT value FROM import_stats WHERE name='windows_stored'");
}

// A generated LLM stream in small packets (so windows can fall between
// them).
TraceBuilder LlmStream(LlmTraceOptions o) {
  o.max_batch_records = 64;
  TraceBuilder b(o.session);
  GenerateLlmTrace(o, &b);
  return b;
}

// Prefill then 40 decode steps (D2H token copies delimit the steps), stored
// in windows of ~300 records: same rows, many windows.
TEST_F(FlushTest, TokenCopyStepsStoreTheSameInWindows) {
  LlmTraceOptions o;
  o.decode_steps = 40;
  const std::string store = ExpectSameRows(LlmStream(o), 300);
  EXPECT_GT(Windows(store), 5);
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps WHERE phase='prefill'"), 1);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps WHERE phase='decode'"), 40);
}

// NVTX step ranges with host gaps and no copies: paths and steps survive
// the windows.
TEST_F(FlushTest, NvtxStepsStoreTheSameInWindows) {
  LlmTraceOptions o;
  o.nvtx = true;
  o.host_gap_only = true;
  o.decode_steps = 30;
  EXPECT_GT(Windows(ExpectSameRows(LlmStream(o), 300)), 3);
}

// Counters mode: counted FLOPs and bytes join in every window.
TEST_F(FlushTest, CountersModeStoresTheSameInWindows) {
  LlmTraceOptions o;
  o.counters = true;
  o.session.mode = wire::MODE_COUNTERS;
  o.decode_steps = 30;
  const std::string store = ExpectSameRows(LlmStream(o), 300);
  EXPECT_GT(Windows(store), 3);
  EXPECT_EQ(StoreQuery(store).Int(
                "SELECT COUNT(*) FROM kernels WHERE bytes_source!='counters'"),
            0);
}

// A small decode-only stream written by hand: per step one GEMM call and its
// kernel, one launch whose kernel the producer filtered (never sent), one
// D2H token copy.
struct HandOptions {
  int steps = 60;
  // > 0: every step range sits inside an outer range whose record (like
  // every NVTX range) arrives only when it ends, at the end.
  uint64_t outer = 0;
  // >= 0: the first `counted` GEMM kernels get counters (the producer's
  // --max-kernels), `counters_late` steps after their kernel; the Hello says
  // counters mode unless `trace_hello` (CUDA started after the Hello).
  int counted = -1;
  int counters_late = 0;
  bool trace_hello = false;
};

TraceBuilder HandStream(const HandOptions& o) {
  test_support::SessionInfo info;
  if (o.counted >= 0 && !o.trace_hello) info.mode = wire::MODE_COUNTERS;
  TraceBuilder b(info);
  b.Hello();
  b.AddDevice(0, "NVIDIA H100 80GB HBM3");
  uint64_t corr = 1;
  std::vector<uint64_t> pending_counters;  // correlation ids, in step order
  auto add_counters = [&](size_t n) {
    for (size_t c = 0; c < n && !pending_counters.empty(); ++c) {
      b.AddCounters(pending_counters.front(), 1 << 20, 1 << 16,
                    wire::PRECISION_FP16_TENSOR, 2ull * 4096 * 8 * 4096);
      pending_counters.erase(pending_counters.begin());
    }
  };
  for (int i = 0; i < o.steps; ++i) {
    const uint64_t t = 1000000 + static_cast<uint64_t>(i) * 100000;
    const uint64_t range = 1000 + static_cast<uint64_t>(i);
    const uint64_t call = static_cast<uint64_t>(i) + 1;
    b.AddNvtxRange(range, "step", t, t + 90000, o.outer, o.outer ? 1 : 0);
    b.AddLaunch(corr, t + 10, call, range);
    b.AddKernel("gemm_kernel", corr, t + 1000, t + 21000);
    b.AddGemm(call, 4096, 8, 4096, 0xA000, 0xB000 + call, t + 5)
        .add_correlation_ids(corr);
    if (i < o.counted) pending_counters.push_back(corr);
    if (pending_counters.size() > static_cast<size_t>(o.counters_late)) {
      add_counters(1);
    }
    ++corr;
    b.AddLaunch(corr++, t + 30, 0, range);  // filtered: no kernel record
    b.AddLaunch(corr, t + 40, 0, range);
    b.AddMemcpy(corr++, wire::COPY_DTOH, 64, t + 30000, t + 31000);
    b.Flush();
  }
  add_counters(pending_counters.size());
  if (o.outer) {
    b.AddNvtxRange(o.outer, "generate", 900000,
                   1000000 + static_cast<uint64_t>(o.steps) * 100000);
  }
  b.AddFiltered(wire::RECORD_KERNEL, static_cast<uint64_t>(o.steps));
  b.Goodbye(0);
  return b;
}

// Launches whose kernels never come are dropped with their window and
// counted once, as the whole session counts them.
TEST_F(FlushTest, FilteredLaunchesAreCountedOnceAcrossWindows) {
  TraceBuilder b = HandStream({});
  const std::string store = ExpectSameRows(b, 40);
  EXPECT_GT(Windows(store), 3);
  EXPECT_EQ(StoreQuery(store).Int(
                "SELECT value FROM import_stats WHERE name='unmatched_launch'"),
            60);
}

// Counters mode past the producer's --max-kernels: no counters come for
// the later kernels. Windows wait for them only until the session holds
// twice the threshold, then store anyway; the rows are the same.
TEST_F(FlushTest, CountersThatStopComingDoNotHoldTheSessionForever) {
  TraceBuilder b = HandStream({.steps = 80, .counted = 5});
  const std::string store = ExpectSameRows(b, 40);
  EXPECT_GT(Windows(store), 2);
  EXPECT_EQ(StoreQuery(store).Int(
                "SELECT COUNT(*) FROM kernels WHERE bytes_source='counters'"),
            5);
}

// Counters that arrive three steps after their kernels, from a producer
// whose Hello went out in trace mode (its CUDA started later): windows
// wait for them all the same, so every kernel keeps its counted bytes.
TEST_F(FlushTest, LateCountersAreWaitedForAfterATraceModeHello) {
  TraceBuilder b = HandStream(
      {.steps = 60, .counted = 60, .counters_late = 3, .trace_hello = true});
  const std::string store = ExpectSameRows(b, 40);
  EXPECT_GT(Windows(store), 2);
  EXPECT_EQ(StoreQuery(store).Int(
                "SELECT COUNT(*) FROM kernels WHERE bytes_source='counters'"),
            60);
}

// An outer NVTX range open until the end: no kernel may be stored before
// its path is known, so nothing is stored early and every path is whole.
TEST_F(FlushTest, OpenNvtxRangeHoldsItsKernelsBack) {
  TraceBuilder b = HandStream({.outer = 7});
  const std::string store = ExpectSameRows(b, 40);
  EXPECT_EQ(Windows(store), 0);
  StoreQuery q(store);
  EXPECT_EQ(
      q.Int("SELECT COUNT(*) FROM kernels WHERE nvtx_path='generate/step'"),
      60);
}

// A live session fed packet by packet through MaybeFlush holds a bounded
// number of records however long it runs.
TEST_F(FlushTest, HeldRecordsStayBoundedOnALongSession) {
  LlmTraceOptions o;
  o.decode_steps = 200;
  const TraceBuilder b = LlmStream(o);
  RecorderOptions ro;
  const std::string store = dir_.File("live.sqlite");
  ro.origin = "collect";
  ro.flush_records = 500;
  auto recorder = CreateStoreRecorder(ro, store);
  ASSERT_TRUE(recorder.ok()) << recorder.status().message();
  WireSession wire("test");
  Session& session = wire.session();
  size_t most_held = 0, total = 0;
  wire::FrameReader reader;
  for (const std::string& frame : b.Frames()) {
    reader.Feed(frame);
    std::string_view payload;
    ASSERT_EQ(reader.Next(&payload), wire::FrameReader::Result::kFrame);
    ASSERT_TRUE(wire.OnPacket(payload).ok());
    ASSERT_TRUE((*recorder)->MaybeFlush(&session).ok());
    most_held = std::max(most_held, session.RecordCount());
  }
  total = b.sent(wire::RECORD_KERNEL) + b.sent(wire::RECORD_LAUNCH) +
          b.sent(wire::RECORD_GEMM) + b.sent(wire::RECORD_MEMCPY);
  EXPECT_GT(session.flushed().flushes, 20u);
  // The threshold plus one packet and the trailing steps, not the stream.
  EXPECT_LT(most_held, 1000u);
  EXPECT_GT(total, 20 * most_held);
  ASSERT_TRUE((*recorder)->AddSession(&session).ok());
  ASSERT_TRUE((*recorder)->Finish().ok());
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"),
            static_cast<int64_t>(b.sent(wire::RECORD_KERNEL)));
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps"), 201);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM steps WHERE phase='decode'"), 200);
}

// Many sessions open at once share memory_records: each one's window is
// its share, between kMinWindowRecords and flush_records.
TEST_F(FlushTest, OpenSessionsShareTheMemoryBudget) {
  RecorderOptions ro;
  ro.flush_records = 1u << 16;
  ro.memory_records = 1u << 20;
  auto r = CreateStoreRecorder(ro, dir_.File("budget.sqlite"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->WindowRecords(1), 65536u);    // flush_records caps it
  EXPECT_EQ((*r)->WindowRecords(16), 65536u);   // 2^20 / 16 = 2^16
  EXPECT_EQ((*r)->WindowRecords(64), 16384u);   // 2^20 / 64
  EXPECT_EQ((*r)->WindowRecords(1000), 4096u);  // 1048 < kMinWindowRecords
  EXPECT_EQ((*r)->WindowRecords(0), 65536u);    // as if one

  RecorderOptions whole = ro;
  whole.flush_records = 0;
  auto w = CreateStoreRecorder(whole, dir_.File("whole.sqlite"));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->WindowRecords(64), 0u);  // sessions stored whole

  RecorderOptions tiny = ro;
  tiny.flush_records = 500;  // below the floor: flush_records still caps
  auto t = CreateStoreRecorder(tiny, dir_.File("tiny.sqlite"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->WindowRecords(1000), 500u);
}

// The same session fed while 8 are said to be open flushes in windows of
// an eighth of memory_records.
TEST_F(FlushTest, ASessionAmongManyFlushesInItsShare) {
  LlmTraceOptions o;
  o.decode_steps = 1000;
  const TraceBuilder b = LlmStream(o);
  RecorderOptions ro;
  const std::string store = dir_.File("shared.sqlite");
  ro.origin = "collect";
  ro.flush_records = 1u << 16;  // alone, the session would never flush
  ro.memory_records = 8 * kMinWindowRecords;
  auto recorder = CreateStoreRecorder(ro, store);
  ASSERT_TRUE(recorder.ok()) << recorder.status().message();
  WireSession wire("test");
  Session& shared = wire.session();
  size_t most_held = 0;
  wire::FrameReader reader;
  for (const std::string& frame : b.Frames()) {
    reader.Feed(frame);
    std::string_view payload;
    ASSERT_EQ(reader.Next(&payload), wire::FrameReader::Result::kFrame);
    ASSERT_TRUE(wire.OnPacket(payload).ok());
    ASSERT_TRUE((*recorder)->MaybeFlush(&shared, 8).ok());
    most_held = std::max(most_held, shared.RecordCount());
  }
  const size_t total = b.sent(wire::RECORD_KERNEL) +
                       b.sent(wire::RECORD_LAUNCH) + b.sent(wire::RECORD_GEMM) +
                       b.sent(wire::RECORD_MEMCPY);
  ASSERT_GT(total, 4 * kMinWindowRecords);
  ASSERT_LT(total, ro.flush_records);
  EXPECT_GE(shared.flushed().flushes, 3u);
  EXPECT_LT(most_held, 2 * kMinWindowRecords);
  ASSERT_TRUE((*recorder)->AddSession(&shared).ok());
  ASSERT_TRUE((*recorder)->Finish().ok());
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"),
            static_cast<int64_t>(b.sent(wire::RECORD_KERNEL)));
}

}  // namespace
}  // namespace rooftrace
