// The paired design's measurement inside one live job (docs/methodology.md, "The paired
// speedup"): an N-rank session on the first N ranks and, beside it on each of them, a 1-rank
// session of its own; after their warm-up and a pilot that times rank 0's 1-rank steps one by
// one (the host's timescale, which sets the block length), blocks take turns in the order
// results/statistics/paired_design.hpp draws, the 1-rank blocks rank after rank, until the
// configuration's budget of seconds is spent. One rank's session works at a time.
//
// Several speedups measure in one window: each member's sessions are built, warmed up and
// piloted when it joins, then the members' rounds take turns, so each speedup's pairs spread
// over the window's seconds instead of its own few, and a state of the host that lasts
// seconds moves the pairs of many speedups a little instead of one speedup's a lot.
#pragma once
#include "results/statistics/paired_design.hpp"
#include "results/store/run_record.hpp"
#include "trainer/process/device_choice.hpp"
#include "trainer/study/train_options.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ddpscale {

class Communicator;
class MpiContext;
class MpiGroup;
struct ModelDescription;

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

// The speedups of one window, measured together. Every call is collective over the world
// every member's setup names (the same for all members).
class PairedWindow {
 public:
  PairedWindow();
  ~PairedWindow();
  PairedWindow(const PairedWindow&) = delete;
  PairedWindow& operator=(const PairedWindow&) = delete;

  // Builds, warms up and pilots the sessions of `setup`'s speedup (they stay live until the
  // window is destroyed); a member whose sessions fail takes no turns and keeps the failure.
  void add(const PairedSetup& setup);
  // The members' rounds take turns, round r of every member before round r + 1 of any, each
  // member's until it has spent its budget_seconds of blocks (at least kMinRounds rounds).
  void run();
  // Member i's outcome (the blocks on rank 0 only, the failure on every rank), after run().
  PairedOutcome take(size_t i);

 private:
  struct Member;
  std::vector<std::unique_ptr<Member>> members_;
};

// How many of the next speedups measure in one window: at most `most` (the spec's
// paired_window), while the training memory of every member's two sessions together stays
// within `budget_bytes`. `bytes[k]` is speedup k's estimate of both sessions on one rank, -1
// where it is not known (a TorchScript model's activations): such a speedup measures in a
// window of its own. At least 1. Pure.
size_t paired_window_length(const std::vector<int64_t>& bytes, int64_t budget_bytes, int most);

// The training memory of two twins' live sessions on one rank (the memory pre-flight's
// estimates); -1 where a model's activations are not known.
int64_t paired_sessions_bytes(const TrainOptions& a, const ModelDescription& model_a, const TrainOptions& b,
                              const ModelDescription& model_b);

// kPairedWindowMemoryShare of the smallest free memory of any rank at the launch's start, as
// the pre-flight reads it for `widest` ranks: the same on every rank (collective over the
// world). 0 where a rank cannot read it: every window then holds one speedup.
int64_t agree_on_window_memory(const MpiContext& mpi, const DeviceChoice& device, int widest);

// Rank 0's line for a speedup's paired measurement: its pairs and pilot, or why there are none.
void print_paired_outcome(const std::string& id, const PairedOutcome& outcome);

// The share of a rank's free memory (as the memory pre-flight reads it at the launch's start)
// that the live sessions of one window may take: the rest stays for the runs of the window's
// later members, which run while the earlier members' sessions wait.
inline constexpr double kPairedWindowMemoryShare = 0.5;

}  // namespace ddpscale
