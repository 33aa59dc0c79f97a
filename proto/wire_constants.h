// Constants of the wire contract shared by every producer and reader.
// Header-only, no dependencies: libinject's encoder includes it too.
#ifndef ROOFTRACE_PROTO_WIRE_CONSTANTS_H_
#define ROOFTRACE_PROTO_WIRE_CONSTANTS_H_

#include <cstddef>
#include <cstdint>

namespace rooftrace::wire {

// "RFTRACE1" read as a little-endian 64-bit integer; Hello.magic.
inline constexpr uint64_t kTraceMagic = 0x3145434152544652ULL;

// Bumped only for changes an older reader cannot skip (never so far: fields
// only grow). A collector refuses a producer whose version is newer than its
// own with an explicit HelloReply.
inline constexpr uint32_t kProtocolVersion = 1;

// The one tag byte that starts every frame: field 1 (Trace.packet),
// wire type 2 (length-delimited).
inline constexpr uint8_t kPacketTag = 0x0A;

// Hard limit on one frame's payload. Producers batch well below this
// (libinject's batches are a few hundred KiB); anything larger is corruption.
inline constexpr size_t kMaxFrameBytes = 64u << 20;

// Longest varint for a 64-bit value.
inline constexpr size_t kMaxVarintBytes = 10;

// The NVTX domain of the ops route's operator ranges (libinject/ops_route.h):
// each range is one torch operator, named "NAME<TAB>{ARGS}" where ARGS is a
// JSON object with a Kineto cpu_op's record_shapes fields ("Input Dims",
// "Input type", "Input Strides", "Concrete Inputs") and, for a
// record_function range, "Scope": "user". Read by sources/rft/live_ops.h.
inline constexpr char kTorchOpsDomain[] = "rooftrace.torch_ops";

}  // namespace rooftrace::wire

#endif  // ROOFTRACE_PROTO_WIRE_CONSTANTS_H_
