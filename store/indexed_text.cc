#include "store/indexed_text.h"

#include "base/file_digest.h"

namespace rooftrace {

std::string IndexedKernelName(std::string_view name) {
  if (name.size() <= kMaxIndexedNameBytes) return std::string(name);
  const std::string tail = "... [" + std::to_string(name.size()) +
                           " bytes, sha256 " +
                           Sha256Hex(name).substr(0, 16) + "]";
  size_t head = kMaxIndexedNameBytes - tail.size();
  // Not inside a UTF-8 character: back over continuation bytes.
  while (head > 0 && (static_cast<unsigned char>(name[head]) & 0xC0) == 0x80) {
    --head;
  }
  return std::string(name.substr(0, head)) + tail;
}

}  // namespace rooftrace
