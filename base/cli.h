// Shared command-line handling for rooftrace subcommands (Boost
// Program_options): `--help` per subcommand, usage errors on stderr with
// exit code 2, and `--` splitting for `profile -- CMD...`.
#ifndef ROOFTRACE_BASE_CLI_H_
#define ROOFTRACE_BASE_CLI_H_

#include <boost/program_options.hpp>
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace rooftrace {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the action ran and found a failure
inline constexpr int kExitUsage = 2;    // bad input: option, file, run id
// A run is incomplete: collect/profile could not store all of it (a failed
// store write), or diff was given an incomplete run.
inline constexpr int kExitIncomplete = 3;
// `profile`'s command cannot be found or run (as a shell says it).
inline constexpr int kExitCommandNotFound = 127;

struct CommandSpec {
  std::string name;     // "analyze"
  std::string usage;    // "rooftrace analyze STORE|FILE.rft [options]"
  std::string summary;  // one paragraph: what it does
  std::string epilog;   // examples, notes (optional)
  boost::program_options::options_description options{"Options", 100};
  boost::program_options::positional_options_description positional;
  // Options kept out of --help (positional sinks).
  boost::program_options::options_description hidden{"Hidden"};
};

// How a command refuses: `fail("no input: ...")` prints "rooftrace NAME:
// no input: ..." on stderr and gives the exit code to return (bad usage
// unless said otherwise).
struct CommandFailure {
  std::string prefix;  // "rooftrace export"
  int operator()(const std::string& message, int code = kExitUsage) const;
};

// Parses argv (argv[0] is the subcommand name). Adds -h/--help itself.
// Returns std::nullopt when the command should run, otherwise the exit code
// to return: 0 after printing help to `out`, 2 after printing the error and
// a usage hint to `err`.
std::optional<int> ParseCommandLine(const CommandSpec& spec, int argc,
                                    char** argv,
                                    boost::program_options::variables_map* vm,
                                    std::ostream& out, std::ostream& err);

// Prints the full help of a subcommand.
void PrintHelp(const CommandSpec& spec, std::ostream& out);

// Splits argv at the first "--": returns the words after it and shortens
// argc so the parser sees only the words before it.
std::vector<std::string> SplitAtDoubleDash(int* argc, char** argv);

// Parses the KEY=VALUE words of a repeatable `option` (--label, --where)
// into pairs, in the order given. The first '=' splits: the value may hold
// '=' and may be empty; the key may not. Refused, naming `option` and the
// word: no '=', an empty key, a key given twice (one run has one value per
// key, so the second would silently win).
//
// A key past kMaxLabelKeyBytes or a value past kMaxLabelValueBytes is
// refused too, naming the key and the bound: labels are indexed (the
// store's run_labels (key, value)), PostgreSQL refuses an index entry past
// about 2.7 KB (a 12 KB label stored no run) and SQLite has none, so one
// bound holds for both, checked before anything is collected.
inline constexpr size_t kMaxLabelKeyBytes = 128;
inline constexpr size_t kMaxLabelValueBytes = 1024;
StatusOr<std::vector<std::pair<std::string, std::string>>> ParseKeyValues(
    const std::vector<std::string>& words, const std::string& option);

// The exit code of a command that failed while it stored a run (import,
// collect --ingest): 2 for bad input (kInvalidArgument, kNotFound,
// kCorrupt, kFailedPrecondition: the file, the store's kind, an option),
// 3 for anything else (the store failed: a crashed or silent server, a
// full disk), which leaves a run incomplete or unstored. One rule for both
// commands (docs/reliability.md); never 1, which says "regression found".
int ExitCodeForFailedRun(const Status& status);

// `word` as a POSIX shell reads it back as one word: unchanged when it
// holds only characters no shell treats specially, else in single quotes
// (a quote inside as '\''). For the commands rooftrace prints for people to
// run: a store URL's '&' and '?' must not split or glob them.
std::string ShellWord(const std::string& word);

// The words that give `pairs` back to ParseKeyValues: " OPTION 'K=V'"
// for each, as shell words (ShellWord), each after a space; "" for none.
// A printed command that stores a run again carries its labels with them.
std::string KeyValueWords(
    const std::string& option,
    const std::vector<std::pair<std::string, std::string>>& pairs);

// For a subcommand this build does not provide: says so on stderr, with the
// reason, and returns kExitUsage (never a silent success).
int NotAvailable(const std::string& command, const std::string& reason);

// A subcommand placeholder: answers --help with `usage`, and anything else
// with NotAvailable(command, reason).
int PlaceholderMain(const std::string& command, const std::string& usage,
                    const std::string& reason, int argc, char** argv);

}  // namespace rooftrace

#endif  // ROOFTRACE_BASE_CLI_H_
