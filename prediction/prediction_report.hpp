// `ddpscale predict`'s output: predict.md, predict.csv (one row per prediction),
// validation.csv (one row per measured N-GPU configuration) and predict.json.
#pragma once
#include <string>

#include "scaling_prediction.hpp"

namespace ddpscale {

std::string prediction_markdown(const ScalingPrediction& result, const PredictOptions& options, const std::string& source);
std::string prediction_csv(const ScalingPrediction& result);
std::string validation_csv(const ScalingPrediction& result);
std::string prediction_json(const ScalingPrediction& result, const PredictOptions& options, const std::string& source);

// Writes the four files into out_dir (created if missing).
void write_prediction(const ScalingPrediction& result, const PredictOptions& options, const std::string& source,
                      const std::string& out_dir);

// "1x4" (nodes x GPUs per node) as the tables write a topology.
std::string topology_text(const Topology& topology);

}  // namespace ddpscale
