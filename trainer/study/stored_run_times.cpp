#include "trainer/study/stored_run_times.hpp"

#include "results/store/run_store.hpp"

#include <algorithm>
#include <filesystem>

namespace ddpscale {
namespace {

// The run's time on its slowest rank, its measured steps' wall time scaled to every step it
// trained (warm-up included).
double run_seconds(const RunRecord& run, const ConfigParams& params) {
  double slowest = 0;
  for (const RankTimings& rank : run.ranks) slowest = std::max(slowest, rank.wall_seconds);
  return slowest * (params.warmup_steps + params.measured_steps) / params.measured_steps;
}

MeasuredConfiguration run_times_of(const ConfigRecord& record) {
  const ConfigParams& p = record.params;
  MeasuredConfiguration measured;
  measured.shape = {record.id, p.model, p.world_size, p.batch_per_rank, p.warmup_steps + p.measured_steps};
  if (p.measured_steps <= 0) return measured;
  for (const RunRecord& run : record.runs)
    if (run.status == RunStatus::ok) measured.run_seconds.push_back(run_seconds(run, p));
  return measured;
}

}  // namespace

std::vector<MeasuredConfiguration> run_times_in_study(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  std::vector<MeasuredConfiguration> measured;
  for (const std::string& path : list_config_files(dir)) {
    try {
      measured.push_back(run_times_of(read_config(path)));
    } catch (const StoreError&) {
      // A file that cannot be read measured nothing the estimate can use.
    }
  }
  return measured;
}

}  // namespace ddpscale
