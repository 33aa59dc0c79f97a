#include "libinject/ops_route.h"

#include <string_view>

#include "proto/field_numbers.h"

namespace rooftrace::inject {
namespace {

// Reads an unsigned decimal at `*p`, moving past it; false when none.
bool ReadNumber(std::string_view line, size_t* p, uint64_t* out) {
  size_t i = *p;
  uint64_t v = 0;
  const size_t begin = i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9' &&
         i - begin < 20) {
    v = v * 10 + static_cast<uint64_t>(line[i] - '0');
    ++i;
  }
  if (i == begin) return false;
  *p = i;
  *out = v;
  return true;
}

}  // namespace

OpsSubmitted SubmitOps(Producer* producer, const char* buf, size_t len) {
  OpsSubmitted done;
  if (producer == nullptr || buf == nullptr) return done;
  const std::string_view all(buf, len);
  const uint64_t domain = producer->Intern(kOpsDomain);
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    const std::string_view line = all.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    uint64_t begin_ns = 0, end_ns = 0, tid = 0, depth = 0;
    size_t p = 0;
    const bool ok = ReadNumber(line, &p, &begin_ns) && p < line.size() &&
                    line[p++] == ' ' && ReadNumber(line, &p, &end_ns) &&
                    p < line.size() && line[p++] == ' ' &&
                    ReadNumber(line, &p, &tid) && p < line.size() &&
                    line[p++] == ' ' && ReadNumber(line, &p, &depth) &&
                    p < line.size() && line[p++] == '\t' && p < line.size();
    if (!ok || begin_ns == 0 || end_ns < begin_ns || tid > UINT32_MAX) {
      ++done.malformed;
      continue;
    }
    NvtxRangeRecord r{};
    r.range_id = producer->NextRangeId();
    r.domain_iid = domain;
    r.name_iid = producer->Intern(line.substr(p));
    r.start_ns = begin_ns;
    r.end_ns = end_ns;
    r.thread_id = static_cast<uint32_t>(tid);
    r.end_thread_id = static_cast<uint32_t>(tid);
    r.kind = wire::enums::kRangePushPop;
    r.depth = static_cast<uint32_t>(depth > 255 ? 255 : depth);
    producer->EmitRange(r);
    ++done.accepted;
  }
  return done;
}

}  // namespace rooftrace::inject
