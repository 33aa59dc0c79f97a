// Where the real GPU traces live: ../shared/real-data beside the checkout
// (CI has it there), or $ROOFTRACE_REAL_DATA when set. They are third-party
// files read in place and never copied into the repository; a test that
// needs one skips, saying so, when it is absent (a user's clone).
//
//   const std::string f = RealDataFile("hta/tests/data/.../trace.json.gz");
//   if (f.empty()) GTEST_SKIP() << RealDataMissing("hta/...");
#ifndef ROOFTRACE_TESTS_SUPPORT_REAL_DATA_H_
#define ROOFTRACE_TESTS_SUPPORT_REAL_DATA_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace rooftrace::test_support {

// The real-data folder; empty when there is none.
inline std::string RealDataDir() {
  if (const char* env = std::getenv("ROOFTRACE_REAL_DATA"); env && *env) {
    return std::filesystem::is_directory(env) ? std::string(env)
                                              : std::string();
  }
#ifdef ROOFTRACE_SOURCE_DIR
  const std::filesystem::path dir =
      std::filesystem::path(ROOFTRACE_SOURCE_DIR) / ".." / "shared" /
      "real-data";
  if (std::filesystem::is_directory(dir)) return dir.lexically_normal();
#endif
  return std::string();
}

// `relative` inside the real-data folder; empty when it is not there.
inline std::string RealDataFile(const std::string& relative) {
  const std::string dir = RealDataDir();
  if (dir.empty()) return std::string();
  const std::filesystem::path p = std::filesystem::path(dir) / relative;
  return std::filesystem::exists(p) ? p.string() : std::string();
}

// The skip message for a missing file.
inline std::string RealDataMissing(const std::string& relative) {
  return "real data not found: " + relative +
         " (expected in ../shared/real-data beside the checkout, or set "
         "ROOFTRACE_REAL_DATA); this test reads recorded GPU traces in place";
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_REAL_DATA_H_
