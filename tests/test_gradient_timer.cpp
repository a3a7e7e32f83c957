// Gradient timing (trainer/engine/gradient_timer.hpp): one instrumented step of a real
// one-rank session on the CPU records each trainable parameter with the time its gradient
// became ready, leaves the measured steps' results as they are without it, and works for
// TorchScript models. The 2-rank sweep writes the same record: sweep_gradient_timing.
#include "tests/temp_dir.hpp"
#include "tests/torchscript_fixtures.hpp"
#include "trainer/engine/training_session.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

SessionSetup one_rank_setup(int warmup, GradientTiming* timing) {
  SessionSetup setup;
  setup.options.model = "mlp-medium";
  setup.options.batch_per_rank = 8;
  setup.options.warmup = warmup;
  setup.options.steps = 3;
  setup.gradient_timing = timing;
  return setup;
}

std::vector<float> measured_losses(const SessionSetup& setup) {
  TrainingSession session(setup);
  RankTimings timings;
  std::vector<float> losses;
  session.run(timings, losses);
  return losses;
}

// Ready times lie inside backward; the record names what the model registers, in order.
void expect_plausible(const GradientTiming& t, const std::vector<std::string>& names) {
  ASSERT_EQ(t.parameters.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const ParameterGradient& p = t.parameters[i];
    EXPECT_EQ(p.name, names[i]);
    EXPECT_EQ(p.element_bytes, 4) << p.name;
    EXPECT_TRUE(std::isfinite(p.ready_us)) << p.name << " got no gradient";
    EXPECT_GE(p.ready_us, 0) << p.name;
    EXPECT_LE(p.ready_us, t.backward_us) << p.name;
  }
}

// mlp-medium is 799 -> 256 -> 128 -> 64 -> 192, registered fc1 to fc4: 8 parameters,
// 258,432 elements. Backward runs from the loss towards the input, so fc4's gradients are
// ready before fc1's.
TEST(GradientTiming, TheLastWarmupStepRecordsEveryParameterLastLayerFirst) {
  GradientTiming timing;
  measured_losses(one_rank_setup(2, &timing));
  EXPECT_EQ(timing.clock, "host");
  EXPECT_EQ(timing.step, "last_warmup");
  EXPECT_EQ(timing.run, 0);
  EXPECT_GT(timing.backward_us, 0);
  expect_plausible(timing, {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias",
                            "fc4.weight", "fc4.bias"});
  int64_t elements = 0;
  for (const ParameterGradient& p : timing.parameters) elements += p.elements;
  EXPECT_EQ(elements, 258432);
  EXPECT_EQ(timing.parameters[0].elements, 799 * 256);
  EXPECT_LT(timing.parameters[6].ready_us, timing.parameters[0].ready_us);  // fc4.weight before fc1.weight
  EXPECT_LT(timing.parameters[7].ready_us, timing.parameters[1].ready_us);  // fc4.bias before fc1.bias
}

// The timed step is a warm-up step the session takes anyway: the measured steps train the
// same model on the same data to the same losses, bit for bit.
TEST(GradientTiming, MeasuredStepsLossesAreUnchanged) {
  GradientTiming timing;
  const std::vector<float> timed = measured_losses(one_rank_setup(2, &timing));
  const std::vector<float> untimed = measured_losses(one_rank_setup(2, nullptr));
  ASSERT_TRUE(timing.recorded());
  ASSERT_EQ(timed.size(), 3u);
  EXPECT_EQ(timed, untimed);
}

// Without warm-up there is no step before the measured ones to time: one more follows them.
TEST(GradientTiming, WithoutWarmupAnExtraStepAfterTheMeasuredOnes) {
  GradientTiming timing;
  const std::vector<float> timed = measured_losses(one_rank_setup(0, &timing));
  EXPECT_EQ(timing.step, "after_measured");
  EXPECT_EQ(timing.parameters.size(), 8u);
  EXPECT_EQ(timed, measured_losses(one_rank_setup(0, nullptr)));
}

// A TorchScript file (tests/torchscript_fixtures.hpp: 16 -> 8 -> 4, fc1 and fc2 scripted
// submodules) is timed through the same hooks, its parameters named as the file names them.
TEST(GradientTiming, TorchScriptModelsAreTimedToo) {
  TempDir dir;
  const std::string path = (dir.path() / "mlp.pt").string();
  testing_fixtures::write_mlp(path);
  GradientTiming timing;
  SessionSetup setup = one_rank_setup(1, &timing);
  setup.options.model = "torchscript:" + path;
  setup.options.input_shape = "16";
  measured_losses(setup);
  expect_plausible(timing, {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"});
  EXPECT_EQ(timing.parameters[2].elements, 8 * 4);
  EXPECT_LT(timing.parameters[2].ready_us, timing.parameters[0].ready_us);
}

}  // namespace
}  // namespace ddpscale
