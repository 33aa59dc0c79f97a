// Records a session that grows step by step, as a live producer's does,
// through a RunRecorder into a new `Sink`: `add_step(&session, step)` for
// steps 0 to steps - 1, MaybeFlush after each (stored in windows once it
// holds `flush_records` records; 0: whole at its end), then AddSession and
// Finish; `after_flush`, when given, sees the recorder after each MaybeFlush.
// For the tests that compare windows with a whole-session join.
#ifndef ROOFTRACE_TESTS_SUPPORT_RECORD_STEPS_H_
#define ROOFTRACE_TESTS_SUPPORT_RECORD_STEPS_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

#include "pipeline/import_stats.h"
#include "pipeline/recorder.h"
#include "pipeline/session.h"
#include "proto/field_numbers.h"

namespace rooftrace::test_support {

// Adds the device-to-host copy of a step's sampled tokens (8 bytes, 1 us
// from `start_ns`): what ends a serving step (pipeline/serving_step.h).
inline void AddTokenCopy(Session* s, uint64_t correlation_id,
                         uint64_t start_ns) {
  MemcpyRecord c;
  c.correlation_id = correlation_id;
  c.start_ns = start_ns;
  c.end_ns = start_ns + 1000;
  c.bytes = 8;
  c.kind = wire::enums::kCopyDtoH;
  s->records().memcpys.push_back(c);
}

template <typename Sink>
struct RecordedSteps {
  std::unique_ptr<Sink> sink;  // null when recording failed (reported)
  ImportStats stats;           // the recorder's, after Finish
};

template <typename Sink, typename AddStepFn>
RecordedSteps<Sink> RecordSteps(
    Session session, int steps, size_t flush_records, AddStepFn add_step,
    const std::function<void(const RunRecorder&)>& after_flush = {}) {
  RecordedSteps<Sink> out;
  auto owned = std::make_unique<Sink>();
  Sink* sink = owned.get();
  RecorderOptions ro;
  ro.origin = "test";
  ro.flush_records = flush_records;
  auto rec = RunRecorder::Create(ro, std::move(owned));
  EXPECT_TRUE(rec.ok()) << rec.status().message();
  if (!rec.ok()) return out;
  for (int step = 0; step < steps; ++step) {
    add_step(&session, step);
    const Status st = (*rec)->MaybeFlush(&session);
    EXPECT_TRUE(st.ok()) << st.message();
    if (!st.ok()) return out;
    if (after_flush) after_flush(**rec);
  }
  const Status added = (*rec)->AddSession(&session);
  EXPECT_TRUE(added.ok()) << added.message();
  const Status finished = (*rec)->Finish();
  EXPECT_TRUE(finished.ok()) << finished.message();
  if (!added.ok() || !finished.ok()) return out;
  out.stats = (*rec)->stats();
  // The recorder owns the sink and goes with it: keep what it received.
  out.sink = std::make_unique<Sink>(std::move(*sink));
  return out;
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_RECORD_STEPS_H_
