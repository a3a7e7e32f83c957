// The paired design's decisions, as plain functions both the trainer and the tests' simulated
// host use (docs/methodology.md, "The paired speedup"): how long a block is, and in which
// order the blocks of a round take turns. No LibTorch, no MPI.
#pragma once
#include "results/store/run_record.hpp"

#include <cstdint>
#include <vector>

namespace ddpscale {

// ---- Block length from the host's timescale ---------------------------------------------

// The sample autocorrelation of `series` at lags 1..max_lag (element 0 is lag 1):
// r(k) = sum_t (x_t - m)(x_{t+k} - m) / sum_t (x_t - m)^2 (Box and Jenkins' estimator).
// Lags the series is too short for (k >= n) are left out; a constant series gives NaN.
std::vector<double> autocorrelation(const std::vector<double>& series, int max_lag);

// A block of k steps pairs well with its neighbour while the host's state holds over k
// steps: the rule takes the longest lag k whose autocorrelation (of log step times) is still
// at least kHoldingCorrelation, counting from lag 1 until it first falls below.
inline constexpr double kHoldingCorrelation = 0.5;
// Bounds of the rule. A block of fewer than kMinBlockUs of work would let the block's own
// boundary (a device synchronization and, with N ranks, a barrier: tens of microseconds)
// weigh more than about 1% of it; past kMaxBlockSteps a pair outlasts the host states the
// design exists to share, whatever the pilot saw.
inline constexpr int kMinBlockSteps = 2;
inline constexpr int kMaxBlockSteps = 200;
inline constexpr double kMinBlockUs = 4000;

// The block length for a pilot with this autocorrelation and median step time (us).
int choose_block_steps(const std::vector<double>& autocorrelation, double step_us);

// Where the N ranks step far slower than one (a slow link between nodes), a block of the
// pilot's length lasts many times longer on the N-rank side than on the 1-rank side: far
// past the host state the pairing shares, and the least rounds alone then cost a launch
// minutes. So the N-rank block lasts at most kSlowSideSpan times the 1-rank block the pilot
// chose: the block shrinks (never below kMinBlockSteps) when the N-rank step, timed over
// kSlowSidePilotSteps steps after the pilot, is more than kSlowSideSpan times the 1-rank
// step. Data parallelism on one host (N-rank steps within a few times the 1-rank step, weak
// scaling; shorter, strong) keeps the pilot's length.
inline constexpr double kSlowSideSpan = 4;
inline constexpr int kSlowSidePilotSteps = 2;
int shorten_block_for_slow_side(int block_steps, double one_rank_step_us, double n_rank_step_us);

// The lags the pilot's autocorrelation is computed at, and its length in steps: enough steps
// that lag kMaxBlockSteps is estimated from kPilotSteps - kMaxBlockSteps pairs of steps.
inline constexpr int kPilotSteps = 600;
inline constexpr int kPilotMaxLag = kMaxBlockSteps;
// A pilot stops early after this much wall time (slow models): its lags then reach what fits.
inline constexpr double kPilotMostSeconds = 0.25;

// ---- The order of the blocks --------------------------------------------------------------

// A round: kSpeedupPairsPerRound pairs of a 1-rank and an N-rank block, one A/A pair of each
// kind, shuffled, each pair's order drawn by a coin. The A/A pairs cost a fifth of the time;
// the speedup's precision is set by the others.
inline constexpr int kSpeedupPairsPerRound = 8;
inline constexpr int kPairsPerRound = kSpeedupPairsPerRound + 2;

struct PlannedPair {
  PairKind kind = PairKind::speedup;
  bool a_first = true;
  int one_rank = 0;  // the N-rank group's rank whose 1-rank session runs the pair's 1-rank block(s)
};

// Round `round` of launch `launch` under `seed`: the same on every rank (a pure function of
// its arguments), different from round to round. `fixed_order` puts A first in every pair and
// the kinds in a fixed order: the biased pairing the A/A check exists to catch, for tests.
// The 1-rank blocks take turns over the `ranks` ranks of the N-rank side: the speedup pairs
// in the order they run get ranks round, round + 1, ... (mod ranks), the A/A pair of 1-rank
// blocks rank round (mod ranks), so both sides sample every rank's GPU, cores and process.
std::vector<PlannedPair> plan_round(uint64_t seed, int launch, int round, bool fixed_order = false, int ranks = 1);

// How long the blocks of a configuration's paired measurement run, per launch, unless the
// spec says (paired_seconds); at least kMinRounds rounds whatever the time.
inline constexpr double kDefaultPairedSeconds = 2.0;
inline constexpr int kMinRounds = 3;
inline constexpr int kMostRounds = 1000;

// How many speedups measure in one window (trainer/study/paired_blocks.hpp), their rounds
// taking turns, unless the spec says (paired_window): one speedup's pairs then spread over
// about paired_window x paired_seconds. More spread its pairs further over the host's slow
// states; the cost is memory (every member's sessions stay live until the window ends) and
// the work a crash loses (the window's configurations are stored when it ends).
inline constexpr int kDefaultPairedWindow = 16;

// Whether another round starts, `elapsed_s` into the blocks after `rounds` rounds.
bool another_round(int rounds, double elapsed_s, double budget_s);

// What one paired measurement of twins takes in a launch, for estimates made before it runs,
// from the twins' step times (seconds): both sessions' warm-up, the pilot, the N-rank steps
// that check for a slow side, then the blocks for budget_s or the least kMinRounds rounds,
// whichever is longer. The blocks are taken at their least length (kMinBlockUs of work,
// shortened for a slow side as the sweep does): the pilot may choose longer ones, which only
// matters where the least rounds outlast the budget.
double paired_measurement_seconds(double budget_s, double one_rank_step_s, double n_rank_step_s, int warmup_steps);

}  // namespace ddpscale
