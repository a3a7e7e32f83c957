// A configuration's model, built once and handed to every run reset to the same initial
// parameters. Building a model on the host costs seconds at 300M+ parameters (2.7 s per run
// for mlp@300M on the CI machine), which dominated the thresholds study's largest
// configurations, whose 23 steps take a quarter of a second. The runs of a configuration
// therefore start from the same parameters (from the configuration's seed) and differ in
// their data and dropout (seed + run index): docs/methodology.md.
#pragma once
#include "models/model_registry.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ddpscale {

class InitialModel {
 public:
  InitialModel(std::string name, const ModelOptions& options, uint64_t seed, torch::Device device);

  // The model on the device with its initial parameters and no gradients: built (from the
  // seed) on the first call, or after a call that threw; restored from the kept copy after.
  std::shared_ptr<Model> fresh();

 private:
  void build();
  void restore();

  std::string name_;
  ModelOptions options_;
  uint64_t seed_;
  torch::Device device_;
  std::shared_ptr<Model> model_;
  std::vector<torch::Tensor> initial_;  // host copies of parameters then buffers (pinned for a GPU)
};

}  // namespace ddpscale
