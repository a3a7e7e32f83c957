// The statistics module against known answers. Every expected number below was computed
// once, outside this code, by the call named next to it:
//   R 4.2.2 (Debian r-base-core 4.2.2) and scipy 1.10.1 / numpy (Debian python3-scipy),
// and is written here as a constant. Where no outside tool computes the same thing
// (our bootstrap's resamples), the test checks properties with known truth instead.
#include "results/analysis/config_summary.hpp"
#include "results/analysis/thresholds.hpp"
#include "results/statistics/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

// ---- Student-t quantiles ------------------------------------------------------------

TEST(StudentT, TwoSided95QuantilesMatchR) {
  // R: qt(0.975, c(9, 49, 1, 7.3)) -> 2.26215716279820 2.00957523712924 12.70620473617469 2.34506673654770
  // (scipy.stats.t.ppf(0.975, [9, 49]) -> 2.26215716, 2.00957523; table values 2.262, 2.010)
  EXPECT_NEAR(student_t_critical(0.95, 9), 2.26215716279820, 1e-10);
  EXPECT_NEAR(student_t_critical(0.95, 49), 2.00957523712924, 1e-10);
  EXPECT_NEAR(student_t_critical(0.95, 1), 12.70620473617469, 1e-9);
  EXPECT_NEAR(student_t_critical(0.95, 7.3), 2.34506673654770, 1e-10);  // fractional df, as Welch gives
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.26215716279820, 1e-10);
  EXPECT_NEAR(student_t_quantile(0.025, 9), -2.26215716279820, 1e-10);
}

TEST(StudentT, InvalidArgumentsGiveNaN) {
  EXPECT_TRUE(std::isnan(student_t_quantile(0.975, 0)));
  EXPECT_TRUE(std::isnan(student_t_quantile(1.0, 5)));
}

// ---- Descriptive ---------------------------------------------------------------------

const std::vector<double> kSmall = {12.1, 11.8, 12.6, 12.3, 11.9, 12.4, 12.0};

TEST(Descriptive, MeanSdAndTIntervalMatchR) {
  // R: x <- c(12.1, 11.8, 12.6, 12.3, 11.9, 12.4, 12.0)
  //    mean(x) -> 12.1571428571429; sd(x) -> 0.28784916685157
  //    t.test(x)$conf.int -> 11.8909267790233 12.4233589352624
  EXPECT_NEAR(mean(kSmall), 12.1571428571429, 1e-12);
  EXPECT_NEAR(sample_sd(kSmall), 0.28784916685157, 1e-12);
  const Interval ci = mean_confidence_interval(kSmall);
  EXPECT_NEAR(ci.low, 11.8909267790233, 1e-10);
  EXPECT_NEAR(ci.high, 12.4233589352624, 1e-10);
}

TEST(Descriptive, SummaryMatchesR) {
  // R: quantile(x, c(.25, .5, .75), type = 7) -> 11.95 12.10 12.35; range(x) -> 11.8 12.6
  const Summary s = summarize(kSmall);
  EXPECT_EQ(s.n, 7u);
  EXPECT_NEAR(s.mean, 12.1571428571429, 1e-12);
  EXPECT_NEAR(s.sd, 0.28784916685157, 1e-12);
  EXPECT_NEAR(s.ci_low, 11.8909267790233, 1e-10);
  EXPECT_NEAR(s.ci_high, 12.4233589352624, 1e-10);
  EXPECT_NEAR(s.q1, 11.95, 1e-12);
  EXPECT_NEAR(s.median, 12.10, 1e-12);
  EXPECT_NEAR(s.q3, 12.35, 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 11.8);
  EXPECT_DOUBLE_EQ(s.max, 12.6);
}

TEST(Descriptive, LogScaleIntervalMatchesScipy) {
  // Python, numpy 1.24 + scipy 1.10: l = np.log(x); h = stats.t.ppf(0.975, 6) * np.std(l, ddof=1) / sqrt(7)
  //   math.exp(l.mean() - h) -> 11.891695261758928; math.exp(l.mean() + h) -> 12.422567080118723
  // 1e-9: Boost.Math's t quantile against scipy's, two implementations (they agree to ~1e-9).
  const Interval ci = log_scale_confidence_interval(kSmall);
  EXPECT_NEAR(ci.low, 11.891695261758928, 1e-9 * 11.9);
  EXPECT_NEAR(ci.high, 12.422567080118723, 1e-9 * 12.4);
  const Summary s = summarize_positive(kSmall);
  EXPECT_DOUBLE_EQ(s.ci_low, ci.low);  // the same function's result, copied
  EXPECT_DOUBLE_EQ(s.ci_high, ci.high);
  EXPECT_NEAR(s.mean, 12.1571428571429, 1e-12);  // the rest of the summary is summarize's
  EXPECT_NEAR(s.sd, 0.28784916685157, 1e-12);
  EXPECT_NEAR(s.median, 12.10, 1e-12);
}

TEST(Descriptive, ScatteredThroughputsKeepAPositiveInterval) {
  // Three runs that scatter as a loaded CPU host's do. The t-interval of the mean reaches
  // below zero (scipy: -3826.15475491274, 6859.488088246074); the log-scale one cannot:
  // Python, numpy + scipy: exp(mean(log) -+ t(0.975, 2) sd(log) / sqrt(3)) -> 14.211028206798659,
  // 31534.6974289533, around the geometric mean 669.4329500821694 (1e-9 relative as above).
  const std::vector<double> scattered{250.0, 4000.0, 300.0};
  const Interval plain = mean_confidence_interval(scattered);
  EXPECT_NEAR(plain.low, -3826.15475491274, 1e-9 * 3826.2);
  const Summary s = summarize_positive(scattered);
  EXPECT_NEAR(s.ci_low, 14.211028206798659, 1e-9 * 14.2);
  EXPECT_NEAR(s.ci_high, 31534.6974289533, 1e-9 * 31534.7);
  EXPECT_GT(s.ci_low, 0.0);
  EXPECT_NEAR(s.mean, 1516.6666666666667, 1e-9);
}

TEST(Descriptive, LogScaleIntervalNeedsTwoPositiveValues) {
  EXPECT_FALSE(log_scale_confidence_interval({5.0}).valid());
  EXPECT_FALSE(log_scale_confidence_interval({}).valid());
  EXPECT_FALSE(log_scale_confidence_interval({5.0, 0.0, 6.0}).valid());
  EXPECT_FALSE(log_scale_confidence_interval({5.0, -1.0}).valid());
  EXPECT_FALSE(log_scale_confidence_interval({5.0, kNaN}).valid());
  const Summary with_zero = summarize_positive({5.0, 0.0, 6.0});
  EXPECT_TRUE(std::isnan(with_zero.ci_low));  // no interval rather than a made-up one
  EXPECT_DOUBLE_EQ(with_zero.mean, 11.0 / 3.0);
}

TEST(Descriptive, QuartilesAreType7) {
  // R: q <- c(7, 15, 36, 39, 40, 41); quantile(q, c(.25, .5, .75), type = 7) -> 20.25 37.50 39.75;
  //    IQR(q, type = 7) -> 19.5.  numpy.percentile(q, [25, 50, 75]) -> [20.25 37.5 39.75].
  // (Type 6, Minitab/SPSS, would give q1 = 13 and q3 = 40.25: the definition matters.)
  const Quartiles q = quartiles({41, 7, 39, 15, 40, 36});  // unsorted on purpose
  EXPECT_DOUBLE_EQ(q.q1, 20.25);
  EXPECT_DOUBLE_EQ(q.median, 37.5);
  EXPECT_DOUBLE_EQ(q.q3, 39.75);
  EXPECT_DOUBLE_EQ(q.q3 - q.q1, 19.5);
  EXPECT_DOUBLE_EQ(quantile_type7({7, 15, 36, 39, 40, 41}, 0.0), 7);
  EXPECT_DOUBLE_EQ(quantile_type7({7, 15, 36, 39, 40, 41}, 1.0), 41);
}

TEST(Descriptive, FewerThanTwoValuesGiveNaNInterval) {
  const Summary one = summarize({5.0});
  EXPECT_EQ(one.n, 1u);
  EXPECT_DOUBLE_EQ(one.mean, 5.0);
  EXPECT_DOUBLE_EQ(one.median, 5.0);
  EXPECT_DOUBLE_EQ(one.min, 5.0);
  EXPECT_DOUBLE_EQ(one.max, 5.0);
  EXPECT_TRUE(std::isnan(one.sd));
  EXPECT_TRUE(std::isnan(one.ci_low));
  EXPECT_TRUE(std::isnan(one.ci_high));
  EXPECT_FALSE(mean_confidence_interval({5.0}).valid());

  const Summary none = summarize({});
  EXPECT_EQ(none.n, 0u);
  EXPECT_TRUE(std::isnan(none.mean));
  EXPECT_TRUE(std::isnan(none.median));
  EXPECT_TRUE(std::isnan(none.ci_low));
}

// ---- Outliers --------------------------------------------------------------------------

TEST(Outliers, ModifiedZScoresMatchR) {
  // R: y <- c(100.2, 99.8, 100.5, 99.9, 100.1, 100.3, 99.7, 100.0, 130.0)
  //    0.6745 * (y - median(y)) / mad(y, constant = 1)
  //    -> 0.33725 -1.01175 1.349 -0.6745 0 0.6745 -1.349 -0.33725 100.83775
  const std::vector<double> y = {100.2, 99.8, 100.5, 99.9, 100.1, 100.3, 99.7, 100.0, 130.0};
  const std::vector<double> expected = {0.33725, -1.01175, 1.349, -0.6745, 0, 0.6745, -1.349, -0.33725, 100.83775};
  const std::vector<double> scores = modified_z_scores(y);
  ASSERT_EQ(scores.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(scores[i], expected[i], 1e-9) << "i=" << i;
}

TEST(Outliers, PlantedOutlierIsTheOnlyOneRemoved) {
  const std::vector<double> y = {100.2, 99.8, 100.5, 99.9, 100.1, 100.3, 99.7, 100.0, 130.0};
  const OutlierFilterResult r = remove_outliers_modified_z(y);
  EXPECT_EQ(r.removed, 1u);
  ASSERT_EQ(r.kept.size(), 8u);
  EXPECT_EQ(r.kept_indices, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(r.kept.back(), 100.0);
}

TEST(Outliers, CleanDataKeepsEverything) {
  // Scores from the same R call are all within +-1.349 (see above, without the 130.0).
  const std::vector<double> y = {100.2, 99.8, 100.5, 99.9, 100.1, 100.3, 99.7, 100.0};
  const OutlierFilterResult r = remove_outliers_modified_z(y);
  EXPECT_EQ(r.removed, 0u);
  EXPECT_EQ(r.kept, y);
}

TEST(Outliers, ZeroMadFallsBackToMeanAbsoluteDeviation) {
  // Median 5, MAD 0: MeanAD = (0+0+0+0+0+1+15)/7 = 16/7, scale = 1.253314 * 16/7.
  // R: y <- c(5,5,5,5,5,6,20); mad(y, constant = 1) -> 0
  //    (y - median(y)) / (1.253314 * mean(abs(y - median(y))))
  //    -> 0 0 0 0 0 0.349074533596529 5.236118003947933   (5.24 > 3.5: removed)
  // Values equal to the median score 0 and stay.
  const std::vector<double> y = {5, 5, 5, 5, 5, 6, 20};
  const std::vector<double> scores = modified_z_scores(y);
  EXPECT_DOUBLE_EQ(scores[0], 0.0);
  EXPECT_NEAR(scores[5], 0.349074533596529, 1e-12);
  EXPECT_NEAR(scores[6], 5.236118003947933, 1e-12);
  const OutlierFilterResult r = remove_outliers_modified_z(y);
  EXPECT_EQ(r.removed, 1u);
  EXPECT_EQ(r.kept, (std::vector<double>{5, 5, 5, 5, 5, 6}));

  const OutlierFilterResult constant = remove_outliers_modified_z({3, 3, 3, 3});
  EXPECT_EQ(constant.removed, 0u);
  EXPECT_EQ(constant.kept.size(), 4u);
}

// ---- Welch ---------------------------------------------------------------------------

TEST(Welch, MatchesRAndScipy) {
  // R: a <- c(10.2, 11.5, 9.8, 10.9, 11.1, 10.4); b <- c(11.0, 12.3, 10.7, 11.8, 12.9, 11.2, 12.0)
  //    t.test(a, b) (Welch by default) -> t = -2.68877447859081, df = 10.9768808863055,
  //    p-value = 0.0211100229636602
  // scipy.stats.ttest_ind(a, b, equal_var=False).pvalue -> 0.02111002296366017
  const std::vector<double> a = {10.2, 11.5, 9.8, 10.9, 11.1, 10.4};
  const std::vector<double> b = {11.0, 12.3, 10.7, 11.8, 12.9, 11.2, 12.0};
  const WelchTestResult w = welch_t_test(a, b);
  EXPECT_NEAR(w.t, -2.68877447859081, 1e-11);
  EXPECT_NEAR(w.df, 10.9768808863055, 1e-10);
  EXPECT_NEAR(w.p_value, 0.0211100229636602, 1e-12);
  // Symmetric in the order of the groups, apart from the sign of t.
  const WelchTestResult swapped = welch_t_test(b, a);
  EXPECT_NEAR(swapped.t, 2.68877447859081, 1e-11);
  EXPECT_NEAR(swapped.p_value, w.p_value, 1e-15);
}

TEST(Welch, DegenerateGroupsGiveNaN) {
  EXPECT_TRUE(std::isnan(welch_t_test({1.0}, {1.0, 2.0}).p_value));
  EXPECT_TRUE(std::isnan(welch_t_test({2.0, 2.0}, {2.0, 2.0}).p_value));
}

// ---- Speedup ---------------------------------------------------------------------------

// 40 runs on 1 GPU with mean exactly 1000 and 30 on 2 GPUs with mean exactly 1800, built from
// deviations that cancel, so the true ratio of the means is 1.8 by construction.
std::vector<double> symmetric_sample(double center, double spread, int pairs) {
  std::vector<double> values;
  for (int i = 1; i <= pairs; ++i) {
    const double deviation = spread * std::sin(0.7 * i);
    values.push_back(center + deviation);
    values.push_back(center - deviation);
  }
  return values;
}

TEST(Speedup, BootstrapIntervalContainsTrueRatioAndIsReproducible) {
  const std::vector<double> one = symmetric_sample(1000, 30, 20);
  const std::vector<double> two = symmetric_sample(1800, 60, 15);
  const BootstrapOptions options{10000, 7, 0.95};
  const SpeedupEstimate s = bootstrap_speedup(one, two, 2, options);
  EXPECT_NEAR(s.speedup, 1.8, 1e-12);
  EXPECT_NEAR(s.efficiency, 0.9, 1e-12);
  EXPECT_EQ(s.resamples, 10000);
  ASSERT_TRUE(s.speedup_ci.valid());
  EXPECT_TRUE(s.speedup_ci.contains(1.8));
  EXPECT_LT(s.speedup_ci.high - s.speedup_ci.low, 0.05);  // 1-2% noise on 30-40 runs: a tight interval
  EXPECT_NEAR(s.efficiency_ci.low, s.speedup_ci.low / 2, 1e-15);
  EXPECT_NEAR(s.efficiency_ci.high, s.speedup_ci.high / 2, 1e-15);

  const SpeedupEstimate again = bootstrap_speedup(one, two, 2, options);
  EXPECT_EQ(again.speedup_ci.low, s.speedup_ci.low);  // bit for bit
  EXPECT_EQ(again.speedup_ci.high, s.speedup_ci.high);

  // Another seed: another interval, but the same one up to Monte Carlo error.
  const SpeedupEstimate other = bootstrap_speedup(one, two, 2, {10000, 8, 0.95});
  EXPECT_NE(other.speedup_ci.low, s.speedup_ci.low);
  EXPECT_NEAR(other.speedup_ci.low, s.speedup_ci.low, 0.002);

  // Large samples: the bootstrap and Fieller's interval agree closely.
  const Interval fieller = fieller_ratio_interval(two, one);
  EXPECT_NEAR(s.speedup_ci.low, fieller.low, 0.003);
  EXPECT_NEAR(s.speedup_ci.high, fieller.high, 0.003);
}

TEST(Speedup, EmptyGroupGivesNoEstimate) {
  const SpeedupEstimate s = bootstrap_speedup({}, {1.0, 2.0}, 2);
  EXPECT_TRUE(std::isnan(s.speedup));
  EXPECT_FALSE(s.speedup_ci.valid());
}

TEST(Speedup, FiellerMatchesRootFindingInR) {
  // R: num <- c(1880, 1905, 1862, 1921, 1890, 1874, 1899, 1910)
  //    den <- c(1010, 998, 1022, 1005, 990, 1015, 1001, 1008, 996, 1012)
  //    X <- mean(num); Y <- mean(den); vx <- var(num)/8; vy <- var(den)/10; R <- X/Y
  //    vr <- R^2*vy; df <- (vx+vr)^2/(vx^2/7 + vr^2/9); tc <- qt(0.975, df)
  //    f <- function(th) (X - th*Y)^2 - tc^2*(vx + th^2*vy)
  //    uniroot(f, c(R-1, R), tol=1e-14)$root -> 1.86271045861316
  //    uniroot(f, c(R, R+1), tol=1e-14)$root -> 1.90124433574315   (R -> 1.88189818037188)
  // Root finding on Fieller's defining inequality, independent of our closed-form solution.
  const std::vector<double> num = {1880, 1905, 1862, 1921, 1890, 1874, 1899, 1910};
  const std::vector<double> den = {1010, 998, 1022, 1005, 990, 1015, 1001, 1008, 996, 1012};
  const Interval f = fieller_ratio_interval(num, den);
  EXPECT_NEAR(f.low, 1.86271045861316, 1e-9);
  EXPECT_NEAR(f.high, 1.90124433574315, 1e-9);
  EXPECT_TRUE(f.contains(1.88189818037188));
}

TEST(Speedup, FiellerUnboundedWhenDenominatorIsNoise) {
  EXPECT_FALSE(fieller_ratio_interval({10, 11, 12}, {-1, 1, 0.5, -0.4}).valid());
}

// ---- Thresholds ------------------------------------------------------------------------

ConfigSpeedup config(const std::string& model, int64_t parameters, double speedup, double p_value,
                     int world_size = 2) {
  ConfigSpeedup c;
  c.model = model;
  c.parameters = parameters;
  c.batch = 32;
  c.speedup = speedup;
  c.speedup_ci = {speedup - 0.05, speedup + 0.05};
  c.p_value = p_value;
  c.world_size = world_size;
  return c;
}

// config() gives the speedup an interval of +-0.05 around it.
TEST(Thresholds, PaysOffWhenTheWholeIntervalLiesAboveOne) {
  EXPECT_TRUE(pays_off(config("m", 1, 1.2, 0.01)));
  EXPECT_TRUE(pays_off(config("m", 1, 1.08, 0.089)));  // [1.03, 1.13]: the interval decides, not Welch's p
  EXPECT_FALSE(pays_off(config("m", 1, 1.04, 0.01)));  // [0.99, 1.09] reaches below 1
  EXPECT_FALSE(pays_off(config("m", 1, 0.8, 0.001)));  // slower
  EXPECT_FALSE(pays_off(config("m", 1, kNaN, 0.001)));
  ConfigSpeedup no_interval = config("m", 1, 1.5, 0.001);
  no_interval.speedup_ci = {};
  EXPECT_FALSE(pays_off(no_interval));  // fewer than two runs on a side
}

// What fails pays_off splits in two: an interval at or below 1 decides against N GPUs, one
// holding 1 (or none at all) decides nothing.
TEST(Thresholds, AnIntervalHoldingOneIsUndecidedNotAVerdictAgainst) {
  EXPECT_EQ(payoff_of(config("m", 1, 1.2, 0.01)), Payoff::paid_off);    // [1.15, 1.25]
  EXPECT_EQ(payoff_of(config("m", 1, 1.04, 0.01)), Payoff::undecided);  // [0.99, 1.09]
  EXPECT_EQ(payoff_of(config("m", 1, 0.96, 0.01)), Payoff::undecided);  // [0.91, 1.01]
  EXPECT_EQ(payoff_of(config("m", 1, 0.95, 0.01)), Payoff::not_paid_off);  // [0.90, 1.00]: no gain
  EXPECT_EQ(payoff_of(config("m", 1, 0.8, 0.001)), Payoff::not_paid_off);
  ConfigSpeedup no_interval = config("m", 1, 1.5, 0.001);
  no_interval.speedup_ci = {};
  EXPECT_EQ(payoff_of(no_interval), Payoff::undecided);
  EXPECT_EQ(payoff_word(Payoff::undecided), "undecided");
  EXPECT_EQ(payoff_word(Payoff::not_paid_off), "did not pay off");
}

// The synthetic study: speedup = 1 + 0.3 log10(params / 2e7) + fixed noise, two batch sizes
// per model, so the true break-even is 2e7 parameters.
std::vector<ConfigSpeedup> synthetic_study() {
  const std::vector<double> sizes = {250000, 500000, 1e6, 3e6, 6.9e6, 1.2e7, 2.5e7, 4e7, 8e7, 1.5e8};
  const std::vector<double> noise = {0.021,  -0.013, -0.030, 0.008,  0.015, -0.022, 0.004,
                                     0.027,  -0.018, 0.011,  -0.006, 0.019, 0.025,  -0.027,
                                     -0.009, 0.013,  0.002,  -0.016, 0.030, -0.004};
  std::vector<ConfigSpeedup> configs;
  for (size_t i = 0; i < noise.size(); ++i) {
    const double params = sizes[i / 2];
    const double speedup = 1 + 0.3 * std::log10(params / 2e7) + noise[i];
    configs.push_back(config("model-" + std::to_string(i / 2), static_cast<int64_t>(params), speedup, 0.001));
  }
  configs.push_back(config("other-world", 1e6, 3.0, 0.001, 4));  // another world size: must be ignored
  return configs;
}

TEST(Thresholds, BreakEvenRecoveredWithinItsInterval) {
  // R: params <- rep(c(250000, 500000, 1e6, 3e6, 6.9e6, 1.2e7, 2.5e7, 4e7, 8e7, 1.5e8), each = 2)
  //    noise <- c(0.021, -0.013, -0.030, 0.008, 0.015, -0.022, 0.004, 0.027, -0.018, 0.011,
  //               -0.006, 0.019, 0.025, -0.027, -0.009, 0.013, 0.002, -0.016, 0.030, -0.004)
  //    speedup <- 1 + 0.3*log10(params/2e7) + noise; coef(lm(speedup ~ log10(params)))
  //    -> (Intercept) -1.202636362897767, slope 0.302016496073829; 10^((1-a)/b) -> 19638102.4404871
  const BreakEven b = estimate_break_even(synthetic_study(), 2);
  EXPECT_EQ(b.configs, 20u);
  ASSERT_TRUE(b.fit.ok);
  EXPECT_NEAR(b.fit.intercept, -1.202636362897767, 1e-10);
  EXPECT_NEAR(b.fit.slope, 0.302016496073829, 1e-11);
  ASSERT_TRUE(b.found);
  EXPECT_NEAR(b.parameters, 19638102.4404871, 1e-6 * 19638102.4404871);
  EXPECT_FALSE(b.extrapolated);
  ASSERT_TRUE(b.ci.valid()) << b.reason;
  EXPECT_TRUE(b.ci.contains(2e7));
  EXPECT_TRUE(b.ci.contains(b.parameters));
  EXPECT_GT(b.ci.low, 1e7);  // small noise: a narrow interval, well inside the 10M-25M range
  EXPECT_LT(b.ci.high, 4e7);
  EXPECT_EQ(b.resamples_without_crossing, 0);
  EXPECT_EQ(b.reason, "");

  const BreakEven again = estimate_break_even(synthetic_study(), 2);
  EXPECT_EQ(again.ci.low, b.ci.low);
  EXPECT_EQ(again.ci.high, b.ci.high);
}

TEST(Thresholds, ModelFamilyIsTheNameBeforeItsSizeOrVariant) {
  EXPECT_EQ(model_family("mlp@10M"), "mlp");
  EXPECT_EQ(model_family("mlp-large"), "mlp");
  EXPECT_EQ(model_family("transformer@1M"), "transformer");
  EXPECT_EQ(model_family("transformer"), "transformer");
  EXPECT_EQ(model_family("lstm"), "lstm");
}

// Read off by hand from the yes/no pattern of each (family, batch) row, smallest model first.
TEST(Thresholds, MeasuredThresholdIsWhereEveryLargerModelPaidOff) {
  const auto at = [](const std::string& model, double parameters, int64_t batch, bool paid) {
    ConfigSpeedup c = config(model, static_cast<int64_t>(parameters), paid ? 1.5 : 0.9, paid ? 0.001 : 0.01);
    c.batch = batch;
    return c;
  };
  const std::vector<ConfigSpeedup> configs = {
      // batch 32: no, yes, no, yes, yes -> from mlp@100M; mlp@10M is the largest that did not.
      at("mlp@100K", 1e5, 32, false), at("mlp@1M", 1e6, 32, true), at("mlp@10M", 1e7, 32, false),
      at("mlp@100M", 1e8, 32, true), at("mlp@1B", 1e9, 32, true),
      // batch 64: every size paid off.
      at("mlp@100K", 1e5, 64, true), at("mlp@1M", 1e6, 64, true),
      // batch 128: the largest did not; a second comparison of mlp@1M that did not pays
      // makes that size count as not paying, though the first one did.
      at("mlp@100K", 1e5, 128, true), at("mlp@1M", 1e6, 128, true), at("mlp@1M", 1e6, 128, false),
      // another family at batch 32, and another world size, kept apart.
      at("transformer@1M", 1e6, 32, true), config("mlp@1M", 1000000, 1.5, 0.001, 4)};
  const std::vector<MeasuredThreshold> rows = measured_thresholds(configs, 2);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].family, "mlp");
  EXPECT_EQ(rows[0].batch, 32);
  EXPECT_EQ(rows[0].sizes, 5);
  EXPECT_EQ(rows[0].pays_from, 100000000);
  EXPECT_EQ(rows[0].pays_from_model, "mlp@100M");
  EXPECT_EQ(rows[0].largest_not_paying, 10000000);
  EXPECT_EQ(rows[0].largest_not_paying_model, "mlp@10M");
  EXPECT_EQ(rows[1].batch, 64);
  EXPECT_EQ(rows[1].pays_from, 100000);
  EXPECT_EQ(rows[1].largest_not_paying, -1);
  EXPECT_EQ(rows[2].batch, 128);
  EXPECT_EQ(rows[2].sizes, 2);
  EXPECT_EQ(rows[2].pays_from, -1);
  EXPECT_EQ(rows[2].largest_not_paying_model, "mlp@1M");
  EXPECT_EQ(rows[3].family, "transformer");
  EXPECT_EQ(rows[3].pays_from_model, "transformer@1M");
}

TEST(Thresholds, NoBreakEvenWhenSpeedupFallsWithSize) {
  const std::vector<ConfigSpeedup> falling = {config("a", 1e5, 0.9, 0.01), config("b", 1e6, 0.85, 0.01),
                                              config("c", 1e7, 0.8, 0.01)};
  const BreakEven b = estimate_break_even(falling, 2);
  EXPECT_FALSE(b.found);
  EXPECT_TRUE(std::isnan(b.parameters));
  EXPECT_FALSE(b.ci.valid());
  EXPECT_NE(b.reason.find("slope not positive"), std::string::npos);

  EXPECT_NE(estimate_break_even({config("a", 1e5, 0.9, 0.01)}, 2).reason.find("fewer than 3"), std::string::npos);
}

TEST(Thresholds, FlatNoisyStudyGivesNaNBoundsAndSaysWhy) {
  // A barely positive slope drowned in noise: many resamples have no positive slope.
  const std::vector<ConfigSpeedup> flat = {config("a", 1e5, 0.95, 0.01), config("b", 1e6, 0.70, 0.01),
                                           config("c", 1e7, 0.98, 0.01), config("d", 1e8, 0.72, 0.01),
                                           config("e", 3e8, 0.99, 0.01)};
  const BreakEven b = estimate_break_even(flat, 2);
  ASSERT_TRUE(b.found);  // the point fit does slope upward, far beyond the data
  EXPECT_TRUE(b.extrapolated);
  EXPECT_GT(b.resamples_without_crossing, 250);  // > 2.5% of 10000
  EXPECT_TRUE(std::isnan(b.ci.low));
  EXPECT_TRUE(std::isnan(b.ci.high));
  EXPECT_NE(b.reason.find("slope not positive in"), std::string::npos) << b.reason;
  EXPECT_NE(b.reason.find("(more than 2.5%)"), std::string::npos) << b.reason;
  EXPECT_NE(b.reason.find("extrapolated"), std::string::npos) << b.reason;
}

TEST(Thresholds, CrossingFarOutsideTheMeasuredSizesIsMarked) {
  // 1.5, 1.6, 1.7 at 1M, 10M, 100M: 1 + 0.1 (log10 p - 1) crosses 1.0 at 10 parameters.
  const std::vector<ConfigSpeedup> all_pay = {config("a", 1e6, 1.5, 0.01), config("b", 1e7, 1.6, 0.01),
                                              config("c", 1e8, 1.7, 0.01)};
  const BreakEven far = estimate_break_even(all_pay, 2);
  ASSERT_TRUE(far.found);
  EXPECT_NEAR(far.parameters, 10.0, 1e-6);
  EXPECT_TRUE(far.extrapolated);
  EXPECT_TRUE(far.far_extrapolated);
  // 0.95, 1.05, 1.15: crosses at 10^6.5, inside the measured sizes.
  const BreakEven near = estimate_break_even({config("a", 1e6, 0.95, 0.01), config("b", 1e7, 1.05, 0.01),
                                              config("c", 1e8, 1.15, 0.01)}, 2);
  ASSERT_TRUE(near.found);
  EXPECT_FALSE(near.extrapolated);
  EXPECT_FALSE(near.far_extrapolated);
}

TEST(Thresholds, WilsonIntervalMatchesR) {
  // R: prop.test(2, 5, correct = FALSE)$conf.int -> 0.117620774232648 0.769275718723987
  //    prop.test(0, 3, correct = FALSE)$conf.int -> 0 0.561497031755045
  //    prop.test(7, 7, correct = FALSE)$conf.int -> 0.645669564933313 1
  const Interval a = wilson_interval(2, 5);
  EXPECT_NEAR(a.low, 0.117620774232648, 1e-12);
  EXPECT_NEAR(a.high, 0.769275718723987, 1e-12);
  const Interval none = wilson_interval(0, 3);
  EXPECT_NEAR(none.low, 0.0, 1e-15);
  EXPECT_NEAR(none.high, 0.561497031755045, 1e-12);
  const Interval all = wilson_interval(7, 7);
  EXPECT_NEAR(all.low, 0.645669564933313, 1e-12);
  EXPECT_NEAR(all.high, 1.0, 1e-15);
  EXPECT_FALSE(wilson_interval(0, 0).valid());
}

TEST(Thresholds, BenefitWordsAtTheirBoundaries) {
  EXPECT_EQ(benefit_word(0, 0), "not measured");
  EXPECT_EQ(benefit_word(0, 4), "Never");
  EXPECT_EQ(benefit_word(1, 6), "Rarely");     // 16.7%
  EXPECT_EQ(benefit_word(1, 5), "Sometimes");  // exactly 20%
  EXPECT_EQ(benefit_word(4, 9), "Sometimes");  // 44.4%
  EXPECT_EQ(benefit_word(1, 2), "Often");      // exactly 50%
  EXPECT_EQ(benefit_word(2, 3), "Often");      // 66.7%
  EXPECT_EQ(benefit_word(3, 4), "Usually");    // exactly 75%
  EXPECT_EQ(benefit_word(9, 10), "Usually");
  EXPECT_EQ(benefit_word(10, 10), "Always");
}

TEST(Thresholds, TableFromMeasurementsMarksUnmeasuredRanges) {
  std::vector<ConfigSpeedup> c;
  // < 500K: 3 measured, none pays off (one is faster, but its interval reaches below 1).
  c.push_back(config("mlp-small", 100'000, 0.7, 0.001));
  c.push_back(config("mlp-medium", 258'432, 0.8, 0.001));
  c.push_back(config("mlp-medium", 258'432, 1.02, 0.40));
  // 500K - 1M: nothing measured.
  // 1M - 5M: 2 of 5.
  for (int i = 0; i < 5; ++i) c.push_back(config("transformer-s", 2'000'000, i < 2 ? 1.1 : 0.9, 0.01));
  // 5M - 10M: 1 of 6 (and 10M exactly belongs to the next range).
  for (int i = 0; i < 6; ++i) c.push_back(config("mlp-large", 6'885'376, i < 1 ? 1.1 : 0.95, 0.01));
  // 10M - 25M: 2 of 4.
  for (int i = 0; i < 4; ++i) c.push_back(config(i < 2 ? "resnet-50" : "edge-10M", i < 2 ? 23'500'000 : 10'000'000,
                                                 i % 2 == 0 ? 1.3 : 0.99, 0.01));
  // 25M - 50M: 3 of 4.
  for (int i = 0; i < 4; ++i) c.push_back(config("bert-base", 40'000'000, i < 3 ? 1.4 : 1.01, i < 3 ? 0.001 : 0.3));
  // >= 50M: 7 of 7, one of them at exactly 50M.
  for (int i = 0; i < 7; ++i) c.push_back(config(i == 0 ? "edge-50M" : "gpt-ish", i == 0 ? 50'000'000 : 120'000'000, 1.7, 1e-6));
  // World size 4 must not leak into the world-2 table.
  c.push_back(config("mlp-small", 100'000, 3.0, 1e-9, 4));

  const std::vector<ThresholdRow> rows = threshold_table(c, 2);
  ASSERT_EQ(rows.size(), 7u);
  const std::vector<std::string> labels = {"< 500K", "500K - 1M", "1M - 5M", "5M - 10M", "10M - 25M", "25M - 50M", ">= 50M"};
  const std::vector<int> measured = {3, 0, 5, 6, 4, 4, 7};
  const std::vector<int> paid = {0, 0, 2, 1, 2, 3, 7};
  const std::vector<std::string> words = {"Never", "not measured", "Sometimes", "Rarely", "Often", "Usually", "Always"};
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    EXPECT_EQ(rows[i].range.label, labels[i]);
    EXPECT_EQ(rows[i].measured, measured[i]);
    EXPECT_EQ(rows[i].paid_off, paid[i]);
    EXPECT_EQ(rows[i].word, words[i]);
  }
  // The unmeasured range is said to be so, with no share and no interval.
  EXPECT_TRUE(std::isnan(rows[1].share));
  EXPECT_FALSE(rows[1].share_ci.valid());
  EXPECT_EQ(rows[1].confidence, "not measured");
  EXPECT_TRUE(rows[1].models.empty());
  // Wilson intervals as R's prop.test (see WilsonIntervalMatchesR).
  EXPECT_NEAR(rows[0].share_ci.high, 0.561497031755045, 1e-12);
  EXPECT_NEAR(rows[2].share, 0.4, 1e-15);
  EXPECT_NEAR(rows[2].share_ci.low, 0.117620774232648, 1e-12);
  EXPECT_EQ(rows[2].confidence, "2 of 5 paid off; Wilson 95% CI of the share 12%-77%");
  EXPECT_NEAR(rows[6].share_ci.low, 0.645669564933313, 1e-12);
  // Model names, distinct, in first-seen order.
  EXPECT_EQ(rows[0].models, (std::vector<std::string>{"mlp-small", "mlp-medium"}));
  EXPECT_EQ(rows[4].models, (std::vector<std::string>{"resnet-50", "edge-10M"}));
  EXPECT_EQ(rows[6].models, (std::vector<std::string>{"edge-50M", "gpt-ish"}));
}

// ---- Per-configuration reduction -------------------------------------------------------

// A run on 2 ranks over 3 steps. Rank r, phase p, step s: 10 (p + 1) + s + 4 r, except the
// step phase, where rank 1 is slow at step 1 only.
RunRecord two_rank_run(int index, double throughput) {
  RunRecord run;
  run.index = index;
  run.samples_per_second = throughput;
  for (int r = 0; r < 2; ++r) {
    RankTimings t;
    t.rank = r;
    for (int p = 0; p < kPhaseCount; ++p)
      for (int s = 0; s < 3; ++s) t.phase_us[static_cast<size_t>(p)].push_back(10.0f * (p + 1) + s + 4.0f * r);
    if (r == 1) t.phase_us[static_cast<size_t>(Phase::step)][1] = 500.0f;
    run.ranks.push_back(t);
  }
  return run;
}

TEST(ConfigReduction, PhasePerStepTakesSlowestRankForStepAndMeanOtherwise) {
  const RunRecord run = two_rank_run(0, 1000);
  // step (p = 6): rank 0 = 70, 71, 72; rank 1 = 74, 500, 76 -> max 74, 500, 76; median 76.
  EXPECT_EQ(phase_per_step(run, Phase::step), (std::vector<double>{74, 500, 76}));
  // forward (p = 1): rank 0 = 20, 21, 22; rank 1 = 24, 25, 26 -> mean 22, 23, 24; median 23.
  EXPECT_EQ(phase_per_step(run, Phase::forward), (std::vector<double>{22, 23, 24}));
  const std::array<double, kPhaseCount> medians = run_phase_medians_us(run);
  EXPECT_DOUBLE_EQ(medians[static_cast<size_t>(Phase::step)], 76);
  EXPECT_DOUBLE_EQ(medians[static_cast<size_t>(Phase::forward)], 23);
  EXPECT_DOUBLE_EQ(medians[static_cast<size_t>(Phase::data)], 13);
}

TEST(ConfigReduction, FailedRunsCountedOutliersRemovedSummariesOverKeptRuns) {
  ConfigRecord c;
  c.id = "cfg";
  c.params.world_size = 2;
  const std::vector<double> throughputs = {1000, 1002, 998, 1001, 999, 1003, 997, 1500};
  for (size_t k = 0; k < throughputs.size(); ++k) c.runs.push_back(two_rank_run(static_cast<int>(k), throughputs[k]));
  RunRecord failed = two_rank_run(8, 0);
  failed.status = RunStatus::failed;
  failed.failure = "NaN loss at step 17";
  c.runs.push_back(failed);

  const ConfigSummary s = summarize_config(c);
  EXPECT_EQ(s.id, "cfg");
  EXPECT_EQ(s.runs_total, 9u);
  EXPECT_EQ(s.runs_ok, 8u);
  EXPECT_EQ(s.runs_failed, 1u);
  EXPECT_DOUBLE_EQ(s.success_rate, 8.0 / 9.0);
  EXPECT_EQ(s.failures, (std::vector<std::string>{"run 8: NaN loss at step 17"}));
  EXPECT_EQ(s.outliers_removed, 1u);  // the 1500 run
  EXPECT_EQ(s.kept_run_indices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(s.throughput.n, 7u);
  EXPECT_DOUBLE_EQ(s.throughput.mean, 1000.0);  // (1000+1002+998+1001+999+1003+997) / 7
  EXPECT_DOUBLE_EQ(s.throughput.sd, std::sqrt(28.0 / 6.0));  // squared deviations 0+4+4+1+1+9+9 = 28
  const Summary& step = s.phase_us[static_cast<size_t>(Phase::step)];
  EXPECT_EQ(step.n, 7u);  // the same runs as the throughput
  EXPECT_DOUBLE_EQ(step.mean, 76);
  EXPECT_DOUBLE_EQ(step.sd, 0);
}

// Run order from start times: a twin whose runs alternated with the 1-GPU runs spans the
// same minutes; one run after the other does not; files without start times say unknown.
TEST(ConfigReduction, RunOrderOfTwinsFromTheirStartTimes) {
  auto config_started_at = [](std::vector<int64_t> starts) {
    ConfigRecord c;
    for (size_t k = 0; k < starts.size(); ++k) {
      c.runs.push_back(two_rank_run(static_cast<int>(k), 1000 + static_cast<double>(k)));
      c.runs.back().start_unix_ms = starts[k];
    }
    return summarize_config(c);
  };
  const ConfigSummary one = config_started_at({1000, 4000, 5000, 8000});  // A B B A A B B A
  const ConfigSummary two = config_started_at({2000, 3000, 6000, 7000});
  EXPECT_EQ(one.first_start_ms, 1000);
  EXPECT_EQ(one.last_start_ms, 8000);
  EXPECT_EQ(run_order(one, two), RunOrder::interleaved);
  const ConfigSummary later = config_started_at({9000, 9500, 9900, 12000});
  EXPECT_EQ(run_order(one, later), RunOrder::one_after_the_other);
  const ConfigSummary unstamped = config_started_at({0, 0, 0, 0});
  EXPECT_EQ(unstamped.first_start_ms, 0);
  EXPECT_EQ(run_order(one, unstamped), RunOrder::unknown);
}

TEST(ConfigReduction, UntimedPhasesAndEmptyConfigsGiveNaN) {
  ConfigRecord c;
  RunRecord run = two_rank_run(0, 1000);
  run.ranks.resize(1);  // world size 1: no allreduce recorded
  run.ranks[0].phase_us[static_cast<size_t>(Phase::allreduce_total)].clear();
  c.runs = {run, two_rank_run(1, 1001)};
  c.runs[1].ranks.resize(1);
  c.runs[1].ranks[0].phase_us[static_cast<size_t>(Phase::allreduce_total)].clear();
  const ConfigSummary s = summarize_config(c);
  EXPECT_EQ(s.phase_us[static_cast<size_t>(Phase::allreduce_total)].n, 0u);
  EXPECT_TRUE(std::isnan(s.phase_us[static_cast<size_t>(Phase::allreduce_total)].mean));
  EXPECT_EQ(s.phase_us[static_cast<size_t>(Phase::forward)].n, 2u);

  const ConfigSummary empty = summarize_config(ConfigRecord{});
  EXPECT_EQ(empty.runs_total, 0u);
  EXPECT_TRUE(std::isnan(empty.success_rate));
  EXPECT_EQ(empty.throughput.n, 0u);
}

TEST(ConfigReduction, SpeedupOverOneGpuUsesKeptThroughputs) {
  // The Welch samples of Welch.MatchesRAndScipy as throughputs: N-GPU = b, 1-GPU = a.
  // R: t.test(b, a)$p.value -> 0.0211100229636602; mean(b) / mean(a) -> 11.7 / 10.65
  ConfigSummary one;
  one.params.world_size = 1;
  one.kept_throughputs = {10.2, 11.5, 9.8, 10.9, 11.1, 10.4};
  ConfigSummary two;
  two.params.model = "mlp-large";
  two.params.parameters = 6'885'376;
  two.params.batch_per_rank = 64;
  two.params.world_size = 2;
  two.kept_throughputs = {11.0, 12.3, 10.7, 11.8, 12.9, 11.2, 12.0};
  const ConfigSpeedup c = speedup_over_one_gpu(one, two);
  EXPECT_EQ(c.model, "mlp-large");
  EXPECT_EQ(c.parameters, 6'885'376);
  EXPECT_EQ(c.batch, 64);
  EXPECT_EQ(c.world_size, 2);
  EXPECT_NEAR(c.speedup, 11.7 / 10.65, 1e-12);
  EXPECT_NEAR(c.p_value, 0.0211100229636602, 1e-12);
  EXPECT_TRUE(c.speedup_ci.contains(c.speedup));
  EXPECT_TRUE(pays_off(c));
}

}  // namespace
}  // namespace ddpscale
