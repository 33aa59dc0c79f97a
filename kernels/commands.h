// The `calibrate` subcommand: runs the reference kernels on this GPU and
// writes its measured roofs. argv[0] is the subcommand name; the return
// value is the process exit code (0 ok, 2 bad input or no GPU).
#ifndef ROOFTRACE_KERNELS_COMMANDS_H_
#define ROOFTRACE_KERNELS_COMMANDS_H_

namespace rooftrace {

int CalibrateMain(int argc, char** argv);

}  // namespace rooftrace

#endif  // ROOFTRACE_KERNELS_COMMANDS_H_
