// Nsight Systems SQLite exports into the store: the recorded A100 export
// (nsys 2022.2, schema 2.9.1) read in place with exact counts, exports of an
// older and a newer schema built here from DDL, an export of a version
// rooftrace does not know, the --pid / --rank filters, windows on a long
// export, counters attached from another file, and bad input.
#include "sources/nsys/nsys_source.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "sources/nsys/nsys_reader.h"
#include "sources/registry.h"
#include "store/store.h"
#include "tests/sources/nsys/export_builder.h"
#include "tests/support/real_data.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::ExportBuilder;
using test_support::GlobalPid;
using test_support::GlobalTid;
using test_support::RealDataFile;
using test_support::RealDataMissing;
using test_support::StoreQuery;
using test_support::TempDir;

constexpr char kRealExport[] =
    "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sanitized.sqlite";

StatusOr<SourceResult> Import(const std::string& file,
                              const std::string& store_path,
                              const SourceOptions& options = {}) {
  RT_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                      Store::Open(store_path, Store::Durability::kScratch));
  static const NsysSource source;
  return ReadSourceInto(source, file, options, store.get());
}

int64_t Stat(const StoreQuery& q, const std::string& name) {
  return q.Int("SELECT value FROM import_stats WHERE name = '" + name + "'");
}

class NsysRealFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = RealDataFile(kRealExport);
    if (file_.empty()) GTEST_SKIP() << RealDataMissing(kRealExport);
  }
  std::string file_;
};

// The export is told apart from a store and from other traces by content.
TEST_F(NsysRealFileTest, DetectedAsNsysByContent) {
  auto source = DetectSource(file_);
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->format(), "nsys");
  EXPECT_TRUE(nsys::LooksLikeNsysExport(file_));
  TempDir dir("nsys");
  const std::string store = dir.File("runs.sqlite");
  ASSERT_TRUE(Import(file_, store).ok());
  EXPECT_FALSE(nsys::LooksLikeNsysExport(store));  // a store is not an export
  EXPECT_FALSE(DetectSource(store).ok());
}

// Every kernel row of the export is stored, with its launch joined (the
// call row, not the backtrace row nsys adds for the same call).
TEST_F(NsysRealFileTest, EveryKernelStoredWithItsLaunch) {
  StoreQuery src(file_);
  ASSERT_EQ(src.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 5);
  TempDir dir("nsys");
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file_, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 5u);
  EXPECT_EQ(result->warning, "");
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels"), 5);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE thread_id = 1230493 "
                  "AND api_start_ns IS NOT NULL"),
            5);
  EXPECT_EQ(q.Text("SELECT group_concat(correlation_id) FROM (SELECT "
                   "correlation_id FROM kernels ORDER BY start_ns)"),
            "140,156,172,188,204");
  EXPECT_EQ(q.Text("SELECT start_ns || ' ' || end_ns || ' ' || api_start_ns "
                   "|| ' ' || grid_x || grid_y || grid_z || ' ' || block_x || "
                   "' ' || registers_per_thread || ' ' || stream_id || ' ' || "
                   "device_id FROM kernels WHERE correlation_id = 140"),
            "924922186 942626994 924890173 211 512 26 7 0");
  EXPECT_EQ(q.Text("SELECT DISTINCT name FROM kernels"), "_Z5saxpyPdS_S_di");
  EXPECT_EQ(q.Text("SELECT DISTINCT demangled FROM kernels"),
            "saxpy(double*, double*, double*, double, int)");
  EXPECT_EQ(q.Text("SELECT DISTINCT family FROM kernels"), "saxpy");
  EXPECT_EQ(Stat(q, "received_kernel"), 5);
  // 5 cudaLaunchKernel + 15 cudaMemcpy calls; cudaMalloc & co are not kept.
  EXPECT_EQ(Stat(q, "received_launch"), 20);
  EXPECT_EQ(Stat(q, "unmatched_kernel"), 0);
  EXPECT_EQ(Stat(q, "unmatched_launch"), 0);
  EXPECT_EQ(Stat(q, "unmatched_memcpy"), 0);
  EXPECT_EQ(Stat(q, "bytes"), 1441792);
}

// Copies, the GPU and the process the export names.
TEST_F(NsysRealFileTest, CopiesDeviceAndProcess) {
  TempDir dir("nsys");
  const std::string store = dir.File("runs.sqlite");
  ASSERT_TRUE(Import(file_, store).ok());
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM memcpys"), 15);
  EXPECT_EQ(q.Int("SELECT count(*) FROM memcpys WHERE kind = 'htod' AND "
                  "src_kind = 'pageable' AND dst_kind = 'device'"),
            10);
  EXPECT_EQ(q.Int("SELECT count(*) FROM memcpys WHERE kind = 'dtoh' AND "
                  "src_kind = 'device' AND dst_kind = 'pageable'"),
            5);
  EXPECT_EQ(q.Int("SELECT count(*) FROM memcpys WHERE kind = 'memset'"), 0);
  EXPECT_EQ(q.Int("SELECT count(DISTINCT bytes) || max(bytes) FROM memcpys"),
            1262144000);
  EXPECT_EQ(q.Int("SELECT count(*) FROM memcpys WHERE thread_id = 1230493"),
            15);
  EXPECT_EQ(q.Text("SELECT name || '|' || chip_name || '|' || sm_count || '|' "
                   "|| cc_major || '.' || cc_minor || '|' || l2_cache_bytes "
                   "|| '|' || global_memory_bytes || '|' || device_id FROM "
                   "devices"),
            "NVIDIA A100-SXM4-40GB|GA100|108|8.0|41943040|42297524224|0");
  EXPECT_EQ(q.Text("SELECT device_name || '|' || roof_source || '|' || mode "
                   "|| '|' || complete FROM runs"),
            "NVIDIA A100-SXM4-40GB|datasheet:a100-40gb|import|1");
  EXPECT_GT(q.Int("SELECT count(*) FROM roofs"), 0);
  EXPECT_EQ(q.Text("SELECT count(*) || '|' || pid || '|' || host || '|' || "
                   "argv || '|' || producer_version FROM sessions"),
            "1|1230493|nid001608|./saxpy-mpi-cuda|nsys 2022.2.1.31");
  EXPECT_EQ(q.Text("SELECT origin FROM runs"), "import:" + file_);
}

// Push/pop ranges with inline text and with registered strings of the MPI
// domain; each kernel's launch sits in its 'saxpy' range.
TEST_F(NsysRealFileTest, NvtxRangesPathsAndSteps) {
  TempDir dir("nsys");
  const std::string store = dir.File("runs.sqlite");
  ASSERT_TRUE(Import(file_, store).ok());
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM nvtx_ranges"), 22);
  EXPECT_EQ(q.Text("SELECT group_concat(name || ':' || n, ' ') FROM (SELECT "
                   "name, count(*) AS n FROM nvtx_ranges GROUP BY name ORDER "
                   "BY name)"),
            "MPI_Finalize:1 MPI_Init:1 MPI_Recv:5 MPI_Send:10 saxpy:5");
  EXPECT_EQ(q.Int("SELECT count(*) FROM nvtx_ranges WHERE domain = 'MPI'"), 17);
  EXPECT_EQ(q.Int("SELECT count(*) FROM nvtx_ranges WHERE name = 'saxpy' AND "
                  "(domain IS NULL OR domain = '') AND depth = 0 AND "
                  "parent_range_id IS NULL AND kind = 'push_pop'"),
            5);
  EXPECT_EQ(q.Text("SELECT start_ns || '-' || end_ns FROM nvtx_ranges WHERE "
                   "name = 'MPI_Init'"),
            "65117824-710796807");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE nvtx_path = 'saxpy'"), 5);
  EXPECT_EQ(q.Int("SELECT count(*) FROM memcpys WHERE nvtx_path IS NOT NULL"),
            0);
  EXPECT_EQ(Stat(q, "received_nvtx_range"), 22);
  // A step per outermost range around kernels.
  EXPECT_EQ(q.Int("SELECT count(*) FROM steps"), 5);
  EXPECT_EQ(q.Int("SELECT count(DISTINCT step_id) FROM kernels"), 5);
}

// --pid and --rank ('MPI Rank 0' is the name nsys gave the rank's thread).
TEST_F(NsysRealFileTest, PidAndRankFilters) {
  TempDir dir("nsys");
  SourceOptions by_pid;
  by_pid.pid = 1230493;
  auto a = Import(file_, dir.File("a.sqlite"), by_pid);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->kernels, 5u);
  SourceOptions by_rank;
  by_rank.rank = 0;
  auto b = Import(file_, dir.File("b.sqlite"), by_rank);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->kernels, 5u);

  SourceOptions wrong_pid;
  wrong_pid.pid = 42;
  const Status e1 = nsys::CheckNsysExport(file_, wrong_pid);
  EXPECT_EQ(e1.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(e1.message(), file_ +
                              ": no process with CUDA activity has pid 42; "
                              "processes with CUDA kernels: 1230493 (rank 0)");
  SourceOptions wrong_rank;
  wrong_rank.rank = 3;
  const Status e2 = nsys::CheckNsysExport(file_, wrong_rank);
  EXPECT_NE(e2.message().find("has MPI rank 3"), std::string::npos)
      << e2.message();
  // Reading refuses it too, before any session of the file is stored.
  const std::string store = dir.File("c.sqlite");
  auto c = Import(file_, store, wrong_rank);
  EXPECT_EQ(c.status().message(), e2.message());
  EXPECT_EQ(StoreQuery(store).Int("SELECT count(*) FROM sessions"), 0);
  EXPECT_EQ(StoreQuery(store).Int("SELECT count(*) FROM kernel_rows"), 0);
}

// --counters naming a file that is not an Nsight Compute CSV: refused
// before anything is written, naming the counter file.
TEST_F(NsysRealFileTest, CountersFileThatIsNotNcuIsRefused) {
  TempDir dir("nsys");
  const std::string bogus = dir.File("ncu.csv");
  std::ofstream(bogus) << "a,b,c\n1,2,3\n";
  SourceOptions o;
  o.counters_path = bogus;
  const std::string store = dir.File("runs.sqlite");
  auto r = Import(file_, store, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("--counters " + bogus + ": ", 0), 0u)
      << r.status().message();
  EXPECT_EQ(StoreQuery(store).Int("SELECT count(*) FROM runs"), 0);
}

// ------------------------------------------------------- other versions

std::string Insert(const std::string& table, const std::string& values) {
  return "INSERT INTO " + table + " VALUES " + values + ";";
}

// An early-layout export of two MPI ranks (pid 100: rank 0, threads 100 and
// 101; pid 200: rank 1) whose correlation ids collide across processes.
// Rank 0 launches through the runtime, the driver, __cudaLaunchKernel and a
// CUDA graph, copies and sets memory, under nested push/pop ranges, a
// start/end range and a range that never ended; its kernel rows are not in
// time order.
void BuildOldExport(const std::string& path) {
  ExportBuilder b(path);
  b.Exec(test_support::kOldLayout);
  const int64_t a = GlobalPid(100), r = GlobalPid(200);
  const int64_t main_tid = GlobalTid(100, 100), worker = GlobalTid(100, 101);
  const int64_t r_tid = GlobalTid(200, 200);
  b.Exec(
      Insert("StringIds",
             "(1,'kernel(float*)'),(2,'kernel'),(3,'gemm_tn'),"
             "(4,'graph_k1'),(5,'graph_k2'),(6,'late_kernel'),"
             "(10,'cudaLaunchKernel_v7000'),(11,'cuLaunchKernel'),"
             "(12,'cudaMemcpyAsync_v3020'),(13,'cudaMemsetAsync_v3020'),"
             "(14,'cudaGraphLaunch_v10000'),(15,'__cudaLaunchKernel_v13000'),"
             "(16,'cudaMalloc_v3020'),(20,'MPI Rank 0'),(21,'MPI Rank 1')"));
  b.Exec(Insert("EXPORT_META_DATA",
                "('EXPORT_PRODUCT_NAME','NVIDIA Nsight "
                "Systems')"));
  b.Exec(Insert("TARGET_INFO_GPU",
                "(281474976710656,0,'NVIDIA H100 80GB HBM3','0000:1b:00.0',1,"
                "52428800,85520809984,3352320000000,1980000000,132,0,"
                "'GPU-1',0,'GH100')"));
  b.Exec(Insert("PROCESSES", "(" + std::to_string(a) + ",100,'python'),(" +
                                 std::to_string(r) + ",200,'python')"));
  b.Exec(Insert("ThreadNames", "(20,0," + std::to_string(main_tid) +
                                   "),(21,0," + std::to_string(r_tid) + ")"));
  auto k = [](int64_t start, int64_t end, int64_t corr, int64_t gp,
              int64_t name, int64_t stream) {
    return "(" + std::to_string(start) + "," + std::to_string(end) + ",0,1," +
           std::to_string(stream) + "," + std::to_string(corr) + "," +
           std::to_string(gp) + "," + std::to_string(name) +
           ",2,1,0,32,64,2,"
           "1,128,1,1,1024,0,0,0,1,NULL)";
  };
  // Kernel rows out of time order: K2 first.
  b.Exec(Insert(
      "CUPTI_ACTIVITY_KIND_KERNEL",
      k(2200, 2600, 2, a, 3, 7) + "," + k(1300, 1400, 1, a, 1, 7) + "," +
          k(6200, 6300, 5, a, 4, 7) + "," + k(6300, 6400, 5, a, 5, 7) + "," +
          k(7100, 7200, 6, a, 6, 9) + "," + k(1600, 1700, 1, r, 1, 7)));
  auto rt = [](int64_t start, int64_t corr, int64_t tid, int64_t name) {
    return "(" + std::to_string(start) + "," + std::to_string(start + 50) +
           ",0," + std::to_string(tid) + "," + std::to_string(corr) + "," +
           std::to_string(name) + ",0)";
  };
  b.Exec(Insert(
      "CUPTI_ACTIVITY_KIND_RUNTIME",
      rt(1200, 1, main_tid, 10) + "," + rt(1500, 1, r_tid, 10) + "," +
          rt(2100, 2, main_tid, 11) + "," + rt(2700, 3, main_tid, 12) + "," +
          rt(3000, 4, main_tid, 13) + "," + rt(4000, 7, main_tid, 16) + "," +
          rt(6100, 5, main_tid, 14) + "," + rt(7000, 6, worker, 15)));
  b.Exec(Insert("CUPTI_ACTIVITY_KIND_MEMCPY",
                "(2800,2850,0,1,7,3," + std::to_string(a) +
                    ",4,2,NULL,2,1,0,1,NULL,NULL)"));
  b.Exec(Insert("CUPTI_ACTIVITY_KIND_MEMSET",
                "(3100,3150,0,1,7,4," + std::to_string(a) + ",0,1024)"));
  auto nv = [](int64_t start, const std::string& end, int64_t type,
               const std::string& text, int64_t tid, const std::string& etid) {
    return "(" + std::to_string(start) + "," + end + "," +
           std::to_string(type) + ",NULL,NULL,NULL,'" + text + "'," +
           std::to_string(tid) + "," + etid + ")";
  };
  const std::string t = std::to_string(main_tid);
  b.Exec(Insert(
      "NVTX_EVENTS",
      nv(900, "9000", 60, "request 7", main_tid, std::to_string(worker)) + "," +
          nv(1000, "5000", 59, "step 0", main_tid, "NULL") + "," +
          nv(1100, "2000", 59, "attention", main_tid, "NULL") + "," +
          nv(1150, "NULL", 34, "a mark", main_tid, "NULL") + "," +
          nv(6000, "9500", 59, "step 1", main_tid, "NULL") + "," +
          nv(8000, "NULL", 59, "never ended", main_tid, "NULL")));
}

TEST(NsysVersionsTest, OldLayoutReadsEveryRecord) {
  TempDir dir("nsys");
  const std::string file = dir.File("old.sqlite");
  BuildOldExport(file);
  auto source = DetectSource(file);
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->format(), "nsys");
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 6u);
  EXPECT_EQ(result->warning,
            file +
                ": 1 table(s) not in time order: sorted while reading; 1 "
                "NVTX range(s) never ended: closed at the end of the "
                "capture");
  StoreQuery q(store);
  // One session per process, in pid order, on the GPU the export names.
  EXPECT_EQ(q.Text("SELECT group_concat(pid || ':' || argv, ' ') FROM "
                   "sessions"),
            "100:python 200:python");
  EXPECT_EQ(q.Text("SELECT group_concat(DISTINCT name) FROM devices"),
            "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(q.Text("SELECT roof_source FROM runs"), "datasheet:h100-sxm");
  // Names: the demangled name where no mangled one exists.
  EXPECT_EQ(q.Text("SELECT group_concat(name, ' ') FROM (SELECT name FROM "
                   "kernels ORDER BY session_id, start_ns)"),
            "kernel(float*) gemm_tn graph_k1 graph_k2 late_kernel "
            "kernel(float*)");
  // Every kernel met its own process's launch (correlation 1 is in both).
  EXPECT_EQ(q.Text("SELECT group_concat(s.pid || '/' || k.correlation_id || "
                   "'/' || k.thread_id || '/' || k.api_start_ns, ' ') FROM "
                   "(SELECT * FROM kernels ORDER BY session_id, start_ns) k "
                   "JOIN sessions s USING (session_id)"),
            "100/1/100/1200 100/2/100/2100 100/5/100/6100 100/5/100/6100 "
            "100/6/101/7000 200/1/200/1500");
  EXPECT_EQ(Stat(q, "unmatched_kernel"), 0);
  EXPECT_EQ(Stat(q, "unmatched_launch"), 0);  // cudaMalloc is not a launch
  EXPECT_EQ(Stat(q, "received_launch"), 7);
  // Launches in the innermost push/pop range of their thread.
  EXPECT_EQ(q.Text("SELECT group_concat(ifnull(nvtx_path, '-'), ' | ') FROM "
                   "(SELECT nvtx_path FROM kernels ORDER BY session_id, "
                   "start_ns)"),
            "step 0/attention | step 0 | step 1 | step 1 | - | -");
  // Copies: a 4-byte device-to-pinned token copy and a memset.
  EXPECT_EQ(q.Text("SELECT group_concat(kind || ':' || bytes || ':' || "
                   "ifnull(src_kind, '') || ':' || ifnull(dst_kind, '') || "
                   "':' || ifnull(nvtx_path, '-'), ' ') FROM (SELECT * FROM "
                   "memcpys ORDER BY start_ns)"),
            "dtoh:4:device:pinned:step 0 memset:1024:::step 0");
  // Ranges: parents, depths, the start/end range ending on another thread,
  // the one that never ended closed where it began (no capture end known).
  EXPECT_EQ(q.Text("SELECT group_concat(name || ':' || kind || ':' || depth "
                   "|| ':' || ifnull(path, '') || ':' || thread_id || ':' || "
                   "end_thread_id || ':' || end_ns, ' | ') FROM (SELECT * FROM "
                   "nvtx_ranges ORDER BY start_ns)"),
            "request 7:start_end:0:request 7:100:101:9000 | "
            "step 0:push_pop:0:step 0:100:100:5000 | "
            "attention:push_pop:1:step 0/attention:100:100:2000 | "
            "step 1:push_pop:0:step 1:100:100:9500 | "
            "never ended:push_pop:1:step 1/never ended:100:100:8000");
  EXPECT_EQ(Stat(q, "received_nvtx_mark"), 1);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE grid_x = 64 AND "
                  "block_x = 128 AND registers_per_thread = 32 AND "
                  "static_shared_memory_bytes = 1024"),
            6);

  // --rank 1 keeps the other process only.
  SourceOptions rank1;
  rank1.rank = 1;
  auto r1 = Import(file, dir.File("rank1.sqlite"), rank1);
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  EXPECT_EQ(r1->kernels, 1u);
  StoreQuery q1(dir.File("rank1.sqlite"));
  EXPECT_EQ(q1.Int("SELECT pid FROM sessions"), 200);
}

// A recent export: columns shifted by greenContextId, registered NVTX
// strings in a named domain, graph and cluster columns, and a process whose
// CUDA device 0 is the export's second GPU.
TEST(NsysVersionsTest, NewLayoutMapsDevicesAndRegisteredStrings) {
  TempDir dir("nsys");
  const std::string file = dir.File("new.sqlite");
  {
    ExportBuilder b(file);
    b.Exec(test_support::kNewLayout);
    const int64_t gp = GlobalPid(300), tid = GlobalTid(300, 301);
    const std::string g = std::to_string(gp), t = std::to_string(tid);
    b.Exec(
        Insert("StringIds",
               "(1,'_Z4tileILi4EEvPf'),(2,'void tile<4>(float*)'),"
               "(3,'tile'),(4,'cuLaunchKernelEx_ptsz'),"
               "(5,'cudaMemcpyAsync_ptsz_v7000'),(6,'cudaMemsetAsync_v3020'),"
               "(7,'decode_step'),(8,'cudaLaunchKernel')"));
    b.Exec(Insert("TARGET_INFO_SYSTEM_ENV",
                  "(1,'Local','Hostname',619,'gpu-node-7'),"
                  "(1,'Local','CudaDriverVersion',611,'12080')"));
    b.Exec(Insert("TARGET_INFO_SESSION_START_TIME",
                  "(1700000000000000000,'x','y',0,0)"));
    b.Exec(Insert("ANALYSIS_DETAILS", "(1,100000,0,100000)"));
    b.Exec(
        Insert("TARGET_INFO_GPU",
               "(1,0,'NVIDIA A100-SXM4-80GB','0000:07:00.0',1,41943040,"
               "85899345920,2039000000000,1410000000,108,0,'GPU-a',0,'GA100',"
               "0,8,0,0),"
               "(1,1,'NVIDIA H100 80GB HBM3','0000:1b:00.0',1,52428800,"
               "85520809984,3352320000000,1980000000,132,1,'GPU-h',0,"
               "'GH100',1,9,0,0)"));
    b.Exec(Insert("TARGET_INFO_CUDA_DEVICE",
                  "(1,0,300,'GPU-h',132),(0,0,999,'GPU-a',108)"));
    b.Exec(Insert("PROCESSES", "(" + g + ",300,'vllm')"));
    // start,end,device,context,green,stream,corr,gp,demangled,short,mangled
    b.Exec(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, "
        "contextId, greenContextId, streamId, correlationId, globalPid, "
        "demangledName, shortName, mangledName, registersPerThread, gridX, "
        "gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
        "dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, "
        "gridId, graphId, clusterX, clusterY, clusterZ) VALUES "
        "(1100,1900,0,1,NULL,13,21," +
        g +
        ",2,3,1,40,8,4,1,256,1,1,0,"
        "49152,0,0,1,17,2,1,1),"
        "(2100,2900,0,1,NULL,13,23," +
        g +
        ",2,3,1,40,8,4,1,256,1,1,0,"
        "49152,0,0,2,17,2,1,1)");
    b.Exec(Insert("CUPTI_ACTIVITY_KIND_RUNTIME", "(1000,1050,0," + t +
                                                     ",21,4,0,NULL),"
                                                     "(1000,1060,67," +
                                                     t +
                                                     ",21,8,0,7),"
                                                     "(2000,2050,1," +
                                                     t +
                                                     ",23,4,0,NULL),"
                                                     "(3000,3050,0," +
                                                     t +
                                                     ",22,5,0,NULL),"
                                                     "(4000,4050,0," +
                                                     t + ",24,6,0,NULL)"));
    b.Exec(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, "
        "contextId, streamId, correlationId, globalPid, bytes, copyKind, "
        "srcKind, dstKind, copyCount) VALUES (3100,3200,0,1,13,22," +
        g + ",1048576,8,2,2,1)");
    b.Exec(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, "
        "contextId, streamId, correlationId, globalPid, value, bytes, "
        "memKind) VALUES (4100,4200,0,1,13,24," +
        g + ",0,4096,2)");
    b.Exec(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, "
        "textId, domainId) VALUES (10,NULL,75,'engine'," +
        t +
        ",NULL,5),"
        "(900,5000,59,NULL," +
        t + ",7,5)");
    ASSERT_EQ(b.first_error(), "");
  }
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 2u);
  EXPECT_EQ(result->warning, "");
  StoreQuery q(store);
  EXPECT_EQ(q.Text("SELECT device_id || ':' || name || ':' || sm_count || ':' "
                   "|| cc_major || ':' || core_clock_khz || ':' || "
                   "driver_version FROM devices"),
            "0:NVIDIA H100 80GB HBM3:132:9:1980000:12080");
  EXPECT_EQ(q.Text("SELECT host || ':' || pid || ':' || argv || ':' || "
                   "start_unix_ns || ':' || producer_version FROM sessions"),
            "gpu-node-7:300:vllm:1700000000000000000:nsys 2026.4.1");
  EXPECT_EQ(q.Text("SELECT group_concat(name || ':' || demangled || ':' || "
                   "cluster_x || ':' || dynamic_shared_memory_bytes || ':' || "
                   "graph_id || ':' || stream_id || ':' || api_start_ns || ':' "
                   "|| nvtx_path, ' ') FROM kernels"),
            "_Z4tileILi4EEvPf:void tile<4>(float*):2:49152:17:13:1000:"
            "decode_step "
            "_Z4tileILi4EEvPf:void tile<4>(float*):2:49152:17:13:2000:"
            "decode_step");
  EXPECT_EQ(q.Text("SELECT domain || ':' || name || ':' || end_ns FROM "
                   "nvtx_ranges"),
            "engine:decode_step:5000");
  EXPECT_EQ(q.Text("SELECT group_concat(kind || ':' || ifnull(src_kind, '') "
                   "|| ':' || dst_kind || ':' || bytes, ' ') FROM (SELECT * "
                   "FROM memcpys ORDER BY start_ns)"),
            "dtod:device:device:1048576 memset::device:4096");
  // The backtrace row (eventClass 67) of call 21 is not a second launch.
  EXPECT_EQ(Stat(q, "received_launch"), 4);
  EXPECT_EQ(Stat(q, "unmatched_launch"), 0);
}

// A schema version rooftrace was not written for, missing columns it
// expects: what can be read is, and the warning says what was not.
TEST(NsysVersionsTest, UnknownVersionReadsWhatItCanAndSaysWhat) {
  TempDir dir("nsys");
  const std::string file = dir.File("future.sqlite");
  {
    ExportBuilder b(file);
    b.Exec(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', "
        "'7.1.0');"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (kernelName INTEGER, "
        "start INTEGER, end INTEGER, correlationId INTEGER, globalPid "
        "INTEGER, launchConfig TEXT);"
        "INSERT INTO StringIds VALUES (1, 'future_kernel');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 100, 200, 1, " +
        std::to_string(GlobalPid(5)) + ", '{}'), (1, 300, 400, 2, " +
        std::to_string(GlobalPid(5)) + ", '{}');");
    ASSERT_EQ(b.first_error(), "");
  }
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, 2u);
  EXPECT_EQ(result->warning,
            file +
                ": export schema version 7.1.0 is not one rooftrace was "
                "tested with (2.x, 3.x): read what the columns allowed; no "
                "GPU description (TARGET_INFO_GPU): the run has no "
                "datasheet roofs; name the GPU with --device KEY (rooftrace "
                "devices lists them); CUPTI_ACTIVITY_KIND_KERNEL has no "
                "deviceId, streamId, registersPerThread, gridX, gridY, "
                "gridZ, blockX, blockY, blockZ, staticSharedMemory, "
                "dynamicSharedMemory columns: left empty; "
                "CUPTI_ACTIVITY_KIND_KERNEL has no kernel name column: "
                "kernels are unnamed");
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE start_ns IN (100, 300) "
                  "AND duration_ns = 100"),
            2);
  // --device names the GPU the export does not.
  SourceOptions o;
  o.device_key = "h100-sxm";
  ASSERT_TRUE(Import(file, dir.File("dev.sqlite"), o).ok());
  StoreQuery qd(dir.File("dev.sqlite"));
  EXPECT_EQ(qd.Text("SELECT roof_source FROM runs"), "datasheet:h100-sxm");
}

// One kernel launch of the old layout: a cudaLaunchKernel call (name id
// 2) at `l` and its kernel (name id 1) 500 ns later, on stream 7.
void AddLaunchedKernel(ExportBuilder* b, int64_t l,
                       int64_t corr, const std::string& gp,
                       const std::string& tid) {
  b->Exec(Insert("CUPTI_ACTIVITY_KIND_RUNTIME",
                 "(" + std::to_string(l) + "," + std::to_string(l + 100) +
                     ",0," + tid + "," + std::to_string(corr) + ",2,0)"));
  b->Exec(Insert("CUPTI_ACTIVITY_KIND_KERNEL",
                 "(" + std::to_string(l + 500) + "," +
                     std::to_string(l + 1500) + ",0,1,7," +
                     std::to_string(corr) + "," + gp +
                     ",1,1,0,0,16,1,1,1,32,1,1,0,0,0,0,1,NULL)"));
}

// A long export is stored in windows (the session never holds it whole),
// and every kernel still meets its launch and its range.
TEST(NsysVersionsTest, LongExportIsStoredInWindows) {
  TempDir dir("nsys");
  const std::string file = dir.File("long.sqlite");
  constexpr int kSteps = 3000, kPerStep = 4;
  {
    ExportBuilder b(file);
    b.Exec(test_support::kOldLayout);
    b.Exec(Insert("StringIds", "(1,'k'),(2,'cudaLaunchKernel_v7000')"));
    const std::string gp = std::to_string(GlobalPid(7));
    const std::string tid = std::to_string(GlobalTid(7, 7));
    for (int s = 0; s < kSteps; ++s) {
      const int64_t t0 = int64_t{s} * 100000;
      b.Exec(Insert("NVTX_EVENTS", "(" + std::to_string(t0) + "," +
                                       std::to_string(t0 + 90000) +
                                       ",59,NULL,NULL,NULL,'step "
                                       "'," +
                                       tid + ",NULL)"));
      for (int i = 0; i < kPerStep; ++i) {
        const int64_t corr = int64_t{s} * kPerStep + i + 1;
        const int64_t l = t0 + 1000 + i * 2000;
        AddLaunchedKernel(&b, l, corr, gp, tid);
      }
    }
    ASSERT_EQ(b.first_error(), "");
  }
  const std::string store = dir.File("runs.sqlite");
  SourceOptions o;
  o.flush_records = 4096;
  auto result = Import(file, store, o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, uint64_t{kSteps * kPerStep});
  StoreQuery q(store);
  EXPECT_GT(Stat(q, "windows_stored"), 3);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE api_start_ns = start_ns "
                  "- 500 AND nvtx_path = 'step '"),
            kSteps * kPerStep);
  EXPECT_EQ(q.Int("SELECT count(*) FROM nvtx_ranges"), kSteps);
  EXPECT_EQ(q.Int("SELECT count(*) FROM steps"), kSteps);
  EXPECT_EQ(Stat(q, "unmatched_kernel"), 0);
  EXPECT_EQ(Stat(q, "unmatched_launch"), 0);
}

// An export of a program run under torch's NVTX emission with shapes
// (nsys --pytorch=autograd-shapes-nvtx): each kernel is costed from the
// operator range around its launch, its type from the kernel's name, as
// the live ops route costs it; a session stored in windows is held whole
// for it, so no operator misses its kernel.
TEST(NsysVersionsTest, TorchNvtxShapeRangesCostTheirKernels) {
  TempDir dir("nsys");
  const std::string file = dir.File("shapes.sqlite");
  constexpr int kSteps = 1500;
  {
    ExportBuilder b(file);
    b.Exec(test_support::kOldLayout);
    b.Exec(Insert("StringIds",
                  "(1,'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn'),"
                  "(2,'cudaLaunchKernel_v7000')"));
    const std::string gp = std::to_string(GlobalPid(7));
    const std::string tid = std::to_string(GlobalTid(7, 7));
    for (int s = 0; s < kSteps; ++s) {
      const int64_t t0 = int64_t{s} * 100000;
      b.Exec(Insert("NVTX_EVENTS",
                    "(" + std::to_string(t0) + "," +
                        std::to_string(t0 + 90000) +
                        ",59,NULL,NULL,NULL,'aten::addmm, seq = " +
                        std::to_string(s) + ", op_id = " +
                        std::to_string(s + 1) +
                        ", sizes = [[2816], [16, 1024], [1024, 2816], [], "
                        "[]], input_op_ids = [(1, 0)]'," +
                        tid + ",NULL)"));
      const int64_t corr = s + 1;
      const int64_t l = t0 + 1000;
      AddLaunchedKernel(&b, l, corr, gp, tid);
    }
    ASSERT_EQ(b.first_error(), "");
  }
  const std::string store = dir.File("runs.sqlite");
  SourceOptions o;
  o.flush_records = 4096;
  auto result = Import(file, store, o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kernels, uint64_t{kSteps});
  StoreQuery q(store);
  // addmm(bias, x[16,1024], w[1024,2816]) in bf16: 2 M N K + M N.
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE op = 'aten::addmm' "
                  "AND flops = 2 * 16 * 1024 * 2816 + 16 * 2816 AND "
                  "precision = 'bf16_tc' AND flops_source = 'analytic'"),
            kSteps)
      << q.Text("SELECT op || ' ' || ifnull(flops, '-') || ' ' || "
                "ifnull(precision, '-') FROM kernels LIMIT 1");
  EXPECT_EQ(Stat(q, "ops_received"), kSteps);
  EXPECT_EQ(Stat(q, "kernels_from_ops"), kSteps);
}

// Tables read on threads of their own or on the reading thread: the same
// rows, the same order (the old export has an unsorted table, the long one
// several windows).
TEST(NsysVersionsTest, ThreadedAndInlineReadsStoreTheSameRows) {
  TempDir dir("nsys");
  const std::string file = dir.File("old.sqlite");
  BuildOldExport(file);
  const std::string rows =
      "SELECT group_concat(session_id || ':' || correlation_id || ':' || "
      "start_ns || ':' || ifnull(api_start_ns, '') || ':' || ifnull(nvtx_path, "
      "'') || ':' || step_id, ' ') FROM (SELECT * FROM kernels ORDER BY "
      "kernel_id)";
  const std::string ranges =
      "SELECT group_concat(name || ':' || ifnull(path, '') || ':' || end_ns, "
      "' ') FROM (SELECT * FROM nvtx_ranges ORDER BY rowid)";
  std::string seen[2][2];
  const bool default_threads = nsys::TableThreads();
  for (int threaded = 0; threaded < 2; ++threaded) {
    nsys::SetTableThreads(threaded == 1);
    const std::string store =
        dir.File("runs" + std::to_string(threaded) + ".sqlite");
    auto result = Import(file, store);
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(result->kernels, 6u);
    StoreQuery q(store);
    seen[threaded][0] = q.Text(rows);
    seen[threaded][1] = q.Text(ranges);
  }
  nsys::SetTableThreads(default_threads);
  EXPECT_EQ(seen[0][0], seen[1][0]);
  EXPECT_EQ(seen[0][1], seen[1][1]);
  EXPECT_NE(seen[0][0].find("1:2:2200:2100:step 0:"), std::string::npos)
      << seen[0][0];
}

void ExpectDamagedReadKept(const std::string& file, const std::string& store,
                           int kKernels);

// A page of the kernel table damaged half-way through a long export: the
// rows before it are stored, the run is marked incomplete, and the warning
// says where the file broke and what to do.
TEST(NsysVersionsTest, DamagePartWayKeepsWhatWasRead) {
  TempDir dir("nsys");
  const std::string file = dir.File("long.sqlite");
  constexpr int kKernels = 20000;
  {
    ExportBuilder b(file);
    b.Exec(test_support::kOldLayout);
    b.Exec(Insert("StringIds", "(1,'k'),(2,'cudaLaunchKernel_v7000')"));
    b.Exec(
        "INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (1, 0, "
        "'NVIDIA H100 PCIe')");
    const std::string gp = std::to_string(GlobalPid(7));
    const std::string tid = std::to_string(GlobalTid(7, 7));
    for (int i = 0; i < kKernels; ++i) {
      const std::string t = std::to_string(int64_t{i} * 10000);
      const std::string c = std::to_string(i + 1);
      b.Exec(Insert("CUPTI_ACTIVITY_KIND_RUNTIME",
                    "(" + t + "," + t + "+100,0," + tid + "," + c + ",2,0)"));
      b.Exec(Insert("CUPTI_ACTIVITY_KIND_KERNEL",
                    "(" + t + "+500," + t + "+1500,0,1,7," + c + "," + gp +
                        ",1,1,0,0,16,1,1,1,32,1,1,0,0,0,0,1,NULL)"));
    }
    ASSERT_EQ(b.first_error(), "");
  }
  // The middle leaf page of the kernel table.
  int64_t page = 0, page_size = 0;
  {
    StoreQuery q(file);
    page_size = q.Int("PRAGMA page_size");
    const int64_t leaves = q.Int(
        "SELECT count(*) FROM dbstat WHERE name = "
        "'CUPTI_ACTIVITY_KIND_KERNEL' AND pagetype = 'leaf'");
    if (leaves < 0) GTEST_SKIP() << "this SQLite has no dbstat table";
    ASSERT_GT(leaves, 10);
    page = q.Int(
        "SELECT pageno FROM dbstat WHERE name = "
        "'CUPTI_ACTIVITY_KIND_KERNEL' AND pagetype = 'leaf' ORDER BY "
        "path LIMIT 1 OFFSET " +
        std::to_string(leaves / 2));
  }
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((page - 1) * page_size + 8);
    const std::string noise(static_cast<size_t>(page_size - 8), '\x5a');
    f.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  // Read with each table on a thread of its own, then inline.
  const bool default_threads = nsys::TableThreads();
  for (int threaded = 1; threaded >= 0; --threaded) {
    SCOPED_TRACE(threaded ? "threaded" : "inline");
    nsys::SetTableThreads(threaded == 1);
    ExpectDamagedReadKept(
        file, dir.File("runs" + std::to_string(threaded) + ".sqlite"),
        kKernels);
  }
  nsys::SetTableThreads(default_threads);
}

void ExpectDamagedReadKept(const std::string& file, const std::string& store,
                           int kKernels) {
  SourceOptions o;
  o.flush_records = 4096;
  auto result = Import(file, store, o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_GT(result->kernels, uint64_t(kKernels / 4));
  EXPECT_LT(result->kernels, uint64_t(kKernels * 3 / 4));
  EXPECT_EQ(result->warning,
            file +
                ": the SQLite file is damaged while reading rows "
                "(database disk image is malformed); export it again with "
                "`nsys export --type sqlite REPORT.nsys-rep`; the rows "
                "before it were read (" +
                std::to_string(result->kernels) + " kernels)");
  StoreQuery q(store);
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels"),
            static_cast<int64_t>(result->kernels));
  EXPECT_EQ(q.Int("SELECT max(correlation_id) FROM kernels"),
            static_cast<int64_t>(result->kernels));
  EXPECT_EQ(q.Int("SELECT complete FROM runs"), 0);
  EXPECT_EQ(Stat(q, "sessions_incomplete"), 1);
}

// --counters as the registry hands them to the source (SourceOptions::
// counters): samples in file order matched to the timeline's kernels by
// name.
std::shared_ptr<const CounterFile> FakeCounters() {
  auto file = std::make_shared<CounterFile>();
  file->path = "fake.csv";
  file->window.launch_skip = 1;
  for (const char* name :
       {"kernel(float*)", "late_kernel", "graph_k2", "no_such_kernel"}) {
    CounterSample s;
    s.kernel_name = name;
    s.values.dram_read_bytes = 1000;
    s.values.dram_write_bytes = 24;
    s.values.flops[static_cast<int>(Precision::kFp32)] = 4096;
    s.values.has_flops = true;
    file->samples.push_back(s);
  }
  return file;
}

TEST(NsysVersionsTest, CountersAttachedByNameAndOccurrence) {
  TempDir dir("nsys");
  const std::string file = dir.File("old.sqlite");
  BuildOldExport(file);
  SourceOptions o;
  o.counters_path = "fake.csv";
  o.counters = FakeCounters();
  o.pid = 100;
  const std::string store = dir.File("runs.sqlite");
  auto result = Import(file, store, o);
  ASSERT_TRUE(result.ok()) << result.status().message();
  // Launch order of pid 100: kernel(float*), gemm_tn, graph_k1, graph_k2,
  // late_kernel. --launch-skip 1 leaves no kernel(float*) to match; the
  // graph's kernels share a correlation id (no counters for either); the
  // last name is in no timeline.
  StoreQuery q(store);
  EXPECT_EQ(q.Text("SELECT group_concat(name || ':' || flops_source || ':' || "
                   "dram_bytes || ':' || flops_fp32 || ':' || bytes_source, "
                   "' ') FROM kernels WHERE flops_source != 'none'"),
            "late_kernel:counters:1024:4096:counters");
  EXPECT_EQ(Stat(q, "received_counters"), 1);
  EXPECT_EQ(Stat(q, "unmatched_counters"), 3);
  EXPECT_NE(result->warning.find(
                "fake.csv: 1 of 4 counter samples matched a kernel; 1 names "
                "no kernel of the timeline (first: 'no_such_kernel'); 1 "
                "measured more launches than the timeline holds; 1 measured "
                "a kernel of a CUDA graph launch"),
            std::string::npos)
      << result->warning;
}

// ------------------------------------------------------------ bad input

TEST(NsysBadInputTest, NotAnExportOrNoCudaTables) {
  TempDir dir("nsys");
  // An SQLite file of another program.
  const std::string other = dir.File("other.sqlite");
  {
    ExportBuilder b(other);
    b.Exec(
        "CREATE TABLE StringIds (id INTEGER, value TEXT);"
        "CREATE TABLE notes (body TEXT)");
  }
  EXPECT_FALSE(nsys::LooksLikeNsysExport(other));
  Status s = nsys::CheckNsysExport(other, {});
  EXPECT_EQ(s.message(),
            other +
                ": an SQLite file, but not an Nsight Systems export (no "
                "StringIds / CUPTI_ACTIVITY_KIND_* / NVTX_EVENTS tables); "
                "export a report with `nsys export --type sqlite "
                "REPORT.nsys-rep`");
  // An nsys export recorded without CUDA tracing.
  const std::string nvtx_only = dir.File("nvtx_only.sqlite");
  {
    ExportBuilder b(nvtx_only);
    b.Exec(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType "
        "INTEGER, text TEXT, globalTid INTEGER);"
        "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);");
  }
  EXPECT_TRUE(nsys::LooksLikeNsysExport(nvtx_only));
  s = nsys::CheckNsysExport(nvtx_only, {});
  EXPECT_EQ(s.message(),
            nvtx_only +
                ": this Nsight Systems export has no CUDA activity (no "
                "CUPTI_ACTIVITY_KIND_KERNEL, _RUNTIME, _MEMCPY or _MEMSET "
                "table); record CUDA with `nsys profile --trace=cuda,nvtx -o "
                "report APP` and export it with `nsys export --type sqlite "
                "report.nsys-rep`");
  // Not SQLite at all.
  const std::string text = dir.File("notes.txt");
  std::ofstream(text) << "not a database\n";
  s = nsys::CheckNsysExport(text, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(text + ": not an SQLite file"), std::string::npos)
      << s.message();
}


// #29 D5: an export whose CUPTI_ACTIVITY_KIND_KERNEL is a recursive VIEW
// (its rows never end) is refused at once, naming the view: only tables
// are read (sqlite_master's type), never views. It used to be read
// forever (14.6 GB after 60 s).
TEST(NsysBadInputTest, ViewInPlaceOfATableIsRefused) {
  TempDir dir("nsys");
  const std::string file = dir.File("view.sqlite");
  BuildOldExport(file);
  {
    ExportBuilder b(file, /*replace=*/false);
    b.Exec(
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO kernels_once;"
        "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS "
        "WITH RECURSIVE forever(n) AS (SELECT 1 UNION ALL "
        "SELECT n + 1 FROM forever) "
        "SELECT k.* FROM forever, kernels_once k");
  }
  auto r = Import(file, dir.File("store.sqlite"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(
                "CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find(file), std::string::npos);
}

}  // namespace
}  // namespace rooftrace
