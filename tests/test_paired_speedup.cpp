// The paired design's decisions and estimates (results/statistics/paired_design.hpp, paired_speedup.hpp),
// and the design itself on a simulated host whose speed follows a known process.
#include "results/statistics/launch_statistics.hpp"
#include "results/statistics/paired_design.hpp"
#include "results/statistics/paired_speedup.hpp"

#include <gtest/gtest.h>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace ddpscale {
namespace {

// ---- Autocorrelation and the block length -----------------------------------------------

TEST(PairedDesign, AutocorrelationMatchesRsAcf) {
  // R: acf(1:5, plot = FALSE) gives 1.0, 0.4, -0.1, -0.4, -0.4 at lags 0..4.
  const std::vector<double> r = autocorrelation({1, 2, 3, 4, 5}, 4);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_NEAR(r[0], 0.4, 1e-15);
  EXPECT_NEAR(r[1], -0.1, 1e-15);
  EXPECT_NEAR(r[2], -0.4, 1e-15);
  EXPECT_NEAR(r[3], -0.4, 1e-15);
  EXPECT_EQ(autocorrelation({1, 2, 3}, 10).size(), 2u);  // lags beyond the series are left out
  EXPECT_TRUE(std::isnan(autocorrelation({2, 2, 2}, 1)[0]));
}

std::vector<double> ar1_series(double phi, size_t n, uint64_t seed) {
  std::mt19937_64 draw(seed);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> x{noise(draw)};
  for (size_t t = 1; t < n; ++t) x.push_back(phi * x.back() + std::sqrt(1 - phi * phi) * noise(draw));
  return x;
}

TEST(PairedDesign, BlockLengthFollowsTheAutocorrelationOfSyntheticSeries) {
  // AR(1) with coefficient phi has autocorrelation phi^k, which first falls below 0.5 after
  // k* = floor(log 0.5 / log phi) lags. Slow steps (10 ms), so the duration floor stays out.
  int previous = 0;
  for (const double phi : {0.8, 0.9, 0.95, 0.98}) {
    const int expected = static_cast<int>(std::floor(std::log(0.5) / std::log(phi)));
    const std::vector<double> series = ar1_series(phi, 40000, 7);
    const int chosen = choose_block_steps(autocorrelation(series, kPilotMaxLag), 10000);
    // The estimate of a lag-k autocorrelation from 40,000 steps has a standard error of a
    // few hundredths; near the bar that moves the crossing by about a quarter of k*.
    EXPECT_NEAR(chosen, std::max(expected, kMinBlockSteps), std::max(1.0, 0.3 * expected)) << "phi " << phi;
    EXPECT_GT(chosen, previous) << "a longer-lived host state gives longer blocks";
    previous = chosen;
  }
}

TEST(PairedDesign, BlockLengthBounds) {
  EXPECT_EQ(choose_block_steps({0.1}, 10000), kMinBlockSteps);  // no holding state: the least
  EXPECT_EQ(choose_block_steps({}, 10000), kMinBlockSteps);
  EXPECT_EQ(choose_block_steps({0.1}, 100), static_cast<int>(kMinBlockUs / 100));  // kMinBlockUs of work at least
  EXPECT_EQ(choose_block_steps(std::vector<double>(500, 0.9), 10000), kMaxBlockSteps);
  EXPECT_EQ(choose_block_steps({0.9, 0.8, 0.3, 0.9, 0.9}, 10000), 2) << "counts only until the first drop";
}

TEST(PairedDesign, ASlowNRankSideShortensTheBlockAndNothingElseDoes) {
  // 1-rank step 662 us, 7-step blocks (4.6 ms): an N-rank step up to kSlowSideSpan times as
  // long keeps them; one of 130 ms (two ranks across a 4 Gbit/s link) lasts 196 times as
  // long, and floor(4 x 7 x 662 / 130000) = 0 steps would do: the least, kMinBlockSteps.
  EXPECT_EQ(shorten_block_for_slow_side(7, 662, 662), 7);
  EXPECT_EQ(shorten_block_for_slow_side(7, 662, 300), 7) << "strong scaling: shorter N-rank steps";
  EXPECT_EQ(shorten_block_for_slow_side(7, 662, 4 * 662), 7) << "exactly kSlowSideSpan times as long";
  EXPECT_EQ(shorten_block_for_slow_side(7, 662, 130000), kMinBlockSteps);
  // 40 steps of 1 ms; N-rank steps of 10 ms: floor(4 x 40 x 1 / 10) = 16 steps of 10 ms.
  EXPECT_EQ(shorten_block_for_slow_side(40, 1000, 10000), 16);
  EXPECT_EQ(shorten_block_for_slow_side(7, 662, 0), 7) << "no N-rank time (not on the N-rank group)";
  EXPECT_EQ(shorten_block_for_slow_side(7, 662, std::nan("")), 7);
}

TEST(PairedDesign, AMeasurementLastsItsBudgetOrItsLeastRounds) {
  // mlp-large at batch 64 on 2 CPU cores: 40 ms a step on 1 rank, 54 ms on 2, warm-up 3.
  // Blocks of 2 steps (4 ms of work is 1 step) and a lead-in each: a round is 10 pairs'
  // worth of both sides, 10 x 3 x 94 ms = 2.82 s, 3 rounds 8.46 s; the warm-up 3 x 94 ms;
  // the pilot its 0.25 s and 3 N-rank steps, 162 ms. By hand: 0.282 + 0.412 + 8.46.
  EXPECT_NEAR(paired_measurement_seconds(2.0, 0.040, 0.054, 3), 0.282 + 0.25 + 0.162 + 8.46, 1e-12);
  // mlp-medium at batch 8: 0.66 ms and 1.0 ms. The least rounds (blocks of 7 steps: 3 x 10 x
  // 8 x 1.66 ms = 0.40 s) end well inside the 2 s budget, which then sets the time.
  EXPECT_NEAR(paired_measurement_seconds(2.0, 0.00066, 0.0010, 3),
              3 * 0.00166 + 0.25 + 3 * 0.0010 + 2.0, 1e-12);
  // Ranks across a slow link (130 ms a 2-rank step): blocks of 2, not of 7.
  EXPECT_NEAR(paired_measurement_seconds(0.2, 0.00066, 0.130, 1),
              0.13066 + 0.25 + 3 * 0.130 + 3 * 10 * 3 * 0.13066, 1e-9);
}

TEST(PairedDesign, RoundsAreTheSameOnEveryRankAndShuffled) {
  const auto a = plan_round(42, 1, 3);
  const auto b = plan_round(42, 1, 3);
  ASSERT_EQ(a.size(), static_cast<size_t>(kPairsPerRound));
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].a_first, b[i].a_first);
  }
  const auto count = [](const std::vector<PlannedPair>& round, PairKind kind) {
    return std::count_if(round.begin(), round.end(), [kind](const PlannedPair& p) { return p.kind == kind; });
  };
  EXPECT_EQ(count(a, PairKind::speedup), kSpeedupPairsPerRound);
  EXPECT_EQ(count(a, PairKind::same_one_rank), 1);
  EXPECT_EQ(count(a, PairKind::same_n_ranks), 1);
  // Over many rounds each order comes about half the time, and the A/A pairs move around.
  int a_first = 0, pairs = 0;
  std::set<size_t> aa_positions;
  for (int round = 0; round < 200; ++round)
    for (size_t i = 0; i < static_cast<size_t>(kPairsPerRound); ++i) {
      const PlannedPair p = plan_round(42, 0, round)[i];
      a_first += p.a_first ? 1 : 0;
      ++pairs;
      if (p.kind == PairKind::same_one_rank) aa_positions.insert(i);
    }
  EXPECT_NEAR(static_cast<double>(a_first) / pairs, 0.5, 0.05);  // 2,000 fair coins: sd 0.011
  EXPECT_EQ(aa_positions.size(), static_cast<size_t>(kPairsPerRound));
  for (const PlannedPair& p : plan_round(42, 0, 0, /*fixed_order=*/true)) EXPECT_TRUE(p.a_first);
}

TEST(PairedDesign, RoundsStopAtTheBudgetAfterTheMinimum) {
  EXPECT_TRUE(another_round(kMinRounds - 1, 100.0, 1.0));
  EXPECT_TRUE(another_round(kMinRounds, 0.5, 2.0));
  EXPECT_FALSE(another_round(kMinRounds, 1.9, 2.0));  // the next round would end well past it
  EXPECT_FALSE(another_round(kMostRounds, 0.0, 2.0));
}

// ---- The two-level estimate ----------------------------------------------------------------

TEST(PairedSpeedup, OneLaunchOfIndependentPairsIsTheTIntervalOfTheLogMean) {
  // Independent log ratios: the batches stay single pairs, and the interval is
  // exp(mean +- t(n - 1) sd / sqrt(n)) times the scale, computed here from its definition.
  std::mt19937_64 draw(3);
  std::normal_distribution<double> noise(std::log(0.7), 0.05);
  std::vector<double> logs;
  for (int i = 0; i < 64; ++i) logs.push_back(noise(draw));
  const PairedEstimate e = two_level_log_ratio({logs}, 2.0);
  double m = 0, ss = 0;
  for (double x : logs) m += x;
  m /= logs.size();
  for (double x : logs) ss += (x - m) * (x - m);
  const double se = std::sqrt(ss / (logs.size() - 1) / logs.size());
  const double t = boost::math::quantile(boost::math::students_t(logs.size() - 1), 0.975);
  EXPECT_EQ(e.pairs_per_batch, 1);
  EXPECT_EQ(e.level, "batches");
  EXPECT_NEAR(e.ratio, 2 * std::exp(m), 1e-12);
  EXPECT_NEAR(e.ci.low, 2 * std::exp(m - t * se), 1e-12);
  EXPECT_NEAR(e.ci.high, 2 * std::exp(m + t * se), 1e-12);
}

TEST(PairedSpeedup, LaunchesThatDisagreeSetTheInterval) {
  // Two launches, each tight, their means 10% apart: the interval must hold both, with 1
  // degree of freedom (t = 12.71), not the batches' many.
  std::vector<double> a(40, std::log(1.0)), b(40, std::log(1.1));
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] += (i % 2 ? 0.001 : -0.001);
    b[i] += (i % 2 ? 0.001 : -0.001);
  }
  const PairedEstimate e = two_level_log_ratio({a, b}, 1.0);
  EXPECT_EQ(e.level, "launches");
  EXPECT_EQ(e.launches, 2);
  const double m = (std::log(1.0) + std::log(1.1)) / 2;
  const double se = std::fabs(std::log(1.1)) / 2;  // sd of two values / sqrt(2)
  EXPECT_NEAR(e.ci.high, std::exp(m + 12.706204736174698 * se), 1e-9);
}

TEST(PairedSpeedup, CorrelatedPairsAreBatchedUntilTheBatchesAreNot) {
  // Log ratios that follow an AR(1) of coefficient 0.9 are far from independent pair by pair.
  const std::vector<double> series = ar1_series(0.9, 4096, 11);
  const PairedEstimate e = two_level_log_ratio({series}, 1.0);
  EXPECT_GE(e.pairs_per_batch, 8);
  EXPECT_GE(e.batches, kMinBatches);
}

// ---- The design on a simulated host -------------------------------------------------------

// A host whose speed follows a known process: the log slowdown is the sum of two
// Ornstein-Uhlenbeck components in time (30 ms and 1 s), plus a per-launch level and per-step
// noise; a block that follows a block of the other session runs slower by a switch cost. Each side has its own true step time, so the true speedup is known exactly.
struct SimulatedHost {
  double fast_sd = 0.15, fast_tau_s = 0.03, slow_sd = 0.15, slow_tau_s = 1.0, step_sd = 0.05;
  double launch_sd = 0.2;
  double switch_cost = 0.0;  // how much slower a block runs right after a switch of sessions
  std::mt19937_64 draw;
  std::normal_distribution<double> unit{0, 1};
  double now_s = 0, fast = 0, slow = 0, level = 0;
  int last_session = -1;

  explicit SimulatedHost(uint64_t seed) : draw(seed) {}
  void new_launch() {
    level = launch_sd * unit(draw);
    fast = fast_sd * unit(draw);
    slow = slow_sd * unit(draw);
    last_session = -1;
  }
  void advance(double dt) {
    now_s += dt;
    const double a = std::exp(-dt / fast_tau_s), b = std::exp(-dt / slow_tau_s);
    fast = a * fast + fast_sd * std::sqrt(1 - a * a) * unit(draw);
    slow = b * slow + slow_sd * std::sqrt(1 - b * b) * unit(draw);
  }
  // One step of `session` (0: 1 rank, 1: N ranks) whose true time is true_us.
  double step(int session, double true_us) {
    const double us = true_us * std::exp(level + fast + slow + step_sd * unit(draw));
    advance(us * 1e-6);
    return us;
  }
  double block(int session, double true_us, int steps) {
    const double cost = last_session >= 0 && last_session != session ? 1 + switch_cost : 1;
    last_session = session;
    double total = 0;
    for (int s = 0; s < steps; ++s) total += step(session, true_us * cost);
    return total;
  }
};

constexpr double kOneRankUs = 500, kNRanksUs = 700;
constexpr int kWorld = 2;
constexpr double kTrueSpeedup = kWorld * kOneRankUs / kNRanksUs;  // weak scaling

// One planned pair on a simulated host: its two blocks in the drawn order, `block(n_ranks)`
// timing one block of that side, as trainer/study/paired_blocks.cpp's run_pair runs them.
template <class Block>
BlockPair simulated_pair(const PlannedPair& plan, double start_s, Block block) {
  const bool a_n = plan.kind == PairKind::same_n_ranks, b_n = plan.kind != PairKind::same_one_rank;
  BlockPair pair{plan.kind, plan.a_first, 0, 0, start_s, plan.one_rank};
  if (plan.a_first) {
    pair.a_us = block(a_n);
    pair.b_us = block(b_n);
  } else {
    pair.b_us = block(b_n);
    pair.a_us = block(a_n);
  }
  return pair;
}

// One launch of the paired design on the host, as trainer/study/paired_blocks.cpp runs it.
PairedLaunch simulate_paired_launch(SimulatedHost& host, int launch, double budget_s, bool fixed_order) {
  host.new_launch();
  PairedLaunch out;
  out.launch = launch;
  std::vector<double> pilot;
  for (int s = 0; s < kPilotSteps; ++s) pilot.push_back(std::log(host.step(0, kOneRankUs)));
  out.autocorrelation = autocorrelation(pilot, kPilotMaxLag);
  out.block_steps = choose_block_steps(out.autocorrelation, kOneRankUs);
  const double start = host.now_s;
  for (int round = 0;; ++round) {
    for (const PlannedPair& plan : plan_round(42, launch, round, fixed_order)) {
      out.pairs.push_back(simulated_pair(plan, host.now_s - start, [&](bool n_ranks) {
        return host.block(n_ranks ? 1 : 0, n_ranks ? kNRanksUs : kOneRankUs, out.block_steps);
      }));
    }
    if (!another_round(round + 1, host.now_s - start, budget_s)) break;
  }
  return out;
}

// Today's runs design on the same host: per launch, `runs` runs of each side alternating
// A B B A, each of `steps` steps after a gap (session setup, warm-up, barriers) of 0.1-0.6 s.
void simulate_runs_launch(SimulatedHost& host, int runs, int steps, std::vector<double>& one, std::vector<double>& n) {
  host.new_launch();
  std::uniform_real_distribution<double> gap(0.1, 0.6);
  for (int k = 0; k < runs; ++k)
    for (int j = 0; j < 2; ++j) {
      const int session = (k % 2 == 0) ? j : 1 - j;
      host.advance(gap(host.draw));
      const double us = host.block(session, session ? kNRanksUs : kOneRankUs, steps);
      (session ? n : one).push_back((session ? kWorld : 1) * steps / (us * 1e-6));  // samples per second, batch 1
    }
}

struct Coverage {
  int covered = 0, studies = 0;
  std::vector<double> half_widths;
  double share() const { return static_cast<double>(covered) / studies; }
  double median_half_width() const {
    std::vector<double> h = half_widths;
    std::sort(h.begin(), h.end());
    return h[h.size() / 2];
  }
};

TEST(PairedSpeedup, OnASimulatedHostThePairedIntervalCoversTheTrueSpeedupAndIsNarrow) {
  Coverage paired, aa_one, aa_n, runs;
  for (int study = 0; study < 100; ++study) {
    SimulatedHost host(1000 + study);
    std::vector<PairedLaunch> launches;
    for (int l = 0; l < 3; ++l) launches.push_back(simulate_paired_launch(host, l, 1.0, false));
    const PairedChecks checks = paired_checks(launches, "weak", kWorld, 1, {});
    ++paired.studies;
    paired.covered += checks.speedup.ci.contains(kTrueSpeedup);
    paired.half_widths.push_back(checks.speedup.relative_half_width());
    ++aa_one.studies;
    aa_one.covered += checks.same_one_rank.ci.contains(1.0);
    ++aa_n.studies;
    aa_n.covered += checks.same_n_ranks.ci.contains(1.0);

    LaunchGroups one(3), n(3);
    for (int l = 0; l < 3; ++l) simulate_runs_launch(host, 5, 60, one[l], n[l]);
    const LaunchSpeedup today = two_level_bootstrap_speedup(one, n, kWorld, BootstrapOptions{2000});
    ++runs.studies;
    runs.covered += today.estimate.speedup_ci.contains(kTrueSpeedup);
    runs.half_widths.push_back((today.estimate.speedup_ci.high - today.estimate.speedup_ci.low) / 2 /
                               today.estimate.speedup);
  }
  std::printf("paired: coverage %.2f, median half-width %.4f; A/A 1 rank %.2f, N ranks %.2f; runs: coverage %.2f, "
              "median half-width %.4f\n",
              paired.share(), paired.median_half_width(), aa_one.share(), aa_n.share(), runs.share(),
              runs.median_half_width());
  EXPECT_GE(paired.share(), 0.90);
  EXPECT_GE(aa_one.share(), 0.90);
  EXPECT_GE(aa_n.share(), 0.90);
  // The host's states cancel within a pair: the paired interval is several times narrower
  // than the runs' on the same host, for the same three launches.
  EXPECT_LT(paired.median_half_width() * 3, runs.median_half_width());
}

TEST(PairedSpeedup, TheAACheckFiresOnABiasedPairingAndNotOnAFairOne) {
  // A host where a block right after a switch of sessions runs 10% slower (caches and clocks
  // settling): with every pair in a fixed order, an A/A pair's first block always follows a
  // block of the other session and pays it, its second never does; drawn orders spread the
  // cost over both sides alike.
  int fired_fixed = 0, fired_fair = 0;
  const int studies = 40;
  for (int study = 0; study < studies; ++study) {
    for (const bool fixed : {true, false}) {
      SimulatedHost host(5000 + study);
      host.switch_cost = 0.10;
      host.fast_sd = host.slow_sd = 0.05;
      std::vector<PairedLaunch> launches;
      for (int l = 0; l < 3; ++l) launches.push_back(simulate_paired_launch(host, l, 1.0, fixed));
      const PairedChecks checks = paired_checks(launches, "weak", kWorld, 1, {});
      (fixed ? fired_fixed : fired_fair) += checks.aa_covers_one() ? 0 : 1;
    }
  }
  std::printf("A/A check fired on %d of %d studies with a fixed order, %d of %d with drawn orders\n", fired_fixed,
              studies, fired_fair, studies);
  EXPECT_GE(fired_fixed, studies * 9 / 10);
  EXPECT_LE(fired_fair, studies / 10);
}

// A host where each rank's process has a speed of its own for the whole launch (the core its
// thread settled on, what shares it), as measured on 2x H200: the N-rank step waits for the
// slowest rank, a 1-rank step runs at its own rank's speed. One launch of the design with the
// 1-rank blocks on rank 0 alone (ranks = 1) or taking turns over the ranks; returns it with
// the per-rank levels drawn.
PairedLaunch simulate_ranked_launch(SimulatedHost& host, double rank_sd, int launch, int ranks) {
  host.new_launch();
  std::vector<double> level;
  for (int r = 0; r < kWorld; ++r) level.push_back(rank_sd * host.unit(host.draw));
  const double slowest = *std::max_element(level.begin(), level.end());
  PairedLaunch out;
  out.launch = launch;
  out.block_steps = 8;
  const double start = host.now_s;
  for (int round = 0; round < 6; ++round)
    for (const PlannedPair& plan : plan_round(42, launch, round, false, ranks)) {
      const auto block = [&](bool n_ranks) {
        return n_ranks ? host.block(1, kNRanksUs * std::exp(slowest), out.block_steps)
                       : host.block(0, kOneRankUs * std::exp(level[static_cast<size_t>(plan.one_rank)]), out.block_steps);
      };
      out.pairs.push_back(simulated_pair(plan, host.now_s - start, block));
    }
  return out;
}

TEST(PairedSpeedup, OneRankBlocksTakingTurnsOverTheRanksNarrowTheLaunchesSpread) {
  // Per-rank levels of sd 0.2 and nothing else between launches. With rank 0 alone on the
  // 1-rank side a launch's log speedup moves by min(0, l0 - l1) (sd 0.83 x 0.2); with the
  // ranks taking turns by -|l0 - l1| / 2 (sd 0.43 x 0.2). Both aim at the same mean, what a
  // rerun meets on average: log(2 x 500 / 700) - 0.2 / sqrt(pi).
  const double rank_sd = 0.2;
  const double truth = kTrueSpeedup * std::exp(-rank_sd / std::sqrt(M_PI));
  double spread[2] = {0, 0};
  int covered[2] = {0, 0};
  const int studies = 100;
  for (int study = 0; study < studies; ++study)
    for (const int ranks : {1, kWorld}) {
      SimulatedHost host(9000 + study);
      host.launch_sd = 0;
      std::vector<PairedLaunch> launches;
      for (int l = 0; l < 3; ++l) launches.push_back(simulate_ranked_launch(host, rank_sd, l, ranks));
      const PairedEstimate e = paired_speedup(launches, "weak", kWorld);
      std::vector<double> means;
      for (const auto& series : log_ratios_by_launch(launches, PairKind::speedup)) means.push_back(mean(series));
      spread[ranks == 1 ? 0 : 1] += sample_sd(means) / studies;
      covered[ranks == 1 ? 0 : 1] += e.ci.contains(truth) ? 1 : 0;
    }
  std::printf("launch spread of the log speedup: rank 0 alone %.3f, ranks taking turns %.3f; coverage %d and %d of %d\n",
              spread[0], spread[1], covered[0], covered[1], studies);
  EXPECT_LT(spread[1], 0.65 * spread[0]);
  EXPECT_GE(covered[1], studies * 9 / 10);
}

// A host where each rank's speed wanders in time (an Ornstein-Uhlenbeck level per rank with a
// timescale of seconds: the core its thread runs on, what shares it), as measured on 2x H200
// where a launch's paired mean moved 1.5-2.6x as much as its own pairs predict. `windowed`
// speedups measure in one launch, each with `budget_s` of rounds: alone one after the other
// (window 1), or with their rounds taking turns (trainer/study/paired_blocks.hpp's window).
struct WanderingRanks {
  SimulatedHost host;
  double rank_sd, tau_s;
  std::vector<double> level;
  WanderingRanks(uint64_t seed, double sd, double tau) : host(seed), rank_sd(sd), tau_s(tau) {
    host.launch_sd = 0;
    for (int r = 0; r < kWorld; ++r) level.push_back(rank_sd * host.unit(host.draw));
  }
  double block(bool n_ranks, int one_rank, int steps) {
    const double slowest = *std::max_element(level.begin(), level.end());
    const double start = host.now_s;
    const double us = n_ranks ? host.block(1, kNRanksUs * std::exp(slowest), steps)
                              : host.block(0, kOneRankUs * std::exp(level[static_cast<size_t>(one_rank)]), steps);
    const double keep = std::exp(-(host.now_s - start) / tau_s);
    for (double& l : level) l = keep * l + rank_sd * std::sqrt(1 - keep * keep) * host.unit(host.draw);
    return us;
  }
  void round(int launch, int round, double start, PairedLaunch& out) {
    for (const PlannedPair& plan : plan_round(42, launch, round, false, kWorld))
      out.pairs.push_back(simulated_pair(plan, host.now_s - start,
                                         [&](bool n_ranks) { return block(n_ranks, plan.one_rank, out.block_steps); }));
  }
  // One launch of `speedups` speedups; launch l's blocks of speedup k in result[k].
  std::vector<PairedLaunch> launch(int l, int speedups, bool windowed, double budget_s) {
    std::vector<PairedLaunch> out(static_cast<size_t>(speedups));
    std::vector<double> spent(out.size(), 0);
    std::vector<int> rounds(out.size(), 0);
    for (PairedLaunch& p : out) {
      p.launch = l;
      p.block_steps = 8;
    }
    const double start = host.now_s;
    const auto run_round = [&](size_t k) {
      const double t0 = host.now_s;
      round(l, rounds[k]++, start, out[k]);
      spent[k] += host.now_s - t0;
      return another_round(rounds[k], spent[k], budget_s);
    };
    if (windowed) {
      std::vector<char> more(out.size(), 1);
      for (bool any = true; any;) {
        any = false;
        for (size_t k = 0; k < out.size(); ++k)
          if (more[k]) any = (more[k] = run_round(k)) || any;
      }
    } else {
      for (size_t k = 0; k < out.size(); ++k)
        while (run_round(k)) {
        }
    }
    return out;
  }
};

TEST(PairedSpeedup, AWindowOfSpeedupsTakingTurnsNarrowsTheLaunchesSpread) {
  // Per-rank levels of sd 0.2 wandering with a 1-second timescale; 8 speedups of 0.5 s each
  // per launch, 3 launches. Alone, a speedup's pairs sit within half a timescale of the
  // wander; in a window of 8 they spread over 4 s, so its launch mean moves less (the pairs'
  // own noise, which no window removes, keeps the ratio of spreads near 0.65 here). Both aim at what a
  // rerun meets on average: log(2 x 500 / 700) - 0.2 / sqrt(pi), as in the test above.
  const double rank_sd = 0.2, tau_s = 1.0, budget_s = 0.5;
  const int speedups = 8, launches = 3, studies = 40;
  const double truth = kTrueSpeedup * std::exp(-rank_sd / std::sqrt(M_PI));
  double spread[2] = {0, 0};
  int covered[2] = {0, 0}, comparisons = 0;
  for (int study = 0; study < studies; ++study)
    for (const bool windowed : {false, true}) {
      WanderingRanks host(12000 + study, rank_sd, tau_s);
      std::vector<std::vector<PairedLaunch>> by_speedup(speedups);
      for (int l = 0; l < launches; ++l) {
        const std::vector<PairedLaunch> launch = host.launch(l, speedups, windowed, budget_s);
        for (int k = 0; k < speedups; ++k) by_speedup[static_cast<size_t>(k)].push_back(launch[static_cast<size_t>(k)]);
      }
      for (const auto& launches_of : by_speedup) {
        std::vector<double> means;
        for (const auto& series : log_ratios_by_launch(launches_of, PairKind::speedup)) means.push_back(mean(series));
        spread[windowed] += sample_sd(means);
        covered[windowed] += paired_speedup(launches_of, "weak", kWorld).ci.contains(truth) ? 1 : 0;
        comparisons += windowed ? 1 : 0;
      }
    }
  std::printf("launch spread of the log speedup: alone %.4f, in a window of %d %.4f; coverage %d and %d of %d\n",
              spread[0] / comparisons, speedups, spread[1] / comparisons, covered[0], covered[1], comparisons);
  EXPECT_LT(spread[1], 0.75 * spread[0]);
  EXPECT_GE(covered[1], comparisons * 9 / 10);
}

TEST(PairedDesign, OneRankBlocksTakeTurnsOverTheRanks) {
  for (const int ranks : {1, 2, 3}) {
    std::vector<int> blocks(static_cast<size_t>(ranks), 0), aa(static_cast<size_t>(ranks), 0);
    for (int round = 0; round < 6; ++round)
      for (const PlannedPair& p : plan_round(42, 0, round, false, ranks)) {
        ASSERT_GE(p.one_rank, 0);
        ASSERT_LT(p.one_rank, ranks);
        if (p.kind == PairKind::speedup) ++blocks[static_cast<size_t>(p.one_rank)];
        if (p.kind == PairKind::same_one_rank) ++aa[static_cast<size_t>(p.one_rank)];
      }
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(blocks[static_cast<size_t>(r)], 6 * kSpeedupPairsPerRound / ranks) << ranks << " ranks";
      EXPECT_EQ(aa[static_cast<size_t>(r)], 6 / ranks) << ranks << " ranks";
    }
  }
}

// ---- The study's launch spread (empirical Bayes) --------------------------------------------

TEST(LaunchSpreadPrior, TrigammaInverseInvertsBoostsTrigamma) {
  for (const double y : {1e-4, 0.01, 0.3, 1.0, 1.6449340668482264, 10.0, 1e4}) {
    const double x = trigamma_inverse(y);
    EXPECT_NEAR(boost::math::trigamma(x) / y, 1.0, 1e-10) << y;
  }
  EXPECT_NEAR(trigamma_inverse(M_PI * M_PI / 6), 1.0, 1e-10);  // trigamma(1) = pi^2 / 6
}

// F ratios drawn from the model the prior assumes (Smyth 2004): each comparison's true ratio
// is prior_ratio x prior_df / chi2(prior_df), its observed one the true x chi2(d) / d.
std::vector<LaunchSpread> drawn_spreads(double prior_ratio, double prior_df, double d, size_t count, uint64_t seed) {
  std::mt19937_64 draw(seed);
  std::chi_squared_distribution<double> prior_chi2(prior_df), own_chi2(d);
  std::vector<LaunchSpread> spreads;
  for (size_t i = 0; i < count; ++i) {
    const double truth = std::isinf(prior_df) ? prior_ratio : prior_ratio * prior_df / prior_chi2(draw);
    spreads.push_back({truth * own_chi2(draw) / d, d});
  }
  return spreads;
}

TEST(LaunchSpreadPrior, RecoversTheScaledInverseChiSquareTheRatiosWereDrawnFrom) {
  // 20,000 comparisons of 3 launches each: the moment estimates sit within a few percent of
  // the prior drawn from (their sampling error at this count is about 1% for the ratio, 5% for
  // the degrees of freedom).
  const LaunchSpreadPrior p = launch_spread_prior(drawn_spreads(1.8, 8.0, 2.0, 20000, 17));
  EXPECT_EQ(p.comparisons, 20000);
  EXPECT_NEAR(p.ratio / 1.8, 1.0, 0.05);
  EXPECT_NEAR(p.df / 8.0, 1.0, 0.2);
}

TEST(LaunchSpreadPrior, RatiosThatShareOneValueGetManyDegreesOfFreedom) {
  // Drawn around one true value: no spread beyond chi2(2)'s, so the prior's degrees of
  // freedom dwarf a comparison's own 2 (at this count the excess's sampling error alone keeps
  // them finite, near 2 / 0.02).
  const LaunchSpreadPrior drawn = launch_spread_prior(drawn_spreads(1.5, INFINITY, 2.0, 20000, 5));
  EXPECT_NEAR(drawn.ratio / 1.5, 1.0, 0.05);
  EXPECT_GT(drawn.df, 20.0);
  // Ratios all equal show less spread than their own degrees of freedom explain: the prior
  // takes their total.
  const LaunchSpreadPrior equal = launch_spread_prior(std::vector<LaunchSpread>(10, LaunchSpread{1.5, 2.0}));
  EXPECT_DOUBLE_EQ(equal.df, 20.0);
  // The ratio is exp(mean e + digamma(10) - log(10)) with e = log 1.5 - digamma(1) + log(1).
  EXPECT_NEAR(equal.ratio, 1.5 * std::exp(boost::math::digamma(10.0) - std::log(10.0) - boost::math::digamma(1.0)), 1e-12);
}

TEST(LaunchSpreadPrior, TooFewComparisonsGiveNoPrior) {
  const LaunchSpreadPrior p = launch_spread_prior(drawn_spreads(1.5, 8.0, 2.0, kMinComparisonsForPrior - 1, 5));
  EXPECT_FALSE(p.valid());
  EXPECT_EQ(p.comparisons, kMinComparisonsForPrior - 1);
}

TEST(LaunchSpreadPrior, ModeratedTakesTheWeightedMeanOfTheStudysAndTheComparisonsSpread) {
  // Two launches of independent pairs whose means differ: F from the definition, then the
  // moderated variance (d0 x ratio + 1 x F) / (d0 + 1) times the batches', with d0 + 1 df.
  std::mt19937_64 draw(9);
  std::normal_distribution<double> noise(0, 0.05);
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) {
    a.push_back(noise(draw));
    b.push_back(0.05 + noise(draw));
  }
  const LaunchSpread own = launch_spread({a, b});
  const auto var_of_mean = [](const std::vector<double>& v) { const double sd = sample_sd(v); return sd * sd / v.size(); };
  const double within = (var_of_mean(a) + var_of_mean(b)) / 4;  // of the mean of two launch means
  const double between = std::pow(mean(a) - mean(b), 2) / 2 / 2;
  EXPECT_NEAR(own.ratio, between / within, 1e-9 * own.ratio);
  const LaunchSpreadPrior prior{1.5, 6.0, 26};
  const PairedEstimate e = two_level_log_ratio({a, b}, 1.0, 0.95, prior);
  const double variance = (6.0 * 1.5 + 1.0 * own.ratio) / 7.0 * within;
  const double t = boost::math::quantile(boost::math::students_t(7.0), 0.975);
  EXPECT_EQ(e.level, "launches, study");
  EXPECT_NEAR(e.ci.high, std::exp((mean(a) + mean(b)) / 2 + t * std::sqrt(variance)), 1e-12);
}

TEST(LaunchSpreadPrior, OnASimulatedStudyModeratedIntervalsCoverAndNarrow) {
  // Studies of 26 comparisons, 3 launches each, on a host whose ranks each keep a speed of
  // their own for a launch (sd drawn per comparison, 0.02 to 0.2: some configurations meet it
  // more than others): the moderated intervals cover each comparison's true speedup about as
  // often as each comparison's own launches do, and are narrower.
  int covered[2] = {0, 0}, total = 0;
  std::vector<double> half[2];
  for (int study = 0; study < 40; ++study) {
    std::mt19937_64 draw(700 + study);
    std::uniform_real_distribution<double> rank_sd_of(0.02, 0.2);
    std::vector<std::vector<PairedLaunch>> comparisons;
    std::vector<double> truths;
    for (int c = 0; c < 26; ++c) {
      SimulatedHost host(100000 * (study + 1) + c);
      host.launch_sd = 0;
      const double rank_sd = rank_sd_of(draw);
      std::vector<PairedLaunch> launches;
      for (int l = 0; l < 3; ++l) launches.push_back(simulate_ranked_launch(host, rank_sd, l, kWorld));
      comparisons.push_back(std::move(launches));
      truths.push_back(kTrueSpeedup * std::exp(-rank_sd / std::sqrt(M_PI)));
    }
    const PairedPriors priors = paired_priors(comparisons);
    for (size_t c = 0; c < comparisons.size(); ++c) {
      const PairedEstimate own = paired_speedup(comparisons[c], "weak", kWorld);
      const PairedEstimate moderated = paired_speedup(comparisons[c], "weak", kWorld, priors.speedup);
      ++total;
      covered[0] += own.ci.contains(truths[c]);
      covered[1] += moderated.ci.contains(truths[c]);
      half[0].push_back(own.relative_half_width());
      half[1].push_back(moderated.relative_half_width());
    }
  }
  for (auto& h : half) std::sort(h.begin(), h.end());
  std::printf("own launches: coverage %d of %d, median half-width %.4f; moderated: %d, %.4f\n", covered[0], total,
              half[0][half[0].size() / 2], covered[1], half[1][half[1].size() / 2]);
  EXPECT_GE(covered[1], total * 9 / 10);
  EXPECT_LT(half[1][half[1].size() / 2], 0.8 * half[0][half[0].size() / 2]);
}

TEST(PairedSpeedup, SoloCheckCountsOnlyRankZerosOneRankBlocks) {
  // The 1-rank runs ran on rank 0; rank 1's blocks (twice as slow here) stay out of the check.
  PairedLaunch launch;
  launch.block_steps = 10;
  for (int i = 0; i < 40; ++i)
    launch.pairs.push_back({PairKind::speedup, true, (i % 2 ? 2000.0 : 1000.0) * (i % 4 < 2 ? 1.01 : 0.99), 700, 0, i % 2});
  const PairedEstimate e = solo_check({launch}, 4, {{40000, 40000 * 1.01, 40000 * 0.99}});
  EXPECT_NEAR(e.ratio, 1.0, 0.01);
  EXPECT_TRUE(e.ci.contains(1.0));
}

TEST(PairedSpeedup, SoloCheckComparesThePairedOneRankThroughputWithTheRuns) {
  // Blocks of 10 steps of batch 4 in 1000 us: 40,000 samples/s; runs at 40,000 and 50,000.
  PairedLaunch launch;
  launch.block_steps = 10;
  for (int i = 0; i < 40; ++i) launch.pairs.push_back({PairKind::speedup, true, 1000.0 * (i % 2 ? 1.01 : 0.99), 700, 0});
  const PairedEstimate same = solo_check({launch}, 4, {{40000, 40000 * 1.01, 40000 * 0.99}});
  EXPECT_TRUE(same.ci.contains(1.0));
  const PairedEstimate slower = solo_check({launch}, 4, {{50000, 50000 * 1.01, 50000 * 0.99}});
  EXPECT_NEAR(slower.ratio, 0.8, 0.01);
  EXPECT_FALSE(slower.ci.contains(1.0));
}

}  // namespace
}  // namespace ddpscale
