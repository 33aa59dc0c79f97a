#include "sources/nsys/table_stream.h"

#include <sqlite3.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "sources/nsys/sqlite_file.h"

namespace rooftrace::nsys {

TableStream::~TableStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status TableStream::Open(const std::string& path, const std::string& table,
                         const std::string& select, std::string filter,
                         const std::vector<int>& nullable,
                         const std::vector<int>& text, bool threaded) {
  path_ = path;
  table_ = table;
  select_ = "SELECT rowid, " + QuoteIdentifier("start") +
            (select.empty() ? "" : ", " + select);
  filter_ = std::move(filter);
  for (const auto& [columns, kind] :
       {std::pair(&nullable, 1), std::pair(&text, 2)}) {
    for (int c : *columns) {
      if (kind_.size() <= static_cast<size_t>(c)) kind_.resize(c + 1, 0);
      kind_[c] = static_cast<char>(kind);
    }
  }
  threaded_ = threaded;
  if (threaded_) thread_ = std::thread([this] { Produce(); });
  return Advance();
}

std::unique_ptr<RowBatch> TableStream::TakeFree() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) return std::make_unique<RowBatch>();
  std::unique_ptr<RowBatch> b = std::move(free_.back());
  free_.pop_back();
  return b;
}

Status TableStream::Start() {
  started_ = true;
  // A connection of the stepping thread's own: connections are opened
  // without SQLite's mutex and never shared.
  RT_ASSIGN_OR_RETURN(db_, SqliteFile::Open(path_));
  RT_ASSIGN_OR_RETURN(
      stmt_, db_->Prepare(select_ + " FROM " + QuoteIdentifier(table_) +
                          (filter_.empty() ? "" : " WHERE " + filter_)));
  columns_ = sqlite3_column_count(stmt_.raw());
  // A column this table lacks is selected as a literal NULL (SelectList):
  // filled without asking SQLite for it on every row.
  kind_.resize(static_cast<size_t>(columns_), 0);
  for (int c = 0; c < columns_; ++c) {
    const char* name = sqlite3_column_name(stmt_.raw(), c);
    if (name != nullptr && std::string_view(name) == "NULL") kind_[c] = 3;
  }
  return OkStatus();
}

StatusOr<bool> TableStream::Fill(RowBatch* batch) {
  batch->Clear();
  batch->columns = static_cast<size_t>(columns_);
  if (exhausted_) return false;
  // Sized once (the batch keeps its memory), written in place.
  batch->values.resize(kBatchRows * batch->columns);
  batch->nulls.resize(kBatchRows * batch->columns);
  sqlite3_stmt* st = stmt_.raw();
  while (batch->rows < kBatchRows) {
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
      exhausted_ = true;
      return batch->rows > 0;
    }
    if (rc != SQLITE_ROW) {
      exhausted_ = true;
      return db_->Error(rc, "reading rows");
    }
    const int64_t start = sqlite3_column_int64(st, 1);
    if (!sorted_ && start < last_start_) {
      // Out of time order: the rest of the table, from this row on, sorted.
      sorted_ = true;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++resorted_;
      }
      const int64_t rowid = sqlite3_column_int64(st, 0);
      RT_ASSIGN_OR_RETURN(
          stmt_,
          db_->Prepare(
              select_ + " FROM " + QuoteIdentifier(table_) + " WHERE " +
              (filter_.empty() ? "" : "(" + filter_ + ") AND ") +
              "rowid >= ? ORDER BY " + QuoteIdentifier("start") + ", rowid"));
      stmt_.Bind(1, rowid);
      st = stmt_.raw();
      continue;
    }
    last_start_ = std::max(last_start_, start);
    int64_t* values = &batch->values[batch->rows * batch->columns];
    uint8_t* nulls = &batch->nulls[batch->rows * batch->columns];
    for (int c = 0; c < columns_; ++c) {
      const int kind = kind_[c];
      if (kind == 0) {  // most columns: one call
        nulls[c] = 0;
        values[c] = sqlite3_column_int64(st, c);
        continue;
      }
      if (kind == 3) {  // not in this table
        nulls[c] = 1;
        values[c] = 0;
        continue;
      }
      const bool null = sqlite3_column_type(st, c) == SQLITE_NULL;
      nulls[c] = null;
      if (kind == 1) {
        values[c] = null ? 0 : sqlite3_column_int64(st, c);
        continue;
      }
      const auto* p = null ? nullptr : sqlite3_column_text(st, c);
      const size_t n =
          p ? std::min<size_t>(sqlite3_column_bytes(st, c), 0xFFFFFFFF) : 0;
      const uint64_t ref = (uint64_t{batch->text.size()} << 32) | n;
      if (n) batch->text.append(reinterpret_cast<const char*>(p), n);
      values[c] = static_cast<int64_t>(ref);
    }
    ++batch->rows;
  }
  return true;
}

void TableStream::Produce() {
  Status s = Start();
  while (s.ok()) {
    std::unique_ptr<RowBatch> batch = TakeFree();
    StatusOr<bool> more = Fill(batch.get());
    if (!more.ok()) s = more.status();
    const bool rows = batch->rows > 0;
    std::unique_lock<std::mutex> lock(mu_);
    if (rows) {
      // Rows read before an error are handed over; the error follows them.
      cv_.wait(lock, [&] { return stop_ || full_.size() < kQueueBatches; });
      if (stop_) break;
      full_.push_back(std::move(batch));
      cv_.notify_all();
    }
    if (!more.ok() || !*more) break;
  }
  stmt_ = Statement();
  db_.reset();
  std::lock_guard<std::mutex> lock(mu_);
  error_ = std::move(s);
  done_ = true;
  cv_.notify_all();
}

Status TableStream::Advance() {
  if (batch_ && ++row_ < batch_->rows) {
    row_start_ = static_cast<uint64_t>(std::max<int64_t>(0, row().Int(1)));
    return OkStatus();
  }
  has_row_ = false;
  if (!threaded_) {
    if (!pending_.ok()) return pending_;  // after the rows read before it
    if (!batch_) batch_ = std::make_unique<RowBatch>();
    if (!started_) RT_RETURN_IF_ERROR(Start());
    StatusOr<bool> more = Fill(batch_.get());
    if (!more.ok()) {
      if (batch_->rows == 0) return more.status();
      pending_ = more.status();
    } else if (!*more) {
      return OkStatus();
    }
  } else {
    std::unique_lock<std::mutex> lock(mu_);
    if (batch_) free_.push_back(std::move(batch_));
    cv_.notify_all();
    cv_.wait(lock, [&] { return !full_.empty() || done_; });
    if (full_.empty()) return error_;  // the end, or where reading broke
    batch_ = std::move(full_.front());
    full_.pop_front();
    cv_.notify_all();
  }
  row_ = 0;
  has_row_ = true;
  row_start_ = static_cast<uint64_t>(std::max<int64_t>(0, row().Int(1)));
  return OkStatus();
}

}  // namespace rooftrace::nsys
