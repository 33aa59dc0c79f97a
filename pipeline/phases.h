// Prefill or decode (DESIGN.md): splits a session's GPU work into forward
// steps and labels each step `prefill`, `decode`, `mixed` or `other`, with the
// evidence used.
//
// Steps are delimited by the first kind of evidence present, in this order:
//  1. device-to-host copies of sampled tokens (small D2H copies, at most
//     `max_token_copy_bytes`): every autoregressive engine waits for them;
//  2. NVTX: a new outermost range on the launching thread starts a step;
//  3. host gaps: a pause between launches longer than
//     max(min_host_gap_ns, host_gap_factor x the median launch interval).
// Steps without GEMMs (bookkeeping between two token copies) are merged into
// the next step with GEMMs.
//
// A GEMM's token count is the dimension that is not a weight dimension; the
// weight operand is the one the source named, else the one whose pointer
// repeats across more steps (op(A) is m x k, so a weight A leaves n as the
// token count; a weight B leaves m).
// A step's token count T is the count its GEMMs' FLOPs mostly see. Labels:
//  - `prefill`: T above `max_decode_tokens` (no decode batch is that large),
//    whatever its neighbours; an isolated step with T larger than the next
//    step's T_next and a multiple of it (T_next prompts of T / T_next
//    tokens); or a single step with T > 1;
//  - `decode`: T at most `max_decode_tokens` and equal to a neighbouring
//    step's T (steady state), or smaller than the step that follows;
//  - `mixed`: an isolated step with T larger than T_next but not a multiple
//    of it (a prefill chunk batched with decode tokens);
//  - `other`: no GEMM with a known token count.
// A step most of whose kernels ran inside one serving engine's step
// annotation (serving_step.h) takes that annotation's phase and token
// count instead: the engine says what it batched.
//
// Pure function of its input; thread-safe.
#ifndef ROOFTRACE_PIPELINE_PHASES_H_
#define ROOFTRACE_PIPELINE_PHASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/serving_step.h"

namespace rooftrace {

// The largest token count a decode step can have. A decode step's GEMMs
// see one token per running sequence (a few more with speculative
// decoding), so T is bounded by the engine's batch limit. The defaults of
// the engines we read: vLLM's max_num_seqs (1,024 at most), trtllm-serve's
// max_batch_size (256; trtllm-build's is 2,048). 4,096 is twice the largest
// of them, room for a speculative token per sequence at that batch, and
// half the 8,192-token batches both engines schedule for prefill by default
// (vLLM's max_num_batched_tokens on large GPUs, trtllm-serve's
// max_num_tokens). Regular steps above it are repeated prefills (a
// benchmark re-running one prompt), not steady decode. At or below it
// regularity still decides: a repeated 2,048-token chunk and a
// 2,048-sequence decode have the same token counts. A run decoding more
// sequences than this sets PhaseOptions::max_decode_tokens.
inline constexpr int64_t kMaxDecodeTokensPerStep = 4096;

struct PhaseOptions {
  uint64_t max_token_copy_bytes = 1u << 20;
  uint64_t min_host_gap_ns = 1000000;  // 1 ms
  double host_gap_factor = 20.0;
  int64_t max_decode_tokens = kMaxDecodeTokensPerStep;
};

struct PhaseInput {
  struct Kernel {
    uint64_t start_ns = 0, end_ns = 0;  // GPU
    uint64_t host_ns = 0;               // launch API start; 0: unknown
    uint64_t nvtx_root = 0;             // outermost NVTX range; 0: none
    int gemm = -1;                      // index into gemms; -1: none
    // The serving engine's step annotation around its launch
    // (serving_step.h); null: none. Owned by the caller.
    const ServingStep* serving_step = nullptr;
  };
  struct Copy {
    uint64_t start_ns = 0, end_ns = 0, bytes = 0;
    bool dtoh = false;
  };
  struct Gemm {
    int64_t m = 0, n = 0;
    uint64_t a_ptr = 0, b_ptr = 0;
    // The weight operand when the source knows it (GemmRecord::
    // weight_operand): 1 a, 2 b; 0: inferred from repeating pointers.
    int weight_hint = 0;
    // The rest of the shape: a step's token count is the one its GEMMs'
    // FLOPs (2*m*n*k*batch) mostly see.
    int64_t k = 1, batch = 1;
  };
  std::vector<Kernel> kernels;
  std::vector<Copy> copies;
  std::vector<Gemm> gemms;
  // Token count of the step just before these kernels, already labelled and
  // stored by an earlier flush of the same session (-1: none). The labelling
  // rule sees it as the previous step, so a session cut into windows is
  // labelled as if it were whole.
  int64_t prev_step_tokens = -1;
};

struct StepInfo {
  uint64_t start_ns = 0, end_ns = 0;
  std::string phase;          // prefill | decode | mixed | other
  int64_t token_count = -1;   // -1: none
  std::string boundary;       // dtoh_copy | nvtx | host_gap | end
  std::string evidence;
  uint64_t kernel_count = 0, gemm_count = 0, gpu_time_ns = 0;
};

struct PhaseResult {
  std::vector<int> kernel_step;       // per input kernel
  std::vector<int> copy_step;         // per input copy; -1: before any step
  std::vector<int> gemm_weight;       // per gemm: 0 unknown, 1 a, 2 b
  std::vector<int64_t> gemm_tokens;   // per gemm: -1 unknown
  std::vector<int> gemm_step;         // per gemm: -1 when no kernel ran it
  std::vector<StepInfo> steps;
};

PhaseResult DetectPhases(const PhaseInput& input,
                         const PhaseOptions& options = {});

// The labelling rule alone, on step token counts (-1: no GEMM evidence).
// Fills one phase and one evidence sentence per step.
void ClassifySteps(const std::vector<int64_t>& token_counts,
                   std::vector<std::string>* phases,
                   std::vector<std::string>* evidence,
                   int64_t max_decode_tokens = kMaxDecodeTokensPerStep);

}  // namespace rooftrace

#endif  // ROOFTRACE_PIPELINE_PHASES_H_
