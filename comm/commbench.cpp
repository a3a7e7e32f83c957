#include "comm/commbench.hpp"

#include "comm/bus_bandwidth.hpp"
#include "comm/check.hpp"
#include "comm/mpi_context.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace ddpscale {

double algbw_gbs(size_t bytes, double time_us) { return time_us > 0 ? static_cast<double>(bytes) / (time_us * 1e3) : 0.0; }

double busbw_gbs(double algbw, int ranks) { return algbw * allreduce_bus_factor(ranks); }

std::vector<size_t> commbench_sizes(const CommBenchOptions& options) {
  if (options.min_bytes == 0 || options.max_bytes < options.min_bytes)
    throw std::invalid_argument("commbench: need 0 < --min-bytes <= --max-bytes");
  if (options.factor < 2) throw std::invalid_argument("commbench: --factor must be at least 2");
  std::vector<size_t> sizes;
  for (size_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= options.factor) {
    const size_t rounded = std::max<size_t>(sizeof(float), bytes / sizeof(float) * sizeof(float));
    if (sizes.empty() || sizes.back() != rounded) sizes.push_back(rounded);
    if (bytes > options.max_bytes / options.factor) break;  // next step would overflow or pass max
  }
  return sizes;
}

static double slowest_rank(const MpiGroup& group, double value) {
  double slowest = value;
  DDPSCALE_MPI_CHECK(MPI_Allreduce(&value, &slowest, 1, MPI_DOUBLE, MPI_MAX, group.handle()));
  return slowest;
}

// Verifies one reduction from a known fill: rank r holds r+1, so the sum is n(n+1)/2 and
// the average (n+1)/2, both exact in float32. Checks a sample of elements across the buffer.
// The first warm-up op of a size, timed on the slowest rank (a cold op: only the budget of
// commbench_counts reads it).
static double first_op_us(Communicator& comm, const MpiGroup& group, CommBuffer& buffer, size_t count, ReduceOp op) {
  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  comm.allreduce_async(buffer.data(), count, DType::f32, op)->wait();
  comm.synchronize();
  return slowest_rank(group, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
}

static size_t count_wrong(Communicator& comm, CommBuffer& buffer, size_t count, ReduceOp op) {
  buffer.fill_f32(static_cast<float>(comm.rank() + 1));
  comm.allreduce(buffer.data(), count, DType::f32, op);
  comm.synchronize();
  const float n = static_cast<float>(comm.size());
  const float expected = op == ReduceOp::sum ? n * (n + 1) / 2 : (n + 1) / 2;
  size_t wrong = 0;
  const size_t stride = std::max<size_t>(1, count / 64);
  for (size_t i = 0; i < count; i += stride)
    if (std::fabs(buffer.read_f32(i) - expected) > 1e-6f * std::fabs(expected)) ++wrong;
  if (std::fabs(buffer.read_f32(count - 1) - expected) > 1e-6f * std::fabs(expected)) ++wrong;
  return wrong;
}

CommBenchCounts commbench_counts(const CommBenchOptions& options, double first_op_us) {
  const int warmup = std::max(1, options.warmup_iters);
  if (options.seconds_per_size <= 0 || first_op_us <= 0) return {warmup, options.iters};
  const double fits = options.seconds_per_size * 1e6 / first_op_us;  // ops in the budget
  const int timed = std::clamp(static_cast<int>(fits), std::min(kMinTimedIters, options.iters), options.iters);
  // Warm-up: half the budget's worth after the first op, at most as many as asked for.
  const int more_warmup = std::clamp(static_cast<int>(fits / 2), 0, warmup - 1);
  return {1 + more_warmup, timed};
}

std::vector<CommBenchRow> run_commbench(Communicator& comm, const MpiGroup& group, const CommBenchOptions& options,
                                        const CommBenchRowCallback& on_row) {
  const auto sizes = commbench_sizes(options);
  auto buffer = comm.allocate(sizes.back());
  std::vector<CommBenchRow> rows;
  for (size_t bytes : sizes) {
    CommBenchRow row;
    row.bytes = bytes;
    row.count = bytes / sizeof(float);
    buffer->fill_f32(1.0f);
    // Fixed counts need no first op timed: nccl-tests' warm-up, exactly as asked.
    CommBenchCounts counts{options.warmup_iters, options.iters};
    int warmup_left = options.warmup_iters;
    if (options.seconds_per_size > 0) {
      counts = commbench_counts(options, first_op_us(comm, group, *buffer, row.count, options.op));
      warmup_left = counts.warmup - 1;  // the timed first op was one
    }
    for (int i = 0; i < warmup_left; ++i) comm.allreduce_async(buffer->data(), row.count, DType::f32, options.op)->wait();
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < counts.timed; ++i) comm.allreduce_async(buffer->data(), row.count, DType::f32, options.op)->wait();
    comm.synchronize();
    const double elapsed_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    row.time_us = slowest_rank(group, elapsed_us / counts.timed);
    row.timed_iters = counts.timed;
    row.algbw_gbs = algbw_gbs(bytes, row.time_us);
    row.busbw_gbs = busbw_gbs(row.algbw_gbs, comm.size());
    row.wrong = count_wrong(comm, *buffer, row.count, options.op);
    rows.push_back(row);
    if (on_row) on_row(row);
  }
  return rows;
}

void print_commbench_header(std::FILE* out, const Communicator& comm, const CommBenchOptions& options) {
  std::fprintf(out, "# ddpscale commbench: allreduce, float32, %s, in place, %d ranks, backend %s\n",
               options.op == ReduceOp::sum ? "sum" : "avg", comm.size(), backend_name(comm.backend()));
  std::fprintf(out, "# warm-up %d, iterations %d; time = mean per op, slowest rank; busbw = algbw * 2(n-1)/n\n",
               options.warmup_iters, options.iters);
  std::fprintf(out, "#%14s %12s %8s %6s %11s %12s %12s %7s\n", "size(B)", "count", "type", "redop", "time(us)",
               "algbw(GB/s)", "busbw(GB/s)", "#wrong");
}

void print_commbench_row(std::FILE* out, const CommBenchRow& row, ReduceOp op) {
  std::fprintf(out, "%15zu %12zu %8s %6s %11.2f %12.2f %12.2f %7zu\n", row.bytes, row.count, "float",
               op == ReduceOp::sum ? "sum" : "avg", row.time_us, row.algbw_gbs, row.busbw_gbs, row.wrong);
  std::fflush(out);
}

}  // namespace ddpscale
