// `ddpscale commbench`: the allreduce sweep of nccl-tests' all_reduce_perf, with its
// definitions: time = mean per operation over the timed iterations, slowest rank;
// algbw = bytes / time; busbw = algbw * 2(n-1)/n, the per-link traffic of a ring.
#pragma once
#include "comm/communicator.hpp"

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ddpscale {

struct CommBenchOptions {
  size_t min_bytes = 8;
  size_t max_bytes = size_t(128) << 20;
  size_t factor = 4;
  int warmup_iters = 5;
  int iters = 20;
  ReduceOp op = ReduceOp::sum;
  // 0: every size runs warmup_iters + iters, as nccl-tests does. Above 0: a size whose first
  // warm-up op is slow runs fewer, so that its timed ops take about this long, and never
  // fewer than kMinTimedIters (the sweep's study-start curve: a 64 MiB allreduce between
  // CPU ranks sharing two cores takes up to a second, and 25 of them would dominate a study).
  double seconds_per_size = 0;
};

inline constexpr int kMinTimedIters = 3;

// How many warm-up and timed ops one size runs, from how long its first warm-up op took on
// the slowest rank (the same on every rank, so every rank runs the same count).
struct CommBenchCounts {
  int warmup = 0;  // including the first
  int timed = 0;
};
CommBenchCounts commbench_counts(const CommBenchOptions& options, double first_op_us);

struct CommBenchRow {
  size_t bytes = 0;
  size_t count = 0;
  double time_us = 0;
  double algbw_gbs = 0;
  double busbw_gbs = 0;
  size_t wrong = 0;  // elements whose reduced value differs from the expected one
  int timed_iters = 0;  // the ops its time is the mean of
};

double algbw_gbs(size_t bytes, double time_us);
double busbw_gbs(double algbw, int ranks);  // nccl-tests' allreduce bus factor 2(n-1)/n

// Sizes min, min*factor, ... up to max, rounded down to whole float32 elements (at least one).
std::vector<size_t> commbench_sizes(const CommBenchOptions& options);

class MpiGroup;

// Collective over the communicator and its MPI group (the same ranks): every rank must
// call it with identical options.
// on_row (if set) gets each size's row as soon as it is measured.
using CommBenchRowCallback = std::function<void(const CommBenchRow&)>;
std::vector<CommBenchRow> run_commbench(Communicator& comm, const MpiGroup& group, const CommBenchOptions& options,
                                        const CommBenchRowCallback& on_row = {});

void print_commbench_header(std::FILE* out, const Communicator& comm, const CommBenchOptions& options);
void print_commbench_row(std::FILE* out, const CommBenchRow& row, ReduceOp op);

}  // namespace ddpscale
