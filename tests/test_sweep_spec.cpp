#include "results/store/config_fields.hpp"
#include "results/store/run_store.hpp"
#include "trainer/study/sweep_plan.hpp"
#include "trainer/study/sweep_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace ddpscale {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_sweep_spec(text, "spec.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSpec, ParsesTheGridAndDefaults) {
  const auto spec = parse_sweep_spec("models: [mlp-medium, lstm]\nbatch_sizes: [8, 16]\nworld_sizes: [1, 2]\nruns: 7\n",
                                     "spec.yaml");
  EXPECT_EQ(spec.models, (std::vector<std::string>{"mlp-medium", "lstm"}));
  EXPECT_EQ(spec.batch_sizes, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(spec.base.runs, 7);
  EXPECT_EQ(spec.base.steps, 100);  // default
  EXPECT_EQ(spec.scaling, (std::vector<std::string>{"weak"}));
  EXPECT_EQ(spec.base.gpu_busy_steps, 0);  // the kernel-time floor is opt-in
  EXPECT_EQ(parse_sweep_spec("models: [m]\nbatch_sizes: [8]\nworld_sizes: [1]\ngpu_busy_steps: 20\n", "s.yaml")
                .base.gpu_busy_steps,
            20);
  EXPECT_THROW(parse_sweep_spec("models: [m]\nbatch_sizes: [8]\nworld_sizes: [1]\ngpu_busy_steps: -1\n", "s.yaml"),
               SpecError);
}

// Interleaving twins' runs is opt-in, and only true or false are accepted.
TEST(SweepSpec, InterleaveRunsIsABooleanOffByDefault) {
  const std::string grid = "models: [m]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\n";
  EXPECT_TRUE(parse_sweep_spec(grid, "s.yaml").interleave_runs);  // on unless asked otherwise
  EXPECT_FALSE(parse_sweep_spec(grid + "design: runs\ninterleave_runs: false\n", "s.yaml").interleave_runs);
  EXPECT_NE(error_of(grid + "interleave_runs: sometimes\n").find("key 'interleave_runs': expected true or false"),
            std::string::npos)
      << error_of(grid + "interleave_runs: sometimes\n");
}

// The paired design is the default; runs is the other choice; the paired design measures each
// N-rank configuration beside its twin, so it refuses interleave_runs: false, naming the fix.
TEST(SweepSpec, DesignIsPairedByDefaultAndRefusesSeparatedTwins) {
  const std::string grid = "models: [m]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\n";
  const SweepSpec defaults = parse_sweep_spec(grid, "s.yaml");
  EXPECT_EQ(defaults.design, "paired");
  EXPECT_EQ(defaults.paired_seconds, kDefaultPairedSeconds);
  EXPECT_EQ(parse_sweep_spec(grid + "design: runs\n", "s.yaml").design, "runs");
  EXPECT_EQ(parse_sweep_spec(grid + "paired_seconds: 0.5\n", "s.yaml").paired_seconds, 0.5);
  EXPECT_NE(error_of(grid + "design: duet\n").find("key 'design': is paired"), std::string::npos)
      << error_of(grid + "design: duet\n");
  EXPECT_NE(error_of(grid + "paired_seconds: 0\n").find("paired_seconds"), std::string::npos);
  EXPECT_EQ(defaults.paired_window, kDefaultPairedWindow);
  EXPECT_EQ(parse_sweep_spec(grid + "paired_window: 1\n", "s.yaml").paired_window, 1);
  EXPECT_NE(error_of(grid + "paired_window: 0\n").find("paired_window"), std::string::npos);
  const std::string separated = error_of(grid + "interleave_runs: false\n");
  EXPECT_NE(separated.find("needs design: runs"), std::string::npos) << separated;
}

// target_half_width turns on launches until precise; min_launches (2 or more) only with it,
// and by default the lesser of 4 and the launches.
TEST(SweepSpec, TargetHalfWidthAndMinLaunches) {
  const std::string grid = "models: [m]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\nlaunches: 10\nruns: 10\n";
  const SweepSpec off = parse_sweep_spec(grid, "s.yaml");
  EXPECT_EQ(off.target_half_width, 0.0);
  EXPECT_EQ(min_launches_for(off, 10), 0);
  const SweepSpec on = parse_sweep_spec(grid + "target_half_width: 0.05\n", "s.yaml");
  EXPECT_DOUBLE_EQ(on.target_half_width, 0.05);
  EXPECT_EQ(min_launches_for(on, 10), 4);
  EXPECT_EQ(min_launches_for(on, 3), 3);
  EXPECT_EQ(min_launches_for(parse_sweep_spec(grid + "target_half_width: 0.05\nmin_launches: 6\n", "s.yaml"), 10), 6);
  EXPECT_NE(error_of(grid + "target_half_width: 5\n").find("below 1"), std::string::npos)
      << error_of(grid + "target_half_width: 5\n");
  EXPECT_NE(error_of(grid + "target_half_width: 0\n").find("target_half_width"), std::string::npos);
  EXPECT_NE(error_of(grid + "min_launches: 5\n").find("only counts with target_half_width"), std::string::npos)
      << error_of(grid + "min_launches: 5\n");
  EXPECT_NE(error_of(grid + "target_half_width: 0.05\nmin_launches: 1\n").find("2 or more"), std::string::npos);
}

// placement_shifts_mib is --placement-shifts-mib: a list of MiB, none by default.
TEST(SweepSpec, PlacementShiftsAreAListOfMib) {
  const std::string grid = "models: [m]\nbatch_sizes: [8]\nworld_sizes: [1]\n";
  EXPECT_TRUE(parse_sweep_spec(grid, "s.yaml").base.placement_shifts_mib.empty());
  EXPECT_EQ(parse_sweep_spec(grid + "placement_shifts_mib: [0, 20, 40, 60]\n", "s.yaml").base.placement_shifts_mib,
            (std::vector<int>{0, 20, 40, 60}));
  EXPECT_EQ(error_of(grid + "placement_shifts_mib: [0, -20]\n"),
            "spec.yaml:4: key 'placement_shifts_mib': must not be negative");
}

// process_shifts_mib gives launch k (0-based) the (k mod n)-th amount; none holds 0.
TEST(SweepSpec, ProcessShiftsGoToTheLaunchesInTurn) {
  const std::string grid = "models: [m]\nbatch_sizes: [8]\nworld_sizes: [1]\n";
  const SweepSpec none = parse_sweep_spec(grid, "s.yaml");
  EXPECT_TRUE(none.process_shifts_mib.empty());
  EXPECT_EQ(process_shift_of_launch(none, 3), 0);
  const SweepSpec shifted = parse_sweep_spec(grid + "process_shifts_mib: [0, 20, 40]\n", "s.yaml");
  EXPECT_EQ(shifted.process_shifts_mib, (std::vector<int>{0, 20, 40}));
  const std::vector<int> expected = {0, 20, 40, 0, 20, 40};
  for (int launch = 0; launch < 6; ++launch) EXPECT_EQ(process_shift_of_launch(shifted, launch), expected[launch]);
  EXPECT_EQ(error_of(grid + "process_shifts_mib: [20, -20]\n"),
            "spec.yaml:4: key 'process_shifts_mib': must not be negative");
}

TEST(SweepSpec, UnknownKeyNamesFileLineAndKey) {
  const std::string error = error_of("models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1]\nbatch_size: 3\n");
  EXPECT_EQ(error.rfind("spec.yaml:4: key 'batch_size': unknown key; the keys are ", 0), 0u) << error;
  // Every key, so the typo's right spelling is in the message.
  EXPECT_NE(error.find(", batch_sizes, "), std::string::npos) << error;
  EXPECT_NE(error.find("(experiments/README.md describes them)"), std::string::npos) << error;
}

TEST(SweepSpec, WrongTypesAndValuesAreNamed) {
  EXPECT_EQ(error_of("models: [mlp-medium]\nbatch_sizes: [8, eight]\nworld_sizes: [1]\n"),
            "spec.yaml:2: key 'batch_sizes': expected positive integers, got 'eight'");
  EXPECT_EQ(error_of("models: [mlp-medium]\nbatch_sizes: [0]\nworld_sizes: [1]\n"),
            "spec.yaml:2: key 'batch_sizes': must be positive, got 0");
  EXPECT_EQ(error_of("models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1]\nruns: -3\n"),
            "spec.yaml:4: key 'runs': must be positive, got -3");
  EXPECT_EQ(error_of("models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1]\noverlap: maybe\n"),
            "spec.yaml:4: key 'overlap': expected true or false, got 'maybe'");
}

TEST(SweepSpec, MissingRequiredKeyAndNotYaml) {
  EXPECT_EQ(error_of("models: [mlp-medium]\nworld_sizes: [1]\n"), "spec.yaml: key 'batch_sizes' is required");
  EXPECT_NE(error_of("models: [mlp-medium\nbatch_sizes: [8]\n").find("spec.yaml:"), std::string::npos);
  EXPECT_NE(error_of("models: [mlp-medium\nbatch_sizes: [8]\n").find("not valid YAML"), std::string::npos);
  EXPECT_EQ(error_of("just a string"), "spec.yaml: expected a YAML map of keys (models, batch_sizes, ...)");
}

TEST(SweepSpec, MissingFileIsNamed) {
  try {
    load_sweep_spec("/nonexistent/dir/spec.yaml");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/dir/spec.yaml: cannot open the sweep spec (missing or unreadable)");
  }
}

TEST(SweepSpec, NcclProfileWithForeignKeyIsRejected) {
  const auto message = error_of(
      "models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [2]\nnccl_profiles:\n  bad:\n    OMP_NUM_THREADS: 4\n");
  EXPECT_NE(message.find("spec.yaml:6"), std::string::npos) << message;
  EXPECT_NE(message.find("OMP_NUM_THREADS"), std::string::npos) << message;
}

TEST(SweepSpec, ExpansionAlternatesWorldSizesAbba) {
  const auto spec = parse_sweep_spec("models: [m]\nbatch_sizes: [8, 16, 32]\nworld_sizes: [2, 1]\n", "s.yaml");
  const auto configs = expand_sweep(spec, "default");
  ASSERT_EQ(configs.size(), 6u);
  std::vector<std::pair<int64_t, int>> order;
  for (const auto& c : configs) order.emplace_back(fixed_batch(c.options), c.options.world_size);
  EXPECT_EQ(order, (std::vector<std::pair<int64_t, int>>{{8, 1}, {8, 2}, {16, 2}, {16, 1}, {32, 1}, {32, 2}}));
}

// A 1-rank configuration takes turns with the one twin next to it in run order: with two
// world sizes above 1, the larger one's configurations are left to whole runs, and the
// sweep says so (the 4-GPU seed study under strong scaling ran that way once, unnoticed).
TEST(SweepSpec, SeveralWorldSizesLeaveTheFarTwinsUnpairedAndSaySo) {
  const std::string grid = "models: [mlp-medium]\nbatch_sizes: [8, 16]\nscaling: weak\n";
  const SweepSpec three = parse_sweep_spec(grid + "world_sizes: [1, 2, 4]\n", "three.yaml");
  const auto unpaired = unpaired_n_rank_configurations(three, expand_sweep(three, "default"), false);
  ASSERT_EQ(unpaired.size(), 2u);
  for (const std::string& name : unpaired) EXPECT_NE(name.find("world 4"), std::string::npos) << name;
  const std::string note = unpaired_note(three, unpaired);
  EXPECT_NE(note.find("2 N-rank configurations of three.yaml"), std::string::npos) << note;
  EXPECT_NE(note.find("world_sizes: [1, N]"), std::string::npos) << note;

  const SweepSpec two = parse_sweep_spec(grid + "world_sizes: [1, 4]\n", "two.yaml");
  EXPECT_TRUE(unpaired_n_rank_configurations(two, expand_sweep(two, "default"), false).empty());
  const SweepSpec runs = parse_sweep_spec(grid + "world_sizes: [1, 2, 4]\ndesign: runs\n", "runs.yaml");
  EXPECT_TRUE(unpaired_n_rank_configurations(runs, expand_sweep(runs, "default"), false).empty());
  EXPECT_EQ(unpaired_note(two, {}), "");
}

TEST(SweepSpec, OverridesChangeStepsAndBatchSizesOfNamedModels) {
  const auto spec = parse_sweep_spec(
      "models: [small, big]\nbatch_sizes: [8]\nworld_sizes: [1]\nsteps: 100\n"
      "overrides:\n  - models: [big]\n    steps: 20\n    batch_sizes: [4, 8]\n",
      "s.yaml");
  const auto configs = expand_sweep(spec, "default");
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(configs[0].options.model, "small");
  EXPECT_EQ(configs[0].options.steps, 100);
  EXPECT_EQ(configs[1].options.model, "big");
  EXPECT_EQ(configs[1].options.steps, 20);
  EXPECT_EQ(fixed_batch(configs[1].options), 4);
  EXPECT_EQ(fixed_batch(configs[2].options), 8);
}

TEST(SweepSpec, WorldOneIsNotRepeatedPerBucketSize) {
  const auto spec = parse_sweep_spec("models: [m]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\nbucket_mb: [1, 25]\n", "s");
  const auto configs = expand_sweep(spec, "default");
  // world 1 once, world 2 for each bucket size
  ASSERT_EQ(configs.size(), 3u);
  int world_one = 0;
  for (const auto& c : configs) world_one += c.options.world_size == 1;
  EXPECT_EQ(world_one, 1);
}

// The allreduce's precision only matters with communication: one 1-rank twin serves both,
// and only the bf16 configuration's id says so (float32 ids stay as they were, so older
// studies still resume).
TEST(SweepSpec, AllreduceDtypeIsADimensionOfMultiRankConfigurationsOnly) {
  const auto spec =
      parse_sweep_spec("models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\nallreduce_dtype: [fp32, bf16]\n", "s.yaml");
  EXPECT_EQ(spec.allreduce_dtypes, (std::vector<std::string>{"float32", "bfloat16"}));
  const auto configs = expand_sweep(spec, "default");
  ASSERT_EQ(configs.size(), 3u);
  std::vector<std::string> ids;
  for (const auto& c : configs) ids.push_back(config_id(config_params(c.options, c.options.world_size, 258432, false)));
  EXPECT_EQ(ids, (std::vector<std::string>{"mlp-medium_b8_w1_weak_adam_float32_bk25_ov_eager_default",
                                           "mlp-medium_b8_w2_weak_adam_float32_bk25_ov_eager_default",
                                           "mlp-medium_b8_w2_weak_adam_float32_bk25_ov_eager_default_ar-bfloat16"}));
  EXPECT_THROW(parse_sweep_spec("models: [m]\nbatch_sizes: [8]\nworld_sizes: [2]\nallreduce_dtype: [int8]\n", "s.yaml"),
               SpecError);
}

TEST(SweepSpec, DtypeIsADimensionWithOneNamePerPrecision) {
  const auto spec = parse_sweep_spec("models: [m]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\ndtype: [fp32, bf16]\n", "s.yaml");
  EXPECT_EQ(spec.dtypes, (std::vector<std::string>{"float32", "bfloat16"}));
  const auto configs = expand_sweep(spec, "default");
  ASSERT_EQ(configs.size(), 4u);  // each precision on 1 and 2 ranks: a 1-GPU twin per dtype
  EXPECT_EQ(configs[0].options.dtype, "float32");
  EXPECT_EQ(configs[1].options.dtype, "float32");
  EXPECT_EQ(configs[2].options.dtype, "bfloat16");
  EXPECT_EQ(configs[3].options.dtype, "bfloat16");
  EXPECT_EQ(expand_sweep(parse_sweep_spec("models: [m]\nbatch_sizes: [8]\nworld_sizes: [1]\n", "s.yaml"), "default")
                .front()
                .options.dtype,
            "float32");  // the default
  EXPECT_EQ(error_of("models: [m]\nbatch_sizes: [8]\nworld_sizes: [1]\ndtype: [float32, fp16]\n"),
            "spec.yaml:4: key 'dtype': 'fp16' is not float32 (fp32) or bfloat16 (bf16)");
}

TEST(SweepSpec, ExecIsADimension) {
  const auto spec = parse_sweep_spec("models: [m]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\nexec: [eager, graph]\n", "s.yaml");
  const auto configs = expand_sweep(spec, "default");
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_EQ(configs[0].options.exec, "eager");
  EXPECT_EQ(configs[3].options.exec, "graph");
  EXPECT_EQ(error_of("models: [m]\nbatch_sizes: [8]\nworld_sizes: [1]\nexec: jit\n"),
            "spec.yaml:4: key 'exec': 'jit' is not eager or graph");
}

// expand_sweep walks exactly the fields the table marks as sweep dimensions: a new
// dimension in the table without its setter in sweep_spec.cpp (or the reverse) fails here.
TEST(SweepSpec, ExpansionVariesTheTablesSweepDimensions) {
  std::set<std::string> table;
  for (const auto& field : kConfigFields)
    if (field.sweep == Sweep::dimension) table.insert(field.attribute);
  const auto walked = swept_fields();
  EXPECT_EQ(std::set<std::string>(walked.begin(), walked.end()), table);
  EXPECT_EQ(walked.size(), table.size()) << "a field walked twice";
}

}  // namespace
}  // namespace ddpscale
