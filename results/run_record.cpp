#include "run_record.hpp"

namespace ddpscale {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::data: return "data";
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::allreduce_total: return "allreduce_total";
    case Phase::allreduce_exposed: return "allreduce_exposed";
    case Phase::optimizer: return "optimizer";
    case Phase::step: return "step";
  }
  return "?";
}

int RunRecord::step_of_loss(int index, int steps) const {
  const int end = (index + 1) * loss_every;
  return (end < steps ? end : steps) - 1;
}

}  // namespace ddpscale
