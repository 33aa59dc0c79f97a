// A session joined against the H100 SXM's datasheet roofs, then given to
// one of the join's later passes (sampled counters, PM-sampled bytes,
// inherited figures): what the pipeline tests of those passes start from.
#ifndef ROOFTRACE_TESTS_SUPPORT_JOINED_ON_H100_H_
#define ROOFTRACE_TESTS_SUPPORT_JOINED_ON_H100_H_

#include "model/roof_model.h"
#include "pipeline/import_stats.h"
#include "pipeline/join.h"
#include "pipeline/session.h"

namespace rooftrace::test_support {

struct Joined {
  JoinedSession j;
  ImportStats stats;  // what the pass counted
};

// Joins `session` with default options, then `pass(&joined)`.
template <typename Pass>
Joined JoinOnH100(Session* session, Pass pass) {
  const Roofs roofs = RoofsFromDatasheet("NVIDIA H100 80GB HBM3");
  Joined out;
  JoinInto(session, roofs, {}, {}, &out.j);
  pass(&out);
  return out;
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_JOINED_ON_H100_H_
