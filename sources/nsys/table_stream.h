// One table of an export streamed in time order: `SELECT rowid, start,
// <columns> FROM table WHERE <filter>` on a connection of its own, decoded
// into batches of rows that the reader takes one row at a time (row(),
// Advance()). With `threaded`, a thread of the stream's own fills the
// batches, so that SQLite's stepping and column decoding (most of the cost
// of reading an export) runs beside the pipeline, one table per thread;
// without, Advance() fills the next batch itself.
//
// File order is time order in the exports seen so far; the first row found
// earlier than the one before switches the rest of the table to `ORDER BY
// start` (SQLite sorts it), so an unsorted export costs a sort instead of
// wrong joins. Rows met before the switch keep their place.
//
// Owned by one reading thread (the consumer); the producer thread is
// internal. Memory: at most kQueueBatches batches of kBatchRows rows. The
// trap: row() is valid until the next Advance().
#ifndef ROOFTRACE_SOURCES_NSYS_TABLE_STREAM_H_
#define ROOFTRACE_SOURCES_NSYS_TABLE_STREAM_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "sources/nsys/sqlite_file.h"

namespace rooftrace::nsys {

// Rows of one table: row r's column c is at r * columns + c (the vectors
// are sized for a full batch; `rows` are filled). A text column's value is
// (offset << 32 | length) into `text`.
struct RowBatch {
  size_t columns = 0;
  size_t rows = 0;
  std::vector<int64_t> values;
  std::vector<uint8_t> nulls;
  std::string text;
  void Clear() {
    rows = 0;
    text.clear();
  }
};

// One row of a batch; the same accessors as a Statement.
class RowView {
 public:
  RowView() = default;
  RowView(const RowBatch* b, size_t row) : b_(b), base_(row * b->columns) {}
  int64_t Int(int column) const { return b_->values[base_ + column]; }
  // For the columns opened as nullable or text; false for the others.
  bool IsNull(int column) const { return b_->nulls[base_ + column] != 0; }
  // For the columns opened as text; empty for NULL.
  std::string_view Text(int column) const {
    const auto v = static_cast<uint64_t>(b_->values[base_ + column]);
    return std::string_view(b_->text).substr(v >> 32, v & 0xFFFFFFFF);
  }

 private:
  const RowBatch* b_ = nullptr;
  size_t base_ = 0;
};

class TableStream {
 public:
  static constexpr size_t kBatchRows = 1024;
  static constexpr size_t kQueueBatches = 16;
  // Column 0 is rowid, 1 is start; the wanted columns follow.
  static constexpr int kFirst = 2;

  TableStream() = default;
  ~TableStream();
  TableStream(const TableStream&) = delete;
  TableStream& operator=(const TableStream&) = delete;

  // Starts reading `select` (the column list after "SELECT rowid, start, ")
  // of `table` where `filter` (may be empty), on a connection of its own to
  // `path`, and waits for the first row. Result columns (counting rowid
  // and start) are integers, NULL read as 0; those in `nullable` also say
  // whether they were NULL, those in `text` are read as text.
  Status Open(const std::string& path, const std::string& table,
              const std::string& select, std::string filter,
              const std::vector<int>& nullable, const std::vector<int>& text,
              bool threaded);

  // Whether row() holds a row; false at the end of the table or on error.
  bool has_row() const { return has_row_; }
  RowView row() const { return RowView(batch_.get(), row_); }
  uint64_t row_start() const { return row_start_; }
  // The next row; an error when the table could not be read further.
  Status Advance();
  // 1 when the table was found out of time order and sorted, else 0.
  uint64_t resorted() {
    std::lock_guard<std::mutex> lock(mu_);
    return resorted_;
  }

 private:
  // Opens the connection and the query (on the thread that will step it).
  Status Start();
  // Fills `batch` with up to kBatchRows rows; false at the end of the table.
  // A read error after some rows keeps them in `batch`.
  StatusOr<bool> Fill(RowBatch* batch);
  // The producer thread's loop.
  void Produce();
  std::unique_ptr<RowBatch> TakeFree();

  std::string path_, table_, select_, filter_;
  // Per column: 0 integer, 1 nullable, 2 text, 3 a literal NULL (a column
  // the table lacks). Sized to the result's columns by Start().
  std::vector<char> kind_;
  std::thread thread_;
  bool threaded_ = false;

  // The producer's (the stream's thread, or the reader's without one).
  std::unique_ptr<SqliteFile> db_;
  Statement stmt_;
  int columns_ = 0;
  bool sorted_ = false, started_ = false, exhausted_ = false;
  int64_t last_start_ = INT64_MIN;
  Status pending_;  // without a thread: an error after the batch in hand

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<RowBatch>> full_;   // guarded by mu_
  std::vector<std::unique_ptr<RowBatch>> free_;  // guarded by mu_
  bool done_ = false;      // producer finished; guarded by mu_
  bool stop_ = false;      // consumer gone; guarded by mu_
  Status error_;           // guarded by mu_
  uint64_t resorted_ = 0;  // guarded by mu_

  // Consumer side.
  std::unique_ptr<RowBatch> batch_;
  size_t row_ = 0;
  bool has_row_ = false;
  uint64_t row_start_ = 0;
};

}  // namespace rooftrace::nsys

#endif  // ROOFTRACE_SOURCES_NSYS_TABLE_STREAM_H_
