#include "store/schema_version.h"

#include <string>

namespace rooftrace {

StatusOr<int> ParseSchemaVersion(std::string_view text,
                                 std::string_view store) {
  // Nine digits fit an int; no schema will come near them.
  constexpr size_t kMaxDigits = 9;
  int value = 0;
  bool ok = !text.empty() && text.size() <= kMaxDigits;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    value = value * 10 + (c - '0');
  }
  if (ok && value > 0) return value;
  // The value is shown quoted and cut: it may be long or hold anything.
  std::string shown(text.substr(0, 40));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  if (text.size() > 40) shown += "...";
  return InvalidArgument(
      std::string(store) + ": schema_info's schema_version is '" + shown +
      "', not a version (a whole number from 1, as rooftrace writes it): "
      "the store is damaged or was written by another program; name a "
      "rooftrace store or a new one");
}

}  // namespace rooftrace
