// Issue 37 item 6, the race left open: `history` reads the runs, then
// asks which unfinished ones a writer holds (store/run_lease.h). A run
// that finished between the two reads had no lease at the second and was
// called incomplete, though its writer was alive and ended it well. The
// writer here is the store's own (Store), the reader StoreReader, on
// SQLite and on a real PostgreSQL server.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "pipeline/import_stats.h"
#include "pipeline/rows.h"
#include "store/store.h"
#include "store/store_reader.h"
#include "tests/support/pg_server.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

RunRow NewRun() {
  RunRow run;
  run.command = "collect";
  run.mode = "trace";
  return run;
}

void RunThatEndsBetweenTheReadsIsInProgress(const std::string& store) {
  // Run 1: its writer ends without finishing it (as a crash leaves it).
  {
    StatusOr<std::unique_ptr<Store>> crashed = Store::Open(store);
    ASSERT_TRUE(crashed.ok()) << crashed.status().message();
    ASSERT_TRUE((*crashed)->BeginRun(NewRun()).ok());
  }
  StatusOr<std::unique_ptr<Store>> writer = Store::Open(store);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  RunRow run = NewRun();
  StatusOr<int64_t> id = (*writer)->BeginRun(run);
  ASSERT_TRUE(id.ok()) << id.status().message();
  run.run_id = *id;

  StoreReader reader;
  ASSERT_TRUE(reader.Open(store, store).ok());
  ASSERT_EQ(reader.runs().size(), 2u);
  EXPECT_FALSE(reader.runs()[1].complete.has_value());
  EXPECT_EQ(reader.RunsBeingWritten(), std::set<int64_t>({*id}));

  // The writer ends its run after the reader read the runs, before it
  // asks for the leases: the run is still in progress for this reader,
  // and the crashed run is still not.
  run.complete = 1;
  ASSERT_TRUE((*writer)->FinishRun(run, ImportStats{}).ok());
  EXPECT_EQ(reader.RunsBeingWritten(), std::set<int64_t>({*id}));

  // A reader opened now sees the run finished, and nothing in progress.
  StoreReader later;
  ASSERT_TRUE(later.Open(store, store).ok());
  ASSERT_EQ(later.runs().size(), 2u);
  EXPECT_EQ(later.runs()[1].complete, 1);
  EXPECT_TRUE(later.RunsBeingWritten().empty());
}

TEST(RunLeaseTest, RunThatEndsBetweenTheReadsIsInProgressOnSqlite) {
  test_support::TempDir dir{"run_lease"};
  RunThatEndsBetweenTheReadsIsInProgress(dir.File("runs.sqlite"));
}

TEST(RunLeaseTest, RunThatEndsBetweenTheReadsIsInProgressOnPostgres) {
  std::string error;
  bool missing = false;
  test_support::PgServer* pg = test_support::SharedPgServer(&error, &missing);
  if (pg == nullptr && missing) GTEST_SKIP() << error;
  ASSERT_NE(pg, nullptr) << error;
  const std::string url = pg->CreateDatabase("run_lease_race", &error);
  ASSERT_FALSE(url.empty()) << error;
  RunThatEndsBetweenTheReadsIsInProgress(url);
}

}  // namespace
}  // namespace rooftrace
