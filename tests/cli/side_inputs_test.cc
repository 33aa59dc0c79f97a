// Issue 37 P1.2 (and the round's other command-line checks, P2.9 and
// P2.14): every input a command names beside its main one
// (--device-profile, --expect, --capture, --counters, --model) is read
// within a cap that fits its kind, like the main input: a device
// (/dev/zero) is refused by name at once, a FIFO is read as a stream (a
// valid one works) and one that never ends is refused at the cap. Each
// command runs as the real binary under a deadline, so that the old
// behaviour (reading /dev/zero into memory for minutes) fails the test
// instead of hanging it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

using Clock = std::chrono::steady_clock;

struct Ran {
  int code = -1;  // -1: still running at the deadline (then killed)
  std::string out;
  int64_t ms = 0;
};

// `rooftrace ARGS...` with `env` added and `input` (a path) on standard
// input, stdout and stderr into one text, killed when still running after
// 20 s.
Ran Rooftrace(const std::vector<std::string>& args, const std::string& log,
              const std::vector<std::string>& env = {},
              const std::string& input = "/dev/null") {
  const auto start = Clock::now();
  std::vector<std::string> words = {std::string(ROOFTRACE_BINARY_DIR) +
                                    "/bin/rooftrace"};
  words.insert(words.end(), args.begin(), args.end());
  Ran r;
  r.code = test_support::WaitExitWithin(
      test_support::SpawnLogged(
          words, std::filesystem::path(log).parent_path().string(), log, env,
          input),
      std::chrono::seconds(20));
  r.ms = test_support::MsSince(start);
  r.out = testing::ReadFile(log);
  return r;
}

// A FIFO at `path` fed by a thread, until the reader goes: `text` once,
// or (empty) `fill` bytes for ever.
class Fifo {
 public:
  Fifo(const std::string& path, std::string text, char fill = '\0')
      : path_(path), text_(std::move(text)), fill_(fill) {
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
    thread_ = std::thread([this] {
      const int fd = open(path_.c_str(), O_WRONLY);
      if (fd < 0) return;
      signal(SIGPIPE, SIG_IGN);
      if (!text_.empty()) {
        (void)!write(fd, text_.data(), text_.size());
      } else {
        const std::string zeros(1 << 16, fill_);
        while (!done_ && write(fd, zeros.data(), zeros.size()) > 0) {
        }
      }
      close(fd);
    });
  }
  ~Fifo() {
    done_ = true;
    // A writer still waiting for a reader: open the other end once.
    const int fd = open(path_.c_str(), O_RDONLY | O_NONBLOCK);
    thread_.join();
    if (fd >= 0) close(fd);
    unlink(path_.c_str());
  }

 private:
  std::string path_, text_;
  char fill_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// A PyTorch profiler (Kineto) trace of one kernel: what --capture maps.
std::string WriteKinetoTrace(const test_support::TempDir& dir) {
  const std::string path = dir.File("kineto.json");
  std::ofstream(path)
      << "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, "
         "\"name\": \"NVIDIA H100 80GB HBM3\"}], \"traceEvents\": [{\"ph\": "
         "\"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
         "\"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0, "
         "\"stream\": 7, \"correlation\": 1}}]}\n";
  return path;
}

// /dev/zero as each side input of each command that takes it: exit 2
// within seconds, naming the option's file and saying it is a device.
TEST(SideInputsTest, DevicesAreRefusedAtOnce) {
  test_support::TempDir dir{"side_inputs_device"};
  const std::string trace = test_support::WriteLlmTrace(dir);
  const std::string kineto = WriteKinetoTrace(dir);
  const std::string store = dir.File("runs.sqlite");
  const std::string z = "/dev/zero";
  const std::vector<std::vector<std::string>> commands = {
      {"analyze", trace, "--device-profile", z},
      {"analyze", trace, "--expect", z},
      {"analyze", kineto, "--capture", z},
      {"analyze", trace, "--model", z},
      {"import", trace, "-o", store, "--device-profile", z},
      {"import", trace, "-o", store, "--counters", z},
      {"import", kineto, "-o", store, "--capture", z},
      {"import", trace, "-o", store, "--model", z},
      {"collect", "--store", store, "--ingest", trace, "--device-profile", z},
      {"diff", trace, trace, "--device-profile", z},
      {"predict", "--model", z, "--device", "h100-sxm"},
  };
  for (const auto& c : commands) {
    const Ran r = Rooftrace(c, dir.File("log"));
    const std::string what = c[0] + " " + c[c.size() - 2] + " " + c.back();
    EXPECT_EQ(r.code, 2) << what << ": " << r.out;
    EXPECT_LT(r.ms, 10000) << what;
    EXPECT_NE(r.out.find(z), std::string::npos) << what << ": " << r.out;
    EXPECT_NE(r.out.find("a device"), std::string::npos)
        << what << ": " << r.out;
  }
}

// A FIFO that never ends, as a device profile, a model config and a
// prediction: refused at its kind's cap (a profile: 1 MiB) within
// seconds, saying it is larger than such a file holds; as a --capture
// trace, refused at the stream budget (ROOFTRACE_MAX_DECOMPRESSED_MIB).
// A FIFO carrying a real config is read (it used to be "no such file").
TEST(SideInputsTest, FifosAreReadWithinTheirCap) {
  test_support::TempDir dir{"side_inputs_fifo"};
  const std::string trace = test_support::WriteLlmTrace(dir);
  const std::string kineto = WriteKinetoTrace(dir);
  for (const char* option : {"--device-profile", "--model", "--expect"}) {
    const std::string fifo = dir.File("endless");
    Fifo endless(fifo, "");
    const Ran r = Rooftrace({"analyze", trace, option, fifo}, dir.File("log"));
    EXPECT_EQ(r.code, 2) << option << ": " << r.out;
    EXPECT_LT(r.ms, 10000) << option;
    EXPECT_NE(r.out.find(fifo), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("larger than"), std::string::npos) << r.out;
  }
  {
    const std::string fifo = dir.File("endless_capture");
    Fifo endless(fifo, "", ' ');
    const Ran r =
        Rooftrace({"analyze", kineto, "--capture", fifo}, dir.File("log"),
                  {"ROOFTRACE_MAX_DECOMPRESSED_MIB=8"});
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_LT(r.ms, 10000);
    EXPECT_NE(r.out.find("8 MiB"), std::string::npos) << r.out;
  }
  const std::string config = testing::ReadFile(
      std::string(ROOFTRACE_SOURCE_DIR) + "/model/configs/Llama-3-8B.json");
  ASSERT_FALSE(config.empty());
  const std::string fifo = dir.File("config");
  Fifo carrying(fifo, config);
  const Ran r = Rooftrace({"predict", "--model", fifo, "--device", "h100-sxm"},
                          dir.File("log"));
  EXPECT_EQ(r.code, 0) << r.out;
}

// Issue 37 P2.14: a negative --max-decompressed-mib is refused as given
// (it was echoed as 18446744073709551615), and /dev/zero on standard input
// is refused by its first byte (it was copied, 4.8 GB, before the format
// was looked at).
TEST(SideInputsTest, NegativeBudgetAndZerosOnStdinAreRefusedAsGiven) {
  test_support::TempDir dir{"side_inputs_messages"};
  const std::string trace = test_support::WriteLlmTrace(dir);
  const Ran negative =
      Rooftrace({"import", trace, "-o", dir.File("runs.sqlite"),
                 "--max-decompressed-mib", "-1"},
                dir.File("log"));
  EXPECT_EQ(negative.code, 2) << negative.out;
  EXPECT_NE(negative.out.find("--max-decompressed-mib -1:"), std::string::npos)
      << negative.out;
  EXPECT_EQ(negative.out.find("18446744073709551615"), std::string::npos);
  const Ran zeros =
      Rooftrace({"analyze", "-"}, dir.File("log"), {}, "/dev/zero");
  EXPECT_EQ(zeros.code, 2) << zeros.out;
  EXPECT_LT(zeros.ms, 5000);
  EXPECT_NE(zeros.out.find("zero byte"), std::string::npos) << zeros.out;
}

// Issue 37 P2.9: a kernel name a trace spells with a lone surrogate
// (\ud800, decoded to the bytes ED A0 80) is written as U+FFFD (one per
// byte, as a decoder replaces a sequence that cannot start) by every
// JSON writer (analyze --format json, export --perfetto: one escaper,
// base/json_quote.h), so that strict parsers read the files.
TEST(SideInputsTest, LoneSurrogatesAreWrittenAsValidUtf8) {
  test_support::TempDir dir{"side_inputs_utf8"};
  const std::string trace = dir.File("surrogate.json");
  std::ofstream(trace)
      << "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, "
         "\"name\": \"NVIDIA H100 80GB HBM3\"}], \"traceEvents\": [{\"ph\": "
         "\"X\", \"cat\": \"kernel\", \"name\": \"k\\ud800x\", \"pid\": 0, "
         "\"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0, "
         "\"stream\": 7, \"correlation\": 1}}]}\n";
  const Ran json =
      Rooftrace({"analyze", trace, "--by", "kernel", "--format", "json"},
                dir.File("log"));
  ASSERT_EQ(json.code, 0) << json.out;
  const std::string perfetto = dir.File("p.json");
  const Ran exported =
      Rooftrace({"export", trace, "--perfetto", perfetto}, dir.File("log"));
  ASSERT_EQ(exported.code, 0) << exported.out;
  for (const std::string& text : {json.out, testing::ReadFile(perfetto)}) {
    EXPECT_EQ(text.find("\xED\xA0\x80"), std::string::npos);
    EXPECT_NE(text.find("k\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDx"),
              std::string::npos)
        << text;
  }
}

// Issue 37 P2.10: a label holding terminal escape sequences (a title
// change, a screen clear, a bell) is printed with them as '?' by the text
// outputs of analyze, diff and history.
TEST(SideInputsTest, TerminalEscapesInLabelsAreNotPrinted) {
  test_support::TempDir dir{"side_inputs_escapes"};
  const std::string trace = test_support::WriteLlmTrace(dir);
  const std::string store = dir.File("runs.sqlite");
  const std::string label = "note=\x1b]0;owned\x07\x1b[2Jx\xc2\x9b";
  ASSERT_EQ(Rooftrace({"collect", "--store", store, "--ingest", trace,
                       "--label", label, "--label", "b=m"},
                      dir.File("log"))
                .code,
            0);
  for (const std::vector<std::string>& c :
       std::vector<std::vector<std::string>>{
           {"analyze", store},
           {"diff", store, store},
           {"history", store, "--where", "b=m"}}) {
    const Ran r = Rooftrace(c, dir.File("log"));
    EXPECT_EQ(r.code, 0) << c[0] << ": " << r.out;
    EXPECT_NE(r.out.find("note=?]0;owned??[2Jx?"), std::string::npos)
        << c[0] << ": " << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << c[0];
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << c[0];
  }
}

}  // namespace
}  // namespace rooftrace
