// libFuzzer target over the Nsight Compute CSV reader (sources/ncu/): the
// input is parsed as an ncu CSV and every kernel it yields is read into a
// RunRecorder whose rows are discarded. The first byte's low bits pick the
// text:
//   0: the bytes are the file (log lines, headers, quoting of their own);
//   1: a long-layout header (--metrics), then the bytes: rows of metrics
//      with arbitrary ids, units, values, quotes and cut rows;
//   2: a --page raw header with a few metric columns and a units row, then
//      the bytes.
// Nothing may crash, hang or leak; errors are fine.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/recorder.h"
#include "pipeline/sink.h"
#include "sources/ncu/ncu_csv.h"
#include "sources/ncu/ncu_source.h"
#include "tests/support/discard_sink.h"

namespace rt = rooftrace;

namespace {

using rt::test_support::DiscardSink;

constexpr char kLongHeader[] =
    "==PROF== Disconnected from process 1\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\","
    "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
    "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
constexpr char kWideHeader[] =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\","
    "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
    "\"device__attribute_display_name\",\"dram__bytes_read.sum\","
    "\"gpu__time_duration.sum\",\"sm__ops_path_tensor_src_fp16.sum\","
    "\"launch__grid_dim_x\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Mbyte\","
    "\"usecond\",\"\",\"\"\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 3;
  std::string text = mode == 1 ? kLongHeader : mode == 2 ? kWideHeader : "";
  text.append(reinterpret_cast<const char*>(data + 1), size - 1);
  rt::StatusOr<rt::ncu::Report> report = rt::ncu::ParseNcuCsv(text);
  if (!report.ok()) return 0;
  rt::RecorderOptions ro;
  ro.origin = "fuzz";
  auto recorder = rt::RunRecorder::Create(ro, std::make_unique<DiscardSink>());
  if (!recorder.ok()) return 0;
  rt::SourceOptions options;
  rt::SourceResult result;
  (void)rt::ncu::ReadNcuReport("fuzz.csv", *report, options, recorder->get(),
                               &result);
  (void)(*recorder)->Finish();
  return 0;
}
