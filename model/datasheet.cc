#include "model/datasheet.h"

#include <algorithm>
#include <cctype>

namespace rooftrace {
namespace {

constexpr double T = 1e12;  // TFLOP/s
constexpr double G = 1e9;   // GB/s
constexpr double MHz = 1e6;

// Order of the peak array: unknown, fp64, fp32, fp16, fp64_tc, tf32_tc,
// bf16_tc, fp8_tc, int8_tc, bf16, fp4_tc (model/precision.h). bf16 on
// CUDA cores is listed where it differs from fp16 (A100: half) or the
// vendor states it (Hopper: equal); 0 elsewhere, where Roofs::Peak takes
// fp16's. fp4_tc only on GPUs with fp4 tensor instructions (B200; MI355X:
// twice its fp8 rate, 16,384 FLOPs per CU per clock). Figures are the
// vendors' dense datasheet peaks at boost clock, and the last figure is
// that boost clock: each reproduces
// its fp32 peak as SMs x fp32 lanes x 2 x clock (datasheet_test checks it).
// B200's figures name no boost clock: left 0, not guessed.
// Vector fp16/bf16 (the fp16 and bf16 classes) of B200 and the Instinct
// parts: docs/device-profile.md names where each comes from.
std::vector<DatasheetEntry> BuildTable() {
  return {
      {"t4", "NVIDIA T4", {"t4", "", ""}, 320 * G,
       {0, 0.25 * T, 8.1 * T, 0, 0, 0, 65 * T, 0, 130 * T, 0, 0},
       "Turing TU104, 70 W", 1590 * MHz},
      {"v100", "NVIDIA V100 SXM2", {"v100", "", ""}, 900 * G,
       {0, 7.8 * T, 15.7 * T, 31.4 * T, 0, 0, 125 * T, 0, 0, 0, 0},
       "Volta GV100, SXM2", 1530 * MHz},
      {"a100-80gb", "NVIDIA A100 80GB SXM", {"a100", "80gb", ""}, 2039 * G,
       {0, 9.7 * T, 19.5 * T, 78 * T, 19.5 * T, 156 * T, 312 * T, 0,
        624 * T, 39 * T, 0},
       "Ampere GA100, SXM4 80GB HBM2e", 1410 * MHz},
      {"a100-40gb", "NVIDIA A100 40GB SXM", {"a100", "", ""}, 1555 * G,
       {0, 9.7 * T, 19.5 * T, 78 * T, 19.5 * T, 156 * T, 312 * T, 0,
        624 * T, 39 * T, 0},
       "Ampere GA100, SXM4 40GB HBM2", 1410 * MHz},
      {"h100-pcie", "NVIDIA H100 PCIe", {"h100", "pcie", ""}, 2000 * G,
       {0, 25.6 * T, 51.2 * T, 102.4 * T, 51.2 * T, 378 * T, 756 * T,
        1513 * T, 1513 * T, 102.4 * T, 0},
       "Hopper GH100, PCIe 80GB HBM2e", 1755 * MHz},
      {"h100-sxm", "NVIDIA H100 SXM5 80GB", {"h100", "", ""}, 3350 * G,
       {0, 34 * T, 67 * T, 133.8 * T, 67 * T, 494.7 * T, 989.4 * T,
        1978.9 * T, 1978.9 * T, 133.8 * T, 0},
       "Hopper GH100, SXM5 80GB HBM3", 1980 * MHz},
      {"h200", "NVIDIA H200 SXM 141GB", {"h200", "", ""}, 4800 * G,
       {0, 34 * T, 67 * T, 133.8 * T, 67 * T, 494.7 * T, 989.4 * T,
        1978.9 * T, 1978.9 * T, 133.8 * T, 0},
       "Hopper GH100, SXM 141GB HBM3e", 1980 * MHz},
      {"l40s", "NVIDIA L40S", {"l40s", "", ""}, 864 * G,
       {0, 1.41 * T, 91.6 * T, 91.6 * T, 0, 183.2 * T, 362.1 * T, 733 * T,
        733 * T, 0, 0},
       "Ada AD102, 48GB GDDR6", 2520 * MHz},
      {"l4", "NVIDIA L4", {"l4", "", ""}, 300 * G,
       {0, 0.49 * T, 30.3 * T, 30.3 * T, 0, 60 * T, 121 * T, 242.5 * T,
        242.5 * T, 0, 0},
       "Ada AD104, 24GB GDDR6, 72 W", 2040 * MHz},
      {"b200", "NVIDIA B200", {"b200", "", ""}, 8000 * G,
       {0, 37 * T, 75 * T, 150 * T, 37 * T, 1125 * T, 2250 * T, 4500 * T,
        4500 * T, 150 * T, 9000 * T},
       "Blackwell GB100, HGX B200 per-GPU dense figures (fp32 600 TFLOP/s "
       "per 8 GPUs); fp16/bf16 on CUDA cores twice fp32 (compute capability "
       "10.0: 256 16-bit FMA results per SM per clock, 128 fp32)",
       0},
      // CDNA3/CDNA4 vector (non-matrix) fp16 and bf16: the datasheets give
      // matrix figures only. Packed 16-bit FMAs (v_pk_fma_f16) issue at the
      // packed fp32 rate the fp32 vector peak counts (256 FLOPs per CU per
      // clock); bf16 vector math runs in fp32 (no packed bf16 FMA), so both
      // take the fp32 vector peak.
      {"mi300x", "AMD Instinct MI300X", {"mi300x", "", ""}, 5300 * G,
       {0, 81.7 * T, 163.4 * T, 163.4 * T, 163.4 * T, 653.7 * T, 1307.4 * T,
        2614.9 * T, 2614.9 * T, 163.4 * T, 0},
       "CDNA3, 304 CUs, 192GB HBM3; the roof of imported ROCm traces; "
       "fp16/bf16 vector at the fp32 vector peak",
       2100 * MHz},
      {"mi325x", "AMD Instinct MI325X", {"mi325x", "", ""}, 6000 * G,
       {0, 81.7 * T, 163.4 * T, 163.4 * T, 163.4 * T, 653.7 * T, 1307.4 * T,
        2614.9 * T, 2614.9 * T, 163.4 * T, 0},
       "CDNA3, 304 CUs (MI300X's compute), 256GB HBM3e; fp16/bf16 vector "
       "at the fp32 vector peak",
       2100 * MHz},
      {"mi355x", "AMD Instinct MI355X", {"mi355x", "", ""}, 8000 * G,
       {0, 78.6 * T, 157.3 * T, 157.3 * T, 78.6 * T, 0, 2516.6 * T,
        5033.2 * T, 5033.2 * T, 157.3 * T, 10066.4 * T},
       "CDNA4, 256 CUs at 2.4 GHz (8,192 fp8 FLOPs per CU per clock), "
       "288GB HBM3e; no TF32 matrix unit; fp6 not a class here; fp16/bf16 "
       "vector at the fp32 vector peak",
       2400 * MHz},
  };
}

// Public link figures, one direction per GPU (the vendors' totals halved):
// the roof of collectives' bus bandwidth and of predict's tensor
// parallelism. docs/device-profile.md names each figure's source.
constexpr DatasheetLink kLinks[] = {
    {"t4", 16 * G, "PCIe 3.0 x16 (no NVLink)"},
    {"v100", 150 * G, "NVLink 2 (6 links, 300 GB/s both ways)"},
    {"a100-80gb", 300 * G, "NVLink 3 (12 links, 600 GB/s both ways)"},
    {"a100-40gb", 300 * G, "NVLink 3 (12 links, 600 GB/s both ways)"},
    {"h100-pcie", 64 * G,
     "PCIe 5.0 x16 (a bridged NVLink pair: 300 GB/s each way)"},
    {"h100-sxm", 450 * G, "NVLink 4 (18 links, 900 GB/s both ways)"},
    {"h200", 450 * G, "NVLink 4 (18 links, 900 GB/s both ways)"},
    {"l40s", 32 * G, "PCIe 4.0 x16 (no NVLink)"},
    {"l4", 32 * G, "PCIe 4.0 x16 (no NVLink)"},
    {"b200", 900 * G, "NVLink 5 (18 links, 1.8 TB/s both ways)"},
    {"mi300x", 448 * G,
     "xGMI Infinity Fabric (7 links, 896 GB/s both ways)"},
    {"mi325x", 448 * G,
     "xGMI Infinity Fabric (7 links, 896 GB/s both ways)"},
    {"mi355x", 537.6 * G,
     "xGMI Infinity Fabric (7 links, 1,075 GB/s both ways)"},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Word-ish match: "l4" must not match inside "l40s"; the character after a
// match may not be a digit or letter continuing the model number.
bool ContainsToken(const std::string& haystack, std::string_view needle) {
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    const size_t end = pos + needle.size();
    const bool left_ok = pos == 0 || !std::isalnum(static_cast<unsigned char>(
                                         haystack[pos - 1]));
    const bool right_ok =
        end == haystack.size() ||
        !std::isalnum(static_cast<unsigned char>(haystack[end])) ||
        needle == "80gb" || needle == "pcie";
    if (left_ok && right_ok) return true;
  }
  return false;
}

}  // namespace

const std::vector<DatasheetEntry>& Datasheet() {
  static const std::vector<DatasheetEntry> table = BuildTable();
  return table;
}

const DatasheetEntry* FindDatasheetEntry(std::string_view device_name_or_key) {
  const std::string name = Lower(device_name_or_key);
  for (const auto& e : Datasheet()) {
    if (name == e.key) return &e;
  }
  for (const auto& e : Datasheet()) {
    bool all = true;
    for (std::string_view m : e.match) {
      if (!m.empty() && !ContainsToken(name, m)) all = false;
    }
    if (all) return &e;
  }
  return nullptr;
}

const DatasheetLink* FindDatasheetLink(const DatasheetEntry& e) {
  for (const DatasheetLink& l : kLinks) {
    if (l.key == e.key) return &l;
  }
  return nullptr;
}

Precision HeadlinePrecision(const DatasheetEntry& e) {
  // The precision inference engineers quote: bf16 tensor when present.
  if (e.peak_flops_per_s[static_cast<int>(Precision::kFp16Tensor)] > 0) {
    return Precision::kFp16Tensor;
  }
  int best = 1;
  for (int i = 1; i < kNumPrecisions; ++i) {
    if (e.peak_flops_per_s[i] > e.peak_flops_per_s[best]) best = i;
  }
  return static_cast<Precision>(best);
}

}  // namespace rooftrace
