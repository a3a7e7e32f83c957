// Twin matching (study_analysis): each N-rank configuration is compared with the 1-rank
// configuration that differs only in its rank count (per-rank batch under weak scaling, global
// batch under strong), never with one of another profile, mode, precision, optimizer or rate.
#include "tests/report_test_helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ddpscale {
namespace {

using namespace report_test;

TEST(TwinMatching, WeakScalingPairsOnBatchPerRank) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);          // global 32
  const ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);         // global 64
  const ConfigRecord two_b16 = make_config("mlp", 1000, 16, 2, kTwoRanks);     // global 32, like `one`
  const StudyAnalysis a = analyze_study({two_b16, one, two});
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_EQ(a.comparisons[0].one_gpu, index_of(a, one.id));
  EXPECT_EQ(a.comparisons[0].n_gpu, index_of(a, two.id));
  // Weak scaling compares the per-rank batch: the same global batch is not a twin.
  EXPECT_EQ(a.unmatched, std::vector<size_t>{index_of(a, two_b16.id)});
  EXPECT_EQ(twin_key(one.params), twin_key(two.params));
  EXPECT_NE(twin_key(one.params), twin_key(two_b16.params));
}

TEST(TwinMatching, StrongScalingPairsOnGlobalBatch) {
  ConfigRecord one_g64 = make_config("mlp", 1000, 64, 1, kOneRank, "strong");   // global 64
  ConfigRecord one_g32 = make_config("mlp", 1000, 32, 1, kOneRank, "strong");   // global 32
  ConfigRecord two_g64 = make_config("mlp", 1000, 32, 2, kTwoRanks, "strong");  // 32 per rank, global 64
  const ConfigRecord weak_one_b32 = make_config("mlp", 1000, 32, 1, kOneRank, "weak");
  const StudyAnalysis a = analyze_study({one_g32, two_g64, weak_one_b32, one_g64});
  ASSERT_EQ(a.comparisons.size(), 1u);
  // The per-rank batch of two_g64 equals one_g32's and weak_one_b32's: neither is its twin.
  EXPECT_EQ(a.comparisons[0].one_gpu, index_of(a, one_g64.id));
  EXPECT_EQ(a.comparisons[0].n_gpu, index_of(a, two_g64.id));
  EXPECT_TRUE(a.unmatched.empty());
}

TEST(TwinMatching, OtherProfileExecDtypeOptimizerOrRateNeverMatch) {
  const std::vector<std::pair<std::string, std::function<void(ConfigParams&)>>> changes = {
      {"nccl_profile", [](ConfigParams& p) { p.nccl_profile = "nvls_off"; }},
      {"exec", [](ConfigParams& p) { p.exec = "compiled"; }},
      {"dtype", [](ConfigParams& p) { p.dtype = "bfloat16"; }},
      {"optimizer", [](ConfigParams& p) { p.optimizer = "sgd"; }},
      {"learning_rate", [](ConfigParams& p) { p.learning_rate = 1e-2; }},
      // Differs in the 8th significant digit: still another experiment.
      {"learning_rate 1.0000001e-3", [](ConfigParams& p) { p.learning_rate = 1.0000001e-3; }},
      {"device", [](ConfigParams& p) { p.device = "cuda"; }},
      {"measured_steps", [](ConfigParams& p) { p.measured_steps = 50; }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);
    ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);
    change(two.params);
    EXPECT_NE(twin_key(one.params), twin_key(two.params));
    StudyAnalysis a = analyze_study({one, two});
    EXPECT_TRUE(a.comparisons.empty());
    EXPECT_EQ(a.unmatched, std::vector<size_t>{index_of(a, two.id)});

    // With the same change on the 1-rank side they are twins again.
    ConfigRecord one_changed = one;
    change(one_changed.params);
    a = analyze_study({one_changed, two});
    ASSERT_EQ(a.comparisons.size(), 1u);
    EXPECT_EQ(a.comparisons[0].one_gpu, index_of(a, one_changed.id));
  }
}

TEST(TwinMatching, BucketAndOverlapVariantsAllShareTheOneRankConfig) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);
  std::vector<ConfigRecord> configs = {one};
  const std::vector<std::pair<double, bool>> variants = {{25, true}, {25, false}, {1, true}, {100, false}};
  for (const auto& [bucket, overlap] : variants) {
    ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);
    two.params.bucket_mb = bucket;
    two.params.overlap = overlap;
    two.id += "_bk" + std::to_string(static_cast<int>(bucket)) + (overlap ? "_ov" : "_noov");
    configs.push_back(two);
  }
  const StudyAnalysis a = analyze_study(configs);
  ASSERT_EQ(a.comparisons.size(), 4u);
  for (const Comparison& c : a.comparisons) {
    EXPECT_EQ(c.one_gpu, index_of(a, one.id)) << a.configs[c.n_gpu].id;
    EXPECT_DOUBLE_EQ(c.speedup.speedup, 1.8);  // 900/5 over 500/5
  }
  EXPECT_TRUE(a.unmatched.empty());
}

TEST(TwinMatching, NRankConfigWithoutTwinIsUnmatched) {
  const ConfigRecord one = make_config("mlp", 1000, 32, 1, kOneRank);
  const ConfigRecord two = make_config("mlp", 1000, 32, 2, kTwoRanks);
  const ConfigRecord four_other_model = make_config("cnn", 5000, 32, 4, {300, 310, 305});
  const ConfigRecord four_other_batch = make_config("mlp", 1000, 64, 4, {300, 310, 305});
  const StudyAnalysis a = analyze_study({four_other_model, one, two, four_other_batch});
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_EQ(a.comparisons[0].n_gpu, index_of(a, two.id));
  std::vector<size_t> expected = {index_of(a, four_other_model.id), index_of(a, four_other_batch.id)};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(a.unmatched, expected);
  EXPECT_EQ(a.world_sizes, (std::vector<int>{1, 2, 4}));
  // Thresholds and break-even only for world sizes that were compared.
  EXPECT_EQ(a.break_even.size(), 1u);
  EXPECT_EQ(a.break_even.count(ThresholdGroup{2, "eager", "float32"}), 1u);
  EXPECT_EQ(a.thresholds.count(ThresholdGroup{4, "eager", "float32"}), 0u);
  // Sorted by parameter count: mlp (1,000) before cnn (5,000).
  EXPECT_EQ(a.models, (std::vector<std::string>{"mlp", "cnn"}));
}

}  // namespace
}  // namespace ddpscale
