#include "results/store/run_record.hpp"

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

const char* pair_kind_name(PairKind kind) {
  switch (kind) {
    case PairKind::speedup: return "speedup";
    case PairKind::same_one_rank: return "same_one_rank";
    case PairKind::same_n_ranks: return "same_n_ranks";
  }
  return "?";
}

int last_step_of_block(int step, int block, int steps) {
  const int end = (step / block + 1) * block;
  return (end < steps ? end : steps) - 1;
}

int RunRecord::step_of_loss(int index, int steps) const {
  return last_step_of_block(index * loss_every, loss_every, steps);
}

}  // namespace ddpscale
