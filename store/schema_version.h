// Reading schema_info's schema_version (docs/store.md) strictly, for the
// store's writer and its reader alike.
//
// Stateless; thread-safe. The trap: the value is text in the database, so
// anything can be there (another program, a hand edit, a damaged file);
// atoi read "abc" as 0 (a foreign database), "-1" as an old schema to
// upgrade and 20 digits as whatever overflow gave, and went on writing.
#ifndef ROOFTRACE_STORE_SCHEMA_VERSION_H_
#define ROOFTRACE_STORE_SCHEMA_VERSION_H_

#include <string_view>

#include "base/status.h"

namespace rooftrace {

// `text` as a schema version: one to nine decimal digits, nothing else (no
// sign, space or fraction), and not 0. Otherwise kInvalidArgument (exit 2),
// naming `store` (as shown to people), the value, and the fix.
StatusOr<int> ParseSchemaVersion(std::string_view text,
                                 std::string_view store);

}  // namespace rooftrace

#endif  // ROOFTRACE_STORE_SCHEMA_VERSION_H_
