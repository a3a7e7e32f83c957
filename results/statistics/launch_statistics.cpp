#include "results/statistics/launch_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace ddpscale {
namespace {

// A uniform double in (0, 1) from the generator's raw bits (std::uniform_real_distribution is
// implementation-defined, like uniform_int_distribution: see uniform_index).
double open_unit(std::mt19937_64& generator) {
  return (static_cast<double>(generator() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// Box-Muller: a standard normal from two uniforms (std::normal_distribution is
// implementation-defined too).
double standard_normal(std::mt19937_64& generator) {
  const double u = open_unit(generator), v = open_unit(generator);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

struct BestCut {
  double share = kNaN;  // B / T of the best contiguous split
  size_t low_count = 0;
};

// The best split of sorted values into a lower and an upper group: the cut maximising the
// between-group sum of squares B = k (n - k) / n (mean_low - mean_high)^2.
BestCut best_cut_of_sorted(const std::vector<double>& sorted) {
  BestCut best;
  const size_t n = sorted.size();
  if (n < 2) return best;
  double total = 0;
  for (double v : sorted) total += v;
  const double grand = total / static_cast<double>(n);
  double total_ss = 0;
  for (double v : sorted) total_ss += (v - grand) * (v - grand);
  if (!(total_ss > 0)) return best;
  double low_sum = 0, best_between = -1;
  for (size_t k = 1; k < n; ++k) {
    low_sum += sorted[k - 1];
    const double low_mean = low_sum / static_cast<double>(k);
    const double high_mean = (total - low_sum) / static_cast<double>(n - k);
    const double between = static_cast<double>(k) * static_cast<double>(n - k) / static_cast<double>(n) *
                           (low_mean - high_mean) * (low_mean - high_mean);
    if (between > best_between) {
      best_between = between;
      best.low_count = k;
    }
  }
  best.share = best_between / total_ss;
  return best;
}

double mean_of_range(const std::vector<double>& sorted, size_t begin, size_t end) {
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += sorted[i];
  return sum / static_cast<double>(end - begin);
}

std::vector<double> non_empty_means(const LaunchGroups& groups) {
  std::vector<double> means;
  for (const auto& g : groups)
    if (!g.empty()) means.push_back(mean(g));
  return means;
}

// The launches with runs on both sides, in order.
void pair_launches(const LaunchGroups& one, const LaunchGroups& n, LaunchGroups& one_out, LaunchGroups& n_out) {
  for (size_t l = 0; l < std::min(one.size(), n.size()); ++l) {
    if (one[l].empty() || n[l].empty()) continue;
    one_out.push_back(one[l]);
    n_out.push_back(n[l]);
  }
}

std::vector<double> flatten(const LaunchGroups& groups) {
  std::vector<double> all;
  for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
  return all;
}

}  // namespace

VarianceComponents launch_variance_components(const LaunchGroups& groups) {
  VarianceComponents result;
  std::vector<const std::vector<double>*> used;
  for (const auto& g : groups)
    if (!g.empty()) used.push_back(&g);
  result.launches = used.size();
  double total_n = 0, sum = 0, sum_n_squared = 0;
  for (const auto* g : used) {
    total_n += static_cast<double>(g->size());
    sum_n_squared += static_cast<double>(g->size() * g->size());
    for (double v : *g) sum += v;
  }
  const double launches = static_cast<double>(used.size());
  if (used.size() < 2 || total_n - launches < 1) return result;
  const double grand = sum / total_n;
  double between_ss = 0, within_ss = 0;
  for (const auto* g : used) {
    const double m = mean(*g);
    between_ss += static_cast<double>(g->size()) * (m - grand) * (m - grand);
    for (double v : *g) within_ss += (v - m) * (v - m);
  }
  const double msb = between_ss / (launches - 1);
  const double msw = within_ss / (total_n - launches);
  const double n0 = (total_n - sum_n_squared / total_n) / (launches - 1);
  result.within_variance = msw;
  result.between_variance = std::max(0.0, (msb - msw) / n0);
  const double total = result.between_variance + result.within_variance;
  result.between_share = total > 0 ? result.between_variance / total : 0.0;
  return result;
}

LevelSplit two_level_split(const std::vector<double>& values, int null_samples, uint64_t seed) {
  LevelSplit split;
  split.n = values.size();
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const BestCut cut = best_cut_of_sorted(sorted);
  if (!std::isfinite(cut.share)) return split;
  split.statistic = cut.share;
  split.low_count = cut.low_count;
  split.low_mean = mean_of_range(sorted, 0, cut.low_count);
  split.high_mean = mean_of_range(sorted, cut.low_count, sorted.size());
  split.ratio = split.low_mean > 0 ? split.high_mean / split.low_mean : kNaN;
  if (sorted.size() < 4 || null_samples < 1) return split;
  std::mt19937_64 generator(seed + sorted.size());
  std::vector<double> sample(sorted.size());
  int at_least_as_large = 0;
  for (int s = 0; s < null_samples; ++s) {
    for (double& v : sample) v = standard_normal(generator);
    std::sort(sample.begin(), sample.end());
    if (best_cut_of_sorted(sample).share >= split.statistic) ++at_least_as_large;
  }
  // (count + 1) / (samples + 1): a Monte Carlo p-value is never 0 (Davison and Hinkley 1997, 4.2.1).
  split.p_value = (at_least_as_large + 1.0) / (null_samples + 1.0);
  return split;
}

bool has_separate_levels(const LevelSplit& split, double alpha, double min_ratio) {
  return split.p_value < alpha && split.low_count >= 2 && split.n - split.low_count >= 2 && split.ratio >= min_ratio;
}

LaunchSpeedup two_level_bootstrap_speedup(const LaunchGroups& one_gpu, const LaunchGroups& n_gpu, int world_size,
                                          const BootstrapOptions& options) {
  LaunchGroups one, n;
  pair_launches(one_gpu, n_gpu, one, n);
  LaunchSpeedup result;
  result.launches = one.size();
  if (one.size() < 2) {
    result.estimate = bootstrap_speedup(flatten(one), flatten(n), world_size, options);
    return result;
  }
  SpeedupEstimate& estimate = result.estimate;
  estimate.world_size = world_size;
  const double one_mean = mean(non_empty_means(one)), n_mean = mean(non_empty_means(n));
  if (!(one_mean > 0) || !(n_mean > 0)) return result;
  estimate.speedup = n_mean / one_mean;
  estimate.efficiency = estimate.speedup / world_size;

  std::mt19937_64 generator(options.seed);
  const size_t launches = one.size();
  std::vector<double> log_ratios;
  log_ratios.reserve(static_cast<size_t>(options.resamples));
  for (int b = 0; b < options.resamples; ++b) {
    double one_sum = 0, n_sum = 0;
    for (size_t pick = 0; pick < launches; ++pick) {
      const size_t l = uniform_index(generator, launches);
      one_sum += mean(resample_with_replacement(one[l], generator));
      n_sum += mean(resample_with_replacement(n[l], generator));
    }
    if (one_sum > 0 && n_sum > 0) log_ratios.push_back(std::log(n_sum / one_sum));
  }
  estimate.resamples = static_cast<int>(log_ratios.size());
  const double df = static_cast<double>(launches - 1);
  const double se = sample_sd(log_ratios) * std::sqrt(static_cast<double>(launches) / df);
  result.log_standard_error = se;
  if (!std::isfinite(se)) return result;
  const double center = std::log(estimate.speedup);
  const double half = student_t_critical(options.confidence, df) * se;
  estimate.speedup_ci = {std::exp(center - half), std::exp(center + half)};
  estimate.efficiency_ci = {estimate.speedup_ci.low / world_size, estimate.speedup_ci.high / world_size};
  return result;
}

int launches_for_half_width(double speedup, const Interval& interval, int launches, double target, int most) {
  if (launches < 2 || !interval.valid() || !(speedup > 0) || !(interval.low > 0) || !(target > 0)) return -1;
  const double h = (std::log(interval.high) - std::log(interval.low)) / 2;
  const double spread = h * std::sqrt(static_cast<double>(launches)) / student_t_critical(0.95, launches - 1);
  const double wanted = std::asinh(target);
  for (int n = 2; n <= most; ++n)
    if (student_t_critical(0.95, n - 1) * spread / std::sqrt(static_cast<double>(n)) <= wanted) return n;
  return -1;
}

}  // namespace ddpscale
