// The bound on text the store indexes, the same on SQLite and PostgreSQL.
// PostgreSQL refuses a btree entry past about 2.7 KB (a third of a page),
// SQLite has no such limit: a 9 KB kernel name stored on one and failed
// the whole run on the other. Kernel names (kernel_names.name, UNIQUE) are
// bounded here (the rest of the row keeps the kernel); labels
// (run_labels (key, value)) where they are parsed (base/cli.h
// kMaxLabelKeyBytes, kMaxLabelValueBytes), before anything is collected.
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_STORE_INDEXED_TEXT_H_
#define ROOFTRACE_STORE_INDEXED_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace rooftrace {

// The longest kernel name stored as it is, in bytes. Real names reach a
// few hundred bytes (deeply templated CUTLASS kernels about 1.5 KB).
inline constexpr size_t kMaxIndexedNameBytes = 2048;

// `name` when it is at most kMaxIndexedNameBytes; else its first bytes (cut
// on a UTF-8 character boundary) and "... [N bytes, sha256 H]", H the first
// 16 hex digits of the whole name's SHA-256: at most kMaxIndexedNameBytes,
// and two long names that share their head stay two names.
std::string IndexedKernelName(std::string_view name);

}  // namespace rooftrace

#endif  // ROOFTRACE_STORE_INDEXED_TEXT_H_
