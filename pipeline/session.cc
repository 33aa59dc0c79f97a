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

// Drops the links whose target (a GEMM call, an operation) is gone.
template <typename Target, typename Link>
void EraseLinks(const std::vector<Target>& targets, uint64_t Target::*id,
                std::vector<Link>* links, uint64_t Link::*target_id,
                size_t retain) {
  std::unordered_set<uint64_t> held;
  held.reserve(targets.size());
  for (const Target& t : targets) held.insert(t.*id);
  std::vector<char> drop(links->size(), 0);
  for (size_t i = 0; i < drop.size(); ++i) {
    drop[i] = held.count((*links)[i].*target_id) == 0;
  }
  EraseFlagged(links, drop, retain);
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
         rec_.gemms.size() + rec_.nvtx.size() + rec_.counters.size() +
         rec_.ops.size() + rec_.metrics.size() + rec_.pm_samples.size();
}

void Session::DropRecords(const RecordMask& mask, size_t retain) {
  EraseFlagged(&rec_.kernels, mask.kernels, retain);
  EraseFlagged(&rec_.launches, mask.launches, retain);
  EraseFlagged(&rec_.memcpys, mask.memcpys, retain);
  if (!mask.gemms.empty()) {
    EraseFlagged(&rec_.gemms, mask.gemms, retain);
    // A call's links go with it (call ids are unique in a session).
    EraseLinks(rec_.gemms, &GemmRecord::call_id, &rec_.gemm_links,
               &GemmLink::call_id, retain);
  }
  if (!mask.ops.empty()) {
    EraseFlagged(&rec_.ops, mask.ops, retain);
    EraseLinks(rec_.ops, &OpRecord::op_id, &rec_.op_links, &OpLink::op_id,
               retain);
  }
  EraseFlagged(&rec_.nvtx, mask.nvtx, retain);
  EraseFlagged(&rec_.counters, mask.counters, retain);
  EraseFlagged(&rec_.metrics, mask.metrics, retain);
  EraseFlagged(&rec_.pm_samples, mask.pm_samples, retain);
}

}  // namespace rooftrace
