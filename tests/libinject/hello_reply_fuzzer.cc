// libFuzzer target for the one parser of outside input in libinject: the
// collector's HelloReply read from the socket (ParseHelloReply). Built with
// -DROOFTRACE_BUILD_FUZZERS=ON and clang.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/wire_encoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bool accepted = false;
  uint32_t version = 0;
  std::string reason;
  rooftrace::inject::ParseHelloReply(
      std::string_view(reinterpret_cast<const char*>(data), size), &accepted,
      &version, &reason);
  return 0;
}
