#include "sources/counter_match.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace rooftrace {
namespace {

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

CounterMatchResult MatchCounters(const CounterMatchInput& in) {
  CounterMatchResult out;
  const size_t total = in.kernels.size();
  const size_t begin = std::min<uint64_t>(in.window.launch_skip, total);
  size_t end = total;
  if (in.window.launch_count) {
    end = std::min<uint64_t>(begin + *in.window.launch_count, total);
  }

  // Every name a timeline kernel is known by -> the kernels (name indices)
  // known by it. A short name may stand for several template instances.
  std::unordered_map<std::string_view, std::vector<uint32_t>> by_alias;
  for (size_t n = 0; n < in.names.size(); ++n) {
    for (const std::string& alias : in.names[n]) {
      if (alias.empty()) continue;
      std::vector<uint32_t>& v = by_alias[alias];
      if (v.empty() || v.back() != n) v.push_back(static_cast<uint32_t>(n));
    }
  }
  // Window positions of the kernels an alias stands for, built on demand.
  std::unordered_map<std::string_view, std::vector<size_t>> positions;
  auto positions_of =
      [&](std::string_view alias,
          const std::vector<uint32_t>& names) -> const std::vector<size_t>& {
    auto it = positions.find(alias);
    if (it != positions.end()) return it->second;
    std::vector<size_t>& p = positions[alias];
    for (size_t i = begin; i < end; ++i) {
      if (std::find(names.begin(), names.end(), in.kernels[i].name) !=
          names.end()) {
        p.push_back(i);
      }
    }
    return p;
  };

  // Correlation ids several kernels share (graph launches).
  std::unordered_map<uint64_t, uint32_t> kernels_of_corr;
  kernels_of_corr.reserve(total);
  for (const TimelineKernel& k : in.kernels)
    ++kernels_of_corr[k.correlation_id];

  std::unordered_map<std::string_view, int64_t> next_occurrence;
  struct Matched {
    size_t pos, sample;
    CounterRecord record;
  };
  std::vector<Matched> matched;
  std::unordered_set<size_t> used_positions;
  std::unordered_set<uint64_t> used_correlations;
  std::string first_unknown;
  for (size_t si = 0; si < in.samples.size(); ++si) {
    const CounterSample& s = in.samples[si];
    auto alias = by_alias.find(s.kernel_name);
    if (alias == by_alias.end()) {
      ++out.unknown_name;
      if (first_unknown.empty()) first_unknown = s.kernel_name;
      continue;
    }
    size_t pos = 0;
    if (s.launch_index >= 0) {
      pos = begin + static_cast<uint64_t>(s.launch_index);
      if (pos >= end) {
        ++out.beyond_timeline;
        continue;
      }
      const std::vector<uint32_t>& names = alias->second;
      if (std::find(names.begin(), names.end(), in.kernels[pos].name) ==
          names.end()) {
        ++out.name_mismatch;
        continue;
      }
    } else {
      const std::vector<size_t>& p = positions_of(alias->first, alias->second);
      int64_t occurrence = s.occurrence;
      if (occurrence < 0) {
        // The next launch of that name no sample has measured yet (another
        // name of the same kernel may have taken some).
        int64_t& next = next_occurrence[alias->first];
        while (static_cast<uint64_t>(next) < p.size() &&
               used_positions.count(p[static_cast<size_t>(next)])) {
          ++next;
        }
        occurrence = next++;
      }
      if (static_cast<uint64_t>(occurrence) >= p.size()) {
        ++out.beyond_timeline;
        continue;
      }
      pos = p[static_cast<size_t>(occurrence)];
    }
    const uint64_t corr = in.kernels[pos].correlation_id;
    if (kernels_of_corr[corr] > 1) {
      ++out.shared_correlation;
      continue;
    }
    if (!used_positions.insert(pos).second ||
        !used_correlations.insert(corr).second) {
      ++out.duplicate;
      continue;
    }
    CounterRecord r = s.values;
    r.correlation_id = corr;
    matched.push_back({pos, si, r});
  }
  std::sort(matched.begin(), matched.end(),
            [](const Matched& a, const Matched& b) { return a.pos < b.pos; });
  out.counters.reserve(matched.size());
  out.sample_of.reserve(matched.size());
  for (const Matched& m : matched) {
    out.counters.push_back(m.record);
    out.sample_of.push_back(m.sample);
  }
  out.matched = matched.size();
  out.kernels_without_counters = (end - begin) - matched.size();

  out.summary = std::to_string(out.matched) + " of " +
                Plural(in.samples.size(), "counter sample", "counter samples") +
                " matched a kernel";
  if (out.unknown_name) {
    out.summary += "; " + Plural(out.unknown_name, "names", "name") +
                   " no kernel of the timeline (first: '" + first_unknown +
                   "')";
  }
  if (out.beyond_timeline) {
    out.summary += "; " + std::to_string(out.beyond_timeline) +
                   " measured more launches than the timeline holds";
  }
  if (out.name_mismatch) {
    out.summary += "; " + std::to_string(out.name_mismatch) +
                   " name another kernel than the timeline's at that launch";
  }
  if (out.duplicate) {
    out.summary += "; " + std::to_string(out.duplicate) +
                   " measured a launch already matched";
  }
  if (out.shared_correlation) {
    out.summary += "; " + std::to_string(out.shared_correlation) +
                   " measured a kernel of a CUDA graph launch, whose kernels "
                   "share one correlation id: not attached";
  }
  out.summary +=
      "; " +
      Plural(out.kernels_without_counters, "kernel of the window has",
             "kernels of the "
             "window have") +
      " no counters";
  return out;
}

}  // namespace rooftrace
