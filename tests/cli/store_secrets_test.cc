// Issue 37 P1.1: a PostgreSQL store's password never reaches anything
// rooftrace shows. Every command that opens a store runs, in every output
// format, against a real throwaway server (tests/support/pg_server.h) on
// which the store's role must give its password (scram-sha-256), so that
// the password in the URL is the one that lets it in; stdout, stderr,
// every file written and the collector's command line (/proc/PID/cmdline)
// are searched for it. SQLite stores are shown by their path, unchanged.
// libpq's own password sources (PGPASSWORD, PGPASSFILE, PGSERVICE) work
// through the URLs rooftrace takes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/commands.h"
#include "base/url_secrets.h"
#include "collector/commands.h"
#include "store/db.h"
#include "tests/support/child_process.h"
#include "tests/support/pg_server.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_store.h"

namespace rooftrace {
namespace {

constexpr char kUser[] = "secret_user";
constexpr char kPassword[] = "Zq7pw4Secret";
// What must never be shown: the password, or a piece of it long enough to
// be one (libpq quotes the part of a malformed URL it took for a port).
constexpr char kPiece[] = "Zq7pw";

// Runs `sql` as the server's superuser (trust on its socket); "" or the
// error.
std::string Superuser(const test_support::PgServer& server,
                      const std::string& sql) {
  PGconn* c = PQconnectdb(server.Url("postgres").c_str());
  std::string error;
  if (PQstatus(c) != CONNECTION_OK) {
    error = PQerrorMessage(c);
  } else {
    PGresult* r = PQexec(c, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      error = PQresultErrorMessage(r);
    }
    PQclear(r);
  }
  PQfinish(c);
  return error;
}

// The shared server, with kUser asked for its password (scram-sha-256) on
// the socket, and a database `name` it owns; nullptr with `*error` set
// (and `*missing` when the server binaries are not installed).
test_support::PgServer* ServerWithPasswordRole(const std::string& name,
                                               std::string* error,
                                               bool* missing) {
  test_support::PgServer* server = test_support::SharedPgServer(error, missing);
  if (server == nullptr) return nullptr;
  static bool role_made = false;
  if (!role_made) {
    const std::string made =
        Superuser(*server, std::string("CREATE ROLE ") + kUser +
                               " LOGIN PASSWORD '" + kPassword + "'");
    EXPECT_EQ(made, "");
    // The first matching line wins: this role must give its password.
    const std::string hba = server->dir() + "/data/pg_hba.conf";
    const std::string old = testing::ReadFile(hba);
    std::ofstream(hba, std::ios::trunc)
        << "local all " << kUser << " scram-sha-256\n"
        << old;
    EXPECT_EQ(Superuser(*server, "SELECT pg_reload_conf()"), "");
    role_made = true;
    // The reload is asynchronous: wait until a connection without the
    // password is refused.
    const std::string probe =
        "postgresql:///postgres?host=" + server->dir() + "&user=" + kUser;
    for (int i = 0; i < 100 && PQping(probe.c_str()) == PQPING_OK; ++i) {
      PGconn* c = PQconnectdb(probe.c_str());
      const bool in = PQstatus(c) == CONNECTION_OK;
      PQfinish(c);
      if (!in) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_EQ(Superuser(*server, "CREATE DATABASE " + name + " OWNER " + kUser),
            "");
  return server;
}

// `var`: ServerWithPasswordRole(db); skips the test when the server
// binaries are absent, fails it when the server cannot be started.
#define RT_PASSWORD_SERVER(var, db)                                 \
  std::string var##_error;                                          \
  bool var##_missing = false;                                       \
  test_support::PgServer* var =                                     \
      ServerWithPasswordRole(db, &var##_error, &var##_missing);     \
  if (var == nullptr && var##_missing) GTEST_SKIP() << var##_error; \
  ASSERT_NE(var, nullptr) << var##_error

// The store's URL with the password in its user information.
std::string UserinfoUrl(const test_support::PgServer& server,
                        const std::string& db) {
  return std::string("postgresql://") + kUser + ":" + kPassword + "@/" + db +
         "?host=" + server.dir();
}
// The same with the password as a parameter.
std::string ParameterUrl(const test_support::PgServer& server,
                         const std::string& db) {
  return "postgresql:///" + db + "?host=" + server.dir() + "&user=" + kUser +
         "&password=" + kPassword;
}

// Everything a command showed: its streams and the files it wrote.
struct Shown {
  int code = -1;
  std::string text;
};

Shown RunShown(int (*fn)(int, char**), const std::string& name,
               const std::vector<std::string>& args,
               const std::vector<std::string>& files = {}) {
  Shown s;
  std::string out, err;
  s.code = testing::RunMain(fn, name, args, &out, &err);
  s.text = out + err;
  for (const std::string& f : files) {
    if (std::filesystem::is_directory(f)) {
      for (const auto& e : std::filesystem::directory_iterator(f)) {
        s.text += testing::ReadFile(e.path().string());
      }
    } else {
      s.text += testing::ReadFile(f);
    }
  }
  return s;
}

// Starts `args` in the folder of `log` (a collector on a PostgreSQL store
// keeps its raw streams in its current folder).
pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  return test_support::SpawnLogged(
      args, std::filesystem::path(log).parent_path().string(), log);
}

bool WaitForText(const std::string& file, const std::string& text) {
  for (int i = 0; i < 400; ++i) {
    if (testing::ReadFile(file).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

int WaitExit(pid_t pid) {
  return test_support::WaitExitWithin(pid, std::chrono::seconds(60));
}

std::string Tests() { return std::string(ROOFTRACE_BINARY_DIR) + "/tests"; }

// A listening collector (the real binary) on `store`: its command line
// while it runs, then all it printed once stopped. `producers` test
// producers send it a session first.
Shown ListeningCollector(const test_support::TempDir& dir,
                         const std::string& store, const std::string& tag,
                         std::string* cmdline) {
  const std::string sock = dir.File(tag + ".sock");
  const std::string log = dir.File(tag + ".log");
  const pid_t pid =
      Spawn({std::string(ROOFTRACE_BINARY_DIR) + "/bin/rooftrace", "collect",
             "--listen", "unix:" + sock, "--store", store},
            log);
  Shown s;
  if (!WaitForText(log, "listening on")) {
    kill(pid, SIGKILL);
    WaitExit(pid);
    s.text = testing::ReadFile(log);
    ADD_FAILURE() << "the collector did not start: " << s.text;
    return s;
  }
  *cmdline = testing::ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  const std::string producer_log = dir.File(tag + "_producer.log");
  EXPECT_EQ(
      WaitExit(Spawn({Tests() + "/test_producer", "--sink", "unix:" + sock},
                     producer_log)),
      0)
      << testing::ReadFile(producer_log);
  kill(pid, SIGTERM);
  s.code = WaitExit(pid);
  s.text = testing::ReadFile(log);
  return s;
}

// Every command that opens a store, in every output format, on a store
// whose URL carries the password (in its user information, then as a
// parameter): the password is in none of what they print or write, nor
// in the collector's command line while it runs; the store is named with
// "***" in its place. Malformed URLs (libpq quotes them) likewise.
TEST(StoreSecretsTest, NoOutputOfAnyCommandShowsThePassword) {
  test_support::TempDir dir{"store_secrets"};
  const std::string trace = test_support::WriteLlmTrace(dir);
  const std::string sqlite = dir.File("runs.sqlite");
  ASSERT_EQ(RunShown(CollectMain, "collect",
                     {"--store", sqlite, "--ingest", trace, "--label", "b=m"})
                .code,
            0);
  int form = 0;
  for (auto url_of : {UserinfoUrl, ParameterUrl}) {
    const std::string db = "secrets_" + std::to_string(form++);
    RT_PASSWORD_SERVER(server, db);
    const std::string url = url_of(*server, db);
    const std::string f = dir.File(db + "_");
    struct Case {
      const char* what;
      Shown shown;
      int code;
    };
    std::vector<Case> cases;
    auto add = [&](const char* what, Shown s, int code = 0) {
      cases.push_back({what, std::move(s), code});
    };
    add("collect --ingest",
        RunShown(CollectMain, "collect",
                 {"--store", url, "--ingest", trace, "--label", "b=m"}));
    add("import", RunShown(ImportMain, "import",
                           {trace, "-o", url, "--label", "b=m", "--quiet"}));
    add("analyze", RunShown(AnalyzeMain, "analyze", {url}));
    add("analyze csv", RunShown(AnalyzeMain, "analyze",
                                {url, "--format", "csv", "--by", "kernel"}));
    add("analyze json",
        RunShown(AnalyzeMain, "analyze", {url, "--format", "json"}));
    add("analyze html svg",
        RunShown(AnalyzeMain, "analyze",
                 {url, "--html", f + "r.html", "--svg", f + "r.svg"},
                 {f + "r.html", f + "r.svg"}));
    add("analyze bad run",
        RunShown(AnalyzeMain, "analyze", {url, "--run", "99"}), 2);
    add("analyze --capture on a store",
        RunShown(AnalyzeMain, "analyze", {url, "--capture", trace}), 2);
    add("analyze bad option value",
        RunShown(AnalyzeMain, "analyze", {"--run", url, url}), 2);
    for (const char* format : {"table", "markdown", "json"}) {
      add("diff",
          RunShown(DiffMain, "diff",
                   {url, url, "--format", format, "--junit", f + "diff.xml"},
                   {f + "diff.xml"}));
      add("history", RunShown(HistoryMain, "history",
                              {url, "--where", "b=m", "--format", format,
                               "--junit", f + "h.xml", "--html", f + "h.html"},
                              {f + "h.xml", f + "h.html"}));
    }
    add("diff sqlite against the url",
        RunShown(DiffMain, "diff", {sqlite, url}));
    add("history --where nothing",
        RunShown(HistoryMain, "history", {url, "--where", "b=none"}), 2);
    add("export perfetto",
        RunShown(ExportMain, "export", {url, "--perfetto", f + "p.json"},
                 {f + "p.json"}));
    add("export csv",
        RunShown(ExportMain, "export", {url, "--csv", f + "csv"}, {f + "csv"}));
    // profile -o URL, the collector serving a producer process.
    const std::string profile_log = f + "profile.log";
    const std::string command =
        "cd " + dir.path().string() + " && ROOFTRACE_INJECT_LIB=" + Tests() +
        "/librooftrace_fake_inject.so " + Tests() +
        "/collector_cli profile -o '" + url + "' -- " + Tests() +
        "/test_producer > " + profile_log + " 2>&1";
    Shown profile;
    const int status = std::system(command.c_str());
    profile.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    profile.text = testing::ReadFile(profile_log);
    add("profile", profile);
    // A listening collector: its listening and stopped lines, then, with
    // the store refusing every kernel, its recovery line.
    std::string cmdline;
    add("collect --listen", ListeningCollector(dir, url, db, &cmdline));
    EXPECT_EQ(cmdline.find(kPiece), std::string::npos) << cmdline;
    EXPECT_NE(cmdline.find("--store"), std::string::npos) << cmdline;
    const std::string owner_url =
        server->Url(db);  // the superuser: alters the role's tables
    {
      PGconn* c = PQconnectdb(owner_url.c_str());
      PGresult* r = PQexec(c,
                           "ALTER TABLE kernel_rows ADD CONSTRAINT refuse_all "
                           "CHECK (duration_ns < 0) NOT VALID");
      EXPECT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << PQerrorMessage(c);
      PQclear(r);
      PQfinish(c);
    }
    add("collect --listen, store refusing",
        ListeningCollector(dir, url, db + "_refused", &cmdline), 3);
    add("collect --ingest, store refusing",
        RunShown(CollectMain, "collect", {"--store", url, "--ingest", trace}),
        3);
    // The same store failure exits 3 from import too (it was 2 there).
    add("import, store refusing",
        RunShown(ImportMain, "import", {trace, "-o", url, "--quiet"}), 3);

    for (const Case& c : cases) {
      EXPECT_EQ(c.shown.code, c.code) << c.what << ":\n" << c.shown.text;
      EXPECT_EQ(c.shown.text.find(kPiece), std::string::npos)
          << c.what << " shows the password:\n"
          << c.shown.text;
    }
    // The store is still named, without its password.
    const std::string masked = StoreDisplayName(url);
    ASSERT_NE(masked.find("***"), std::string::npos) << masked;
    for (const char* named :
         {"collect --ingest", "import", "analyze json", "collect --listen",
          "collect --listen, store refusing"}) {
      for (const Case& c : cases) {
        if (std::string(c.what) == named) {
          EXPECT_NE(c.shown.text.find(masked), std::string::npos)
              << c.what << ":\n"
              << c.shown.text;
        }
      }
    }
  }
  // URLs libpq cannot read: it quotes them, or the part of the password it
  // took for a port or a host.
  RT_PASSWORD_SERVER(server, "secrets_bad");
  for (const std::string& bad :
       {std::string("postgresql://") + kUser + ":" + kPassword +
            "/x@/db?host=" + server->dir(),
        std::string("postgresql://") + kUser + ":" + kPassword + "@[::1/db",
        std::string("postgresql://") + kUser + ":" + kPassword +
            "@/db?host=" + server->dir() + "&nonsense=1",
        std::string("postgresql://") + kUser + ":" + kPassword +
            "@127.0.0.1:99999/db"}) {
    using Main = int (*)(int, char**);
    for (auto [fn, name] :
         {std::pair<Main, const char*>{AnalyzeMain, "analyze"},
          std::pair<Main, const char*>{HistoryMain, "history"}}) {
      const Shown s = RunShown(fn, name, {bad});
      EXPECT_EQ(s.code, 2) << bad << ": " << s.text;
      EXPECT_EQ(s.text.find(kPiece), std::string::npos) << s.text;
      EXPECT_NE(s.text.find("PostgreSQL"), std::string::npos) << s.text;
    }
    const Shown s =
        RunShown(CollectMain, "collect", {"--store", bad, "--ingest", trace});
    EXPECT_NE(s.code, 0) << s.text;
    EXPECT_EQ(s.text.find(kPiece), std::string::npos) << s.text;
  }
}

// An SQLite store is named by its path as given, even one that looks like
// it holds a password.
TEST(StoreSecretsTest, SqliteStoresAreShownByTheirPath) {
  test_support::TempDir dir{"store_secrets_sqlite"};
  const std::string trace = test_support::WriteLlmTrace(dir);
  const std::string store = dir.File("user:pw@password=x.sqlite");
  const Shown collect =
      RunShown(CollectMain, "collect", {"--store", store, "--ingest", trace});
  ASSERT_EQ(collect.code, 0) << collect.text;
  EXPECT_NE(collect.text.find("in " + store), std::string::npos)
      << collect.text;
  const Shown json =
      RunShown(AnalyzeMain, "analyze", {store, "--format", "json"});
  ASSERT_EQ(json.code, 0) << json.text;
  EXPECT_NE(json.text.find("\"input\":\"" + store + "\""), std::string::npos)
      << json.text;
  EXPECT_EQ(StoreDisplayName(store), store);
}

// libpq's own password sources work through the URLs rooftrace takes:
// without a password the role is refused (exit 2, saying so); with
// PGPASSWORD, a password file (PGPASSFILE, as ~/.pgpass) or a service
// (PGSERVICEFILE + ?service=) it is let in.
TEST(StoreSecretsTest, LibpqPasswordSourcesWork) {
  test_support::TempDir dir{"store_secrets_libpq"};
  RT_PASSWORD_SERVER(server, "secrets_libpq");
  const std::string trace = test_support::WriteLlmTrace(dir);
  const std::string url =
      "postgresql:///secrets_libpq?host=" + server->dir() + "&user=" + kUser;
  unsetenv("PGPASSWORD");
  setenv("PGPASSFILE", dir.File("none").c_str(), 1);
  const Shown refused =
      RunShown(CollectMain, "collect", {"--store", url, "--ingest", trace});
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.text.find("password"), std::string::npos) << refused.text;

  setenv("PGPASSWORD", kPassword, 1);
  const Shown with_env =
      RunShown(CollectMain, "collect", {"--store", url, "--ingest", trace});
  unsetenv("PGPASSWORD");
  EXPECT_EQ(with_env.code, 0) << with_env.text;

  const std::string passfile = dir.File("pgpass");
  std::ofstream(passfile) << "*:*:*:" << kUser << ":" << kPassword << "\n";
  chmod(passfile.c_str(), 0600);
  setenv("PGPASSFILE", passfile.c_str(), 1);
  const Shown with_file = RunShown(AnalyzeMain, "analyze", {url});
  EXPECT_EQ(with_file.code, 0) << with_file.text;
  setenv("PGPASSFILE", dir.File("none").c_str(), 1);

  const std::string services = dir.File("pg_service.conf");
  std::ofstream(services) << "[rooftrace_test]\nhost=" << server->dir()
                          << "\ndbname=secrets_libpq\nuser=" << kUser
                          << "\npassword=" << kPassword << "\n";
  setenv("PGSERVICEFILE", services.c_str(), 1);
  const Shown with_service = RunShown(HistoryMain, "history",
                                      {"postgresql://?service=rooftrace_test"});
  unsetenv("PGSERVICEFILE");
  unsetenv("PGPASSFILE");
  EXPECT_EQ(with_service.code, 0) << with_service.text;
  EXPECT_EQ(with_service.text.find(kPiece), std::string::npos);
}

// Where the password is found: user information (up to the last '@'
// before the query, so a '/' in it is covered), a parameter (its key
// percent-encoded too), key-value text; argv is overwritten in place.
TEST(UrlSecretsTest, PasswordsAreFoundAndScrubbed) {
  EXPECT_EQ(HidePasswords("postgresql://u:p@ss/w@h:5/db?sslmode=x", true),
            "postgresql://u:***@h:5/db?sslmode=x");
  EXPECT_EQ(HidePasswords("postgres:///db?user=u&pass%77ord=s&a=b", true),
            "postgres:///db?user=u&pass%77ord=***&a=b");
  EXPECT_EQ(HidePasswords("host=h password = 'a b' user=u"),
            "host=h password = '***' user=u");
  EXPECT_EQ(HidePasswords("URI: \"postgresql://u:pw@[::1/db\""),
            "URI: \"postgresql://u:***@[::1/db\"");
  EXPECT_EQ(HidePasswords("postgresql://u:***@h/db: cannot connect"),
            "postgresql://u:***@h/db: cannot connect");
  EXPECT_EQ(HidePasswords("password authentication failed"),
            "password authentication failed");
  EXPECT_EQ(RemoveSecrets("invalid integer value \"pw\" for \"port\"",
                          UrlPasswords("postgresql://u:pw/x@h/db")),
            "invalid integer value \"***\" for \"port\"");
  std::string a0 = "collect", a1 = "--store=postgresql://u:pw1@h/db",
              a2 = "postgresql:///db?password=pw2", a3 = "plain";
  char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data()};
  ScrubPasswordsFromArgs(4, argv);
  EXPECT_STREQ(argv[1], "--store=postgresql://u:***@h/db");
  EXPECT_STREQ(argv[2], "postgresql:///db?password=***");
  EXPECT_STREQ(argv[3], "plain");
}

}  // namespace
}  // namespace rooftrace
