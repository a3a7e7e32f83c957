// TorchScript files for the tests, written from C++ (no Python needed): an MLP of two
// scripted submodules, a token model with a sequence axis, and broken variants.
#pragma once
// torch/script.h alone (modules, tensors, saving): torch/torch.h would add the C++ frontend
// (nn, optim, data), a third more compiler time for the fixture writer.
#include <torch/script.h>

#include <string>

namespace ddpscale::testing_fixtures {

// As torch.jit.script gives every module: the `training` flag train()/eval() set.
inline void add_training_flag(torch::jit::Module& m) { m.register_attribute("training", c10::BoolType::get(), true); }

inline torch::Tensor trainable(torch::Tensor t) { return t.set_requires_grad(true); }

inline torch::jit::Module linear_module(const char* name, int64_t in, int64_t out, bool requires_grad = true) {
  torch::jit::Module m(name);
  add_training_flag(m);
  m.register_parameter("weight", (torch::randn({out, in}) * 0.3).set_requires_grad(requires_grad), false);
  m.register_parameter("bias", (torch::randn({out}) * 0.1).set_requires_grad(requires_grad), false);
  m.define(R"(
def forward(self, x):
    return torch.matmul(x, self.weight.t()) + self.bias
)");
  return m;
}

struct MlpFile {
  int64_t inputs = 16, hidden = 8, classes = 4;
  bool own_loss = false;        // a loss(input, target) method: the sum of squared logits
  bool step_counter = false;    // an int64 buffer `steps` that forward increments (starting at `counter_start`)
  int64_t counter_start = 0;
  bool frozen = false;          // every parameter requires_grad false
  bool no_batch_axis = false;   // forward returns a scalar
  uint64_t seed = 7;
};

// One member changed from the defaults (C++17 has no designated initializers).
template <typename T>
MlpFile mlp_with(T MlpFile::*member, T value) {
  MlpFile f;
  f.*member = value;
  return f;
}

// 16 -> 8 (relu) -> 4: parameters fc1.weight, fc1.bias, fc2.weight, fc2.bias (172 in all).
inline void write_mlp(const std::string& path, const MlpFile& f = {}) {
  torch::manual_seed(f.seed);
  torch::jit::Module m("Mlp");
  add_training_flag(m);
  m.register_module("fc1", linear_module("Fc1", f.inputs, f.hidden, !f.frozen));
  m.register_module("fc2", linear_module("Fc2", f.hidden, f.classes, !f.frozen));
  if (f.step_counter) m.register_buffer("steps", torch::full({1}, f.counter_start, torch::kLong));
  std::string forward = "def forward(self, x):\n";
  if (f.step_counter) forward += "    self.steps.add_(1)\n";
  forward += "    y = self.fc2.forward(torch.relu(self.fc1.forward(x)))\n";
  forward += f.no_batch_axis ? "    return y.sum()\n" : "    return y\n";
  m.define(forward);
  if (f.own_loss)
    m.define(R"(
def loss(self, x, target):
    return (self.forward(x) ** 2).sum()
)");
  m.save(path);
}

// int64 ids [batch, seq] -> logits [batch, seq, classes]: an embedding table and a head.
inline void write_token_model(const std::string& path, int64_t vocab, int64_t dim, int64_t classes) {
  torch::manual_seed(3);
  torch::jit::Module m("Tokens");
  add_training_flag(m);
  m.register_parameter("table", trainable(torch::randn({vocab, dim})), false);
  m.register_module("head", linear_module("Head", dim, classes));
  m.define(R"(
def forward(self, ids):
    return self.head.forward(torch.embedding(self.table, ids))
)");
  m.save(path);
}

}  // namespace ddpscale::testing_fixtures
