#include "results/statistics/paired_design.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace ddpscale {

std::vector<double> autocorrelation(const std::vector<double>& series, int max_lag) {
  const size_t n = series.size();
  std::vector<double> r;
  if (n < 2 || max_lag < 1) return r;
  double m = 0;
  for (double x : series) m += x;
  m /= static_cast<double>(n);
  double denominator = 0;
  for (double x : series) denominator += (x - m) * (x - m);
  const size_t lags = std::min(static_cast<size_t>(max_lag), n - 1);
  for (size_t k = 1; k <= lags; ++k) {
    double numerator = 0;
    for (size_t t = 0; t + k < n; ++t) numerator += (series[t] - m) * (series[t + k] - m);
    r.push_back(denominator > 0 ? numerator / denominator : std::nan(""));
  }
  return r;
}

int choose_block_steps(const std::vector<double>& autocorrelation, double step_us) {
  int holding = 0;  // the longest lag, counting from 1, before the correlation first drops below the bar
  for (size_t k = 0; k < autocorrelation.size(); ++k) {
    if (!(autocorrelation[k] >= kHoldingCorrelation)) break;
    holding = static_cast<int>(k) + 1;
  }
  int steps = std::max(holding, kMinBlockSteps);
  if (step_us > 0 && std::isfinite(step_us)) steps = std::max(steps, static_cast<int>(std::ceil(kMinBlockUs / step_us)));
  return std::min(steps, kMaxBlockSteps);
}

int shorten_block_for_slow_side(int block_steps, double one_rank_step_us, double n_rank_step_us) {
  if (!(one_rank_step_us > 0) || !(n_rank_step_us > 0) || !std::isfinite(n_rank_step_us)) return block_steps;
  const double allowed = std::floor(kSlowSideSpan * block_steps * one_rank_step_us / n_rank_step_us);
  if (allowed >= block_steps) return block_steps;
  return std::max(kMinBlockSteps, static_cast<int>(allowed));
}

namespace {

// The 1-rank blocks' ranks, once the pairs are in the order they run.
void rotate_one_rank_blocks(std::vector<PlannedPair>& pairs, int round, int ranks) {
  if (ranks < 1) ranks = 1;
  int next = round % ranks;
  for (PlannedPair& pair : pairs) {
    if (pair.kind == PairKind::speedup) {
      pair.one_rank = next;
      next = (next + 1) % ranks;
    } else if (pair.kind == PairKind::same_one_rank) {
      pair.one_rank = round % ranks;
    }
  }
}

}  // namespace

std::vector<PlannedPair> plan_round(uint64_t seed, int launch, int round, bool fixed_order, int ranks) {
  std::vector<PlannedPair> pairs(kSpeedupPairsPerRound, PlannedPair{PairKind::speedup, true});
  pairs.push_back({PairKind::same_one_rank, true});
  pairs.push_back({PairKind::same_n_ranks, true});
  if (fixed_order) {
    rotate_one_rank_blocks(pairs, round, ranks);
    return pairs;
  }
  // One stream per (seed, launch, round), so a resumed or shortened launch draws the same rounds.
  std::seed_seq seeds{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(launch),
                      static_cast<uint32_t>(round), 0x9a17edu};
  std::mt19937_64 draw(seeds);
  // Fisher-Yates by hand: std::shuffle's algorithm is the library's choice, and every rank
  // must draw the same order whatever library it was built with.
  for (size_t i = pairs.size() - 1; i > 0; --i) std::swap(pairs[i], pairs[draw() % (i + 1)]);
  for (PlannedPair& pair : pairs) pair.a_first = (draw() >> 63) != 0;
  rotate_one_rank_blocks(pairs, round, ranks);
  return pairs;
}

bool another_round(int rounds, double elapsed_s, double budget_s) {
  if (rounds < kMinRounds) return true;
  if (rounds >= kMostRounds) return false;
  // The next round would take about as long as the average one so far: start it only if it
  // ends near the budget, not far past it.
  const double per_round = elapsed_s / rounds;
  return elapsed_s + 0.5 * per_round < budget_s;
}

double paired_measurement_seconds(double budget_s, double one_rank_step_s, double n_rank_step_s, int warmup_steps) {
  const double s1 = std::max(0.0, one_rank_step_s), sn = std::max(0.0, n_rank_step_s);
  const double warm_up = std::max(1, warmup_steps) * (s1 + sn);
  const double pilot = std::min(kPilotMostSeconds, kPilotSteps * s1) + (kSlowSidePilotSteps + 1) * sn;
  // No pilot to read a holding time from: the least block choose_block_steps gives.
  const int block = shorten_block_for_slow_side(choose_block_steps({}, 1e6 * s1), s1, sn);
  // A round: kPairsPerRound pairs, each one 1-rank and one N-rank block but the two A/A pairs,
  // which make one of two 1-rank and one of two N-rank blocks: as many blocks of each side as
  // pairs. Every block opens with one untimed step.
  const double round = kPairsPerRound * (block + 1) * (s1 + sn);
  return warm_up + pilot + std::max(budget_s, kMinRounds * round);
}

}  // namespace ddpscale
