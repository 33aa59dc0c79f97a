// Interned strings of one producer (kernel names, NVTX messages, domains).
//
// Intern() returns a stable id (iid, from 1; 0 is "none"). New strings are
// remembered as pending definitions; the sender attaches them to the next
// packet it writes (Packet.interned_strings). The sender drains records
// BEFORE taking pending definitions, so a record it encodes never refers to
// an iid defined only in a later packet.
//
// Thread-safe. Intern() allocates only the first time a string is seen. A
// repeat is answered from a small per-thread cache without the mutex (NVTX
// messages repeat on every push, from many threads); a cache miss takes
// the mutex.
#ifndef ROOFTRACE_LIBINJECT_STRING_INTERNER_H_
#define ROOFTRACE_LIBINJECT_STRING_INTERNER_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/live_buffer.h"
#include "proto/wire_encoder.h"

namespace rooftrace::inject {

class StringInterner {
 public:
  using Definition = StringDefinition;

  StringInterner();

  uint64_t Intern(std::string_view s);

  // Appends the definitions not yet taken and marks them taken. The views
  // stay valid for the interner's lifetime.
  void TakePending(std::vector<Definition>* out);
  // Every definition so far (a spool started mid-session restates them).
  void TakeAll(std::vector<Definition>* out);

  // Every string interned from now on is also written to `live` (the
  // producer's live buffer), where a reader finds it after this process
  // is gone. Set once, before any thread interns.
  void set_mirror(LiveBuffer* live) { mirror_ = live; }

  size_t size();
  // The text of `iid` ("" when unknown). Takes the mutex: for the rare
  // callers that need text back (counters mode's NVTX path condition).
  std::string Lookup(uint64_t iid);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>()(s);
    }
  };
  uint64_t InternLocked(std::string_view s, std::string_view* stored);

  // Unique per interner for the process lifetime: per-thread cache entries
  // of a destroyed interner never match a new one at the same address.
  const uint64_t id_;
  std::mutex mu_;
  std::deque<std::string> strings_;  // iid = index + 1; stable addresses
  std::unordered_map<std::string_view, uint64_t, Hash, std::equal_to<>> ids_;
  size_t pending_from_ = 0;
  LiveBuffer* mirror_ = nullptr;
};

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_STRING_INTERNER_H_
