// The step clock's rule for marks the trainer leaves out (step_clock.hpp): an unrecorded
// mark takes the time of the mark before it, and a step's unrecorded start is the previous
// step's end. Checked on the pure function and on the host clock.
#include "trainer/engine/step_clock.hpp"
#include "trainer/engine/training_session.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

namespace ddpscale {
namespace {

constexpr double kNotRecorded = std::numeric_limits<double>::quiet_NaN();

TEST(StepClock, UnrecordedMarksTakeThePreviousMarksTime) {
  // Marks: step_start, data_end, forward_end, backward_end, reduce_end, step_end.
  double marks[kMarkCount] = {kNotRecorded, kNotRecorded, 30, 70, kNotRecorded, 90};
  fill_unrecorded_marks(marks, 10);
  const double expected[kMarkCount] = {10, 10, 30, 70, 70, 90};
  for (int m = 0; m < kMarkCount; ++m) EXPECT_EQ(marks[m], expected[m]) << m;

  float phases[kPhaseCount];
  phases_from_marks(marks, 0, 0, false, phases);
  EXPECT_EQ(phases[static_cast<int>(Phase::data)], 0.0f);
  EXPECT_EQ(phases[static_cast<int>(Phase::forward)], 20.0f);
  EXPECT_EQ(phases[static_cast<int>(Phase::backward)], 40.0f);
  EXPECT_EQ(phases[static_cast<int>(Phase::allreduce_exposed)], 0.0f);
  EXPECT_EQ(phases[static_cast<int>(Phase::optimizer)], 20.0f);
  EXPECT_EQ(phases[static_cast<int>(Phase::step)], 80.0f);
}

// Graph mode marks only each block's end; read() then leaves a block's time on its last step
// (the rule above) and spread_block_totals gives every step of the block the block's mean.
// Blocks of 4 over 10 steps: 4, 4 and a last block of 2.
TEST(StepClock, BlockTotalsAreSpreadOverTheirSteps) {
  std::vector<float> step_us = {0, 0, 0, 400, 0, 0, 0, 480, 0, 90};
  spread_block_totals(step_us, 4);
  const std::vector<float> expected = {100, 100, 100, 100, 120, 120, 120, 120, 45, 45};
  EXPECT_EQ(step_us, expected);
  float sum = 0;
  for (float v : step_us) sum += v;
  EXPECT_EQ(sum, 400 + 480 + 90);  // the blocks' total is kept exactly (these are exact in float)
}

TEST(StepClock, GraphBlocksEndEveryBlockAndAtTheLastStep) {
  EXPECT_FALSE(ends_graph_block(0, 120));
  EXPECT_TRUE(ends_graph_block(kGraphBlockSteps - 1, 120));
  EXPECT_FALSE(ends_graph_block(kGraphBlockSteps, 120));
  EXPECT_TRUE(ends_graph_block(2 * kGraphBlockSteps - 1, 120));
  EXPECT_TRUE(ends_graph_block(119, 120));  // the last, shorter block
  EXPECT_TRUE(ends_graph_block(2, 3));      // a run shorter than a block is one block
}

TEST(StepClock, RecordedMarksAreKept) {
  double marks[kMarkCount] = {1, 2, 3, 4, 5, 6};
  fill_unrecorded_marks(marks, 100);
  for (int m = 0; m < kMarkCount; ++m) EXPECT_EQ(marks[m], m + 1.0);
}

// The trainer's pattern on one rank without host data: the first step records its start,
// later steps do not; no data_end, no reduce_end. The phases must still tile each step.
TEST(StepClock, HostClockStepsTileTimeWithOnlyTheRecordedMarks) {
  const int steps = 3;
  auto clock = make_host_step_clock(steps);
  auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  for (int s = 0; s < steps; ++s) {
    clock->select_step(s);
    if (s == 0) clock->mark(Mark::step_start);
    pause();
    clock->mark(Mark::forward_end);
    pause();
    clock->mark(Mark::backward_end);
    pause();
    clock->mark(Mark::step_end);
  }
  RankTimings timings;
  clock->read(steps, timings);
  for (int s = 0; s < steps; ++s) {
    auto phase = [&](Phase p) { return static_cast<double>(timings.phase_us[static_cast<size_t>(p)][static_cast<size_t>(s)]); };
    EXPECT_EQ(phase(Phase::data), 0.0) << s;
    EXPECT_EQ(phase(Phase::allreduce_exposed), 0.0) << s;
    EXPECT_GE(phase(Phase::forward), 2000.0) << s;  // each phase slept 2 ms
    EXPECT_GE(phase(Phase::backward), 2000.0) << s;
    EXPECT_GE(phase(Phase::optimizer), 2000.0) << s;
    // Contiguous phases: they add up to the step up to float rounding.
    const double parts = phase(Phase::data) + phase(Phase::forward) + phase(Phase::backward) +
                         phase(Phase::allreduce_exposed) + phase(Phase::optimizer);
    EXPECT_NEAR(parts, phase(Phase::step), 1e-3 * phase(Phase::step)) << s;
  }
}

}  // namespace
}  // namespace ddpscale
