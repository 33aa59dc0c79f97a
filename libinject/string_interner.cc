#include "libinject/string_interner.h"

#include <atomic>

namespace rooftrace::inject {

namespace {
std::atomic<uint64_t> g_next_interner_id{1};

struct CacheEntry {
  uint64_t interner_id = 0;
  size_t hash = 0;
  uint64_t iid = 0;
  std::string_view str;  // the interner's own copy (stable)
};
constexpr size_t kCacheEntries = 64;  // direct-mapped, per thread
}  // namespace

StringInterner::StringInterner()
    : id_(g_next_interner_id.fetch_add(1, std::memory_order_relaxed)) {}

uint64_t StringInterner::Intern(std::string_view s) {
  static thread_local CacheEntry cache[kCacheEntries];
  const size_t hash = std::hash<std::string_view>()(s);
  CacheEntry& e = cache[hash % kCacheEntries];
  if (e.interner_id == id_ && e.hash == hash && e.str == s) return e.iid;
  std::string_view stored;
  const uint64_t iid = InternLocked(s, &stored);
  e = CacheEntry{id_, hash, iid, stored};
  return iid;
}

uint64_t StringInterner::InternLocked(std::string_view s,
                                      std::string_view* stored) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) {
    *stored = it->first;
    return it->second;
  }
  strings_.emplace_back(s);
  const uint64_t iid = strings_.size();
  *stored = std::string_view(strings_.back());
  ids_.emplace(*stored, iid);
  if (mirror_ != nullptr) (void)mirror_->AppendString(iid, *stored);
  return iid;
}

void StringInterner::TakePending(std::vector<Definition>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = pending_from_; i < strings_.size(); ++i) {
    out->emplace_back(i + 1, std::string_view(strings_[i]));
  }
  pending_from_ = strings_.size();
}

void StringInterner::TakeAll(std::vector<Definition>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < strings_.size(); ++i) {
    out->emplace_back(i + 1, std::string_view(strings_[i]));
  }
  pending_from_ = strings_.size();
}

size_t StringInterner::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return strings_.size();
}

std::string StringInterner::Lookup(uint64_t iid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (iid == 0 || iid > strings_.size()) return std::string();
  return strings_[iid - 1];
}

}  // namespace rooftrace::inject
