#include "base/cli.h"

#include "base/command_name.h"
#include "base/url_secrets.h"

#include <cstring>
#include <iostream>

namespace po = boost::program_options;

namespace rooftrace {

void PrintHelp(const CommandSpec& spec, std::ostream& out) {
  out << "Usage: " << spec.usage << "\n\n" << spec.summary << "\n\n";
  // The help option goes through the same table as the others, so its
  // description lines up with theirs (it was padded by hand before).
  po::options_description help;
  help.add_options()("help,h", "show this help");
  po::options_description shown(100);  // CommandSpec::options' width
  shown.add(spec.options).add(help);
  out << shown;
  if (!spec.epilog.empty()) out << "\n" << spec.epilog << "\n";
}

std::optional<int> ParseCommandLine(const CommandSpec& spec, int argc,
                                    char** argv, po::variables_map* vm,
                                    std::ostream& out, std::ostream& err) {
  SetCommandName(spec.name);
  po::options_description all;
  all.add(spec.options).add(spec.hidden);
  all.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(all)
                  .positional(spec.positional)
                  .run(),
              *vm);
    if (vm->count("help")) {
      PrintHelp(spec, out);
      return kExitOk;
    }
    po::notify(*vm);
  } catch (const po::error& e) {
    ScrubPasswordsFromArgs(argc, argv);
    // The parser quotes a bad word, which may be a store URL.
    err << "rooftrace " << spec.name << ": " << HidePasswords(e.what())
        << "\n"
        << "Usage: " << spec.usage << "\n"
        << "Run 'rooftrace " << spec.name << " --help' for the options.\n";
    return kExitUsage;
  }
  // The values are copied: a store URL's password need not stay where
  // `ps` shows it.
  ScrubPasswordsFromArgs(argc, argv);
  return std::nullopt;
}

std::vector<std::string> SplitAtDoubleDash(int* argc, char** argv) {
  std::vector<std::string> rest;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      for (int j = i + 1; j < *argc; ++j) rest.emplace_back(argv[j]);
      *argc = i;
      break;
    }
  }
  return rest;
}

StatusOr<std::vector<std::pair<std::string, std::string>>> ParseKeyValues(
    const std::vector<std::string>& words, const std::string& option) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& w : words) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument(
          option + " '" + w + "': " +
          (eq == std::string::npos ? "no '='" : "an empty key") +
          "; give KEY=VALUE, e.g. " + option + " commit=abc123");
    }
    std::string key = w.substr(0, eq);
    const size_t value_bytes = w.size() - eq - 1;
    if (key.size() > kMaxLabelKeyBytes || value_bytes > kMaxLabelValueBytes) {
      const bool long_key = key.size() > kMaxLabelKeyBytes;
      return InvalidArgument(
          option + " '" + (long_key ? key.substr(0, 40) + "...'" : key + "=...'") +
          ": the " + (long_key ? "key" : "value") + " is " +
          std::to_string(long_key ? key.size() : value_bytes) +
          " bytes; a label's key may hold " +
          std::to_string(kMaxLabelKeyBytes) + " bytes and its value " +
          std::to_string(kMaxLabelValueBytes) +
          " (labels are indexed, the same bound on SQLite and PostgreSQL): "
          "give a shorter one, e.g. a hash or a link to the text");
    }
    for (const auto& [k, v] : out) {
      if (k == key) {
        return InvalidArgument(option + " '" + w + "': key '" + key +
                               "' given twice (" + k + "=" + v +
                               "); give each key once");
      }
    }
    out.emplace_back(std::move(key), w.substr(eq + 1));
  }
  return out;
}

int NotAvailable(const std::string& command, const std::string& reason) {
  std::cerr << "rooftrace " << command << ": not available in this build: "
            << reason << "\n";
  return kExitUsage;
}

int PlaceholderMain(const std::string& command, const std::string& usage,
                    const std::string& reason, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a == "-h" || a == "--help") {
      std::cout << "Usage: " << usage << "\n\nNot available in this build: "
                << reason << "\n";
      return kExitOk;
    }
  }
  return NotAvailable(command, reason);
}

int ExitCodeForFailedRun(const Status& status) {
  const StatusCode code = status.code();
  return code == StatusCode::kInvalidArgument ||
                 code == StatusCode::kNotFound ||
                 code == StatusCode::kCorrupt ||
                 code == StatusCode::kFailedPrecondition
             ? kExitUsage
             : kExitIncomplete;
}

std::string ShellWord(const std::string& word) {
  const bool plain =
      !word.empty() &&
      word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                             "vwxyz0123456789_@%+=:,./-") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string KeyValueWords(
    const std::string& option,
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  for (const auto& [key, value] : pairs) {
    out += " " + option + " " + ShellWord(key + "=" + value);
  }
  return out;
}

int CommandFailure::operator()(const std::string& message, int code) const {
  // A message may name a store by its URL (or quote libpq, which echoes
  // one): never its password.
  std::cerr << prefix << ": " << HidePasswords(message) << "\n";
  return code;
}

}  // namespace rooftrace
