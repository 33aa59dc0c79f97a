#include "proto/live_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "proto/field_numbers.h"
#include "proto/wire_encoder.h"

namespace rooftrace::inject {

namespace {

static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "the live buffer is shared between processes: its atomics "
              "must be lock-free");
static_assert(sizeof(LiveSlot) % alignof(LiveSlot) == 0);

constexpr uint64_t kPage = 4096;

uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

std::string Errno(int err) { return std::strerror(err); }

uint64_t SlotsOffset() { return RoundUp(sizeof(LiveHeader), kPage); }

uint64_t StringsOffset(uint64_t capacity) {
  return RoundUp(SlotsOffset() + capacity * sizeof(LiveSlot), kPage);
}

uint64_t HelloOffset(uint64_t capacity, uint64_t strings_bytes) {
  return RoundUp(StringsOffset(capacity) + strings_bytes, 8);
}

}  // namespace


uint64_t LiveBuffer::MappedBytes(uint64_t capacity, uint64_t strings_bytes,
                                 uint64_t hello_bytes) {
  return RoundUp(HelloOffset(capacity, strings_bytes) + hello_bytes, kPage);
}

StatusOr<std::unique_ptr<LiveBuffer>> LiveBuffer::Create(
    const std::string& path, uint64_t capacity, uint64_t strings_bytes,
    std::string_view hello_frame, uint32_t pid, uint64_t start_unix_ns) {
  const int fd = open(path.c_str(),
                      O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return Unavailable("live buffer " + path +
                       " cannot be created: " + Errno(errno));
  }
  const uint64_t bytes =
      MappedBytes(capacity, strings_bytes, hello_frame.size());
  // Sparse: pages are taken as the queue reaches them.
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    close(fd);
    unlink(path.c_str());
    return Unavailable("live buffer " + path + " cannot be sized: " +
                       Errno(err));
  }
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (fcntl(fd, F_SETLK, &lock) != 0) {
    const int err = errno;
    close(fd);
    unlink(path.c_str());
    return Unavailable("live buffer " + path + " cannot be locked: " +
                       Errno(err));
  }
  auto buffer = Map(fd, path, capacity, strings_bytes, hello_frame, pid,
                    start_unix_ns);
  if (!buffer.ok()) {
    close(fd);
    unlink(path.c_str());
  }
  return buffer;
}

StatusOr<std::unique_ptr<LiveBuffer>> LiveBuffer::CreateAnonymous(
    uint64_t capacity, uint64_t strings_bytes, uint32_t pid,
    uint64_t start_unix_ns) {
  return Map(-1, "", capacity, strings_bytes, {}, pid, start_unix_ns);
}

StatusOr<std::unique_ptr<LiveBuffer>> LiveBuffer::Map(
    int fd, std::string path, uint64_t capacity, uint64_t strings_bytes,
    std::string_view hello_frame, uint32_t pid, uint64_t start_unix_ns) {
  const uint64_t bytes =
      MappedBytes(capacity, strings_bytes, hello_frame.size());
  void* base =
      fd >= 0 ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
              : mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    return Unavailable("live buffer " + (path.empty() ? "(memory)" : path) +
                       ": cannot map " + std::to_string(bytes) +
                       " bytes: " + Errno(errno));
  }
  // A forked child starts a session of its own: the parent's buffer is not
  // its to write (and its pages are not copied).
  (void)madvise(base, bytes, MADV_DONTFORK);
  std::unique_ptr<LiveBuffer> b(new LiveBuffer());
  b->path_ = std::move(path);
  b->fd_ = fd;
  b->base_ = base;
  b->bytes_ = bytes;
  char* p = static_cast<char*>(base);
  // The file is new and zero-filled: constructing the atomics in place
  // over zeros leaves them at zero.
  b->header_ = new (p) LiveHeader();
  LiveHeader* h = b->header_;
  h->magic = kLiveMagic;
  h->version = kLiveVersion;
  h->header_bytes = sizeof(LiveHeader);
  h->slot_bytes = sizeof(LiveSlot);
  h->record_bytes = sizeof(CapturedRecord);
  h->capacity = capacity;
  h->slots_offset = SlotsOffset();
  h->strings_offset = StringsOffset(capacity);
  h->strings_capacity = strings_bytes;
  h->hello_offset = HelloOffset(capacity, strings_bytes);
  h->hello_bytes = hello_frame.size();
  if (!hello_frame.empty()) {
    std::memcpy(p + h->hello_offset, hello_frame.data(), hello_frame.size());
  }
  h->pid = pid;
  h->start_unix_ns = start_unix_ns;
  b->slots_ = reinterpret_cast<LiveSlot*>(p + h->slots_offset);
  b->strings_ = p + h->strings_offset;
  return b;
}

LiveBuffer::~LiveBuffer() {
  if (base_ != nullptr) munmap(base_, bytes_);
  if (fd_ >= 0) close(fd_);
}

bool LiveBuffer::AppendString(uint64_t iid, std::string_view text) {
  const uint64_t used = header_->strings_used.load(std::memory_order_relaxed);
  const uint64_t entry = RoundUp(16 + text.size(), 8);
  if (used + entry > header_->strings_capacity) {
    header_->strings_not_kept.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  char* at = strings_ + used;
  const uint32_t len = static_cast<uint32_t>(text.size());
  std::memcpy(at, &iid, 8);
  std::memcpy(at + 8, &len, 4);
  std::memcpy(at + 16, text.data(), text.size());
  header_->strings_used.store(used + entry, std::memory_order_release);
  return true;
}

void LiveBuffer::Retire() {
  if (path_.empty()) return;
  unlink(path_.c_str());
  path_.clear();
}

// ------------------------------------------------------------------ reader

namespace {

// The file, mapped read-only for the reader's lifetime.
class Mapping {
 public:
  ~Mapping() {
    if (base_ != nullptr) munmap(base_, bytes_);
  }
  Status Open(int fd, size_t bytes) {
    base_ = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (base_ == MAP_FAILED) {
      base_ = nullptr;
      return Unavailable("cannot map it: " + Errno(errno));
    }
    bytes_ = bytes;
    return OkStatus();
  }
  const char* data() const { return static_cast<const char*>(base_); }

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
};

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Status CheckHeader(const LiveHeader& h, uint64_t file_bytes, uint32_t pid,
                   uint64_t start_unix_ns) {
  if (h.magic != kLiveMagic) return Corrupt("not a rooftrace live buffer");
  if (h.version != kLiveVersion || h.header_bytes != sizeof(LiveHeader) ||
      h.slot_bytes != sizeof(LiveSlot) ||
      h.record_bytes != sizeof(CapturedRecord)) {
    return FailedPrecondition(
        "written by another rooftrace build (layout version " +
        std::to_string(h.version) + ", slot " + std::to_string(h.slot_bytes) +
        " bytes; this one reads version " + std::to_string(kLiveVersion) +
        ", slot " + std::to_string(sizeof(LiveSlot)) + " bytes)");
  }
  const uint64_t cap = h.capacity;
  // Bounded first, so that no size below can overflow; then the exact
  // size: a producer sizes its file to its header (a larger file, however
  // sparse, would be passed over for nothing).
  if (cap < 2 || (cap & (cap - 1)) != 0 || cap > kMaxLiveCapacity ||
      h.strings_capacity > kMaxLiveStringBytes ||
      h.hello_bytes > kMaxLiveHelloBytes ||
      h.slots_offset != SlotsOffset() ||
      h.strings_offset != StringsOffset(cap) ||
      h.hello_offset != HelloOffset(cap, h.strings_capacity) ||
      LiveBuffer::MappedBytes(cap, h.strings_capacity, h.hello_bytes) !=
          file_bytes) {
    return Corrupt("its header does not describe its size (" +
                   std::to_string(file_bytes) +
                   " bytes): damaged, or not written by a rooftrace "
                   "producer");
  }
  if (pid != 0 && (h.pid != pid || h.start_unix_ns != start_unix_ns)) {
    return FailedPrecondition("it belongs to another process (pid " +
                              std::to_string(h.pid) + ", not " +
                              std::to_string(pid) + ")");
  }
  return OkStatus();
}

void ReadStrings(const LiveHeader& h, const char* strings, LiveContents* out) {
  const uint64_t used = std::min(
      h.strings_used.load(std::memory_order_acquire), h.strings_capacity);
  uint64_t at = 0;
  while (at + 16 <= used) {
    uint64_t iid = 0;
    uint32_t len = 0;
    std::memcpy(&iid, strings + at, 8);
    std::memcpy(&len, strings + at + 8, 4);
    if (at + 16 + len > used) break;  // a torn entry: its end never came
    out->strings.emplace_back(iid, std::string(strings + at + 16, len));
    at += RoundUp(16 + uint64_t{len}, 8);
  }
  out->strings_not_kept = h.strings_not_kept.load(std::memory_order_relaxed);
}

// The checks ReadLiveBuffer and CheckLiveBuffer share, on the open file
// `fd`: what it is, its owner, its lock (*result kOwnerAlive and nothing
// more checked while held) and its header, read with pread() (nothing is
// mapped or passed over). `*file_bytes`: its size.
Status CheckOpenLive(int fd, uid_t owner_uid, uint32_t pid,
                     uint64_t start_unix_ns, uint64_t* file_bytes,
                     LiveReadResult* result) {
  *result = LiveReadResult::kOwnerAlive;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return FailedPrecondition("not a regular file");
  }
  if (st.st_uid != owner_uid) {
    return FailedPrecondition("owned by uid " + std::to_string(st.st_uid) +
                              ", not by the producer's");
  }
  if (static_cast<uint64_t>(st.st_size) < SlotsOffset()) {
    return Corrupt("too short for a header");
  }
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (fcntl(fd, F_GETLK, &lock) != 0) {
    return Unavailable("cannot query its lock: " + Errno(errno));
  }
  if (lock.l_type != F_UNLCK) return OkStatus();  // its producer still runs
  *file_bytes = static_cast<uint64_t>(st.st_size);
  alignas(LiveHeader) unsigned char bytes[sizeof(LiveHeader)];
  if (pread(fd, bytes, sizeof bytes, 0) !=
      static_cast<ssize_t>(sizeof bytes)) {
    return Corrupt("cannot read its header: " + Errno(errno));
  }
  RT_RETURN_IF_ERROR(CheckHeader(*reinterpret_cast<const LiveHeader*>(bytes),
                                 *file_bytes, pid, start_unix_ns));
  *result = LiveReadResult::kRead;
  return OkStatus();
}

}  // namespace

Status CheckLiveBuffer(const std::string& path, uid_t owner_uid,
                       LiveReadResult* result) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  uint64_t file_bytes = 0;
  Status s = fd.get() < 0
                 ? NotFound("cannot open it: " + Errno(errno))
                 : CheckOpenLive(fd.get(), owner_uid, 0, 0, &file_bytes,
                                 result);
  if (s.ok()) return s;
  return Status(s.code(), "live buffer " + path + ": " + s.message());
}

Status ReadLiveBuffer(const std::string& path, uid_t owner_uid, uint32_t pid,
                      uint64_t start_unix_ns, LiveContents* out,
                      LiveReadResult* result,
                      const std::atomic<bool>* stop) {
  *result = LiveReadResult::kOwnerAlive;
  const auto fail = [&path](const Status& s) {
    return Status(s.code(), "live buffer " + path + ": " + s.message());
  };
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) return fail(NotFound("cannot open it: " + Errno(errno)));
  uint64_t file_bytes = 0;
  LiveReadResult state = LiveReadResult::kOwnerAlive;
  if (Status s = CheckOpenLive(fd.get(), owner_uid, pid, start_unix_ns,
                               &file_bytes, &state);
      !s.ok()) {
    return fail(s);
  }
  if (state != LiveReadResult::kRead) return OkStatus();  // still running
  Mapping map;
  if (Status s = map.Open(fd.get(), file_bytes); !s.ok()) return fail(s);
  const auto* h = reinterpret_cast<const LiveHeader*>(map.data());
  // Checked again on the mapping: the file is the producer's, whose
  // process is gone, but another may have rewritten it since.
  if (Status s = CheckHeader(*h, file_bytes, pid, start_unix_ns); !s.ok()) {
    return fail(s);
  }
  *out = LiveContents();
  out->pid = h->pid;
  out->start_unix_ns = h->start_unix_ns;
  out->capacity = h->capacity;
  out->hello_frame.assign(map.data() + h->hello_offset, h->hello_bytes);
  const uint64_t cap = h->capacity;
  const auto* slots =
      reinterpret_cast<const LiveSlot*>(map.data() + h->slots_offset);
  // Slots store their sequence minus their index (zero: fresh). Committed:
  // the sequence is position + 1 for a position of this slot. Free slots
  // hold a position of this slot itself (seq % cap == i).
  const auto committed = [&](uint64_t i, uint64_t* seq) {
    *seq = slots[i].seq.load(std::memory_order_acquire) + i;
    return *seq != 0 && ((*seq - 1) & (cap - 1)) == i;
  };
  const auto stopped = [stop](uint64_t i) {
    return stop != nullptr && (i & 0xffff) == 0 && stop->load();
  };
  // Counted first, so that the records (up to 2^26, ~270 bytes each) are
  // copied once into a vector of their size: growing it by doubling moved
  // a 3 M-record buffer's 800 MB about twice over.
  uint64_t count = 0, seq = 0;
  for (uint64_t i = 0; i < cap; ++i) {
    if (stopped(i)) {
      *result = LiveReadResult::kStopped;
      return OkStatus();
    }
    if (committed(i, &seq)) ++count;
  }
  out->records.reserve(count);
  for (uint64_t i = 0; i < cap; ++i) {
    if (stopped(i)) {
      *out = LiveContents();
      *result = LiveReadResult::kStopped;
      return OkStatus();
    }
    if (!committed(i, &seq)) continue;
    const CapturedRecord& r = slots[i].value;
    const auto type = static_cast<uint32_t>(r.type);
    if (type == 0 || type >= kLiveRecordTypes) continue;
    out->records.emplace_back(seq - 1, r);
  }
  // Slot order is position order but where the queue wrapped: the records
  // are then two sorted runs, merged in place (a sort moved every
  // 270-byte record about log2(n) times).
  const auto by_position = [](const auto& a, const auto& b) {
    return a.first < b.first;
  };
  const auto wrap = std::is_sorted_until(out->records.begin(),
                                         out->records.end(), by_position);
  if (wrap != out->records.end()) {
    if (std::is_sorted(wrap, out->records.end(), by_position)) {
      std::inplace_merge(out->records.begin(), wrap, out->records.end(),
                         by_position);
    } else {
      std::sort(out->records.begin(), out->records.end(), by_position);
    }
  }
  ReadStrings(*h, map.data() + h->strings_offset, out);
  out->inflight_from = h->inflight_from.load(std::memory_order_acquire);
  out->inflight_to = h->inflight_to.load(std::memory_order_acquire);
  out->inflight_batch = h->inflight_batch.load(std::memory_order_acquire);
  for (int t = 0; t < kLiveRecordTypes; ++t) {
    out->inflight_first_seq[t] =
        h->inflight_first_seq[t].load(std::memory_order_acquire);
  }
  for (int k = 0; k < kLiveRecordKinds; ++k) {
    out->seen[k] = h->counts.seen[k].load(std::memory_order_relaxed);
    out->dropped[k] = h->counts.dropped[k].load(std::memory_order_relaxed);
    out->filtered[k] = h->counts.filtered[k].load(std::memory_order_relaxed);
  }
  *result = LiveReadResult::kRead;
  return OkStatus();
}

// ----------------------------------------------------------------- re-encode

namespace {

namespace f = wire::fields;

struct Recovered {
  std::vector<LaunchRecord> launches;
  std::vector<GemmRecord> gemms;
  std::vector<NvtxRangeRecord> ranges;
  std::vector<NvtxMarkRecord> marks;
};

}  // namespace

RecoveryCounts EncodeRecovered(const LiveContents& live,
                               uint64_t received_through,
                               uint64_t next_sequence, size_t max_batch,
                               std::string* frames,
                               const std::atomic<bool>* stop) {
  RecoveryCounts counts;
  const auto stopped = [&] {
    counts.stopped = stop != nullptr && stop->load();
    return counts.stopped;
  };
  uint64_t looked = 0;
  Recovered rec;
  // Index of each record within its type in the in-flight pass: the pass
  // encoded the type's records in position order, `inflight_batch` per
  // packet, from `inflight_first_seq[type]`.
  std::array<uint64_t, kLiveRecordTypes> index_in_pass{};
  const uint64_t batch = std::max<uint64_t>(1, live.inflight_batch);
  for (const auto& [pos, r] : live.records) {
    if ((++looked & 0xffff) == 0 && stopped()) return counts;
    const auto type = static_cast<uint32_t>(r.type);
    if (pos >= live.inflight_from && pos < live.inflight_to) {
      const uint64_t first = live.inflight_first_seq[type];
      const uint64_t j = index_in_pass[type]++;
      if (first != 0 && first + j / batch <= received_through) {
        ++counts.already_received;
        continue;
      }
    }
    ++counts.recovered[type];
    switch (r.type) {
      case RecordType::kLaunch:
        rec.launches.push_back(r.launch);
        break;
      case RecordType::kGemm:
        rec.gemms.push_back(r.gemm);
        break;
      case RecordType::kNvtxRange:
        rec.ranges.push_back(r.range);
        break;
      case RecordType::kNvtxMark:
        rec.marks.push_back(r.mark);
        break;
      default:
        break;
    }
  }
  std::vector<StringDefinition> defs;
  for (const auto& [iid, text] : live.strings) defs.emplace_back(iid, text);
  PacketEncoder enc;
  enc.set_next_sequence(next_sequence);
  const size_t n = std::max<size_t>(1, max_batch);
  if (stopped()) return counts;
  EncodeInBatches(enc, rec.launches, n, f::packet::kKernelBatch,
                f::kernel_batch::kLaunches, EncodeLaunch, 0, &defs, frames);
  if (stopped()) return counts;
  EncodeInBatches(enc, rec.gemms, n, f::packet::kGemmBatch, f::gemm_batch::kGemms,
                  EncodeGemm, 0, &defs, frames);
  if (stopped()) return counts;
  EncodeInBatches(enc, rec.ranges, n, f::packet::kNvtxBatch,
                f::nvtx_batch::kRanges, EncodeNvtxRange, 0, &defs, frames);
  if (stopped()) return counts;
  EncodeInBatches(enc, rec.marks, n, f::packet::kNvtxBatch,
                f::nvtx_batch::kMarks, EncodeNvtxMark, 0, &defs, frames);
  return counts;
}

}  // namespace rooftrace::inject
