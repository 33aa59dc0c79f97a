// Writes a test's input files: plain or gzip-compressed text, checked (a
// short write is a test failure, not a quietly shorter input).
#ifndef ROOFTRACE_TESTS_SUPPORT_WRITE_FILE_H_
#define ROOFTRACE_TESTS_SUPPORT_WRITE_FILE_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <string>

namespace rooftrace::test_support {

// `text` into `path`; returns `path`.
inline std::string WriteTextFile(const std::string& path,
                                 const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return path;
  EXPECT_EQ(std::fwrite(text.data(), 1, text.size(), f), text.size()) << path;
  EXPECT_EQ(std::fclose(f), 0) << path;
  return path;
}

// `text` gzip-compressed (at the best compression: a small file that
// expands a lot) into `path`; returns `path`.
inline std::string WriteGzipFile(const std::string& path,
                                 const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb9");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return path;
  EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()))
      << path;
  EXPECT_EQ(gzclose(f), Z_OK) << path;
  return path;
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_WRITE_FILE_H_
