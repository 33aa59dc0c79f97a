// Step labelling on constructed token-count sequences, and step detection
// from copies / NVTX / host gaps on hand-built kernel timelines.
#include "pipeline/phases.h"

#include <gtest/gtest.h>

namespace rooftrace {
namespace {

std::vector<std::string> Labels(const std::vector<int64_t>& t) {
  std::vector<std::string> phases, evidence;
  ClassifySteps(t, &phases, &evidence);
  return phases;
}

// Batch 4, prompt 128: prefill GEMMs see 512 tokens, decode GEMMs 4.
TEST(ClassifyStepsTest, PrefillThenDecode) {
  EXPECT_EQ(Labels({512, 4, 4, 4}),
            (std::vector<std::string>{"prefill", "decode", "decode", "decode"}));
}

// Two generate() calls in one process (batch 8 then batch 1, prompt 128).
TEST(ClassifyStepsTest, TwoBatchSizesInOneProcess) {
  EXPECT_EQ(Labels({1024, 8, 8, 128, 1, 1}),
            (std::vector<std::string>{"prefill", "decode", "decode",
                                      "prefill", "decode", "decode"}));
}

// A chunk of 296 prefill tokens batched with 5 decode tokens = 301, not a
// multiple of the 5 decode tokens around it: mixed.
TEST(ClassifyStepsTest, ChunkedPrefillIsMixed) {
  EXPECT_EQ(Labels({5, 5, 301, 5, 5}),
            (std::vector<std::string>{"decode", "decode", "mixed", "decode",
                                      "decode"}));
}

// No GEMM evidence: other; a lone forward pass over 512 tokens: prefill;
// the last decode step after some sequences finished (3 < 4): decode.
TEST(ClassifyStepsTest, OtherSingleAndShrinkingBatch) {
  EXPECT_EQ(Labels({-1, 512, 4, 4, 3}),
            (std::vector<std::string>{"other", "prefill", "decode", "decode",
                                      "decode"}));
  EXPECT_EQ(Labels({512}), (std::vector<std::string>{"prefill"}));
  std::vector<std::string> phases, evidence;
  ClassifySteps({512, 4, 4}, &phases, &evidence);
  EXPECT_NE(evidence[0].find("512 tokens = 4 x 128"), std::string::npos)
      << evidence[0];
}

// One forward step of 141 tokens and nothing else (BERT's encoder pass):
// prefill, with evidence saying it is a single forward pass; one step of
// one token stays decode.
TEST(ClassifyStepsTest, SingleForwardPassSaysSo) {
  std::vector<std::string> phases, evidence;
  ClassifySteps({141}, &phases, &evidence);
  EXPECT_EQ(phases[0], "prefill");
  EXPECT_EQ(evidence[0],
            "GEMMs see 141 tokens in a single forward step with no decode "
            "after it: an encoder, or one prefill");
  ClassifySteps({1}, &phases, &evidence);
  EXPECT_EQ(phases[0], "decode");
  EXPECT_EQ(evidence[0], "GEMMs see 1 tokens in the only forward step");
}

// A trace of repeated forward passes over the same 8,944-token prompt (the
// issue 28 trace): every step's GEMMs see 8,944 tokens, far more than any
// decode batch, so each step is a prefill however regular its neighbours.
TEST(ClassifyStepsTest, RepeatedLargeStepsArePrefills) {
  std::vector<std::string> phases, evidence;
  ClassifySteps({8944, 8944, 8944}, &phases, &evidence);
  EXPECT_EQ(phases, (std::vector<std::string>{"prefill", "prefill", "prefill"}));
  EXPECT_NE(evidence[1].find("more than the 4096 tokens"), std::string::npos)
      << evidence[1];
  // A prefill of 8,944 tokens before a larger chunk is still a prefill (the
  // "fewer than the next step" rule is for decode-sized counts).
  EXPECT_EQ(Labels({8944, 9001, 4, 4}),
            (std::vector<std::string>{"prefill", "mixed", "decode", "decode"}));
}

// At the bound and below, regular steps stay steady decode: a large decode
// batch (2,048 sequences, trtllm-build's default max_batch_size) repeated.
TEST(ClassifyStepsTest, RepeatedStepsAtOrBelowTheBoundStayDecode) {
  EXPECT_EQ(Labels({2048, 2048, 2048}),
            (std::vector<std::string>{"decode", "decode", "decode"}));
  EXPECT_EQ(Labels({4096, 4096}),
            (std::vector<std::string>{"decode", "decode"}));
  EXPECT_EQ(Labels({4097, 4097}),
            (std::vector<std::string>{"prefill", "prefill"}));
}

// Three steps, each: a GEMM kernel (weight W at 0x1000, activation fresh
// per step) and an elementwise kernel, then a D2H copy of 32 bytes.
// Step 0 GEMM has n = 512 (prefill), steps 1-2 n = 4.
PhaseInput ThreeSteps() {
  PhaseInput in;
  uint64_t t = 1000;
  for (int s = 0; s < 3; ++s) {
    const int g = static_cast<int>(in.gemms.size());
    in.gemms.push_back({4096, s == 0 ? 512 : 4, 0x1000,
                        0x9000 + static_cast<uint64_t>(s) * 0x100});
    in.kernels.push_back({t, t + 100, t - 50, 0, g});
    in.kernels.push_back({t + 200, t + 300, t + 10, 0, -1});
    in.copies.push_back({t + 400, t + 450, 32, true});
    t += 10000;
  }
  // An H2D copy of inputs before everything, and a large D2H (logits, 64 MiB)
  // inside step 1 that must not split it.
  in.copies.push_back({10, 20, 4096, false});
  in.copies.push_back({11150, 11160, 64u << 20, true});
  return in;
}

TEST(DetectPhasesTest, TokenCopiesDelimitSteps) {
  const PhaseResult r = DetectPhases(ThreeSteps());
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].phase, "prefill");
  EXPECT_EQ(r.steps[0].token_count, 512);
  EXPECT_EQ(r.steps[1].phase, "decode");
  EXPECT_EQ(r.steps[2].token_count, 4);
  EXPECT_EQ(r.steps[0].boundary, "dtoh_copy");
  EXPECT_EQ(r.steps[2].boundary, "dtoh_copy");
  EXPECT_EQ(r.steps[1].kernel_count, 2u);
  EXPECT_EQ(r.steps[1].gpu_time_ns, 200u);
  EXPECT_EQ(r.kernel_step, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  // The weight is A (its pointer is in 3 steps, each activation in 1).
  EXPECT_EQ(r.gemm_weight, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(r.gemm_tokens, (std::vector<int64_t>{512, 4, 4}));
  // Copies: the token copy ending a step belongs to it; the H2D before the
  // first kernel goes to step 0.
  EXPECT_EQ(r.copy_step, (std::vector<int>{0, 1, 2, 0, 1}));
}

// A session of three identical steps, each a GEMM over 8,944 tokens then
// a token copy: the step detector labels all three prefill, and so does a
// window whose previous stored step also saw 8,944 tokens.
TEST(DetectPhasesTest, RepeatedLargeTokenStepsArePrefills) {
  PhaseInput in = ThreeSteps();
  for (auto& g : in.gemms) g.n = 8944;
  const PhaseResult r = DetectPhases(in);
  ASSERT_EQ(r.steps.size(), 3u);
  for (const StepInfo& st : r.steps) {
    EXPECT_EQ(st.token_count, 8944);
    EXPECT_EQ(st.phase, "prefill") << st.evidence;
  }
  in.prev_step_tokens = 8944;
  EXPECT_EQ(DetectPhases(in).steps[0].phase, "prefill");
  // The bound is an option: raised above 8,944, regularity decides again.
  PhaseOptions o;
  o.max_decode_tokens = 10000;
  EXPECT_EQ(DetectPhases(in, o).steps[1].phase, "decode");
}

// A serving engine says what it batched: the three steps ran inside its
// step annotations, a decode of 32 requests, a mixed batch and one whose
// kernels are mostly outside any annotation. The first two take the
// annotation's phase and token count over the GEMMs' (512 and 4 tokens
// would say prefill and decode); the third keeps the GEMMs' evidence.
TEST(DetectPhasesTest, ServingStepAnnotationsSayThePhase) {
  PhaseInput in = ThreeSteps();
  const ServingStep decode = *ParseServingStep(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32"
      "(sq32sk32785sqsq32sqsk32785)");
  const ServingStep mixed = *ParseServingStep(
      "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)"
      "_generation_37(sq37sk34489sqsq37sqsk34489)");
  in.kernels[0].serving_step = in.kernels[1].serving_step = &decode;
  in.kernels[2].serving_step = in.kernels[3].serving_step = &mixed;
  in.kernels[4].serving_step = &decode;  // 1 of the step's 2: no majority
  const PhaseResult r = DetectPhases(in);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].phase, "decode");
  EXPECT_EQ(r.steps[0].token_count, 32);
  EXPECT_NE(r.steps[0].evidence.find("step annotation: 0 prefill requests "
                                     "(0 tokens), 32 decode requests"),
            std::string::npos)
      << r.steps[0].evidence;
  EXPECT_EQ(r.steps[1].phase, "mixed");
  EXPECT_EQ(r.steps[1].token_count, 8192);
  EXPECT_EQ(r.steps[2].phase, "decode");
  EXPECT_EQ(r.steps[2].token_count, 4);
  EXPECT_EQ(r.steps[2].evidence.find("step annotation"), std::string::npos);
}

// A graph replay without its capture has no GEMM evidence; a step of it
// that the engine annotated is still a step of its own (decode), not
// merged into the prefill before it.
TEST(DetectPhasesTest, AnnotatedStepWithoutGemmsStaysAStep) {
  PhaseInput in = ThreeSteps();
  const ServingStep decode = *ParseServingStep("step[DECODE bs=4]");
  in.gemms.pop_back();
  in.kernels[4].gemm = -1;  // the third step's GEMM kernel: no shape
  in.kernels[4].serving_step = in.kernels[5].serving_step = &decode;
  const PhaseResult r = DetectPhases(in);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[2].phase, "decode");
  EXPECT_EQ(r.steps[2].token_count, 4);
  // Without the annotation it is bookkeeping folded into the step before.
  in.kernels[4].serving_step = in.kernels[5].serving_step = nullptr;
  EXPECT_EQ(DetectPhases(in).steps.size(), 2u);
}

// A window of a long session (RunRecorder stores settled steps as it goes)
// that starts in the middle of decode, just before some sequences finish:
// steps of 8, 4, 4 tokens. On its own the first step looks like a prefill
// of 4 prompts x 2 tokens; with the stored step before it (8 tokens) as
// its previous neighbour it is steady decode, as in the whole session.
TEST(DetectPhasesTest, PreviousStoredStepIsANeighbour) {
  PhaseInput in = ThreeSteps();
  in.gemms[0].n = 8;
  const PhaseResult alone = DetectPhases(in);
  ASSERT_EQ(alone.steps.size(), 3u);
  EXPECT_EQ(alone.steps[0].phase, "prefill");
  in.prev_step_tokens = 8;
  const PhaseResult windowed = DetectPhases(in);
  ASSERT_EQ(windowed.steps.size(), 3u);
  EXPECT_EQ(windowed.steps[0].phase, "decode");
  EXPECT_NE(windowed.steps[0].evidence.find("neighbouring step"),
            std::string::npos)
      << windowed.steps[0].evidence;
  // Token counts and the other labels are the window's own.
  EXPECT_EQ(windowed.steps[0].token_count, 8);
  EXPECT_EQ(windowed.steps[1].phase, "decode");
  EXPECT_EQ(windowed.steps[2].token_count, 4);
}

// The H100 run of hf_generate.py (transformers 5, Llama): besides the
// weight GEMMs, each step runs the rotary embedding's inv_freq x positions
// outer product (64 x tokens x 1, fp32). At decode its positions buffer
// came back at the same address while inv_freq's copy did not, so that
// GEMM "saw" 64 tokens; the step took the largest count and 56 decode
// steps were labelled prefills of 64 tokens. The step's count is the one
// its GEMMs' FLOPs mostly see.
TEST(DetectPhasesTest, StepTokenCountIsTheOneMostFlopsSee) {
  PhaseInput in = ThreeSteps();
  for (auto& g : in.gemms) g.k = 2048;
  const int first_rotary = static_cast<int>(in.gemms.size());
  for (int s = 0; s < 3; ++s) {
    PhaseInput::Gemm rotary;
    rotary.m = 64;
    rotary.n = s == 0 ? 512 : 4;
    rotary.k = 1;
    rotary.a_ptr = 0x20000 + static_cast<uint64_t>(s) * 0x100;  // fresh
    rotary.b_ptr = s == 0 ? 0x30000 : 0x7000;  // repeats in steps 1, 2
    in.gemms.push_back(rotary);
    const uint64_t t = in.kernels[static_cast<size_t>(2 * s)].start_ns;
    in.kernels.push_back({t + 20, t + 30, t - 40, 0, first_rotary + s});
  }
  const PhaseResult r = DetectPhases(in);
  ASSERT_EQ(r.steps.size(), 3u);
  // The outer product alone would say 64 tokens at decode.
  EXPECT_EQ(r.gemm_tokens[static_cast<size_t>(first_rotary) + 1], 64);
  EXPECT_EQ(r.steps[0].token_count, 512);
  EXPECT_EQ(r.steps[0].phase, "prefill");
  EXPECT_EQ(r.steps[1].token_count, 4);
  EXPECT_EQ(r.steps[1].phase, "decode");
  EXPECT_EQ(r.steps[2].token_count, 4);
  EXPECT_EQ(r.steps[2].phase, "decode");
}

// The weight operand is found by counting the distinct steps each pointer
// is in: one hashed pass when GEMMs come in step order, a sort otherwise.
// The rotary timeline above (GEMM steps 0 1 2 0 1 2) and the same GEMMs
// renumbered into step order (0 0 1 1 2 2) take one path each and must
// agree.
TEST(DetectPhasesTest, GemmOrderDoesNotChangeWeightsOrTokens) {
  PhaseInput mixed = ThreeSteps();
  for (int s = 0; s < 3; ++s) {
    PhaseInput::Gemm rotary;
    rotary.m = 64;
    rotary.n = s == 0 ? 512 : 4;
    rotary.a_ptr = 0x20000 + static_cast<uint64_t>(s) * 0x100;
    rotary.b_ptr = s == 0 ? 0x30000 : 0x7000;
    mixed.gemms.push_back(rotary);
    const uint64_t t = mixed.kernels[static_cast<size_t>(2 * s)].start_ns;
    mixed.kernels.push_back({t + 20, t + 30, t - 40, 0, 3 + s});
  }
  // New index of each GEMM in step order.
  const std::vector<int> to_ordered = {0, 2, 4, 1, 3, 5};
  PhaseInput ordered = mixed;
  for (size_t g = 0; g < mixed.gemms.size(); ++g) {
    ordered.gemms[static_cast<size_t>(to_ordered[g])] = mixed.gemms[g];
  }
  for (auto& k : ordered.kernels) {
    if (k.gemm >= 0) k.gemm = to_ordered[static_cast<size_t>(k.gemm)];
  }
  const PhaseResult a = DetectPhases(mixed);
  const PhaseResult b = DetectPhases(ordered);
  EXPECT_EQ(a.gemm_step, (std::vector<int>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(b.gemm_step, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  for (size_t g = 0; g < mixed.gemms.size(); ++g) {
    const size_t o = static_cast<size_t>(to_ordered[g]);
    EXPECT_EQ(a.gemm_weight[g], b.gemm_weight[o]) << "GEMM " << g;
    EXPECT_EQ(a.gemm_tokens[g], b.gemm_tokens[o]) << "GEMM " << g;
  }
  // The weight GEMMs' A repeats in 3 steps; the rotary B in 2 of them.
  EXPECT_EQ(a.gemm_weight, (std::vector<int>{1, 1, 1, 0, 2, 2}));
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t s = 0; s < a.steps.size(); ++s) {
    EXPECT_EQ(a.steps[s].token_count, b.steps[s].token_count);
    EXPECT_EQ(a.steps[s].phase, b.steps[s].phase);
  }
}

// Same timeline without copies: the 10 us host gaps (20x the 60 ns median
// launch interval, above the 1 ms floor only when the floor is lowered).
TEST(DetectPhasesTest, HostGapsDelimitStepsWithoutCopies) {
  PhaseInput in = ThreeSteps();
  in.copies.clear();
  PhaseOptions o;
  o.min_host_gap_ns = 1000;
  const PhaseResult r = DetectPhases(in, o);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].boundary, "host_gap");
  EXPECT_EQ(r.steps[0].phase, "prefill");
  EXPECT_EQ(r.steps[2].phase, "decode");
  // With the default 1 ms floor the 10 us gaps are not steps.
  EXPECT_EQ(DetectPhases(in).steps.size(), 1u);
}

// NVTX roots: a new outermost range starts a step.
TEST(DetectPhasesTest, NvtxRootsDelimitSteps) {
  PhaseInput in = ThreeSteps();
  in.copies.clear();
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    in.kernels[i].nvtx_root = 100 + i / 2;
  }
  const PhaseResult r = DetectPhases(in);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].boundary, "nvtx");
  EXPECT_EQ(r.steps[2].boundary, "end");
}

// Bookkeeping kernels between two token copies (no GEMM) join the next
// step instead of becoming an `other` step.
TEST(DetectPhasesTest, GemmlessStepsMergeIntoTheNext) {
  PhaseInput in = ThreeSteps();
  in.kernels.push_back({5000, 5100, 4990, 0, -1});
  in.copies.push_back({5200, 5210, 8, true});
  const PhaseResult r = DetectPhases(in);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.kernel_step.back(), 1);
  EXPECT_EQ(r.steps[1].kernel_count, 3u);
}

}  // namespace
}  // namespace rooftrace
