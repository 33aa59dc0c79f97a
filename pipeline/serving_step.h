// The step annotations that serving engines put around each forward step
// (as record_function ranges, hence user annotations in a Kineto trace and
// NVTX-like ranges elsewhere), read into the step's batch:
//   vLLM, with the sq/sk aggregates:
//     execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)
//       _generation_37(sq37sk34489sqsq37sqsk34489)
//   vLLM, plain: execute_context_2(14721)_generation_0(0)
//   SGLang: step[EXTEND bs=15 toks=15360], step[DECODE bs=32],
//     step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 ...]
//   ATOM: prefill[bs=2 tok=14721 ctx=[...] sqsq=... sqsk=... sk=...],
//     decode[bs=64 tok=64 d=64]
// "context" requests are prefills (chunks of prompts), "generation"
// requests decodes. For each group, sq is the new (query) tokens, sk the
// tokens attended to (cached and new), sqsq the sum of sq^2 and sqsk the
// sum of sq * sk over its requests: what attention's FLOPs and bytes need
// (model/ops.h ServingAttentionOp) and what no operator argument records
// (the KV lengths live in tensors' values, not their shapes).
//
// Pure functions; thread-safe.
#ifndef ROOFTRACE_PIPELINE_SERVING_STEP_H_
#define ROOFTRACE_PIPELINE_SERVING_STEP_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace rooftrace {

struct ServingStep {
  int64_t context_requests = 0, generation_requests = 0;
  int64_t c_sq = 0, c_sk = 0, c_sqsq = 0, c_sqsk = 0;
  int64_t g_sq = 0, g_sk = 0, g_sqsq = 0, g_sqsk = 0;
  // Whether the sk/sqsq/sqsk aggregates were given (the detailed forms);
  // without them only the token counts (c_sq, g_sq) are known.
  bool has_aggregates = false;

  int64_t tokens() const { return c_sq + g_sq; }
  bool prefill() const { return context_requests > 0 && generation_requests == 0; }
  bool decode() const { return generation_requests > 0 && context_requests == 0; }
  bool mixed() const { return context_requests > 0 && generation_requests > 0; }
};

// The step an annotation names; nullopt for any other text, and for a
// form whose numbers do not parse or contradict one another (a group's sk
// below its sq, sqsq below sq).
std::optional<ServingStep> ParseServingStep(std::string_view annotation);

// Of the step annotations around a call, the one it belongs to, given the
// choice among the inner ones so far (`inner`, null: none) and the next
// one out (`outer`, null: not a step): the innermost that gives the sq/sk
// aggregates, else the innermost (an engine may nest its plain label,
// step[EXTEND bs=15 toks=15360], inside the detailed one).
const ServingStep* InnermostStep(const ServingStep* inner,
                                 const ServingStep* outer);

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_SERVING_STEP_H_
