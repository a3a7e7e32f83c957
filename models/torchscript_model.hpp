// Your own model: `--model torchscript:PATH` trains any module PyTorch exported with
// torch.jit.script or torch.jit.trace (docs/own-models.md). The contract: `forward` takes one
// tensor (float [batch, shape...] from --input-shape, or int64 token ids [batch, seq] from
// --input tokens:VOCAB:SEQ) and returns logits [batch, ..., classes]; the synthetic labels are
// int64 [batch, ...] in [0, classes) (one per sequence position when the output has one). A
// module with a method `loss(input, target)` returning a scalar trains on that instead of
// cross-entropy.
#pragma once
#include "models/model_registry.hpp"
#include "models/torchscript_catalog.hpp"

#include <torch/script.h>
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpscale {

// A TorchScript module as a Model: its parameters and buffers are registered on the
// nn::Module side as the same tensors (submodules mirrored, so names read "fc1.weight"), and
// to() converts them in place (set_data), so both sides keep sharing them.
class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, std::string path);
  torch::Tensor forward(const torch::Tensor& inputs) override;
  torch::Tensor training_loss(const torch::Tensor& inputs, const torch::Tensor& labels) override;
  bool has_custom_loss() const { return has_loss_; }
  void train(bool on = true) override;
  void to(torch::Device device, torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Device device, bool non_blocking = false) override;
  torch::jit::Module& module() { return module_; }

 private:
  void convert(std::optional<torch::Device> device, std::optional<torch::Dtype> dtype, bool non_blocking);
  torch::jit::Module module_;
  std::string path_;
  bool has_loss_ = false;
};

// Loads the file (throws TorchScriptError naming it when it is not TorchScript).
std::shared_ptr<TorchScriptModel> load_torchscript_model(const std::string& path);

// For the registry: the model and the synthetic batch of "torchscript:PATH".
SyntheticBatch make_torchscript_batch(const std::string& name, const ModelOptions& options, int64_t batch,
                                      uint64_t seed, torch::Device device);

}  // namespace ddpscale
