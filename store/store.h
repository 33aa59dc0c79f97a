// The run store of docs/store.md, writer side: creates or opens the store
// (an SQLite file: WAL, 64 KiB pages for a new one; or a PostgreSQL
// database named by a postgresql:// URL, store/db.h), checks its schema
// version
// (upgrading a schema 1 store in place), and takes a run's rows
// (pipeline/rows.h) as a RunSink: runs, sessions, devices, roofs, import
// statistics, kernels (each name once, in kernel_names), copies, GEMM calls,
// NVTX ranges and steps, in batched transactions; and each run's kernels
// summed per group in memory (kernel_aggregates, schema 8), whichever
// kernel rows it keeps (set_store_kernels: all, sampled or none). The
// reader side is store/store_reader.h.
//
// Owned by one RunRecorder (or a test); not thread-safe (one database
// connection, two on PostgreSQL; the recorder serialises calls). Many
// Stores, in as many processes, may write one PostgreSQL store at once. The trap: rows are committed
// in batches of `batch_rows` and at every EndWrite(); a crash loses at most
// the batch in flight, and a reopened store appends new runs after the old
// ones. A refused write (a full disk) rolls back the rows since the last
// commit. Test hook: ROOFTRACE_TEST_STORE_PAGE_BUDGET=N in the environment
// lets an opened store grow by N pages only (a full disk without root).
#ifndef ROOFTRACE_STORE_STORE_H_
#define ROOFTRACE_STORE_STORE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "pipeline/import_stats.h"
#include "pipeline/recorder.h"
#include "pipeline/rows.h"
#include "pipeline/sink.h"
#include "store/db.h"
#include "store/run_lease.h"

namespace rooftrace {

inline constexpr int kStoreSchemaVersion = 9;

// Which kernel rows a run keeps (`--store-kernels`, runs.store_kernels);
// its kernel_aggregates are kept whatever this says.
enum class StoreKernels {
  kAll,      // every kernel row
  kSampled,  // per aggregate group, its first kSampledFirst launches, then
             // one in kSampledEvery
  kNone,     // no kernel row (nor its raw metrics): aggregates only
};
inline constexpr int64_t kSampledFirst = 8;
inline constexpr int64_t kSampledEvery = 64;
// The --help text of `--store-kernels`, one for every command that takes it.
inline constexpr char kStoreKernelsHelp[] =
    "which kernel rows the run keeps: all (every kernel), sampled (per "
    "group, the first 8 launches then 1 in 64) or none; per-group "
    "aggregates (count, time, FLOPs, bytes, min/max duration, % of roof) "
    "are kept always, and `history` reads them (docs/store.md)";
// "all" | "sampled" | "none".
const char* StoreKernelsName(StoreKernels k);
// Parses `--store-kernels`'s value; the error names the flag and the
// values it takes.
StatusOr<StoreKernels> ParseStoreKernels(std::string_view value);

class Store : public RunSink {
 public:
  ~Store() override;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // How a store survives a crash of its writer.
  enum class Durability {
    // WAL, synchronous=NORMAL: a commit survives a collector crash.
    kDurable,
    // No journal, no syncs: for a temporary store read once and deleted
    // (the analyzer's ingest of a .rft); a crash leaves it unusable.
    kScratch,
  };
  // Creates or opens the store at `path`, a file or a postgresql:// URL
  // (whose database must be empty or a rooftrace store). Errors name the
  // store and the fix (not SQLite, another program's database, a newer
  // schema, not writable, no server).
  static StatusOr<std::unique_ptr<Store>> Open(
      const std::string& path, Durability durability = Durability::kDurable);

  // RunSink. BeginRun commits the run row at once; the rest is committed
  // in batches and at EndWrite(). Every kernel is added to its run's
  // aggregate group (kernel_aggregates, rewritten at FinishRun and, for a
  // long run, at an EndWrite at most once a second); its row is kept as
  // set_store_kernels says.
  RowNeeds Needs() const override;
  StatusOr<int64_t> BeginRun(const RunRow& run) override;
  Status FinishRun(const RunRow& run, const ImportStats& stats) override;
  Status AddRoof(const RoofRow& roof) override;
  StatusOr<int64_t> AddSession(const SessionRow& session,
                               const std::vector<DeviceRow>& devices) override;
  Status UpdateSession(const SessionRow& session) override;
  StatusOr<int64_t> AddGemmCall(const GemmCallRow& gemm) override;
  Status AddStep(const StepRow& step) override;
  Status AddKernel(const KernelRow& kernel) override;
  Status AddKernelMetric(const KernelMetricRow& metric) override;
  Status AddMemcpy(const MemcpyRow& memcpy) override;
  Status AddNvtx(const NvtxRow& range) override;
  Status EndWrite() override;
  void KeptOfFailedWrite(uint64_t* kernels, uint64_t* ranges) const override;

  void set_batch_rows(size_t n) { batch_rows_ = n; }
  // Which kernel rows the runs begun from now on keep (default: all).
  void set_store_kernels(StoreKernels k) { store_kernels_ = k; }
  StoreKernels store_kernels() const { return store_kernels_; }
  // Each run is then one transaction, committed by FinishRun(): a run that
  // fails part-way (AbortRun(), or the Store destroyed first) leaves
  // nothing in the store. For imports into a store that holds other runs.
  void set_atomic_runs(bool on) { atomic_runs_ = on; }
  // Rolls back what the current atomic run wrote.
  Status AbortRun();
  // The run begun next replaces run `twin`, its incomplete twin, when it is
  // finished (store/run_replace.h: when that loses nothing). Checked now:
  // InvalidArgument, nothing written, for a twin that is missing, complete
  // or being written; from now on this Store holds the twin's lease.
  Status ReplaceWhenFinished(int64_t twin);
  // After FinishRun: whether the twin was replaced, or why not ("" when no
  // twin was named).
  const std::string& replace_note() const { return replace_note_; }
  // The store as messages name it (a URL without its password).
  const std::string& path() const { return path_; }

 private:
  Store() = default;
  Status Exec(std::string_view sql);
  Status Prepare(std::string_view sql, std::unique_ptr<DbStatement>* stmt);
  // An INSERT on `db` reporting the `id_column` it inserted.
  Status PrepareInsert(Db* db, std::string_view sql,
                       std::string_view id_column,
                       std::unique_ptr<DbStatement>* stmt);
  Status Step(const std::unique_ptr<DbStatement>& stmt, const char* what);
  // A write (`what`) failed for `cause`: the names and signatures looked up
  // are forgotten, and the write's transaction is rolled back (not an atomic
  // run's: AbortRun's). `stmt`, when given, is reset.
  Status WriteFailed(const char* what, const Status& cause,
                     DbStatement* stmt = nullptr);
  // Step() of a PrepareInsert() statement: the id it inserted.
  StatusOr<int64_t> StepInsert(const std::unique_ptr<DbStatement>& stmt,
                               const char* what);
  Status Begin();
  Status Commit();
  // Commits and reopens the transaction every batch_rows_ rows.
  Status CountRow();
  // `what` failed, for `cause` (the connection's last error when it has
  // no message).
  Status Error(const std::string& what, const Status& cause) const;
  Status MigrateFromSchema1();
  Status MigrateFromSchema2();
  Status MigrateFromSchema3();
  Status MigrateFromSchema4();
  Status MigrateFromSchema5();
  Status MigrateFromSchema6();
  Status MigrateFromSchema7();
  Status MigrateFromSchema8();
  struct Group;
  // The aggregate group of `k` in the current run, made on first use.
  StatusOr<Group*> GroupOf(const KernelRow& k);
  // The kernel_sigs row of `k` (of group `g`), inserted on first use.
  StatusOr<int64_t> SigOf(const KernelRow& k, Group* g);
  // Adds `k` to `g`; true when its kernel row is to be kept
  // (store_kernels_).
  bool Aggregate(const KernelRow& k, Group* g);
  // Replaces the run's kernel_aggregates rows with the groups so far.
  Status WriteAggregates(int64_t run_id);
  // One version up (from -> from + 1) in one transaction.
  Status UpgradeSchema(int from,
                       const std::vector<const char*>& statements);
  Status ApplyTestPageBudget();
  // schema_info's schema_version (0: none), refused when it is not a
  // version (ParseSchemaVersion).
  StatusOr<int> ReadSchemaVersion();
  // The same, 0 for one refused: for after RefuseWhatIsNotAStore.
  int SchemaVersion();
  // OK for a database with no table at all (a new store); an error naming
  // the tables for another program's database (schema version 0).
  Status RefuseForeignDatabase(const std::vector<std::string>& tables);
  // Reads only: refuses a file that is not SQLite, a newer schema and
  // another program's database, before Open() writes anything.
  Status RefuseWhatIsNotAStore();
  // The kernel_names row of a kernel's name, inserted on first use.
  StatusOr<int64_t> NameId(const KernelRow& kernel);

  // The lease on the run being written (store/run_lease.h), on the store
  // as opened (`lease_path_`: the file or URL, not the display name).
  RunLease lease_;
  std::string lease_path_;
  // ReplaceWhenFinished's twin (0: none), held by twin_lease_ until the
  // Store goes; FinishReplace (store/run_replace.cc) replaces it inside
  // FinishRun's transaction.
  int64_t twin_ = 0;
  RunLease twin_lease_;
  std::string replace_note_;
  Status FinishReplace(int64_t run_id, const ImportStats& stats);
  bool said_long_name_ = false;  // NameId warned of a bounded name
  std::string path_;
  // Declared before the statements: they go first.
  std::unique_ptr<Db> db_;
  // PostgreSQL: a second connection, in autocommit, for kernel_names
  // (NameId()); SQLite: none, names go through db_.
  std::unique_ptr<Db> names_db_;
  // A kernel row as AddKernel leaves it until its batch is inserted: its
  // launch's own columns (kernel_rows after kernel_id), numbers only, so
  // that it holds no view into the caller's row.
  struct PendingKernel {
    int64_t run_id = 0, session_id = 0, sig_id = 0, duration_ns = 0,
            graph_node_id = 0;
    std::optional<int64_t> correlation_id, start_ns, end_ns, api_start_ns,
        gemm_call_id, step_id;
    std::optional<double> achieved_flops_per_s, achieved_bytes_per_s,
        fraction_of_roof;
  };
  // Inserts the pending kernel rows: kernels_per_insert_ at a time with
  // insert_kernels_, the rest one by one (or all by one COPY where the
  // backend has it). Before every commit.
  Status FlushKernels();
  // One INSERT of many rows costs SQLite far less than as many of one row
  // (a statement's run, halt and reset): 256 rows an INSERT, 0.93-0.96 us
  // a kernel in store_write_bench against 1.00-1.07 us with 64. 256 x 14
  // parameters is over the 999 an SQLite before 3.32 takes: there, 64.
  static constexpr size_t kKernelsPerInsert = 256;
  static constexpr size_t kKernelsPerInsertOldSqlite = 64;
  size_t kernels_per_insert_ = kKernelsPerInsert;
  // Where the backend copies rows in bulk (Db::CanCopyRows: PostgreSQL),
  // this many a COPY.
  static constexpr size_t kKernelsPerCopy = 4096;
  size_t kernels_per_flush_ = kKernelsPerInsert;
  std::vector<DbCell> copy_cells_;  // FlushKernels' COPY, kept for its capacity
  std::vector<PendingKernel> pending_kernels_;
  // What the writer knows of the kernel rows of a run it writes, for its
  // run_kernel_ids row: whether they came in start order so far (readers
  // then need no sort), and whether the open transaction wrote some (the
  // row is opened before them and brought up to date before the commit).
  struct RunKernelIds {
    int64_t run_id = 0;
    std::optional<int64_t> last_start;
    bool any = false, in_order = true, in_txn = false;
  };
  RunKernelIds& KernelIdsOf(int64_t run_id);
  // Before the commit: each run_kernel_ids row the transaction's kernel
  // rows belong to gets their last id and whether they are in order.
  Status UpdateKernelIds();
  std::vector<RunKernelIds> run_kernel_ids_;  // a few: the runs being written
  std::unique_ptr<DbStatement> open_kernel_ids_, update_kernel_ids_;
  std::unique_ptr<DbStatement> insert_kernels_;
  std::unique_ptr<DbStatement> insert_kernel_;
  std::unique_ptr<DbStatement> select_name_;
  std::unique_ptr<DbStatement> insert_name_;
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const {
      return std::hash<std::string_view>()(v);
    }
  };
  // kernel_names ids of the names written so far (cleared when a statement
  // fails, since the database may have rolled back the rows they point at).
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>
      name_ids_;
  std::unique_ptr<DbStatement> insert_memcpy_;
  std::unique_ptr<DbStatement> insert_gemm_;
  std::unique_ptr<DbStatement> insert_nvtx_;
  std::unique_ptr<DbStatement> insert_step_;
  std::unique_ptr<DbStatement> insert_roof_;
  std::unique_ptr<DbStatement> insert_metric_;
  std::unique_ptr<DbStatement> insert_label_;
  std::unique_ptr<DbStatement> insert_session_;
  std::unique_ptr<DbStatement> insert_device_;
  std::unique_ptr<DbStatement> update_session_;
  // A launch signature's numbers (kernel_sigs, schema 9; SigNumbersOf in
  // store.cc says which): compared as a whole, a few words, where a
  // signature's texts are mostly its group's.
  static constexpr int kSigNumbers = 32;
  struct SigNumbers {
    std::array<int64_t, kSigNumbers> v{};
    uint64_t present = 0;  // bit i: v[i] is set (else NULL)
    bool operator==(const SigNumbers&) const = default;
  };
  // A signature a group's launches had lately: its numbers and the texts
  // that are not the group's (the exact sources, the NVTX path).
  struct RecentSig {
    SigNumbers numbers;
    std::string nvtx_path, flops_source, bytes_source;
    int64_t sig_id = 0;  // 0: empty
    uint64_t names_epoch = 0;  // names_epoch_ when sig_id was looked up
  };
  // The current run's aggregate groups, by a key of the grouping columns
  // (AggregateKey in store.cc); the strings live in the group.
  struct Group {
    int64_t name_id = 0;
    uint64_t names_epoch = 0;  // names_epoch_ when name_id was looked up
    std::string name, demangled, family, shape, phase, op, precision, bound,
        flops_source, bytes_source;
    KernelAggregateRow sums;  // its views point into the strings above
    // The group's launches mostly share a signature or a few (streams,
    // NVTX paths): each launch is checked against these before the
    // store-wide sig_ids_.
    std::array<RecentSig, 4> sigs;
    size_t next_sig = 0;  // the one to replace next
  };
  // kernel_sigs ids of the signatures written so far, by their content
  // (SigOf's key); cleared with name_ids_, and when it holds kMaxSigIds (a
  // counters-mode run gives each launch its own figures, so a signature
  // of its own: memory must not grow with the run).
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>
      sig_ids_;
  static constexpr size_t kMaxSigIds = 65536;
  std::string sig_key_buf_;
  std::unique_ptr<DbStatement> insert_sig_;
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>>
      group_index_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::string key_buf_;
  // The groups by where the row's texts are (the joined session's own
  // strings, the same for every launch of a group while its window
  // lives): a hit is checked against the group's texts, so a pointer
  // reused for another text later only costs a miss. Looking a group up by
  // its texts hashes a ~150-character name and a ~100-byte key; by their
  // addresses, a few words into a direct-mapped table (store_write_bench,
  // --store-kernels none: 0.21 -> 0.09 us per kernel).
  struct TextAddresses {
    std::array<const char*, 8> data{};
    std::array<uint32_t, 8> size{};
    int64_t token = 0;
    int flags = 0;
    bool operator==(const TextAddresses&) const = default;
  };
  struct AddressSlot {
    TextAddresses at;
    Group* group = nullptr;
  };
  // kAddressSlots slots (a power of two); a slot another group takes over
  // costs the next launch of the first a lookup by texts.
  static constexpr size_t kAddressSlots = 2048;
  std::vector<AddressSlot> by_address_;
  // Bumped whenever name_ids_ is cleared (a failed write may have rolled
  // back names): a group looks its name up again before its next row.
  uint64_t names_epoch_ = 0;
  int64_t aggregates_run_ = 0;  // the run groups_ belongs to
  bool aggregates_dirty_ = false;
  int64_t aggregates_written_ns_ = 0;  // steady clock of the last write
  std::unique_ptr<DbStatement> delete_aggregates_;
  std::unique_ptr<DbStatement> insert_aggregate_;
  StoreKernels store_kernels_ = StoreKernels::kAll;
  size_t batch_rows_ = 20000;
  bool atomic_runs_ = false;
  size_t rows_in_txn_ = 0;
  bool in_txn_ = false;
  // Kernel and NVTX rows of the open transaction, and those of the current
  // write already committed by batches (KeptOfFailedWrite).
  uint64_t kernels_in_txn_ = 0, ranges_in_txn_ = 0;
  uint64_t kernels_committed_ = 0, ranges_committed_ = 0;
};

// A RunRecorder whose rows go to the store at `store_path` (created if
// missing), which it owns. Errors name the file and the fix.
StatusOr<std::unique_ptr<RunRecorder>> CreateStoreRecorder(
    const RecorderOptions& options, const std::string& store_path,
    Store::Durability durability = Store::Durability::kDurable,
    StoreKernels store_kernels = StoreKernels::kAll);

}  // namespace rooftrace

#endif  // ROOFTRACE_STORE_STORE_H_
