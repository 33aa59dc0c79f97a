// import --counters ncu.csv on a timeline: the registry reads the Nsight
// Compute CSV once (ReadNcuCounterFile) and the nsys source matches its
// kernels by name and occurrence to the recorded A100 export's, read in
// place; the CSV is a small one written here.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "sources/ncu/ncu_source.h"
#include "sources/nsys/nsys_source.h"
#include "sources/registry.h"
#include "store/store.h"
#include "tests/support/counter_checks.h"
#include "tests/support/ncu_rows.h"
#include "tests/support/real_data.h"
#include "tests/support/sqlite_query.h"
#include "tests/support/temp_dir.h"

namespace rooftrace {
namespace {

using test_support::RealDataFile;
using test_support::RealDataMissing;
using test_support::StoreQuery;
using test_support::TempDir;

constexpr char kRealExport[] =
    "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sanitized.sqlite";

// One ncu kernel of the saxpy process on host nid, CC 8.0.
std::string Kernel(int id, const std::string& name, const std::string& read,
                   const std::string& dfma) {
  return test_support::NcuKernelRows(
      {"1230493", "saxpy", "nid", "(512, 1, 1)", "(211, 1, 1)", "8.0"}, id,
      name, read, dfma);
}

std::string WriteNcuCsv(const TempDir& dir) {
  // ncu demangles as nsys does ("double *"), not as c++filt ("double*").
  const std::string saxpy = "saxpy(double *, double *, double *, double, int)";
  const std::string path = dir.File("ncu.csv");
  std::ofstream(path)
      << "==PROF== Connected to process 1230493 (/app/saxpy)\n"
      << "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel "
         "Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\","
         "\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric "
         "Unit\",\"Metric Value\"\n"
      << Kernel(0, saxpy, "1.5", "1,000") << Kernel(1, saxpy, "2", "2,000")
      << Kernel(2, "other_kernel(int)", "1", "1")
      << Kernel(3, saxpy, "3", "3,000");
  return path;
}

// Three saxpy samples go to the first three of the export's five saxpy
// launches (launch order); the sample of a kernel the timeline lacks is
// counted unmatched and named in the warning.
TEST(NcuCountersTest, NsysTimelineTakesNcuCountersByNameAndOccurrence) {
  const std::string timeline = RealDataFile(kRealExport);
  if (timeline.empty()) GTEST_SKIP() << RealDataMissing(kRealExport);
  TempDir dir("ncu_counters");
  const std::string csv = WriteNcuCsv(dir);
  auto counters = ReadCounterFile(csv);
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  ASSERT_EQ((*counters)->samples.size(), 4u);
  EXPECT_EQ((*counters)->samples[3].occurrence, 2);  // the third saxpy
  EXPECT_EQ((*counters)->samples[3].values.dram_read_bytes, 3000000u);

  auto store = Store::Open(dir.File("runs.sqlite"), Store::Durability::kScratch);
  ASSERT_TRUE(store.ok());
  SourceOptions o;
  o.counters_path = csv;  // read by ReadSourceInto
  static const NsysSource nsys;
  auto result = ReadSourceInto(nsys, timeline, o, store->get());
  ASSERT_TRUE(result.ok()) << result.status().message();
  StoreQuery q(dir.File("runs.sqlite"));
  // Launch order of the five saxpy kernels: correlation ids 140 ... 204.
  // dram = read + 1,024 written; fp64 = 2 * dfma.
  EXPECT_EQ(q.Text("SELECT group_concat(correlation_id || ':' || dram_bytes "
                   "|| ':' || flops_fp64, ' ') FROM (SELECT * FROM kernels "
                   "WHERE flops_source = 'counters' ORDER BY correlation_id)"),
            "140:1501024:2000 156:2001024:4000 172:3001024:6000");
  EXPECT_EQ(q.Int("SELECT count(*) FROM kernels WHERE flops_source = "
                  "'none'"),
            2);
  // The matched kernels keep ncu's raw metrics as written.
  test_support::ExpectThreeOfFourCountersMatched(
      q, result->warning, csv, "140:1.5 Mbyte 156:2.0 Mbyte 172:3.0 Mbyte");
}

// An ncu CSV is no timeline: --counters on one is refused, and so is a
// counter file that is not an ncu CSV, before anything is written.
TEST(NcuCountersTest, CountersOnAnNcuCsvOrFromAnotherFileAreRefused) {
  TempDir dir("ncu_counters");
  const std::string csv = WriteNcuCsv(dir);
  auto store = Store::Open(dir.File("runs.sqlite"), Store::Durability::kScratch);
  ASSERT_TRUE(store.ok());
  (*store)->set_atomic_runs(true);
  SourceOptions o;
  o.counters_path = csv;
  static const NcuSource ncu;
  auto r = ReadSourceInto(ncu, csv, o, store->get());
  ASSERT_FALSE(r.ok());
  (void)(*store)->AbortRun();
  EXPECT_NE(r.status().message().find("no timeline"), std::string::npos);
  const std::string other = dir.File("other.csv");
  std::ofstream(other) << "\"Time (%)\",\"Name\"\n\"1\",\"k\"\n";
  auto c = ReadCounterFile(other);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("--counters " + other + ": ", 0), 0u)
      << c.status().message();
  StoreQuery q(dir.File("runs.sqlite"));
  EXPECT_EQ(q.Int("SELECT count(*) FROM runs"), 0);
}

}  // namespace
}  // namespace rooftrace
