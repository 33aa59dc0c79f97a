// A write both store tests (store_schema_test, store_backends_test) make:
// an atomic run begun with one session and one kernel, its batch ended
// but the run never finished, then aborted (or, with
// `close_without_finishing`, the store closed with the run still open).
// Fails the calling test on any write error.
#ifndef ROOFTRACE_TESTS_SUPPORT_ABORTED_RUN_H_
#define ROOFTRACE_TESTS_SUPPORT_ABORTED_RUN_H_

#include <gtest/gtest.h>

#include <string>

#include "store/store.h"

namespace rooftrace::test_support {

inline void WriteAbortedAtomicRun(const std::string& store_path,
                                  bool close_without_finishing) {
  auto store = Store::Open(store_path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  (*store)->set_atomic_runs(true);
  RunRow run;
  run.origin = "import:broken";
  auto id = (*store)->BeginRun(run);
  ASSERT_TRUE(id.ok());
  SessionRow session;
  session.run_id = *id;
  auto sid = (*store)->AddSession(session, {});
  ASSERT_TRUE(sid.ok());
  KernelRow k;
  k.run_id = *id;
  k.session_id = *sid;
  k.name = "never_stored_kernel";
  k.flops_source = k.bytes_source = "none";
  k.bound = "unknown";
  ASSERT_TRUE((*store)->AddKernel(k).ok());
  ASSERT_TRUE((*store)->EndWrite().ok());  // not a commit in atomic mode
  if (!close_without_finishing) {
    ASSERT_TRUE((*store)->AbortRun().ok());
  }
}

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_ABORTED_RUN_H_
