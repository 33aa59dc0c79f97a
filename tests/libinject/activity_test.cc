// CUPTI handling without a GPU: synthetic activity records and callback
// data are fed to the real CuptiTracer callbacks, with a fake CUPTI table
// whose ActivityGetNextRecord walks the synthetic buffer; the producer
// writes a spool that libprotobuf decodes.
#include "libinject/activity.h"

#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "libinject/driver_api.h"
#include "libinject/gemm_shapes.h"
#include "libinject/nvtx_injection.h"
#include "libinject/process.h"
#include "libinject/thread_state.h"
#include "libinject/tracer.h"
#include "tests/libinject/fake_activity.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {
namespace {

namespace pb = rooftrace::wire;

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    default: return 0;
  }
}

// CUPTI's record iterator over a buffer of back-to-back synthetic records.
CUptiResult FakeGetNextRecord(uint8_t* buffer, size_t valid,
                              CUpti_Activity** record) {
  uint8_t* next = *record == nullptr
                      ? buffer
                      : reinterpret_cast<uint8_t*>(*record) +
                            RecordSize((*record)->kind);
  if (next >= buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

// CUPTI's dropped-record counter: each read returns what was dropped since
// the previous read (the counter resets), here the next value of a
// sequence, then 0.
std::vector<size_t> g_dropped_sequence;
size_t g_dropped_reads = 0;
CUptiResult FakeDropped(CUcontext, uint32_t, size_t* dropped) {
  *dropped = g_dropped_reads < g_dropped_sequence.size()
                 ? g_dropped_sequence[g_dropped_reads]
                 : 0;
  ++g_dropped_reads;
  return CUPTI_SUCCESS;
}
void SetDroppedSequence(std::vector<size_t> sequence) {
  g_dropped_sequence = std::move(sequence);
  g_dropped_reads = 0;
}
CUptiResult FakeFlush(uint32_t) { return CUPTI_SUCCESS; }

CuptiApi FakeApi() {
  CuptiApi api;
  api.ActivityGetNextRecord = &FakeGetNextRecord;
  api.ActivityGetNumDroppedRecords = &FakeDropped;
  api.ActivityFlushAll = &FakeFlush;
  return api;
}

// Appends one record to a buffer handed out by the tracer.
template <typename T>
void Put(uint8_t* buffer, size_t* used, const T& record) {
  std::memcpy(buffer + *used, &record, sizeof record);
  *used += sizeof record;
}

class ActivityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("activity");
    path_ = dir_ + "/trace.rft";
  }
  std::unique_ptr<Producer> MakeProducer(const std::string& include = "",
                                         uint64_t sample_every = 1) {
    ProducerOptions options;
    options.config.sink.kind = SinkSpec::Kind::kFile;
    options.config.sink.path = path_;
    options.config.kernel_include = include;
    options.config.sample_every = sample_every;
    return std::make_unique<Producer>(options);
  }
  std::string dir_;
  std::string path_;
};

CUpti_ActivityKernel10 Kernel(uint32_t correlation, const char* name,
                              uint64_t start, uint64_t end) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.correlationId = correlation;
  k.name = name;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  k.gridX = 132;
  k.gridY = 4;
  k.gridZ = 1;
  k.blockX = 384;
  k.blockY = 1;
  k.blockZ = 1;
  k.clusterX = 2;
  k.clusterY = 1;
  k.clusterZ = 1;
  k.registersPerThread = 168;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 232448;
  k.graphId = 0;
  return k;
}

// Kernel, memcpy, memset, peer copy and device records in one completed
// buffer come out as Kernel / Memcpy / Device packets with every field.
TEST_F(ActivityTest, BufferCompletedDecodesEveryRecordKind) {
  SetDroppedSequence({5});
  auto producer = MakeProducer();
  CuptiTracer tracer(producer.get(), FakeApi());
  tracer.AttachActivity(2, 1 << 16);
  tracer.MakeBufferTarget();
  ASSERT_TRUE(producer->Start().ok());

  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 99;
  CuptiTracer::BufferRequested(&buffer, &size, &max_records);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(size, 1u << 16);
  EXPECT_EQ(max_records, 0u);
  size_t used = 0;
  Put(buffer, &used, Kernel(101, "_Z10gemm_bf16v", 1'000'000, 1'050'000));
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  copy.bytes = 4096;
  copy.start = 2'000'000;
  copy.end = 2'000'900;
  copy.correlationId = 102;
  copy.streamId = 7;
  Put(buffer, &used, copy);
  CUpti_ActivityMemset4 set{};
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.value = 0;
  set.bytes = 1 << 20;
  set.start = 3'000'000;
  set.end = 3'000'500;
  set.correlationId = 103;
  set.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  Put(buffer, &used, set);
  CUpti_ActivityMemcpyPtoP4 peer{};
  peer.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  peer.bytes = 8192;
  peer.srcDeviceId = 0;
  peer.dstDeviceId = 1;
  peer.correlationId = 104;
  peer.start = 4'000'000;
  peer.end = 4'001'000;
  Put(buffer, &used, peer);
  CUpti_ActivityContext3 ctx{};
  ctx.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  Put(buffer, &used, ctx);
  CUpti_ActivityDevice5 dev{};
  dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  dev.id = 0;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.numMultiprocessors = 132;
  dev.computeCapabilityMajor = 9;
  dev.computeCapabilityMinor = 0;
  dev.coreClockRate = 1980000;
  dev.l2CacheSize = 50 << 20;
  dev.globalMemorySize = 85899345920ull;
  for (int i = 0; i < 16; ++i) dev.uuid.bytes[i] = static_cast<char>(i * 17);
  Put(buffer, &used, dev);
  CuptiTracer::BufferCompleted(nullptr, 0, buffer, size, used);
  ASSERT_TRUE(producer->Stop());

  auto packets = testing::ReadTrace(path_);
  auto strings = testing::Strings(packets);
  std::vector<pb::Kernel> kernels;
  std::vector<pb::Memcpy> copies;
  std::vector<pb::Device> devices;
  for (const auto& p : packets) {
    for (const auto& k : p.kernel_batch().kernels()) kernels.push_back(k);
    for (const auto& m : p.memcpy_batch().memcpys()) copies.push_back(m);
    if (p.has_device()) devices.push_back(p.device());
  }
  ASSERT_EQ(kernels.size(), 1u);
  const pb::Kernel& k = kernels[0];
  EXPECT_EQ(k.correlation_id(), 101u);
  EXPECT_EQ(strings[k.name_iid()], "_Z10gemm_bf16v");
  // No timestamp callback on the fake: offset 0, identity conversion.
  EXPECT_EQ(k.start_ns(), 1'000'000u);
  EXPECT_EQ(k.end_ns(), 1'050'000u);
  EXPECT_EQ(k.context_id(), 1u);
  EXPECT_EQ(k.stream_id(), 7u);
  EXPECT_EQ(k.grid_x(), 132u);
  EXPECT_EQ(k.grid_y(), 4u);
  EXPECT_EQ(k.block_x(), 384u);
  EXPECT_EQ(k.cluster_x(), 2u);
  EXPECT_EQ(k.registers_per_thread(), 168u);
  EXPECT_EQ(k.static_shared_memory_bytes(), 1024u);
  EXPECT_EQ(k.dynamic_shared_memory_bytes(), 232448u);

  ASSERT_EQ(copies.size(), 3u);
  EXPECT_EQ(copies[0].kind(), pb::COPY_DTOH);
  EXPECT_EQ(copies[0].bytes(), 4096u);
  EXPECT_EQ(copies[0].src_kind(), pb::MEMORY_DEVICE);
  EXPECT_EQ(copies[0].dst_kind(), pb::MEMORY_PINNED);
  EXPECT_EQ(copies[0].end_ns() - copies[0].start_ns(), 900u);
  EXPECT_EQ(copies[1].kind(), pb::COPY_MEMSET);
  EXPECT_EQ(copies[1].bytes(), 1u << 20);
  EXPECT_EQ(copies[1].correlation_id(), 103u);
  EXPECT_EQ(copies[2].kind(), pb::COPY_PTOP);
  EXPECT_EQ(copies[2].dst_device_id(), 1u);

  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(devices[0].sm_count(), 132u);
  EXPECT_EQ(devices[0].compute_capability_major(), 9u);
  EXPECT_EQ(devices[0].core_clock_khz(), 1980000u);
  EXPECT_EQ(devices[0].l2_cache_bytes(), 50u << 20);
  EXPECT_EQ(devices[0].global_memory_bytes(), 85899345920ull);
  EXPECT_EQ(devices[0].uuid(), "GPU-00112233-4455-6677-8899-aabbccddeeff");

  // Goodbye totals: 1 kernel, 3 copies, 1 device seen and sent; CUPTI's
  // own dropped count reaches Stats.
  const pb::Packet& last = packets.back();
  ASSERT_TRUE(last.has_goodbye());
  std::map<int, pb::RecordCount> totals;
  for (const auto& c : last.goodbye().totals()) totals[c.kind()] = c;
  EXPECT_EQ(totals[pb::RECORD_KERNEL].seen(), 1u);
  EXPECT_EQ(totals[pb::RECORD_KERNEL].sent(), 1u);
  EXPECT_EQ(totals[pb::RECORD_MEMCPY].seen(), 3u);
  EXPECT_EQ(totals[pb::RECORD_MEMCPY].sent(), 3u);
  EXPECT_EQ(totals[pb::RECORD_DEVICE].sent(), 1u);
  EXPECT_EQ(packets[packets.size() - 2].stats().cupti_records_dropped(), 5u);
}

// Kernel filters act on decoded names; filtered kernels are counted.
TEST_F(ActivityTest, FilteredKernelsAreCountedNotSent) {
  auto producer = MakeProducer("gemm", 2);
  CuptiTracer tracer(producer.get(), FakeApi());
  tracer.AttachActivity(2, 1 << 16);
  tracer.MakeBufferTarget();
  ASSERT_TRUE(producer->Start().ok());
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  CuptiTracer::BufferRequested(&buffer, &size, &max_records);
  size_t used = 0;
  const char* names[] = {"gemm_a", "relu", "gemm_b", "gemm_c", "softmax",
                         "gemm_d"};
  for (uint32_t i = 0; i < 6; ++i) {
    Put(buffer, &used, Kernel(i + 1, names[i], 10 + i, 20 + i));
  }
  CuptiTracer::BufferCompleted(nullptr, 0, buffer, size, used);
  ASSERT_TRUE(producer->Stop());
  auto packets = testing::ReadTrace(path_);
  auto strings = testing::Strings(packets);
  std::vector<std::string> sent;
  for (const auto& p : packets) {
    for (const auto& k : p.kernel_batch().kernels()) {
      sent.push_back(strings[k.name_iid()]);
    }
  }
  // gemm_a, gemm_b, gemm_c, gemm_d pass the regex; every 2nd is kept.
  EXPECT_EQ(sent, (std::vector<std::string>{"gemm_a", "gemm_c"}));
  std::map<int, pb::RecordCount> totals;
  for (const auto& c : packets.back().goodbye().totals()) totals[c.kind()] = c;
  EXPECT_EQ(totals[pb::RECORD_KERNEL].seen(), 6u);
  EXPECT_EQ(totals[pb::RECORD_KERNEL].sent(), 2u);
  EXPECT_EQ(totals[pb::RECORD_KERNEL].filtered(), 4u);
  EXPECT_EQ(totals[pb::RECORD_KERNEL].dropped(), 0u);
}

// CUPTI's dropped-record counter resets at every read: reads of 5, 3, 0
// and 2 (as buffers complete, and at Stats time) are 10 records dropped,
// reported as a running total that never goes down. Buffer requests the
// exhausted pool refused are another unit: not added to it, said once in
// a warning.
TEST_F(ActivityTest, DroppedRecordsAreAddedUpAcrossResettingReads) {
  SetDroppedSequence({5, 3, 0, 2});
  ProducerOptions options;
  options.config.sink.kind = SinkSpec::Kind::kFile;
  options.config.sink.path = path_;
  options.stats_interval_ms = 1;
  options.flush_interval_ms = 1;
  Producer producer(options);
  CuptiTracer tracer(&producer, FakeApi());
  tracer.AttachActivity(2, 1 << 16);
  tracer.MakeBufferTarget();
  ASSERT_TRUE(producer.Start().ok());
  for (uint32_t i = 0; i < 3; ++i) {
    uint8_t* a = nullptr;
    uint8_t* b = nullptr;
    uint8_t* refused = nullptr;
    size_t size = 0, max_records = 0;
    CuptiTracer::BufferRequested(&a, &size, &max_records);
    CuptiTracer::BufferRequested(&b, &size, &max_records);
    CuptiTracer::BufferRequested(&refused, &size, &max_records);  // none left
    ASSERT_EQ(refused, nullptr);
    size_t used = 0;
    Put(a, &used, Kernel(i + 1, "k", 10, 20));
    CuptiTracer::BufferCompleted(nullptr, 7, a, 1 << 16, used);
    CuptiTracer::BufferCompleted(nullptr, 7, b, 1 << 16, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(producer.Stop());
  EXPECT_GE(g_dropped_reads, 4u);
  uint64_t last = 0;
  std::string warnings;
  for (const auto& p : testing::ReadTrace(path_)) {
    if (!p.has_stats()) continue;
    EXPECT_GE(p.stats().cupti_records_dropped(), last);
    last = p.stats().cupti_records_dropped();
    for (const auto& w : p.stats().warnings()) warnings += w + "\n";
  }
  EXPECT_EQ(last, 10u);
  EXPECT_NE(warnings.find("asked for an activity buffer while the pool's 2 "
                          "buffers of 64 KiB"),
            std::string::npos)
      << warnings;
}

// CUPTI holds every buffer of the pool (kept because of an incomplete
// record, none waiting for the sender) and asks for one more: the warning
// names CUPTI's holding, not a slow sender, and Stats count the buffers.
TEST_F(ActivityTest, RefusalWarningNamesBuffersHeldByCupti) {
  SetDroppedSequence({});
  ProducerOptions options;
  options.config.sink.kind = SinkSpec::Kind::kFile;
  options.config.sink.path = path_;
  options.stats_interval_ms = 1;
  options.flush_interval_ms = 1;
  Producer producer(options);
  CuptiTracer tracer(&producer, FakeApi());
  tracer.AttachActivity(2, 1 << 16);
  tracer.MakeBufferTarget();
  ASSERT_TRUE(producer.Start().ok());
  uint8_t* held[3] = {};
  size_t size = 0, max_records = 0;
  for (uint8_t*& b : held) CuptiTracer::BufferRequested(&b, &size, &max_records);
  ASSERT_EQ(held[2], nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ASSERT_TRUE(producer.Stop());
  std::string warnings;
  const pb::Stats* last = nullptr;
  const auto packets = testing::ReadTrace(path_);
  for (const auto& p : packets) {
    if (!p.has_stats()) continue;
    last = &p.stats();
    for (const auto& w : p.stats().warnings()) warnings += w + "\n";
  }
  EXPECT_NE(warnings.find("2 were held by CUPTI, which does not hand back a "
                          "buffer that holds an incomplete activity record"),
            std::string::npos)
      << warnings;
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->activity_buffers_requested(), 2u);
  EXPECT_EQ(last->activity_buffers_completed(), 0u);
  EXPECT_EQ(last->activity_buffers_outstanding(), 2u);
  EXPECT_EQ(last->activity_buffers_refused(), 1u);
}

// What the exit path calls, in order.
std::vector<std::string> g_exit_calls;
CUresult LogPush(CUcontext c) {
  g_exit_calls.push_back("push " +
                         std::to_string(reinterpret_cast<uintptr_t>(c)));
  return CUDA_SUCCESS;
}
CUresult LogSynchronize() {
  g_exit_calls.push_back("synchronize");
  return CUDA_SUCCESS;
}
CUresult LogPop(CUcontext* c) {
  *c = nullptr;
  g_exit_calls.push_back("pop");
  return CUDA_SUCCESS;
}
CUptiResult LogFlush(uint32_t flag) {
  if (flag == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
    g_exit_calls.push_back("forced flush");
  }
  return CUPTI_SUCCESS;
}

// At exit, CUPTI's forced flush (which makes no CUDA synchronization) comes
// after every live context was synchronized, so kernels still running give
// complete records; a destroyed context is not touched.
TEST_F(ActivityTest, ExitSynchronizesLiveContextsBeforeTheForcedFlush) {
  g_exit_calls.clear();
  auto producer = MakeProducer();
  CuptiApi api = FakeApi();
  api.ActivityFlushAll = &LogFlush;
  CuptiTracer tracer(producer.get(), api);
  DriverApi driver;
  driver.CtxPushCurrent = &LogPush;
  driver.CtxSynchronize = &LogSynchronize;
  driver.CtxPopCurrent = &LogPop;
  tracer.set_driver_api(driver);
  tracer.AttachActivity(2, 1 << 16);
  tracer.MakeBufferTarget();
  CUpti_ResourceData a{};
  a.context = reinterpret_cast<CUcontext>(0x10);
  CUpti_ResourceData b{};
  b.context = reinterpret_cast<CUcontext>(0x20);
  CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &a);
  CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &b);
  CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
                                  &b);
  ASSERT_TRUE(producer->Start().ok());
  ASSERT_TRUE(producer->Stop());
  EXPECT_EQ(g_exit_calls, (std::vector<std::string>{"push 16", "synchronize",
                                                    "pop", "forced flush"}));
}

// An exhausted pool hands CUPTI no buffer (CUPTI then drops and counts);
// buffers come back after the sender decoded them.
TEST(ActivityBufferPoolTest, ExhaustionIsCountedAndBuffersReturn) {
  ActivityBufferPool pool(2, 4096);
  uint8_t* a = nullptr;
  uint8_t* b = nullptr;
  uint8_t* c = reinterpret_cast<uint8_t*>(1);
  size_t size = 0, max_records = 0;
  pool.OnRequested(&a, &size, &max_records);
  pool.OnRequested(&b, &size, &max_records);
  pool.OnRequested(&c, &size, &max_records);
  EXPECT_NE(a, nullptr);
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(pool.times_exhausted(), 1u);
  pool.OnCompleted(a, 100);
  pool.OnCompleted(b, 0);  // empty: straight back to the free list
  ActivityBufferPool::Completed done;
  ASSERT_TRUE(pool.TakeCompleted(&done));
  EXPECT_EQ(done.buffer, a);
  EXPECT_EQ(done.valid_bytes, 100u);
  EXPECT_FALSE(pool.TakeCompleted(&done));
  pool.Release(a);
  uint8_t* again = nullptr;
  pool.OnRequested(&again, &size, &max_records);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(size, 4096u);
}

// Trace mode: the sender asks CUPTI for its half-full buffers once a
// second while the process runs (checked every pass, not only when a Stats
// packet is built), with a default flush: kernel records arrive before exit.
TEST_F(ActivityTest, TraceModeFlushesDefaultOnceASecondWhileRunning) {
  ProducerOptions options;
  options.config.sink.kind = SinkSpec::Kind::kFile;
  options.config.sink.path = path_;
  options.stats_interval_ms = 60'000;  // no Stats while it runs
  Producer producer(options);
  CuptiApi api;
  fake::Fake().Reset();
  fake::InstallFakeActivity(&api);
  CuptiTracer tracer(&producer, api);
  tracer.AttachActivity(2, 1 << 16);
  tracer.MakeBufferTarget();
  ASSERT_TRUE(producer.Start().ok());
  fake::Fake().AddKernel(1, "k", /*complete=*/true, 10, 20);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (tracer.pool()->buffers_returned() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(tracer.pool()->buffers_returned(), 1u);
  EXPECT_GE(fake::Fake().normal_flushes(), 1u);
  EXPECT_EQ(fake::Fake().forced_flushes(), 0u);
  ASSERT_TRUE(producer.Stop());
  int kernels = 0;
  for (const auto& p : testing::ReadTrace(path_)) {
    kernels += p.kernel_batch().kernels_size();
  }
  EXPECT_EQ(kernels, 1);
}

// Counters mode may flush CUPTI's half-full buffers 20 times as often as
// trace mode (what it flushes is CountersMode::SafeActivityFlush's; the
// sender checks every pass, counters_mode_test's Run7 test measures it).
TEST(ActivityFlushTest, CountersModeFlushesMoreOften) {
  EXPECT_EQ(ActivityFlushPeriodNs(false), 1'000'000'000u);
  EXPECT_EQ(ActivityFlushPeriodNs(true), 50'000'000u);
}

// All buffers in use: the pool grows to its limit before it refuses one.
// On the H100, counters mode had all 8 in use once and CUPTI, refused, then
// dropped 1,167 of 1,407 kernel records.
TEST(ActivityBufferPoolTest, GrowsToItsLimitBeforeRefusing) {
  ActivityBufferPool pool(2, 4096, 4);
  EXPECT_EQ(pool.buffer_count(), 2u);
  std::vector<uint8_t*> got;
  size_t size = 0, max_records = 0;
  for (int i = 0; i < 4; ++i) {
    uint8_t* b = nullptr;
    pool.OnRequested(&b, &size, &max_records);
    ASSERT_NE(b, nullptr) << i;
    EXPECT_EQ(size, 4096u);
    got.push_back(b);
  }
  EXPECT_EQ(pool.buffer_count(), 4u);
  EXPECT_EQ(pool.times_exhausted(), 0u);
  uint8_t* refused = reinterpret_cast<uint8_t*>(1);
  pool.OnRequested(&refused, &size, &max_records);
  EXPECT_EQ(refused, nullptr);
  EXPECT_EQ(pool.times_exhausted(), 1u);
  // Every buffer, grown or not, goes through the completed queue and back.
  for (uint8_t* b : got) pool.OnCompleted(b, 64);
  ActivityBufferPool::Completed done;
  int completed = 0;
  while (pool.TakeCompleted(&done)) {
    ++completed;
    pool.Release(done.buffer);
  }
  EXPECT_EQ(completed, 4);
  uint8_t* again = nullptr;
  pool.OnRequested(&again, &size, &max_records);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(pool.buffer_count(), 4u);
}

// The pool is sized by bytes: a 1 GiB budget of 1 MiB buffers holds 1,024
// of them, 8 made at start; a budget below one buffer still has one.
TEST(ActivityBufferPoolTest, ByteBudgetSetsTheMostBuffers) {
  auto pool = ActivityBufferPool::ForBudget(1u << 30, 1u << 20, 8);
  EXPECT_EQ(pool->max_buffers(), 1024u);
  EXPECT_EQ(pool->buffer_count(), 8u);
  auto tiny = ActivityBufferPool::ForBudget(1000, 1u << 20, 8);
  EXPECT_EQ(tiny->max_buffers(), 1u);
  EXPECT_EQ(tiny->buffer_count(), 1u);
  // Given and returned buffers are counted (Stats.activity_buffers_*).
  uint8_t* b = nullptr;
  size_t size = 0, max_records = 0;
  tiny->OnRequested(&b, &size, &max_records);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(tiny->buffers_given(), 1u);
  EXPECT_EQ(tiny->buffers_returned(), 0u);
  tiny->OnCompleted(b, 0);
  EXPECT_EQ(tiny->buffers_returned(), 1u);
}

CUpti_CallbackData CallbackData(CUpti_ApiCallbackSite site,
                                uint32_t correlation) {
  CUpti_CallbackData d{};
  d.callbackSite = site;
  d.correlationId = correlation;
  d.functionName = "cudaLaunchKernel";
  return d;
}

constexpr uint32_t kLaunchCbid = 211;
constexpr uint32_t kDriverLaunchCbid = 307;

// A runtime launch inside an NVTX range and a cuBLAS call gives a Launch
// with thread, API times, range id and gemm call id; the driver call the
// runtime makes inside it is not a second launch; the Gemm lists the
// kernel's correlation id.
TEST_F(ActivityTest, LaunchCallbackRecordsThreadRangeAndGemmCall) {
  auto producer = MakeProducer();
  SetCurrentProducerForTesting(producer.get());
  CuptiTracer tracer(producer.get(), FakeApi());
  tracer.SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunchCbid,
                    ApiCallbackKind::kKernelLaunch);
  tracer.SetApiKind(CUPTI_CB_DOMAIN_DRIVER_API, kDriverLaunchCbid,
                    ApiCallbackKind::kKernelLaunch);
  ASSERT_TRUE(producer->Start().ok());

  nvtx::RangePushA("decode");
  {
    GemmScope scope(wire::enums::kGemmApiGemmEx);
    ASSERT_TRUE(scope.recording());
    scope.record().m = 16;
    auto enter = CallbackData(CUPTI_API_ENTER, 900);
    auto exit = CallbackData(CUPTI_API_EXIT, 900);
    auto d_enter = CallbackData(CUPTI_API_ENTER, 901);
    auto d_exit = CallbackData(CUPTI_API_EXIT, 901);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    kLaunchCbid, &enter);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_DRIVER_API,
                                    kDriverLaunchCbid, &d_enter);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_DRIVER_API,
                                    kDriverLaunchCbid, &d_exit);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    kLaunchCbid, &exit);
    scope.Finish(0);
  }
  nvtx::RangePop();
  // A driver launch on its own (Triton-style) is recorded; an API we do
  // not trace is ignored.
  auto enter = CallbackData(CUPTI_API_ENTER, 950);
  auto exit = CallbackData(CUPTI_API_EXIT, 950);
  CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_DRIVER_API,
                                  kDriverLaunchCbid, &enter);
  CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_DRIVER_API,
                                  kDriverLaunchCbid, &exit);
  CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API, 5,
                                  &exit);
  ASSERT_TRUE(producer->Stop());
  SetCurrentProducerForTesting(nullptr);

  auto packets = testing::ReadTrace(path_);
  std::vector<pb::Launch> launches;
  std::vector<pb::Gemm> gemms;
  std::vector<pb::NvtxRange> ranges;
  for (const auto& p : packets) {
    for (const auto& l : p.kernel_batch().launches()) launches.push_back(l);
    for (const auto& g : p.gemm_batch().gemms()) gemms.push_back(g);
    for (const auto& r : p.nvtx_batch().ranges()) ranges.push_back(r);
  }
  ASSERT_EQ(launches.size(), 2u);
  ASSERT_EQ(gemms.size(), 1u);
  ASSERT_EQ(ranges.size(), 1u);
  const uint32_t tid = CurrentThread().tid;
  EXPECT_EQ(launches[0].correlation_id(), 900u);
  EXPECT_EQ(launches[0].thread_id(), tid);
  EXPECT_EQ(launches[0].kind(), pb::API_KERNEL_LAUNCH);
  EXPECT_EQ(launches[0].cbid(), kLaunchCbid);
  EXPECT_EQ(launches[0].nvtx_range_id(), ranges[0].range_id());
  EXPECT_EQ(launches[0].gemm_call_id(), gemms[0].call_id());
  EXPECT_GT(launches[0].api_start_ns(), 0u);
  EXPECT_GE(launches[0].api_end_ns(), launches[0].api_start_ns());
  EXPECT_GE(launches[0].api_start_ns(), ranges[0].start_ns());
  EXPECT_LE(launches[0].api_end_ns(), ranges[0].end_ns());
  EXPECT_EQ(launches[1].correlation_id(), 950u);
  EXPECT_EQ(launches[1].nvtx_range_id(), 0u);
  EXPECT_EQ(launches[1].gemm_call_id(), 0u);
  EXPECT_EQ(gemms[0].m(), 16);
  ASSERT_EQ(gemms[0].correlation_ids_size(), 1);
  EXPECT_EQ(gemms[0].correlation_ids(0), 900u);
}

// ROOFTRACE_CAPTURE=profiler-api: launches before cuProfilerStart are
// counted as filtered, not sent.
TEST_F(ActivityTest, ProfilerApiCaptureFiltersLaunchesOutsideTheRange) {
  ProducerOptions options;
  options.config.sink.kind = SinkSpec::Kind::kFile;
  options.config.sink.path = path_;
  options.config.capture = CaptureMode::kProfilerApi;
  Producer producer(options);
  CuptiTracer tracer(&producer, FakeApi());
  tracer.SetApiKind(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunchCbid,
                    ApiCallbackKind::kKernelLaunch);
  ASSERT_TRUE(producer.Start().ok());
  EXPECT_FALSE(producer.capturing());
  for (uint32_t c = 1; c <= 3; ++c) {
    auto enter = CallbackData(CUPTI_API_ENTER, c);
    auto exit = CallbackData(CUPTI_API_EXIT, c);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    kLaunchCbid, &enter);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    kLaunchCbid, &exit);
  }
  ASSERT_TRUE(producer.Stop());
  auto packets = testing::ReadTrace(path_);
  int launches = 0;
  for (const auto& p : packets) launches += p.kernel_batch().launches_size();
  EXPECT_EQ(launches, 0);
  std::map<int, pb::RecordCount> totals;
  for (const auto& c : packets.back().goodbye().totals()) totals[c.kind()] = c;
  EXPECT_EQ(totals[pb::RECORD_LAUNCH].filtered(), 3u);
}

}  // namespace
}  // namespace rooftrace::inject

namespace rooftrace::inject {
namespace {

// A fake CUPTI for the attach sequence: it records what the tracer enabled.
struct FakeCupti {
  static inline uint32_t version = 130001;
  static inline bool other_subscriber = false;
  static inline std::vector<std::pair<int, uint32_t>> enabled_callbacks;
  static inline std::vector<int> enabled_kinds;
  static inline bool timestamp_callback = false;
  static inline CUpti_TimestampCallbackFunc clock = nullptr;

  static CUptiResult Version(uint32_t* v) {
    *v = version;
    return CUPTI_SUCCESS;
  }
  static CUptiResult Result(CUptiResult, const char** s) {
    *s = "CUPTI_ERROR_FAKE";
    return CUPTI_SUCCESS;
  }
  static CUptiResult SubscribeV2(CUpti_SubscriberHandle* h, CUpti_CallbackFunc,
                                 void*, CUpti_SubscriberParams* p) {
    if (other_subscriber) {
      snprintf(p->oldSubscriberName, p->oldSubscriberSize, "Nsight Systems");
      return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    *h = reinterpret_cast<CUpti_SubscriberHandle>(0x1);
    return CUPTI_SUCCESS;
  }
  static inline int unsubscribes = 0;
  static CUptiResult Unsubscribe(CUpti_SubscriberHandle) {
    ++unsubscribes;
    return CUPTI_SUCCESS;
  }
  static CUptiResult EnableCallback(uint32_t, CUpti_SubscriberHandle,
                                    CUpti_CallbackDomain d, CUpti_CallbackId c) {
    enabled_callbacks.emplace_back(d, c);
    return CUPTI_SUCCESS;
  }
  // The installed CUPTI's own callback names (they need no GPU).
  static CUptiResult CallbackName(CUpti_CallbackDomain d, uint32_t cbid,
                                  const char** name) {
    using NameFn =
        CUptiResult (*)(CUpti_CallbackDomain, uint32_t, const char**);
    static NameFn real = [] {
      void* h = dlopen(ROOFTRACE_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
      return h == nullptr
                 ? nullptr
                 : reinterpret_cast<NameFn>(dlsym(h, "cuptiGetCallbackName"));
    }();
    if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    return real(d, cbid, name);
  }
  static CUptiResult Enable(CUpti_ActivityKind k) {
    enabled_kinds.push_back(k);
    return CUPTI_SUCCESS;
  }
  static inline std::vector<int> disabled_kinds;
  static CUptiResult Disable(CUpti_ActivityKind k) {
    disabled_kinds.push_back(k);
    return CUPTI_SUCCESS;
  }
  static CUptiResult Register(CUpti_BuffersCallbackRequestFunc,
                              CUpti_BuffersCallbackCompleteFunc) {
    return CUPTI_SUCCESS;
  }
  static CUptiResult Timestamp(CUpti_TimestampCallbackFunc f) {
    timestamp_callback = true;
    clock = f;
    return CUPTI_SUCCESS;
  }
  static CuptiApi Api() {
    CuptiApi api = FakeApi();
    api.GetVersion = &Version;
    api.GetResultString = &Result;
    api.SubscribeV2 = &SubscribeV2;
    api.Unsubscribe = &Unsubscribe;
    api.EnableCallback = &EnableCallback;
    api.GetCallbackName = &CallbackName;
    api.ActivityEnable = &Enable;
    api.ActivityDisable = &Disable;
    api.ActivityRegisterCallbacks = &Register;
    api.ActivityRegisterTimestampCallback = &Timestamp;
    return api;
  }
};

// Nsight (or Kineto) already subscribed: Start fails with one clear reason
// naming the other tool.
TEST(CuptiTracerTest, AnotherSubscriberMakesUsStandAside) {
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = "/dev/null";
  Producer producer(o);
  FakeCupti::other_subscriber = true;
  CuptiTracer tracer(&producer, FakeCupti::Api());
  Status s = tracer.Start();
  FakeCupti::other_subscriber = false;
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("another CUPTI tool is already attached "
                             "(Nsight Systems)"),
            std::string::npos)
      << s.message();
}

// A CUPTI older than CUDA 13 writes other record layouts: refused.
TEST(CuptiTracerTest, OlderCuptiIsRefused) {
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = "/dev/null";
  Producer producer(o);
  FakeCupti::version = 24;  // CUDA 12.8's CUPTI
  CuptiTracer tracer(&producer, FakeCupti::Api());
  Status s = tracer.Start();
  FakeCupti::version = 130001;
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("libcupti reports API version 24, older than"),
            std::string::npos)
      << s.message();
}

// The name CUPTI gives a callback, "" when it has none.
std::string NameOf(CUpti_CallbackDomain d, uint32_t cbid) {
  const char* name = nullptr;
  return FakeCupti::CallbackName(d, cbid, &name) == CUPTI_SUCCESS &&
                 name != nullptr
             ? name
             : "";
}

// CUPTI attaches before the producer starts (so the Hello can announce
// kernels). A producer that then cannot start (a bad pattern) stands
// aside, and CUPTI with it: activity off, unsubscribed.
TEST(CuptiTracerTest, ProducerThatCannotStartDetachesCupti) {
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = "/dev/null";
  o.config.kernel_include = "gemm(";
  Producer producer(o);
  FakeCupti::enabled_kinds.clear();
  FakeCupti::disabled_kinds.clear();
  FakeCupti::unsubscribes = 0;
  auto tracer = std::make_unique<CuptiTracer>(&producer, FakeCupti::Api());
  ASSERT_TRUE(tracer->Start().ok());
  EXPECT_EQ(FakeCupti::enabled_kinds.size(), 6u);
  producer.set_tracer(std::move(tracer));
  EXPECT_FALSE(producer.Start().ok());
  EXPECT_EQ(FakeCupti::disabled_kinds.size(), 6u);
  EXPECT_EQ(FakeCupti::unsubscribes, 1);
}

// ROOFTRACE_CUPTI_PATH names the libcupti libinject loads (a file, or the
// directory holding libcupti.so.13), so that CUPTI reaches libinject
// without LD_LIBRARY_PATH, which the profiled program would inherit. A path
// that does not load is an error naming it, never a silent fallback to
// another CUPTI.
TEST(CuptiLoadTest, CuptiPathNamesTheLibraryToLoad) {
  const char* saved = getenv("ROOFTRACE_CUPTI_PATH");
  setenv("ROOFTRACE_CUPTI_PATH", "/nonexistent/rooftrace/libcupti.so.13", 1);
  StatusOr<CuptiApi> missing = LoadCuptiApi();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(
                "ROOFTRACE_CUPTI_PATH=/nonexistent/rooftrace/libcupti.so.13"),
            std::string::npos)
      << missing.status().message();
  const std::string file = ROOFTRACE_CUPTI_LIBRARY;
  setenv("ROOFTRACE_CUPTI_PATH", file.c_str(), 1);
  EXPECT_TRUE(LoadCuptiApi().ok());
  const std::string dir = file.substr(0, file.rfind('/'));
  setenv("ROOFTRACE_CUPTI_PATH", dir.c_str(), 1);
  StatusOr<CuptiApi> from_dir = LoadCuptiApi();
  EXPECT_TRUE(from_dir.ok()) << from_dir.status().message();
  if (saved != nullptr) {
    setenv("ROOFTRACE_CUPTI_PATH", saved, 1);
  } else {
    unsetenv("ROOFTRACE_CUPTI_PATH");
  }
}

// A CUPTI newer than the one whose record layouts libinject reads (the
// CUDA 13.0 headers it is built with) is used, with one warning that says
// so; the same version is not warned about.
TEST(CuptiTracerTest, NewerCuptiIsWarnedAbout) {
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = "/dev/null";
  Producer producer(o);
  FakeCupti::version = 140000;  // a CUDA 14 CUPTI
  CuptiTracer tracer(&producer, FakeCupti::Api());
  Status s = tracer.Start();
  FakeCupti::version = 130001;
  ASSERT_TRUE(s.ok()) << s.message();
  std::string warnings;
  for (const std::string& w : producer.TakeWarnings()) warnings += w + "\n";
  EXPECT_NE(warnings.find("libcupti reports API version 140000, newer than"),
            std::string::npos)
      << warnings;
  tracer.Finalize();

  Producer same(o);
  CuptiTracer tracer13(&same, FakeCupti::Api());
  ASSERT_TRUE(tracer13.Start().ok());
  EXPECT_TRUE(same.TakeWarnings().empty());
  tracer13.Finalize();
}

// A successful attach enables the launch / copy / memset callbacks (by id: nvcc 13's __cudaLaunchKernel stubs included, launch-like
// calls that enqueue no kernel not), the context callback, the activity
// kinds, and our clock.
TEST(CuptiTracerTest, AttachEnablesTracedCallbacksKindsAndOurClock) {
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = "/dev/null";
  Producer producer(o);
  FakeCupti::enabled_callbacks.clear();
  FakeCupti::enabled_kinds.clear();
  CuptiTracer tracer(&producer, FakeCupti::Api());
  ASSERT_TRUE(tracer.Start().ok());
  std::set<std::string> names;
  for (const auto& [domain, cbid] : FakeCupti::enabled_callbacks) {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) continue;
    names.insert(NameOf(static_cast<CUpti_CallbackDomain>(domain), cbid));
  }
  for (const char* traced :
       {"__cudaLaunchKernel_v13000", "__cudaLaunchKernel_ptsz_v13000",
        "cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060",
        "cudaGraphLaunch_v10000", "cudaMemcpyAsync_v3020", "cudaMemset2D_v3020",
        "cuLaunchKernel", "cuLaunchKernelEx_ptsz",
        "cuLaunchCooperativeKernel", "cuLaunchGrid", "cuGraphLaunch_ptsz",
        "cuMemcpyHtoDAsync_v2", "cuMemsetD8_v2"}) {
    EXPECT_TRUE(names.count(traced)) << traced << " is not enabled";
  }
  for (const char* untraced :
       {"cudaLaunchHostFunc_v10000", "cudaMalloc_v3020", "cuCtxSynchronize",
        "cudaGraphAddMemcpyNode_v10000", "__cudaPushCallConfiguration_v13000",
        "__cudaGetKernel_v13000",
        // The lean set (the default): the profiler calls join nothing
        // outside ROOFTRACE_CAPTURE=profiler-api, and stream capture
        // matters to counters mode only.
        "cudaProfilerStart_v4000", "cuProfilerStop",
        "cudaStreamBeginCapture_v10000", "cuStreamEndCapture"}) {
    EXPECT_FALSE(names.count(untraced)) << untraced << " is enabled";
  }
  ASSERT_GE(FakeCupti::enabled_callbacks.size(), 2u);
  const size_t n = FakeCupti::enabled_callbacks.size();
  EXPECT_EQ(FakeCupti::enabled_callbacks[n - 2],
            (std::pair<int, uint32_t>{CUPTI_CB_DOMAIN_RESOURCE,
                                      CUPTI_CBID_RESOURCE_CONTEXT_CREATED}));
  EXPECT_EQ(
      FakeCupti::enabled_callbacks[n - 1],
      (std::pair<int, uint32_t>{CUPTI_CB_DOMAIN_RESOURCE,
                                CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING}));
  EXPECT_EQ(FakeCupti::enabled_kinds,
            (std::vector<int>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                              CUPTI_ACTIVITY_KIND_MEMCPY,
                              CUPTI_ACTIVITY_KIND_MEMCPY2,
                              CUPTI_ACTIVITY_KIND_MEMSET,
                              CUPTI_ACTIVITY_KIND_DEVICE,
                              CUPTI_ACTIVITY_KIND_CONTEXT}));
  ASSERT_TRUE(FakeCupti::timestamp_callback);
  // CUPTI stamps with CLOCK_MONOTONIC through our callback.
  const uint64_t before = MonotonicNs();
  const uint64_t stamped = FakeCupti::clock();
  EXPECT_GE(stamped, before);
  EXPECT_LE(stamped, MonotonicNs());
  tracer.Finalize();
}

// nvcc 13's <<<>>> launch stubs call __cudaLaunchKernel (runtime cbids
// 505/506), which calls cuLaunchKernel (driver cbid 307) inside. Through
// the real attach and callback path each is one Launch with the runtime
// call's correlation id (the one the kernel record carries), not the
// driver call's, and not lost.
TEST(CuptiTracerTest, NvccLaunchStubsAreLaunchesWithTheRuntimeCorrelation) {
  const std::string dir = testing::MakeTempDir("nvcc_stub");
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = dir + "/t.rft";
  Producer producer(o);
  CuptiTracer tracer(&producer, FakeCupti::Api());
  ASSERT_TRUE(tracer.Start().ok());
  ASSERT_TRUE(producer.Start().ok());
  const uint32_t stubs[] = {
      CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
      CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000};
  ASSERT_EQ(stubs[0], 505u);
  ASSERT_EQ(stubs[1], 506u);
  uint32_t correlation = 700;
  for (uint32_t cbid : stubs) {
    auto enter = CallbackData(CUPTI_API_ENTER, correlation);
    auto exit = CallbackData(CUPTI_API_EXIT, correlation);
    auto d_enter = CallbackData(CUPTI_API_ENTER, correlation + 100);
    auto d_exit = CallbackData(CUPTI_API_EXIT, correlation + 100);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                                    &enter);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_DRIVER_API,
                                    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                    &d_enter);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_DRIVER_API,
                                    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                    &d_exit);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                                    &exit);
    ++correlation;
  }
  ASSERT_TRUE(producer.Stop());
  std::vector<pb::Launch> launches;
  for (const auto& p : testing::ReadTrace(dir + "/t.rft")) {
    for (const auto& l : p.kernel_batch().launches()) launches.push_back(l);
  }
  ASSERT_EQ(launches.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(launches[i].correlation_id(), 700u + i);
    EXPECT_EQ(launches[i].kind(), pb::API_KERNEL_LAUNCH);
    EXPECT_EQ(launches[i].cbid(), stubs[i]);
  }
  tracer.Finalize();
}

// ROOFTRACE_CAPTURE=profiler-api end to end through the callbacks:
// activity is off at attach, cudaProfilerStart turns it (and Launch
// records) on, cudaProfilerStop off again.
TEST(CuptiTracerTest, ProfilerStartStopTogglesActivityAndLaunches) {
  const std::string dir = testing::MakeTempDir("profiler_api");
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = dir + "/t.rft";
  o.config.capture = CaptureMode::kProfilerApi;
  Producer producer(o);
  FakeCupti::enabled_callbacks.clear();
  FakeCupti::enabled_kinds.clear();
  FakeCupti::disabled_kinds.clear();
  CuptiTracer tracer(&producer, FakeCupti::Api());
  ASSERT_TRUE(tracer.Start().ok());
  ASSERT_TRUE(producer.Start().ok());
  EXPECT_TRUE(FakeCupti::enabled_kinds.empty());
  constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  constexpr uint32_t kStart = CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000;
  constexpr uint32_t kStop = CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000;
  auto call = [&](uint32_t cbid, uint32_t correlation) {
    auto enter = CallbackData(CUPTI_API_ENTER, correlation);
    auto exit = CallbackData(CUPTI_API_EXIT, correlation);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                                    &enter);
    CuptiTracer::CallbackTrampoline(&tracer, CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                                    &exit);
  };
  call(kLaunch, 1);  // before the range: filtered
  call(kStart, 2);   // cudaProfilerStart
  EXPECT_TRUE(producer.capturing());
  EXPECT_EQ(FakeCupti::enabled_kinds.size(), 6u);
  call(kLaunch, 3);  // recorded
  call(kStop, 4);    // cudaProfilerStop
  EXPECT_FALSE(producer.capturing());
  EXPECT_EQ(FakeCupti::disabled_kinds.size(), 6u);
  call(kLaunch, 5);  // after the range: filtered
  ASSERT_TRUE(producer.Stop());
  auto packets = testing::ReadTrace(dir + "/t.rft");
  std::vector<uint64_t> launched;
  for (const auto& p : packets) {
    for (const auto& l : p.kernel_batch().launches()) {
      launched.push_back(l.correlation_id());
    }
  }
  EXPECT_EQ(launched, (std::vector<uint64_t>{3}));
  std::map<int, pb::RecordCount> totals;
  for (const auto& c : packets.back().goodbye().totals()) totals[c.kind()] = c;
  EXPECT_EQ(totals[pb::RECORD_LAUNCH].filtered(), 2u);
}


// The callbacks Start() enables, by domain, for a configuration.
std::set<std::pair<int, uint32_t>> EnabledFor(const Config& config) {
  ProducerOptions o;
  o.config = config;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = "/dev/null";
  Producer producer(o);
  FakeCupti::enabled_callbacks.clear();
  FakeCupti::enabled_kinds.clear();
  CuptiTracer tracer(&producer, FakeCupti::Api());
  EXPECT_TRUE(tracer.Start().ok());
  tracer.Finalize();
  return {FakeCupti::enabled_callbacks.begin(),
          FakeCupti::enabled_callbacks.end()};
}

// Issue 26: the lean set (the default) leaves out the profiler calls, which
// join nothing in trace mode; ROOFTRACE_CALLBACKS=full and
// ROOFTRACE_CAPTURE=profiler-api (where they open and close the range)
// enable them. Everything that enqueues work is in both.
TEST(CuptiTracerTest, LeanSetEnablesProfilerCallsOnlyWhereTheyMatter) {
  const std::pair<int, uint32_t> rt_start{
      CUPTI_CB_DOMAIN_RUNTIME_API,
      CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000};
  const std::pair<int, uint32_t> drv_stop{CUPTI_CB_DOMAIN_DRIVER_API,
                                          CUPTI_DRIVER_TRACE_CBID_cuProfilerStop};
  Config lean;
  const auto lean_set = EnabledFor(lean);
  EXPECT_FALSE(lean_set.count(rt_start));
  EXPECT_FALSE(lean_set.count(drv_stop));
  Config full;
  full.callbacks = CallbackSet::kFull;
  const auto full_set = EnabledFor(full);
  EXPECT_TRUE(full_set.count(rt_start));
  EXPECT_TRUE(full_set.count(drv_stop));
  EXPECT_EQ(full_set.size(), lean_set.size() + 4);
  Config profiler_api;
  profiler_api.capture = CaptureMode::kProfilerApi;
  const auto range_set = EnabledFor(profiler_api);
  EXPECT_TRUE(range_set.count(rt_start));
  EXPECT_TRUE(range_set.count(drv_stop));
  for (CUpti_CallbackDomain domain :
       {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    for (const TracedCallback& c : TracedCallbacks(domain)) {
      EXPECT_TRUE(lean_set.count({domain, c.cbid}))
          << NameOf(domain, c.cbid) << " is not in the lean set";
    }
  }
}

// ROOFTRACE_TRACE_OFF switches one part off at a time (the launch
// benchmark's table): runtime or driver callbacks, or the activity kinds.
TEST(CuptiTracerTest, TraceOffSwitchesOffOnePartAtATime) {
  auto count_domain = [](const std::set<std::pair<int, uint32_t>>& set,
                         int domain) {
    return std::count_if(set.begin(), set.end(),
                         [&](const auto& p) { return p.first == domain; });
  };
  Config no_driver;
  no_driver.parts.driver_callbacks = false;
  auto set = EnabledFor(no_driver);
  EXPECT_EQ(count_domain(set, CUPTI_CB_DOMAIN_DRIVER_API), 0);
  EXPECT_EQ(count_domain(set, CUPTI_CB_DOMAIN_RUNTIME_API),
            static_cast<long>(TracedCallbacks(CUPTI_CB_DOMAIN_RUNTIME_API).size()));
  EXPECT_EQ(FakeCupti::enabled_kinds.size(), 6u);
  Config no_runtime;
  no_runtime.parts.runtime_callbacks = false;
  set = EnabledFor(no_runtime);
  EXPECT_EQ(count_domain(set, CUPTI_CB_DOMAIN_RUNTIME_API), 0);
  EXPECT_GT(count_domain(set, CUPTI_CB_DOMAIN_DRIVER_API), 0);
  Config no_activity;
  no_activity.parts.activity = false;
  set = EnabledFor(no_activity);
  EXPECT_TRUE(FakeCupti::enabled_kinds.empty());
  EXPECT_GT(count_domain(set, CUPTI_CB_DOMAIN_RUNTIME_API), 0);
  // The context callbacks stay: the exit path synchronizes contexts.
  EXPECT_EQ(count_domain(set, CUPTI_CB_DOMAIN_RESOURCE), 2);
}

// Issue 26: with the lean set, every launch API an inference process uses
// is one Launch, joined to its kernels by correlation id: nvcc 13's
// __cudaLaunchKernel stub, cudaLaunchKernel and cudaLaunchKernelExC (each
// with the driver call the runtime makes inside it), cuLaunchKernel and
// cuLaunchKernelEx called directly (Triton), a launch captured into a graph
// (stream capture is not followed in trace mode), and graph launches from
// the runtime and the driver, whose kernels carry the graph launch's
// correlation id.
TEST(CuptiTracerTest, EachLaunchApiIsOneLaunchJoinedToItsKernels) {
  const std::string dir = testing::MakeTempDir("launch_once");
  ProducerOptions o;
  o.config.sink.kind = SinkSpec::Kind::kFile;
  o.config.sink.path = dir + "/t.rft";
  Producer producer(o);
  FakeCupti::enabled_callbacks.clear();
  CuptiTracer tracer(&producer, FakeCupti::Api());
  ASSERT_TRUE(tracer.Start().ok());
  ASSERT_TRUE(producer.Start().ok());
  const std::set<std::pair<int, uint32_t>> enabled(
      FakeCupti::enabled_callbacks.begin(), FakeCupti::enabled_callbacks.end());
  constexpr auto rt = CUPTI_CB_DOMAIN_RUNTIME_API;
  constexpr auto drv = CUPTI_CB_DOMAIN_DRIVER_API;
  // One API call as CUPTI reports it: enter, the calls made inside, exit;
  // only the callbacks Start() enabled reach the tracer.
  struct Call {
    CUpti_CallbackDomain domain;
    uint32_t cbid;
    uint32_t correlation;
  };
  auto deliver = [&](const Call& c, CUpti_ApiCallbackSite site) {
    if (!enabled.count({c.domain, c.cbid})) return;
    auto data = CallbackData(site, c.correlation);
    CuptiTracer::CallbackTrampoline(&tracer, c.domain, c.cbid, &data);
  };
  auto call = [&](const Call& outer, std::vector<Call> inner = {}) {
    deliver(outer, CUPTI_API_ENTER);
    for (const Call& c : inner) {
      deliver(c, CUPTI_API_ENTER);
      deliver(c, CUPTI_API_EXIT);
    }
    deliver(outer, CUPTI_API_EXIT);
  };
  call({rt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 10},
       {{drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 11}});
  call({rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 20},
       {{drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, 21}});
  call({rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, 30},
       {{drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 31}});
  call({drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 40});
  call({drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 50});
  call({rt, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, 60},
       {{drv, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, 64}});
  call({rt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 61},
       {{drv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 62}});
  call({rt, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, 63},
       {{drv, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, 65}});
  call({rt, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 70},
       {{drv, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, 71}});
  call({drv, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, 80});

  // The kernels the GPU ran: one per launch, two from each graph launch
  // (the graph captured at 61 holds them); the captured launch runs none.
  const uint32_t kernel_correlations[] = {10, 20, 30, 40, 50, 70, 70, 80, 80};
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  CuptiTracer::BufferRequested(&buffer, &size, &max_records);
  ASSERT_NE(buffer, nullptr);
  size_t used = 0;
  uint64_t t = 1'000'000;
  for (uint32_t c : kernel_correlations) {
    Put(buffer, &used, Kernel(c, "_Z5emptyv", t, t + 2'000));
    t += 10'000;
  }
  CuptiTracer::BufferCompleted(nullptr, 0, buffer, size, used);
  ASSERT_TRUE(producer.Stop());
  tracer.Finalize();

  std::map<uint64_t, std::vector<pb::Launch>> launches;
  std::vector<pb::Kernel> kernels;
  for (const auto& p : testing::ReadTrace(dir + "/t.rft")) {
    for (const auto& l : p.kernel_batch().launches()) {
      launches[l.correlation_id()].push_back(l);
    }
    for (const auto& k : p.kernel_batch().kernels()) kernels.push_back(k);
  }
  // Each API call is one Launch, with the outer call's correlation id.
  std::vector<uint64_t> ids;
  for (const auto& [id, list] : launches) {
    ids.push_back(id);
    EXPECT_EQ(list.size(), 1u) << "correlation " << id << " launched twice";
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{10, 20, 30, 40, 50, 61, 70, 80}));
  EXPECT_EQ(launches[10][0].cbid(),
            CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
  EXPECT_EQ(launches[30][0].cbid(),
            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060);
  EXPECT_EQ(launches[40][0].cbid(), CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  for (uint64_t id : {10, 20, 30, 40, 50, 61}) {
    EXPECT_EQ(launches[id][0].kind(), pb::API_KERNEL_LAUNCH) << id;
  }
  EXPECT_EQ(launches[70][0].kind(), pb::API_GRAPH_LAUNCH);
  EXPECT_EQ(launches[80][0].kind(), pb::API_GRAPH_LAUNCH);
  // Every kernel joins exactly one Launch (the collector's join key).
  ASSERT_EQ(kernels.size(), std::size(kernel_correlations));
  for (const pb::Kernel& k : kernels) {
    EXPECT_EQ(launches.count(k.correlation_id()), 1u)
        << "kernel of correlation " << k.correlation_id() << " has no launch";
  }
}


// ROOFTRACE_LOG=debug counts the driver callbacks that come inside a
// runtime call, so the launch benchmark can tell whether CUPTI also calls
// the driver callback of every runtime launch: a runtime launch with its
// nested driver call and a driver launch give 2 (enter and exit); other
// log levels count nothing.
TEST(CuptiTracerTest, DebugLogCountsDriverCallbacksInsideRuntimeCalls) {
  for (const LogLevel level : {LogLevel::kDebug, LogLevel::kInfo}) {
    ProducerOptions o;
    o.config.sink.kind = SinkSpec::Kind::kFile;
    o.config.sink.path = "/dev/null";
    o.config.log_level = level;
    Producer producer(o);
    CuptiTracer tracer(&producer, FakeCupti::Api());
    ASSERT_TRUE(tracer.Start().ok());
    auto cb = [&](CUpti_CallbackDomain d, uint32_t cbid,
                  CUpti_ApiCallbackSite site, uint32_t correlation) {
      auto data = CallbackData(site, correlation);
      CuptiTracer::CallbackTrampoline(&tracer, d, cbid, &data);
    };
    constexpr auto rt = CUPTI_CB_DOMAIN_RUNTIME_API;
    constexpr auto drv = CUPTI_CB_DOMAIN_DRIVER_API;
    constexpr uint32_t kRt = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    constexpr uint32_t kDrv = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
    cb(rt, kRt, CUPTI_API_ENTER, 1);
    cb(drv, kDrv, CUPTI_API_ENTER, 2);
    cb(drv, kDrv, CUPTI_API_EXIT, 2);
    cb(rt, kRt, CUPTI_API_EXIT, 1);
    cb(drv, kDrv, CUPTI_API_ENTER, 3);
    cb(drv, kDrv, CUPTI_API_EXIT, 3);
    EXPECT_EQ(tracer.nested_driver_callbacks(),
              level == LogLevel::kDebug ? 2u : 0u);
    tracer.Finalize();
  }
}

}  // namespace
}  // namespace rooftrace::inject
