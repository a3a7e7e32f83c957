#include "trainer/study/timing_exchange.hpp"

#include "comm/check.hpp"
#include "comm/mpi_context.hpp"

#include <algorithm>

namespace ddpscale {

// Flattens one rank's timings into floats: [phases x steps][3 NVML series][GPU busy][2 calibrations]
// [instruments, in kInstrumentNames' order]. The sizes go
// first, in their own small message, so the receiver knows how to cut the floats.
static std::vector<float> flatten(const RankTimings& t, std::vector<int64_t>& sizes) {
  std::vector<float> flat;
  sizes.clear();
  for (const auto& series : t.phase_us) {
    sizes.push_back(static_cast<int64_t>(series.size()));
    flat.insert(flat.end(), series.begin(), series.end());
  }
  for (const auto* series : {&t.gpu_utilization_pct, &t.gpu_memory_used_mib, &t.gpu_power_w, &t.gpu_busy_us,
                             &t.calibration_host_us, &t.calibration_device_us}) {
    sizes.push_back(static_cast<int64_t>(series->size()));
    flat.insert(flat.end(), series->begin(), series->end());
  }
  for (const char* name : kInstrumentNames) {
    const auto found = t.instruments.find(name);
    const size_t count = found == t.instruments.end() ? 0 : found->second.size();
    sizes.push_back(static_cast<int64_t>(count));
    if (count) flat.insert(flat.end(), found->second.begin(), found->second.end());
  }
  return flat;
}

static RankTimings unflatten(int rank, const std::vector<float>& flat, const std::vector<int64_t>& sizes,
                             const double* scalars) {
  RankTimings t;
  t.rank = rank;
  t.wall_seconds = scalars[0];
  t.peak_memory_bytes = static_cast<int64_t>(scalars[1]);
  t.process_id = static_cast<int64_t>(scalars[2]);
  size_t offset = 0, index = 0;
  auto take = [&](std::vector<float>& out) {
    const auto n = static_cast<size_t>(sizes[index++]);
    out.assign(flat.begin() + static_cast<long>(offset), flat.begin() + static_cast<long>(offset + n));
    offset += n;
  };
  for (auto& series : t.phase_us) take(series);
  take(t.gpu_utilization_pct);
  take(t.gpu_memory_used_mib);
  take(t.gpu_power_w);
  take(t.gpu_busy_us);
  take(t.calibration_host_us);
  take(t.calibration_device_us);
  for (const char* name : kInstrumentNames) {
    std::vector<float> series;
    take(series);
    if (!series.empty()) t.instruments[name] = std::move(series);
  }
  return t;
}

std::vector<RankTimings> gather_rank_timings(const MpiGroup& group, const RankTimings& mine) {
  constexpr int kSeries = kPhaseCount + 6 + static_cast<int>(kInstrumentCount);
  constexpr int kScalars = 3;  // wall seconds, peak memory, process id
  std::vector<int64_t> sizes;
  std::vector<float> flat = flatten(mine, sizes);
  double scalars[kScalars] = {mine.wall_seconds, static_cast<double>(mine.peak_memory_bytes),
                              static_cast<double>(mine.process_id)};
  if (group.size() == 1) return {unflatten(0, flat, sizes, scalars)};

  const int n = group.size();
  std::vector<int64_t> all_sizes(static_cast<size_t>(n * kSeries));
  // The ranks finished the same run together: a peer missing here for --comm-timeout is gone.
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Igather(sizes.data(), kSeries, MPI_INT64_T, all_sizes.data(), kSeries, MPI_INT64_T, 0,
                                 group.handle(), &request));
  wait_within_comm_timeout(request, "gathering the run's timings to rank 0 (sizes)", WaitPolling::spin);
  std::vector<double> all_scalars(static_cast<size_t>(n * kScalars));
  DDPSCALE_MPI_CHECK(MPI_Igather(scalars, kScalars, MPI_DOUBLE, all_scalars.data(), kScalars, MPI_DOUBLE, 0,
                                 group.handle(), &request));
  wait_within_comm_timeout(request, "gathering the run's timings to rank 0 (wall time, peak memory, process id)",
                           WaitPolling::spin);

  std::vector<int> counts(static_cast<size_t>(n)), displs(static_cast<size_t>(n));
  int total = 0;
  for (int r = 0; r < n; ++r) {
    int64_t count = 0;
    for (int s = 0; s < kSeries; ++s) count += all_sizes[static_cast<size_t>(r * kSeries + s)];
    counts[static_cast<size_t>(r)] = static_cast<int>(count);
    displs[static_cast<size_t>(r)] = total;
    total += static_cast<int>(count);
  }
  std::vector<float> all_flat(group.rank() == 0 ? static_cast<size_t>(total) : 0);
  DDPSCALE_MPI_CHECK(MPI_Igatherv(flat.data(), static_cast<int>(flat.size()), MPI_FLOAT, all_flat.data(),
                                  counts.data(), displs.data(), MPI_FLOAT, 0, group.handle(), &request));
  wait_within_comm_timeout(request, "gathering the run's timings to rank 0 (series)", WaitPolling::spin);
  if (group.rank() != 0) return {};
  std::vector<RankTimings> result;
  for (int r = 0; r < n; ++r) {
    const auto begin = all_flat.begin() + displs[static_cast<size_t>(r)];
    std::vector<float> part(begin, begin + counts[static_cast<size_t>(r)]);
    std::vector<int64_t> part_sizes(all_sizes.begin() + r * kSeries, all_sizes.begin() + (r + 1) * kSeries);
    result.push_back(unflatten(r, part, part_sizes, &all_scalars[static_cast<size_t>(r * kScalars)]));
  }
  return result;
}

bool any_rank_failed(const MpiGroup& group, bool failed, std::string& message) {
  const FirstFailure first = first_failure(group, failed, message);
  if (first.rank < 0) return false;
  message = (group.size() > 1 ? "rank " + std::to_string(first.rank) + ": " : std::string()) + first.message;
  return true;
}

namespace {

double reduce_over_group(const MpiGroup& group, double value, MPI_Op op, const std::string& what, WaitPolling polling) {
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, op, group.handle(), &request));
  wait_within_comm_timeout(request, what, polling);
  return value;
}

}  // namespace

double max_over_group(const MpiGroup& group, double value) {
  return reduce_over_group(group, value, MPI_MAX, "finding the slowest rank's wall time of the run", WaitPolling::spin);
}

double min_over_group(const MpiGroup& group, double value, const std::string& what) {
  return reduce_over_group(group, value, MPI_MIN, what, WaitPolling::sleep);
}

}  // namespace ddpscale
