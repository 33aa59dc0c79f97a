// The synthetic trace builder moved to collector/testing/ so that it (and
// rooftrace_example_trace) is built without the test suite; this header
// keeps the old include path working for the suites that use it.
#ifndef ROOFTRACE_TESTS_SUPPORT_TRACE_BUILDER_H_
#define ROOFTRACE_TESTS_SUPPORT_TRACE_BUILDER_H_

#include "sources/rft/testing/trace_builder.h"

#endif  // ROOFTRACE_TESTS_SUPPORT_TRACE_BUILDER_H_
