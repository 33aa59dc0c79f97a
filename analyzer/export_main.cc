#include "base/cli.h"
#include "cli/subcommands.h"

namespace rooftrace {

int ExportMain(int argc, char** argv) {
  return PlaceholderMain("export", "rooftrace export STORE|FILE.rft",
                         "the analyzer's export is not built yet", argc, argv);
}

}  // namespace rooftrace
