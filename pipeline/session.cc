#include "pipeline/session.h"

#include <algorithm>
#include <unordered_set>

namespace rooftrace {
namespace {

template <typename T>
void EraseFlagged(std::vector<T>* v, const std::vector<char>& drop,
                  size_t retain) {
  if (drop.empty()) return;
  size_t out = 0;
  for (size_t i = 0; i < v->size(); ++i) {
    if (i < drop.size() && drop[i]) continue;
    if (out != i) (*v)[out] = std::move((*v)[i]);
    ++out;
  }
  v->resize(out);
  // Give the memory back: a long session must not keep its peak capacity.
  if (v->capacity() > std::max(2 * v->size() + 1024, retain)) {
    v->shrink_to_fit();
  }
}

}  // namespace

Session::Session(std::string name) : name_(std::move(name)) {}

void Session::Start(const SessionHeader& header) {
  started_ = true;
  header_ = header;
  name_ = header_.host + ":" + std::to_string(header_.pid);
  ++stats_[ImportStat::k_sessions];
}

const std::string* Session::String(uint64_t iid) const {
  auto it = strings_.find(iid);
  return it == strings_.end() ? nullptr : &it->second;
}

size_t Session::RecordCount() const {
  return rec_.kernels.size() + rec_.launches.size() + rec_.memcpys.size() +
         rec_.gemms.size() + rec_.nvtx.size() + rec_.counters.size();
}

void Session::DropRecords(const RecordMask& mask, size_t retain) {
  EraseFlagged(&rec_.kernels, mask.kernels, retain);
  EraseFlagged(&rec_.launches, mask.launches, retain);
  EraseFlagged(&rec_.memcpys, mask.memcpys, retain);
  if (!mask.gemms.empty()) {
    EraseFlagged(&rec_.gemms, mask.gemms, retain);
    // A call's links go with it (call ids are unique in a session).
    std::unordered_set<uint64_t> held;
    held.reserve(rec_.gemms.size());
    for (const GemmRecord& g : rec_.gemms) held.insert(g.call_id);
    std::vector<char> drop(rec_.gemm_links.size(), 0);
    for (size_t i = 0; i < drop.size(); ++i) {
      drop[i] = held.count(rec_.gemm_links[i].call_id) == 0;
    }
    EraseFlagged(&rec_.gemm_links, drop, retain);
  }
  EraseFlagged(&rec_.nvtx, mask.nvtx, retain);
  EraseFlagged(&rec_.counters, mask.counters, retain);
}

}  // namespace rooftrace
