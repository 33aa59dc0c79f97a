// Predict against real measurements: Vidur's H100 timings of Llama-2-7B's
// projections (fused QKV, output projection, fused gate/up, down) at 259
// token counts and tensor parallelism 1, 2, 4, 8, read in place from
// ../shared/real-data (skipped when absent). The roofline time is a lower
// bound: every measurement is slower; the prediction says memory-bound at
// small M and compute-bound at large M, and the measurements agree: flat
// in M below the ridge, linear above it.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <vector>

#include "analyzer/predict.h"
#include "tests/support/real_data.h"

namespace rooftrace::analyzer {
namespace {

constexpr char kVidur[] =
    "vidur/data/profiling/compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv";

// Vidur's column names for the four GEMMs, and predict's op names.
constexpr const char* kColumns[4] = {"attn_pre_proj", "attn_post_proj",
                                     "mlp_up_proj", "mlp_down_proj"};
constexpr const char* kOps[4] = {"qkv", "o_proj", "gate_up", "down"};

struct Measured {
  int64_t tokens = 0;
  int tp = 0;
  double median_s[4] = {};
};

// The first row of each (tokens, tp) pair (the file repeats a few).
std::vector<Measured> ReadVidur(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  {
    std::istringstream h(line);
    std::string cell;
    while (std::getline(h, cell, ',')) header.push_back(cell);
  }
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no column " << name;
    return 0;
  };
  int median[4];
  for (int i = 0; i < 4; ++i) {
    median[i] = column("time_stats." + std::string(kColumns[i]) + ".median");
  }
  const int tokens = column("num_tokens");
  const int tp = column("num_tensor_parallel_workers");
  std::vector<Measured> out;
  std::map<std::pair<int64_t, int>, bool> seen;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream r(line);
    std::string cell;
    while (std::getline(r, cell, ',')) cells.push_back(cell);
    if (cells.size() != header.size()) continue;
    Measured m;
    m.tokens = std::stoll(cells[tokens]);
    m.tp = std::stoi(cells[tp]);
    for (int i = 0; i < 4; ++i)
      m.median_s[i] = std::stod(cells[median[i]]) * 1e-3;
    if (seen[{m.tokens, m.tp}]) continue;
    seen[{m.tokens, m.tp}] = true;
    out.push_back(m);
  }
  return out;
}

struct Predicted {
  double roofline_s[4] = {};
  std::string bound[4];
};

// Llama-2-7B prefill of `tokens` tokens on the H100 SXM datasheet roofs;
// the GEMM alone (Vidur times the all-reduce separately): max(T_math,
// T_mem).
Predicted PredictGemms(const ModelConfig& model, const PredictDevice& h100,
                       int64_t tokens, int tp) {
  PredictOptions o;
  o.prompt = tokens;
  o.generate = 1;
  o.tp = tp;
  StatusOr<Prediction> p = Predict(model, o, h100);
  EXPECT_TRUE(p.ok()) << p.status().message();
  Predicted out;
  for (const OpCost& op : p->ops) {
    for (int i = 0; i < 4; ++i) {
      if (op.phase == "prefill" && op.op == kOps[i]) {
        out.roofline_s[i] = std::max(op.t_math_s, op.t_mem_s);
        out.bound[i] = op.t_math_s >= op.t_mem_s ? "compute" : "memory";
      }
    }
  }
  return out;
}

class VidurTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = test_support::RealDataFile(kVidur);
    if (path.empty()) GTEST_SKIP() << test_support::RealDataMissing(kVidur);
    rows_ = ReadVidur(path);
    model_ = *LoadModelConfig("Llama-2-7B");
    h100_ = *ResolvePredictDevice("h100-sxm", "", 0);
  }
  const Measured* Find(int64_t tokens, int tp) const {
    for (const Measured& m : rows_) {
      if (m.tokens == tokens && m.tp == tp) return &m;
    }
    return nullptr;
  }
  std::vector<Measured> rows_;
  ModelConfig model_;
  PredictDevice h100_;
};

// 259 token counts x 4 TP degrees.
TEST_F(VidurTest, ReadsEveryConfiguration) {
  EXPECT_EQ(rows_.size(), 259u * 4);
  ASSERT_NE(Find(1, 1), nullptr);
  ASSERT_NE(Find(4096, 8), nullptr);
}

// The roofline time is a lower bound: no measurement beats it (the
// smallest measured / predicted is 1.157, mlp_down_proj at 4096 tokens and
// tp 2).
TEST_F(VidurTest, EveryMeasurementIsSlowerThanTheRoofline) {
  double lowest = 1e9;
  for (const Measured& m : rows_) {
    const Predicted p = PredictGemms(model_, h100_, m.tokens, m.tp);
    for (int i = 0; i < 4; ++i) {
      const double ratio = m.median_s[i] / p.roofline_s[i];
      EXPECT_GE(ratio, 1.0)
          << kColumns[i] << " tokens " << m.tokens << " tp " << m.tp;
      lowest = std::min(lowest, ratio);
    }
  }
  EXPECT_NEAR(lowest, 1.1572, 1e-4);
}

// Memory-bound at small M, compute-bound at large M: predicted, and seen
// in the measurements (flat from 1 to 16 tokens, doubling from 2048 to
// 4096).
TEST_F(VidurTest, MemoryBoundAtSmallMComputeBoundAtLargeM) {
  for (const int tp : {1, 2, 4, 8}) {
    for (const Measured& m : rows_) {
      if (m.tp != tp || (m.tokens > 256 && m.tokens < 1024)) continue;
      const Predicted p = PredictGemms(model_, h100_, m.tokens, tp);
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(p.bound[i], m.tokens <= 256 ? "memory" : "compute")
            << kColumns[i] << " tokens " << m.tokens << " tp " << tp;
      }
    }
  }
  const Measured* t1 = Find(1, 1);
  const Measured* t16 = Find(16, 1);
  const Measured* t2048 = Find(2048, 1);
  const Measured* t4096 = Find(4096, 1);
  ASSERT_TRUE(t1 && t16 && t2048 && t4096);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LT(t16->median_s[i] / t1->median_s[i], 1.1) << kColumns[i];
    EXPECT_NEAR(t4096->median_s[i] / t2048->median_s[i], 2.0, 0.1)
        << kColumns[i];
  }
}

// Measured / predicted at both ends, tp 1 and 8, printed as the table in
// docs/predict.md.
TEST_F(VidurTest, MeasuredOverPredictedAcrossTokenCounts) {
  struct Expected {
    int64_t tokens;
    int tp;
    double ratio[4];  // qkv, o_proj, gate_up, down
  };
  const Expected expected[] = {
      {1, 1, {1.2642, 1.5966, 1.1884, 1.4112}},
      {4096, 1, {1.4014, 1.3894, 1.3219, 1.1813}},
      {1, 8, {1.8620, 3.1878, 1.7821, 1.7814}},
      {4096, 8, {1.6509, 1.7277, 1.4143, 1.4786}},
  };
  for (const Expected& e : expected) {
    const Measured* m = Find(e.tokens, e.tp);
    ASSERT_NE(m, nullptr);
    const Predicted p = PredictGemms(model_, h100_, e.tokens, e.tp);
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(m->median_s[i] / p.roofline_s[i], e.ratio[i], 1e-4)
          << kColumns[i] << " tokens " << e.tokens << " tp " << e.tp;
    }
  }
  std::printf("tokens  tp  %s\n",
              "qkv meas/pred (us)  o_proj  gate_up  down  [bound]");
  for (const int tp : {1, 8}) {
    for (const int64_t tokens : {1, 16, 64, 256, 512, 1024, 2048, 4096}) {
      const Measured* m = Find(tokens, tp);
      ASSERT_NE(m, nullptr);
      const Predicted p = PredictGemms(model_, h100_, tokens, tp);
      std::printf("%6lld  %2d", static_cast<long long>(tokens), tp);
      for (int i = 0; i < 4; ++i) {
        std::printf("  %s %.1f/%.1f = %.2f", kOps[i], m->median_s[i] * 1e6,
                    p.roofline_s[i] * 1e6, m->median_s[i] / p.roofline_s[i]);
      }
      std::printf("  [%s]\n", p.bound[0].c_str());
    }
  }
}

}  // namespace
}  // namespace rooftrace::analyzer
