// Where a step's time goes. The training loop marks the boundaries of each phase on
// the compute timeline, the gradient reducer marks the first allreduce's start and the
// last one's end on the communication timeline; durations are read only after the
// measured loop, so timing never adds a device synchronisation inside it.
#pragma once
#include "results/store/run_record.hpp"

#include <memory>
#include <vector>

namespace ddpscale {

// Compute-timeline boundaries, in the order they occur within a step.
enum class Mark : int { step_start = 0, data_end, forward_end, backward_end, reduce_end, step_end };
constexpr int kMarkCount = 6;

// Marks the trainer leaves out. Each mark on the GPU is a CUDA call, and the small models'
// steps are bound by the host issuing work, so a mark costs its full host time there
// (measured: 6 marks per step cost about 5% of a 0.9 ms step on an H200). The trainer
// therefore records only the marks that bound a non-empty phase: a mark not recorded takes
// the time of the mark before it (no host data: data ends where the step starts; one rank:
// the reduction ends where backward ends), and every step after the first starts where the
// previous one ended (nothing is enqueued between two steps).
class StepClock {
 public:
  virtual ~StepClock() = default;
  // Selects the measured step the next marks belong to; step < 0 means "not measured"
  // (warm-up), and then marks are ignored.
  virtual void select_step(int step) = 0;
  virtual void mark(Mark mark) = 0;
  virtual void mark_comm_start() = 0;  // just before the first bucket's allreduce runs
  virtual void mark_comm_end() = 0;    // just after the last bucket's allreduce
  // After the loop: waits for the device, fills timings.phase_us for `steps` steps.
  virtual void read(int steps, RankTimings& timings) = 0;
};

// Steady-clock marks on the host: right for CPU training, where the host waits for
// every operation anyway.
std::unique_ptr<StepClock> make_host_step_clock(int steps);

#ifdef DDPSCALE_CUDA
// CUDA events on the compute stream and the communicator's stream (a cudaStream_t, or
// nullptr when there is no communication).
std::unique_ptr<StepClock> make_cuda_step_clock(int steps, void* compute_stream, void* comm_stream);
#endif

// Fills the marks a step did not record (NaN), as described above. previous_step_end_us is
// the previous step's step_end (NaN for the first step, whose start must be recorded).
void fill_unrecorded_marks(double marks_us[kMarkCount], double previous_step_end_us);

// Converts per-step mark times (microseconds since any origin) into phase durations.
// Phases: data, forward, backward, allreduce_total, allreduce_exposed, optimizer, step.
void phases_from_marks(const double marks_us[kMarkCount], double comm_start_us, double comm_end_us, bool has_comm,
                       float phase_us[kPhaseCount]);

// What both clocks' read() does per step: fills the step's unrecorded marks, stores its
// phases in timings.phase_us[*][step] (already sized), and advances previous_step_end_us
// (NaN before the first step) to this step's end.
void store_step_phases(double marks_us[kMarkCount], double& previous_step_end_us, double comm_start_us,
                       double comm_end_us, bool has_comm, size_t step, RankTimings& timings);

// Where only each block's end was marked (graph mode), read() leaves a block's whole time on
// its last step and 0 on the others; this gives each step of a block the block's mean.
// Blocks are block_steps long, the last one possibly shorter.
void spread_block_totals(std::vector<float>& step_us, int block_steps);

}  // namespace ddpscale
