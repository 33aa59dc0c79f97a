// The SQLite store's page cache cap (store/db_sqlite.cc): 64 MiB unless
// ROOFTRACE_SQLITE_CACHE_MIB says otherwise; a value that is not a size is
// refused, naming the variable and the fix, before the store's file is
// made.
// The cap is what a long-running collector's RSS grows by as its store
// grows (docs/store.md, Continuous profiling).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "store/db.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

// Sets ROOFTRACE_SQLITE_CACHE_MIB (nullptr: unsets it) for one scope.
class CacheEnv {
 public:
  explicit CacheEnv(const char* value) {
    if (value == nullptr) {
      unsetenv(kName);
    } else {
      setenv(kName, value, 1);
    }
  }
  ~CacheEnv() { unsetenv(kName); }

 private:
  static constexpr const char* kName = "ROOFTRACE_SQLITE_CACHE_MIB";
};

// PRAGMA cache_size of a store opened for writing at `path`.
int64_t CacheSizeAfterPrepare(const std::string& path) {
  auto db = OpenSqliteDb(path, path, /*read_only=*/false);
  EXPECT_TRUE(db.ok()) << db.status().message();
  if (!db.ok()) return 0;
  const Status prepared = (*db)->PrepareForWrites(/*scratch=*/false);
  EXPECT_TRUE(prepared.ok()) << prepared.message();
  auto q = (*db)->Prepare("PRAGMA cache_size");
  EXPECT_TRUE(q.ok()) << q.status().message();
  if (!q.ok()) return 0;
  auto row = (*q)->Step();
  EXPECT_TRUE(row.ok() && *row);
  return (*q)->Int(0);
}

TEST(SqliteCacheTest, CapIs64MiBUnlessTheEnvironmentSetsIt) {
  test_support::TempDir dir("sqlite_cache");
  {
    CacheEnv env(nullptr);
    EXPECT_EQ(CacheSizeAfterPrepare((dir.path() / "a.sqlite").string()),
              -64 * 1024);  // negative: KiB
  }
  {
    CacheEnv env("8");
    EXPECT_EQ(CacheSizeAfterPrepare((dir.path() / "b.sqlite").string()),
              -8 * 1024);
  }
}

TEST(SqliteCacheTest, ValueThatIsNotASizeIsRefusedWithTheFix) {
  test_support::TempDir dir("sqlite_cache");
  for (const char* bad :
       {"abc", "0", "-3", "8x", "65537", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    CacheEnv env(bad);
    const std::string path = (dir.path() / "bad.sqlite").string();
    auto store = Store::Open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
    const std::string& m = store.status().message();
    EXPECT_NE(m.find(std::string("ROOFTRACE_SQLITE_CACHE_MIB=") + bad),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("e.g. ROOFTRACE_SQLITE_CACHE_MIB=16"), std::string::npos)
        << m;
    // Nothing made: once the setting is fixed the same path is a new store.
    EXPECT_FALSE(std::filesystem::exists(path));
  }
}

}  // namespace
}  // namespace rooftrace
