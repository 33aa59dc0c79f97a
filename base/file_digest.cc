#include "base/file_digest.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace rooftrace {
namespace {

struct CtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::string Hex(const unsigned char* d, unsigned n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (unsigned i = 0; i < n; ++i) {
    out[2 * i] = kDigits[d[i] >> 4];
    out[2 * i + 1] = kDigits[d[i] & 15];
  }
  return out;
}

}  // namespace

StatusOr<std::string> Sha256OfFile(const std::string& path,
                                   const std::atomic<bool>* stop) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return NotFound(path + ": cannot read: " + std::strerror(errno));
  }
  std::unique_ptr<FILE, int (*)(FILE*)> closer(f, std::fclose);
  std::unique_ptr<EVP_MD_CTX, CtxDeleter> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return InternalError("SHA-256 is not available from libcrypto");
  }
  std::vector<char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      return Unavailable(path + ": reading it was interrupted");
    }
    EVP_DigestUpdate(ctx.get(), buf.data(), n);
  }
  if (std::ferror(f)) {
    return Unavailable(path + ": read error: " + std::strerror(errno));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  return Hex(digest, len);
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  return Hex(digest, len);
}

}  // namespace rooftrace
