// Measured against predicted: `rooftrace analyze RUN --expect
// PREDICTION.json` matches a run's GEMM kernels to the operations of a
// prediction (`rooftrace predict --format json`) by shape, and reports per
// operation and phase the predicted roofline time, the measured time, the
// efficiency (predicted / measured) and the bound the kernels actually sat
// on.
//
// A kernel matches an op when its stored shape ('m=.. n=.. k=.. batch=..',
// docs/store.md) has the op's K and batch and its M and N in either order
// (cuBLAS sees a framework's x W^T transposed). Ops carry their split forms
// too (q/k/v of a fused QKV, gate/up, attention's score and value
// products), so runs of frameworks that do not fuse them match as well;
// decode attention matches any KV length between the first and the last
// generated position. Each matched kernel is predicted at its own shape
// with the prediction's roofs; the kernels of one cuBLAS call (same
// correlation id, e.g. a split-K reduction) count the call's prediction
// once.
//
// ExpectMatcher is fed one kernel at a time (a store scan), keeps one
// accumulator per op and per unmatched shape, never per kernel; not
// thread-safe.
#ifndef ROOFTRACE_ANALYZER_EXPECT_H_
#define ROOFTRACE_ANALYZER_EXPECT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "store/store_reader.h"
#include "base/status.h"

namespace rooftrace::analyzer {

// One GEMM form a prediction expects: an op (or a part of it) in a phase,
// with the range of each dimension (equal ends when exact).
struct ExpectedGemm {
  // "qkv", "qkv.q", "attention.score"; forms of one shape share an entry,
  // whole ops first: "o_proj / qkv.q / qkv.k / qkv.v".
  std::string label;
  std::string phase;  // "prefill" | "decode"
  int order = 0;      // position of the op in the prediction (report order)
  int64_t m_lo = 0, m_hi = 0;  // token-side rows
  int64_t n_lo = 0, n_hi = 0;  // weight-side columns
  int64_t k_lo = 0, k_hi = 0;
  int64_t batch = 1;
  double a_bytes = 2, b_bytes = 2, c_bytes = 2;
  double peak_flops_per_s = 0;
};

// What `--expect` reads from a prediction file.
struct Expectation {
  std::string source;  // the file
  std::string model;
  std::string device;
  std::string roof_source;
  std::string workload;  // "batch 1, prompt 512, generate 128, tp 1"
  double dram_bytes_per_s = 0;
  std::vector<ExpectedGemm> gemms;
};

// Parses `predict --format json` output. Errors name `source` and the fix.
StatusOr<Expectation> ParseExpectation(std::string_view json_text,
                                       const std::string& source);
StatusOr<Expectation> LoadExpectation(const std::string& path);

// One op and phase of the comparison.
struct ExpectRow {
  std::string phase;
  std::string op;  // the ExpectedGemm label
  int order = 0;
  int64_t kernels = 0;
  int64_t calls = 0;       // distinct cuBLAS calls (correlation ids)
  double measured_s = 0;   // summed kernel time
  double predicted_s = 0;  // summed roofline time of the calls
  double predicted_math_s = 0, predicted_mem_s = 0;
  std::string shape;   // the first matched kernel's shape text
  int64_t shapes = 0;  // distinct shapes matched
  std::map<std::string, double> bound_time_s;  // measured bound -> time

  // predicted / measured; unset without measured time.
  std::optional<double> efficiency() const;
  std::string_view predicted_bound() const;  // "compute" | "memory"
  std::string measured_bound() const;        // the bound holding most time
};

struct UnmatchedShape {
  std::string shape;
  int64_t kernels = 0;
  double time_s = 0;
};

struct ExpectReport {
  Expectation expectation;
  std::vector<ExpectRow> rows;  // prefill then decode, in prediction order
  int64_t matched_kernels = 0;
  double matched_s = 0;
  int64_t unmatched_gemm_kernels = 0;  // a shape, but no op of that shape
  double unmatched_gemm_s = 0;
  std::vector<UnmatchedShape> unmatched_shapes;  // by time, at most 10
  int64_t other_kernels = 0;  // no GEMM shape (attention kernels, norms...)
  double other_s = 0;

  // No kernel of the run carries a GEMM shape: nothing could be compared
  // (an nsys export, a Kineto trace recorded without record_shapes).
  bool no_shapes() const {
    return matched_kernels == 0 && unmatched_gemm_kernels == 0;
  }
};

// What to tell the user when report.no_shapes(): that nothing was matched,
// why, and how to record shapes.
std::string NoShapesMessage(const ExpectReport& report);

class ExpectMatcher {
 public:
  explicit ExpectMatcher(Expectation expectation);

  // One kernel of the run (views used during the call only).
  void Add(const KernelRow& k);
  ExpectReport Finish() const;

 private:
  struct Accumulator {
    ExpectRow row;
    std::optional<int64_t> last_correlation;
    std::vector<std::string> shapes_seen;  // few: one op's shapes
  };
  Expectation expectation_;
  std::vector<Accumulator> rows_;  // parallel to expectation_.gemms
  std::map<std::string, UnmatchedShape> unmatched_;
  ExpectReport totals_;
};

// Parses a kernel row's shape text 'm=8 n=4096 k=4096 batch=1' (batch
// optional, default 1); nullopt when it is not one.
struct KernelShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
};
std::optional<KernelShape> ParseKernelShape(std::string_view text);

// Streams run `run_id` of `input` (a store, or a trace ingested into a
// temporary store) through an ExpectMatcher.
StatusOr<ExpectReport> CompareRunWithExpectation(const std::string& input,
                                                 int64_t run_id,
                                                 const Expectation& expected);

// "table" (a section printed under analyze's report), "csv", "json".
void WriteExpectReport(const ExpectReport& report, std::string_view format,
                       std::ostream& out);

// CompareRunWithExpectation, then WriteExpectReport: analyze's one call.
Status WriteRunAgainstExpectation(const std::string& input, int64_t run_id,
                                  const Expectation& expected,
                                  std::string_view format, std::ostream& out);

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_EXPECT_H_
