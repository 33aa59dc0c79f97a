#include "sources/nsys/nsys_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/command_name.h"
#include "proto/field_numbers.h"
#include "sources/nsys/cuda_api_names.h"
#include "sources/nsys/sqlite_file.h"
#include "sources/nsys/table_stream.h"

namespace rooftrace::nsys {
namespace {

namespace en = wire::enums;

// ---------------------------------------------------------------- names

constexpr char kKernelTable[] = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr char kRuntimeTable[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr char kMemcpyTable[] = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr char kMemsetTable[] = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr char kNvtxTable[] = "NVTX_EVENTS";
constexpr char kStringTable[] = "StringIds";

// NVTX_EVENTS.eventType values (nsys "NVTX Event Type Values").
constexpr int64_t kNvtxMark = 34;
constexpr int64_t kNvtxThreadName = 39;
constexpr int64_t kNvtxPushPop = 59;
constexpr int64_t kNvtxStartEnd = 60;
constexpr int64_t kNvtxDomainCreate = 75;

// CUPTI_ACTIVITY_KIND_RUNTIME.eventClass of the rows nsys adds for calls
// it took a backtrace of (TRACE_PROCESS_EVENT_CUDABACKTRACE): a second row
// for the same call and correlation id.
constexpr int64_t kEventClassBacktrace = 67;

// Schema majors of the exports this reader was written and tested against:
// 2 (the recorded nsys 2022.2 export: 2.9.1; tests build a 2.0 layout) and
// 3 (nsys's published reference: 3.28).
constexpr int kKnownSchemaMajors[] = {2, 3};

// Interned-string ids of a session: StringIds ids as they are; NVTX text
// written inline and NVTX domain names in ranges of their own above them.
constexpr uint64_t kInlineTextBase = uint64_t{1} << 40;
constexpr uint64_t kDomainBase = uint64_t{1} << 41;

uint64_t GlobalPidOfTid(uint64_t global_tid) {
  return global_tid & ~uint64_t{0xFFFFFF};
}
uint32_t PidOf(uint64_t global_pid) {
  return static_cast<uint32_t>((global_pid >> 24) & 0xFFFFFF);
}
uint32_t TidOf(uint64_t global_tid) {
  return static_cast<uint32_t>(global_tid & 0xFFFFFF);
}
uint64_t U64(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }
uint32_t U32(int64_t v) {
  return v > 0 ? static_cast<uint32_t>(std::min<int64_t>(v, 0xFFFFFFFF)) : 0;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

// CUDA_MEMCPY_KIND (nsys; the values of CUPTI's CUpti_ActivityMemcpyKind,
// plus 11-13 for unified-memory migrations) -> wire::CopyKind.
int32_t CopyKindOf(int64_t k) {
  switch (k) {
    case 1:   // HTOD
    case 3:   // HTOA
    case 11:  // UVM_HTOD
      return en::kCopyHtoD;
    case 2:   // DTOH
    case 4:   // ATOH
    case 12:  // UVM_DTOH
      return en::kCopyDtoH;
    case 5:   // ATOA
    case 6:   // ATOD
    case 7:   // DTOA
    case 8:   // DTOD
    case 13:  // UVM_DTOD
      return en::kCopyDtoD;
    case 9:
      return en::kCopyHtoH;
    case 10:
      return en::kCopyPtoP;
    default:
      return en::kCopyUnknown;
  }
}

// CUDA_MEMOPR_MEMORY_KIND (nsys: 0 pageable, 1 pinned, 2 device, 3 array,
// 4 managed, 5 device static, 6 managed static, 7 unknown) ->
// wire::MemoryKind. nsys counts from 0 where CUPTI counts from 1.
int32_t MemoryKindOf(const RowView& s, int column) {
  if (s.IsNull(column)) return en::kMemoryUnknown;
  switch (s.Int(column)) {
    case 0:
      return en::kMemoryPageable;
    case 1:
      return en::kMemoryPinned;
    case 2:
    case 5:
      return en::kMemoryDevice;
    case 3:
      return en::kMemoryArray;
    case 4:
    case 6:
      return en::kMemoryManaged;
    default:
      return en::kMemoryUnknown;
  }
}

// "MPI Rank 3" -> 3: the name nsys gives a rank's thread when it traces MPI.
std::optional<int64_t> RankOfThreadName(std::string_view name) {
  constexpr std::string_view kPrefix = "MPI Rank ";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  int64_t rank = 0;
  const auto [end, ec] =
      std::from_chars(name.data(), name.data() + name.size(), rank);
  if (ec != std::errc() || end != name.data() + name.size()) {
    return std::nullopt;
  }
  return rank;
}

// ---------------------------------------------------------------- schema

// A table's columns, looked up by name.
struct Layout {
  bool present = false;
  std::set<std::string> columns;
  bool Has(const std::string& c) const { return columns.count(c) != 0; }
};

// A SELECT of named columns in a fixed order, NULL for each column the
// table lacks, so that column i of the result is always wanted[i].
std::string SelectList(const Layout& layout,
                       const std::vector<std::string>& wanted) {
  std::string sql;
  for (const std::string& c : wanted) {
    if (!sql.empty()) sql += ", ";
    sql += layout.Has(c) ? QuoteIdentifier(c) : std::string("NULL");
  }
  return sql;
}

// What one export holds, read before any row is: tables, version,
// processes and their ranks, GPUs, host.
struct GpuRow {
  int64_t id = 0;
  std::optional<int64_t> cu_device;
  DeviceInfo info;
};
struct CudaDeviceRow {
  int64_t gpu_id = 0, cuda_id = 0, pid = 0;
};
struct ProcessInfo {
  std::string name;
  std::optional<int64_t> rank;
};

struct ExportInfo {
  std::unique_ptr<SqliteFile> db;
  std::map<std::string, Layout> layouts;  // the tables read
  std::set<std::string> tables;
  std::string schema_version, product_version;
  int schema_major = -1;
  std::unordered_map<uint64_t, ProcessInfo> processes;  // by globalPid
  std::vector<GpuRow> gpus;
  std::vector<CudaDeviceRow> cuda_devices;
  bool has_cuda_device_table = false;
  std::string host, driver_version;
  uint64_t start_unix_ns = 0;
  uint64_t stop_ns = 0;  // end of the capture; 0: unknown
  // globalPids --pid / --rank keep; empty with `filtered`: none.
  bool filtered = false;
  std::set<uint64_t> selected;
  std::vector<std::string> notes;  // for SourceResult::warning

  const Layout& layout(const std::string& t) const {
    static const Layout kAbsent;
    auto it = layouts.find(t);
    return it == layouts.end() ? kAbsent : it->second;
  }
  bool Selected(uint64_t global_pid) const {
    return !filtered || selected.count(global_pid) != 0;
  }
};

bool HasAnyCuptiTable(const std::set<std::string>& tables) {
  for (const char* t :
       {kKernelTable, kRuntimeTable, kMemcpyTable, kMemsetTable}) {
    if (tables.count(t)) return true;
  }
  return false;
}

bool LooksLikeNsysTables(const std::set<std::string>& tables) {
  if (tables.count("schema_info")) return false;  // a rooftrace store
  if (!tables.count(kStringTable)) return false;
  for (const std::string& t : tables) {
    if (t.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0 ||
        t.rfind("TARGET_INFO_", 0) == 0 || t == kNvtxTable ||
        t == "EXPORT_META_DATA" || t == "META_DATA_EXPORT") {
      return true;
    }
  }
  return false;
}

// One value of a small key/value table; empty when absent.
StatusOr<std::map<std::string, std::string>> ReadKeyValues(
    const SqliteFile& db, const std::string& table, const std::string& key,
    const std::string& value) {
  std::map<std::string, std::string> out;
  RT_ASSIGN_OR_RETURN(
      Statement s,
      db.Prepare("SELECT " + QuoteIdentifier(key) + ", " +
                 QuoteIdentifier(value) + " FROM " + QuoteIdentifier(table)));
  for (;;) {
    RT_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.emplace(std::string(s.Text(0)), std::string(s.Text(1)));
  }
  return out;
}

Status LoadLayout(ExportInfo* info, const std::string& table) {
  Layout& l = info->layouts[table];
  if (!info->tables.count(table)) return OkStatus();
  RT_ASSIGN_OR_RETURN(const std::vector<std::string> cols,
                      info->db->Columns(table));
  l.present = true;
  l.columns.insert(cols.begin(), cols.end());
  return OkStatus();
}

Status ReadVersion(ExportInfo* info) {
  for (const char* table : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    if (!info->tables.count(table)) continue;
    RT_ASSIGN_OR_RETURN(auto kv,
                        ReadKeyValues(*info->db, table, "name", "value"));
    info->schema_version = kv["EXPORT_SCHEMA_VERSION"];
    info->product_version = kv["EXPORT_PRODUCT_VERSION"];
    break;
  }
  const std::string& v = info->schema_version;
  int major = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), major);
  if (ec == std::errc() && end != v.data()) info->schema_major = major;
  bool known = false;
  for (int m : kKnownSchemaMajors) known |= m == info->schema_major;
  if (!known) {
    info->notes.push_back(
        (v.empty() ? std::string("the export does not say its schema version")
                   : "export schema version " + v) +
        " is not one rooftrace was tested with (2.x, 3.x): read what the "
        "columns allowed");
  }
  return OkStatus();
}

Status ReadProcesses(ExportInfo* info, bool need_ranks) {
  const SqliteFile& db = *info->db;
  if (info->tables.count("PROCESSES")) {
    RT_ASSIGN_OR_RETURN(const std::vector<std::string> cols,
                        db.Columns("PROCESSES"));
    const bool has_name =
        std::find(cols.begin(), cols.end(), "name") != cols.end();
    if (std::find(cols.begin(), cols.end(), "globalPid") != cols.end()) {
      RT_ASSIGN_OR_RETURN(
          Statement s,
          db.Prepare(std::string("SELECT globalPid, ") +
                     (has_name ? "name" : "NULL") + " FROM PROCESSES"));
      for (;;) {
        RT_ASSIGN_OR_RETURN(const bool row, s.Step());
        if (!row) break;
        info->processes[U64(s.Int(0))].name = std::string(s.Text(1));
      }
    }
  }
  // Ranks: the thread name nsys gives each MPI rank's thread.
  auto note_rank = [&](uint64_t global_tid, std::string_view name) {
    if (auto r = RankOfThreadName(name)) {
      info->processes[GlobalPidOfTid(global_tid)].rank = *r;
    }
  };
  bool any_rank = false;
  if (info->tables.count("ThreadNames")) {
    RT_ASSIGN_OR_RETURN(
        Statement s,
        db.Prepare("SELECT t.globalTid, s.value FROM ThreadNames t JOIN "
                   "StringIds s ON s.id = t.nameId WHERE s.value LIKE "
                   "'MPI Rank %'"));
    for (;;) {
      RT_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      note_rank(U64(s.Int(0)), s.Text(1));
      any_rank = true;
    }
  }
  const Layout& nvtx = info->layout(kNvtxTable);
  if (need_ranks && !any_rank && nvtx.Has("eventType") && nvtx.Has("text") &&
      nvtx.Has("globalTid")) {
    RT_ASSIGN_OR_RETURN(
        Statement s,
        db.Prepare("SELECT globalTid, text FROM NVTX_EVENTS WHERE eventType "
                   "= " +
                   std::to_string(kNvtxThreadName) +
                   " AND text LIKE 'MPI Rank %'"));
    for (;;) {
      RT_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      note_rank(U64(s.Int(0)), s.Text(1));
    }
  }
  return OkStatus();
}

// `expr` over `table`'s first row into `*out`, when the export has the
// table and its `column` (nsys versions differ); left as it is otherwise.
Status ReadScalar(const ExportInfo& info, const char* table,
                  const char* column, const char* expr, uint64_t* out) {
  if (!info.tables.count(table)) return OkStatus();
  RT_ASSIGN_OR_RETURN(const std::vector<std::string> cols,
                      info.db->Columns(table));
  if (std::find(cols.begin(), cols.end(), column) == cols.end()) {
    return OkStatus();
  }
  RT_ASSIGN_OR_RETURN(Statement s, info.db->Prepare(
                                       std::string("SELECT ") + expr +
                                       " FROM " + table));
  RT_ASSIGN_OR_RETURN(const bool row, s.Step());
  if (row) *out = U64(s.Int(0));
  return OkStatus();
}

Status ReadTargetInfo(ExportInfo* info) {
  const SqliteFile& db = *info->db;
  if (info->tables.count("TARGET_INFO_SYSTEM_ENV")) {
    RT_ASSIGN_OR_RETURN(
        auto kv, ReadKeyValues(db, "TARGET_INFO_SYSTEM_ENV", "name", "value"));
    info->host = kv["Hostname"];
    info->driver_version = kv["CudaDriverVersion"];
  }
  RT_RETURN_IF_ERROR(ReadScalar(*info, "TARGET_INFO_SESSION_START_TIME",
                                "utcEpochNs", "utcEpochNs",
                                &info->start_unix_ns));
  RT_RETURN_IF_ERROR(ReadScalar(*info, "ANALYSIS_DETAILS", "stopTime",
                                "max(stopTime)", &info->stop_ns));
  RT_RETURN_IF_ERROR(LoadLayout(info, "TARGET_INFO_GPU"));
  const Layout& gpu = info->layout("TARGET_INFO_GPU");
  if (gpu.present) {
    const std::vector<std::string> cols = {
        "id",          "name",         "uuid",         "chipName",
        "smCount",     "computeMajor", "computeMinor", "clockRate",
        "l2CacheSize", "totalMemory",  "cuDevice"};
    RT_ASSIGN_OR_RETURN(Statement s,
                        db.Prepare("SELECT " + SelectList(gpu, cols) +
                                   " FROM TARGET_INFO_GPU"));
    for (;;) {
      RT_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      GpuRow g;
      g.id = s.Int(0);
      g.info.name = std::string(s.Text(1));
      g.info.uuid = std::string(s.Text(2));
      g.info.chip_name = std::string(s.Text(3));
      g.info.sm_count = U32(s.Int(4));
      g.info.cc_major = U32(s.Int(5));
      g.info.cc_minor = U32(s.Int(6));
      g.info.core_clock_khz = U64(s.Int(7)) / 1000;  // Hz
      g.info.l2_cache_bytes = U64(s.Int(8));
      g.info.global_memory_bytes = U64(s.Int(9));
      if (!s.IsNull(10)) g.cu_device = s.Int(10);
      g.info.driver_version = info->driver_version;
      info->gpus.push_back(std::move(g));
    }
  }
  RT_RETURN_IF_ERROR(LoadLayout(info, "TARGET_INFO_CUDA_DEVICE"));
  const Layout& cd = info->layout("TARGET_INFO_CUDA_DEVICE");
  if (cd.present && cd.Has("cudaId") && cd.Has("gpuId") && cd.Has("pid")) {
    info->has_cuda_device_table = true;
    RT_ASSIGN_OR_RETURN(
        Statement s,
        db.Prepare("SELECT gpuId, cudaId, pid FROM TARGET_INFO_CUDA_DEVICE"));
    for (;;) {
      RT_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      info->cuda_devices.push_back({s.Int(0), s.Int(1), s.Int(2)});
    }
  }
  if (info->gpus.empty()) {
    info->notes.push_back(
        "no GPU description (TARGET_INFO_GPU): the run has no datasheet "
        "roofs; name the GPU with --device KEY (rooftrace devices lists them)");
  }
  return OkStatus();
}

// The GPUs a process ran on, with the device ids its kernels carry.
std::vector<DeviceInfo> DevicesOf(const ExportInfo& info, uint32_t pid,
                                  const std::string& device_key) {
  std::vector<DeviceInfo> out;
  auto add = [&](const GpuRow& g, int64_t device_id) {
    DeviceInfo d = g.info;
    d.device_id = U32(device_id);
    if (!device_key.empty()) d.name = device_key;
    out.push_back(std::move(d));
  };
  if (info.has_cuda_device_table) {
    for (const CudaDeviceRow& c : info.cuda_devices) {
      if (c.pid != static_cast<int64_t>(pid)) continue;
      for (const GpuRow& g : info.gpus) {
        if (g.id == c.gpu_id) add(g, c.cuda_id);
      }
    }
  }
  if (out.empty()) {
    for (const GpuRow& g : info.gpus) add(g, g.cu_device.value_or(g.id));
  }
  if (out.empty() && !device_key.empty()) {
    DeviceInfo d;
    d.name = device_key;
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.device_id < b.device_id;
  });
  return out;
}

// Whether a process with `global_pid` has a row in a CUDA table.
StatusOr<bool> HasCudaRows(const ExportInfo& info, uint64_t global_pid) {
  for (const char* t : {kKernelTable, kMemcpyTable, kMemsetTable}) {
    if (!info.layout(t).Has("globalPid")) continue;
    RT_ASSIGN_OR_RETURN(Statement s,
                        info.db->Prepare(std::string("SELECT 1 FROM ") + t +
                                         " WHERE globalPid = ? LIMIT 1"));
    s.Bind(1, static_cast<int64_t>(global_pid));
    RT_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (row) return true;
  }
  return false;
}

// "1230493 (rank 0), 1230494 (rank 1)": the processes with kernels.
StatusOr<std::string> ProcessList(const ExportInfo& info) {
  std::vector<std::string> items;
  if (info.layout(kKernelTable).Has("globalPid")) {
    RT_ASSIGN_OR_RETURN(
        Statement s,
        info.db->Prepare("SELECT DISTINCT globalPid FROM "
                         "CUPTI_ACTIVITY_KIND_KERNEL ORDER BY globalPid"));
    for (;;) {
      RT_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      const uint64_t gp = U64(s.Int(0));
      std::string item = std::to_string(PidOf(gp));
      auto it = info.processes.find(gp);
      if (it != info.processes.end() && it->second.rank) {
        item += " (rank " + std::to_string(*it->second.rank) + ")";
      }
      items.push_back(std::move(item));
    }
  }
  return items.empty() ? std::string("none") : Join(items, ", ");
}

Status SelectProcesses(ExportInfo* info, const SourceOptions& options) {
  if (!options.pid && !options.rank) return OkStatus();
  info->filtered = true;
  for (const auto& [gp, p] : info->processes) {
    if (options.pid && PidOf(gp) != *options.pid) continue;
    if (options.rank && (!p.rank || *p.rank != *options.rank)) continue;
    RT_ASSIGN_OR_RETURN(const bool cuda, HasCudaRows(*info, gp));
    if (cuda) info->selected.insert(gp);
  }
  if (options.pid && !options.rank && info->selected.empty() &&
      !info->tables.count("PROCESSES")) {
    // No process table: look for the pid in the CUDA tables themselves.
    const uint64_t gp = static_cast<uint64_t>(*options.pid) << 24;
    for (uint64_t vm = 0; vm < 16 && info->selected.empty(); ++vm) {
      RT_ASSIGN_OR_RETURN(const bool cuda, HasCudaRows(*info, (vm << 48) | gp));
      if (cuda) info->selected.insert((vm << 48) | gp);
    }
  }
  if (!info->selected.empty()) return OkStatus();
  const std::string& path = info->db->path();
  RT_ASSIGN_OR_RETURN(const std::string list, ProcessList(*info));
  std::string what;
  if (options.pid) what = "pid " + std::to_string(*options.pid);
  if (options.rank) {
    if (!what.empty()) what += " and ";
    what += "MPI rank " + std::to_string(*options.rank);
  }
  bool any_rank = false;
  for (const auto& [gp, p] : info->processes) any_rank |= p.rank.has_value();
  std::string fix = "processes with CUDA kernels: " + list;
  if (options.rank && !any_rank) {
    fix +=
        "; this export names no MPI rank (nsys names a rank's thread "
        "'MPI Rank N' when it traces MPI: nsys profile --trace=cuda,nvtx,"
        "mpi); select a process with --pid instead";
  }
  return InvalidArgument(path + ": no process with CUDA activity has " + what +
                         "; " + fix);
}

StatusOr<ExportInfo> OpenExport(const std::string& path,
                                const SourceOptions& options) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(path + ": no such file");
  }
  ExportInfo info;
  RT_ASSIGN_OR_RETURN(info.db, SqliteFile::Open(path));
  RT_ASSIGN_OR_RETURN(const std::vector<std::string> tables, info.db->Tables());
  info.tables.insert(tables.begin(), tables.end());
  // Tables only: a view under the name of one the reader reads would run a
  // query of the file's choosing (a recursive one never ends). nsys
  // exports hold none.
  RT_ASSIGN_OR_RETURN(const std::vector<std::string> views, info.db->Views());
  for (const std::string& v : views) {
    if (LooksLikeNsysTables({std::string(kStringTable), v}) ||
        v == kStringTable || v == "PROCESSES" || v == "ANALYSIS_DETAILS") {
      return InvalidArgument(
          path + ": " + v +
          " is a view, not a table: rooftrace reads only the tables of an "
          "Nsight Systems export (a view may run any query); export the "
          "report again with `nsys export --type sqlite REPORT.nsys-rep`");
    }
  }
  if (!LooksLikeNsysTables(info.tables)) {
    return InvalidArgument(
        path +
        ": an SQLite file, but not an Nsight Systems export (no "
        "StringIds / CUPTI_ACTIVITY_KIND_* / NVTX_EVENTS tables); "
        "export a report with `nsys export --type sqlite "
        "REPORT.nsys-rep`");
  }
  if (!HasAnyCuptiTable(info.tables)) {
    return InvalidArgument(
        path +
        ": this Nsight Systems export has no CUDA activity (no "
        "CUPTI_ACTIVITY_KIND_KERNEL, _RUNTIME, _MEMCPY or _MEMSET "
        "table); record CUDA with `nsys profile --trace=cuda,nvtx -o "
        "report APP` and export it with `nsys export --type sqlite "
        "report.nsys-rep`");
  }
  for (const char* t : {kKernelTable, kRuntimeTable, kMemcpyTable, kMemsetTable,
                        kNvtxTable, kStringTable}) {
    RT_RETURN_IF_ERROR(LoadLayout(&info, t));
  }
  RT_RETURN_IF_ERROR(ReadVersion(&info));
  RT_RETURN_IF_ERROR(ReadProcesses(&info, options.rank.has_value()));
  RT_RETURN_IF_ERROR(ReadTargetInfo(&info));
  RT_RETURN_IF_ERROR(SelectProcesses(&info, options));
  return info;
}

// ---------------------------------------------------------------- strings

// StringIds by id, loaded on first use and kept (names repeat).
class StringCache {
 public:
  Status Init(const SqliteFile& db, bool present) {
    if (!present) return OkStatus();
    RT_ASSIGN_OR_RETURN(lookup_,
                        db.Prepare("SELECT value FROM StringIds WHERE id = ?"));
    return OkStatus();
  }
  // The string `id`; nullptr when the export has none by that id.
  StatusOr<const std::string*> Get(int64_t id) {
    auto it = cache_.find(id);
    if (it != cache_.end()) return it->second ? &*it->second : nullptr;
    std::optional<std::string> value;
    if (lookup_.valid()) {
      lookup_.Bind(1, id);
      RT_ASSIGN_OR_RETURN(const bool row, lookup_.Step());
      if (row) value = std::string(lookup_.Text(0));
      RT_RETURN_IF_ERROR(lookup_.Reset());
    }
    auto& slot = cache_[id];
    slot = std::move(value);
    return slot ? &*slot : nullptr;
  }

 private:
  Statement lookup_;
  std::unordered_map<int64_t, std::optional<std::string>> cache_;
};

// ---------------------------------------------------------------- reader

std::atomic<bool> g_table_threads{std::thread::hardware_concurrency() > 1};

struct OpenRange {
  uint64_t id = 0, start = 0, end = 0, domain = 0;
};

struct ThreadState {
  std::vector<OpenRange> open;  // push/pop ranges, in start order
  uint64_t last_launch_corr = 0;
  bool has_last_launch = false;

  // The innermost range open at `t` (latest started, not yet ended):
  // ranges that ended by `t` are dropped first.
  void Settle(uint64_t t) {
    open.erase(std::remove_if(open.begin(), open.end(),
                              [t](const OpenRange& r) { return r.end <= t; }),
               open.end());
  }
  uint64_t Innermost(uint64_t t) const {
    for (auto it = open.rbegin(); it != open.rend(); ++it) {
      if (it->start <= t && t < it->end) return it->id;
    }
    return 0;
  }
};

struct ProcessState {
  uint64_t global_pid = 0;
  bool selected = false;
  bool started = false;
  std::unique_ptr<Session> session;
  uint64_t next_range_id = 1;
  uint64_t next_text_iid = kInlineTextBase;
  uint64_t last_ns = 0;
  std::unordered_map<uint32_t, ThreadState> threads;
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const {
      return std::hash<std::string_view>()(v);
    }
  };
  std::unordered_map<std::string, uint64_t, TextHash, std::equal_to<>>
      text_iids;
  std::unordered_map<int64_t, std::string> domains;  // domainId -> name
};

// Column positions of each table stream, after rowid and start.
namespace kc {
enum {
  kEnd = TableStream::kFirst,
  kDevice,
  kContext,
  kStream,
  kCorrelation,
  kGlobalPid,
  kMangled,
  kDemangled,
  kShort,
  kRegisters,
  kGridX,
  kGridY,
  kGridZ,
  kBlockX,
  kBlockY,
  kBlockZ,
  kStaticShared,
  kDynamicShared,
  kGraphNode,
  kGraph,
  kClusterX,
  kClusterY,
  kClusterZ
};
const std::vector<std::string> kColumns = {"end",
                                           "deviceId",
                                           "contextId",
                                           "streamId",
                                           "correlationId",
                                           "globalPid",
                                           "mangledName",
                                           "demangledName",
                                           "shortName",
                                           "registersPerThread",
                                           "gridX",
                                           "gridY",
                                           "gridZ",
                                           "blockX",
                                           "blockY",
                                           "blockZ",
                                           "staticSharedMemory",
                                           "dynamicSharedMemory",
                                           "graphNodeId",
                                           "graphId",
                                           "clusterX",
                                           "clusterY",
                                           "clusterZ"};
// Columns every nsys version has; a missing one is reported.
const std::vector<std::string> kCore = {"end",
                                        "deviceId",
                                        "streamId",
                                        "correlationId",
                                        "globalPid",
                                        "registersPerThread",
                                        "gridX",
                                        "gridY",
                                        "gridZ",
                                        "blockX",
                                        "blockY",
                                        "blockZ",
                                        "staticSharedMemory",
                                        "dynamicSharedMemory"};
}  // namespace kc

namespace rc {
enum {
  kEnd = TableStream::kFirst,
  kCorrelation,
  kGlobalTid,
  kNameId,
  kNameText
};
const std::vector<std::string> kColumns = {"end", "correlationId", "globalTid",
                                           "nameId", "name"};
const std::vector<std::string> kCore = {"end", "correlationId", "globalTid"};
}  // namespace rc

namespace mc {
enum {
  kEnd = TableStream::kFirst,
  kDevice,
  kContext,
  kStream,
  kCorrelation,
  kGlobalPid,
  kBytes,
  kCopyKind,
  kSrcKind,
  kDstKind
};
const std::vector<std::string> kColumns = {
    "end",       "deviceId", "contextId", "streamId", "correlationId",
    "globalPid", "bytes",    "copyKind",  "srcKind",  "dstKind"};
const std::vector<std::string> kCore = {
    "end",       "deviceId", "streamId", "correlationId",
    "globalPid", "bytes",    "copyKind"};
}  // namespace mc

namespace sc {
enum {
  kEnd = TableStream::kFirst,
  kDevice,
  kContext,
  kStream,
  kCorrelation,
  kGlobalPid,
  kBytes,
  kMemKind
};
const std::vector<std::string> kColumns = {
    "end",           "deviceId",  "contextId", "streamId",
    "correlationId", "globalPid", "bytes",     "memKind"};
const std::vector<std::string> kCore = {
    "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes"};
}  // namespace sc

namespace nc {
enum {
  kEnd = TableStream::kFirst,
  kType,
  kText,
  kTextId,
  kGlobalTid,
  kEndGlobalTid,
  kDomain
};
const std::vector<std::string> kColumns = {
    "end",       "eventType",    "text",    "textId",
    "globalTid", "endGlobalTid", "domainId"};
const std::vector<std::string> kCore = {"end", "eventType", "text",
                                        "globalTid"};
}  // namespace nc

// A counter to attach to a kernel: by (globalPid, correlationId).
struct CounterKey {
  uint64_t global_pid, correlation;
  bool operator==(const CounterKey&) const = default;
};
struct CounterKeyHash {
  size_t operator()(const CounterKey& k) const {
    return std::hash<uint64_t>()(k.global_pid * 0x9E3779B97F4A7C15ull ^
                                 k.correlation);
  }
};

class NsysReader {
 public:
  NsysReader(ExportInfo* info, const SourceOptions& options,
             RunRecorder* recorder)
      : info_(*info), options_(options), recorder_(recorder) {}

  Status Run(SourceResult* result);

 private:
  Status OpenStreams();
  Status PrepareCounters();
  Status Merge();
  Status OnKernel(const RowView& r, uint64_t start);
  Status OnRuntime(const RowView& r, uint64_t start);
  Status OnMemcpy(const RowView& r, uint64_t start, bool memset);
  Status OnNvtx(const RowView& r, uint64_t start);
  Status Finish(SourceResult* result);

  ProcessState& Process(uint64_t global_pid);
  void Start(ProcessState& p);
  Status Flush(ProcessState& p) {
    return recorder_->MaybeFlush(p.session.get(), open_sessions_);
  }
  // The session iid of StringIds string `id` (defined in the session on
  // first use); 0 when the export has no such string.
  StatusOr<uint64_t> StringIid(ProcessState& p, int64_t id);
  uint64_t TextIid(ProcessState& p, std::string_view text);
  void MissingColumns(const std::string& table,
                      const std::vector<std::string>& core);
  // Marks `s` as a failure to read the file (not of the sink), which keeps
  // what was read before it.
  Status ReadFailure(Status s) {
    read_failed_ = true;
    return s;
  }

  ExportInfo& info_;
  const SourceOptions& options_;
  RunRecorder* recorder_;
  StringCache strings_;
  TableStream kernels_, runtime_, memcpys_, memsets_, nvtx_;
  std::unordered_map<int64_t, int32_t> api_kind_;  // nameId -> ApiKind
  std::unordered_map<std::string, int32_t> api_kind_by_text_;
  std::map<uint64_t, ProcessState> processes_;
  ProcessState* last_process_ = nullptr;
  size_t open_sessions_ = 0;
  // Matched counters by kernel, with the sample they came from (its raw
  // metrics; owned by options_.counters).
  struct MatchedCounters {
    CounterRecord record;
    const CounterSample* sample = nullptr;
  };
  std::unordered_map<CounterKey, MatchedCounters, CounterKeyHash> counters_;
  std::string counter_summary_;
  uint64_t kernels_read_ = 0, next_progress_ = 1000000;
  uint64_t open_ended_ranges_ = 0, duplicate_launches_ = 0;
  std::string read_error_;
  bool read_failed_ = false;
};

void NsysReader::MissingColumns(const std::string& table,
                                const std::vector<std::string>& core) {
  const Layout& l = info_.layout(table);
  if (!l.present) return;
  std::vector<std::string> missing;
  for (const std::string& c : core) {
    if (!l.Has(c)) missing.push_back(c);
  }
  if (!missing.empty()) {
    info_.notes.push_back(table + " has no " + Join(missing, ", ") + " column" +
                          (missing.size() > 1 ? "s" : "") + ": left empty");
  }
}

Status NsysReader::OpenStreams() {
  const SqliteFile* db = info_.db.get();
  const std::string& path = db->path();
  const bool threads = g_table_threads.load();
  RT_RETURN_IF_ERROR(strings_.Init(*db, info_.layout(kStringTable).present));

  auto usable = [&](const char* table) {
    const Layout& l = info_.layout(table);
    if (!l.present) return false;
    if (!l.Has("start")) {
      info_.notes.push_back(std::string(table) +
                            " has no start column: skipped");
      return false;
    }
    return true;
  };

  if (usable(kKernelTable)) {
    MissingColumns(kKernelTable, kc::kCore);
    const Layout& l = info_.layout(kKernelTable);
    if (!l.Has("mangledName") && !l.Has("demangledName") &&
        !l.Has("shortName")) {
      info_.notes.push_back(std::string(kKernelTable) +
                            " has no kernel name column: kernels are unnamed");
    }
    RT_RETURN_IF_ERROR(kernels_.Open(
        path, kKernelTable, SelectList(l, kc::kColumns), "", {}, {}, threads));
  }
  if (usable(kRuntimeTable)) {
    MissingColumns(kRuntimeTable, rc::kCore);
    const Layout& l = info_.layout(kRuntimeTable);
    std::string filter;
    if (l.Has("nameId")) {
      // The launch-like API names, found among StringIds.
      std::string ids;
      RT_ASSIGN_OR_RETURN(
          Statement s,
          db->Prepare("SELECT id, value FROM StringIds WHERE value LIKE 'cu%' "
                      "OR value LIKE '\\_\\_cu%' ESCAPE '\\'"));
      for (;;) {
        RT_ASSIGN_OR_RETURN(const bool row, s.Step());
        if (!row) break;
        const int32_t kind = ClassifyCudaApi(s.Text(1));
        if (kind == en::kApiUnknown) continue;
        api_kind_[s.Int(0)] = kind;
        if (!ids.empty()) ids += ",";
        ids += std::to_string(s.Int(0));
      }
      filter = "nameId IN (" + ids + ")";
    } else if (!l.Has("name")) {
      info_.notes.push_back(std::string(kRuntimeTable) +
                            " has no nameId or name column: launches skipped");
      filter = "0";
    }
    if (l.Has("eventClass") && filter != "0") {
      // First: it drops the backtrace half of the rows before the IN list's
      // probe (6% fewer instructions stepping the table).
      filter = "eventClass != " + std::to_string(kEventClassBacktrace) +
               (filter.empty() ? "" : " AND " + filter);
    }
    if (filter != "0" && !(l.Has("nameId") && api_kind_.empty())) {
      RT_RETURN_IF_ERROR(
          runtime_.Open(path, kRuntimeTable, SelectList(l, rc::kColumns),
                        filter, {rc::kNameId}, {rc::kNameText}, threads));
    }
  }
  if (usable(kMemcpyTable)) {
    MissingColumns(kMemcpyTable, mc::kCore);
    RT_RETURN_IF_ERROR(
        memcpys_.Open(path, kMemcpyTable,
                      SelectList(info_.layout(kMemcpyTable), mc::kColumns), "",
                      {mc::kSrcKind, mc::kDstKind}, {}, threads));
  }
  if (usable(kMemsetTable)) {
    MissingColumns(kMemsetTable, sc::kCore);
    RT_RETURN_IF_ERROR(
        memsets_.Open(path, kMemsetTable,
                      SelectList(info_.layout(kMemsetTable), sc::kColumns), "",
                      {sc::kMemKind}, {}, threads));
  }
  if (usable(kNvtxTable)) {
    MissingColumns(kNvtxTable, nc::kCore);
    const Layout& l = info_.layout(kNvtxTable);
    if (l.Has("eventType")) {
      RT_RETURN_IF_ERROR(nvtx_.Open(
          path, kNvtxTable, SelectList(l, nc::kColumns),
          // Four comparisons cost less than an IN list's probe of an
          // ephemeral index per row (4% of stepping the table).
          "(eventType = " + std::to_string(kNvtxMark) +
              " OR eventType = " + std::to_string(kNvtxPushPop) +
              " OR eventType = " + std::to_string(kNvtxStartEnd) +
              " OR eventType = " + std::to_string(kNvtxDomainCreate) + ")",
          {nc::kEnd, nc::kTextId, nc::kEndGlobalTid}, {nc::kText}, threads));
    }
  }
  return OkStatus();
}

ProcessState& NsysReader::Process(uint64_t global_pid) {
  if (last_process_ != nullptr && last_process_->global_pid == global_pid) {
    return *last_process_;
  }
  auto [it, inserted] = processes_.try_emplace(global_pid);
  ProcessState& p = it->second;
  if (inserted) {
    p.global_pid = global_pid;
    p.selected = info_.Selected(global_pid);
    p.session = std::make_unique<Session>(info_.db->path() + ":pid " +
                                          std::to_string(PidOf(global_pid)));
  }
  last_process_ = &p;
  return p;
}

void NsysReader::Start(ProcessState& p) {
  if (p.started) return;
  p.started = true;
  ++open_sessions_;
  SessionHeader h;
  h.host = info_.host.empty() ? "nsys" : info_.host;
  h.pid = PidOf(p.global_pid);
  h.start_unix_ns = info_.start_unix_ns;
  h.start_ns = 0;  // nsys times count from the capture's start
  auto it = info_.processes.find(p.global_pid);
  if (it != info_.processes.end()) h.argv = it->second.name;
  h.producer_version =
      "nsys" + (info_.product_version.empty() ? std::string()
                                              : " " + info_.product_version);
  h.mode = "import";
  p.session->Start(h);
  for (DeviceInfo& d : DevicesOf(info_, h.pid, options_.device_key)) {
    p.session->AddDevice(std::move(d));
    ++p.session->stats().received[en::kRecordDevice];
  }
}

StatusOr<uint64_t> NsysReader::StringIid(ProcessState& p, int64_t id) {
  if (id <= 0) return uint64_t{0};
  const uint64_t iid = static_cast<uint64_t>(id);
  if (p.session->String(iid) != nullptr) return iid;
  RT_ASSIGN_OR_RETURN(const std::string* s, strings_.Get(id));
  if (s == nullptr) return iid;  // the join counts it unresolved
  p.session->SetString(iid, *s);
  return iid;
}

uint64_t NsysReader::TextIid(ProcessState& p, std::string_view text) {
  auto it = p.text_iids.find(text);
  if (it != p.text_iids.end()) return it->second;
  const uint64_t iid = p.next_text_iid++;
  p.text_iids.emplace(std::string(text), iid);
  p.session->SetString(iid, text);
  return iid;
}

Status NsysReader::OnKernel(const RowView& r, uint64_t start) {
  ProcessState& p = Process(U64(r.Int(kc::kGlobalPid)));
  if (!p.selected) return OkStatus();
  Start(p);
  KernelRecord k;
  k.correlation_id = U64(r.Int(kc::kCorrelation));
  k.start_ns = start;
  k.end_ns = std::max(start, U64(r.Int(kc::kEnd)));
  // The mangled name when there is one (the pipeline demangles, as it does
  // CUPTI's names), else the demangled, else the short name.
  for (int c : {kc::kMangled, kc::kDemangled, kc::kShort}) {
    if (r.Int(c) <= 0) continue;  // NULL reads as 0
    auto s = strings_.Get(r.Int(c));
    if (!s.ok()) return ReadFailure(s.status());
    if (*s == nullptr || (*s)->empty()) continue;
    auto iid = StringIid(p, r.Int(c));
    if (!iid.ok()) return ReadFailure(iid.status());
    k.name_iid = *iid;
    break;
  }
  k.device_id = U32(r.Int(kc::kDevice));
  k.context_id = U32(r.Int(kc::kContext));
  k.stream_id = U32(r.Int(kc::kStream));
  k.grid[0] = U32(r.Int(kc::kGridX));
  k.grid[1] = U32(r.Int(kc::kGridY));
  k.grid[2] = U32(r.Int(kc::kGridZ));
  k.block[0] = U32(r.Int(kc::kBlockX));
  k.block[1] = U32(r.Int(kc::kBlockY));
  k.block[2] = U32(r.Int(kc::kBlockZ));
  k.cluster[0] = U32(r.Int(kc::kClusterX));
  k.cluster[1] = U32(r.Int(kc::kClusterY));
  k.cluster[2] = U32(r.Int(kc::kClusterZ));
  k.registers_per_thread = U32(r.Int(kc::kRegisters));
  k.static_shared_memory_bytes = U32(r.Int(kc::kStaticShared));
  k.dynamic_shared_memory_bytes = U32(r.Int(kc::kDynamicShared));
  k.graph_node_id = U64(r.Int(kc::kGraphNode));
  k.graph_id = U32(r.Int(kc::kGraph));
  Session& s = *p.session;
  if (!counters_.empty()) {
    auto it = counters_.find({p.global_pid, k.correlation_id});
    if (it != counters_.end()) {
      s.records().counters.push_back(it->second.record);
      ++s.stats().received[en::kRecordCounters];
      for (const CounterMetric& m : it->second.sample->metrics) {
        MetricRecord mr;
        mr.correlation_id = k.correlation_id;
        mr.name_iid = TextIid(p, m.name);
        mr.unit_iid = m.unit.empty() ? 0 : TextIid(p, m.unit);
        mr.value = m.value;
        s.records().metrics.push_back(mr);
      }
      counters_.erase(it);
    }
  }
  s.records().kernels.push_back(k);
  ++s.stats().received[en::kRecordKernel];
  p.last_ns = std::max(p.last_ns, k.end_ns);
  if (++kernels_read_ >= next_progress_ && options_.progress) {
    fprintf(stderr, "%s: %s: %llu kernels read\n", CommandName(),
            info_.db->path().c_str(),
            static_cast<unsigned long long>(kernels_read_));
    next_progress_ += 1000000;
  }
  return Flush(p);
}

Status NsysReader::OnRuntime(const RowView& r, uint64_t start) {
  int32_t kind = en::kApiUnknown;
  if (!r.IsNull(rc::kNameId)) {
    auto it = api_kind_.find(r.Int(rc::kNameId));
    if (it != api_kind_.end()) kind = it->second;
  } else {
    const std::string_view text = r.Text(rc::kNameText);
    auto it = api_kind_by_text_.find(std::string(text));
    if (it == api_kind_by_text_.end()) {
      it = api_kind_by_text_.emplace(std::string(text), ClassifyCudaApi(text))
               .first;
    }
    kind = it->second;
  }
  if (kind == en::kApiUnknown) return OkStatus();
  const uint64_t global_tid = U64(r.Int(rc::kGlobalTid));
  ProcessState& p = Process(GlobalPidOfTid(global_tid));
  if (!p.selected) return OkStatus();
  const uint64_t corr = U64(r.Int(rc::kCorrelation));
  ThreadState& t = p.threads[TidOf(global_tid)];
  if (t.has_last_launch && t.last_launch_corr == corr) {
    // A second row for the same call (nsys writes one per event class).
    ++duplicate_launches_;
    return OkStatus();
  }
  t.has_last_launch = true;
  t.last_launch_corr = corr;
  Start(p);
  LaunchRecord l;
  l.correlation_id = corr;
  l.api_start_ns = start;
  l.api_end_ns = std::max(start, U64(r.Int(rc::kEnd)));
  l.thread_id = TidOf(global_tid);
  l.kind = kind;
  t.Settle(start);
  l.nvtx_range_id = t.Innermost(start);
  Session& s = *p.session;
  s.records().launches.push_back(l);
  ++s.stats().received[en::kRecordLaunch];
  p.last_ns = std::max(p.last_ns, l.api_end_ns);
  return Flush(p);
}

Status NsysReader::OnMemcpy(const RowView& r, uint64_t start, bool memset) {
  // The memcpy and memset cursors share the leading columns.
  ProcessState& p = Process(U64(r.Int(mc::kGlobalPid)));
  if (!p.selected) return OkStatus();
  Start(p);
  MemcpyRecord m;
  m.correlation_id = U64(r.Int(mc::kCorrelation));
  m.start_ns = start;
  m.end_ns = std::max(start, U64(r.Int(mc::kEnd)));
  m.bytes = U64(r.Int(mc::kBytes));
  m.device_id = U32(r.Int(mc::kDevice));
  m.context_id = U32(r.Int(mc::kContext));
  m.stream_id = U32(r.Int(mc::kStream));
  if (memset) {
    m.kind = en::kCopyMemset;
    m.dst_kind = MemoryKindOf(r, sc::kMemKind);
  } else {
    m.kind = CopyKindOf(r.Int(mc::kCopyKind));
    m.src_kind = MemoryKindOf(r, mc::kSrcKind);
    m.dst_kind = MemoryKindOf(r, mc::kDstKind);
  }
  Session& s = *p.session;
  s.records().memcpys.push_back(m);
  ++s.stats().received[en::kRecordMemcpy];
  p.last_ns = std::max(p.last_ns, m.end_ns);
  return Flush(p);
}

Status NsysReader::OnNvtx(const RowView& r, uint64_t start) {
  const uint64_t global_tid = U64(r.Int(nc::kGlobalTid));
  ProcessState& p = Process(GlobalPidOfTid(global_tid));
  if (!p.selected) return OkStatus();
  const int64_t type = r.Int(nc::kType);
  Session& s = *p.session;
  if (type == kNvtxDomainCreate) {
    p.domains[r.Int(nc::kDomain)] = std::string(r.Text(nc::kText));
    return OkStatus();
  }
  if (type == kNvtxMark) {
    ++s.end().nvtx_marks;
    ++s.stats().received[en::kRecordNvtxMark];
    return OkStatus();
  }
  NvtxRecord n;
  n.range_id = p.next_range_id++;
  n.start_ns = start;
  if (r.IsNull(nc::kEnd)) {
    // Never ended before the capture stopped: it lasts to the end.
    ++open_ended_ranges_;
    n.end_ns = std::max(start, info_.stop_ns);
  } else {
    n.end_ns = std::max(start, U64(r.Int(nc::kEnd)));
  }
  n.kind = type == kNvtxPushPop ? en::kRangePushPop : en::kRangeStartEnd;
  n.thread_id = TidOf(global_tid);
  n.end_thread_id = r.IsNull(nc::kEndGlobalTid)
                        ? n.thread_id
                        : TidOf(U64(r.Int(nc::kEndGlobalTid)));
  if (!r.IsNull(nc::kTextId) && r.Int(nc::kTextId) > 0) {
    auto iid = StringIid(p, r.Int(nc::kTextId));
    if (!iid.ok()) return ReadFailure(iid.status());
    n.name_iid = *iid;
  } else if (!r.IsNull(nc::kText)) {
    n.name_iid = TextIid(p, r.Text(nc::kText));
  }
  const int64_t domain = r.Int(nc::kDomain);  // NULL: 0, the default
  if (domain != 0) {
    n.domain_iid = kDomainBase + static_cast<uint64_t>(domain);
    if (s.String(n.domain_iid) == nullptr) {
      auto it = p.domains.find(domain);
      s.SetString(n.domain_iid, it != p.domains.end()
                                    ? it->second
                                    : "domain " + std::to_string(domain));
    }
  }
  if (n.kind == en::kRangePushPop) {
    // The thread's push/pop stack, as NVTX keeps it (and libinject
    // records it): the parent is the innermost range open on the thread,
    // the depth counts the open ranges of the same domain. Start/end
    // ranges may end on another thread and need not nest: they are kept
    // as rows without a parent and enclose no launch.
    ThreadState& t = p.threads[n.thread_id];
    t.Settle(start);
    n.parent_range_id = t.Innermost(start);
    uint32_t depth = 0;
    for (const OpenRange& o : t.open) {
      if (o.domain == n.domain_iid && o.start <= start) ++depth;
    }
    n.depth = depth;
    t.open.push_back({n.range_id, n.start_ns, n.end_ns, n.domain_iid});
  }
  s.records().nvtx.push_back(n);
  ++s.stats().received[en::kRecordNvtxRange];
  p.last_ns = std::max(p.last_ns, n.end_ns);
  if (!p.started) return OkStatus();
  return Flush(p);
}

Status NsysReader::Merge() {
  // Ties: a range before the launches it encloses, a launch before its
  // kernel and copies.
  TableStream* streams[] = {&nvtx_, &runtime_, &memcpys_, &memsets_, &kernels_};
  for (;;) {
    TableStream* next = nullptr;
    for (TableStream* c : streams) {
      if (c->has_row() &&
          (next == nullptr || c->row_start() < next->row_start())) {
        next = c;
      }
    }
    if (next == nullptr) return OkStatus();
    const RowView r = next->row();
    const uint64_t start = next->row_start();
    if (next == &kernels_) {
      RT_RETURN_IF_ERROR(OnKernel(r, start));
    } else if (next == &runtime_) {
      RT_RETURN_IF_ERROR(OnRuntime(r, start));
    } else if (next == &memcpys_) {
      RT_RETURN_IF_ERROR(OnMemcpy(r, start, false));
    } else if (next == &memsets_) {
      RT_RETURN_IF_ERROR(OnMemcpy(r, start, true));
    } else {
      RT_RETURN_IF_ERROR(OnNvtx(r, start));
    }
    Status advanced = next->Advance();
    if (!advanced.ok()) return ReadFailure(std::move(advanced));
  }
}

Status NsysReader::PrepareCounters() {
  if (options_.counters_path.empty()) return OkStatus();
  if (options_.counters == nullptr) {
    return FailedPrecondition(
        info_.db->path() + ": --counters " + options_.counters_path +
        ": the counter file was not read (read through the registry: "
        "ReadSourceInto reads it once)");
  }
  CounterMatchInput in;
  in.samples = options_.counters->samples;
  in.window = options_.counters->window;

  // The timeline: every kernel of the selected processes, in launch order
  // (the launch call's start; the kernel's own start without one).
  const Layout& kl = info_.layout(kKernelTable);
  if (!kl.present || !kl.Has("correlationId")) {
    return InvalidArgument(info_.db->path() +
                           ": --counters needs the kernels' correlation ids, "
                           "which this export lacks");
  }
  std::unordered_map<CounterKey, uint64_t, CounterKeyHash> api_start;
  const Layout& rl = info_.layout(kRuntimeTable);
  if (runtime_.has_row() && rl.Has("nameId")) {
    RT_ASSIGN_OR_RETURN(
        Statement s,
        info_.db->Prepare("SELECT start, correlationId, globalTid, nameId "
                          "FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
    for (;;) {
      RT_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      auto it = api_kind_.find(s.Int(3));
      if (it == api_kind_.end() || (it->second != en::kApiKernelLaunch &&
                                    it->second != en::kApiGraphLaunch)) {
        continue;
      }
      api_start.try_emplace({GlobalPidOfTid(U64(s.Int(2))), U64(s.Int(1))},
                            U64(s.Int(0)));
    }
  }
  struct Entry {
    uint64_t order, start;
    CounterKey key;
    uint32_t name;
  };
  std::vector<Entry> entries;
  std::map<std::array<int64_t, 3>, uint32_t> name_index;
  RT_ASSIGN_OR_RETURN(
      Statement s,
      info_.db->Prepare(
          "SELECT start, " +
          SelectList(kl, {"correlationId", "globalPid", "mangledName",
                          "demangledName", "shortName"}) +
          " FROM CUPTI_ACTIVITY_KIND_KERNEL"));
  for (;;) {
    RT_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    const uint64_t gp = U64(s.Int(2));
    if (!info_.Selected(gp)) continue;
    const CounterKey key{gp, U64(s.Int(1))};
    const std::array<int64_t, 3> ids = {s.Int(3), s.Int(4), s.Int(5)};
    auto [it, inserted] =
        name_index.try_emplace(ids, static_cast<uint32_t>(in.names.size()));
    if (inserted) {
      std::vector<std::string> aliases;
      for (int64_t id : ids) {
        if (id <= 0) continue;
        RT_ASSIGN_OR_RETURN(const std::string* str, strings_.Get(id));
        if (str != nullptr && !str->empty()) aliases.push_back(*str);
      }
      in.names.push_back(std::move(aliases));
    }
    const uint64_t start = U64(s.Int(0));
    auto a = api_start.find(key);
    entries.push_back(
        {a != api_start.end() ? a->second : start, start, key, it->second});
  }
  std::stable_sort(
      entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.order != b.order ? a.order < b.order : a.start < b.start;
      });
  // Correlation ids stand for (process, correlation id) pairs here: kernels
  // of one graph launch keep sharing theirs, those of two processes do not.
  std::vector<CounterKey> keys;
  std::unordered_map<CounterKey, uint64_t, CounterKeyHash> key_id;
  in.kernels.reserve(entries.size());
  for (const Entry& e : entries) {
    auto [it, inserted] = key_id.try_emplace(e.key, keys.size());
    if (inserted) keys.push_back(e.key);
    in.kernels.push_back({it->second, e.name});
  }
  CounterMatchResult m = MatchCounters(in);
  for (size_t i = 0; i < m.counters.size(); ++i) {
    CounterRecord& c = m.counters[i];
    const CounterKey key = keys[c.correlation_id];
    c.correlation_id = key.correlation;
    // in.samples is a copy; the file's own sample outlives the read.
    counters_.emplace(key, MatchedCounters{
                               c, &options_.counters->samples[m.sample_of[i]]});
  }
  counter_summary_ = options_.counters_path + ": " + m.summary;
  ImportStats unmatched;
  unmatched.unmatched[en::kRecordCounters] = m.unmatched();
  recorder_->AddStats(unmatched);
  if (m.unmatched() > 0) info_.notes.push_back(counter_summary_);
  return OkStatus();
}

Status NsysReader::Finish(SourceResult* result) {
  for (auto& [gp, p] : processes_) {
    if (!p.started) continue;
    SessionEnd& e = p.session->end();
    e.complete = read_error_.empty();
    e.goodbye = read_error_.empty();
    if (info_.start_unix_ns != 0)
      e.end_unix_ns = info_.start_unix_ns + p.last_ns;
    RT_RETURN_IF_ERROR(recorder_->AddSession(p.session.get()));
  }
  ImportStats file;
  struct stat st;
  if (stat(info_.db->path().c_str(), &st) == 0) {
    file[ImportStat::k_bytes] = static_cast<uint64_t>(st.st_size);
  }
  recorder_->AddStats(file);

  std::vector<std::string> notes = info_.notes;
  uint64_t resorted = 0;
  for (TableStream* c : {&kernels_, &runtime_, &memcpys_, &memsets_, &nvtx_}) {
    resorted += c->resorted();
  }
  if (resorted > 0) {
    notes.push_back(std::to_string(resorted) +
                    " table(s) not in time order: sorted while reading");
  }
  if (open_ended_ranges_ > 0) {
    notes.push_back(std::to_string(open_ended_ranges_) +
                    " NVTX range(s) never ended: closed at the end of the "
                    "capture");
  }
  if (!read_error_.empty()) notes.push_back(read_error_);
  if (!notes.empty())
    result->warning = info_.db->path() + ": " + Join(notes, "; ");
  return OkStatus();
}

Status NsysReader::Run(SourceResult* result) {
  RT_RETURN_IF_ERROR(OpenStreams());
  RT_RETURN_IF_ERROR(PrepareCounters());
  Status s = Merge();
  if (!s.ok()) {
    // Damage part-way: keep what was read, say where it broke.
    if (!read_failed_ || (kernels_read_ == 0 && processes_.empty())) {
      return s;
    }
    // The message names the file; the warning does once for every note.
    std::string message = s.message();
    const std::string prefix = info_.db->path() + ": ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    read_error_ = message + "; the rows before it were read (" +
                  std::to_string(kernels_read_) + " kernels)";
  }
  return Finish(result);
}

}  // namespace

void SetTableThreads(bool threaded) { g_table_threads.store(threaded); }
bool TableThreads() { return g_table_threads.load(); }

ExportProbe ProbeNsysExport(const std::string& path) {
  auto db = SqliteFile::Open(path);
  if (!db.ok()) return ExportProbe::kUnreadable;
  auto tables = (*db)->Tables();
  if (!tables.ok()) return ExportProbe::kUnreadable;
  return LooksLikeNsysTables(
             std::set<std::string>(tables->begin(), tables->end()))
             ? ExportProbe::kExport
             : ExportProbe::kNotExport;
}

Status CheckNsysExport(const std::string& path, const SourceOptions& options) {
  RT_ASSIGN_OR_RETURN(ExportInfo info, OpenExport(path, options));
  return OkStatus();
}

Status ReadNsysExport(const std::string& path, const SourceOptions& options,
                      RunRecorder* recorder, SourceResult* result) {
  RT_ASSIGN_OR_RETURN(ExportInfo info, OpenExport(path, options));
  NsysReader reader(&info, options, recorder);
  return reader.Run(result);
}

}  // namespace rooftrace::nsys
