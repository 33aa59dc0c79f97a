#include "libinject/string_interner.h"

namespace rooftrace::inject {

uint64_t StringInterner::Intern(std::string_view s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  strings_.emplace_back(s);
  const uint64_t iid = strings_.size();
  ids_.emplace(std::string_view(strings_.back()), iid);
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

}  // namespace rooftrace::inject
