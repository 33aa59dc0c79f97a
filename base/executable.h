// Where the running rooftrace binary lives, so it can find the libraries
// installed beside it (lib/librooftrace_inject.so, lib/librooftrace_calibrate.so).
//
// The trap this handles: /proc/self/exe names the dynamic loader, not
// rooftrace, when rooftrace is started through it
// (`ld-linux-x86-64.so.2 --library-path DIR bin/rooftrace ...`, as the GPU
// recipe does to keep its libraries off the profiled program's
// LD_LIBRARY_PATH). The loader gives the program the path it was started
// as, which dladdr() reports for a symbol of the main program.
// Stateless; thread-safe.
#ifndef ROOFTRACE_BASE_EXECUTABLE_H_
#define ROOFTRACE_BASE_EXECUTABLE_H_

#include <string>

namespace rooftrace {

// The absolute path of the running program; empty when it cannot be found.
std::string ExecutablePath();

// The folder holding the running program's folder ("<prefix>" for
// "<prefix>/bin/rooftrace"); empty when the program's path is unknown.
std::string ExecutablePrefix();

}  // namespace rooftrace

#endif  // ROOFTRACE_BASE_EXECUTABLE_H_
