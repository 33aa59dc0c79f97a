// A fresh directory per test under the system temp dir, named after the
// test and this process, removed when the test ends.
#ifndef ROOFTRACE_TESTS_SUPPORT_TEMP_DIR_H_
#define ROOFTRACE_TESTS_SUPPORT_TEMP_DIR_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace rooftrace::test_support {

class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(
            std::filesystem::temp_directory_path() /
            ("rooftrace_" + tag + "_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const {
    return (path_ / name).string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_TEMP_DIR_H_
