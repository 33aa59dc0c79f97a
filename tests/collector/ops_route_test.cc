// The ops route end to end (profile --ops torch): a real Python with
// Debian's CPU torch under the real injection library and rooftrace
// binary. The host comes first: its output and exit code are those of a
// bare run, whatever state torch is in.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proto/wire_constants.h"
#include "sources/rft/testing/trace_builder.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

extern char** environ;

namespace rooftrace {
namespace {

namespace fs = std::filesystem;
using test_support::StoreQuery;
using test_support::TempDir;
using test_support::SessionInfo;
using test_support::TraceBuilder;

const std::string kRooftrace = std::string(ROOFTRACE_BINARY_DIR) +
                               "/bin/rooftrace";
const std::string kInjectLib = std::string(ROOFTRACE_BINARY_DIR) +
                               "/lib/librooftrace_inject.so";
constexpr char kPython[] = "/usr/bin/python3";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// Runs argv with our environment plus `extra` (KEY=VALUE), stdout and
// stderr to files; returns the exit code (-1 on a timeout, after a kill).
int RunCommand(const std::vector<std::string>& argv, const std::string& out,
        const std::string& err, const std::vector<std::string>& extra = {},
        int timeout_s = 240) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const std::string& kv : extra) env.push_back(kv);
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> args, envp;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const std::string& kv : env) envp.push_back(const_cast<char*>(kv.c_str()));
    envp.push_back(nullptr);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The lines of `text` that start with `prefix`.
std::vector<std::string> LinesStartingWith(const std::string& text,
                                           const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

class OpsRouteTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kInjectLib) || !fs::exists(kRooftrace)) {
      GTEST_SKIP() << kInjectLib << " not built (needs the CUDA toolkit)";
    }
    if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " is missing";
  }
  // Whether Debian's torch is there (scripts/setup.sh installs it).
  // Asked once per test program: importing torch takes seconds.
  bool HaveTorch() {
    static const bool have =
        RunCommand({kPython, "-c", "import torch"}, dir_.File("t.out"),
                   dir_.File("t.err")) == 0;
    return have;
  }
  // Runs `script` bare, then under `profile --ops torch`; both outputs are
  // kept in out_/err_ (bare_out_ for the bare run's stdout).
  void RunBoth(const std::string& script,
               const std::vector<std::string>& extra = {}) {
    WriteFile(dir_.File("script.py"), script);
    bare_rc_ = RunCommand({kPython, dir_.File("script.py")}, dir_.File("bare.out"),
                   dir_.File("bare.err"), extra);
    bare_out_ = Slurp(dir_.File("bare.out"));
    rc_ = RunCommand({kRooftrace, "profile", "--ops", "torch", "-o", store_, "--",
               kPython, dir_.File("script.py")},
              dir_.File("ops.out"), dir_.File("ops.err"), extra);
    out_ = Slurp(dir_.File("ops.out"));
    err_ = Slurp(dir_.File("ops.err"));
  }
  // The program's own lines of profile's stdout (the kernel table follows).
  std::string ProgramLines(const std::string& marker) {
    std::string out;
    for (const std::string& l : LinesStartingWith(out_, marker)) out += l + "\n";
    return out;
  }

  TempDir dir_{"ops_route"};
  std::string store_ = dir_.File("run.sqlite");
  int bare_rc_ = 0, rc_ = 0;
  std::string bare_out_, out_, err_;
};

constexpr char kModel[] = R"(import threading
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.SiLU(),
                        torch.nn.Linear(128, 32))
x = torch.randn(4, 64)
with torch.no_grad():
    for _ in range(3):
        y = m(x)
print("model: sum=%.6f" % float(y.sum()))
print("model: tid=%d" % threading.get_native_id())
)";

// A small real model under --ops torch: its output is unchanged, and its
// operators are in the store with input dims, types and the thread the
// model ran on.
TEST_F(OpsRouteTest, ARealTorchModelReportsItsOperators) {
  if (!HaveTorch()) GTEST_SKIP() << "python3-torch is not installed (setup.sh)";
  RunBoth(kModel);
  ASSERT_EQ(bare_rc_, 0) << Slurp(dir_.File("bare.err"));
  EXPECT_EQ(rc_, 0) << err_;
  const std::vector<std::string> sums = LinesStartingWith(bare_out_,
                                                          "model: sum=");
  ASSERT_EQ(sums.size(), 1u) << bare_out_;
  EXPECT_EQ(LinesStartingWith(out_, "model: sum="), sums) << out_;
  EXPECT_TRUE(LinesStartingWith(err_, "rooftrace: ops route").empty()) << err_;
  EXPECT_EQ(LinesStartingWith(err_, "rooftrace profile: ops route: ").size(),
            1u)
      << err_;
  const std::vector<std::string> tid = LinesStartingWith(out_, "model: tid=");
  ASSERT_EQ(tid.size(), 1u) << out_;
  StoreQuery q(store_);
  const std::string ops =
      "FROM nvtx_ranges WHERE domain = 'rooftrace.torch_ops' ";
  // Three passes through two linear layers.
  EXPECT_EQ(q.Int("SELECT count(*) " + ops + "AND name LIKE 'aten::linear%'"),
            6);
  EXPECT_EQ(q.Int("SELECT count(*) " + ops + "AND name = 'aten::linear' || "
                  "char(9) || '{\"Input Dims\":[[4,64],[128,64],[128]],"
                  "\"Input type\":[\"float\",\"float\",\"float\"]}'"),
            3);
  EXPECT_EQ(q.Int("SELECT count(*) " + ops + "AND name LIKE 'aten::silu%'"),
            3);
  EXPECT_EQ(q.Int("SELECT count(DISTINCT thread_id) " + ops), 1);
  EXPECT_EQ("model: tid=" +
                std::to_string(q.Int("SELECT min(thread_id) " + ops)),
            tid[0]);
  EXPECT_EQ(q.Int("SELECT count(*) " + ops + "AND end_ns < start_ns"), 0);
  EXPECT_GE(q.Int("SELECT value FROM import_stats WHERE name = "
                  "'ops_received'"),
            q.Int("SELECT count(*) " + ops));
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE name = "
                  "'ops_malformed'"),
            0);
}

// A program that runs torch's profiler itself gets its own profile, as
// bare; the route hands over with one line.
TEST_F(OpsRouteTest, AProgramThatProfilesItselfKeepsItsProfile) {
  if (!HaveTorch()) GTEST_SKIP() << "python3-torch is not installed (setup.sh)";
  RunBoth(R"(import torch
m = torch.nn.Linear(8, 8)
x = torch.ones(2, 8)
with torch.autograd.profiler.profile(record_shapes=True) as p:
    y = m(x)
names = sorted({e.name for e in p.function_events if e.name == "aten::linear"})
print("self: %s %d" % (names, len(p.function_events) > 0))
)");
  ASSERT_EQ(bare_rc_, 0) << Slurp(dir_.File("bare.err"));
  EXPECT_EQ(rc_, 0) << err_;
  const auto bare = LinesStartingWith(bare_out_, "self: ");
  ASSERT_EQ(bare.size(), 1u) << bare_out_;
  EXPECT_EQ(bare[0], "self: ['aten::linear'] 1");
  EXPECT_EQ(LinesStartingWith(out_, "self: "), bare) << out_;
  const auto said = LinesStartingWith(err_, "rooftrace: ops route");
  ASSERT_EQ(said.size(), 1u) << err_;
  EXPECT_NE(said[0].find("starts torch's profiler itself"), std::string::npos)
      << said[0];
}

// A torch too old (here: one without an autograd profiler) leaves the
// program as bare, with one line saying why.
TEST_F(OpsRouteTest, AnOldTorchTurnsTheRouteOffWithOneLine) {
  fs::create_directories(dir_.path() / "old" / "torch");
  WriteFile(dir_.File("old/torch/__init__.py"), "__version__ = '1.4.0'\n");
  RunBoth("import torch\nprint('old: ' + torch.__version__)\n",
          {"PYTHONPATH=" + dir_.File("old")});
  EXPECT_EQ(bare_rc_, 0);
  EXPECT_EQ(rc_, 0) << err_;
  EXPECT_EQ(LinesStartingWith(out_, "old: "),
            std::vector<std::string>{"old: 1.4.0"});
  const auto said = LinesStartingWith(err_, "rooftrace: ops route");
  ASSERT_EQ(said.size(), 1u) << err_;
  EXPECT_NE(said[0].find("has no autograd profiler"), std::string::npos)
      << said[0];
}

// The host's own sitecustomize still runs (ours chains it), and a program
// without torch runs as bare, saying nothing.
TEST_F(OpsRouteTest, TheHostsSitecustomizeStillRuns) {
  fs::create_directories(dir_.path() / "site");
  WriteFile(dir_.File("site/sitecustomize.py"), "print('site: host')\n");
  RunBoth("print('main: ran')\n", {"PYTHONPATH=" + dir_.File("site")});
  EXPECT_EQ(bare_rc_, 0);
  EXPECT_EQ(rc_, 0) << err_;
  EXPECT_EQ(LinesStartingWith(bare_out_, "site: "),
            std::vector<std::string>{"site: host"});
  EXPECT_EQ(LinesStartingWith(out_, "site: "),
            std::vector<std::string>{"site: host"});
  EXPECT_EQ(LinesStartingWith(out_, "main: "),
            std::vector<std::string>{"main: ran"});
  EXPECT_TRUE(LinesStartingWith(err_, "rooftrace: ops route").empty()) << err_;
  EXPECT_EQ(err_.find("Traceback"), std::string::npos) << err_;
  // The summary says no operator came, and why that may be.
  EXPECT_EQ(LinesStartingWith(err_, "rooftrace profile: --ops torch: no torch "
                                    "operator was received").size(),
            1u)
      << err_;
}

// A command that is not Python runs as without the flag.
TEST_F(OpsRouteTest, ACommandThatIsNotPythonRunsAsBare) {
  const int rc = RunCommand({kRooftrace, "profile", "--ops", "torch", "-o", store_,
                      "--", "/bin/sh", "-c", "echo plain: hello; exit 5"},
                     dir_.File("o"), dir_.File("e"));
  EXPECT_EQ(rc, 5) << Slurp(dir_.File("e"));
  EXPECT_EQ(LinesStartingWith(Slurp(dir_.File("o")), "plain: "),
            std::vector<std::string>{"plain: hello"});
}

// --ops takes torch or off, and says so.
TEST_F(OpsRouteTest, AnUnknownOpsValueIsRefused) {
  const int rc = RunCommand({kRooftrace, "profile", "--ops", "jax", "-o", store_,
                      "--", "/bin/true"},
                     dir_.File("o"), dir_.File("e"));
  EXPECT_EQ(rc, 2);
  EXPECT_NE(Slurp(dir_.File("e")).find("--ops jax: use torch"),
            std::string::npos)
      << Slurp(dir_.File("e"));
}

// A stream as a Python host under --ops torch sends it: `analyze --by op`
// names the operator of each costed kernel, and `import` stores it with
// analytic figures, as for an imported torch.profiler trace (the linear's
// GEMM with its bias: 2 M N K + M N).
TEST_F(OpsRouteTest, AnalyzeAndImportOfALiveStreamNameEachKernelsOperator) {
  SessionInfo info;
  info.pid = 4242;
  TraceBuilder b(info);
  b.Hello();
  b.AddDevice(0, "NVIDIA H100 80GB HBM3");
  const uint64_t domain = b.Intern(wire::kTorchOpsDomain);
  const std::string linear =
      "aten::linear\t{\"Input Dims\":[[16,1024],[2816,1024],[2816]],"
      "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\","
      "\"c10::BFloat16\"]}";
  const std::string silu =
      "aten::silu\t{\"Input Dims\":[[16,2816]],\"Input type\":"
      "[\"c10::BFloat16\"]}";
  uint64_t t = 1'000'000'000, corr = 1, range = 1;
  for (int step = 0; step < 4; ++step) {
    for (const std::string* op : {&linear, &silu}) {
      wire::NvtxRange& r = b.AddNvtxRange(range++, *op, t, t + 40'000, 0, 0,
                                          info.pid);
      r.set_domain_iid(domain);
      b.AddLaunch(corr, t + 10'000);
      b.AddKernel(op == &linear ? "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn"
                                : "vectorized_elementwise_kernel<silu>",
                  corr, t + 50'000, t + 80'000);
      ++corr;
      t += 100'000;
    }
  }
  b.Goodbye(0);
  const std::string rft = dir_.File("live.rft");
  ASSERT_TRUE(b.WriteFile(rft).ok());
  ASSERT_EQ(RunCommand({kRooftrace, "analyze", rft, "--by", "op"},
                       dir_.File("a.out"), dir_.File("a.err")),
            0)
      << Slurp(dir_.File("a.err"));
  const std::string table = Slurp(dir_.File("a.out"));
  EXPECT_NE(table.find("aten::linear"), std::string::npos) << table;
  EXPECT_NE(table.find("aten::silu"), std::string::npos) << table;
  ASSERT_EQ(RunCommand({kRooftrace, "import", rft, "-o", store_},
                       dir_.File("i.out"), dir_.File("i.err")),
            0)
      << Slurp(dir_.File("i.err"));
  StoreQuery q(store_);
  const std::string stored = q.Text(
      "SELECT group_concat(op || ' ' || ifnull(flops, '-') || ' ' || "
      "flops_source, '; ') FROM kernels");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE op = 'aten::linear' "
                  "AND flops = 2 * 16 * 1024 * 2816 + 16 * 2816 AND flops_source = "
                  "'analytic'"),
            4)
      << stored;
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE op = 'aten::silu' "
                  "AND flops = 4 * 16 * 2816 AND bytes_source = 'analytic'"),
            4)
      << stored;
  EXPECT_EQ(q.Int("SELECT value FROM import_stats WHERE name = "
                  "'kernels_from_ops'"),
            8);
}

}  // namespace
}  // namespace rooftrace
