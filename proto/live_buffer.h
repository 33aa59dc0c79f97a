// A producer's live buffer: the file mapping (MAP_SHARED) that holds its
// record queue, the strings it interned and its record counts, so that what
// an application thread recorded survives the producer's abrupt end
// (`_exit()`, SIGKILL, a crash). The collector (or `collect --ingest` of a
// spool) reads it once the producer is gone and re-encodes the records that
// never reached the stream (ReadLiveBuffer, EncodeRecovered).
//
// The contract between the two processes:
// - The file is `…/rooftrace-<host>-<pid>-<start_unix_ns>.live`, 0600, in
//   the producer's spool folder; the Hello names it (Hello.live_buffer).
// - Its owner holds a POSIX write lock (fcntl F_SETLK) on it while it
//   lives. Those locks belong to the process, are not inherited by fork()
//   and go away when it dies, however it dies: a reader that finds the
//   lock free knows nobody will write the file again.
// - Slots follow the queue's protocol (libinject/record_queue.h): slot i
//   holds the record of position p (p % capacity == i) once its sequence
//   is p + 1 (stored as sequence - i, so zeros are a fresh queue); the sender frees it (sequence p + capacity) only after the
//   frames carrying it were written. A slot whose sequence says
//   "committed" is therefore a record the stream may not have.
// - Before it writes a pass, the sender states which positions the pass
//   holds and the first packet sequence of each record type (`inflight_*`),
//   so a reader that knows the last sequence it received skips exactly the
//   records that arrived.
// - Layout is checked, not negotiated: magic, version and the sizes of the
//   header, a slot and a record must match the reader's.
//
// Writer side: one LiveBuffer per producer, created before the sender
// starts; application threads write slots and counts, the interner appends
// strings under its own lock, the sender writes `inflight_*`. Reader side:
// any process, read-only mapping.
#ifndef ROOFTRACE_PROTO_LIVE_BUFFER_H_
#define ROOFTRACE_PROTO_LIVE_BUFFER_H_

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "proto/capture_records.h"

namespace rooftrace::inject {

inline constexpr uint64_t kLiveMagic = 0x3130564C54464F52ull;  // "ROFTLV01"
inline constexpr uint32_t kLiveVersion = 1;
// Record kinds counted in the header: index = wire::enums::RecordKind.
inline constexpr int kLiveRecordKinds = 9;
// Record types with slots (RecordType values 1..4).
inline constexpr int kLiveRecordTypes = 5;

template <typename T>
struct SequencedSlot {
  std::atomic<uint64_t> seq;
  T value;
};
using LiveSlot = SequencedSlot<CapturedRecord>;

struct LiveCounts {
  std::array<std::atomic<uint64_t>, kLiveRecordKinds> seen;
  std::array<std::atomic<uint64_t>, kLiveRecordKinds> dropped;
  std::array<std::atomic<uint64_t>, kLiveRecordKinds> filtered;
};

struct LiveHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t header_bytes;  // sizeof(LiveHeader)
  uint32_t slot_bytes;    // sizeof(LiveSlot)
  uint32_t record_bytes;  // sizeof(CapturedRecord)
  uint64_t capacity;      // slots, a power of two
  uint64_t slots_offset;
  uint64_t strings_offset;
  uint64_t strings_capacity;  // bytes
  // The producer's Hello, framed (sequence 1), so a reader can rebuild the
  // session of a producer whose stream never reached anyone.
  uint64_t hello_offset;
  uint64_t hello_bytes;
  uint32_t pid;
  uint32_t reserved;
  uint64_t start_unix_ns;
  // Bytes of string entries written (each: u64 iid, u32 length, u32 0,
  // the bytes, zero padding to 8), published with release order.
  alignas(64) std::atomic<uint64_t> strings_used;
  std::atomic<uint64_t> strings_not_kept;  // the area was full
  // The sender's pass being written: positions [inflight_from,
  // inflight_to), and per RecordType the sequence of the first packet of
  // that type (0: none) with `inflight_batch` records per packet.
  alignas(64) std::atomic<uint64_t> inflight_from;
  std::atomic<uint64_t> inflight_to;
  std::atomic<uint64_t> inflight_batch;
  std::array<std::atomic<uint64_t>, kLiveRecordTypes> inflight_first_seq;
  // Application threads' counts (Producer::seen_ and friends live here).
  alignas(64) LiveCounts counts;
};

// The writer: creates and maps the file, holds its lock. Never unmapped
// while the process runs (application threads may still hold slots).
class LiveBuffer {
 public:
  // A file at `path` (created: never an existing file or through a link),
  // sized for `capacity` slots (a power of two) and `strings_bytes` of
  // strings. Errors name the path.
  static StatusOr<std::unique_ptr<LiveBuffer>> Create(
      const std::string& path, uint64_t capacity, uint64_t strings_bytes,
      std::string_view hello_frame, uint32_t pid, uint64_t start_unix_ns);
  // The same layout in anonymous memory: nothing survives the process (no
  // folder to write in), but the queue and the counts work the same.
  static StatusOr<std::unique_ptr<LiveBuffer>> CreateAnonymous(
      uint64_t capacity, uint64_t strings_bytes, uint32_t pid,
      uint64_t start_unix_ns);
  ~LiveBuffer();
  LiveBuffer(const LiveBuffer&) = delete;
  LiveBuffer& operator=(const LiveBuffer&) = delete;

  LiveHeader* header() { return header_; }
  LiveSlot* slots() { return slots_; }
  uint64_t capacity() const { return header_->capacity; }
  // "" for an anonymous buffer.
  const std::string& path() const { return path_; }
  // Appends one string definition; false when the area is full (counted in
  // the header). One writer at a time (the interner's lock).
  bool AppendString(uint64_t iid, std::string_view text);
  // The stream ended properly: nothing is left to recover. Removes the file.
  void Retire();

  // Bytes a buffer of this size maps (for the memory budget).
  static uint64_t MappedBytes(uint64_t capacity, uint64_t strings_bytes,
                              uint64_t hello_bytes);

 private:
  LiveBuffer() = default;
  static StatusOr<std::unique_ptr<LiveBuffer>> Map(int fd, std::string path,
                                                   uint64_t capacity,
                                                   uint64_t strings_bytes,
                                                   std::string_view hello_frame,
                                                   uint32_t pid,
                                                   uint64_t start_unix_ns);
  std::string path_;
  int fd_ = -1;
  void* base_ = nullptr;
  size_t bytes_ = 0;
  LiveHeader* header_ = nullptr;
  LiveSlot* slots_ = nullptr;
  char* strings_ = nullptr;
};

// What a reader found in a dead producer's live buffer.
struct LiveContents {
  uint32_t pid = 0;
  uint64_t start_unix_ns = 0;
  uint64_t capacity = 0;  // slots of its queue
  std::string hello_frame;
  // Committed records in position order.
  std::vector<std::pair<uint64_t, CapturedRecord>> records;
  std::vector<std::pair<uint64_t, std::string>> strings;
  uint64_t strings_not_kept = 0;
  uint64_t inflight_from = 0, inflight_to = 0, inflight_batch = 0;
  std::array<uint64_t, kLiveRecordTypes> inflight_first_seq{};
  std::array<uint64_t, kLiveRecordKinds> seen{}, dropped{}, filtered{};
};

// kStopped: the stop flag given to ReadLiveBuffer was set while it read;
// nothing was kept (the file is untouched, for the next reader).
enum class LiveReadResult { kRead, kOwnerAlive, kStopped };

// The largest buffer a producer makes (ROOFTRACE_QUEUE_RECORDS and
// ROOFTRACE_BUFFER_MB at their limits, libinject/config.cc, with room to
// spare): a header claiming more is not a producer's.
inline constexpr uint64_t kMaxLiveCapacity = 1ull << 26;
inline constexpr uint64_t kMaxLiveStringBytes = 64ull << 20;
inline constexpr uint64_t kMaxLiveHelloBytes = 64ull << 20;  // a frame's

// Judges the live buffer at `path` by its header alone, without a pass
// over the file whatever size it has (a sparse 1 TiB file is refused at
// once): a regular file owned by `owner_uid`, reached without a link,
// whose header has this build's layout, sizes within a producer's limits
// and describes the file's size exactly (a producer sizes it so).
// `*result` is kOwnerAlive while its producer still holds it. Errors name
// the file and what is wrong with it.
Status CheckLiveBuffer(const std::string& path, uid_t owner_uid,
                       LiveReadResult* result);

// Reads the live buffer at `path` if its owner is gone (`*result`
// kOwnerAlive and nothing read otherwise). The file must be a regular file
// owned by `owner_uid`, reached without a link, whose header matches this
// build's layout and `pid` / `start_unix_ns` (the Hello's; pid 0: any, for
// a buffer found without its stream). Errors name the file and what is
// wrong with it.
// `stop` (may be null), looked at every 64 Ki slots: once set, reading
// ends with `*result` kStopped (a buffer of millions of records takes
// seconds to read; a stop signal must not wait for it).
Status ReadLiveBuffer(const std::string& path, uid_t owner_uid, uint32_t pid,
                      uint64_t start_unix_ns, LiveContents* out,
                      LiveReadResult* result,
                      const std::atomic<bool>* stop = nullptr);

// Records recovered per RecordType, and those skipped because the stream
// already had them.
struct RecoveryCounts {
  std::array<uint64_t, kLiveRecordTypes> recovered{};
  uint64_t already_received = 0;
  // The stop flag ended the encoding: `*frames` holds only part of it.
  bool stopped = false;
  uint64_t total() const {
    uint64_t n = 0;
    for (uint64_t v : recovered) n += v;
    return n;
  }
};

// Encodes the records of `live` the stream never carried as framed packets
// appended to `*frames`: `received_through` is the highest packet sequence
// the reader has from this producer, `next_sequence` the first sequence to
// use. The first packet defines every string the buffer kept.
// `stop` (may be null) is looked at every 64 Ki records and between
// record types; once set, encoding ends with `stopped`.
RecoveryCounts EncodeRecovered(const LiveContents& live,
                               uint64_t received_through,
                               uint64_t next_sequence, size_t max_batch,
                               std::string* frames,
                               const std::atomic<bool>* stop = nullptr);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_PROTO_LIVE_BUFFER_H_
