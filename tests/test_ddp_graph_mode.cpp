// --exec graph on GPUs: the same parameters as eager training (2 ranks and 1), each block's
// loss and end kept, dropout drawn anew at every replay, the kernels a replay launches (no
// gradient accumulation, one ReLU + dropout kernel each way), the profiler's trace and floor
// inside the graph; and the memory a placement shift holds. Built into the same binaries as
// test_ddp_mpi.cpp (which says how); without GPUs or CUDA graphs it holds no test.
#include "tests/ddp_test_helpers.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>
#ifdef DDPSCALE_TEST_ON_GPU
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace ddpscale {
namespace {

using namespace ddp_test;

#if defined(DDPSCALE_TEST_ON_GPU) && defined(DDPSCALE_CUDA_GRAPHS)
// --exec graph replays the same kernels, NCCL allreduces included, so after K steps with
// dropout off it must hold the parameters eager training holds: an identity, checked in
// float64 to kIdentityTolerance (whose comment covers Adam's amplification too).
TEST(GraphMode, SameParametersAsEagerAfterKSteps) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  for (const char* optimizer : {"sgd", "adam"}) {
    auto options = float64_options(0.05, 0.01, true);
    options.optimizer = optimizer;
    if (options.optimizer == "adam") options.lr = 1e-3;
    TrainingSession untouched(two_rank_setup(options, comm.get(), torch::kDouble));
    const auto start = cloned(untouched.parameters());
    TrainingSession eager(two_rank_setup(options, comm.get(), torch::kDouble));
    eager.train_steps(5);
    options.exec = "graph";
    TrainingSession graph(two_rank_setup(options, comm.get(), torch::kDouble));
    graph.train_steps(5);
    const auto a = graph.parameters(), b = eager.parameters();
    EXPECT_EQ(a.front().scalar_type(), torch::kDouble);
    const Agreement agreement = compare_parameters(a, b, start);
    std::printf("[ agreement ] graph vs eager, %s: %.3g of the size\n", optimizer, agreement.vs_size);
    EXPECT_LT(agreement.vs_size, kIdentityTolerance) << optimizer;
    EXPECT_GT((a[0] - start[0]).abs().max().item<double>(), 1e-6) << optimizer;  // it trained
  }
}

// One rank, no reducer: the captured step takes autograd's gradient tensors from the graph's
// memory pool, as eager takes them from the allocator, and must give eager's parameters, in
// float64 to kIdentityTolerance. The recurrent models too: their zero initial state is made
// in the warm-up, outside the graph, and only read by it. Runs on a 1-GPU machine too.
TEST(GraphMode, OneRankSameParametersAsEager) {
  SKIP_WITHOUT_OWN_DEVICE();
  const std::vector<std::pair<std::string, std::string>> cases{
      {"mlp-medium", "sgd"}, {"mlp-medium", "adam"}, {"lstm", "adam"}, {"gru", "adam"}};
  for (const auto& [model, optimizer] : cases) {
    SCOPED_TRACE(model + " " + optimizer);
    auto one_rank = [&](const std::string& exec, int steps) {
      SessionSetup setup;
      setup.options = float64_options(25, 1, true);
      setup.options.model = model;
      setup.options.optimizer = optimizer;
      if (setup.options.optimizer == "adam") setup.options.lr = 1e-3;
      setup.options.exec = exec;
      setup.device = test_device();
      setup.precision = torch::kDouble;
      TrainingSession session(setup);
      session.train_steps(steps);
      return cloned(session.parameters());
    };
    const auto start = one_rank("eager", 0), eager = one_rank("eager", 5), graph = one_rank("graph", 5);
    const Agreement agreement = compare_parameters(graph, eager, start);
    std::printf("[ agreement ] graph vs eager on one rank, %s, %s: %.3g of the size\n", model.c_str(),
                optimizer.c_str(), agreement.vs_size);
    EXPECT_LT(agreement.vs_size, kIdentityTolerance);
    EXPECT_GT((graph[0] - start[0]).abs().max().item<double>(), 1e-6);  // it trained
  }
}

// Graph mode keeps the loss and the end of each block of kGraphBlockSteps replays and of the
// last replay. One rank, float64, dropout off, two blocks and a shorter third: the kept
// losses must be eager's at those steps (an identity), and the step times must tile the
// measured loop: each block's steps equal and positive, together no longer than its wall
// time. Runs on a 1-GPU machine too.
TEST(GraphMode, OneRankKeepsEachBlocksLossAndEnd) {
  SKIP_WITHOUT_OWN_DEVICE();
  const int steps = 2 * kGraphBlockSteps + 3;
  auto one_rank = [&](const std::string& exec, RankTimings& timings, int& loss_every) {
    SessionSetup setup;
    setup.options = float64_options(25, 1, true);
    setup.options.optimizer = "adam";
    setup.options.lr = 1e-3;
    setup.options.exec = exec;
    setup.options.warmup = 3;  // graph: 2 eager steps, the capture, 1 replay; eager: 3 steps
    setup.options.steps = steps;
    setup.options.phase_timing = true;
    setup.device = test_device();
    setup.precision = torch::kDouble;
    TrainingSession session(setup);
    std::vector<float> losses;
    session.run(timings, losses);
    loss_every = session.loss_every();
    return losses;
  };
  RankTimings eager_timings, graph_timings;
  int eager_every = 0, graph_every = 0;
  const auto eager = one_rank("eager", eager_timings, eager_every);
  const auto graph = one_rank("graph", graph_timings, graph_every);
  EXPECT_EQ(eager_every, 1);
  EXPECT_EQ(graph_every, kGraphBlockSteps);
  ASSERT_EQ(eager.size(), static_cast<size_t>(steps));
  const std::vector<int> block_ends = {kGraphBlockSteps - 1, 2 * kGraphBlockSteps - 1, steps - 1};
  ASSERT_EQ(graph.size(), block_ends.size());
  for (size_t b = 0; b < block_ends.size(); ++b) {
    const float want = eager[static_cast<size_t>(block_ends[b])];
    // float64 losses that agree to kIdentityTolerance round to floats at most 1 ulp apart.
    EXPECT_NEAR(graph[b], want, 2 * std::numeric_limits<float>::epsilon() * std::abs(want)) << "block " << b;
  }
  EXPECT_NE(graph[0], graph[1]) << "the control: Adam moves the loss";
  const auto& step_us = graph_timings.phase_us[static_cast<size_t>(Phase::step)];
  ASSERT_EQ(step_us.size(), static_cast<size_t>(steps));
  double sum_us = 0;
  for (int s = 0; s < steps; ++s) {
    const float block_mean = step_us[static_cast<size_t>(last_step_of_block(s, kGraphBlockSteps, steps))];
    EXPECT_GT(step_us[static_cast<size_t>(s)], 0.0f) << s;
    EXPECT_EQ(step_us[static_cast<size_t>(s)], block_mean) << s;
    sum_us += step_us[static_cast<size_t>(s)];
  }
  EXPECT_LE(sum_us, graph_timings.wall_seconds * 1e6);
}

// Dropout must draw new masks at every replay, not replay the captured ones. With the
// learning rate at 0 the parameters never move, so the loss changes only through dropout.
// Graph mode keeps the loss at each block's end: 4 blocks give 4 losses of 4 replays.
TEST(GraphMode, DropoutDiffersFromReplayToReplay) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  auto losses_of = [&](bool dropout) {
    auto options = deterministic_options(100, 100, true);
    options.optimizer = "sgd";
    options.lr = 0.0;
    options.dropout = dropout;
    options.exec = "graph";
    options.warmup = 2;
    options.steps = 4 * kGraphBlockSteps;
    TrainingSession session(two_rank_setup(options, comm.get()));
    RankTimings timings;
    std::vector<float> losses;
    session.run(timings, losses);
    return losses;
  };
  const auto without = losses_of(false);
  ASSERT_EQ(without.size(), 4u);
  for (float loss : without) EXPECT_EQ(loss, without.front());  // the control: nothing changes
  const auto with = losses_of(true);
  ASSERT_EQ(with.size(), 4u);
  EXPECT_NE(with[0], with[1]);
  EXPECT_NE(with[1], with[2]);
}

// A graph run of mlp-medium with Adam that profiles 10 replays and writes its kernel table
// under dir; the table's lines (header first) are what the two tests below read.
EngineOptions profiled_graph_options(const TempDir& dir) {
  auto options = deterministic_options(25, 1, true);
  options.optimizer = "adam";
  options.exec = "graph";
  options.steps = 5;
  options.gpu_busy_steps = 10;
  options.gpu_kernels = (dir.path() / "graph").string();
  return options;
}

std::vector<std::string> run_and_read_kernel_table(TrainingSession& session, const std::string& table_path) {
  RankTimings timings;
  std::vector<float> losses;
  session.run(timings, losses);
  EXPECT_EQ(timings.gpu_busy_us.size(), 1u) << "the profiler recorded nothing";
  std::ifstream table(table_path);
  EXPECT_TRUE(table.good()) << table_path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(table, line);) lines.push_back(line);
  return lines;
}

// One rank, graph: .grad is reset before the captured backward, so autograd hands its
// gradients over and the replayed step launches no gradient-accumulation add (12 of them in
// mlp-large's graph before, docs/benchmarks.md). mlp-medium has no other elementwise add:
// Linear adds its bias inside the GEMM and Adam's step count uses a foreach kernel, so any
// CUDAFunctor_add in the table would be an accumulation.
TEST(GraphMode, OneRankReplayLaunchesNoGradientAccumulation) {
  SKIP_WITHOUT_OWN_DEVICE();
  TempDir dir;
  SessionSetup setup;
  setup.options = profiled_graph_options(dir);
  setup.device = test_device();
  TrainingSession session(setup);
  const auto lines = run_and_read_kernel_table(session, kernel_table_path(setup.options.gpu_kernels, 0));
  for (const auto& line : lines) EXPECT_EQ(line.find("CUDAFunctor_add"), std::string::npos) << line.substr(0, 160);
  EXPECT_GT(lines.size(), 5u);  // header + GEMMs, ReLUs, loss, Adam: the table is not empty
}

// One rank, graph, dropout on: each of mlp-medium's 3 hidden layers takes one ReLU + dropout
// kernel forward and one backward (models/relu_dropout.hpp), so neither ReLU's clamp nor
// dropout's own kernels, forward or backward, are in the replayed step.
TEST(GraphMode, MlpLaunchesOneKernelEachWayPerReluAndDropout) {
  SKIP_WITHOUT_OWN_DEVICE();
  TempDir dir;
  SessionSetup setup;
  setup.options = profiled_graph_options(dir);
  setup.options.dropout = true;
  setup.device = test_device();
  TrainingSession session(setup);
  const auto lines = run_and_read_kernel_table(session, kernel_table_path(setup.options.gpu_kernels, 0));
  // Calls per step of the kernel whose name contains `name`: the number after the quoted name.
  const auto calls_of = [&lines](const std::string& name) {
    for (const auto& line : lines) {
      const auto name_at = line.find(name);
      if (name_at == std::string::npos) continue;
      const auto calls = line.find("\",", name_at);
      if (calls == std::string::npos) return -2;
      return std::stoi(line.substr(calls + 2));
    }
    return 0;
  };
  for (const char* absent : {"masked_scale", "threshold_kernel", "clamp_scalar", "fused_dropout_kernel"})
    EXPECT_EQ(calls_of(absent), 0) << absent;
  EXPECT_EQ(calls_of("relu_dropout_forward_kernel"), 3);
  EXPECT_EQ(calls_of("relu_dropout_backward_kernel"), 3);
}

#ifdef DDPSCALE_TEST_ON_GPU
// --placement-shifts: a session holds exactly its shift of device memory besides what it
// allocates anyway, so the same session with 64 MiB held has 64 MiB more allocated. (Whether
// the shift moves the buffers is the allocator's business; what it costs is this.)
TEST(PlacementShift, SessionHoldsItsShiftOnTopOfItsOwnMemory) {
  SKIP_WITHOUT_OWN_DEVICE();
  const auto allocated_with_session = [](int shift_mib) {
    SessionSetup setup;
    setup.options = deterministic_options(25, 1, true);
    setup.options.placement_shift_mib = shift_mib;
    setup.device = test_device();
    TrainingSession session(setup);
    return c10::cuda::CUDACachingAllocator::getDeviceStats(setup.device.index()).allocated_bytes[0].current;
  };
  const int64_t without = allocated_with_session(0);
  const int64_t with = allocated_with_session(64);
  EXPECT_EQ(with - without, int64_t{64} << 20);
}
#endif

// --gpu-trace: the profiled replays' Kineto trace names every kernel launch once, with its
// launch shape. 10 profiled steps x 3 hidden layers = 30 ReLU + dropout forward kernels (the
// count the test above reads from the table, per step).
TEST(GraphMode, TraceHasEveryProfiledKernelWithItsLaunchShape) {
  SKIP_WITHOUT_OWN_DEVICE();
  TempDir dir;
  SessionSetup setup;
  setup.options = profiled_graph_options(dir);
  setup.options.dropout = true;
  setup.options.gpu_trace = (dir.path() / "trace").string();
  setup.device = test_device();
  TrainingSession session(setup);
  RankTimings timings;
  std::vector<float> losses;
  session.run(timings, losses);
  std::ifstream file(trace_path(setup.options.gpu_trace, 0));
  ASSERT_TRUE(file.good()) << trace_path(setup.options.gpu_trace, 0);
  const std::string trace((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto occurrences = [&trace](const std::string& what) {
    int n = 0;
    for (auto at = trace.find(what); at != std::string::npos; at = trace.find(what, at + what.size())) ++n;
    return n;
  };
  EXPECT_EQ(occurrences("relu_dropout_forward_kernel"), 30);
  EXPECT_GE(occurrences("\"grid\""), 30);
  EXPECT_GE(occurrences("\"registers per thread\""), 30);
}

// Two ranks, graph: the reducer gathers autograd's handed-over gradients into each bucket
// with one cat, inside the capture as in eager, so the replay launches no accumulation add
// and no bucket zero fill either (mlp-medium has no other elementwise add; see above).
TEST(GraphMode, ReplayWithReducerLaunchesNoGradientAccumulation) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  TempDir dir;
  const auto options = profiled_graph_options(dir);
  TrainingSession session(two_rank_setup(options, comm.get()));
  const auto lines = run_and_read_kernel_table(session, kernel_table_path(options.gpu_kernels, g_mpi->rank()));
  int cats = 0;
  for (const auto& line : lines) {
    EXPECT_EQ(line.find("CUDAFunctor_add"), std::string::npos) << line.substr(0, 160);
    if (line.find("CatArrayBatchedCopy") != std::string::npos) ++cats;
  }
  EXPECT_GT(cats, 0) << "the buckets were not gathered";
}

// The profiler must see the kernels inside a replayed graph too, or graph mode would have
// no floor to be compared with.
TEST(GraphMode, GpuBusyFloorIsMeasuredInsideTheGraph) {
  SKIP_WITHOUT_DEVICE();
  auto comm = make_test_comm();
  auto options = deterministic_options(25, 1, true);
  options.optimizer = "adam";
  options.exec = "graph";
  const BusyAndStep run = profiled_run(options, comm.get(), "graph", "no kernel activity recorded during graph replays");
  EXPECT_GT(run.floor_us, 1.0);
  EXPECT_LE(run.floor_us, run.step_us * 1.05);  // the floor lies within the step
}
#endif

}  // namespace
}  // namespace ddpscale
