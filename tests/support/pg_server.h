// A throwaway PostgreSQL server for tests and benchmarks: initdb into a
// fresh temporary folder, then postgres started as a child of this process
// listening only on a Unix socket in that folder (listen_addresses='', so
// no TCP port can clash with another test or a real server), stopped and
// deleted when the object goes, and sent SIGTERM by the kernel if this
// process dies first (PR_SET_PDEATHSIG). As
// root the server runs as `nobody` (PostgreSQL refuses to run as root) and
// the folder is handed to it. fsync is off: a test database needs no
// durability.
//
// Not thread-safe to create; the URLs it hands out may be used from any
// thread. The trap: a process killed before the destructor leaves the
// server's folder under /tmp (rooftrace-pg-*), not the server.
#ifndef ROOFTRACE_TESTS_SUPPORT_PG_SERVER_H_
#define ROOFTRACE_TESTS_SUPPORT_PG_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>

namespace rooftrace::test_support {

class PgServer {
 public:
  // A running server, or nullptr with `*error` saying why. `*missing` is
  // set when the server binaries are not installed (the only reason a test
  // may skip); any other failure is the test's failure.
  static std::unique_ptr<PgServer> Start(std::string* error, bool* missing);
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // Creates an empty database `name` and returns its postgresql:// URL;
  // empty (and `*error` set) on failure.
  std::string CreateDatabase(const std::string& name, std::string* error);
  // The URL of database `name` on this server.
  std::string Url(const std::string& name) const;
  const std::string& dir() const { return dir_; }
  // The server's main process; its connections' processes are its
  // children (a benchmark sums their CPU time).
  pid_t pid() const { return pid_; }

 private:
  PgServer() = default;
  std::string dir_;
  std::string bindir_;
  pid_t pid_ = -1;
};

// One server for the whole test binary (initdb costs a second or two),
// started on first use and stopped at exit; nullptr with `*error` as Start.
PgServer* SharedPgServer(std::string* error, bool* missing);

// The folder holding initdb and postgres: $ROOFTRACE_PG_BINDIR, else
// `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin (Debian
// keeps the server binaries off PATH); empty when none has them.
std::string PgBinDir();

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_PG_SERVER_H_
