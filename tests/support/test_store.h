// Builds small run stores for analyzer tests by executing the DDL of
// docs/store.md (the contract) and inserting rows with known numbers.
// Not thread-safe; one per test.
#ifndef ROOFTRACE_TESTS_SUPPORT_TEST_STORE_H_
#define ROOFTRACE_TESTS_SUPPORT_TEST_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace rooftrace::testing {

struct KernelSpec {
  int64_t run_id = 1;
  int64_t session_id = 1;
  std::string name;
  std::optional<std::string> demangled;
  std::optional<std::string> family;
  std::optional<std::string> shape;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  int64_t stream_id = 7;
  int64_t device_id = 0;
  std::optional<int64_t> thread_id;
  std::optional<int64_t> correlation_id;
  std::optional<std::string> precision;
  std::optional<double> flops;
  std::optional<double> dram_bytes;
  std::optional<std::string> flops_source;
  std::optional<std::string> bytes_source;
  std::optional<double> fraction_of_roof;
  std::optional<double> roof_flops_per_s;
  std::optional<std::string> bound;
  std::optional<std::string> phase;
  std::optional<std::string> nvtx_path;
  std::optional<int64_t> step_id;
};

class TestStore {
 public:
  // Creates `path` (removing an old file) with the docs/store.md schema.
  explicit TestStore(const std::string& path);
  ~TestStore();

  void Exec(const std::string& sql);
  // A run with a device row and its name.
  void AddRun(int64_t run_id, const std::string& device_name,
              const std::string& roof_source = "datasheet:test");
  void AddRoof(int64_t run_id, const std::string& precision, double peak,
               double bandwidth);
  void AddStat(int64_t run_id, const std::string& name, int64_t value);
  void AddKernel(const KernelSpec& k);
  void AddNvtx(int64_t run_id, const std::string& name, int64_t start_ns,
               int64_t end_ns, int64_t thread_id, int depth);
  void AddMemcpy(int64_t run_id, const std::string& kind, int64_t bytes,
                 int64_t start_ns, int64_t end_ns, int64_t stream_id);
  void Close();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// A fresh empty directory under the test temp dir.
std::string TempDir(const std::string& name);
std::string ReadFile(const std::string& path);
// Removes a TempDir() unless ROOFTRACE_KEEP_TEST_FILES is set (to look at
// the outputs).
void RemoveTempDir(const std::string& dir);

// Calls a subcommand entry point (AnalyzeMain, DiffMain, ...) in-process
// with argv = {name, args...}, capturing std::cout and std::cerr; returns
// its exit code.
int RunMain(int (*main_fn)(int, char**), const std::string& name,
            const std::vector<std::string>& args, std::string* out,
            std::string* err);

}  // namespace rooftrace::testing

#endif  // ROOFTRACE_TESTS_SUPPORT_TEST_STORE_H_
