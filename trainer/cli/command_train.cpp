#include "comm/mpi_context.hpp"
#include "models/model_registry.hpp"
#include "results/store/run_record.hpp"
#include "results/store/text_io.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/engine/training_session.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/process/device_choice.hpp"
#include "trainer/process/launch_prologue.hpp"
#include "trainer/study/config_runner.hpp"
#include "trainer/study/memory_preflight.hpp"
#include "trainer/study/run_summary.hpp"
#include "trainer/study/train_options.hpp"

#include <cxxopts.hpp>
#include <ATen/Parallel.h>

#include <cstdio>
#include <iostream>
#include <string>

namespace ddpscale {

void add_train_options(cxxopts::Options& options) {
  options.add_options("model")
      ("m,model", "model name or size family (ddpscale models lists them), or torchscript:PATH: your own model "
                  "(torch.jit.save'd; its forward takes one tensor, --input-shape or --input, and returns logits "
                  "[batch, classes] or [batch, seq, classes]; a method loss(input, target) replaces the "
                  "cross-entropy; docs/own-models.md)",
       cxxopts::value<std::string>()->default_value("mlp-medium"))
      ("seq-len", "sequence length (lstm, gru, transformer; 0 = model default)", cxxopts::value<int64_t>()->default_value("0"))
      ("features", "input features (0 = model default)", cxxopts::value<int64_t>()->default_value("0"))
      ("vocab", "vocabulary size (transformer; 0 = default)", cxxopts::value<int64_t>()->default_value("0"))
      ("classes", "output classes (0 = model default; torchscript: labels in [0, N), default the output's last axis)",
       cxxopts::value<int64_t>()->default_value("0"))
      ("input-shape", "torchscript:PATH only: forward takes float inputs [batch, SHAPE], e.g. 3x224x224 (the batch "
                      "axis left out)", cxxopts::value<std::string>()->default_value(""), "SHAPE")
      ("input", "torchscript:PATH only: forward takes int64 token ids [batch, SEQ] in [0, VOCAB)",
       cxxopts::value<std::string>()->default_value(""), "tokens:VOCAB:SEQ")
      ("no-dropout", "turn every dropout layer off");
  options.add_options("training")
      ("b,batch-size", "batch per rank (weak scaling) or global batch (strong)", cxxopts::value<int64_t>()->default_value("32"))
      ("scaling", "weak (per-rank batch fixed) or strong (global batch split)", cxxopts::value<std::string>()->default_value("weak"))
      ("world-size", "ranks that train (0 = all launched)", cxxopts::value<int>()->default_value("0"))
      ("optimizer", "adam or sgd", cxxopts::value<std::string>()->default_value("adam"))
      ("optimizer-impl", "auto (PyTorch's fused Adam kernel on GPUs, LibTorch's Adam on CPU), libtorch or fused",
       cxxopts::value<std::string>()->default_value("auto"))
      ("lr", "learning rate", cxxopts::value<double>()->default_value("0.001"))
      ("dtype", "forward precision: float32 (fp32) or bfloat16 (bf16: autocast; weights, gradients, optimizer state and allreduce stay fp32)",
       cxxopts::value<std::string>()->default_value("float32"))
      ("exec", "eager (LibTorch's op-by-op loop) or graph (the whole step captured once as a CUDA graph and "
               "replayed; only the step's total is timed)",
       cxxopts::value<std::string>()->default_value("eager"))
      ("data", "device (batch resident on the device) or host (pinned copy every step, timed as data)",
       cxxopts::value<std::string>()->default_value("device"));
  options.add_options("ddp")
      ("bucket-mb", "gradient bucket size in MiB (the first bucket is 1 MiB, as in PyTorch)", cxxopts::value<double>()->default_value(round_trip_text(kDefaultBucketMb)))
      ("first-bucket-mb", "size of the first bucket in MiB", cxxopts::value<double>()->default_value(round_trip_text(kDefaultFirstBucketMb)))
      ("no-overlap", "run every bucket's allreduce after backward (sequential baseline)")
      ("no-broadcast-buffers", "each rank keeps its own buffers (BatchNorm's running statistics), as PyTorch DDP's "
       "broadcast_buffers=False; by default rank 0's are broadcast before each forward")
      ("allreduce-dtype", "what gradients travel as: float32, or bfloat16 (each bucket cast before its allreduce "
                          "and back after it: half the bytes, bf16 rounding of the averaged gradient)",
       cxxopts::value<std::string>()->default_value("float32"));
  options.add_options("measurement")
      ("r,runs", "runs, each from the same initial parameters with its own data and dropout", cxxopts::value<int>()->default_value("5"))
      ("warmup", "untimed steps per run", cxxopts::value<int>()->default_value("10"))
      ("steps", "measured steps per run", cxxopts::value<int>()->default_value("100"))
      ("seed", "initial parameters of every run; run k uses seed+k for dropout and data", cxxopts::value<uint64_t>()->default_value("42"))
      ("gpu-busy-steps", "after the measured steps, profile this many more (Kineto/CUPTI) for the GPU's busy time "
                         "per step: the kernel-time floor (0 = off)",
       cxxopts::value<int>()->default_value("0"))
      ("gpu-kernels", "with --gpu-busy-steps: write the GPU time of every kernel in the profiled steps, largest "
                      "first, and how much of it other GPU work ran beside, to PREFIX.rank<R>.csv (each rank; "
                      "the last run's)",
       cxxopts::value<std::string>()->default_value(""), "PREFIX")
      ("gpu-trace", "with --gpu-busy-steps: write the profiled steps as a Chrome trace (open it in "
                    "https://ui.perfetto.dev), every kernel with its grid, block, registers and shared memory, "
                    "to PREFIX.rank<R>.json (each rank; the last run's)",
       cxxopts::value<std::string>()->default_value(""), "PREFIX")
      ("no-phase-timing", "time whole steps only (to measure the instrumentation's own cost)")
      ("no-gpu-sampling", "no NVML readings (utilisation, memory, power) during the measured steps")
      ("no-memory-check", "skip the memory pre-flight, which refuses a model whose estimated training memory "
                          "(weights, gradients, optimizer state, gradient buckets, activations) exceeds the free "
                          "memory (host RAM on CPU, shared by the host's ranks; the GPU's on GPU) before building it")
      ("alternate-phase-timing", "time phases in runs 0 and 3 of every 4 only, and print what timing cost "
                                 "between these neighbouring runs (use --runs 12 or more)")
      ("placement-shifts-mib", "GPU: run k first holds the k-th of these MiB (cycling), so the runs' buffers land at "
                           "different addresses and their spread covers placement; the summary gives throughput "
                           "per placement (e.g. 0,20,40,60 with --runs a multiple of 4; docs/methodology.md)",
       cxxopts::value<std::vector<int>>(), "MIB,...")
      ("process-shift", "GPU: hold MIB of device memory from before the model is first made until the last run, so "
                        "every buffer the process keeps, library workspaces included, lands elsewhere; "
                        "scripts/gpu/take_turns.py --process-shifts gives each set of processes its own amount "
                        "(docs/methodology.md)",
       cxxopts::value<int>()->default_value("0"), "MIB")
      ("take-turns", "one rank: each run starts when a line 'go' arrives on standard input and ends with its run "
                     "line; 'stop' or the end of input ends early. A driver alternates these runs with another "
                     "program's on the same GPU (scripts/gpu/take_turns.py)");
  add_launch_options(options, "launch", "auto, cpu or cuda");
  options.add_options("launch")("h,help", "show this help");
}

TrainOptions train_options_from(const cxxopts::ParseResult& a) {
  TrainOptions o;
  o.model = a["model"].as<std::string>();
  o.seq_len = a["seq-len"].as<int64_t>();
  o.features = a["features"].as<int64_t>();
  o.vocab = a["vocab"].as<int64_t>();
  o.classes = a["classes"].as<int64_t>();
  o.input_shape = a["input-shape"].as<std::string>();
  o.input = a["input"].as<std::string>();
  o.dropout = a.count("no-dropout") == 0;
  o.scaling = a["scaling"].as<std::string>();
  set_fixed_batch(o, a["batch-size"].as<int64_t>());
  o.world_size = a["world-size"].as<int>();
  o.optimizer = a["optimizer"].as<std::string>();
  o.optimizer_impl = a["optimizer-impl"].as<std::string>();
  o.lr = a["lr"].as<double>();
  o.dtype = canonical_dtype(a["dtype"].as<std::string>());
  o.data = a["data"].as<std::string>();
  o.exec = a["exec"].as<std::string>();
  o.bucket_mb = a["bucket-mb"].as<double>();
  o.first_bucket_mb = a["first-bucket-mb"].as<double>();
  o.overlap = a.count("no-overlap") == 0;
  o.broadcast_buffers = a.count("no-broadcast-buffers") == 0;
  o.runs = a["runs"].as<int>();
  o.warmup = a["warmup"].as<int>();
  o.steps = a["steps"].as<int>();
  o.seed = a["seed"].as<uint64_t>();
  o.phase_timing = a.count("no-phase-timing") == 0;
  o.gpu_sampling = a.count("no-gpu-sampling") == 0;
  o.alternate_phase_timing = a.count("alternate-phase-timing") > 0;
  o.gpu_busy_steps = a["gpu-busy-steps"].as<int>();
  o.gpu_kernels = a["gpu-kernels"].as<std::string>();
  o.gpu_trace = a["gpu-trace"].as<std::string>();
  if (a.count("placement-shifts-mib")) o.placement_shifts_mib = a["placement-shifts-mib"].as<std::vector<int>>();
  o.allreduce_dtype = canonical_dtype(a["allreduce-dtype"].as<std::string>());
  o.process_shift_mib = a["process-shift"].as<int>();
  o.take_turns = a.count("take-turns") > 0;
  return o;
}

// --take-turns: what the driver said on standard input before the next run.
enum class Turn { go, stop, unreadable };

static Turn next_turn() {
  std::string line;
  if (!std::getline(std::cin, line) || line == "stop") return Turn::stop;
  if (line == "go") return Turn::go;
  std::fprintf(stderr, "ddpscale train: --take-turns expects 'go' or 'stop' on standard input, got '%s'\n",
               line.c_str());
  return Turn::unreadable;
}

// Options renamed to their spec keys (experiments/README.md, "Flags and spec keys").
const std::vector<RenamedOption>& renamed_train_options() {
  static const std::vector<RenamedOption> renamed = {
      {"--batch", "--batch-size", "the spec key is batch_sizes"},
      {"--placement-shifts", "--placement-shifts-mib", "the spec key is placement_shifts_mib"}};
  return renamed;
}

// On CPU, how many threads each rank computes with and on how many cores it may run ("" on a GPU).
static std::string cpu_threads_text(const DeviceChoice& device) {
  return device.cuda ? ""
                     : " (" + std::to_string(at::get_num_threads()) + " intra-op threads per rank, CPU mask of " +
                           std::to_string(cores_in(cpu_mask_of_this_process()).size()) + " cores)";
}

// The line that opens the output: the model, the ranks and device, the batch and the runs.
static void print_train_header(const ModelDescription& model, const TrainOptions& train, int world,
                               const DeviceChoice& device, const std::string& cpu_threads) {
  std::printf("# ddpscale train: %s (%lld parameters), %d rank(s) on %s%s, batch %lld per rank (%s), %d runs x %d "
              "steps after %d warm-up%s\n",
              model.name.c_str(), static_cast<long long>(model.parameters), world, device.describe().c_str(),
              cpu_threads.c_str(),
              static_cast<long long>(batch_per_rank(train, world)), train.scaling.c_str(), train.runs, train.steps,
              train.warmup,
              train.process_shift_mib > 0 ? (", " + std::to_string(train.process_shift_mib) + " MiB held first").c_str() : "");
  std::fflush(stdout);  // the header shows before the first run ends, also in a pipe
}

// The configuration's runs on this rank's group, each printed as it ends (with --take-turns
// each one when the driver says go); the exit status: 0 when every run ended well.
static int train_configuration(const TrainOptions& train, const MpiGroup& group, Communicator* comm,
                               const DeviceChoice& device, bool printer) {
  // Held from before the configuration's model until its last run, as a sweep holds its
  // launch's amount (ConfigurationRuns only records it).
  const torch::Tensor process_shift = hold_device_memory(train.process_shift_mib, torch_device_of(device));
  ConfigurationRuns runs(train, group, comm, device);
  if (train.take_turns) {
    std::printf("# ready for turns: send 'go' for each run, 'stop' to end\n");
    std::fflush(stdout);
  }
  while (!runs.done()) {
    if (train.take_turns) {
      const Turn turn = next_turn();
      if (turn == Turn::unreadable) return 2;
      if (turn == Turn::stop) break;
    }
    runs.run_next([&](const RunRecord& run) { print_run_line(stdout, run); });
  }
  const ConfigRecord record = runs.take_record();
  if (train.take_turns && record.runs.empty()) {
    std::fprintf(stderr, "ddpscale train: no run was started (standard input ended before the first 'go')\n");
    return 1;
  }
  if (printer) print_config_summary(stdout, record, train.placement_shifts_mib);
  for (const auto& run : record.runs)
    if (run.status != RunStatus::ok) return 1;
  return 0;
}

int run_train_command(int argc, char** argv) {
  const std::string program = argv[0];
  CurrentSpellings spelt(argc, argv, renamed_train_options());
  cxxopts::Options options(argv[0], "Trains a model data-parallel on the launched ranks and times every phase of "
                                    "every step.");
  add_train_options(options);
  TrainOptions train;
  LaunchOptions launch;
  cxxopts::ParseResult args;
  ModelDescription model;
  // Every check runs on every rank; the ranks agree on the verdict before any other
  // collective (any_rank_has_usage_error), so no rank waits for a peer that already left.
  std::string usage_error;
  try {
    args = options.parse(spelt.argc(), spelt.argv());
    if (printed_help(options, args, "mpirun -np 2 ddpscale train -m mlp-large -b 64 --runs 5",
                     {"model", "training", "ddp", "measurement", "launch"}))
      return 0;
    train = train_options_from(args);
    launch = launch_options_from(args);
    validate_model_input(train);  // the TorchScript input contract, before loading the file
    model = describe_model(train.model, model_options_from(train));  // unknown model or size family; loads and probes a TorchScript file
  } catch (const std::exception& e) {
    usage_error = usage_error_text(e, spelt.argc(), spelt.argv(), program);
  }
  MpiContext mpi(&argc, &argv);
  const bool memory_check = usage_error.empty() && args.count("no-memory-check") == 0;
  const auto chosen = agree_on_device(mpi, program, launch, usage_error, [&](const DeviceChoice& device) {
    validate_train_options(train, mpi.size(), device.cuda);
    // Before the model is built: a model that cannot fit is refused on every rank with the
    // numbers of the first rank short of memory (free memory differs per rank).
    check_memory_fits(model, train, effective_world_size(train, mpi.size()), mpi, device, memory_check);
  });
  if (!chosen) return 2;
  const DeviceChoice device = *chosen;
  const int world = effective_world_size(train, mpi.size());
  auto group = mpi.world().split(mpi.rank() < world ? 0 : -1);
  if (!group) return 0;  // this rank is not part of the requested world size
  auto comm = make_training_communicator(*group, device);

  const bool printer = group->rank() == 0;
  const std::string cpu_threads = cpu_threads_text(device);
  if (printer) print_train_header(model, train, world, device, cpu_threads);
  return train_configuration(train, *group, comm.get(), device, printer);
}

}  // namespace ddpscale
