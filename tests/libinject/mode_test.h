// What the counters-mode and sampling-mode tests share: the installed
// CUPTI's profiler table (its Host API is real; the caller installs the
// fake device entries it needs), a producer writing a spool file, a
// CuptiTracer driven through its real callback trampoline, and reading the
// spool back. Each test binary has its own fakes and state; one test at a
// time (the fakes are globals).
#ifndef ROOFTRACE_TESTS_LIBINJECT_MODE_TEST_H_
#define ROOFTRACE_TESTS_LIBINJECT_MODE_TEST_H_

#include <cuda.h>
#include <cupti.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "libinject/counters/cupti_profiler_api.h"
#include "libinject/producer.h"
#include "libinject/tracer.h"
#include "tests/libinject/test_util.h"

namespace rooftrace::inject {

class ModeTest : public ::testing::Test {
 protected:
  // The profiler table, a temporary spool and `mode` in the options; the
  // sender flushes every 5 ms.
  void SetUpMode(const std::string& tag, InjectMode mode, CUcontext context) {
    StatusOr<counters::CuptiProfilerApi> real =
        counters::LoadCuptiProfilerApi(ROOFTRACE_CUPTI_LIBRARY);
    ASSERT_TRUE(real.ok()) << real.status().message();
    api_ = *real;
    context_ = context;
    dir_ = testing::MakeTempDir(tag);
    options_.config.sink.kind = SinkSpec::Kind::kFile;
    options_.config.sink.path = dir_ + "/t.rft";
    options_.config.mode = mode;
    options_.flush_interval_ms = 5;
  }

  // The context's CONTEXT_CREATED callback, as CUDA makes it.
  void CreateContext() {
    CUpti_ResourceData created{};
    created.context = context_;
    CuptiTracer::CallbackTrampoline(tracer_.get(), CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                    &created);
  }

  // One runtime API call through the callbacks (enter, then exit with
  // `result`), with the API's parameter struct when given.
  void Call(uint32_t cbid, uint32_t correlation, const char* symbol,
            int result = 0, const void* params = nullptr) {
    CUpti_CallbackData d{};
    d.correlationId = correlation;
    d.context = context_;
    d.symbolName = symbol;
    d.functionName = "cudaLaunchKernel";
    d.functionParams = params;
    d.functionReturnValue = &result;
    for (CUpti_ApiCallbackSite site : {CUPTI_API_ENTER, CUPTI_API_EXIT}) {
      d.callbackSite = site;
      CuptiTracer::CallbackTrampoline(tracer_.get(),
                                      CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
    }
  }

  // Stops the producer (its last Stats and Goodbye written), drops the
  // tracer, and reads the spool.
  std::vector<wire::Packet> StopAndRead() {
    EXPECT_TRUE(producer_->Stop());
    tracer_.reset();
    return testing::ReadTrace(options_.config.sink.path);
  }

  counters::CuptiProfilerApi api_;
  CUcontext context_ = nullptr;
  std::string dir_;
  ProducerOptions options_;
  std::unique_ptr<Producer> producer_;
  std::unique_ptr<CuptiTracer> tracer_;
};

// The last Stats of a spool's packets; null when there is none.
inline const wire::Stats* LastStats(const std::vector<wire::Packet>& packets) {
  const wire::Stats* last = nullptr;
  for (const wire::Packet& p : packets) {
    if (p.has_stats()) last = &p.stats();
  }
  return last;
}

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_TESTS_LIBINJECT_MODE_TEST_H_
