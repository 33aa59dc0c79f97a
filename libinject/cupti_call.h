// The one wrapper for every CUPTI call libinject makes, trace mode and
// counters mode alike: RT_CUPTI_CALL(table, Fn, args...) calls `table.Fn`
// (a function-pointer table resolved from libcupti: CuptiApi,
// counters::CuptiProfilerApi, or a test's fakes) and evaluates to a
// CuptiCall holding CUPTI's result and, when the call failed, a Status whose
// message is the call text and CUPTI's result string:
//
//   "cuptiRangeProfilerEnable(&enable): CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
//   (35)"
//
// A CuptiCall converts to that Status, so RT_RETURN_IF_ERROR(RT_CUPTI_CALL(
// ...)) propagates it; callers that must classify the failure read
// `.result` (counters/failure_modes.h). An entry the table lacks is not
// called: CUPTI_ERROR_NOT_INITIALIZED, "...: not in this libcupti".
//
// Header-only, no allocation on success (the message is built only for a
// failure); thread-safe as far as the called entry point is.
#ifndef ROOFTRACE_LIBINJECT_CUPTI_CALL_H_
#define ROOFTRACE_LIBINJECT_CUPTI_CALL_H_

#include <cupti_result.h>

#include <string>

#include "base/status.h"

namespace rooftrace::inject {

using CuptiResultStringFn = CUptiResult (*)(CUptiResult, const char**);

struct CuptiCall {
  CUptiResult result = CUPTI_SUCCESS;
  Status status;              // OK exactly when result == CUPTI_SUCCESS
  const char* function = "";  // "cuptiRangeProfilerEnable" (static text)

  bool ok() const { return result == CUPTI_SUCCESS; }
  // For RT_RETURN_IF_ERROR and functions that return Status.
  operator Status() const& { return status; }  // NOLINT: implicit by design
  operator Status() && { return std::move(status); }  // NOLINT
};

// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)", or "CUptiResult 35" when the
// table has no result-string entry or CUPTI does not know the value.
inline std::string CuptiResultText(CuptiResultStringFn result_string,
                                   CUptiResult result) {
  const char* text = nullptr;
  if (result_string == nullptr ||
      result_string(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUptiResult " + std::to_string(static_cast<int>(result));
  }
  return std::string(text) + " (" + std::to_string(static_cast<int>(result)) +
         ")";
}

// (Each CuptiCall is built whole: nvcc warns about the assignment of a
// [[nodiscard]] Status.)
inline CuptiCall FinishCuptiCall(CuptiResultStringFn result_string,
                                 CUptiResult result, const char* function,
                                 const char* call_text) {
  if (result == CUPTI_SUCCESS) return CuptiCall{result, Status(), function};
  return CuptiCall{result,
                   Unavailable(std::string(call_text) + ": " +
                               CuptiResultText(result_string, result)),
                   function};
}

inline CuptiCall MissingCuptiEntry(const char* function,
                                   const char* call_text) {
  return CuptiCall{
      CUPTI_ERROR_NOT_INITIALIZED,
      Unavailable(std::string(call_text) + ": not in this libcupti"), function};
}

}  // namespace rooftrace::inject

// `table.Fn(args...)` as a CuptiCall (see above). `table` must have a
// GetResultString entry (null is fine: the number is printed instead).
#define RT_CUPTI_CALL(table, fn, ...)                                       \
  ((table).fn == nullptr                                                    \
       ? ::rooftrace::inject::MissingCuptiEntry(                            \
             "cupti" #fn, "cupti" #fn "(" #__VA_ARGS__ ")")                 \
       : ::rooftrace::inject::FinishCuptiCall(                              \
             (table).GetResultString, (table).fn(__VA_ARGS__), "cupti" #fn, \
             "cupti" #fn "(" #__VA_ARGS__ ")"))

#endif  // ROOFTRACE_LIBINJECT_CUPTI_CALL_H_
