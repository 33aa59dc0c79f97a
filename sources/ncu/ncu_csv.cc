#include "sources/ncu/ncu_csv.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>

namespace rooftrace::ncu {
namespace {

constexpr std::string_view kHeaderStart = "\"ID\",\"Process ID\"";

// Splits CSV text into rows of fields: RFC 4180 quoting (doubled quotes,
// separators and newlines inside quotes), "\r\n" or "\n" line ends.
class CsvRows {
 public:
  CsvRows(std::string_view text, size_t first_line)
      : text_(text), line_(first_line) {}

  // The next row into `fields`; false at the end of the text. `complete`
  // is false when the text ends inside a quoted field.
  bool Next(std::vector<std::string>* fields, size_t* line, bool* complete) {
    fields->clear();
    *complete = true;
    if (pos_ >= text_.size()) return false;
    *line = line_;
    std::string field;
    bool quoted = false, was_quoted = false;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (quoted) {
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            field += '"';
            ++pos_;
          } else {
            quoted = false;
          }
        } else {
          if (c == '\n') ++line_;
          field += c;
        }
      } else if (c == '"' && field.empty() && !was_quoted) {
        quoted = was_quoted = true;
      } else if (c == ',') {
        fields->push_back(std::move(field));
        field.clear();
        was_quoted = false;
      } else if (c == '\n') {
        ++line_;
        break;
      } else if (c != '\r') {
        field += c;
      }
    }
    if (quoted) *complete = false;
    fields->push_back(std::move(field));
    return true;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_;
};

// The offset of the header line and its 1-based number; npos when none.
size_t FindHeader(std::string_view text, size_t* line) {
  size_t pos = 0;
  *line = 1;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;  // a UTF-8 BOM
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(pos, end - pos);
    if (l.substr(0, kHeaderStart.size()) == kHeaderStart &&
        l.find("\"Kernel Name\"") != std::string_view::npos) {
      return pos;
    }
    pos = end + 1;
    ++*line;
  }
  return std::string_view::npos;
}

// Columns of ncu's own that are not metrics.
struct Columns {
  int id = -1, pid = -1, process = -1, host = -1, name = -1, context = -1,
      stream = -1, block = -1, grid = -1, device = -1, cc = -1;
  int section = -1, metric = -1, unit = -1, value = -1;
  std::vector<bool> fixed;  // per column: one of ncu's, not a metric
};

Columns IndexColumns(const std::vector<std::string>& header) {
  static const std::map<std::string_view, int Columns::*> kNamed = {
      {"ID", &Columns::id},           {"Process ID", &Columns::pid},
      {"Process Name", &Columns::process}, {"Host Name", &Columns::host},
      {"Kernel Name", &Columns::name}, {"Context", &Columns::context},
      {"Stream", &Columns::stream},   {"Block Size", &Columns::block},
      {"Grid Size", &Columns::grid},  {"Device", &Columns::device},
      {"CC", &Columns::cc},           {"Section Name", &Columns::section},
      {"Metric Name", &Columns::metric}, {"Metric Unit", &Columns::unit},
      {"Metric Value", &Columns::value}};
  static const std::vector<std::string_view> kOther = {
      "Kernel Time", "Body Item Label", "Rule Name", "Rule Type",
      "Rule Description", "Estimated Speedup Type", "Estimated Speedup"};
  Columns c;
  c.fixed.assign(header.size(), false);
  for (size_t i = 0; i < header.size(); ++i) {
    auto it = kNamed.find(header[i]);
    if (it != kNamed.end()) {
      if (c.*(it->second) < 0) c.*(it->second) = static_cast<int>(i);
      c.fixed[i] = true;
    }
    for (std::string_view o : kOther) {
      if (header[i] == o) c.fixed[i] = true;
    }
  }
  return c;
}

const std::string& Cell(const std::vector<std::string>& row, int column) {
  static const std::string kEmpty;
  return column >= 0 && static_cast<size_t>(column) < row.size()
             ? row[static_cast<size_t>(column)]
             : kEmpty;
}

// A kernel's identity from one row.
Status FillKernel(const Columns& c, const std::vector<std::string>& row,
                  size_t line, Kernel* k) {
  const std::optional<double> id = ParseNumber(Cell(row, c.id));
  if (!id || *id < 0 || *id > 9e15 || std::floor(*id) != *id) {
    return InvalidArgument("line " + std::to_string(line) + ": ID '" +
                           Cell(row, c.id) + "' is not a launch number");
  }
  k->id = static_cast<int64_t>(*id);
  const std::optional<double> pid = ParseNumber(Cell(row, c.pid));
  k->pid = pid && *pid >= 0 && *pid < 4.3e9 ? static_cast<int64_t>(*pid) : 0;
  k->process = Cell(row, c.process);
  k->host = Cell(row, c.host);
  k->name = Cell(row, c.name);
  k->context = Cell(row, c.context);
  k->stream = Cell(row, c.stream);
  k->block_size = Cell(row, c.block);
  k->grid_size = Cell(row, c.grid);
  k->device = Cell(row, c.device);
  k->cc = Cell(row, c.cc);
  k->line = line;
  return OkStatus();
}

Status CutShort(size_t line, size_t got, size_t want) {
  return InvalidArgument(
      "line " + std::to_string(line) + " has " + std::to_string(got) +
      " of the header's " + std::to_string(want) +
      " columns: the CSV is cut short or damaged");
}

Status ReadLong(const Columns& c, size_t columns, CsvRows* rows,
                Report* report) {
  std::map<int64_t, size_t> index_of_id;
  // The columns every metric row must reach (the header may order them
  // any way).
  const size_t need = static_cast<size_t>(std::max(c.metric, c.value)) + 1;
  std::vector<std::string> row;
  size_t line = 0;
  bool complete = true;
  while (rows->Next(&row, &line, &complete)) {
    if (row.size() == 1 && row[0].empty() && complete) continue;  // blank
    // Rules' rows may leave off trailing columns; the metric's may not.
    if (!complete || row.size() < need) {
      return CutShort(line, row.size(), columns);
    }
    if (row[static_cast<size_t>(c.metric)].empty()) continue;  // a rule
    Kernel k;
    RT_RETURN_IF_ERROR(FillKernel(c, row, line, &k));
    auto [it, inserted] = index_of_id.try_emplace(k.id, report->kernels.size());
    if (inserted) report->kernels.push_back(std::move(k));
    Kernel& kernel = report->kernels[it->second];
    kernel.metrics.push_back(Metric{Cell(row, c.section), Cell(row, c.metric),
                                    Cell(row, c.unit), Cell(row, c.value)});
    ++report->metric_rows;
  }
  return OkStatus();
}

Status ReadWide(const Columns& c, const std::vector<std::string>& header,
                CsvRows* rows, Report* report) {
  std::vector<std::string> row, units;
  size_t line = 0;
  bool complete = true;
  bool first = true;
  while (rows->Next(&row, &line, &complete)) {
    if (row.size() == 1 && row[0].empty() && complete) continue;
    if (!complete || row.size() != header.size()) {
      return CutShort(line, row.size(), header.size());
    }
    if (first && Cell(row, c.id).empty()) {  // the units row
      units = row;
      first = false;
      continue;
    }
    first = false;
    Kernel k;
    RT_RETURN_IF_ERROR(FillKernel(c, row, line, &k));
    for (size_t i = 0; i < row.size(); ++i) {
      if (c.fixed[i]) continue;
      k.metrics.push_back(Metric{std::string(), header[i],
                                 i < units.size() ? units[i] : std::string(),
                                 row[i]});
    }
    report->kernels.push_back(std::move(k));
  }
  return OkStatus();
}

}  // namespace

bool LooksLikeNcuCsv(std::string_view head) {
  size_t line = 0;
  return FindHeader(head, &line) != std::string_view::npos;
}

StatusOr<Report> ParseNcuCsv(std::string_view text) {
  Report report;
  const size_t start = FindHeader(text, &report.header_line);
  if (start == std::string_view::npos) {
    return InvalidArgument(
        "no Nsight Compute header (a line starting \"ID\",\"Process "
        "ID\",... naming \"Kernel Name\")");
  }
  CsvRows rows(text.substr(start), report.header_line);
  std::vector<std::string> header;
  size_t line = 0;
  bool complete = true;
  rows.Next(&header, &line, &complete);
  const Columns c = IndexColumns(header);
  if (!complete || c.id < 0 || c.name < 0) {
    return InvalidArgument("line " + std::to_string(line) +
                           ": the header is cut short");
  }
  const bool long_layout = c.metric >= 0 && c.value >= 0;
  report.layout = long_layout ? Layout::kLong : Layout::kWide;
  if (long_layout) {
    RT_RETURN_IF_ERROR(ReadLong(c, header.size(), &rows, &report));
  } else {
    RT_RETURN_IF_ERROR(ReadWide(c, header, &rows, &report));
  }
  return report;
}

std::optional<double> ParseNumber(std::string_view text) {
  std::string digits;
  digits.reserve(text.size());
  for (char ch : text) {
    if (ch == ',') continue;  // thousands separator
    if (ch == ' ') return std::nullopt;
    digits += ch;
  }
  if (digits.empty() || digits.size() > 64) return std::nullopt;
  const char first = digits[0];
  if (!(first == '-' || first == '+' || first == '.' ||
        (first >= '0' && first <= '9'))) {
    return std::nullopt;  // "n/a", "inf", "nan", names
  }
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::array<uint32_t, 3>> ParseDim3(std::string_view text) {
  std::array<uint32_t, 3> out = {1, 1, 1};
  auto to_u32 = [](std::string_view t) -> std::optional<uint32_t> {
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    const std::optional<double> v = ParseNumber(t);
    if (!v || *v < 0 || *v > 4294967295.0 || std::floor(*v) != *v) {
      return std::nullopt;
    }
    return static_cast<uint32_t>(*v);
  };
  if (text.size() >= 2 && text.front() == '(' && text.back() == ')') {
    text = text.substr(1, text.size() - 2);
    for (int i = 0; i < 3; ++i) {
      const size_t comma = text.find(',');
      if ((comma == std::string_view::npos) != (i == 2)) return std::nullopt;
      const std::optional<uint32_t> v = to_u32(text.substr(0, comma));
      if (!v) return std::nullopt;
      out[static_cast<size_t>(i)] = *v;
      text = comma == std::string_view::npos ? std::string_view()
                                             : text.substr(comma + 1);
    }
    return out;
  }
  const std::optional<uint32_t> v = to_u32(text);
  if (!v) return std::nullopt;
  out[0] = *v;
  return out;
}

namespace {

// The SI prefix of `unit` before `base` ("Mbyte" -> 1e6); nullopt when
// `unit` does not end with `base` or the prefix is not one.
std::optional<double> Prefix(std::string_view unit, std::string_view base) {
  if (unit.size() < base.size() ||
      unit.substr(unit.size() - base.size()) != base) {
    return std::nullopt;
  }
  const std::string_view p = unit.substr(0, unit.size() - base.size());
  if (p.empty()) return 1.0;
  if (p == "K" || p == "k") return 1e3;
  if (p == "M") return 1e6;
  if (p == "G") return 1e9;
  if (p == "T") return 1e12;
  if (p == "P") return 1e15;
  return std::nullopt;
}

// Nanoseconds in one `unit` of time.
std::optional<double> TimeNs(std::string_view unit) {
  static const std::map<std::string_view, double> kTime = {
      {"ps", 1e-3}, {"psecond", 1e-3}, {"ns", 1.0},  {"nsecond", 1.0},
      {"us", 1e3},  {"usecond", 1e3},  {"ms", 1e6},  {"msecond", 1e6},
      {"s", 1e9},   {"second", 1e9}};
  auto it = kTime.find(unit);
  if (it == kTime.end()) return std::nullopt;
  return it->second;
}

std::optional<double> Hertz(std::string_view unit) {
  std::string lower(unit);
  for (char& ch : lower) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  if (lower == "hz") return 1.0;
  if (lower == "khz") return 1e3;
  if (lower == "mhz") return 1e6;
  if (lower == "ghz") return 1e9;
  const size_t slash = unit.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::optional<double> cycles = Prefix(unit.substr(0, slash), "cycle");
  const std::optional<double> per = TimeNs(unit.substr(slash + 1));
  if (!cycles || !per) return std::nullopt;
  return *cycles * 1e9 / *per;
}

}  // namespace

std::optional<double> ToBase(double value, std::string_view unit,
                             Dimension dimension) {
  std::optional<double> scale;
  switch (dimension) {
    case Dimension::kBytes:
      scale = Prefix(unit, "byte");
      break;
    case Dimension::kNanoseconds:
      scale = TimeNs(unit);
      break;
    case Dimension::kHertz:
      scale = Hertz(unit);
      break;
    case Dimension::kCount:
      if (unit.empty()) {
        scale = 1.0;
      } else if (!(scale = Prefix(unit, "inst"))) {
        scale = Prefix(unit, "cycle");
      }
      break;
  }
  if (!scale) return std::nullopt;
  return value * *scale;
}

}  // namespace rooftrace::ncu
