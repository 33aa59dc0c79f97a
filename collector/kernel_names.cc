#include "collector/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace rooftrace {
namespace {

// Drops template arguments and parameter lists: "void ns::k<float, 4>(float*)"
// -> "ns::k".
std::string StripSignature(std::string_view name) {
  std::string out;
  int angle = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') {
      ++angle;
    } else if (c == '>') {
      if (angle > 0) --angle;
    } else if (c == '(' && angle == 0) {
      break;
    } else if (angle == 0) {
      out.push_back(c);
    }
  }
  // Drop a leading return type ("void ").
  const size_t space = out.rfind(' ');
  if (space != std::string::npos) out = out.substr(space + 1);
  return out;
}

}  // namespace

std::string Demangle(std::string_view mangled) {
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') {
    return std::string(mangled);
  }
  int status = 0;
  std::string input(mangled);
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status),
      std::free);
  if (status != 0 || !out) return input;
  return out.get();
}

std::string KernelFamily(std::string_view name) {
  const std::string demangled = Demangle(name);
  return StripSignature(demangled);
}

std::string ShortKernelName(std::string_view name, size_t max_chars) {
  std::string s = StripSignature(Demangle(name));
  if (s.size() > max_chars && max_chars > 3) {
    s = s.substr(0, max_chars - 3) + "...";
  }
  return s;
}

}  // namespace rooftrace
