// The collector's subcommands: `profile`, `collect`, `import` and `devices`.
// argv[0] is the subcommand name; the return value is the process exit code
// (0 ok, 1 the action found a failure, 2 bad input). Testable without
// main(); the front-end (cli/) dispatches to them.
#ifndef ROOFTRACE_COLLECTOR_COMMANDS_H_
#define ROOFTRACE_COLLECTOR_COMMANDS_H_

namespace rooftrace {

int ProfileMain(int argc, char** argv);
int CollectMain(int argc, char** argv);
int ImportMain(int argc, char** argv);
int DevicesMain(int argc, char** argv);

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_COMMANDS_H_
