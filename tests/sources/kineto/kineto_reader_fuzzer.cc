// libFuzzer target over the Kineto reader (sources/kineto/): every input is
// written as a trace file (the first byte picks whether a valid trace's
// header is put before the rest, so that the fuzzer reaches the events
// quickly) and read into a RunRecorder whose rows are discarded. Nothing
// may crash, hang or leak; errors are fine.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/recorder.h"
#include "pipeline/sink.h"
#include "sources/kineto/kineto_reader.h"
#include "tests/support/discard_sink.h"

namespace rt = rooftrace;

namespace {

using rt::test_support::DiscardSink;

constexpr char kHeader[] =
    "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB "
    "HBM3\"}], \"distributedInfo\": {\"rank\": 0}, \"traceEvents\": [";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string path =
      "/tmp/kineto_fuzz_" + std::to_string(getpid()) + ".json";
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) text = kHeader + text;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  DiscardSink sink;
  rt::RecorderOptions ro;
  ro.origin = "fuzz";
  ro.sink = &sink;
  ro.flush_records = 64;
  auto recorder = rt::RunRecorder::Create(ro);
  if (!recorder.ok()) return 0;
  rt::SourceOptions options;
  if (data[0] & 2) options.pid = 1;
  rt::SourceResult result;
  (void)rt::kineto::ReadKinetoTrace(path, options, recorder->get(), &result);
  (void)(*recorder)->Finish();
  return 0;
}
