// libFuzzer target over the Nsight Systems reader (sources/nsys/): every
// input becomes an SQLite file that is read into a RunRecorder whose rows are
// discarded, in windows of 64 records. The first byte's low bits pick how:
//   0: the bytes are the file;
//   1: a valid export (built once, in the recent layout) with the input's
//      (offset, byte) patches applied and cut to a length the input gives:
//      damaged pages, schemas and records;
//   2, 3: the recent layout's empty schema (built once) whose rows are made
//      of the input: arbitrary times, ids, event types, names, NULLs, in
//      any order.
// Its high bit reads the tables on threads of their own. Nothing may crash,
// hang or leak; errors are fine.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/recorder.h"
#include "pipeline/sink.h"
#include "sources/nsys/nsys_reader.h"
#include "tests/sources/nsys/export_builder.h"
#include "tests/support/discard_sink.h"

namespace rt = rooftrace;
namespace ts = rooftrace::test_support;

namespace {

using rt::test_support::DiscardSink;

std::string Path() {
  static const std::string p =
      (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
      std::string("/rooftrace_nsys_fuzz_") + std::to_string(getpid()) +
      ".sqlite";
  return p;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Reads the bytes from the cursor.
class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return i_ >= n_; }
  uint8_t Byte() { return i_ < n_ ? d_[i_++] : 0; }
  int64_t Int() {
    // Small values most of the time, any 64-bit value sometimes.
    const uint8_t tag = Byte();
    if (tag < 200) return static_cast<int64_t>(tag) * 37;
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v = (v << 8) | Byte();
    return static_cast<int64_t>(v);
  }
  std::string Text() {
    const size_t len = Byte() % 24;
    std::string s;
    for (size_t k = 0; k < len; ++k) s += static_cast<char>(Byte());
    return s;
  }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

// The recent layout's tables, empty.
const std::string& EmptySchema() {
  static const std::string bytes = [] {
    const std::string path = Path() + ".schema";
    {
      ts::ExportBuilder b(path);
      b.Exec(ts::kNewLayout);
    }
    std::string out = ReadAll(path);
    std::remove(path.c_str());
    return out;
  }();
  return bytes;
}

const std::string& Seed() {
  static const std::string seed = [] {
    const std::string path = Path() + ".seed";
    {
      ts::ExportBuilder b(path);
      b.Exec(ts::kNewLayout);
      const std::string gp = std::to_string(ts::GlobalPid(9));
      const std::string tid = std::to_string(ts::GlobalTid(9, 9));
      b.Exec(
          "INSERT INTO StringIds VALUES (1,'_Z1kv'),(2,'k()'),(3,'k'),"
          "(4,'cudaLaunchKernel_v7000'),(5,'cudaMemcpyAsync_v3020'),"
          "(6,'range');"
          "INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES "
          "(1, 0, 'NVIDIA H100 80GB HBM3');"
          "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 9, 'u', 132);"
          "INSERT INTO PROCESSES VALUES (" +
          gp + ", 9, 'app');");
      for (int i = 0; i < 40; ++i) {
        const std::string t = std::to_string(i * 1000);
        const std::string c = std::to_string(i + 1);
        b.Exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + t + "," +
               t + "+50,0," + tid + "," + c + "," + (i % 5 ? "4" : "5") +
               ",0,NULL);");
        if (i % 5) {
          b.Exec(
              "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, "
              "deviceId, contextId, streamId, correlationId, globalPid, "
              "demangledName, shortName, mangledName, registersPerThread, "
              "gridX, gridY, gridZ, blockX, blockY, blockZ, "
              "staticSharedMemory, dynamicSharedMemory, "
              "localMemoryPerThread, localMemoryTotal, gridId) VALUES (" +
              t + "+100," + t + "+400,0,1,7," + c + "," + gp +
              ",2,3,1,32,4,1,1,128,1,1,0,0,0,0,1);");
        } else {
          b.Exec(
              "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, "
              "deviceId, contextId, streamId, correlationId, globalPid, "
              "bytes, copyKind, srcKind, dstKind) VALUES (" +
              t + "+100," + t + "+300,0,1,7," + c + "," + gp + ",8,2,2,0);");
        }
        if (i % 10 == 0) {
          b.Exec(
              "INSERT INTO NVTX_EVENTS (start, end, eventType, text, "
              "globalTid, textId, domainId) VALUES (" +
              t + "," + t + "+9000,59,NULL," + tid + ",6,0);");
        }
      }
    }
    std::string bytes = ReadAll(path);
    std::remove(path.c_str());
    return bytes;
  }();
  return seed;
}

void WriteFile(const std::string& bytes) {
  std::ofstream(Path(), std::ios::binary | std::ios::trunc) << bytes;
}

// Rows of every table the reader reads, made of the input.
void BuildFromRows(Input& in) {
  WriteFile(EmptySchema());
  ts::ExportBuilder b(Path(), /*replace=*/false);
  auto v = [&]() -> std::string {
    const uint8_t kind = in.Byte() % 8;
    if (kind == 0) return "NULL";
    if (kind == 1) {
      std::string t = in.Text(), q = "'";
      for (char c : t) q += c == '\'' ? std::string("''") : std::string(1, c);
      return q + "'";
    }
    return std::to_string(in.Int());
  };
  auto row = [&](const std::string& table, int columns,
                 const std::string& column_list) {
    std::string sql =
        "INSERT INTO " + table + " (" + column_list + ") VALUES (";
    for (int c = 0; c < columns; ++c) sql += (c ? "," : "") + v();
    b.Exec(sql + ");");
  };
  while (!in.empty()) {
    switch (in.Byte() % 7) {
      case 0:
        row("StringIds", 2, "id, value");
        break;
      case 1:
        row("CUPTI_ACTIVITY_KIND_KERNEL", 13,
            "start, end, deviceId, contextId, streamId, correlationId, "
            "globalPid, demangledName, shortName, mangledName, "
            "registersPerThread, gridX, graphId");
        break;
      case 2:
        row("CUPTI_ACTIVITY_KIND_RUNTIME", 6,
            "start, end, eventClass, globalTid, correlationId, nameId");
        break;
      case 3:
        row("NVTX_EVENTS", 7,
            "start, end, eventType, text, globalTid, textId, domainId");
        break;
      case 4:
        row("CUPTI_ACTIVITY_KIND_MEMCPY", 10,
            "start, end, deviceId, contextId, streamId, correlationId, "
            "globalPid, bytes, copyKind, srcKind");
        break;
      case 5:
        row("CUPTI_ACTIVITY_KIND_MEMSET", 8,
            "start, end, deviceId, contextId, streamId, correlationId, "
            "globalPid, memKind");
        break;
      default:
        row("TARGET_INFO_CUDA_DEVICE", 3, "gpuId, cudaId, pid");
        break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] & 3;
  rt::nsys::SetTableThreads((data[0] & 0x80) != 0);
  Input in(data + 1, size - 1);
  if (mode == 0) {
    WriteFile(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  } else if (mode == 1) {
    // A cut length (when its first byte is odd), then (offset, byte) patches
    // anywhere in the seed export.
    std::string bytes = Seed();
    const uint8_t cut_flag = in.Byte();
    const uint32_t cut = (static_cast<uint32_t>(in.Byte()) << 8) | in.Byte();
    while (!in.empty()) {
      uint32_t off = 0;
      for (int b = 0; b < 3; ++b) off = (off << 8) | in.Byte();
      bytes[off % bytes.size()] = static_cast<char>(in.Byte());
    }
    if (cut_flag & 1) bytes.resize(cut * 16u % bytes.size());
    WriteFile(bytes);
  } else {
    BuildFromRows(in);
  }
  rt::RecorderOptions ro;
  ro.origin = "fuzz";
  ro.flush_records = 64;
  auto recorder = rt::RunRecorder::Create(ro, std::make_unique<DiscardSink>());
  if (!recorder.ok()) return 0;
  rt::SourceOptions options;
  options.flush_records = 64;
  rt::SourceResult result;
  if (rt::nsys::ReadNsysExport(Path(), options, recorder->get(), &result)
          .ok()) {
    (void)(*recorder)->Finish();
  }
  return 0;
}
