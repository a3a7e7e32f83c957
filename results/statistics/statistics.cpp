#include "results/statistics/statistics.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>

namespace ddpscale {

bool Interval::valid() const { return std::isfinite(low) && std::isfinite(high); }

bool Interval::contains(double value) const { return valid() && low <= value && value <= high; }

// ---- Descriptive statistics -------------------------------------------------------

double mean(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double sample_sd(const std::vector<double>& values) {
  if (values.size() < 2) return kNaN;
  // Two passes (mean first, then squared deviations): the one-pass sum-of-squares formula
  // loses every digit when throughputs of ~1e5 differ by ~1.
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

namespace {

// Type-7 quantile of values already sorted ascending.
double quantile_of_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty() || !(p >= 0 && p <= 1)) return kNaN;
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const size_t below = static_cast<size_t>(std::floor(h));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = h - static_cast<double>(below);
  if (fraction == 0) return sorted[below];
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

}  // namespace

double quantile_type7(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return quantile_of_sorted(values, p);
}

double median(const std::vector<double>& values) { return quantile_type7(values, 0.5); }

Quartiles quartiles(const std::vector<double>& values) {
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  return {quantile_of_sorted(sorted, 0.25), quantile_of_sorted(sorted, 0.5), quantile_of_sorted(sorted, 0.75)};
}

double student_t_quantile(double p, double df) {
  if (!(df > 0) || !(p > 0 && p < 1)) return kNaN;
  return boost::math::quantile(boost::math::students_t(df), p);
}

double student_t_critical(double confidence, double df) { return student_t_quantile(0.5 + confidence / 2, df); }

Interval mean_confidence_interval(const std::vector<double>& values, double confidence) {
  if (values.size() < 2) return {};
  const double n = static_cast<double>(values.size());
  const double half_width = student_t_critical(confidence, n - 1) * sample_sd(values) / std::sqrt(n);
  const double m = mean(values);
  return {m - half_width, m + half_width};
}

Interval log_scale_confidence_interval(const std::vector<double>& values, double confidence) {
  if (values.size() < 2) return {};
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return {};
    logs.push_back(std::log(v));
  }
  const Interval on_log_scale = mean_confidence_interval(logs, confidence);
  return {std::exp(on_log_scale.low), std::exp(on_log_scale.high)};
}

Summary summarize(const std::vector<double>& values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  s.mean = mean(values);
  s.sd = sample_sd(values);
  const Interval ci = mean_confidence_interval(values, 0.95);
  s.ci_low = ci.low;
  s.ci_high = ci.high;
  s.median = quantile_of_sorted(sorted, 0.5);
  s.q1 = quantile_of_sorted(sorted, 0.25);
  s.q3 = quantile_of_sorted(sorted, 0.75);
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

Summary summarize_positive(const std::vector<double>& values) {
  Summary s = summarize(values);
  const Interval ci = log_scale_confidence_interval(values, 0.95);
  s.ci_low = ci.low;
  s.ci_high = ci.high;
  return s;
}

// ---- Outliers ----------------------------------------------------------------------

std::vector<double> modified_z_scores(const std::vector<double>& values) {
  std::vector<double> scores(values.size(), 0.0);
  if (values.empty()) return scores;
  const double center = median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - center));
  const double mad = median(deviations);
  double scale = mad / 0.6745;  // M_i = 0.6745 (x_i - median) / MAD = (x_i - median) / scale
  if (mad == 0) scale = 1.253314 * mean(deviations);  // see the header: MAD says nothing here
  if (scale == 0) return scores;                      // all values equal: nothing stands out
  for (size_t i = 0; i < values.size(); ++i) scores[i] = (values[i] - center) / scale;
  return scores;
}

OutlierFilterResult remove_outliers_modified_z(const std::vector<double>& values, double threshold) {
  OutlierFilterResult result;
  const std::vector<double> scores = modified_z_scores(values);
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::fabs(scores[i]) > threshold) {
      ++result.removed;
    } else {
      result.kept.push_back(values[i]);
      result.kept_indices.push_back(i);
    }
  }
  return result;
}

// ---- Welch's t-test ------------------------------------------------------------------

WelchTestResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  WelchTestResult result;
  if (a.size() < 2 || b.size() < 2) return result;
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  const double va = std::pow(sample_sd(a), 2) / na;  // squared standard error of each mean
  const double vb = std::pow(sample_sd(b), 2) / nb;
  if (va + vb == 0) return result;  // two constant groups: no spread to test against
  result.t = (mean(a) - mean(b)) / std::sqrt(va + vb);
  result.df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
  const boost::math::students_t distribution(result.df);
  result.p_value = 2 * boost::math::cdf(boost::math::complement(distribution, std::fabs(result.t)));
  return result;
}

// ---- Speedup ---------------------------------------------------------------------------

size_t uniform_index(std::mt19937_64& generator, size_t n) {
  // Reject the top partial block of the 64-bit range so that every index is equally likely.
  const uint64_t range = static_cast<uint64_t>(n);
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
  uint64_t draw = generator();
  while (draw >= limit) draw = generator();
  return static_cast<size_t>(draw % range);
}

std::vector<double> resample_with_replacement(const std::vector<double>& values, std::mt19937_64& generator) {
  std::vector<double> resample;
  resample.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) resample.push_back(values[uniform_index(generator, values.size())]);
  return resample;
}

Interval percentile_interval(const std::vector<double>& sorted_values, double confidence) {
  const double tail = (1 - confidence) / 2;
  Interval interval{quantile_of_sorted(sorted_values, tail), quantile_of_sorted(sorted_values, 1 - tail)};
  // An infinite or NaN value inside the interpolation means that tail is unbounded.
  if (!std::isfinite(interval.low)) interval.low = kNaN;
  if (!std::isfinite(interval.high)) interval.high = kNaN;
  return interval;
}

SpeedupEstimate bootstrap_speedup(const std::vector<double>& throughput_1gpu,
                                  const std::vector<double>& throughput_ngpu, int world_size,
                                  const BootstrapOptions& options) {
  SpeedupEstimate estimate;
  estimate.world_size = world_size;
  if (throughput_1gpu.empty() || throughput_ngpu.empty() || !(mean(throughput_1gpu) > 0)) return estimate;
  estimate.speedup = mean(throughput_ngpu) / mean(throughput_1gpu);
  estimate.efficiency = estimate.speedup / world_size;

  // Each resample draws the 1-GPU group first, then the N-GPU group, from one generator:
  // part of what makes the interval a pure function of (data, seed, resamples).
  std::mt19937_64 generator(options.seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(std::max(options.resamples, 0)));
  for (int b = 0; b < options.resamples; ++b) {
    const double base = mean(resample_with_replacement(throughput_1gpu, generator));
    const double scaled = mean(resample_with_replacement(throughput_ngpu, generator));
    ratios.push_back(base > 0 ? scaled / base : std::numeric_limits<double>::infinity());
  }
  std::sort(ratios.begin(), ratios.end());
  estimate.resamples = options.resamples;
  estimate.speedup_ci = percentile_interval(ratios, options.confidence);
  estimate.efficiency_ci = {estimate.speedup_ci.low / world_size, estimate.speedup_ci.high / world_size};
  return estimate;
}

Interval fieller_ratio_interval(const std::vector<double>& numerator, const std::vector<double>& denominator,
                                double confidence) {
  if (numerator.size() < 2 || denominator.size() < 2) return {};
  const double x = mean(numerator);
  const double y = mean(denominator);
  const double vx = std::pow(sample_sd(numerator), 2) / static_cast<double>(numerator.size());
  const double vy = std::pow(sample_sd(denominator), 2) / static_cast<double>(denominator.size());
  const double ratio = x / y;
  // Welch-Satterthwaite df of x - ratio * y, whose variance is vx + ratio^2 vy.
  const double vr = ratio * ratio * vy;
  const double df = (vx + vr) * (vx + vr) /
                    (vx * vx / static_cast<double>(numerator.size() - 1) +
                     vr * vr / static_cast<double>(denominator.size() - 1));
  const double t = student_t_critical(confidence, df);
  // The interval is {theta : (x - theta y)^2 <= t^2 (vx + theta^2 vy)}, a quadratic in theta:
  // (y^2 - t^2 vy) theta^2 - 2 x y theta + (x^2 - t^2 vx) <= 0.
  const double a = y * y - t * t * vy;
  if (!(a > 0)) return {};  // y not significantly nonzero: the set is unbounded
  const double discriminant = t * t * (vx * a + vy * x * x);
  const double root = std::sqrt(discriminant);
  return {(x * y - root) / a, (x * y + root) / a};
}

}  // namespace ddpscale
