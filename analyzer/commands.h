// The analyzer's subcommands: `analyze`, `diff`, `export`, `predict` and
// `history`. argv[0] is the subcommand name; the return value is the
// process exit code (0 ok, 1 the action found a failure, e.g. a regression,
// 2 bad input). Testable without main(); the front-end (cli/) dispatches to
// them.
#ifndef ROOFTRACE_ANALYZER_COMMANDS_H_
#define ROOFTRACE_ANALYZER_COMMANDS_H_

namespace rooftrace {

int AnalyzeMain(int argc, char** argv);
int DiffMain(int argc, char** argv);
int ExportMain(int argc, char** argv);
int PredictMain(int argc, char** argv);
int HistoryMain(int argc, char** argv);

}  // namespace rooftrace

#endif  // ROOFTRACE_ANALYZER_COMMANDS_H_
