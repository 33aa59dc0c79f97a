// libFuzzer target for everything the collector does with untrusted bytes:
// the frame reader (fed in chunks of fuzzer-chosen sizes, as a socket would
// deliver them), the hand-written packet decoder (checked packet by packet
// against libprotobuf's parser) and session (Hello checks, interned
// strings, every batch kind, restarts on a second Hello), and the join of
// what was accepted (correlation ids, NVTX parent cycles, GEMM shapes with
// extreme dimensions, steps and phases), and the windowed storing of long
// sessions (a settled prefix planned and dropped every few packets).
//
// Built only with clang and ROOFTRACE_BUILD_FUZZERS=ON (docs/collector.md):
//   collector_stream_fuzzer -max_total_time=60 CORPUS_DIR
// Input layout: byte 0 picks the chunk size (1..256 bytes, 0: all at once),
// the rest is the stream. A well-formed seed is written by
//   rooftrace_example_trace -o seed.rft --steps 2 --layers 1
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <memory>
#include <string_view>

#include "pipeline/flush.h"
#include "pipeline/join.h"
#include "pipeline/session.h"
#include "sources/rft/testing/session_diff.h"
#include "proto/framing.h"

namespace {

// Small frame limit: the fuzzer must not spend its memory on one frame.
constexpr size_t kFuzzMaxFrameBytes = 1 << 20;

void JoinAndDrop(rooftrace::Session* session, const rooftrace::Roofs& roofs) {
  if (!session->started()) return;
  const rooftrace::JoinedSession joined = rooftrace::Join(session, roofs);
  // Every joined kernel must point at a name and a step the join produced.
  for (const auto& k : joined.kernels) {
    if (k.name < 0 || k.name >= static_cast<int>(joined.names.size())) {
      __builtin_trap();
    }
    if (k.step >= static_cast<int>(joined.steps.size())) __builtin_trap();
  }
}

// What RunRecorder::FlushSettled does, minus the store: join what is held,
// plan the settled prefix, drop it.
void FlushWindow(rooftrace::Session* session, const rooftrace::Roofs& roofs) {
  if (!session->started() || session->RecordCount() < 32) return;
  const rooftrace::ImportStats saved = session->stats();
  const rooftrace::JoinedSession joined = rooftrace::Join(session, roofs);
  session->stats() = saved;
  const rooftrace::FlushPlan plan = rooftrace::PlanFlush(*session, joined);
  if (plan.last_step >= static_cast<int>(joined.steps.size())) {
    __builtin_trap();
  }
  if (plan.last_step < 0) return;
  if (plan.drop.kernels.size() != session->kernels().size() ||
      plan.drop.launches.size() != session->launches().size() ||
      plan.scope.gemms.size() != joined.gemms.size() ||
      plan.scope.nvtx.size() != joined.nvtx.size()) {
    __builtin_trap();
  }
  session->flushed().last_step_tokens =
      joined.steps[plan.last_step].token_count;
  session->DropRecords(plan.drop);
}

std::unique_ptr<rooftrace::WireSession> NewReferenceSession() {
  auto s = std::make_unique<rooftrace::WireSession>("fuzz");
  s->UseReferenceDecoder();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const rooftrace::Roofs roofs =
      rooftrace::RoofsFromDatasheet("NVIDIA H100 80GB HBM3");
  const size_t chunk = data[0] == 0 ? size : data[0];
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const size_t n = size - 1;

  rooftrace::wire::FrameReader reader(kFuzzMaxFrameBytes);
  auto session = std::make_unique<rooftrace::WireSession>("fuzz");
  auto reference = NewReferenceSession();
  bool refused = false;
  for (size_t off = 0; off < n && !refused;) {
    const size_t take = std::min(chunk, n - off);
    reader.Feed(std::string_view(bytes + off, take));
    off += take;
    std::string_view payload;
    for (;;) {
      const auto r = reader.Next(&payload);
      if (r != rooftrace::wire::FrameReader::Result::kFrame) {
        if (r == rooftrace::wire::FrameReader::Result::kCorrupt) {
          refused = true;
        }
        break;
      }
      rooftrace::Status s = session->OnPacket(payload);
      rooftrace::Status s_ref = reference->OnPacket(payload);
      if (s.ok() && session->restart_pending()) {
        JoinAndDrop(&session->session(), roofs);
        session = std::make_unique<rooftrace::WireSession>("fuzz");
        reference = NewReferenceSession();
        s = session->OnPacket(payload);
        s_ref = reference->OnPacket(payload);
      }
      // The hand-written decoder keeps what libprotobuf's parser keeps.
      const std::string diff =
          rooftrace::test_support::DiffSessions(*session, *reference);
      if (s.ok() != s_ref.ok() || !diff.empty()) {
        fprintf(stderr, "decoders disagree on packet of %zu bytes: %s\n",
                payload.size(), diff.c_str());
        __builtin_trap();
      }
      if (!s.ok()) {
        refused = true;
        break;
      }
      FlushWindow(&session->session(), roofs);
      FlushWindow(&reference->session(), roofs);
    }
  }
  JoinAndDrop(&session->session(), roofs);
  return 0;
}
