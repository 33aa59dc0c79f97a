// Builds Nsight Systems SQLite exports for tests from DDL written here, in
// the layouts of nsys versions other than the recorded file's (2022.2,
// schema 2.9.1):
//  - kOldLayout: an early export (schema 2.0): no mangledName, graphNodeId
//    or callchainId; NVTX text only inline (no textId, no domainId);
//    TARGET_INFO_GPU without cuDevice; no TARGET_INFO_CUDA_DEVICE;
//    EXPORT_META_DATA.
//  - kNewLayout: a recent export (schema 3.x, the 2025-2026 reference):
//    greenContextId shifts every column after contextId; graphId and
//    cluster sizes; NVTX registered strings (textId) and domains;
//    TARGET_INFO_CUDA_DEVICE maps a process's CUDA device ids to GPUs;
//    META_DATA_EXPORT.
// Not thread-safe; one per test.
#ifndef ROOFTRACE_TESTS_SOURCES_NSYS_EXPORT_BUILDER_H_
#define ROOFTRACE_TESTS_SOURCES_NSYS_EXPORT_BUILDER_H_

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace rooftrace::test_support {

inline constexpr char kOldLayout[] = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_VERSION', '2020.3.1.72'),
  ('EXPORT_SCHEMA_VERSION', '2.0.1');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL,
  name TEXT, busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER,
  totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER,
  globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
  launchType INTEGER, cacheConfig INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
  blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL,
  end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,
  srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER,
  dstDeviceId INTEGER, dstContextId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER,
  eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER);
)sql";

inline constexpr char kNewLayout[] = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2026.4.1'),
  ('EXPORT_SCHEMA_VERSION', '3.28.1');
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER,
  devStateName TEXT NOT NULL, name TEXT NOT NULL, nameEnum INTEGER NOT NULL,
  value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER,
  utcTime TEXT, localTime TEXT, systemClockNs INTEGER,
  sessionStartCntVctNs INTEGER);
CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL,
  duration INTEGER NOT NULL, startTime INTEGER NOT NULL,
  stopTime INTEGER NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL,
  name TEXT, busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER,
  totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT,
  cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER,
  numaNodeId INTEGER);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER NOT NULL,
  pid INTEGER NOT NULL, uuid TEXT, numMultiprocessors INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
  srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,
  dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER,
  virtualAddress INTEGER, copyCount INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
  graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,
  cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
  sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER,
  qmdPreexitDone INTEGER, qmdLastCtaDone INTEGER, graphId INTEGER,
  clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER,
  clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER,
  maxActiveClusters INTEGER, sharedMemoryRequestedPercentage INTEGER,
  tensorSizeMinusOneElements TEXT NOT NULL DEFAULT '');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL,
  end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER,
  eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
  textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
  doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL,
  jsonTextId INTEGER, jsonText TEXT, binaryData BLOB, eventId INTEGER);
)sql";

// nsys's serialized ids: (vm << 48) | (pid << 24) | tid.
inline constexpr int64_t GlobalPid(int64_t pid, int64_t vm = 1) {
  return (vm << 48) | (pid << 24);
}
inline constexpr int64_t GlobalTid(int64_t pid, int64_t tid, int64_t vm = 1) {
  return GlobalPid(pid, vm) | tid;
}

// An SQLite file at `path` holding what Exec() is given.
class ExportBuilder {
 public:
  // `replace`: start from an empty file; else add to the one at `path`.
  explicit ExportBuilder(const std::string& path, bool replace = true)
      : path_(path) {
    if (replace) std::filesystem::remove(path);
    sqlite3_open(path.c_str(), &db_);
    Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN");
  }
  ~ExportBuilder() { Close(); }
  ExportBuilder(const ExportBuilder&) = delete;
  ExportBuilder& operator=(const ExportBuilder&) = delete;

  // Runs `sql`; the error message, empty on success.
  std::string Exec(const std::string& sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    std::string message = rc == SQLITE_OK ? "" : (err ? err : "sql failed");
    sqlite3_free(err);
    if (!message.empty() && first_error_.empty()) first_error_ = message;
    return message;
  }
  // The first error any Exec() met (a test asserts it is empty).
  const std::string& first_error() const { return first_error_; }

  void Close() {
    if (db_ == nullptr) return;
    Exec("COMMIT");
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  std::string first_error_;
};

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SOURCES_NSYS_EXPORT_BUILDER_H_
