// The rooftrace front-end as a user meets it: help, unknown commands and
// options, and `devices`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct CmdResult {
  int exit_code;
  std::string out;  // stdout and stderr, in order
  std::string stdout_only;
};

CmdResult RunRooftrace(const std::string& args, bool merge_stderr = true) {
  const std::string cmd = std::string(ROOFTRACE_BINARY_DIR) + "/bin/rooftrace " +
                          args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  CmdResult r{-1, "", ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The column where a "--run arg" style row's description starts.
size_t DescriptionColumn(const std::string& help, const std::string& row) {
  const size_t at = help.find("\n  " + row);
  if (at == std::string::npos) return std::string::npos;
  const size_t begin = at + 1;
  const size_t end = help.find('\n', begin);
  const std::string line = help.substr(begin, end - begin);
  const size_t gap = line.find("  ", 2 + row.size());
  return line.find_first_not_of(' ', gap);
}

// Every subcommand's -h row lines up with its other options (it was padded
// by hand and sat 14 columns off in analyze's --help).
TEST(CliTest, HelpRowLinesUpWithTheOtherOptions) {
  for (const char* sub : {"analyze", "diff", "export", "profile", "collect",
                          "import", "predict", "devices"}) {
    CmdResult r = RunRooftrace(std::string(sub) + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub;
    const size_t help = DescriptionColumn(r.out, "-h [ --help ]");
    ASSERT_NE(help, std::string::npos) << sub << ":\n" << r.out;
    // The first option row of the table.
    const size_t first = r.out.find("\n  --");
    ASSERT_NE(first, std::string::npos) << sub;
    const size_t name_end = r.out.find("  ", first + 3);
    const std::string row = r.out.substr(first + 3, name_end - first - 3);
    EXPECT_EQ(help, DescriptionColumn(r.out, row)) << sub << ":\n" << r.out;
  }
}

// `rooftrace --help` lists every subcommand of DESIGN.md and exits 0.
TEST(CliTest, HelpListsSubcommands) {
  CmdResult r = RunRooftrace("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* sub : {"profile", "collect", "analyze", "diff", "export",
                          "calibrate", "devices"}) {
    EXPECT_NE(r.out.find(sub), std::string::npos) << sub;
  }
}

// No arguments: usage on stderr, exit 2.
TEST(CliTest, NoArgumentsIsUsageError) {
  CmdResult r = RunRooftrace("", /*merge_stderr=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << "usage belongs on stderr";
}

// An unknown subcommand: named on stderr, usage, exit 2.
TEST(CliTest, UnknownSubcommand) {
  CmdResult r = RunRooftrace("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_NE(r.out.find("Usage:"), std::string::npos);
}

// Every subcommand has its own --help that exits 0.
TEST(CliTest, EverySubcommandHasHelp) {
  for (const char* sub : {"profile", "collect", "analyze", "diff", "export",
                          "calibrate", "devices"}) {
    CmdResult r = RunRooftrace(std::string(sub) + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.out;
    EXPECT_NE(r.out.find("Usage: rooftrace " + std::string(sub)),
              std::string::npos)
        << sub << ": " << r.out;
  }
}

// An unknown option: named, usage hint, exit 2.
TEST(CliTest, UnknownOptionIsUsageError) {
  CmdResult r = RunRooftrace("devices --bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("bogus"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--help"), std::string::npos) << r.out;
}

// `collect --recovers-run` (#37.4) takes a run number above 0, with
// --ingest and without --listen: anything else is refused before a store
// is opened, naming the option and what it needs, exit 2.
TEST(CliTest, RecoversRunNeedsARunAndFilesToIngest) {
  for (const std::string& args :
       {std::string("--recovers-run 0 --ingest x.rft"),
        std::string("--recovers-run -4 --ingest x.rft"),
        std::string("--recovers-run 3"),
        std::string("--recovers-run 3 --ingest x.rft --listen unix:s")}) {
    CmdResult r = RunRooftrace("collect --store /nonexistent/s.sqlite " + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find("--recovers-run"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("with --ingest"), std::string::npos) << r.out;
  }
}

// `devices` prints the table with H100's dense bf16 peak and ridge.
TEST(CliTest, DevicesTable) {
  CmdResult r = RunRooftrace("devices");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("h100-sxm"), std::string::npos);
  EXPECT_NE(r.out.find("989.4"), std::string::npos);
  EXPECT_EQ(r.out.find("1979"), std::string::npos) << "sparsity figure shown";
  EXPECT_NE(r.out.find("mi300x"), std::string::npos);
}

// `devices --format csv|json` are machine-readable.
TEST(CliTest, DevicesCsvAndJson) {
  CmdResult csv = RunRooftrace("devices --format csv");
  EXPECT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.out.rfind("key,name,dram_gb_per_s", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("\nl4,"), std::string::npos);
  CmdResult json = RunRooftrace("devices --format json");
  EXPECT_EQ(json.exit_code, 0);
  EXPECT_EQ(json.out.front(), '[');
  EXPECT_NE(json.out.find("\"key\": \"a100-80gb\""), std::string::npos);
  CmdResult bad = RunRooftrace("devices --format xml");
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
