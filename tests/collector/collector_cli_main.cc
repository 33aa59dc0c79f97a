// The collector's subcommands as a standalone binary for integration tests,
// so they do not depend on the rest of the rooftrace front-end.
#include <cstring>
#include <iostream>

#include "collector/commands.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "collect") == 0) {
    return rooftrace::CollectMain(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::strcmp(argv[1], "profile") == 0) {
    return rooftrace::ProfileMain(argc - 1, argv + 1);
  }
  std::cerr << "usage: collector_cli collect|profile ...\n";
  return 2;
}
