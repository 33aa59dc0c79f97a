#include "pipeline/import_stats.h"

namespace rooftrace {
namespace {

constexpr std::string_view kNames[] = {
#define ROOFTRACE_STAT_NAME_(name, meaning) #name,
    ROOFTRACE_IMPORT_STATS(ROOFTRACE_STAT_NAME_)
#undef ROOFTRACE_STAT_NAME_
};
constexpr std::string_view kMeanings[] = {
#define ROOFTRACE_STAT_MEANING_(name, meaning) meaning,
    ROOFTRACE_IMPORT_STATS(ROOFTRACE_STAT_MEANING_)
#undef ROOFTRACE_STAT_MEANING_
};
constexpr std::string_view kKinds[kNumRecordKinds] = {
    "unknown", "kernel", "memcpy", "gemm",  "nvtx_range",
    "nvtx_mark", "counters", "launch", "device"};

}  // namespace

std::string_view RecordKindKey(int kind) {
  return kind > 0 && kind < kNumRecordKinds ? kKinds[kind] : kKinds[0];
}

std::string_view ImportStatName(ImportStat s) {
  return kNames[static_cast<int>(s)];
}
std::string_view ImportStatMeaning(ImportStat s) {
  return kMeanings[static_cast<int>(s)];
}

void ImportStats::Add(const ImportStats& o) {
  for (size_t i = 0; i < values.size(); ++i) values[i] += o.values[i];
  for (int k = 0; k < kNumRecordKinds; ++k) {
    received[k] += o.received[k];
    producer_dropped[k] += o.producer_dropped[k];
    producer_filtered[k] += o.producer_filtered[k];
    unmatched[k] += o.unmatched[k];
  }
}

std::vector<std::pair<std::string, uint64_t>> ImportStats::Named() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (int i = 0; i < static_cast<int>(ImportStat::kCount); ++i) {
    out.emplace_back(std::string(kNames[i]), values[i]);
  }
  for (int k = 1; k < kNumRecordKinds; ++k) {
    const std::string key(kKinds[k]);
    out.emplace_back("received_" + key, received[k]);
    out.emplace_back("producer_dropped_" + key, producer_dropped[k]);
    out.emplace_back("producer_filtered_" + key, producer_filtered[k]);
    out.emplace_back("unmatched_" + key, unmatched[k]);
  }
  return out;
}

uint64_t ImportStats::TotalProducerDropped() const {
  uint64_t n = 0;
  for (uint64_t d : producer_dropped) n += d;
  return n;
}

}  // namespace rooftrace
