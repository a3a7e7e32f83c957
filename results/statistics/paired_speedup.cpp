#include "results/statistics/paired_speedup.hpp"

#include "results/statistics/paired_design.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/polygamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

#include <algorithm>
#include <cmath>

namespace ddpscale {
namespace {

// One launch's mean of a series and the variance of that mean, from batch means.
struct LaunchMean {
  double mean = kNaN;
  double variance_of_mean = kNaN;
  double df = 0;
  size_t batches = 0;
  int pairs_per_batch = 1;
};

// Means of consecutive batches of `size` values; the last batch takes the remainder.
std::vector<double> batch_means(const std::vector<double>& values, size_t size) {
  std::vector<double> means;
  const size_t count = values.size() / size;
  for (size_t b = 0; b < count; ++b) {
    const size_t begin = b * size;
    const size_t end = b + 1 == count ? values.size() : begin + size;
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += values[i];
    means.push_back(sum / static_cast<double>(end - begin));
  }
  return means;
}

LaunchMean launch_mean(const std::vector<double>& values) {
  LaunchMean result;
  size_t size = 1;
  std::vector<double> means = batch_means(values, size);
  // Longer batches while neighbours still correlate and enough batches would remain.
  while (means.size() >= 2 * kMinBatches) {
    const std::vector<double> r = autocorrelation(means, 1);
    if (r.empty() || !(r[0] > kBatchCorrelationLimit)) break;
    size *= 2;
    means = batch_means(values, size);
  }
  result.batches = means.size();
  result.pairs_per_batch = static_cast<int>(size);
  result.mean = mean(means);
  if (means.size() >= 2) {
    const double sd = sample_sd(means);
    result.variance_of_mean = sd * sd / static_cast<double>(means.size());
    result.df = static_cast<double>(means.size() - 1);
  }
  return result;
}

}  // namespace

double PairedEstimate::relative_half_width() const {
  if (!ci.valid() || !(ratio > 0)) return kNaN;
  return (ci.high - ci.low) / 2 / ratio;
}

namespace {

// The mean of the launch means of a log series and the variance of that mean, at the level
// (batches or launches) whose spread is the larger.
struct TwoLevelMean {
  double mean = kNaN;
  double variance = kNaN;
  double df = 0;
  double within = kNaN;   // the variance of the mean from the batches (NaN where a launch has none)
  double between = kNaN;  // the same from the launch means' spread (NaN below 2 launches)
  PairedEstimate counts;  // pairs, batches, pairs_per_batch, launches, level
};

TwoLevelMean two_level_mean(const std::vector<std::vector<double>>& series_by_launch,
                            const LaunchSpreadPrior& prior = {}) {
  TwoLevelMean result;
  PairedEstimate& counts = result.counts;
  std::vector<LaunchMean> launches;
  for (const auto& series : series_by_launch) {
    if (series.empty()) continue;
    launches.push_back(launch_mean(series));
    counts.pairs += series.size();
    counts.batches += launches.back().batches;
    counts.pairs_per_batch = std::max(counts.pairs_per_batch, launches.back().pairs_per_batch);
  }
  counts.launches = static_cast<int>(launches.size());
  if (launches.empty()) return result;
  const double count = static_cast<double>(launches.size());
  std::vector<double> means;
  double within = 0, satterthwaite_denominator = 0;
  bool within_known = true;
  for (const LaunchMean& l : launches) {
    means.push_back(l.mean);
    if (!(l.df > 0)) within_known = false;
    const double share = l.variance_of_mean / (count * count);
    within += share;
    if (l.df > 0) satterthwaite_denominator += share * share / l.df;
  }
  result.mean = mean(means);
  if (within_known && within > 0) {
    result.within = within;
    result.variance = within;
    result.df = within * within / satterthwaite_denominator;  // Welch-Satterthwaite
    counts.level = "batches";
  }
  if (launches.size() < 2) return result;
  const double sd = sample_sd(means);
  const double between = sd * sd / count;
  result.between = between;
  if (prior.valid() && counts.level == "batches") {
    // The study's launch spread moderates this comparison's (its F ratio has L - 1 degrees
    // of freedom); the batches' variance stays the floor.
    const double own_df = count - 1;
    const double moderated = (prior.df * prior.ratio + own_df * between / within) / (prior.df + own_df);
    if (moderated > 1) {
      result.variance = moderated * within;
      result.df = prior.df + own_df;
      counts.level = "launches, study";
    }
    return result;
  }
  if (!(result.variance >= between)) {
    result.variance = between;
    result.df = count - 1;
    counts.level = "launches";
  }
  return result;
}

// exp(mean +- t * se) times scale, with extra_variance added to the mean's (a second
// source of error the series cannot show).
PairedEstimate estimate_of(const TwoLevelMean& m, double scale, double confidence, double extra_variance = 0) {
  PairedEstimate result = m.counts;
  if (!std::isfinite(m.mean)) return result;
  result.ratio = std::exp(m.mean) * scale;
  const double variance = m.variance + extra_variance;
  if (!(variance > 0) || !(m.df > 0)) return result;
  const double se = std::sqrt(variance);
  const double t = student_t_critical(confidence, m.df);
  result.ci = {std::exp(m.mean - t * se) * scale, std::exp(m.mean + t * se) * scale};
  const double statistic = (m.mean + std::log(scale)) / se;
  result.p_value = 2 * boost::math::cdf(boost::math::complement(boost::math::students_t(m.df), std::fabs(statistic)));
  return result;
}

}  // namespace

LaunchSpread launch_spread(const std::vector<std::vector<double>>& series_by_launch) {
  // The same two variances the estimate weighs, so the study's spread and each comparison's
  // moderation share one definition of F.
  const TwoLevelMean m = two_level_mean(series_by_launch);
  LaunchSpread spread;
  if (!(m.within > 0) || !std::isfinite(m.between)) return spread;
  spread.ratio = m.between / m.within;
  spread.df = m.counts.launches - 1;
  return spread;
}

double trigamma_inverse(double y) {
  if (y > 1e7) return 1 / std::sqrt(y);  // trigamma(x) ~ 1/x^2 near 0
  if (y < 1e-6) return 1 / y;             // trigamma(x) ~ 1/x for large x
  double x = 0.5 + 1 / y;
  for (int iteration = 0; iteration < 100; ++iteration) {
    const double tri = boost::math::trigamma(x);
    const double step = tri * (1 - tri / y) / boost::math::polygamma(2, x);
    x += step;
    if (-step / x < 1e-12) break;
  }
  return x;
}

LaunchSpreadPrior launch_spread_prior(const std::vector<LaunchSpread>& spreads) {
  LaunchSpreadPrior prior;
  // e = log F - digamma(d/2) + log(d/2) has mean log(ratio) - digamma(d0/2) + log(d0/2) and
  // variance trigamma(d/2) + trigamma(d0/2) (Smyth 2004, section 6.2).
  std::vector<double> e;
  double mean_trigamma = 0, total_df = 0;
  for (const LaunchSpread& s : spreads) {
    if (!(s.ratio > 0) || !std::isfinite(s.ratio) || !(s.df > 0)) continue;
    e.push_back(std::log(s.ratio) - boost::math::digamma(s.df / 2) + std::log(s.df / 2));
    mean_trigamma += boost::math::trigamma(s.df / 2);
    total_df += s.df;
  }
  prior.comparisons = static_cast<int>(e.size());
  if (prior.comparisons < kMinComparisonsForPrior) return prior;
  mean_trigamma /= static_cast<double>(e.size());
  const double e_mean = mean(e);
  const double e_sd = sample_sd(e);
  const double excess = e_sd * e_sd - mean_trigamma;
  // No spread beyond what each ratio's own degrees of freedom explain: the ratios share one
  // value, known to the study's total degrees of freedom.
  const double df = excess > 0 ? std::min(2 * trigamma_inverse(excess), total_df) : total_df;
  prior.df = df;
  prior.ratio = std::exp(e_mean + boost::math::digamma(df / 2) - std::log(df / 2));
  return prior;
}

PairedEstimate two_level_log_ratio(const std::vector<std::vector<double>>& log_ratios_by_launch, double scale,
                                   double confidence, const LaunchSpreadPrior& prior) {
  return estimate_of(two_level_mean(log_ratios_by_launch, prior), scale, confidence);
}

std::vector<std::vector<double>> log_ratios_by_launch(const std::vector<PairedLaunch>& launches, PairKind kind) {
  std::vector<std::vector<double>> by_launch;
  for (const PairedLaunch& launch : launches) {
    std::vector<double> series;
    for (const BlockPair& pair : launch.pairs)
      if (pair.kind == kind && pair.a_us > 0 && pair.b_us > 0) series.push_back(std::log(pair.a_us / pair.b_us));
    by_launch.push_back(std::move(series));
  }
  return by_launch;
}

PairedEstimate paired_speedup(const std::vector<PairedLaunch>& launches, const std::string& scaling, int world_size,
                              const LaunchSpreadPrior& prior) {
  const double scale = scaling == "strong" ? 1.0 : static_cast<double>(world_size);
  return two_level_log_ratio(log_ratios_by_launch(launches, PairKind::speedup), scale, 0.95, prior);
}

PairedEstimate same_session_ratio(const std::vector<PairedLaunch>& launches, PairKind kind,
                                  const LaunchSpreadPrior& prior) {
  return two_level_log_ratio(log_ratios_by_launch(launches, kind), 1.0, 0.95, prior);
}

PairedPriors paired_priors(const std::vector<std::vector<PairedLaunch>>& launches_by_comparison) {
  const auto prior_of = [&](PairKind kind) {
    std::vector<LaunchSpread> spreads;
    for (const auto& launches : launches_by_comparison)
      spreads.push_back(launch_spread(log_ratios_by_launch(launches, kind)));
    return launch_spread_prior(spreads);
  };
  return {prior_of(PairKind::speedup), prior_of(PairKind::same_one_rank), prior_of(PairKind::same_n_ranks)};
}

PairedEstimate solo_check(const std::vector<PairedLaunch>& launches, int64_t samples_per_step,
                          const LaunchGroups& one_rank_runs_by_launch, PairedSide side) {
  // Per launch: log(paired 1-rank throughput) - mean log(1-rank runs' throughput). The runs'
  // mean is a constant within the launch, so the series' spread is the blocks'; the runs'
  // own spread enters through the launch level, and within one launch through its variance.
  std::vector<std::vector<double>> series;
  double runs_variance_of_mean = 0;
  for (const PairedLaunch& launch : launches) {
    const size_t l = static_cast<size_t>(launch.launch);
    if (l >= one_rank_runs_by_launch.size() || one_rank_runs_by_launch[l].empty()) continue;
    std::vector<double> log_runs;
    for (double x : one_rank_runs_by_launch[l])
      if (x > 0) log_runs.push_back(std::log(x));
    if (log_runs.empty()) continue;
    const double runs_mean = mean(log_runs);
    if (log_runs.size() >= 2) {
      const double sd = sample_sd(log_runs);
      runs_variance_of_mean += sd * sd / static_cast<double>(log_runs.size());
    }
    std::vector<double> values;
    for (const BlockPair& pair : launch.pairs)
      if (const double us = side == PairedSide::one_rank ? pair.a_us : pair.b_us;
          pair.kind == PairKind::speedup && us > 0 && (side == PairedSide::n_ranks || pair.one_rank == 0))
        values.push_back(std::log(static_cast<double>(samples_per_step) * launch.block_steps / (us * 1e-6)) - runs_mean);
    series.push_back(std::move(values));
  }
  const TwoLevelMean m = two_level_mean(series);
  // Over launches, the launch means carry the runs' spread too; within one launch the
  // series cannot show it, so the runs' own variance of their mean is added.
  const double count = static_cast<double>(std::max(1, m.counts.launches));
  const double extra = m.counts.level == "batches" ? runs_variance_of_mean / (count * count) : 0;
  return estimate_of(m, 1.0, 0.95, extra);
}

bool PairedChecks::aa_covers_one() const {
  const auto covers = [](const PairedEstimate& e) { return !e.ci.valid() || e.ci.contains(1.0); };
  return covers(same_one_rank) && covers(same_n_ranks);
}

PairedChecks paired_checks(const std::vector<PairedLaunch>& launches, const std::string& scaling, int world_size,
                           int64_t one_rank_samples_per_step, const LaunchGroups& one_rank_runs_by_launch,
                           int64_t n_ranks_samples_per_step, const LaunchGroups& n_ranks_runs_by_launch,
                           const PairedPriors& priors) {
  PairedChecks checks;
  if (launches.empty()) return checks;
  checks.measured = true;
  checks.speedup = paired_speedup(launches, scaling, world_size, priors.speedup);
  checks.same_one_rank = same_session_ratio(launches, PairKind::same_one_rank, priors.same_one_rank);
  checks.same_n_ranks = same_session_ratio(launches, PairKind::same_n_ranks, priors.same_n_ranks);
  checks.solo = solo_check(launches, one_rank_samples_per_step, one_rank_runs_by_launch);
  if (n_ranks_samples_per_step > 0)
    checks.solo_n_ranks = solo_check(launches, n_ranks_samples_per_step, n_ranks_runs_by_launch, PairedSide::n_ranks);
  for (const PairedLaunch& launch : launches) {
    checks.block_steps.push_back(launch.block_steps);
    checks.window_speedups.push_back(launch.window_speedups);
    checks.autocorrelation_lag1.push_back(launch.autocorrelation.empty() ? kNaN : launch.autocorrelation[0]);
  }
  return checks;
}

}  // namespace ddpscale
