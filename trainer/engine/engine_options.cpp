#include "trainer/engine/engine_options.hpp"

namespace ddpscale {

ModelOptions model_options_from(const EngineOptions& o) {
  ModelOptions m;
  if (o.seq_len > 0) m.seq_len = o.seq_len;
  if (o.features > 0) m.features = o.features;
  if (o.vocab > 0) m.vocab = o.vocab;
  if (o.classes > 0) m.classes = o.classes;
  m.dropout = o.dropout;
  m.input = o.input.empty() ? o.input_shape : o.input;
  return m;
}

std::string resolved_optimizer(const std::string& optimizer, const std::string& optimizer_impl, bool on_cuda) {
  const bool fused = optimizer == "adam" && on_cuda && optimizer_impl != "libtorch";
  return fused ? "adam-fused" : optimizer;
}

std::string kernel_table_path(const std::string& prefix, int rank) {
  return prefix + ".rank" + std::to_string(rank) + ".csv";
}

std::string trace_path(const std::string& prefix, int rank) { return prefix + ".rank" + std::to_string(rank) + ".json"; }

}  // namespace ddpscale
