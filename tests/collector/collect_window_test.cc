// `collect --window` and `collect --metrics-listen` end to end: a paced
// producer (tests/support/paced_stream.h, known totals) streams into the
// real collector; the windows are read back from the store, judged by the
// real `rooftrace history`, and the metrics scraped directly and by
// Debian's Prometheus server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/json.h"
#include "tests/support/child_process.h"
#include "tests/support/paced_stream.h"
#include "tests/support/pg_server.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using std::chrono::milliseconds;
using test_support::PacedStream;
using test_support::SpawnLogged;
using test_support::StoreQuery;
using test_support::TempDir;
using test_support::WaitExitWithin;

const std::string kTests = std::string(ROOFTRACE_BINARY_DIR) + "/tests";
const std::string kCli = kTests + "/collector_cli";
const std::string kProducer = kTests + "/test_producer";
const std::string kRooftrace =
    std::string(ROOFTRACE_BINARY_DIR) + "/bin/rooftrace";
const std::string kPrometheus = "/usr/bin/prometheus";
const std::string kDashboard =
    std::string(ROOFTRACE_SOURCE_DIR) + "/docs/grafana-dashboard.json";

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Waits until `path` holds `text`; what it holds then.
std::string WaitForText(const std::string& path, const std::string& text,
                        int timeout_ms = 20000) {
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    const std::string got = Slurp(path);
    if (got.find(text) != std::string::npos) return got;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return Slurp(path);
}

// A paced stream of `batches` batches `batch_ms` apart, 20 kernels each.
PacedStream Stream(uint64_t batches, uint64_t batch_ms) {
  PacedStream s;
  s.batches = batches;
  s.batch_ms = batch_ms;
  s.kernels_per_batch = 20;
  return s;
}

// The producer's words for `s` (test_producer --paced) sending to `sink`.
std::vector<std::string> ProducerArgs(const PacedStream& s,
                                      const std::string& sink) {
  std::vector<std::string> a = {kProducer,
                                "--paced",
                                std::to_string(s.batches),
                                "--batch-ms",
                                std::to_string(s.batch_ms),
                                "--kernels-per-batch",
                                std::to_string(s.kernels_per_batch)};
  // Empty: the producer takes ROOFTRACE_SINK (profile sets it).
  if (!sink.empty()) a.insert(a.end(), {"--sink", sink});
  if (s.step_batch != UINT64_MAX) {
    a.insert(a.end(), {"--step-batch", std::to_string(s.step_batch)});
  }
  if (s.drop_batch != UINT64_MAX) {
    a.insert(a.end(), {"--drop-batch", std::to_string(s.drop_batch),
                       "--dropped", std::to_string(s.dropped)});
  }
  return a;
}

// A collector listening on DIR/c.sock with `extra` flags, fed by one
// paced producer, stopped with SIGTERM once the producer is done. Returns
// the collector's log.
std::string CollectPaced(const TempDir& dir, const PacedStream& s,
                         const std::vector<std::string>& extra,
                         const std::function<void()>& before_stop = {},
                         const std::string& store = "") {
  const std::string sock = "unix:" + dir.File("c.sock");
  std::vector<std::string> args = {
      kCli, "collect", "--listen", sock, "--store",
      store.empty() ? dir.File("runs.sqlite") : store};
  args.insert(args.end(), extra.begin(), extra.end());
  const std::string log = dir.File("collect.log");
  const pid_t collector = SpawnLogged(args, dir.path().string(), log);
  EXPECT_NE(WaitForText(log, "listening on").find("listening on"),
            std::string::npos);
  const pid_t producer = SpawnLogged(ProducerArgs(s, sock), dir.path().string(),
                                     dir.File("producer.log"));
  EXPECT_EQ(WaitExitWithin(producer, milliseconds(60000)), 0)
      << Slurp(dir.File("producer.log"));
  // The session is stored when its connection closes.
  std::this_thread::sleep_for(milliseconds(300));
  if (before_stop) before_stop();
  kill(collector, SIGTERM);
  EXPECT_EQ(WaitExitWithin(collector, milliseconds(30000)), 0) << Slurp(log);
  return Slurp(log);
}

// GET `path` from 127.0.0.1:`port`; the whole response ("" when it could
// not connect). `auth`: an Authorization header value, if any.
std::string HttpGet(int port, const std::string& path,
                    const std::string& auth = "") {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(fd);
    return "";
  }
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n";
  if (!auth.empty()) req += "Authorization: " + auth + "\r\n";
  req += "\r\n";
  (void)!write(fd, req.data(), req.size());
  std::string out;
  char buf[8192];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, n);
  close(fd);
  return out;
}

std::string UrlEncode(const std::string& s) {
  std::string out;
  char hex[4];
  for (unsigned char c : s) {
    if (isalnum(c) || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// RFC 4648 base64, for a basic-auth header.
std::string Base64(const std::string& in) {
  static const char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<uint8_t>(in[i + 2]);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < in.size() ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

// The port of "metrics on http://127.0.0.1:PORT/metrics" in `log`.
int MetricsPort(const std::string& log) {
  const std::string key = "metrics on http://127.0.0.1:";
  const size_t at = log.find(key);
  return at == std::string::npos ? -1 : atoi(log.c_str() + at + key.size());
}

// A TCP port free now on loopback.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  socklen_t len = sizeof sa;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  close(fd);
  return ntohs(sa.sin_port);
}

// Each window is a run with the collector's labels plus window and
// window_start; together they hold exactly the stream, the producer's
// loss sits in the window it happened in, and every window is complete.
TEST(CollectWindowTest, WindowsAreRunsThatAddUpToTheStream) {
  TempDir dir("collect_window");
  PacedStream s = Stream(24, 50);
  s.drop_batch = 8;
  s.dropped = 7;
  const std::string log =
      CollectPaced(dir, s, {"--window", "300ms", "--label", "model=paced"});
  StoreQuery q(dir.File("runs.sqlite"));
  const int64_t runs = q.Int("SELECT COUNT(*) FROM runs");
  EXPECT_GE(runs, 3) << log;
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM run_labels WHERE key = 'window'"),
            runs);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM run_labels WHERE key = "
                  "'window_start' AND value LIKE '____-__-__T__:__:__Z'"),
            runs);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM run_labels WHERE key = 'model' AND "
                  "value = 'paced'"),
            runs);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs WHERE complete = 1"), runs)
      << q.Text("SELECT group_concat(incomplete_reason, '|') FROM runs");
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"),
            static_cast<int64_t>(s.AKernels() + s.BKernels()));
  EXPECT_EQ(q.Int("SELECT SUM(duration_ns) FROM kernels WHERE family = "
                  "'rt_paced_a_kernel'"),
            static_cast<int64_t>(s.ATotalNs()));
  EXPECT_EQ(q.Int("SELECT SUM(flops) FROM kernels"),
            static_cast<int64_t>((s.AKernels() + s.BKernels()) *
                                 s.flops_per_kernel));
  // More than one window holds kernels: the stream was cut, not stored at
  // its end.
  EXPECT_GE(q.Int("SELECT COUNT(DISTINCT run_id) FROM kernels"), 3);
  // Every kernel's session is a session of its own window's run.
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels k JOIN sessions s ON "
                  "s.session_id = k.session_id AND s.run_id <> k.run_id"),
            0);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM import_stats WHERE name = "
                  "'producer_dropped_kernel' AND value > 0"),
            1);
  EXPECT_EQ(q.Int("SELECT SUM(value) FROM import_stats WHERE name = "
                  "'producer_dropped_kernel'"),
            7);
  EXPECT_NE(log.find("windows stored as runs"), std::string::npos) << log;
}

// The same windows in a PostgreSQL store (a real throwaway server), read
// back by `rooftrace history`: every window a complete, labelled run,
// together the whole stream.
TEST(CollectWindowTest, WindowsInAPostgresqlStore) {
  std::string error;
  bool missing = false;
  test_support::PgServer* pg = test_support::SharedPgServer(&error, &missing);
  if (pg == nullptr && missing) GTEST_SKIP() << error;
  ASSERT_NE(pg, nullptr) << error;
  const std::string url = pg->CreateDatabase("windows", &error);
  ASSERT_FALSE(url.empty()) << error;
  TempDir dir("collect_window_pg");
  PacedStream s = Stream(24, 50);
  const std::string log = CollectPaced(
      dir, s, {"--window", "300ms", "--label", "model=pg"}, {}, url);
  const pid_t h = SpawnLogged({kRooftrace, "history", url, "--where",
                               "model=pg", "--by", "family", "--format",
                               "json"},
                              dir.path().string(), dir.File("history.json"));
  ASSERT_EQ(WaitExitWithin(h, milliseconds(60000)), 0)
      << Slurp(dir.File("history.json"));
  auto json = json::ParseFile(dir.File("history.json"));
  ASSERT_TRUE(json.ok()) << json.status().message();
  const json::Value* runs = json->Find("runs");
  ASSERT_TRUE(runs != nullptr && runs->is_array());
  double kernels = 0;
  int with_kernels = 0;
  for (const json::Value& r : runs->as_array()) {
    EXPECT_TRUE(r.Find("complete")->as_bool());
    ASSERT_NE(r.Find("labels")->Find("window"), nullptr);
    kernels += r.Find("kernel_count")->as_number();
    with_kernels += r.Find("kernel_count")->as_number() > 0;
  }
  EXPECT_GE(runs->as_array().size(), 3u) << log;
  EXPECT_GE(with_kernels, 3) << log;
  EXPECT_EQ(kernels, static_cast<double>(s.AKernels() + s.BKernels()));
}

// profile --window: the command's producers stored window by window, each
// window a run of origin profile; the summary names the windows' runs.
TEST(CollectWindowTest, ProfileStoresTheCommandInWindows) {
  TempDir dir("profile_window");
  PacedStream s = Stream(20, 50);
  std::vector<std::string> args = {kCli, "profile", "-o",
                                   dir.File("runs.sqlite"), "--window",
                                   "200ms", "--label", "model=p", "--"};
  for (const std::string& a : ProducerArgs(s, "")) args.push_back(a);
  const std::string log = dir.File("profile.log");
  const std::string fake =
      "ROOFTRACE_INJECT_LIB=" + kTests + "/librooftrace_fake_inject.so";
  const pid_t p = SpawnLogged(args, dir.path().string(), log, {fake});
  EXPECT_EQ(WaitExitWithin(p, milliseconds(60000)), 0) << Slurp(log);
  StoreQuery q(dir.File("runs.sqlite"));
  const int64_t runs = q.Int("SELECT COUNT(*) FROM runs");
  EXPECT_GE(runs, 3) << Slurp(log);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM runs WHERE origin = 'profile'"), runs);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM run_labels WHERE key = 'window'"),
            runs);
  EXPECT_EQ(q.Int("SELECT COUNT(*) FROM kernels"),
            static_cast<int64_t>(s.AKernels() + s.BKernels()));
  EXPECT_GE(q.Int("SELECT COUNT(DISTINCT run_id) FROM kernels"), 2);
  EXPECT_NE(Slurp(log).find("windows stored as runs"), std::string::npos)
      << Slurp(log);
}

// A bad --window is refused before anything is stored.
TEST(CollectWindowTest, BadWindowIsRefusedWithTheForms) {
  TempDir dir("collect_window_bad");
  const std::string log = dir.File("collect.log");
  const pid_t p = SpawnLogged({kCli, "collect", "--window", "5 minutes",
                               "--store", dir.File("runs.sqlite")},
                              dir.path().string(), log);
  EXPECT_EQ(WaitExitWithin(p, milliseconds(10000)), 2);
  EXPECT_NE(Slurp(log).find("--window '5 minutes': give a whole number and "
                            "a unit"),
            std::string::npos)
      << Slurp(log);
  EXPECT_FALSE(std::filesystem::exists(dir.File("runs.sqlite")));
}

// The acceptance: one family's kernels get twice as slow mid-stream;
// `history --check` over the server's windows finds it, and only it.
TEST(CollectWindowTest, HistoryOverWindowsFindsAStepInOneFamily) {
  TempDir dir("collect_window_step");
  // 3 s in windows of 200 ms: about 15 windows, the step 1.1 s before the
  // end: history places a step once it has 5 runs after it
  // (--min-segment), and --window 8 takes a step 5 to 8 runs ago as new
  // (how many windows follow it depends on this machine's timing).
  PacedStream s = Stream(150, 20);
  s.step_batch = 95;
  // The window that holds the step mixes both levels (one run of the
  // series off its level by up to half the step): --max-noise 25 keeps
  // that one run from making the group "too noisy" to judge.
  CollectPaced(dir, s, {"--window", "200ms", "--label", "model=step"});
  const std::string out = dir.File("history.log");
  const pid_t h =
      SpawnLogged({kRooftrace, "history", dir.File("runs.sqlite"), "--where",
                   "model=step", "--by", "family", "--check", "--window",
                   "8", "--max-noise", "25"},
                  dir.path().string(), out);
  EXPECT_EQ(WaitExitWithin(h, milliseconds(60000)), 1) << Slurp(out);
  const std::string text = Slurp(out);
  const size_t a = text.find("rt_paced_a_kernel");
  ASSERT_NE(a, std::string::npos) << text;
  EXPECT_NE(text.find("slower"), std::string::npos) << text;
  // Only family A moved: it alone regressed; family B is judged ok.
  EXPECT_NE(text.find("REGRESSED"), std::string::npos) << text;
  const size_t regressed_line = text.find("\nREGRESSED");
  ASSERT_NE(regressed_line, std::string::npos) << text;
  EXPECT_NE(text.find("rt_paced_a_kernel", regressed_line), std::string::npos);
  EXPECT_LT(text.find("rt_paced_a_kernel", regressed_line),
            text.find('\n', regressed_line + 1));
  const size_t b_line = text.rfind('\n', text.find("rt_paced_b_kernel"));
  EXPECT_EQ(text.compare(b_line + 1, 2, "ok"), 0) << text;
  EXPECT_NE(text.find("1 group(s) regressed"), std::string::npos) << text;
}

// /metrics with --metrics-top 1: the family with the most kernel time has
// its series, the other family is counted as "other", and the counters
// hold the stream's totals; with a token, a scrape without it is refused.
TEST(CollectMetricsTest, TopFamiliesOtherAndTokenOnTheEndpoint) {
  TempDir dir("collect_metrics");
  PacedStream s = Stream(10, 50);
  std::string scraped, refused;
  const std::string token = "0123456789abcdef0123";
  setenv("ROOFTRACE_TOKEN", token.c_str(), 1);
  CollectPaced(dir, s,
               {"--window", "200ms", "--metrics-listen", "127.0.0.1:0",
                "--metrics-top", "1"},
               [&] {
                 const int port = MetricsPort(Slurp(dir.File("collect.log")));
                 refused = HttpGet(port, "/metrics");
                 const std::string b64 = Base64("x:" + token);
                 scraped = HttpGet(port, "/metrics", "Basic " + b64);
               });
  unsetenv("ROOFTRACE_TOKEN");
  EXPECT_NE(refused.find("401"), std::string::npos) << refused;
  EXPECT_NE(scraped.find("200 OK"), std::string::npos) << scraped;
  // B: 20 us a kernel against A's 10 us: B is the top family.
  const std::string b_launches =
      "rooftrace_kernel_launches_total{device=\"0:NVIDIA H100 80GB HBM3\","
      "family=\"rt_paced_b_kernel\",host=\"testhost\",phase=";
  const size_t at = scraped.find(b_launches);
  ASSERT_NE(at, std::string::npos) << scraped;
  EXPECT_EQ(scraped.find("family=\"rt_paced_a_kernel\""), std::string::npos);
  EXPECT_NE(scraped.find("family=\"other\""), std::string::npos);
  const size_t value = scraped.find("} ", at);
  EXPECT_EQ(atof(scraped.c_str() + value + 2),
            static_cast<double>(s.BKernels()));
  EXPECT_NE(scraped.find("rooftrace_window_roof_percent{"), std::string::npos);
  EXPECT_NE(scraped.find("rooftrace_producer_records_dropped_total{kind="),
            std::string::npos);
}

// The first number of a Prometheus /api/v1/query answer's first sample.
double FirstSample(const std::string& response) {
  const size_t body = response.find("\r\n\r\n");
  if (body == std::string::npos) return NAN;
  auto v = json::Parse(response.substr(body + 4));
  if (!v.ok()) return NAN;
  const json::Value* data = v->Find("data");
  const json::Value* result = data ? data->Find("result") : nullptr;
  if (result == nullptr || !result->is_array() || result->as_array().empty()) {
    return NAN;
  }
  const json::Value* value = result->as_array()[0].Find("value");
  if (value == nullptr || !value->is_array() || value->as_array().size() < 2 ||
      !value->as_array()[1].is_string()) {
    return NAN;
  }
  return atof(value->as_array()[1].as_string().c_str());
}

// Debian's Prometheus scrapes a collector fed with known totals; its own
// query API returns them exactly. The example Grafana dashboard is valid
// JSON and each of its panel queries is valid PromQL to that server.
TEST(CollectMetricsTest, PrometheusStoresTheExactTotals) {
  if (access(kPrometheus.c_str(), X_OK) != 0) {
    GTEST_SKIP() << kPrometheus
                 << " not installed (Debian package prometheus; "
                    "scripts/setup.sh installs it)";
  }
  TempDir dir("collect_prometheus");
  PacedStream s = Stream(20, 50);
  s.drop_batch = 3;
  s.dropped = 5;
  const int prom_port = FreePort();
  pid_t prometheus = -1;
  std::vector<std::string> answers;
  CollectPaced(
      dir, s, {"--window", "300ms", "--metrics-listen", "127.0.0.1:0"}, [&] {
        const int port = MetricsPort(Slurp(dir.File("collect.log")));
        ASSERT_GT(port, 0);
        std::ofstream(dir.File("prometheus.yml"))
            << "global:\n  scrape_interval: 200ms\n"
            << "scrape_configs:\n  - job_name: rooftrace\n"
            << "    scrape_interval: 200ms\n    static_configs:\n"
            << "      - targets: ['127.0.0.1:" << port << "']\n";
        prometheus = SpawnLogged(
            {kPrometheus, "--config.file=" + dir.File("prometheus.yml"),
             "--storage.tsdb.path=" + dir.File("tsdb"),
             "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
            dir.path().string(), dir.File("prometheus.log"));
        // The collector is done with the stream; wait until Prometheus has
        // scraped its final counters (all launches).
        const std::string launches = UrlEncode(
            "sum(rooftrace_kernel_launches_total)");
        const double want = static_cast<double>(s.AKernels() + s.BKernels());
        double got = NAN;
        for (int i = 0; i < 300 && !(got == want); ++i) {
          std::this_thread::sleep_for(milliseconds(100));
          got = FirstSample(
              HttpGet(prom_port, "/api/v1/query?query=" + launches));
        }
        EXPECT_EQ(got, want) << Slurp(dir.File("prometheus.log"));
        for (const std::string& q :
             {std::string("sum(rooftrace_kernel_seconds_total{family="
                          "\"rt_paced_a_kernel\"})"),
              std::string("sum(rooftrace_kernel_flops_total)"),
              std::string("sum(rooftrace_kernel_dram_bytes_total)"),
              std::string("sum(rooftrace_producer_records_dropped_total{"
                          "kind=\"kernel\"})")}) {
          answers.push_back(
              HttpGet(prom_port, "/api/v1/query?query=" + UrlEncode(q)));
        }
        // The dashboard's queries, each to the same server.
        auto dash = json::ParseFile(kDashboard);
        ASSERT_TRUE(dash.ok()) << dash.status().message();
        const json::Value* panels = dash->Find("panels");
        ASSERT_TRUE(panels != nullptr && panels->is_array());
        size_t exprs = 0;
        for (const json::Value& p : panels->as_array()) {
          const json::Value* targets = p.Find("targets");
          ASSERT_TRUE(targets != nullptr && targets->is_array());
          for (const json::Value& t : targets->as_array()) {
            const json::Value* expr = t.Find("expr");
            ASSERT_TRUE(expr != nullptr && expr->is_string());
            ++exprs;
            const std::string r = HttpGet(
                prom_port, "/api/v1/query?query=" + UrlEncode(expr->as_string()));
            EXPECT_NE(r.find("\"status\":\"success\""), std::string::npos)
                << expr->as_string() << "\n" << r;
          }
        }
        EXPECT_GE(exprs, 3u);
      });
  if (prometheus > 0) {
    kill(prometheus, SIGTERM);
    WaitExitWithin(prometheus, milliseconds(20000));
  }
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_NEAR(FirstSample(answers[0]), static_cast<double>(s.ATotalNs()) * 1e-9,
              1e-12);
  EXPECT_EQ(FirstSample(answers[1]),
            static_cast<double>((s.AKernels() + s.BKernels()) *
                                s.flops_per_kernel));
  EXPECT_EQ(FirstSample(answers[2]),
            static_cast<double>((s.AKernels() + s.BKernels()) *
                                s.bytes_per_kernel));
  EXPECT_EQ(FirstSample(answers[3]), 5.0);
}

}  // namespace
}  // namespace rooftrace
