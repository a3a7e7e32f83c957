// A configuration's options checked before anything runs (study/train_options): --exec graph's
// requirements, dtype spellings, the ABBA order of --alternate-phase-timing, and what
// --gpu-busy-steps and --gpu-kernels need, and that --take-turns is for one rank.
#include "trainer/engine/engine_options.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/study/train_options.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ddpscale {
namespace {

// The UsageError's message validate_train_options gives, or "" when it accepts the options.
std::string refusal(const TrainOptions& o, int launched_ranks, bool on_cuda) {
  try {
    validate_train_options(o, launched_ranks, on_cuda);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// What --exec graph needs, each refused with a message saying what to change.
TEST(TrainOptions, GraphModeRequirementsAreNamed) {
  auto message = [](const TrainOptions& o, bool on_cuda) { return refusal(o, 2, on_cuda); };
  TrainOptions o;
  o.model = "mlp-medium";
  o.exec = "jit";
  EXPECT_EQ(message(o, true), "--exec 'jit' is not eager or graph");
  o.exec = "graph";
  if (!built_with_cuda_graphs()) {
    // This build (CPU CI) cannot capture graphs at all, and says how to get one.
    EXPECT_NE(message(o, true).find("-DDDPSCALE_CUDA_GRAPHS=ON"), std::string::npos) << message(o, true);
    return;
  }
  EXPECT_NE(message(o, false).find("needs GPUs"), std::string::npos);
  o.optimizer_impl = "libtorch";
  EXPECT_NE(message(o, true).find("counts its steps on the host"), std::string::npos);
  o.optimizer_impl = "auto";
  o.data = "host";
  EXPECT_NE(message(o, true).find("--data device"), std::string::npos);
  o.data = "device";
  o.warmup = 1;
  EXPECT_NE(message(o, true).find("--warmup 2"), std::string::npos);
  o.warmup = 10;
  EXPECT_EQ(message(o, true), "");
}

TEST(TrainOptions, DtypeSpellingsAreCanonical) {
  EXPECT_EQ(canonical_dtype("fp32"), "float32");
  EXPECT_EQ(canonical_dtype("float32"), "float32");
  EXPECT_EQ(canonical_dtype("bf16"), "bfloat16");
  EXPECT_EQ(canonical_dtype("bfloat16"), "bfloat16");
  EXPECT_THROW(canonical_dtype("float16"), UsageError);
}

TEST(TrainOptions, AlternatePhaseTimingTimesRunsInAbbaOrder) {
  TrainOptions o;
  o.alternate_phase_timing = true;
  const std::vector<bool> expected = {true, false, false, true, true, false, false, true};
  for (int k = 0; k < 8; ++k) EXPECT_EQ(phase_timed_run(o, k), expected[static_cast<size_t>(k)]) << "run " << k;
  o.alternate_phase_timing = false;
  EXPECT_TRUE(phase_timed_run(o, 1));
  o.phase_timing = false;
  EXPECT_FALSE(phase_timed_run(o, 0));
  o.alternate_phase_timing = true;  // with --no-phase-timing: refused, not silently untimed
  EXPECT_THROW(validate_train_options(o, 1, false), UsageError);
}

TEST(TrainOptions, GpuBusyStepsNeedGpus) {
  TrainOptions o;
  o.gpu_busy_steps = 20;
  const std::string on_cpu = refusal(o, 1, /*on_cuda=*/false);
  EXPECT_NE(on_cpu.find("on CPU there is none"), std::string::npos) << "refusal: '" << on_cpu << "'";
  EXPECT_NO_THROW(validate_train_options(o, 1, /*on_cuda=*/true));
  o.gpu_busy_steps = -1;
  EXPECT_THROW(validate_train_options(o, 1, true), UsageError);
}

// Standard input reaches rank 0 only: taking turns is for one rank, on CPU or GPU.
TEST(TrainOptions, TakeTurnsNeedsExactlyOneRank) {
  TrainOptions o;
  o.take_turns = true;
  EXPECT_NO_THROW(validate_train_options(o, 1, /*on_cuda=*/false));
  EXPECT_NO_THROW(validate_train_options(o, 1, /*on_cuda=*/true));
  const std::string two_ranks = refusal(o, 2, /*on_cuda=*/false);
  EXPECT_NE(two_ranks.find("launch 1 rank, not 2"), std::string::npos) << "refusal: '" << two_ranks << "'";
  o.world_size = 1;  // one of two launched ranks trains: allowed, as the others leave
  EXPECT_NO_THROW(validate_train_options(o, 2, /*on_cuda=*/false));
}

TEST(TrainOptions, GpuKernelsNeedProfiledStepsAndAnExistingFolder) {
  TrainOptions o;
  o.gpu_kernels = "kernels";
  EXPECT_THROW(validate_train_options(o, 1, /*on_cuda=*/true), UsageError);  // nothing profiled
  o.gpu_busy_steps = 20;
  EXPECT_NO_THROW(validate_train_options(o, 1, true));
  o.gpu_kernels = "/nonexistent-folder/kernels";
  EXPECT_THROW(validate_train_options(o, 1, true), UsageError);
  EXPECT_EQ(kernel_table_path("out/mlp", 1), "out/mlp.rank1.csv");
}

TEST(TrainOptions, GpuTraceNeedsProfiledStepsAndAnExistingFolder) {
  TrainOptions o;
  o.gpu_trace = "trace";
  const std::string no_steps = refusal(o, 1, /*on_cuda=*/true);
  EXPECT_NE(no_steps.find("--gpu-trace writes the trace of the profiled steps: add --gpu-busy-steps"),
            std::string::npos)
      << "refusal: '" << no_steps << "'";
  o.gpu_busy_steps = 20;
  EXPECT_NO_THROW(validate_train_options(o, 1, true));
  o.gpu_trace = "/nonexistent-folder/trace";
  EXPECT_THROW(validate_train_options(o, 1, true), UsageError);
  EXPECT_EQ(trace_path("out/lstm", 3), "out/lstm.rank3.json");
}

// --process-shift: one amount for the whole process, GPU only, bounded like a placement shift.
TEST(TrainOptions, ProcessShiftIsGpuOnlyAndBounded) {
  TrainOptions o;
  o.process_shift_mib = 20;
  EXPECT_NO_THROW(validate_train_options(o, 1, /*on_cuda=*/true));
  const std::string on_cpu = refusal(o, 1, /*on_cuda=*/false);
  EXPECT_NE(on_cpu.find("--process-shift moves where GPU buffers land"), std::string::npos)
      << "refusal: '" << on_cpu << "'";
  o.process_shift_mib = -1;
  EXPECT_THROW(validate_train_options(o, 1, true), UsageError);
  o.process_shift_mib = 65537;
  EXPECT_THROW(validate_train_options(o, 1, true), UsageError);
  o.process_shift_mib = 0;
  EXPECT_NO_THROW(validate_train_options(o, 1, /*on_cuda=*/false));
}

TEST(TrainOptions, PlacementShiftsCycleOverRunsOnGpusOnly) {
  TrainOptions o;
  o.runs = 6;
  o.placement_shifts_mib = {0, 20, 40};
  EXPECT_NO_THROW(validate_train_options(o, 1, /*on_cuda=*/true));
  const std::string on_cpu = refusal(o, 1, /*on_cuda=*/false);
  EXPECT_NE(on_cpu.find("on CPU there are none"), std::string::npos) << "refusal: '" << on_cpu << "'";
  // Run k holds the (k mod 3)-th shift; the engine of run 4 gets 20 MiB.
  EXPECT_EQ(placement_shift_of_run(o, 0), 0);
  EXPECT_EQ(placement_shift_of_run(o, 2), 40);
  EXPECT_EQ(placement_shift_of_run(o, 4), 20);
  EXPECT_EQ(engine_options(o, 1, 4).placement_shift_mib, 20);
  EXPECT_EQ(engine_options(o, 1, 5).placement_shift_mib, 40);
  o.runs = 5;  // 0 and 20 MiB would run twice, 40 MiB once
  const std::string unequal = refusal(o, 1, true);
  EXPECT_NE(unequal.find("make --runs a multiple of it"), std::string::npos) << "refusal: '" << unequal << "'";
  o.runs = 3;
  o.placement_shifts_mib = {0, -20, 40};
  EXPECT_THROW(validate_train_options(o, 1, true), UsageError);
  o.placement_shifts_mib = {0, 20, 65537};
  EXPECT_THROW(validate_train_options(o, 1, true), UsageError);
  TrainOptions none;
  EXPECT_EQ(placement_shift_of_run(none, 7), -1);  // no shift, and the cache is left alone
  EXPECT_EQ(engine_options(none, 1, 7).placement_shift_mib, -1);
}

}  // namespace
}  // namespace ddpscale
