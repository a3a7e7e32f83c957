// The paired design's measurement inside one live job (docs/methodology.md, "The paired
// speedup"): an N-rank session on the first N ranks and, beside it on each of them, a 1-rank
// session of its own; after their warm-up and a pilot that times rank 0's 1-rank steps one by
// one (the host's timescale, which sets the block length), blocks take turns in the order
// results/statistics/paired_design.hpp draws, the 1-rank blocks rank after rank, until the launch's
// budget of seconds is spent. One rank's session works at a time.
#pragma once
#include "results/statistics/paired_design.hpp"
#include "results/store/run_record.hpp"
#include "trainer/process/device_choice.hpp"
#include "trainer/study/train_options.hpp"

namespace ddpscale {

class Communicator;
class MpiGroup;

struct PairedSetup {
  TrainOptions one_rank;               // the 1-rank configuration
  TrainOptions n_ranks;                // its N-rank twin (same model, seed and per-rank or global batch)
  const MpiGroup* world = nullptr;     // every launched rank: the measurement is collective over it
  const MpiGroup* n_group = nullptr;   // the first N ranks; null where this rank is not one of them
  Communicator* n_comm = nullptr;      // the N-rank group's communicator; null where not a member
  DeviceChoice device;
  int launch = 0;
  double budget_seconds = kDefaultPairedSeconds;
};

// What the measurement gives: on rank 0 the launch's blocks, or why there are none (a session
// failed to build or warm up on some rank; the study then reports the runs' speedup).
struct PairedOutcome {
  PairedLaunch blocks;
  std::string failure;
};

// Collective over setup.world; every rank returns (the failure on every rank, the blocks on
// rank 0 only).
PairedOutcome measure_paired(const PairedSetup& setup);

}  // namespace ddpscale
