// The rooftrace front-end: dispatches argv[1] to a subcommand, each of which
// lives in its component (collector/commands.h, analyzer/commands.h,
// kernels/commands.h).
#ifndef ROOFTRACE_CLI_ROOFTRACE_H_
#define ROOFTRACE_CLI_ROOFTRACE_H_

namespace rooftrace {

int RooftraceMain(int argc, char** argv);

}  // namespace rooftrace

#endif  // ROOFTRACE_CLI_ROOFTRACE_H_
