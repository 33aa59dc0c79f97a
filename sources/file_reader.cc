#include "sources/file_reader.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

namespace rooftrace {
namespace {

using GzFile = std::unique_ptr<gzFile_s, int (*)(gzFile)>;

StatusOr<GzFile> OpenGz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return NotFound(path + ": cannot read: " + std::strerror(errno));
  }
  // Large reads: fewer calls into zlib for big traces.
  gzbuffer(f, 1 << 20);
  return GzFile(f, gzclose);
}

// After a short read: was the end a real end, or a gzip stream cut short?
Status CheckEnd(gzFile f, const std::string& path) {
  int code = Z_OK;
  const char* why = gzerror(f, &code);
  if (code == Z_OK || code == Z_STREAM_END) return OkStatus();
  if (code == Z_ERRNO) {
    // The file could not be read (EIO: /proc/self/mem), whatever it holds:
    // not a damaged gzip file.
    const int err = errno;
    return InvalidArgument(path + ": cannot read it (" +
                           std::string(err != 0 ? std::strerror(err)
                                                : "read error") +
                           "): give a trace file rooftrace can read");
  }
  if (code == Z_BUF_ERROR) {
    return Corrupt(path +
                   ": the gzip file ends in the middle of its data (a "
                   "truncated download or copy?); the gzip file is damaged: "
                   "fetch or copy it again");
  }
  return Corrupt(path + ": cannot decompress: " + (why ? why : "error") +
                 "; the gzip file is damaged");
}

// The uncompressed size a gzip file records in its trailer (ISIZE: the
// size modulo 2^32 of its last member), at most 64 times the file's; 0 for
// a file that is not gzip or cannot be read.
size_t GzipSizeHint(const std::string& path, const struct stat& st) {
  if (st.st_size < 18) return 0;  // header and trailer of an empty member
  std::unique_ptr<FILE, int (*)(FILE*)> f(fopen(path.c_str(), "rb"), fclose);
  if (!f) return 0;
  unsigned char magic[2] = {0, 0};
  unsigned char trailer[4] = {0, 0, 0, 0};
  if (fread(magic, 1, 2, f.get()) != 2 || magic[0] != 0x1f ||
      magic[1] != 0x8b || fseeko(f.get(), -4, SEEK_END) != 0 ||
      fread(trailer, 1, 4, f.get()) != 4) {
    return 0;
  }
  const size_t isize = static_cast<size_t>(trailer[0]) |
                      static_cast<size_t>(trailer[1]) << 8 |
                      static_cast<size_t>(trailer[2]) << 16 |
                      static_cast<size_t>(trailer[3]) << 24;
  // Trust it only as far as JSON compresses (traces: 8-20x): a damaged
  // trailer must not make a small file allocate gigabytes.
  constexpr size_t kMaxRatio = 64;
  return std::min(isize, static_cast<size_t>(st.st_size) * kMaxRatio);
}

constexpr uint64_t kMiB = uint64_t{1} << 20;

std::string Mib(uint64_t bytes) {
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  char buf[48];
  snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / kMiB);
  return buf;
}

// The budget the caller set, else the environment's, else the default.
// InvalidArgument for an environment value that is not a positive count.
StatusOr<GzipBudget> ResolveBudget(const GzipBudget& given,
                                   uint64_t compressed_bytes) {
  GzipBudget out = given;
  if (out.max_bytes != 0) return out;
  if (const char* env = getenv(kGzipBudgetEnv); env != nullptr && *env) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long mib = strtoull(env, &end, 10);
    if (errno != 0 || *end != '\0' || mib == 0 || mib > (~0ull >> 20) ||
        env[0] == '-') {
      return InvalidArgument(std::string(kGzipBudgetEnv) + "=" + env +
                             ": not a size in MiB; give a whole number "
                             "above 0, e.g. " + kGzipBudgetEnv + "=16384");
    }
    out.max_bytes = mib * kMiB;
    out.raise_with = std::string(kGzipBudgetEnv) + "=N";
    return out;
  }
  out.max_bytes = DefaultGzipBudget(compressed_bytes);
  return out;
}

Status OverBudget(const std::string& path, const GzipBudget& budget) {
  return InvalidArgument(
      path + ": decompresses to more than " + Mib(budget.max_bytes) +
      ", the budget for a gzip file's content (a decompression bomb, or "
      "a trace larger than this machine should read): if the trace is "
      "genuine, raise the budget with " +
      (budget.raise_with.empty() ? std::string(kGzipBudgetEnv) + "=N"
                                 : budget.raise_with) +
      " (in MiB)");
}

// A device (/dev/zero, a tape) or a socket never ends: refused by name
// before anything is read from it. A FIFO reaching here (one not copied
// by StreamInputs) is read within the budget like a gzip file's content.
Status RefuseDevice(const std::string& path, const struct stat& st) {
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode) &&
      !S_ISSOCK(st.st_mode)) {
    return OkStatus();
  }
  return InvalidArgument(path + ": " +
                         (S_ISSOCK(st.st_mode) ? "a socket" : "a device") +
                         ", not a file: give the trace file (or a pipe "
                         "that carries it)");
}

}  // namespace

StatusOr<GzipBudget> ResolveGzipBudget(const GzipBudget& given,
                                       uint64_t compressed_bytes) {
  return ResolveBudget(given, compressed_bytes);
}

uint64_t DefaultGzipBudget(uint64_t compressed_bytes) {
  // Trace JSON compresses 8-20x, so 64x leaves a genuine trace room; a
  // bomb of repeated events compresses 250x and more. The 1 GiB floor
  // keeps small files from being judged by a ratio. The ceiling: readers
  // that hold the text whole (ReadWholeFile: ncu's CSV, a Kineto trace that
  // cannot be streamed) need it and more, so a text past a fifth of memory
  // may not be read here; refusing it with a message beats being killed
  // part-way. (A streamed Kineto trace peaks under its text's size.)
  constexpr uint64_t kRatio = 64;
  constexpr uint64_t kFloor = uint64_t{1} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  const uint64_t ceiling =
      pages > 0 && page > 0
          ? std::max(kFloor, static_cast<uint64_t>(pages) *
                                 static_cast<uint64_t>(page) / 5)
          : std::numeric_limits<uint64_t>::max();
  const uint64_t by_ratio =
      compressed_bytes > std::numeric_limits<uint64_t>::max() / kRatio
          ? std::numeric_limits<uint64_t>::max()
          : compressed_bytes * kRatio;
  return std::min(ceiling, std::max(kFloor, by_ratio));
}

StatusOr<std::string> ReadHead(const std::string& path, size_t max_bytes) {
  RT_ASSIGN_OR_RETURN(GzFile f, OpenGz(path));
  std::string head(max_bytes, '\0');
  const int n = gzread(f.get(), head.data(), static_cast<unsigned>(max_bytes));
  if (n < 0) RT_RETURN_IF_ERROR(CheckEnd(f.get(), path));
  head.resize(static_cast<size_t>(std::max(n, 0)));
  if (head.size() < max_bytes) RT_RETURN_IF_ERROR(CheckEnd(f.get(), path));
  return head;
}

StatusOr<std::string> ReadWholeFile(const std::string& path, size_t padding,
                                    size_t* content_size,
                                    const GzipBudget& given_budget) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(path + ": " + std::strerror(errno));
  }
  RT_RETURN_IF_ERROR(RefuseDevice(path, st));
  RT_ASSIGN_OR_RETURN(GzFile f, OpenGz(path));
  // A plain file is read as it is (gzdirect: zlib passes it through).
  const bool gzip = gzdirect(f.get()) == 0;
  RT_ASSIGN_OR_RETURN(
      const GzipBudget budget,
      ResolveBudget(given_budget, static_cast<uint64_t>(st.st_size)));
  // Read at most one byte past the budget: enough to know it is passed.
  const size_t limit =
      (gzip || !S_ISREG(st.st_mode)) &&
              budget.max_bytes < std::numeric_limits<size_t>::max()
          ? static_cast<size_t>(budget.max_bytes) + 1
          : std::numeric_limits<size_t>::max();
  std::string out;
  // Room for the content and its padding from the start: growing the
  // string at the end would copy the whole text and hold it twice for a
  // moment, the import's peak for a large trace. A gzip file says its
  // size in its last four bytes (modulo 4 GiB; a file that outgrows the
  // guess still reads, growing as it inflates). The extra byte lets the
  // end of the file be seen without growing.
  const size_t expected = std::min(
      limit, std::max(static_cast<size_t>(st.st_size), GzipSizeHint(path, st)));
  out.resize(expected + padding + 1);
  size_t size = 0;
  for (;;) {
    if (size >= limit) return OverBudget(path, budget);
    if (size == out.size()) out.resize(std::min(out.size() * 2, limit));
    const size_t want = std::min<size_t>(
        {out.size() - size, limit - size, size_t{1} << 30});
    const int n =
        gzread(f.get(), out.data() + size, static_cast<unsigned>(want));
    if (n < 0) {
      RT_RETURN_IF_ERROR(CheckEnd(f.get(), path));
      return Corrupt(path + ": read error");
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  RT_RETURN_IF_ERROR(CheckEnd(f.get(), path));
  out.resize(size + padding);
  std::memset(out.data() + size, 0, padding);
  if (content_size != nullptr) *content_size = size;
  return out;
}

struct FileStream::Impl {
  Impl(GzFile f, std::string p) : file(std::move(f)), path(std::move(p)) {}
  GzFile file;
  std::string path;
  GzipBudget budget;
  size_t limit = 0;  // one byte past the budget, for a gzip file
  size_t read = 0;
  bool done = false;
};

FileStream::FileStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileStream::~FileStream() = default;

StatusOr<std::unique_ptr<FileStream>> FileStream::Open(
    const std::string& path, const GzipBudget& given_budget) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(path + ": " + std::strerror(errno));
  }
  RT_RETURN_IF_ERROR(RefuseDevice(path, st));
  RT_ASSIGN_OR_RETURN(GzFile f, OpenGz(path));
  const bool gzip = gzdirect(f.get()) == 0;
  auto impl = std::make_unique<Impl>(std::move(f), path);
  RT_ASSIGN_OR_RETURN(
      impl->budget,
      ResolveBudget(given_budget, static_cast<uint64_t>(st.st_size)));
  impl->limit =
      (gzip || !S_ISREG(st.st_mode)) &&
              impl->budget.max_bytes < std::numeric_limits<size_t>::max()
          ? static_cast<size_t>(impl->budget.max_bytes) + 1
          : std::numeric_limits<size_t>::max();
  std::unique_ptr<FileStream> stream(new FileStream(std::move(impl)));
  stream->size_hint_ = gzip ? GzipSizeHint(path, st)
                            : static_cast<uint64_t>(st.st_size);
  return stream;
}

StatusOr<size_t> FileStream::Read(char* out, size_t max_bytes) {
  Impl& s = *impl_;
  if (s.done || max_bytes == 0) return size_t{0};
  if (s.read >= s.limit) return OverBudget(s.path, s.budget);
  const size_t want =
      std::min<size_t>({max_bytes, s.limit - s.read, size_t{1} << 30});
  const int n = gzread(s.file.get(), out, static_cast<unsigned>(want));
  if (n < 0) {
    RT_RETURN_IF_ERROR(CheckEnd(s.file.get(), s.path));
    return Corrupt(s.path + ": read error");
  }
  if (n == 0) {
    RT_RETURN_IF_ERROR(CheckEnd(s.file.get(), s.path));
    s.done = true;
    return size_t{0};
  }
  s.read += static_cast<size_t>(n);
  // The byte past the budget is never handed out: the budget's error
  // comes first.
  if (s.read >= s.limit) return OverBudget(s.path, s.budget);
  return static_cast<size_t>(n);
}

std::string RenamePath(std::string message, const std::string& from,
                       const std::string& to) {
  if (from.empty() || from == to) return message;
  for (size_t at = message.find(from); at != std::string::npos;
       at = message.find(from, at + to.size())) {
    message.replace(at, from.size(), to);
  }
  return message;
}

}  // namespace rooftrace
