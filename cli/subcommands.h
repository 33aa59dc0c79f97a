// Entry points of the rooftrace subcommands. Each lives in its component
// (collector/, analyzer/, kernels/) and is testable without main().
// argv[0] is the subcommand name; the return value is the process exit code
// (0 ok, 1 the action found a failure, e.g. a regression, 2 bad input).
#ifndef ROOFTRACE_CLI_SUBCOMMANDS_H_
#define ROOFTRACE_CLI_SUBCOMMANDS_H_

namespace rooftrace {

int ProfileMain(int argc, char** argv);    // collector/
int CollectMain(int argc, char** argv);    // collector/
int DevicesMain(int argc, char** argv);    // collector/
int AnalyzeMain(int argc, char** argv);    // analyzer/
int DiffMain(int argc, char** argv);       // analyzer/
int ExportMain(int argc, char** argv);     // analyzer/
int PredictMain(int argc, char** argv);    // analyzer/
int CalibrateMain(int argc, char** argv);  // kernels/

// The front-end: dispatches argv[1] to a subcommand.
int RooftraceMain(int argc, char** argv);

}  // namespace rooftrace

#endif  // ROOFTRACE_CLI_SUBCOMMANDS_H_
