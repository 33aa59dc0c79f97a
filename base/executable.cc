#include "base/executable.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <string_view>

namespace rooftrace {
namespace {

bool IsDynamicLoader(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view name =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.rfind("ld-linux", 0) == 0 || name.rfind("ld.so", 0) == 0 ||
         name.rfind("ld64.so", 0) == 0;
}

std::string RealPath(const char* path) {
  char resolved[PATH_MAX];
  if (realpath(path, resolved) == nullptr) return "";
  return resolved;
}

}  // namespace

std::string ExecutablePath() {
  char exe[PATH_MAX] = {0};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  std::string self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : "";
  if (!self.empty() && !IsDynamicLoader(self)) return self;
  // Started through the loader: the main program's own name, as the loader
  // opened it, is what dladdr reports for a function linked into it.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ExecutablePath), &info) != 0 &&
      info.dli_fname != nullptr && *info.dli_fname != '\0') {
    std::string path = RealPath(info.dli_fname);
    if (!path.empty() && !IsDynamicLoader(path)) return path;
  }
  return self;
}

std::string ExecutablePrefix() {
  const std::string exe = ExecutablePath();
  const size_t bin = exe.rfind('/');
  if (bin == std::string::npos || bin == 0) return "";
  const size_t prefix = exe.rfind('/', bin - 1);
  if (prefix == std::string::npos) return "";
  return exe.substr(0, prefix == 0 ? 1 : prefix);
}

}  // namespace rooftrace
