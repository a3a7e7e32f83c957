// ddpscale's side of the comparison with PyTorch's own training (check_exported_torchscript.py
// pytorch-reference): trains a torchscript:PATH model K steps under the DDP engine in float64
// on the launched ranks (mpirun -np N), as `ddpscale train` would in float32, and rank 0
// writes the global synthetic batch of run 0 and the parameters after the K steps, every
// value with 17 significant digits (exact for float64), for Python to read:
//
//   seed <s> world_size <N> batch_per_rank <b> steps <K>\n
//   input <numel> <sizes...>\n<values>\n    the global batch's inputs (float32 values, before the float64 cast)
//   labels <numel> <sizes...>\n<values>\n
//   param <name> <numel> <sizes...>\n<values>\n   one per trainable parameter, in the module's order
//
// and every rank r writes OUT.rank<r>: its parameters (param blocks), its buffers after the
// K steps (buffer <name> ...), then its buffers after one more of the broadcasts each step
// starts with (synced <name> ...): what the next forward would read. With the optional last
// argument own-buffers, the session keeps each rank's buffers (--no-broadcast-buffers).
//
// The CLI cannot do this: studies measure float32 and never save parameters.
#include "comm/communicator.hpp"
#include "comm/mpi_context.hpp"
#include "trainer/engine/training_session.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

namespace {

using ddpscale::EngineOptions;

void write_tensor(std::ostream& out, const std::string& header, const torch::Tensor& tensor) {
  const torch::Tensor values = tensor.detach().to(torch::kCPU, torch::kDouble).contiguous();
  out << header << " " << values.numel();
  for (const auto size : values.sizes()) out << " " << size;
  out << "\n";
  const double* data = values.data_ptr<double>();
  char number[32];
  for (int64_t i = 0; i < values.numel(); ++i) {
    std::snprintf(number, sizeof number, "%.17g", data[i]);
    out << (i ? " " : "") << number;
  }
  out << "\n";
}

void write_results(const std::string& path, const EngineOptions& options, int world_size, int steps,
                   ddpscale::TrainingSession& session) {
  std::ofstream out(path);
  out << "seed " << options.seed << " world_size " << world_size << " batch_per_rank " << options.batch_per_rank << " steps "
      << steps << "\n";
  // The session's own call: the global batch of run 0, drawn from seed + 0.
  const auto batch = ddpscale::make_synthetic_batch(options.model, ddpscale::model_options_from(options),
                                                    options.batch_per_rank * world_size, options.seed, torch::kCPU);
  write_tensor(out, "input", batch.inputs);
  write_tensor(out, "labels", batch.labels);
  for (const auto& item : session.model().named_parameters())
    if (item.value().requires_grad()) write_tensor(out, "param " + item.key(), item.value());
  if (!out) throw std::runtime_error("cannot write " + path);
}

void write_rank_state(std::ostream& out, const char* kind, ddpscale::TrainingSession& session) {
  const bool parameters = std::string(kind) == "param";
  for (const auto& item : parameters ? session.model().named_parameters() : session.model().named_buffers())
    if (!parameters || item.value().requires_grad()) write_tensor(out, std::string(kind) + " " + item.key(), item.value());
}

// Collective: every rank takes part in the extra broadcast.
void write_every_rank(const std::string& path, int rank, ddpscale::TrainingSession& session) {
  std::ofstream out(path + ".rank" + std::to_string(rank));
  write_rank_state(out, "param", session);
  write_rank_state(out, "buffer", session);
  session.broadcast_buffers_from_rank0();
  write_rank_state(out, "synced", session);
  if (!out) throw std::runtime_error("cannot write " + path + ".rank" + std::to_string(rank));
}

}  // namespace

int main(int argc, char** argv) {
  ddpscale::MpiContext mpi(&argc, &argv);
  const bool own_buffers = argc == 10 && std::string(argv[9]) == "own-buffers";
  if (argc != 9 && !own_buffers) {
    if (mpi.rank() == 0)
      std::cerr << "usage: mpirun -np N torchscript_float64_steps MODEL.pt INPUT CLASSES sgd|adam LR BATCH_PER_RANK "
                   "STEPS OUT [own-buffers]\n  INPUT: 16 or 3x32x32 (float) or tokens:VOCAB:SEQ; CLASSES 0 = the "
                   "output's last axis\n";
    return 2;
  }
  EngineOptions options;
  options.model = std::string("torchscript:") + argv[1];
  const std::string input = argv[2];
  (input.rfind("tokens:", 0) == 0 ? options.input : options.input_shape) = input;
  options.classes = std::stoll(argv[3]);
  options.optimizer = argv[4];
  options.optimizer_impl = "libtorch";
  options.lr = std::stod(argv[5]);
  options.batch_per_rank = std::stoll(argv[6]);
  const int steps = std::stoi(argv[7]);
  options.phase_timing = false;
  options.seed = 42;
  options.broadcast_buffers = !own_buffers;

  ddpscale::SessionSetup setup;
  setup.options = options;
  setup.rank = mpi.rank();
  setup.world_size = mpi.size();
  setup.precision = torch::kDouble;
  std::unique_ptr<ddpscale::Communicator> comm;
  if (mpi.size() > 1) {
    comm = ddpscale::make_mpi_communicator(mpi.world());
    setup.comm = comm.get();
  }
  ddpscale::TrainingSession session(setup);
  session.train_steps(steps);
  if (mpi.rank() == 0) write_results(argv[8], options, mpi.size(), steps, session);
  write_every_rank(argv[8], mpi.rank(), session);
  return 0;
}
