#include "sources/counter_match.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "model/kernel_names.h"

namespace rooftrace {
namespace {

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  for (size_t pos = s->find(from); pos != std::string::npos;
       pos = s->find(from, pos + to.size())) {
    s->replace(pos, from.size(), to);
  }
}

// The index of the ')' closing the '(' at `open`, or npos.
size_t Closing(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return i;
  }
  return std::string::npos;
}

}  // namespace

std::string CounterNameKey(std::string_view name) {
  std::string s = Demangle(name);
  ReplaceAll(&s, "(anonymous namespace)", "{anon}");
  ReplaceAll(&s, "<unnamed>", "{anon}");
  // Whole-word `const` goes (east or west of its type).
  std::string t;
  t.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 5, "const") == 0 && (i == 0 || !IsIdentChar(s[i - 1])) &&
        (i + 5 == s.size() || !IsIdentChar(s[i + 5]))) {
      i += 5;
      continue;
    }
    t += s[i++];
  }
  s.clear();
  for (char c : t) {
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  }
  // NVIDIA's "[lambda(int)(instance1)]" is the runtime's "{lambda(int)#1}".
  for (size_t at = s.find("[lambda("); at != std::string::npos;
       at = s.find("[lambda(", at + 1)) {
    const size_t params_end = Closing(s, at + 7);
    if (params_end == std::string::npos) break;
    const std::string_view tail =
        std::string_view(s).substr(params_end + 1);
    if (tail.rfind("(instance", 0) != 0) continue;
    const size_t close = tail.find(")]");
    if (close == std::string_view::npos) continue;
    const std::string number(tail.substr(9, close - 9));
    s.replace(params_end + 1, close + 2, "#" + number + "}");
    s[at] = '{';
  }
  // Casts of literals ("(int)4", "(bool)0") and parameter lists (any group
  // after a name, a template's '>' or a lambda) go; the casts first.
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '(') {
      const char before = out.empty() ? '\0' : out.back();
      const size_t close = Closing(s, i);
      if (close != std::string::npos) {
        const char after = close + 1 < s.size() ? s[close + 1] : '\0';
        const bool cast = (before == '<' || before == ',') &&
                          (std::isdigit(static_cast<unsigned char>(after)) ||
                           after == '-');
        const bool params = IsIdentChar(before) || before == '>' ||
                            before == '}' || before == ']';
        if (cast || params) {
          i = close + 1;
          continue;
        }
      }
    }
    out += s[i++];
  }
  // Template literals: "3ul" -> "3", "true" -> "1", "false" -> "0".
  std::string key;
  key.reserve(out.size());
  for (size_t i = 0; i < out.size();) {
    const char before = key.empty() ? '\0' : key.back();
    const bool arg_start = before == '<' || before == ',';
    if (arg_start && (out.compare(i, 4, "true") == 0 ||
                      out.compare(i, 5, "false") == 0)) {
      const size_t n = out[i] == 't' ? 4 : 5;
      const char after = i + n < out.size() ? out[i + n] : '\0';
      if (after == ',' || after == '>') {
        key += n == 4 ? '1' : '0';
        i += n;
        continue;
      }
    }
    if (std::isdigit(static_cast<unsigned char>(out[i])) &&
        !IsIdentChar(before)) {
      size_t j = i;
      while (j < out.size() && std::isdigit(static_cast<unsigned char>(out[j])))
        ++j;
      size_t k = j;
      while (k < out.size() && std::strchr("uUlL", out[k]) != nullptr) ++k;
      const char after = k < out.size() ? out[k] : '\0';
      key.append(out, i, j - i);
      i = (after == ',' || after == '>') ? k : j;
      continue;
    }
    key += out[i++];
  }
  return key;
}

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
  // The same by CounterNameKey, for samples no exact name matches; built
  // on the first such sample.
  std::unordered_map<std::string, std::vector<uint32_t>> by_key;
  auto find_by_key = [&](std::string_view name)
      -> const std::vector<uint32_t>* {
    if (by_key.empty()) {
      for (size_t n = 0; n < in.names.size(); ++n) {
        for (const std::string& alias : in.names[n]) {
          if (alias.empty()) continue;
          std::vector<uint32_t>& v = by_key[CounterNameKey(alias)];
          if (v.empty() || v.back() != n) v.push_back(static_cast<uint32_t>(n));
        }
      }
    }
    auto it = by_key.find(CounterNameKey(name));
    return it == by_key.end() ? nullptr : &it->second;
  };
  // Window positions of the kernels an alias (or a key) stands for, built
  // on demand; keyed by the alias's kernel list, one per alias.
  std::unordered_map<const std::vector<uint32_t>*, std::vector<size_t>>
      positions;
  auto positions_of =
      [&](const std::vector<uint32_t>& names) -> const std::vector<size_t>& {
    auto it = positions.find(&names);
    if (it != positions.end()) return it->second;
    std::vector<size_t>& p = positions[&names];
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

  std::unordered_map<const std::vector<uint32_t>*, int64_t> next_occurrence;
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
    const std::vector<uint32_t>* names_of_sample =
        alias != by_alias.end() ? &alias->second : find_by_key(s.kernel_name);
    if (names_of_sample == nullptr) {
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
      const std::vector<uint32_t>& names = *names_of_sample;
      if (std::find(names.begin(), names.end(), in.kernels[pos].name) ==
          names.end()) {
        ++out.name_mismatch;
        continue;
      }
    } else {
      const std::vector<size_t>& p = positions_of(*names_of_sample);
      int64_t occurrence = s.occurrence;
      if (occurrence < 0) {
        // The next launch of that name no sample has measured yet (another
        // name of the same kernel may have taken some).
        int64_t& next = next_occurrence[names_of_sample];
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
