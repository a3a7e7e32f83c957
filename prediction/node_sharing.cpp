#include "prediction/node_sharing.hpp"

#include "results/statistics/statistics.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace ddpscale {
namespace {

// A measured count's typical log inflation, the median of log(1 + error) (as the predictor's
// point takes the median error: a few host hiccups among the errors do not move it), and its
// standard error, sqrt(pi / 2) sd / sqrt(n), the median's of a normal sample (0 from one).
struct MeasuredMean {
  int gpus = 0;
  double log_inflation = 0;
  double se = 0;
};

std::vector<double> log_inflations(const std::vector<double>& step_errors) {
  std::vector<double> logs;
  for (double e : step_errors) logs.push_back(std::log1p(e));
  return logs;
}

MeasuredMean measured_mean(const NodeSharingCost& cost) {
  const std::vector<double> logs = log_inflations(cost.step_errors);
  constexpr double kMedianEfficiency = 1.2533141373155003;  // sqrt(pi / 2)
  const double se =
      logs.size() > 1 ? kMedianEfficiency * sample_sd(logs) / std::sqrt(static_cast<double>(logs.size())) : 0.0;
  return {cost.gpus, median(logs), se};
}

// The weights w_k with which the least-squares line through (x_k, y_k) gives sum w_k y_k at
// x: through the origin, or with an intercept. Throws when the points do not fix a line.
std::vector<double> line_weights(const std::vector<double>& xs, double x, bool through_origin) {
  std::vector<double> weights;
  if (through_origin) {
    double sxx = 0;
    for (double xk : xs) sxx += xk * xk;
    if (!(sxx > 0)) throw std::invalid_argument("no cost measured at 2 or more GPUs to carry");
    for (double xk : xs) weights.push_back(x * xk / sxx);
    return weights;
  }
  const double n = static_cast<double>(xs.size());
  double mean_x = 0;
  for (double xk : xs) mean_x += xk / n;
  double sxx = 0;
  for (double xk : xs) sxx += (xk - mean_x) * (xk - mean_x);
  if (!(sxx > 0)) throw std::invalid_argument("no cost measured at 2 or more GPUs to carry");
  for (double xk : xs) weights.push_back(1 / n + (xk - mean_x) * (x - mean_x) / sxx);
  return weights;
}

// The measured count whose spread a carried cost keeps: the nearest below `gpus` among those
// of 2 or more GPUs, else the nearest above.
const NodeSharingCost& spread_source(const NodeSharingProfile& profile, int gpus) {
  const NodeSharingCost* below = nullptr;
  const NodeSharingCost* above = nullptr;
  for (const NodeSharingCost& cost : profile.costs) {
    if (cost.gpus < 2) continue;
    if (cost.gpus < gpus) below = &cost;
    else if (!above) above = &cost;
  }
  if (below) return *below;
  if (above) return *above;
  throw std::invalid_argument("no cost measured at 2 or more GPUs to carry");
}

std::string signed_percent(double fraction) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << std::showpos << 100 * fraction << "%";
  return text.str();
}

std::string fixed3(double value) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(3) << value;
  return text.str();
}

std::string carried_text(const NodeSharingProfile& profile, const NodeSharingAtN& at) {
  const NodeSharingCost& source = *profile.measured_at(at.spread_from_gpus);
  const std::string line = profile.measured_at(1) != nullptr ? "with" : "through the origin, no cost at 1 GPU, and";
  return "carried from " + profile.gpu_counts() + " GPUs: the " + std::to_string(source.gpus) +
         "-GPU cost unchanged (median step error " + signed_percent(median(source.step_errors)) + "), its spread " +
         "widened for " + std::to_string(at.gpus) + " GPUs by a model sd of " + fixed3(at.model_sd) +
         " in log (its median's " + fixed3(at.fit_sd) + "; half the gap to log2 N growth, a line " + line +
         " the costs measured at " + profile.gpu_counts() + " GPUs, " + fixed3(at.growth_sd) + ")";
}

// Where the cost records each error's 1-GPU step: that errors_at_step moves them.
std::string moved_text(const NodeSharingAtN& at) {
  if (at.one_gpu_step_us.empty()) return "";
  std::ostringstream exponent;
  exponent << kNodeSharingStepExponent;
  return ", each error moved from its own 1-GPU step to the predicted configuration's (log inflation times "
         "(step ratio)^-" + exponent.str() + ")";
}

}  // namespace

const NodeSharingCost* NodeSharingProfile::measured_at(int gpus) const {
  for (const NodeSharingCost& cost : costs)
    if (cost.gpus == gpus) return &cost;
  return nullptr;
}

std::string NodeSharingProfile::gpu_counts() const {
  std::string text;
  for (size_t i = 0; i < costs.size(); ++i) {
    if (i > 0) text += i + 1 == costs.size() ? " and " : ", ";
    text += std::to_string(costs[i].gpus);
  }
  return text;
}

FittedInflation log2_line_inflation(const NodeSharingProfile& profile, int gpus) {
  std::vector<double> xs;
  std::vector<MeasuredMean> means;
  for (const NodeSharingCost& cost : profile.costs) {
    means.push_back(measured_mean(cost));
    xs.push_back(std::log2(static_cast<double>(cost.gpus)));
  }
  const bool through_origin = profile.measured_at(1) == nullptr;
  const std::vector<double> weights = line_weights(xs, std::log2(static_cast<double>(gpus)), through_origin);
  FittedInflation fit;
  double variance = 0;
  for (size_t k = 0; k < means.size(); ++k) {
    fit.log_inflation += weights[k] * means[k].log_inflation;
    variance += weights[k] * weights[k] * means[k].se * means[k].se;
  }
  fit.sd = std::sqrt(variance);
  return fit;
}

NodeSharingAtN node_sharing_at(const NodeSharingProfile& profile, int gpus) {
  NodeSharingAtN at;
  at.gpus = gpus;
  if (const NodeSharingCost* measured = profile.measured_at(gpus)) {
    at.measured = true;
    at.step_errors = measured->step_errors;
    at.one_gpu_step_us = measured->one_gpu_step_us;
    at.how = "measured at " + std::to_string(gpus) + " GPUs (" + std::to_string(measured->step_errors.size()) +
             " model errors)" + moved_text(at);
    return at;
  }
  const NodeSharingCost& source = spread_source(profile, gpus);
  const MeasuredMean kept = measured_mean(source);
  const FittedInflation growth = log2_line_inflation(profile, gpus);
  at.spread_from_gpus = source.gpus;
  at.log_inflation = kept.log_inflation;
  at.fit_sd = kept.se;
  at.growth_sd = std::abs(growth.log_inflation - kept.log_inflation) / 2;
  at.model_sd = std::sqrt(at.fit_sd * at.fit_sd + at.growth_sd * at.growth_sd);
  // Centred on the source's own median, each error stays where it was, spread by model_sd.
  const double root3 = std::sqrt(3.0);
  const double gauss_hermite[] = {-root3, 0, 0, 0, 0, root3};
  const std::vector<double> logs = log_inflations(source.step_errors);
  for (size_t i = 0; i < logs.size(); ++i)
    for (double z : gauss_hermite) {
      at.step_errors.push_back(std::expm1(logs[i] + at.model_sd * z));
      if (!source.one_gpu_step_us.empty()) at.one_gpu_step_us.push_back(source.one_gpu_step_us[i]);
    }
  at.how = carried_text(profile, at) + moved_text(at);
  return at;
}

std::vector<double> errors_at_step(const NodeSharingAtN& at, double one_gpu_step_us) {
  if (at.one_gpu_step_us.empty() || !(one_gpu_step_us > 0)) return at.step_errors;
  const auto [shortest, longest] = std::minmax_element(at.one_gpu_step_us.begin(), at.one_gpu_step_us.end());
  const double target = std::clamp(one_gpu_step_us, *shortest, *longest);
  std::vector<double> moved;
  for (size_t i = 0; i < at.step_errors.size(); ++i) {
    const double scale = std::pow(target / at.one_gpu_step_us[i], -kNodeSharingStepExponent);
    moved.push_back(std::expm1(std::log1p(at.step_errors[i]) * scale));
  }
  return moved;
}

std::string node_sharing_yaml(const NodeSharingCost& cost) {
  return node_sharing_yaml(NodeSharingProfile{{cost}});
}

std::string node_sharing_yaml(const NodeSharingProfile& profile) {
  YAML::Emitter block;
  block.SetDoublePrecision(4);
  const auto emit_cost = [&](const NodeSharingCost& cost) {
    block << YAML::BeginMap;
    block << YAML::Key << "gpus" << YAML::Value << cost.gpus;
    block << YAML::Key << "source" << YAML::Value << cost.source;
    block << YAML::Key << "step_errors" << YAML::Value << YAML::Flow << cost.step_errors;
    if (!cost.one_gpu_step_us.empty())
      block << YAML::Key << "one_gpu_step_us" << YAML::Value << YAML::Flow << cost.one_gpu_step_us;
    block << YAML::EndMap;
  };
  block << YAML::BeginMap << YAML::Key << "node_sharing" << YAML::Value;
  if (profile.costs.size() == 1) {
    emit_cost(profile.costs[0]);
  } else {
    block << YAML::BeginSeq;
    for (const NodeSharingCost& cost : profile.costs) emit_cost(cost);
    block << YAML::EndSeq;
  }
  block << YAML::EndMap;
  // Indented by four spaces: the keys of an entry under `interconnects:`.
  std::istringstream lines(block.c_str());
  std::string line, indented;
  while (std::getline(lines, line)) indented += "    " + line + "\n";
  return indented;
}

}  // namespace ddpscale
