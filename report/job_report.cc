#include "report/job_report.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "report/text_util.h"

namespace rooftrace {
namespace {

std::string Ms(int64_t ns) { return Fixed(static_cast<double>(ns) / 1e6, 3); }

std::string Pct(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return Fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole),
               1);
}

}  // namespace

JobReport BuildJobReport(const std::vector<Report>& reports,
                         const std::vector<int64_t>& ranks) {
  JobReport job;
  const size_t n = reports.size();
  job.ranks.resize(n);
  // Per rank, its collective calls by kind in start order.
  std::vector<std::map<std::string, std::vector<const CollectiveCall*>>> calls(
      n);
  for (size_t r = 0; r < n; ++r) {
    const Report& rep = reports[r];
    RankRow& row = job.ranks[r];
    row.rank = r < ranks.size() ? ranks[r] : static_cast<int64_t>(r);
    row.input = rep.header.input;
    row.device = rep.header.device_name;
    row.kernels = rep.kernel_count;
    row.gpu_ns = rep.total_ns;
    for (const DeviceBusy& b : rep.busy) {
      row.span_ns += b.span_ns;
      row.busy_ns += b.busy_ns;
      row.idle_ns += b.idle_ns;
      row.exposed_comm_ns += std::max<int64_t>(0, b.exposed_comm_ns);
    }
    for (const CollectiveCall& c : rep.collective_calls) {
      row.comm_ns += c.end_ns - c.start_ns;
      calls[r][c.key].push_back(&c);
    }
  }
  // Kinds every rank made; the n-th call of a kind is one collective.
  std::map<std::string, size_t> matched;
  std::map<std::string, size_t> most;
  for (size_t r = 0; r < n; ++r) {
    for (const auto& [key, list] : calls[r]) {
      most[key] = std::max(most[key], list.size());
    }
  }
  for (const auto& [key, count] : most) {
    size_t fewest = count;
    for (size_t r = 0; r < n; ++r) {
      auto it = calls[r].find(key);
      fewest = std::min(fewest, it == calls[r].end() ? 0 : it->second.size());
    }
    for (size_t r = 0; r < n; ++r) {
      auto it = calls[r].find(key);
      const size_t have = it == calls[r].end() ? 0 : it->second.size();
      job.unmatched_calls += static_cast<int64_t>(have - fewest);
    }
    if (fewest > 0 && n > 1) matched[key] = fewest;
  }
  std::vector<std::pair<int64_t, CollectiveSkewRow>> skews;
  for (const auto& [key, count] : matched) {
    CollectiveSkewRow row;
    row.key = key;
    row.calls = static_cast<int64_t>(count);
    int64_t spread_sum = 0;
    for (size_t i = 0; i < count; ++i) {
      int64_t shortest = INT64_MAX, longest = 0;
      size_t last = 0;
      for (size_t r = 0; r < n; ++r) {
        const CollectiveCall& c = *calls[r].at(key)[i];
        const int64_t d = c.end_ns - c.start_ns;
        if (d < shortest) shortest = d, last = r;
        longest = std::max(longest, d);
      }
      for (size_t r = 0; r < n; ++r) {
        const CollectiveCall& c = *calls[r].at(key)[i];
        job.ranks[r].wait_ns += (c.end_ns - c.start_ns) - shortest;
      }
      ++job.ranks[last].last_arrivals;
      spread_sum += longest - shortest;
      row.max_spread_ns = std::max(row.max_spread_ns, longest - shortest);
    }
    row.mean_spread_ns = spread_sum / static_cast<int64_t>(count);
    skews.emplace_back(spread_sum, std::move(row));
  }
  std::stable_sort(skews.begin(), skews.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [sum, row] : skews) job.collectives.push_back(std::move(row));
  std::stable_sort(job.ranks.begin(), job.ranks.end(),
                   [](const RankRow& a, const RankRow& b) {
                     return a.rank < b.rank;
                   });
  return job;
}

void WriteJobTable(const JobReport& job, std::ostream& out) {
  out << "Ranks (" << job.ranks.size() << ")\n";
  char line[512];
  std::snprintf(line, sizeof(line),
                "%-6s %9s %11s %11s %7s %11s %13s %11s %12s  %s\n", "rank",
                "kernels", "GPU ms", "busy ms", "idle %", "comm ms",
                "exposed comm", "waited ms", "last to sync", "input");
  out << line;
  for (const RankRow& r : job.ranks) {
    std::snprintf(line, sizeof(line),
                  "%-6lld %9lld %11s %11s %7s %11s %13s %11s %12lld  %s\n",
                  static_cast<long long>(r.rank),
                  static_cast<long long>(r.kernels), Ms(r.gpu_ns).c_str(),
                  Ms(r.busy_ns).c_str(), Pct(r.idle_ns, r.span_ns).c_str(),
                  Ms(r.comm_ns).c_str(), Ms(r.exposed_comm_ns).c_str(),
                  Ms(r.wait_ns).c_str(),
                  static_cast<long long>(r.last_arrivals), r.input.c_str());
    out << line;
  }
  out << "\nCollectives across ranks (waiting read from kernel durations: the "
         "last rank to arrive has the shortest kernel)\n";
  if (job.collectives.empty()) {
    out << "  no collective was made by every rank\n";
  }
  for (const CollectiveSkewRow& c : job.collectives) {
    out << "  " << c.key << ": " << c.calls << " calls, spread mean "
        << Fixed(static_cast<double>(c.mean_spread_ns) / 1e3, 1) << " us, max "
        << Fixed(static_cast<double>(c.max_spread_ns) / 1e3, 1) << " us\n";
  }
  if (job.unmatched_calls > 0) {
    out << "  " << job.unmatched_calls
        << " collective calls not made by every rank: not compared\n";
  }
}

void WriteJobJson(const JobReport& job, std::ostream& out) {
  out << "{\"ranks\":[";
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    const RankRow& r = job.ranks[i];
    out << (i ? "," : "") << "{\"rank\":" << r.rank
        << ",\"input\":" << JsonString(r.input)
        << ",\"device\":" << JsonString(r.device)
        << ",\"kernels\":" << r.kernels << ",\"gpu_ns\":" << r.gpu_ns
        << ",\"span_ns\":" << r.span_ns << ",\"busy_ns\":" << r.busy_ns
        << ",\"idle_ns\":" << r.idle_ns << ",\"comm_ns\":" << r.comm_ns
        << ",\"exposed_comm_ns\":" << r.exposed_comm_ns
        << ",\"wait_ns\":" << r.wait_ns
        << ",\"last_arrivals\":" << r.last_arrivals << "}";
  }
  out << "],\"collectives\":[";
  for (size_t i = 0; i < job.collectives.size(); ++i) {
    const CollectiveSkewRow& c = job.collectives[i];
    out << (i ? "," : "") << "{\"key\":" << JsonString(c.key)
        << ",\"calls\":" << c.calls
        << ",\"mean_spread_ns\":" << c.mean_spread_ns
        << ",\"max_spread_ns\":" << c.max_spread_ns << "}";
  }
  out << "],\"unmatched_calls\":" << job.unmatched_calls << "}\n";
}

}  // namespace rooftrace
