#include "tests/support/pg_server.h"

#include <grp.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <fstream>
#include <sstream>
#include <vector>

namespace rooftrace::test_support {
namespace {

bool IsFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool HasServer(const std::string& dir) {
  return !dir.empty() && IsFile(dir + "/initdb") && IsFile(dir + "/postgres");
}

// Starts argv in `cwd` (as `nobody` when we are root: the test's own
// folder may be closed to it), its output appended to `log`; with `tied`,
// it is sent SIGTERM when this process dies (a crashed test leaves no
// server behind). Returns its pid, or -1.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& cwd,
            const std::string& log, bool tied) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  {
    FILE* out = std::fopen(log.c_str(), "a");
    if (out != nullptr) {
      dup2(fileno(out), 1);
      dup2(fileno(out), 2);
    }
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("nobody");
      if (pw == nullptr || setgroups(0, nullptr) != 0 ||
          setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) {
        std::fprintf(stderr, "cannot become nobody\n");
        _exit(126);
      }
    }
    if (chdir(cwd.c_str()) != 0) {
      std::fprintf(stderr, "cannot enter %s\n", cwd.c_str());
      _exit(124);
    }
    // After setuid (which clears it), and only if the parent still lives.
    if (tied && (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 ||
                 getppid() != parent)) {
      _exit(125);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s\n", args[0]);
    _exit(127);
  }
}

// Runs argv to its end as Spawn() does; its exit status, or -1.
int Run(const std::vector<std::string>& argv, const std::string& cwd,
        const std::string& log) {
  const pid_t pid = Spawn(argv, cwd, log, false);
  if (pid < 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

std::string PgBinDir() {
  if (const char* env = std::getenv("ROOFTRACE_PG_BINDIR"); env && *env) {
    return HasServer(env) ? env : "";
  }
  if (FILE* p = popen("pg_config --bindir 2>/dev/null", "r")) {
    char buf[512] = {};
    const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
    pclose(p);
    std::string dir = got ? buf : "";
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == ' ')) {
      dir.pop_back();
    }
    if (HasServer(dir)) return dir;
  }
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string dir = e.path().string() + "/bin";
    const int version = std::atoi(e.path().filename().c_str());
    if (HasServer(dir) && version > best_version) {
      best = dir;
      best_version = version;
    }
  }
  return best;
}

std::unique_ptr<PgServer> PgServer::Start(std::string* error, bool* missing) {
  *missing = false;
  std::unique_ptr<PgServer> s(new PgServer());
  s->bindir_ = PgBinDir();
  if (s->bindir_.empty()) {
    *missing = true;
    *error =
        "the PostgreSQL server binaries (initdb, postgres) are not "
        "installed: "
        "install the Debian package postgresql (scripts/setup.sh does), or "
        "set ROOFTRACE_PG_BINDIR to the folder that holds them";
    return nullptr;
  }
  // /tmp and not $TMPDIR: a Unix socket's path is limited to 107 bytes.
  char templ[] = "/tmp/rooftrace-pg-XXXXXX";
  if (mkdtemp(templ) == nullptr) {
    *error = "cannot create a folder under /tmp for the PostgreSQL server";
    return nullptr;
  }
  s->dir_ = templ;
  if (geteuid() == 0) {
    const passwd* pw = getpwnam("nobody");
    if (pw == nullptr || chown(templ, pw->pw_uid, pw->pw_gid) != 0) {
      *error = "running as root, and cannot hand " + s->dir_ +
               " to the user nobody to run PostgreSQL as (it refuses root)";
      return nullptr;
    }
  }
  const std::string data = s->dir_ + "/data";
  const std::string log = s->dir_ + "/setup.log";
  if (Run({s->bindir_ + "/initdb", "-D", data, "-A", "trust", "-U",
           "rooftrace", "-E", "UTF8", "--locale=C", "--no-sync"},
          s->dir_, log) != 0) {
    *error = "initdb failed: " + ReadAll(log);
    return nullptr;
  }
  // The server is our child, tied to this process (Spawn), and ready once
  // it answers a ping.
  s->pid_ = Spawn({s->bindir_ + "/postgres", "-D", data, "-c",
                   "listen_addresses=", "-c",
                   "unix_socket_directories=" + s->dir_, "-c", "fsync=off",
                   "-c", "synchronous_commit=off", "-c",
                   "full_page_writes=off", "-c", "max_connections=200"},
                  s->dir_, s->dir_ + "/server.log", true);
  if (s->pid_ < 0) {
    *error = "cannot start postgres";
    return nullptr;
  }
  const std::string url = s->Url("postgres");
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (PQping(url.c_str()) != PQPING_OK) {
    int status = 0;
    if (waitpid(s->pid_, &status, WNOHANG) == s->pid_) {
      s->pid_ = -1;
      *error = "postgres exited at start; its log:\n" +
               ReadAll(s->dir_ + "/server.log");
      return nullptr;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      *error = "postgres did not answer within 60 s; its log:\n" +
               ReadAll(s->dir_ + "/server.log");
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return s;
}

PgServer::~PgServer() {
  if (pid_ > 0) {
    kill(pid_, SIGINT);  // fast shutdown: clients are cut off
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (!dir_.empty() && std::getenv("ROOFTRACE_KEEP_TEST_FILES") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string PgServer::Url(const std::string& name) const {
  return "postgresql:///" + name + "?host=" + dir_ + "&user=rooftrace";
}

std::string PgServer::CreateDatabase(const std::string& name,
                                     std::string* error) {
  PGconn* c = PQconnectdb(Url("postgres").c_str());
  std::string url;
  if (PQstatus(c) != CONNECTION_OK) {
    *error = std::string("cannot connect to the test server: ") +
             PQerrorMessage(c);
  } else {
    PGresult* r = PQexec(c, ("CREATE DATABASE \"" + name + "\"").c_str());
    if (PQresultStatus(r) == PGRES_COMMAND_OK) {
      url = Url(name);
    } else {
      *error = std::string("CREATE DATABASE ") + name + ": " +
               PQresultErrorMessage(r);
    }
    PQclear(r);
  }
  PQfinish(c);
  return url;
}

PgServer* SharedPgServer(std::string* error, bool* missing) {
  static std::string start_error;
  static bool start_missing = false;
  static std::unique_ptr<PgServer> server =
      PgServer::Start(&start_error, &start_missing);
  *error = start_error;
  *missing = start_missing;
  return server.get();
}

}  // namespace rooftrace::test_support
