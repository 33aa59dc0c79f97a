#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace rooftrace {
namespace {

// Distinguishes the temporary files of concurrent calls in one process.
std::atomic<uint64_t> g_temp_counter{0};

std::string Why(int err) { return std::strerror(err); }

Status CannotWrite(const std::string& path, int err) {
  return InvalidArgument(path + ": cannot write (" + Why(err) +
                         "): check that the folder exists and is writable");
}

Status WriteFailed(const std::string& path, int err) {
  return InvalidArgument(path + ": write failed (" + Why(err) +
                         "): check free space on its disk");
}

Status WriteAll(int fd, std::string_view text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return WriteFailed(path, errno);
    }
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

// For a path that is not a regular file (a device, a FIFO): it cannot be
// renamed over, so it is written like any stream.
Status WriteInPlace(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return CannotWrite(path, errno);
  Status s = WriteAll(fd, text, path);
  if (::close(fd) != 0 && s.ok()) s = WriteFailed(path, errno);
  return s;
}

// Makes the rename itself durable. Best effort: some file systems refuse
// fsync on a folder, and the file is in place either way.
void SyncFolderOf(const std::string& path) {
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Status WriteTextFile(const std::string& path, std::string_view text) {
  if (path.empty()) {
    return InvalidArgument("cannot write a file with an empty name: name it");
  }
  // A link is followed so that the file it names is replaced, not the link.
  std::string target = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const std::filesystem::path resolved =
        std::filesystem::weakly_canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      return InvalidArgument(path +
                             ": cannot write (it is a folder): name a "
                             "file inside it");
    }
    return WriteInPlace(path, text);
  }

  // O_EXCL: never write into a file someone else created; a name left by a
  // crashed process with the same pid is skipped.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 64 && fd < 0; ++attempt) {
    temp = target + ".tmp." + std::to_string(::getpid()) + "." +
           std::to_string(g_temp_counter.fetch_add(1));
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return CannotWrite(path, errno);

  Status s = WriteAll(fd, text, path);
  // fsync before rename: otherwise a crash can leave the new name pointing
  // at an empty file on file systems that reorder the two.
  if (s.ok() && ::fsync(fd) != 0) s = WriteFailed(path, errno);
  if (::close(fd) != 0 && s.ok()) s = WriteFailed(path, errno);
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return InvalidArgument(path + ": cannot replace the file (" + Why(err) +
                           "): check that its folder is writable");
  }
  SyncFolderOf(target);
  return OkStatus();
}

StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                      uint64_t max_bytes,
                                      const std::string& what,
                                      const std::string& kind) {
  const std::string name = what.empty() ? path : what + " " + path;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return NotFound(name + ": cannot open (" + Why(errno) +
                    "): check the path");
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    const char* is = S_ISDIR(st.st_mode)                             ? "a folder"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                     : S_ISSOCK(st.st_mode)                        ? "a socket"
                                                                   : "not a file";
    return InvalidArgument(name + ": " + is + ", not a file: give a file (or "
                           "a pipe) that holds " + kind);
  }
  auto too_big = [&] {
    return InvalidArgument(
        name + ": larger than " + std::to_string(max_bytes) +
        " bytes, more than " + kind + " holds: give the right file");
  };
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
    return too_big();
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return InvalidArgument(name + ": cannot open it (" + Why(errno) +
                           "): check its permissions");
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return InvalidArgument(name + ": cannot read it (" + Why(err) +
                             "): give a readable file");
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    // A file that grew, or a stream: stop one read past the cap.
    if (text.size() > max_bytes) {
      close(fd);
      return too_big();
    }
  }
  close(fd);
  return text;
}

}  // namespace rooftrace
