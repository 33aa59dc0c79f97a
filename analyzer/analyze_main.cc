#include "base/cli.h"
#include "cli/subcommands.h"

namespace rooftrace {

int AnalyzeMain(int argc, char** argv) {
  return PlaceholderMain("analyze", "rooftrace analyze STORE|FILE.rft",
                         "the analyzer is not built yet", argc, argv);
}
int DiffMain(int argc, char** argv) {
  return PlaceholderMain("diff", "rooftrace diff BASELINE CANDIDATE",
                         "the analyzer is not built yet", argc, argv);
}
int ExportMain(int argc, char** argv) {
  return PlaceholderMain("export", "rooftrace export STORE|FILE.rft",
                         "the analyzer is not built yet", argc, argv);
}

}  // namespace rooftrace
