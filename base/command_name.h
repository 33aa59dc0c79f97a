// What a line rooftrace writes on stderr begins with: "rooftrace collect"
// while `collect` runs, so that code below the commands (an importer, the
// ingest of a spool's live buffer) names the command the user typed.
// ParseCommandLine sets it once, before any other thread starts; plain
// "rooftrace" before that (a test, a library used on its own).
#ifndef ROOFTRACE_BASE_COMMAND_NAME_H_
#define ROOFTRACE_BASE_COMMAND_NAME_H_

#include <string>

namespace rooftrace {

inline std::string& MutableCommandName() {
  static std::string name = "rooftrace";
  return name;
}

// "rooftrace COMMAND" (or "rooftrace"), without the colon.
inline const char* CommandName() { return MutableCommandName().c_str(); }

inline void SetCommandName(const std::string& command) {
  MutableCommandName() = "rooftrace " + command;
}

}  // namespace rooftrace

#endif  // ROOFTRACE_BASE_COMMAND_NAME_H_
