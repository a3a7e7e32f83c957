// The statistics that turn runs into claims: descriptive summaries, outlier removal,
// Welch's t-test and the speedup of N GPUs over 1 with confidence intervals.
// Plain functions on plain vectors: no LibTorch, no MPI, no HDF5.
//
// Conventions, chosen once for the whole report:
// - "sd" is the sample standard deviation (denominator n - 1).
// - Quantiles are R's type 7 (numpy's default "linear"): h = (n - 1) p, linear
//   interpolation between the order statistics x[floor(h)] and x[floor(h) + 1].
// - Confidence intervals are two-sided, 95% unless asked otherwise.
// - A statistic that cannot be computed (too few values, a zero denominator) is NaN,
//   never a made-up number: the report prints "n/a".
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ddpscale {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A closed interval [low, high]; NaN bounds mean "cannot be formed".
struct Interval {
  double low = kNaN;
  double high = kNaN;
  bool valid() const;                  // both bounds finite
  bool contains(double value) const;   // false when not valid
};

// ---- Descriptive statistics -------------------------------------------------------

double mean(const std::vector<double>& values);                 // NaN when empty
double sample_sd(const std::vector<double>& values);            // n - 1 denominator; NaN when n < 2
double quantile_type7(std::vector<double> values, double p);    // R type 7; NaN when empty
double median(const std::vector<double>& values);               // NaN when empty

struct Quartiles {
  double q1 = kNaN;
  double median = kNaN;
  double q3 = kNaN;
};
Quartiles quartiles(const std::vector<double>& values);         // type 7, like R's quantile()

// Student-t quantile: the value t with P(T <= t) = p for T with df degrees of freedom.
double student_t_quantile(double p, double df);
// The critical value of a two-sided interval: confidence 0.95 gives quantile(0.975, df).
double student_t_critical(double confidence, double df);

// The t-interval of the mean: mean +- t(df = n - 1) * sd / sqrt(n). Invalid when n < 2.
Interval mean_confidence_interval(const std::vector<double>& values, double confidence = 0.95);

// The t-interval of the mean log, exponentiated: exp(m +- t(df = n - 1) * s / sqrt(n)) with m
// and s the mean and sample sd of ln(values). An interval of the geometric mean, for a
// quantity that cannot be negative (a throughput): its low end stays above zero however
// widely the values spread, where the plain t-interval of a few scattered runs reaches below
// zero. Invalid when n < 2 or a value is not a positive finite number.
Interval log_scale_confidence_interval(const std::vector<double>& values, double confidence = 0.95);

// What the report prints for one quantity measured over runs.
struct Summary {
  size_t n = 0;
  double mean = kNaN;
  double sd = kNaN;
  // 95%; NaN when n < 2. summarize: the t-interval of the mean; summarize_positive: the
  // log-scale interval (log_scale_confidence_interval), which need not be centred on the mean.
  double ci_low = kNaN;
  double ci_high = kNaN;
  double median = kNaN;
  double q1 = kNaN;
  double q3 = kNaN;
  double min = kNaN;
  double max = kNaN;
};
Summary summarize(const std::vector<double>& values);
// summarize, with the interval on the log scale: for quantities that cannot be negative
// (throughputs). NaN interval where a value is not positive.
Summary summarize_positive(const std::vector<double>& values);

// ---- Outliers: modified Z-score (Iglewicz & Hoaglin 1993) ------------------------

// M_i = 0.6745 (x_i - median) / MAD, MAD = median |x_i - median|.
// When MAD is 0 (more than half the values equal the median, e.g. quantised timers) the
// MAD says nothing about spread; we then fall back to the mean absolute deviation from
// the median, M_i = (x_i - median) / (1.253314 MeanAD) (1.253314 = sqrt(pi/2) makes
// MeanAD estimate the same sigma that MAD / 0.6745 does). Values equal to the median
// always score 0. When MeanAD is 0 too, all values are equal and every score is 0.
std::vector<double> modified_z_scores(const std::vector<double>& values);

struct OutlierFilterResult {
  std::vector<double> kept;          // in input order
  std::vector<size_t> kept_indices;  // positions of the kept values in the input
  size_t removed = 0;
};
// Removes the values with |M_i| > threshold (3.5 as Iglewicz & Hoaglin recommend).
OutlierFilterResult remove_outliers_modified_z(const std::vector<double>& values, double threshold = 3.5);

// ---- Welch's two-sample t-test -----------------------------------------------------

struct WelchTestResult {
  double t = kNaN;        // (mean(a) - mean(b)) / sqrt(var(a)/na + var(b)/nb)
  double df = kNaN;       // Welch-Satterthwaite degrees of freedom
  double p_value = kNaN;  // two-tailed
};
// Unequal variances assumed (the 1-GPU and N-GPU spreads differ in practice).
// NaN fields when a group has fewer than 2 values or both variances are 0.
WelchTestResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

// ---- Speedup of N GPUs over 1 ------------------------------------------------------

struct BootstrapOptions {
  int resamples = 10000;
  uint64_t seed = 20240917;  // fixed: the same study gives the same interval every time
  double confidence = 0.95;
};

// An index uniform in [0, n) from the generator's raw 64-bit output by rejection.
// std::uniform_int_distribution is implementation-defined (libstdc++ and libc++ differ),
// std::mt19937_64's output sequence is not: this keeps intervals identical across builds.
size_t uniform_index(std::mt19937_64& generator, size_t n);

// A bootstrap resample: n draws with replacement from values.
std::vector<double> resample_with_replacement(const std::vector<double>& values, std::mt19937_64& generator);

struct SpeedupEstimate {
  int world_size = 1;
  double speedup = kNaN;      // mean throughput(N) / mean throughput(1)
  Interval speedup_ci;        // bootstrap percentile interval
  double efficiency = kNaN;   // speedup / N
  Interval efficiency_ci;     // speedup_ci / N
  int resamples = 0;
};

// Ratio of the two means; each group resampled independently with replacement (runs of
// world size 1 and of world size N are independent experiments).
// Throughputs are global samples per second. Invalid interval when a group is empty or
// its mean is not positive.
SpeedupEstimate bootstrap_speedup(const std::vector<double>& throughput_1gpu,
                                  const std::vector<double>& throughput_ngpu, int world_size,
                                  const BootstrapOptions& options = {});

// Fieller's interval for mean(numerator) / mean(denominator) of two independent samples,
// with the Welch-Satterthwaite df of mean(num) - ratio * mean(den). A cross-check of the
// bootstrap, which is the primary interval. Invalid when the denominator's mean is not
// significantly different from 0 (the Fieller set is then unbounded).
Interval fieller_ratio_interval(const std::vector<double>& numerator, const std::vector<double>& denominator,
                                double confidence = 0.95);

// Percentile interval of values sorted ascending (type-7 quantiles at (1 -+ confidence)/2).
// Non-finite entries (sorted last) make the bounds that reach them NaN.
Interval percentile_interval(const std::vector<double>& sorted_values, double confidence);

}  // namespace ddpscale
