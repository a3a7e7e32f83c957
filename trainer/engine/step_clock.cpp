#include "trainer/engine/step_clock.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

namespace ddpscale {

void fill_unrecorded_marks(double m[kMarkCount], double previous_step_end_us) {
  if (std::isnan(m[static_cast<int>(Mark::step_start)])) m[static_cast<int>(Mark::step_start)] = previous_step_end_us;
  for (int i = 1; i < kMarkCount; ++i)
    if (std::isnan(m[i])) m[i] = m[i - 1];
}

void phases_from_marks(const double m[kMarkCount], double comm_start_us, double comm_end_us, bool has_comm,
                       float phase_us[kPhaseCount]) {
  auto span = [&](Mark from, Mark to) {
    return static_cast<float>(std::max(0.0, m[static_cast<int>(to)] - m[static_cast<int>(from)]));
  };
  phase_us[static_cast<int>(Phase::data)] = span(Mark::step_start, Mark::data_end);
  phase_us[static_cast<int>(Phase::forward)] = span(Mark::data_end, Mark::forward_end);
  phase_us[static_cast<int>(Phase::backward)] = span(Mark::forward_end, Mark::backward_end);
  // Exposed communication: from the end of backward until the step may use the reduced
  // gradients. Whatever allreduce time ran before backward ended was hidden by overlap.
  phase_us[static_cast<int>(Phase::allreduce_exposed)] = span(Mark::backward_end, Mark::reduce_end);
  phase_us[static_cast<int>(Phase::allreduce_total)] =
      has_comm ? static_cast<float>(std::max(0.0, comm_end_us - comm_start_us)) : 0.0f;
  phase_us[static_cast<int>(Phase::optimizer)] = span(Mark::reduce_end, Mark::step_end);
  phase_us[static_cast<int>(Phase::step)] = span(Mark::step_start, Mark::step_end);
}

void store_step_phases(double marks_us[kMarkCount], double& previous_step_end_us, double comm_start_us,
                       double comm_end_us, bool has_comm, size_t step, RankTimings& timings) {
  fill_unrecorded_marks(marks_us, previous_step_end_us);
  previous_step_end_us = marks_us[static_cast<int>(Mark::step_end)];
  float phases[kPhaseCount];
  phases_from_marks(marks_us, comm_start_us, comm_end_us, has_comm, phases);
  for (int p = 0; p < kPhaseCount; ++p) timings.phase_us[static_cast<size_t>(p)][step] = phases[p];
}

void spread_block_totals(std::vector<float>& step_us, int block_steps) {
  const int steps = static_cast<int>(step_us.size());
  for (int begin = 0; begin < steps; begin += block_steps) {
    const int end = last_step_of_block(begin, block_steps, steps) + 1;
    const float mean = step_us[static_cast<size_t>(end - 1)] / static_cast<float>(end - begin);
    std::fill(step_us.begin() + begin, step_us.begin() + end, mean);
  }
}

namespace {

class HostStepClock final : public StepClock {
 public:
  explicit HostStepClock(int steps)
      : marks_(static_cast<size_t>(steps) * kMarkCount, std::numeric_limits<double>::quiet_NaN()),
        comm_(static_cast<size_t>(steps) * 2, 0.0), has_comm_(static_cast<size_t>(steps), false) {}

  void select_step(int step) override { step_ = step; }
  void mark(Mark mark) override {
    if (step_ >= 0) marks_[static_cast<size_t>(step_) * kMarkCount + static_cast<size_t>(mark)] = now_us();
  }
  void mark_comm_start() override {
    if (step_ < 0) return;
    comm_[static_cast<size_t>(step_) * 2] = now_us();
    has_comm_[static_cast<size_t>(step_)] = true;
  }
  void mark_comm_end() override {
    if (step_ >= 0) comm_[static_cast<size_t>(step_) * 2 + 1] = now_us();
  }
  void read(int steps, RankTimings& timings) override {
    for (auto& series : timings.phase_us) series.assign(static_cast<size_t>(steps), 0.0f);
    double previous_step_end = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = 0; i < static_cast<size_t>(steps); ++i)
      store_step_phases(&marks_[i * kMarkCount], previous_step_end, comm_[i * 2], comm_[i * 2 + 1], has_comm_[i], i,
                        timings);
  }

 private:
  static double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  int step_ = -1;
  std::vector<double> marks_;
  std::vector<double> comm_;
  std::vector<bool> has_comm_;
};

}  // namespace

std::unique_ptr<StepClock> make_host_step_clock(int steps) { return std::make_unique<HostStepClock>(steps); }

}  // namespace ddpscale
