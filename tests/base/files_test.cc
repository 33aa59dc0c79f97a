#include "base/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rooftrace {
namespace {

namespace fs = std::filesystem;

class WriteTextFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("files_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Names in dir_, to see that no temporary file is left behind.
  std::vector<std::string> Listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

// A new file is created, an existing one replaced; nothing else is left in
// the folder.
TEST_F(WriteTextFileTest, CreatesAndReplacesWithoutLeavingTemporaries) {
  const std::string path = (dir_ / "r.json").string();
  ASSERT_TRUE(WriteTextFile(path, "first, longer content\n").ok());
  EXPECT_EQ(Read(path), "first, longer content\n");
  ASSERT_TRUE(WriteTextFile(path, "second").ok());
  EXPECT_EQ(Read(path), "second");
  ASSERT_TRUE(WriteTextFile(path, "").ok());
  EXPECT_EQ(Read(path), "");
  EXPECT_EQ(Listing(), std::vector<std::string>{"r.json"});
}

// Bytes are written as given: NUL, invalid UTF-8, no newline translation.
TEST_F(WriteTextFileTest, WritesBytesUnchanged) {
  const std::string path = (dir_ / "b.bin").string();
  const std::string text("a\0b\xff\r\n", 6);
  ASSERT_TRUE(WriteTextFile(path, text).ok());
  EXPECT_EQ(Read(path), text);
}

// A missing folder and a folder given as the file are refused with the path
// and the fix; nothing is created.
TEST_F(WriteTextFileTest, ErrorsNameThePathAndTheFix) {
  const std::string missing = (dir_ / "no/such/dir/x.svg").string();
  Status s = WriteTextFile(missing, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), missing +
                             ": cannot write (No such file or directory): "
                             "check that the folder exists and is writable");

  fs::create_directories(dir_ / "sub");
  s = WriteTextFile((dir_ / "sub").string(), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("sub: cannot write (it is a folder)"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(fs::is_directory(dir_ / "sub"));

  EXPECT_FALSE(WriteTextFile("", "x").ok());
  EXPECT_EQ(Listing(), std::vector<std::string>{"sub"});
}

// Without write permission on the folder the temporary file cannot be made;
// the old content stays.
TEST_F(WriteTextFileTest, ReadOnlyFolderKeepsTheOldContent) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores folder permissions";
  const std::string path = (dir_ / "keep.txt").string();
  ASSERT_TRUE(WriteTextFile(path, "old").ok());
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  const Status s = WriteTextFile(path, "new");
  fs::permissions(dir_, fs::perms::owner_all);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("keep.txt: cannot write (Permission denied)"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(Read(path), "old");
}

// A link keeps pointing at its file, whose content is replaced.
TEST_F(WriteTextFileTest, FollowsASymbolicLink) {
  fs::create_directories(dir_ / "runs");
  const fs::path real = dir_ / "runs" / "p.json";
  ASSERT_TRUE(WriteTextFile(real.string(), "old").ok());
  const fs::path link = dir_ / "current.json";
  fs::create_symlink(fs::path("runs") / "p.json", link);
  ASSERT_TRUE(WriteTextFile(link.string(), "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Read(real), "new");
  EXPECT_EQ(Read(link), "new");
}

// A device cannot be renamed over; it is written like a stream.
TEST_F(WriteTextFileTest, WritesToADeviceInPlace) {
  EXPECT_TRUE(WriteTextFile("/dev/null", "discarded").ok());
  EXPECT_TRUE(fs::exists("/dev/null"));
  EXPECT_FALSE(fs::is_regular_file("/dev/null"));
}

// Two writers race on one file while a reader watches it: the reader only
// ever sees one writer's whole text, never a mix or a prefix.
TEST_F(WriteTextFileTest, ReadersNeverSeeAPartialFile) {
  const std::string path = (dir_ / "shared.txt").string();
  const std::string a(256 * 1024, 'a'), b(128 * 1024, 'b');
  ASSERT_TRUE(WriteTextFile(path, a).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, reads{0};
  std::thread reader([&] {
    while (!stop.load()) {
      const std::string got = Read(path);
      if (got != a && got != b) bad.fetch_add(1);
      reads.fetch_add(1);
    }
  });
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (const std::string* text : {&a, &b}) {
    writers.emplace_back([&, text] {
      for (int i = 0; i < 40; ++i) {
        if (!WriteTextFile(path, *text).ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& w : writers) w.join();
  stop.store(true);
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(bad.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(Listing(), std::vector<std::string>{"shared.txt"});
}

}  // namespace
}  // namespace rooftrace
