// The CUPTI entry points trace mode uses, as a table of function pointers
// resolved at run time from a dlopen()ed libcupti.
//
// Why a table: libinject must load into processes that have no CUDA at all,
// so it carries no link-time dependency on libcupti. Tests fill the table
// with fakes (e.g. ActivityGetNextRecord walking synthetic records) to drive
// the real buffer and callback handling without a GPU.
// Calls go through RT_CUPTI_CALL (libinject/cupti_call.h).
// Immutable once loaded; thread-safe to share.
#ifndef ROOFTRACE_LIBINJECT_CUPTI_API_H_
#define ROOFTRACE_LIBINJECT_CUPTI_API_H_

#include <cupti.h>

#include <string>

#include "base/status.h"
#include "libinject/cupti_call.h"

namespace rooftrace::inject {

struct CuptiApi {
  void* handle = nullptr;  // dlopen handle (null for fakes)
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*GetVersion)(uint32_t*) = nullptr;
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc,
                           void*) = nullptr;
  CUptiResult (*SubscribeV2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc,
                             void*, CUpti_SubscriberParams*) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle,
                                CUpti_CallbackDomain,
                                CUpti_CallbackId) = nullptr;
  // Callback names, for messages and tests (what is traced is decided by
  // callback id, api_callbacks.h).
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t,
                                 const char**) = nullptr;
  CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle,
                              CUpti_CallbackDomain) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(
      CUpti_BuffersCallbackRequestFunc,
      CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(
      CUpti_TimestampCallbackFunc) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t,
                                       CUpti_Activity**) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t,
                                              size_t*) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
  CUptiResult (*Finalize)() = nullptr;
  // Counters mode: the device of a created context.
  CUptiResult (*GetDeviceId)(CUcontext, uint32_t*) = nullptr;
  // Counters mode: the ids a Kernel record made from a profiled launch
  // carries (the ones CUPTI's own kernel record would have).
  CUptiResult (*GetContextId)(CUcontext, uint32_t*) = nullptr;
  CUptiResult (*GetStreamIdEx)(CUcontext, CUstream, uint8_t,
                               uint32_t*) = nullptr;
};

// Opens libcupti and resolves every entry point: the one ROOFTRACE_CUPTI_PATH
// names (a file or a directory; when it does not load, that is the error),
// else the library path, then the CUPTI directory found at build time. The
// error says which library or symbol is missing and how to fix it.
StatusOr<CuptiApi> LoadCuptiApi();
// Resolves the entry points from a libcupti handle (LoadCuptiApi's second
// half); closes the handle and names the first missing symbol on failure.
StatusOr<CuptiApi> ResolveCuptiApi(void* handle);

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_CUPTI_API_H_
