// libFuzzer target for device-profile parsing: the bytes are a profile file
// as `--device-profile` reads it (model/device_profile.cc), through the JSON
// layer under it (base/json.cc: simdjson, then the Value tree with its
// duplicate-key and depth rules; base/json_checker.cc, which explains a
// refusal). Besides crashes, leaks and undefined behaviour it traps when a
// rule that must hold for every input breaks:
//   - json::Parse and the checker refuse the same texts (simdjson and the
//     strict grammar agree), and every refusal names the file and a
//     line:column;
//   - a parsed Value, written, parses back equal (writer and parser agree);
//   - a profile that loads, written and loaded again, has the same roofs.
//
// Built only with clang and ROOFTRACE_BUILD_FUZZERS=ON; run as
// docs/device-profile.md says (a dictionary and seeds sit next to this
// file: device_profile_fuzzer.dict, device_profile_corpus/).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/json_checker.h"
#include "model/device_profile.h"

namespace {

void Fail(const char* what, std::string_view input, const std::string& detail) {
  fprintf(stderr, "device_profile_fuzzer: %s\n  detail: %s\n  input: %.*s\n",
          what, detail.c_str(), static_cast<int>(input.size()), input.data());
  __builtin_trap();
}

// "fuzz.json:LINE:COLUMN: " with both numbers present.
bool NamesAPosition(const std::string& message) {
  constexpr std::string_view kPrefix = "fuzz.json:";
  if (message.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  size_t i = kPrefix.size();
  auto digits = [&] {
    const size_t start = i;
    while (i < message.size() && message[i] >= '0' && message[i] <= '9') ++i;
    return i > start;
  };
  if (!digits() || i >= message.size() || message[i++] != ':') return false;
  if (!digits() || message.compare(i, 2, ": ") != 0) return false;
  return true;
}

void CheckJson(std::string_view text) {
  using rooftrace::json::Parse;
  const auto parsed = Parse(text, "fuzz.json");
  const auto check = rooftrace::json::internal::CheckText(text, "fuzz.json");
  if (parsed.ok() != check.status.ok()) {
    Fail(parsed.ok() ? "json::Parse accepted what the checker refuses"
                     : "json::Parse refused what the checker accepts",
         text,
         parsed.ok() ? check.status.message() : parsed.status().message());
  }
  if (!parsed.ok()) {
    if (parsed.status().message() != check.status.message() ||
        !NamesAPosition(parsed.status().message())) {
      Fail("a refusal does not name the position the checker found", text,
           parsed.status().message() + " | " + check.status.message());
    }
    return;
  }
  for (int indent : {0, 2}) {
    const std::string written = rooftrace::json::Write(*parsed, {indent});
    const auto back = Parse(written, "written.json");
    if (!back.ok()) {
      Fail("a written Value does not parse back", text,
           back.status().message());
    }
    if (!(*back == *parsed))
      Fail("a written Value parses back different", text, written);
  }
}

void CheckProfile(std::string_view text) {
  using namespace rooftrace;
  const auto profile = DeviceProfileFromJson(text, "fuzz.json");
  if (!profile.ok()) {
    if (profile.status().message().compare(0, 9, "fuzz.json") != 0) {
      Fail("a profile error does not name the file", text,
           profile.status().message());
    }
    return;
  }
  const std::string written = DeviceProfileToJson(*profile);
  const auto back = DeviceProfileFromJson(written, "written.json");
  if (!back.ok()) {
    Fail("a loaded profile, written, does not load", text,
         back.status().message());
  }
  bool same = back->DramBytesPerS() == profile->DramBytesPerS() &&
              back->device.name == profile->device.name &&
              back->validation.size() == profile->validation.size() &&
              back->sample == profile->sample;
  for (int i = 1; i < kNumPrecisions; ++i) {
    same = same &&
           back->roofs[i].measured_flops_per_s ==
               profile->roofs[i].measured_flops_per_s &&
           back->roofs[i].datasheet_flops_per_s ==
               profile->roofs[i].datasheet_flops_per_s &&
           back->roofs[i].kernel == profile->roofs[i].kernel;
  }
  if (!same) Fail("a profile changed on a write and load", text, written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckJson(text);
  CheckProfile(text);
  return 0;
}
