#include "base/cli.h"
#include "cli/subcommands.h"

namespace rooftrace {

int ProfileMain(int argc, char** argv) {
  return PlaceholderMain("profile", "rooftrace profile [options] -- CMD ARGS...",
                         "the collector is not built yet", argc, argv);
}

int CollectMain(int argc, char** argv) {
  return PlaceholderMain("collect", "rooftrace collect --listen ADDR --store S",
                         "the collector is not built yet", argc, argv);
}

}  // namespace rooftrace
