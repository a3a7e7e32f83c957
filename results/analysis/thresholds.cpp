#include "results/analysis/thresholds.hpp"

#include <Eigen/Dense>
#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace ddpscale {

bool pays_off(const ConfigSpeedup& config) {
  // Without an interval the answer is undecided, so an uncomputable config never pays off.
  return payoff_of(config) == Payoff::paid_off;
}

Payoff payoff_of(const ConfigSpeedup& config) {
  if (!config.speedup_ci.valid()) return Payoff::undecided;
  if (config.speedup_ci.low > 1) return Payoff::paid_off;
  if (config.speedup_ci.high <= 1) return Payoff::not_paid_off;
  return Payoff::undecided;
}

std::string payoff_word(Payoff payoff) {
  switch (payoff) {
    case Payoff::paid_off: return "paid off";
    case Payoff::undecided: return "undecided";
    case Payoff::not_paid_off: return "did not pay off";
  }
  return "";
}

LogLinearFit fit_speedup_vs_log10_parameters(const std::vector<ConfigSpeedup>& configs) {
  LogLinearFit fit;
  if (configs.size() < 2) return fit;
  const bool all_same_size = std::all_of(configs.begin(), configs.end(), [&](const ConfigSpeedup& c) {
    return c.parameters == configs.front().parameters;
  });
  if (all_same_size) return fit;  // a vertical cloud: no slope to speak of
  const Eigen::Index n = static_cast<Eigen::Index>(configs.size());
  Eigen::MatrixXd design(n, 2);
  Eigen::VectorXd speedup(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ConfigSpeedup& c = configs[static_cast<size_t>(i)];
    design(i, 0) = 1.0;
    design(i, 1) = std::log10(static_cast<double>(c.parameters));
    speedup(i) = c.speedup;
  }
  // QR rather than the normal equations: log10(params) spans a narrow range (5..9), so
  // X^T X is poorly conditioned enough to matter for the intercept.
  const Eigen::Vector2d coefficients = design.colPivHouseholderQr().solve(speedup);
  fit.intercept = coefficients(0);
  fit.slope = coefficients(1);
  fit.ok = std::isfinite(fit.intercept) && std::isfinite(fit.slope);
  return fit;
}

namespace {

std::vector<ConfigSpeedup> usable_configs_of_world(const std::vector<ConfigSpeedup>& configs, int world_size) {
  std::vector<ConfigSpeedup> selected;
  for (const ConfigSpeedup& c : configs)
    if (c.world_size == world_size && std::isfinite(c.speedup) && c.parameters > 0) selected.push_back(c);
  return selected;
}

// log10 of the break-even parameter count, or +infinity when the line never rises through 1.
double log10_crossing(const LogLinearFit& fit) {
  if (!fit.ok || !(fit.slope > 0)) return std::numeric_limits<double>::infinity();
  return (1 - fit.intercept) / fit.slope;
}

std::string percent(double share, int decimals = 0) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f%%", decimals, 100 * share);
  return text;
}

}  // namespace

std::string model_family(const std::string& model) { return model.substr(0, model.find_first_of("@-")); }

BreakEven estimate_break_even(const std::vector<ConfigSpeedup>& configs, int world_size,
                              const BootstrapOptions& options) {
  BreakEven result;
  result.world_size = world_size;
  const std::vector<ConfigSpeedup> selected = usable_configs_of_world(configs, world_size);
  result.configs = selected.size();
  if (selected.size() < 3) {
    result.reason = "fewer than 3 configurations with a speedup at this world size";
    return result;
  }
  result.fit = fit_speedup_vs_log10_parameters(selected);
  if (!result.fit.ok) {
    result.reason = "all configurations have the same parameter count";
    return result;
  }
  if (!(result.fit.slope > 0)) {
    result.reason = "speedup does not grow with model size (slope not positive): no break-even";
    return result;
  }
  result.found = true;
  const double log10_point = log10_crossing(result.fit);
  result.parameters = std::pow(10.0, log10_point);
  const auto [smallest, largest] = std::minmax_element(
      selected.begin(), selected.end(),
      [](const ConfigSpeedup& a, const ConfigSpeedup& b) { return a.parameters < b.parameters; });
  result.extrapolated = result.parameters < static_cast<double>(smallest->parameters) ||
                        result.parameters > static_cast<double>(largest->parameters);
  result.far_extrapolated = result.parameters < static_cast<double>(smallest->parameters) / 10 ||
                            result.parameters > static_cast<double>(largest->parameters) * 10;

  // Percentiles are taken on log10(point): the same interval as on the point itself (monotone),
  // with +infinity ordering the resamples that never cross last.
  std::mt19937_64 generator(options.seed);
  std::vector<double> crossings;
  crossings.reserve(static_cast<size_t>(std::max(options.resamples, 0)));
  std::vector<ConfigSpeedup> resample(selected.size());
  for (int b = 0; b < options.resamples; ++b) {
    for (ConfigSpeedup& slot : resample) slot = selected[uniform_index(generator, selected.size())];
    const double crossing = log10_crossing(fit_speedup_vs_log10_parameters(resample));
    if (!std::isfinite(crossing)) ++result.resamples_without_crossing;
    crossings.push_back(crossing);
  }
  result.resamples = options.resamples;
  std::sort(crossings.begin(), crossings.end());
  const Interval log10_ci = percentile_interval(crossings, options.confidence);
  if (log10_ci.valid()) {
    result.ci = {std::pow(10.0, log10_ci.low), std::pow(10.0, log10_ci.high)};
  } else {
    result.ci = {};
    result.reason = "slope not positive in " + std::to_string(result.resamples_without_crossing) + " of " +
                    std::to_string(result.resamples) + " bootstrap resamples (more than " +
                    percent((1 - options.confidence) / 2, 1) + "): the interval has no upper bound";
  }
  if (result.extrapolated) {
    const std::string outside = "break-even outside the measured parameter counts (extrapolated)";
    result.reason = result.reason.empty() ? outside : result.reason + "; " + outside;
  }
  return result;
}

const std::vector<ParameterRange>& seed_parameter_ranges() {
  static const std::vector<ParameterRange> ranges = {
      {"< 500K", 0, 500'000},
      {"500K - 1M", 500'000, 1'000'000},
      {"1M - 5M", 1'000'000, 5'000'000},
      {"5M - 10M", 5'000'000, 10'000'000},
      {"10M - 25M", 10'000'000, 25'000'000},
      {"25M - 50M", 25'000'000, 50'000'000},
      {">= 50M", 50'000'000, std::numeric_limits<int64_t>::max()},
  };
  return ranges;
}

Interval wilson_interval(int successes, int trials, double confidence) {
  if (trials <= 0 || successes < 0 || successes > trials) return {};
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + confidence / 2);
  const double n = trials;
  const double p = successes / n;
  const double center = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half_width = z / (1 + z * z / n) * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  // Clamp rounding at the ends: at p = 0 the exact lower bound is 0, at p = 1 the upper is 1.
  return {std::max(0.0, center - half_width), std::min(1.0, center + half_width)};
}

std::string benefit_word(int paid_off, int measured) {
  if (measured <= 0) return "not measured";
  // Integer comparisons: share < 0.20 <=> 5 * paid < measured, and so on, with no rounding.
  if (paid_off == 0) return "Never";
  if (paid_off == measured) return "Always";
  if (5 * paid_off < measured) return "Rarely";
  if (2 * paid_off < measured) return "Sometimes";
  if (4 * paid_off < 3 * measured) return "Often";
  return "Usually";
}

std::vector<ThresholdRow> threshold_table(const std::vector<ConfigSpeedup>& configs, int world_size) {
  std::vector<ThresholdRow> rows;
  for (const ParameterRange& range : seed_parameter_ranges()) {
    ThresholdRow row;
    row.range = range;
    for (const ConfigSpeedup& c : configs) {
      if (c.world_size != world_size || c.parameters < range.low || c.parameters >= range.high) continue;
      ++row.measured;
      if (pays_off(c)) ++row.paid_off;
      if (std::find(row.models.begin(), row.models.end(), c.model) == row.models.end()) row.models.push_back(c.model);
    }
    row.word = benefit_word(row.paid_off, row.measured);
    if (row.measured == 0) {
      row.confidence = "not measured";
    } else {
      row.share = static_cast<double>(row.paid_off) / row.measured;
      row.share_ci = wilson_interval(row.paid_off, row.measured);
      row.confidence = std::to_string(row.paid_off) + " of " + std::to_string(row.measured) +
                       " paid off; Wilson 95% CI of the share " + percent(row.share_ci.low) + "-" +
                       percent(row.share_ci.high);
    }
    rows.push_back(row);
  }
  return rows;
}

std::vector<MeasuredThreshold> measured_thresholds(const std::vector<ConfigSpeedup>& configs, int world_size) {
  struct Size {
    std::string model;
    bool paid = true;
    bool decided_against = false;  // some comparison of this size did not pay off, decidedly
  };
  std::map<std::pair<std::string, int64_t>, std::map<int64_t, Size>> sizes;  // (family, batch) -> parameters
  for (const ConfigSpeedup& c : configs) {
    if (c.world_size != world_size || c.parameters <= 0) continue;
    Size& size = sizes[{model_family(c.model), c.batch}].try_emplace(c.parameters, Size{c.model}).first->second;
    const Payoff payoff = payoff_of(c);
    size.paid = size.paid && payoff == Payoff::paid_off;
    size.decided_against = size.decided_against || payoff == Payoff::not_paid_off;
  }
  std::vector<MeasuredThreshold> result;
  for (const auto& [key, by_size] : sizes) {
    MeasuredThreshold t;
    t.family = key.first;
    t.batch = key.second;
    t.sizes = static_cast<int>(by_size.size());
    for (auto size = by_size.rbegin(); size != by_size.rend(); ++size) {
      if (!size->second.paid) {
        t.largest_not_paying = size->first;
        t.largest_not_paying_model = size->second.model;
        t.largest_not_paying_undecided = !size->second.decided_against;
        break;
      }
      t.pays_from = size->first;
      t.pays_from_model = size->second.model;
    }
    result.push_back(t);
  }
  return result;
}

}  // namespace ddpscale
