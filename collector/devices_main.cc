// `rooftrace devices`: the built-in datasheet table.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "base/cli.h"
#include "base/json_quote.h"
#include "collector/commands.h"
#include "model/datasheet.h"

namespace po = boost::program_options;

namespace rooftrace {
namespace {

std::string Tflops(double v) {
  if (v <= 0) return "-";
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f", v / 1e12);
  return buf;
}

}  // namespace

int DevicesMain(int argc, char** argv) {
  CommandSpec spec;
  spec.name = "devices";
  spec.usage = "rooftrace devices [--format table|csv|json]";
  spec.summary =
      "Prints the built-in datasheet roofs: dense peak TFLOP/s per precision "
      "class (never sparsity figures), DRAM bandwidth, and the ridge point "
      "(FLOP/byte) of the headline precision. Used when no calibrated device "
      "profile (rooftrace calibrate) is given.";
  std::string format;
  spec.options.add_options()(
      "format", po::value<std::string>(&format)->default_value("table"),
      "table, csv or json");
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  if (format != "table" && format != "csv" && format != "json") {
    std::cerr << "rooftrace devices: --format '" << format
              << "' is not one of table, csv, json\n";
    return kExitUsage;
  }

  std::ostringstream out;
  const auto& table = Datasheet();
  if (format == "json") {
    out << "[\n";
    for (size_t i = 0; i < table.size(); ++i) {
      const auto& e = table[i];
      const Precision head = HeadlinePrecision(e);
      out << "  {\"key\": \"" << e.key << "\", \"name\": "
          << json::Quote(e.name) << ", \"dram_bytes_per_s\": "
          << e.dram_bytes_per_s << ", \"peak_flops_per_s\": {";
      bool first = true;
      for (int p = 1; p < kNumPrecisions; ++p) {
        if (e.peak_flops_per_s[p] <= 0) continue;
        out << (first ? "" : ", ") << "\""
            << PrecisionKey(static_cast<Precision>(p))
            << "\": " << e.peak_flops_per_s[p];
        first = false;
      }
      out << "}, \"headline_precision\": \"" << PrecisionKey(head)
          << "\", \"ridge_flops_per_byte\": "
          << RidgePoint(e.peak_flops_per_s[static_cast<int>(head)],
                        e.dram_bytes_per_s)
          << ", \"note\": " << json::Quote(e.note) << "}"
          << (i + 1 < table.size() ? "," : "") << "\n";
    }
    out << "]\n";
  } else {
    const bool csv = format == "csv";
    const char* sep = csv ? "," : "";
    char line[512];
    if (csv) {
      out << "key,name,dram_gb_per_s";
      for (int p = 1; p < kNumPrecisions; ++p) {
        out << "," << PrecisionKey(static_cast<Precision>(p)) << "_tflops";
      }
      out << ",ridge_flop_per_byte,ridge_precision\n";
    } else {
      snprintf(line, sizeof line,
               "%-11s %-22s %7s %6s %6s %6s %6s %7s %7s %7s %7s %7s %7s %7s\n",
               "key", "device", "DRAM", "fp64", "fp32", "fp16", "bf16",
               "fp64tc", "tf32tc", "bf16tc", "fp8tc", "fp4tc", "int8tc",
               "ridge");
      out << line;
      snprintf(line, sizeof line,
               "%-11s %-22s %7s %6s %6s %6s %6s %7s %7s %7s %7s %7s %7s %7s\n",
               "", "", "GB/s", "TF/s", "TF/s", "TF/s", "TF/s", "TF/s", "TF/s",
               "TF/s", "TF/s", "TF/s", "TOP/s", "FLOP/B");
      out << line;
    }
    for (const auto& e : table) {
      const Precision head = HeadlinePrecision(e);
      const double ridge = RidgePoint(
          e.peak_flops_per_s[static_cast<int>(head)], e.dram_bytes_per_s);
      if (csv) {
        out << e.key << ",\"" << e.name << "\"," << e.dram_bytes_per_s / 1e9;
        for (int p = 1; p < kNumPrecisions; ++p) {
          out << sep
              << (e.peak_flops_per_s[p] > 0 ? Tflops(e.peak_flops_per_s[p])
                                            : "");
        }
        char r[32];
        snprintf(r, sizeof r, "%.1f", ridge);
        out << "," << r << "," << PrecisionKey(head) << "\n";
      } else {
        const auto& pk = e.peak_flops_per_s;
        auto peak = [&](Precision p) {
          return Tflops(pk[static_cast<int>(p)]);
        };
        snprintf(
            line, sizeof line,
            "%-11s %-22s %7.0f %6s %6s %6s %6s %7s %7s %7s %7s %7s %7s %7.1f\n",
            std::string(e.key).c_str(), std::string(e.name).c_str(),
            e.dram_bytes_per_s / 1e9, peak(Precision::kFp64).c_str(),
            peak(Precision::kFp32).c_str(), peak(Precision::kFp16).c_str(),
            peak(Precision::kBf16).c_str(),
            peak(Precision::kFp64Tensor).c_str(),
            peak(Precision::kTf32Tensor).c_str(),
            peak(Precision::kFp16Tensor).c_str(),
            peak(Precision::kFp8Tensor).c_str(),
            peak(Precision::kFp4Tensor).c_str(),
            peak(Precision::kInt8Tensor).c_str(), ridge);
        out << line;
      }
    }
    if (!csv) {
      out << "\nDense peaks at boost clock (no sparsity). Ridge = bf16 "
             "tensor peak / DRAM bandwidth.\nMeasure your own GPU with "
             "'rooftrace calibrate' for roofs you can reach.\n";
    }
  }
  std::cout << out.str();
  return kExitOk;
}

}  // namespace rooftrace
