#include "base/cli.h"
#include "cli/subcommands.h"

namespace rooftrace {

int CalibrateMain(int argc, char** argv) {
  return PlaceholderMain("calibrate", "rooftrace calibrate [-o profile.json]",
                         "the reference kernels are not built yet", argc, argv);
}

}  // namespace rooftrace
