// The memory pre-flight's arithmetic (study/memory_preflight): the estimate counted by hand
// for models of known size, the verdict's text with both numbers, --no-memory-check, and the
// parsers of /proc/meminfo and the cgroup files. Nothing here reads the machine.
#include "models/model_catalog.hpp"
#include "trainer/study/memory_preflight.hpp"
#include "trainer/study/paired_blocks.hpp"
#include "trainer/study/train_options.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ddpscale {
namespace {

// A model of 1,000,000 parameters whose activations the pre-flight does not estimate
// (a TorchScript model's layers are unknown), so only the parameter-bound terms count.
ModelDescription million_parameter_torchscript() {
  ModelDescription d;
  d.name = "torchscript:m.pt";
  d.family = "torchscript";
  d.parameters = 1'000'000;
  d.weight_bytes_fp32 = 4'000'000;
  d.adam_state_bytes_fp32 = 8'000'000;
  return d;
}

TrainOptions options(const std::string& optimizer, int64_t batch) {
  TrainOptions o;
  o.optimizer = optimizer;
  set_fixed_batch(o, batch);
  return o;
}

TEST(MemoryPreflight, AdamCountsWeightsGradientsAndTwoMoments) {
  const MemoryEstimate e = estimate_training_memory(million_parameter_torchscript(), options("adam", 32), 1);
  EXPECT_EQ(e.weights, 4'000'000);
  EXPECT_EQ(e.gradients, 4'000'000);
  EXPECT_EQ(e.optimizer_state, 8'000'000);  // two fp32 moments per parameter
  EXPECT_EQ(e.gradient_buckets, 0);         // one rank: no DDP buckets
  EXPECT_EQ(e.activations, 0);
  EXPECT_FALSE(e.activations_estimated);
  EXPECT_EQ(e.total(), 16'000'000);
}

TEST(MemoryPreflight, PlainSgdKeepsNoState) {
  const MemoryEstimate e = estimate_training_memory(million_parameter_torchscript(), options("sgd", 32), 1);
  EXPECT_EQ(e.optimizer_state, 0);
  EXPECT_EQ(e.total(), 8'000'000);
}

TEST(MemoryPreflight, BucketsOnSeveralRanksAndTheirBfloat16Copies) {
  TrainOptions o = options("adam", 32);
  o.bucket_mb = 1;
  EXPECT_EQ(estimate_training_memory(million_parameter_torchscript(), o, 2).gradient_buckets, 1'048'576);
  o.allreduce_dtype = "bfloat16";  // plus a bf16 copy of every gradient: half their 4,000,000 bytes
  EXPECT_EQ(estimate_training_memory(million_parameter_torchscript(), o, 2).gradient_buckets, 1'048'576 + 2'000'000);
  o.bucket_mb = 25;  // a bucket larger than all gradients holds them all, not 25 MiB
  o.allreduce_dtype = "float32";
  EXPECT_EQ(estimate_training_memory(million_parameter_torchscript(), o, 2).gradient_buckets, 4'000'000);
}

// An MLP of 3,000,000 parameters stands for four hidden layers of width 1000 (3 w^2), each
// keeping 3 tensors of its width per sample: 12,000 floats, 48,000 bytes a sample.
TEST(MemoryPreflight, MlpActivationsGrowWithTheBatchPerRank) {
  ModelDescription mlp = million_parameter_torchscript();
  mlp.family = "mlp";
  mlp.parameters = 3'000'000;
  EXPECT_EQ(estimate_training_memory(mlp, options("adam", 10), 1).activations, 480'000);
  TrainOptions strong = options("adam", 20);
  strong.scaling = "strong";
  set_fixed_batch(strong, 20);  // global batch 20 over 2 ranks: 10 per rank
  EXPECT_EQ(estimate_training_memory(mlp, strong, 2).activations, 480'000);
  TrainOptions bf16 = options("adam", 10);
  bf16.dtype = "bfloat16";
  EXPECT_EQ(estimate_training_memory(mlp, bf16, 1).activations, 240'000);
}

// The case: transformer@2B under Adam on a 24 GiB machine with 2 ranks on it.
// Weights, gradients and two moments alone are 16 bytes a parameter: about 32 GB per rank.
TEST(MemoryPreflight, TwoBillionParameterTransformerIsRefusedWithBothNumbers) {
  const ModelDescription model = describe_model("transformer@2B", ModelOptions{});
  const MemoryEstimate e = estimate_training_memory(model, options("adam", 32), 2);
  EXPECT_EQ(e.weights + e.gradients + e.optimizer_state, 16 * model.parameters);
  EXPECT_GT(e.activations, 0);
  FreeMemory free;
  free.bytes = int64_t(24) << 30;
  free.where = "host vm (MemAvailable in /proc/meminfo)";
  free.ranks_sharing = 2;
  const MemoryVerdict verdict = preflight_verdict(model, options("adam", 32), 2, free, true);
  EXPECT_FALSE(verdict.fits);
  EXPECT_NE(verdict.message.find("transformer@2B at batch 32 per rank (adam) does not fit in memory: it needs an "
                                 "estimated " + human_bytes(e.total()) + " per rank x 2 ranks sharing it = " +
                                 human_bytes(2 * e.total())),
            std::string::npos)
      << verdict.message;
  EXPECT_NE(verdict.message.find("but host vm (MemAvailable in /proc/meminfo) has 24.0 GiB free"), std::string::npos)
      << verdict.message;
  EXPECT_NE(verdict.message.find("--no-memory-check"), std::string::npos);
  EXPECT_NE(verdict.message.find("smaller model or batch"), std::string::npos);
}

// The verdict compares the shared demand (ranks x estimate) with the free memory, equal fits.
TEST(MemoryPreflight, VerdictFitsUpToTheLastByte) {
  MemoryEstimate e;
  e.weights = 100;
  FreeMemory free;
  free.bytes = 200;
  free.ranks_sharing = 2;
  EXPECT_TRUE(memory_verdict("m", e, free).fits);
  EXPECT_TRUE(memory_verdict("m", e, free).message.empty());
  free.bytes = 199;
  EXPECT_FALSE(memory_verdict("m", e, free).fits);
}

// A small model against a fake, tiny free memory: refused, unless the check is off
// (--no-memory-check, memory_check: false), which accepts without looking.
TEST(MemoryPreflight, NoMemoryCheckSkipsTheVerdict) {
  const ModelDescription model = describe_model("mlp-medium", ModelOptions{});
  FreeMemory tiny;
  tiny.bytes = 1024;
  tiny.where = "a fake host";
  const MemoryVerdict checked = preflight_verdict(model, options("adam", 32), 1, tiny, true);
  EXPECT_FALSE(checked.fits);
  EXPECT_NE(checked.message.find("but a fake host has 0.0 MiB free"), std::string::npos) << checked.message;
  const MemoryVerdict skipped = preflight_verdict(model, options("adam", 32), 1, tiny, false);
  EXPECT_TRUE(skipped.fits);
  EXPECT_TRUE(skipped.message.empty());
}

TEST(MemoryPreflight, HumanUnits) {
  EXPECT_EQ(human_bytes(int64_t(3) << 29), "1.5 GiB");
  EXPECT_EQ(human_bytes(int64_t(512) << 20), "512.0 MiB");
}

TEST(MemoryPreflight, MemAvailableFromProcMeminfo) {
  const std::string meminfo = "MemTotal:       24598272 kB\nMemFree:         1183744 kB\nMemAvailable:   19068780 kB\n";
  EXPECT_EQ(mem_available_from_meminfo(meminfo), int64_t(19068780) * 1024);
  EXPECT_FALSE(mem_available_from_meminfo("MemTotal: 1 kB\n").has_value());
}

TEST(MemoryPreflight, CgroupHeadroomCountsReclaimableCacheAsFree) {
  EXPECT_EQ(cgroup_headroom("8589934592\n", "2147483648\n"), int64_t(6) << 30);
  EXPECT_EQ(cgroup_headroom("8589934592\n", "2147483648\n", int64_t(1) << 30), int64_t(7) << 30);
  EXPECT_EQ(cgroup_headroom("1000\n", "5000\n"), 0);  // over its limit: nothing free, not negative
  EXPECT_FALSE(cgroup_headroom("max\n", "2147483648\n").has_value());                   // v2: no limit
  EXPECT_FALSE(cgroup_headroom("9223372036854771712\n", "7160512512\n").has_value());  // v1: no limit
  EXPECT_FALSE(cgroup_headroom("", "").has_value());                                    // no such files
}

TEST(MemoryPreflight, CgroupV2PathOfThisProcess) {
  EXPECT_EQ(cgroup_v2_path("0::/user.slice/session-1.scope\n"), "/user.slice/session-1.scope");
  EXPECT_EQ(cgroup_v2_path("4:memory:/docker/abc\n0::/\n"), "/");
  EXPECT_FALSE(cgroup_v2_path("4:memory:/docker/abc\n").has_value());
}

// ---- The paired design's windows: how many speedups keep their sessions live together ----

TEST(PairedWindowLength, StopsAtTheSpecsMostOrTheMemoryBudget) {
  const std::vector<int64_t> bytes = {100, 200, 300, 400};
  EXPECT_EQ(paired_window_length(bytes, 1000, 16), 4u);  // 1000 bytes: all four fit exactly
  EXPECT_EQ(paired_window_length(bytes, 999, 16), 3u);   // the fourth would pass it by one byte
  EXPECT_EQ(paired_window_length(bytes, 1000, 2), 2u);   // the spec's paired_window
  EXPECT_EQ(paired_window_length(bytes, 50, 16), 1u);    // one always measures, even past the budget
}

TEST(PairedWindowLength, AModelOfUnknownActivationsMeasuresAlone) {
  EXPECT_EQ(paired_window_length({-1, 100, 100}, 1000, 16), 1u);  // it starts the window: alone
  EXPECT_EQ(paired_window_length({100, 100, -1, 100}, 1000, 16), 2u);  // the window ends before it
  EXPECT_EQ(paired_window_length({}, 1000, 16), 1u);
}

}  // namespace
}  // namespace ddpscale
