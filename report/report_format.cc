#include "report/report_format.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "report/comms_svg.h"
#include "report/roofline_svg.h"
#include "report/text_util.h"

namespace rooftrace {
namespace {

std::optional<double> Scaled(std::optional<double> v, double scale) {
  if (!v) return std::nullopt;
  return *v * scale;
}

std::string PhaseCell(const GroupRow& g) {
  if (g.phase_share >= 0.995) return g.phase;
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s %.0f%%", g.phase.c_str(),
                g.phase_share * 100);
  return buf;
}

// Where the run's data came from: "kineto file F sha256 HASH" (the hash cut
// to 16 hex digits and "…" unless `full_hash`), or a live collection.
std::string SourceLine(const RunRow& run, bool full_hash) {
  if (run.source_format.empty() && run.source_file.empty()) {
    return "live collection (no source file)";
  }
  std::string hash = run.source_sha256.empty() ? "unknown" : run.source_sha256;
  if (!full_hash && hash.size() > 16) hash = hash.substr(0, 16) + "\u2026";
  return (run.source_format.empty() ? "unknown format" : run.source_format) +
         " file " + (run.source_file.empty() ? "?" : run.source_file) +
         " sha256 " + hash;
}

// The columns of the kernel table, shared by table, CSV-less HTML.
struct Column {
  const char* title;
  bool left;
  std::string (*cell)(const GroupRow&);
};

const std::vector<Column>& TableColumns() {
  static const std::vector<Column> kColumns = {
      {"name", true, [](const GroupRow& g) { return g.name; }},
      {"count", false, [](const GroupRow& g) { return std::to_string(g.count); }},
      {"total ms", false,
       [](const GroupRow& g) {
         return Fixed(static_cast<double>(g.total_ns) * 1e-6, 3);
       }},
      {"time %", false,
       [](const GroupRow& g) { return Fixed(g.time_share * 100, 1); }},
      {"mean us", false, [](const GroupRow& g) { return Fixed(g.mean_ns * 1e-3, 2); }},
      {"GFLOP", false, [](const GroupRow& g) { return Fixed(Scaled(g.flops, 1e-9), 3); }},
      {"MB", false, [](const GroupRow& g) { return Fixed(Scaled(g.bytes, 1e-6), 3); }},
      {"AI", false, [](const GroupRow& g) { return Fixed(g.ai, 2); }},
      {"TFLOP/s", false,
       [](const GroupRow& g) { return Fixed(Scaled(g.achieved_flops_per_s, 1e-12), 3); }},
      {"GB/s", false,
       [](const GroupRow& g) { return Fixed(Scaled(g.achieved_bytes_per_s, 1e-9), 1); }},
      {"% roof", false,
       [](const GroupRow& g) { return Fixed(Scaled(g.fraction_of_roof, 100), 1); }},
      {"bound", true, [](const GroupRow& g) { return g.bound; }},
      {"phase", true, PhaseCell},
      {"note", true, GroupNote},
  };
  return kColumns;
}

// The note column is printed only when a row has a note.
bool AnyNote(const std::vector<GroupRow>& rows) {
  for (const GroupRow& g : rows) {
    if (g.above_roof_count > 0) return true;
  }
  return false;
}

// "12 kernels (3.4% of GPU time) computed above 100% of their roof: the
// model exceeds the roof, figures suspect (rows marked)"; empty when none.
std::string AboveRoofLine(const Report& r) {
  if (r.kernels_above_roof <= 0) return "";
  return std::to_string(r.kernels_above_roof) +
         (r.kernels_above_roof == 1 ? " kernel (" : " kernels (") +
         Fixed(r.total_ns > 0 ? 100.0 * static_cast<double>(r.ns_above_roof) /
                                    static_cast<double>(r.total_ns)
                              : 0.0,
               1) +
         "% of GPU time) computed above 100% of their roof: the model "
         "exceeds the roof, figures suspect (rows marked, drawn apart on the "
         "roofline)";
}

constexpr size_t kNameWidth = 60;

std::string Pad(const std::string& s, size_t width, bool left) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return left ? s + fill : fill + s;
}

std::string ClipName(const std::string& s) {
  if (s.size() <= kNameWidth) return s;
  return s.substr(0, kNameWidth - 3) + "...";
}

std::string RoofSummary(const RoofTable& roofs) {
  if (roofs.empty()) {
    return "no roofs known for this run: pass --device-profile FILE|KEY "
           "(e.g. h100-sxm) to judge kernels against a roof";
  }
  std::string out;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "DRAM %sB/s",
                SiPrefix(roofs.dram_bytes_per_s).c_str());
  out = buf;
  for (auto it = roofs.roofs.rbegin(); it != roofs.roofs.rend(); ++it) {
    std::snprintf(buf, sizeof(buf), "; %s %sFLOP/s (ridge %.1f)",
                  it->precision.c_str(), SiPrefix(it->peak_flops_per_s).c_str(),
                  it->ridge_flops_per_byte);
    out += buf;
  }
  if (roofs.link_bytes_per_s > 0) {
    std::snprintf(buf, sizeof(buf), "; link %sB/s per direction",
                  SiPrefix(roofs.link_bytes_per_s).c_str());
    out += buf;
    if (!roofs.link_name.empty()) out += " (" + roofs.link_name + ")";
  }
  return out;
}

// "device 0: busy 0.307 of 3.908 ms wall (...), idle 3.601 ms = 92.1%":
// one device's line of the timeline's busy/idle breakdown, with a note
// when the figure is approximate (busy_time.h).
std::string BusyLine(const DeviceBusy& b) {
  return "device " + std::to_string(b.device_id) + ": busy " +
         Fixed(b.busy_ns * 1e-6, 3) + " of " + Fixed(b.span_ns * 1e-6, 3) +
         " ms wall (first kernel start to last kernel end), idle " +
         Fixed(b.idle_ns * 1e-6, 3) + " ms = " +
         Fixed(100.0 * b.idle_share, 1) + "%" +
         (b.exposed_comm_ns > 0 ? "; exposed communication " +
                                      Fixed(b.exposed_comm_ns * 1e-6, 3) +
                                      " ms"
                                : std::string()) +
         (b.exposed_copy_ns > 0 ? "; exposed copies " +
                                      Fixed(b.exposed_copy_ns * 1e-6, 3) +
                                      " ms"
                                : std::string()) +
         (b.late_intervals == 0
              ? std::string()
              : "; approximate: " + std::to_string(b.late_intervals) +
                    (b.late_intervals == 1 ? " interval" : " intervals") +
                    " arrived after older time was summed, busy may be up "
                    "to " +
                    Fixed(b.busy_uncertain_ns * 1e-6, 3) + " ms more");
}

// "all_reduce bf16 bytes=8388608 ranks=8: 12 kernels, 1.200 ms, algbw
// 83.89 GB/s, busbw 146.80 GB/s = 32.6% of link roof, bound link": one
// kind of collective call, on the link roof when the GPU's link is known.
// GB/s are 10^9 bytes per second, as NCCL's own tests print them.
std::string CollectiveLine(const CollectiveRow& c) {
  std::string out = (c.shape.empty() ? std::string("(no message size)")
                                     : c.shape) +
                    ": " + std::to_string(c.count) +
                    (c.count == 1 ? " kernel, " : " kernels, ") +
                    Fixed(c.total_ns * 1e-6, 3) + " ms";
  if (!c.algbw) {
    return out + (c.shape.empty()
                      ? ", no bandwidth (the trace gives no message size)"
                      : ", no bandwidth (no kernel time)");
  }
  out += ", algbw " + Fixed(*c.algbw * 1e-9, 2) + " GB/s, busbw ";
  out += c.busbw ? Fixed(*c.busbw * 1e-9, 2) + " GB/s"
                 : std::string("unknown (no group size)");
  if (c.fraction_of_link) {
    out += " = " + Fixed(*c.fraction_of_link * 100, 1) +
           "% of link roof, bound link";
  }
  return out;
}

std::string HeaderTitle(const Report& r) {
  return "Kernels by " + std::string(GroupByName(r.group_by));
}

// Prints `cells` under `titles`, each column as wide as its widest cell;
// `left` says which columns are left-aligned.
void PrintAligned(const std::vector<std::string>& titles,
                  const std::vector<bool>& left,
                  const std::vector<std::vector<std::string>>& cells,
                  std::ostream& out) {
  std::vector<size_t> widths(titles.size());
  for (size_t c = 0; c < titles.size(); ++c) widths[c] = titles[c].size();
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += (c ? "  " : "") + Pad(row[c], widths[c], left[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print(titles);
  for (const auto& row : cells) print(row);
}

// "< 2 us", "2-5 us", ..., ">= 1000 us": a duration bucket's range.
std::string BucketName(int b) {
  auto us = [](int64_t ns) { return std::to_string(ns / 1000); };
  if (b == 0) return "< " + us(kDurationBucketNs[1]) + " us";
  if (b == kNumDurationBuckets - 1) {
    return ">= " + us(kDurationBucketNs[b]) + " us";
  }
  return us(kDurationBucketNs[b]) + "-" + us(kDurationBucketNs[b + 1]) +
         " us";
}

// The short-kernel study: kernels and GPU time by duration.
void DurationTableText(const Report& r, std::ostream& out) {
  if (r.kernel_count == 0) return;
  out << "\nKernels by duration (short kernels are launch-bound, not "
         "roof-bound)\n";
  std::vector<std::vector<std::string>> cells;
  for (int b = 0; b < kNumDurationBuckets; ++b) {
    const DurationBucket& d = r.durations[b];
    if (d.kernels == 0) continue;
    cells.push_back(
        {BucketName(b), std::to_string(d.kernels),
         Fixed(100.0 * static_cast<double>(d.kernels) /
                   static_cast<double>(r.kernel_count),
               1),
         Fixed(static_cast<double>(d.time_ns) * 1e-6, 3),
         Fixed(r.total_ns ? 100.0 * static_cast<double>(d.time_ns) /
                                static_cast<double>(r.total_ns)
                          : 0.0,
               1)});
  }
  PrintAligned({"duration", "kernels", "kernels %", "total ms", "time %"},
               {true, false, false, false, false}, cells, out);
}

// The phase table: the kernel table's column names for the same numbers.
void PhaseTableText(const Report& r, std::ostream& out) {
  if (r.phases.empty()) return;
  out << "\nPhase summary\n";
  std::vector<std::vector<std::string>> cells;
  for (const PhaseRow& p : r.phases) {
    cells.push_back({p.phase, std::to_string(p.steps), std::to_string(p.count),
                     Fixed(static_cast<double>(p.time_ns) * 1e-6, 3),
                     Fixed(p.share * 100, 1), Fixed(Scaled(p.flops, 1e-9), 3),
                     Fixed(p.ai, 2), Fixed(Scaled(p.fraction_of_roof, 100), 1),
                     Fixed(Scaled(p.achieved_flops_per_s, 1e-12), 3)});
  }
  PrintAligned({"phase", "steps", "count", "total ms", "time %", "GFLOP", "AI",
                "% roof", "TFLOP/s"},
               {true, false, false, false, false, false, false, false, false},
               cells, out);
}

class TableWriter : public ReportWriter {
 public:
  void Write(const Report& r, std::ostream& out) const override {
    WriteHeaderText(r, out);
    out << "\n" << HeaderTitle(r);
    if (r.groups_omitted > 0) {
      out << " (top " << r.groups.size() << " of "
          << r.groups.size() + r.groups_omitted << ")";
    }
    out << "\n";
    const auto& all_cols = TableColumns();
    const size_t ncols = AnyNote(r.groups) ? all_cols.size()
                                           : all_cols.size() - 1;
    const std::vector<Column> cols(all_cols.begin(), all_cols.begin() + ncols);
    std::vector<std::string> titles;
    std::vector<bool> left;
    for (const Column& c : cols) {
      titles.push_back(c.title);
      left.push_back(c.left);
    }
    std::vector<std::vector<std::string>> cells;
    for (const GroupRow& g : r.groups) {
      std::vector<std::string> row;
      for (size_t c = 0; c < cols.size(); ++c) {
        std::string v = cols[c].cell(g);
        if (c == 0) v = ClipName(v);
        row.push_back(std::move(v));
      }
      cells.push_back(std::move(row));
    }
    PrintAligned(titles, left, cells, out);
    if (r.groups_omitted > 0) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), "(%lld more groups: %.3f ms, %.1f%% of time)\n",
                    static_cast<long long>(r.groups_omitted), r.omitted_ns * 1e-6,
                    r.total_ns ? 100.0 * r.omitted_ns / r.total_ns : 0.0);
      out << buf;
    }
    PhaseTableText(r, out);
    DurationTableText(r, out);
  }
};

const char* const kCsvHeader =
    "name,key,family,shape,count,total_ns,mean_ns,time_share,flops,bytes,ai,"
    "achieved_flops_per_s,achieved_bytes_per_s,fraction_of_roof,bound,phase,"
    "phase_share,precision,flops_source,bytes_source,median_ns,min_ns,max_ns,"
    "stddev_ns,shape_count,shape_share,framework_shape,above_roof_count,"
    "above_roof_ns,note\n";

void WriteCsvRow(const GroupRow& g, std::ostream& out) {
  out << CsvField(g.name) << ',' << CsvField(g.key) << ',' << CsvField(g.family)
      << ',' << CsvField(g.shape) << ',' << g.count << ',' << g.total_ns << ','
      << Plain(g.mean_ns) << ',' << Plain(g.time_share) << ',' << Plain(g.flops)
      << ',' << Plain(g.bytes) << ',' << Plain(g.ai) << ','
      << Plain(g.achieved_flops_per_s) << ',' << Plain(g.achieved_bytes_per_s)
      << ',' << Plain(g.fraction_of_roof) << ',' << g.bound << ',' << g.phase
      << ',' << Plain(g.phase_share) << ',' << g.precision << ','
      << g.flops_source << ',' << g.bytes_source << ',' << Plain(g.median_ns)
      << ',' << g.min_ns << ',' << g.max_ns << ',' << Plain(g.stddev_ns) << ','
      << g.shape_count << ',' << Plain(g.shape_share) << ','
      << CsvField(g.framework_shape) << ',' << g.above_roof_count << ','
      << g.above_roof_ns << ',' << CsvField(GroupNote(g)) << '\n';
}

class CsvWriter : public ReportWriter {
 public:
  void Write(const Report& r, std::ostream& out) const override {
    out << kCsvHeader;
    for (const GroupRow& g : r.groups) WriteCsvRow(g, out);
  }
};

void WriteJsonGroup(const GroupRow& g, std::ostream& out) {
  out << "{\"name\":" << JsonString(g.name) << ",\"key\":" << JsonString(g.key)
      << ",\"family\":" << JsonString(g.family)
      << ",\"shape\":" << JsonString(g.shape)
      << ",\"framework_shape\":" << JsonString(g.framework_shape)
      << ",\"count\":" << g.count
      << ",\"shape_count\":" << g.shape_count
      << ",\"shape_share\":" << JsonNumber(g.shape_share)
      << ",\"total_ns\":" << g.total_ns << ",\"mean_ns\":" << JsonNumber(g.mean_ns)
      << ",\"median_ns\":" << JsonNumber(g.median_ns)
      << ",\"min_ns\":" << g.min_ns << ",\"max_ns\":" << g.max_ns
      << ",\"stddev_ns\":" << JsonNumber(g.stddev_ns)
      << ",\"time_share\":" << JsonNumber(g.time_share)
      << ",\"flops\":" << JsonNumber(g.flops) << ",\"bytes\":" << JsonNumber(g.bytes)
      << ",\"ai\":" << JsonNumber(g.ai)
      << ",\"achieved_flops_per_s\":" << JsonNumber(g.achieved_flops_per_s)
      << ",\"achieved_bytes_per_s\":" << JsonNumber(g.achieved_bytes_per_s)
      << ",\"fraction_of_roof\":" << JsonNumber(g.fraction_of_roof)
      << ",\"bound\":" << JsonString(g.bound) << ",\"phase\":" << JsonString(g.phase)
      << ",\"phase_share\":" << JsonNumber(g.phase_share) << ",\"phase_time_ns\":{";
  bool first = true;
  for (int i = 0; i < kNumPhases; ++i) {
    if (!g.phase_time_ns[i]) continue;
    out << (first ? "" : ",") << JsonString(kPhaseNames[i]) << ':'
        << g.phase_time_ns[i];
    first = false;
  }
  out << "},\"precision\":" << JsonString(g.precision)
      << ",\"flops_source\":" << JsonString(g.flops_source)
      << ",\"bytes_source\":" << JsonString(g.bytes_source)
      << ",\"above_roof_count\":" << g.above_roof_count
      << ",\"above_roof_ns\":" << g.above_roof_ns
      << ",\"note\":" << JsonString(GroupNote(g)) << "}";
}

class JsonWriter : public ReportWriter {
 public:
  void Write(const Report& r, std::ostream& out) const override {
    const ReportHeader& h = r.header;
    out << "{\"input\":" << JsonString(h.input)
        << ",\"input_kind\":" << JsonString(h.input_kind)
        << ",\"ingest_warning\":" << JsonString(h.ingest_warning)
        << ",\"run\":{\"run_id\":" << h.run.run_id
        << ",\"command\":" << JsonString(h.run.command)
        << ",\"host\":" << JsonString(h.run.host)
        << ",\"mode\":" << JsonString(h.run.mode)
        << ",\"origin\":" << JsonString(h.run.origin)
        << ",\"flops_sources\":" << JsonString(h.run.flops_sources)
        << ",\"complete\":"
        << (h.run.complete ? std::to_string(*h.run.complete) : "null")
        << ",\"incomplete_reason\":" << JsonString(h.run.incomplete_reason)
        << ",\"labels\":{";
    for (size_t i = 0; i < h.run.labels.size(); ++i) {
      out << (i ? "," : "") << JsonString(h.run.labels[i].first) << ':'
          << JsonString(h.run.labels[i].second);
    }
    out << "}}"
        << ",\"device\":" << JsonString(h.device_name)
        << ",\"roof_source\":" << JsonString(h.roofs.source)
        << ",\"reannotated\":" << (h.reannotated ? "true" : "false")
        << ",\"device_mismatch\":" << JsonString(h.device_mismatch)
        << ",\"dram_bytes_per_s\":" << JsonNumber(h.roofs.dram_bytes_per_s)
        << ",\"link_bytes_per_s\":"
        << JsonNumber(h.roofs.link_bytes_per_s > 0
                          ? std::optional<double>(h.roofs.link_bytes_per_s)
                          : std::nullopt)
        << ",\"link_name\":" << JsonString(h.roofs.link_name)
        << ",\"roofs\":[";
    for (size_t i = 0; i < h.roofs.roofs.size(); ++i) {
      const Roof& roof = h.roofs.roofs[i];
      out << (i ? "," : "") << "{\"precision\":" << JsonString(roof.precision)
          << ",\"peak_flops_per_s\":" << JsonNumber(roof.peak_flops_per_s)
          << ",\"dram_bytes_per_s\":" << JsonNumber(roof.dram_bytes_per_s)
          << ",\"ridge_flops_per_byte\":" << JsonNumber(roof.ridge_flops_per_byte)
          << ",\"source\":" << JsonString(roof.source) << "}";
    }
    out << "],\"import_stats\":{";
    for (size_t i = 0; i < h.import_stats.size(); ++i) {
      out << (i ? "," : "") << JsonString(h.import_stats[i].first) << ':'
          << h.import_stats[i].second;
    }
    out << "},\"dropped\":" << h.dropped << ",\"unmatched\":" << h.unmatched
        << ",\"kernel_count\":" << r.kernel_count << ",\"total_ns\":" << r.total_ns
        << ",\"kernels_with_flops\":" << r.kernels_with_flops
        << ",\"kernels_with_bytes\":" << r.kernels_with_bytes
        << ",\"ns_with_figures\":" << r.ns_with_figures
        << ",\"ns_comm_with_message\":" << r.ns_comm_with_message
        << ",\"ns_in_costed_op\":" << r.ns_in_costed_op
        << ",\"ns_comm_on_link_roof\":" << r.ns_comm_on_link_roof
        << ",\"kernels_above_roof\":" << r.kernels_above_roof
        << ",\"ns_above_roof\":" << r.ns_above_roof
        << ",\"busy\":[";
    for (size_t i = 0; i < r.busy.size(); ++i) {
      const DeviceBusy& b = r.busy[i];
      out << (i ? "," : "") << "{\"device_id\":" << b.device_id
          << ",\"first_start_ns\":" << b.first_start_ns
          << ",\"last_end_ns\":" << b.last_end_ns
          << ",\"span_ns\":" << b.span_ns << ",\"busy_ns\":" << b.busy_ns
          << ",\"idle_ns\":" << b.idle_ns
          << ",\"idle_share\":" << JsonNumber(b.idle_share)
          << ",\"late_intervals\":" << b.late_intervals
          << ",\"busy_uncertain_ns\":" << b.busy_uncertain_ns
          << ",\"kernels\":" << b.kernels << ",\"copies\":" << b.copies;
      if (b.exposed_comm_ns >= 0) {
        out << ",\"exposed_comm_ns\":" << b.exposed_comm_ns;
      }
      if (b.exposed_copy_ns >= 0) {
        out << ",\"exposed_copy_ns\":" << b.exposed_copy_ns;
      }
      out << "}";
    }
    out << "],\"durations\":[";
    for (int b = 0; b < kNumDurationBuckets; ++b) {
      out << (b ? "," : "") << "{\"from_ns\":" << kDurationBucketNs[b]
          << ",\"kernels\":" << r.durations[b].kernels
          << ",\"time_ns\":" << r.durations[b].time_ns << "}";
    }
    out << "],\"collectives\":[";
    for (size_t i = 0; i < r.collectives.size(); ++i) {
      const CollectiveRow& c = r.collectives[i];
      out << (i ? "," : "") << "{\"shape\":" << JsonString(c.shape)
          << ",\"count\":" << c.count << ",\"total_ns\":" << c.total_ns
          << ",\"message_bytes\":" << JsonNumber(c.message_bytes)
          << ",\"algbw_bytes_per_s\":" << JsonNumber(c.algbw)
          << ",\"busbw_bytes_per_s\":" << JsonNumber(c.busbw)
          << ",\"fraction_of_link\":" << JsonNumber(c.fraction_of_link)
          << ",\"bound\":" << (c.fraction_of_link ? "\"link\"" : "null")
          << "}";
    }
    out << "],\"group_by\":" << JsonString(GroupByName(r.group_by))
        << ",\"groups_omitted\":" << r.groups_omitted
        << ",\"omitted_ns\":" << r.omitted_ns << ",\"groups\":[";
    for (size_t i = 0; i < r.groups.size(); ++i) {
      if (i) out << ',';
      WriteJsonGroup(r.groups[i], out);
    }
    out << "],\"phases\":[";
    for (size_t i = 0; i < r.phases.size(); ++i) {
      const PhaseRow& p = r.phases[i];
      out << (i ? "," : "") << "{\"phase\":" << JsonString(p.phase)
          << ",\"steps\":" << p.steps << ",\"count\":" << p.count
          << ",\"time_ns\":" << p.time_ns << ",\"flops\":" << JsonNumber(p.flops)
          << ",\"share\":" << JsonNumber(p.share) << ",\"ai\":" << JsonNumber(p.ai)
          << ",\"fraction_of_roof\":" << JsonNumber(p.fraction_of_roof)
          << ",\"achieved_flops_per_s\":" << JsonNumber(p.achieved_flops_per_s)
          << "}";
    }
    out << "]}\n";
  }
};

void HtmlTable(const std::vector<GroupRow>& rows, std::ostream& out) {
  const auto& all_cols = TableColumns();
  const std::vector<Column> cols(
      all_cols.begin(),
      all_cols.begin() + (AnyNote(rows) ? all_cols.size()
                                        : all_cols.size() - 1));
  out << "<div class=\"wide\"><table class=\"num\"><thead><tr>";
  for (const Column& c : cols) {
    out << "<th" << (c.left ? " class=\"l\"" : "") << ">" << XmlEscape(c.title)
        << "</th>";
  }
  out << "</tr></thead><tbody>\n";
  for (const GroupRow& g : rows) {
    out << "<tr>";
    for (size_t c = 0; c < cols.size(); ++c) {
      const std::string v = cols[c].cell(g);
      if (c == 0) {
        out << "<td class=\"l\" title=\"" << XmlEscape(g.key) << "\">"
            << XmlEscape(v) << "</td>";
      } else {
        out << "<td" << (cols[c].left ? " class=\"l\"" : "") << ">"
            << XmlEscape(v) << "</td>";
      }
    }
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
}

class HtmlWriter : public ReportWriter {
 public:
  void Write(const Report& r, std::ostream& out) const override {
    const ReportHeader& h = r.header;
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<title>rooftrace report: "
        << XmlEscape(h.input)
        << (h.device_name.empty() ? "" : " (" + XmlEscape(h.device_name) + ")")
        << "</title>\n<style>\n"
        << "body{font-family:sans-serif;margin:24px;color:#222}"
           "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
           "table{border-collapse:collapse;font-size:12px}"
           ".wide{overflow-x:auto}td,th{padding:2px 6px;border-bottom:1px solid #ddd;text-align:right;"
           "white-space:nowrap}th{background:#f3f3f3}"
           "td.l,th.l{text-align:left}dl{display:grid;grid-template-columns:"
           "max-content auto;gap:2px 16px;font-size:13px}dt{font-weight:bold}"
           "dd{margin:0}.warn{color:#b00;font-weight:bold}"
           ".incomplete{background:#fdd;border:2px solid #b00;color:#b00;"
           "font-weight:bold;padding:8px 12px;margin-bottom:12px}\n"
        << "</style></head><body>\n";
    // First thing on the page: numbers of an incomplete run leave data out.
    if (const std::string w = IncompleteRunWarning(h.run); !w.empty()) {
      out << "<div class=\"incomplete\">WARNING: " << XmlEscape(w)
          << "</div>\n";
    }
    out << "<h1>rooftrace report</h1>\n<dl>\n";
    auto item = [&](const std::string& k, const std::string& v) {
      out << "<dt>" << XmlEscape(k) << "</dt><dd>" << XmlEscape(v) << "</dd>\n";
    };
    item("input", h.input + " (" + h.input_kind + ")");
    item("source", SourceLine(h.run, true));
    item("run", std::to_string(h.run.run_id) +
                    (h.run.command.empty() ? "" : ": " + h.run.command));
    if (!h.run.labels.empty()) item("labels", LabelsLine(h.run.labels));
    item("device", h.device_name.empty() ? "unknown" : h.device_name);
    item("roofs", h.roofs.source + (h.reannotated ? " (re-annotated)" : "") +
                      ": " + RoofSummary(h.roofs));
    if (!h.device_mismatch.empty()) {
      out << "<dt class=\"warn\">GPU MISMATCH</dt><dd class=\"warn\">"
          << XmlEscape(h.device_mismatch) << "</dd>\n";
    }
    item("FLOP / byte sources",
         (h.run.flops_sources.empty() ? "unknown" : h.run.flops_sources) + "; " +
             std::to_string(r.kernels_with_flops) + " of " +
             std::to_string(r.kernel_count) + " kernels have FLOPs, " +
             std::to_string(r.kernels_with_bytes) + " have bytes; " +
             FiguresShare(r));
    if (const std::string above = AboveRoofLine(r); !above.empty()) {
      out << "<dt class=\"warn\">ABOVE ROOF</dt><dd class=\"warn\">"
          << XmlEscape(above) << "</dd>\n";
    }
    item("kernels", std::to_string(r.kernel_count) + " kernels, " +
                        Fixed(r.total_ns * 1e-6, 3) + " ms GPU time");
    for (const DeviceBusy& b : r.busy) item("GPU busy", BusyLine(b));
    for (const CollectiveRow& c : r.collectives) {
      item("collective", CollectiveLine(c));
    }
    item("import", "dropped " + std::to_string(h.dropped) + ", unmatched " +
                       std::to_string(h.unmatched));
    out << "</dl>\n";
    if (!h.ingest_warning.empty()) {
      out << "<p class=\"warn\">" << XmlEscape(h.ingest_warning) << "</p>\n";
    }
    out << "<h2>Roofline</h2>\n" << SvgOrWarning(RenderRooflineSvg(r)) << "\n";
    if (const std::string comms = RenderCommsRooflineSvg(r); !comms.empty()) {
      out << "<h2>Communication roofline</h2>\n" << comms << "\n";
    }
    out << "<h2>Phase summary</h2>\n<table><thead><tr><th class=\"l\">phase</th>"
           "<th>steps</th><th>count</th><th>total ms</th><th>time %</th>"
           "<th>GFLOP</th><th>AI</th><th>% roof</th><th>TFLOP/s</th></tr>"
           "</thead><tbody>\n";
    for (const PhaseRow& p : r.phases) {
      out << "<tr><td class=\"l\">" << XmlEscape(p.phase) << "</td><td>"
          << p.steps << "</td><td>" << p.count << "</td><td>"
          << Fixed(p.time_ns * 1e-6, 3) << "</td><td>"
          << Fixed(p.share * 100, 1) << "</td><td>"
          << Fixed(Scaled(p.flops, 1e-9), 3) << "</td><td>" << Fixed(p.ai, 2)
          << "</td><td>"
          << Fixed(Scaled(p.fraction_of_roof, 100), 1) << "</td><td>"
          << Fixed(Scaled(p.achieved_flops_per_s, 1e-12), 3) << "</td></tr>\n";
    }
    out << "</tbody></table>\n<h2>" << XmlEscape(HeaderTitle(r)) << "</h2>\n";
    HtmlTable(r.groups, out);
    if (r.groups_omitted > 0) {
      out << "<p>" << r.groups_omitted << " more groups, "
          << Fixed(r.omitted_ns * 1e-6, 3) << " ms.</p>\n";
    }
    if (!r.families.empty()) {
      out << "<h2>Kernel families by phase (the plotted points)</h2>\n";
      HtmlTable(r.families, out);
    }
    out << "<h2>Import statistics</h2>\n<table><tbody>\n";
    size_t zeros = 0;
    for (const auto& [name, value] : h.import_stats) {
      if (value == 0) {
        ++zeros;
        continue;
      }
      out << "<tr><td class=\"l\">" << XmlEscape(name) << "</td><td>" << value
          << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
    if (zeros > 0) {
      out << "<p>" << zeros << " other counters are 0 (dropped, filtered, "
          << "corrupt, ...: see --format json).</p>\n";
    }
    out << "</body></html>\n";
  }
};

}  // namespace

std::string FiguresShare(const Report& r) {
  if (r.total_ns <= 0) return "no GPU time";
  auto share = [&](int64_t ns) {
    return Fixed(100.0 * static_cast<double>(ns) /
                     static_cast<double>(r.total_ns),
                 1) +
           "%";
  };
  std::string out =
      share(r.ns_with_figures) + " of GPU time has FLOPs or bytes";
  if (r.ns_comm_with_message > 0) {
    out += ", " + share(r.ns_with_figures + r.ns_comm_with_message) +
           " with the collectives' message sizes";
  }
  if (r.ns_in_costed_op > 0) {
    out += ", " + share(r.ns_with_figures + r.ns_in_costed_op) +
           " counting the kernels whose operator is costed on another of "
           "its kernels (in op)";
  }
  if (r.ns_comm_on_link_roof > 0) {
    out += "; " + share(r.ns_with_figures + r.ns_comm_on_link_roof) +
           " on a roof (" + share(r.ns_comm_on_link_roof) +
           " collectives on the link roof)";
  }
  return out;
}

std::string LabelsLine(const RunLabels& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {
    if (!out.empty()) out += ' ';
    const bool quote = value.empty() || value.find(' ') != std::string::npos;
    out += key + "=" + (quote ? "'" + value + "'" : value);
  }
  // A label is anyone's text: an escape sequence in it must not reach the
  // terminal (retitle it, clear it, hide lines).
  return NoControlCharacters(out);
}

void WriteHeaderText(const Report& r, std::ostream& out) {
  const ReportHeader& h = r.header;
  out << h.title << ": " << h.input << " (" << h.input_kind << "), run "
      << h.run.run_id << "\n";
  if (const std::string w = IncompleteRunWarning(h.run); !w.empty()) {
    out << "  WARNING:  " << w << "\n";
  }
  out << "  source:   " << SourceLine(h.run, false) << "\n";
  if (!h.ingest_warning.empty()) out << "  WARNING:  " << h.ingest_warning << "\n";
  if (h.run.store_kernels == "none" || h.run.store_kernels == "sampled") {
    out << "  kernels:  per-group aggregates (stored with --store-kernels "
        << h.run.store_kernels << "): no busy time or time spreads\n";
  }
  if (!h.run.command.empty()) out << "  command:  " << h.run.command << "\n";
  if (!h.run.labels.empty()) {
    out << "  labels:   " << LabelsLine(h.run.labels) << "\n";
  }
  out << "  device:   " << (h.device_name.empty() ? "unknown" : h.device_name)
      << "\n";
  out << "  roofs:    " << (h.roofs.source.empty() ? "none" : h.roofs.source)
      << (h.reannotated ? " (re-annotated by the analyzer)" : "") << "\n"
      << "            " << RoofSummary(h.roofs) << "\n";
  if (!h.device_mismatch.empty()) {
    out << "  WARNING:  GPU MISMATCH: " << h.device_mismatch << "\n";
  }
  out << "  sources:  FLOPs/bytes "
      << (h.run.flops_sources.empty() ? "unknown" : h.run.flops_sources) << "; "
      << r.kernels_with_flops << " of " << r.kernel_count
      << " kernels have FLOPs, " << r.kernels_with_bytes << " have bytes; "
      << FiguresShare(r) << "\n";
  if (const std::string above = AboveRoofLine(r); !above.empty()) {
    out << "  WARNING:  " << above << "\n";
  }
  out << "  kernels:  " << r.kernel_count << " kernels, "
      << Fixed(r.total_ns * 1e-6, 3) << " ms GPU time\n";
  for (const DeviceBusy& b : r.busy) {
    out << "  busy:     " << BusyLine(b) << "\n";
  }
  for (size_t i = 0; i < r.collectives.size(); ++i) {
    out << (i == 0 ? "  comms:    " : "            ")
        << CollectiveLine(r.collectives[i]) << "\n";
  }
  out << "  import:   dropped " << h.dropped << ", unmatched " << h.unmatched;
  std::string rest;
  for (const auto& [name, value] : h.import_stats) {
    if (value == 0) continue;
    rest += (rest.empty() ? "" : " ") + name + "=" + std::to_string(value);
  }
  if (!rest.empty()) out << "\n            " << rest;
  out << "\n";
}

std::string IncompleteRunWarning(const RunRow& run) {
  if (run.complete && *run.complete == 1) return "";
  std::string why = run.incomplete_reason;
  if (why.empty()) {
    why = run.complete ? "sessions ended without a Goodbye or data was lost"
                       : "its writer never finished (killed, or its store "
                         "failed), rows may be missing";
  }
  return "run " + std::to_string(run.run_id) + " is INCOMPLETE: " + why +
         "; its numbers leave out what was lost";
}

std::unique_ptr<ReportWriter> MakeReportWriter(std::string_view format) {
  if (format == "table") return std::make_unique<TableWriter>();
  if (format == "csv") return std::make_unique<CsvWriter>();
  if (format == "json") return std::make_unique<JsonWriter>();
  if (format == "html") return std::make_unique<HtmlWriter>();
  return nullptr;
}

}  // namespace rooftrace
