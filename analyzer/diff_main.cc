#include "base/cli.h"
#include "cli/subcommands.h"

namespace rooftrace {

int DiffMain(int argc, char** argv) {
  return PlaceholderMain("diff", "rooftrace diff BASELINE CANDIDATE",
                         "the analyzer's diff is not built yet", argc, argv);
}

}  // namespace rooftrace
