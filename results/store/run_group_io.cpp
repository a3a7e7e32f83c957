#include "results/store/run_group_io.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

namespace ddpscale {
namespace {

std::string run_group_name(int index) {
  char name[32];
  std::snprintf(name, sizeof(name), "run_%04d", index);
  return name;
}

std::vector<std::string> phase_names() {
  std::vector<std::string> names;
  for (int p = 0; p < kPhaseCount; ++p) names.emplace_back(phase_name(static_cast<Phase>(p)));
  return names;
}

constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();

// A rank's measured step count; its phases must agree, a mismatch is a trainer bug that
// padding would hide.
size_t steps_of(const H5Io& io, const RunRecord& run, size_t rank) {
  const auto& phases = run.ranks[rank].phase_us;
  if (phases.size() != static_cast<size_t>(kPhaseCount))
    throw io.error("run " + std::to_string(run.index) + " rank " + std::to_string(rank) + " has " +
                   std::to_string(phases.size()) + " phases, expected " + std::to_string(kPhaseCount));
  for (const auto& series : phases)
    if (series.size() != phases[0].size())
      throw io.error("run " + std::to_string(run.index) + " rank " + std::to_string(rank) +
                     ": phases have different step counts");
  return phases[0].size();
}

// phase_us[rank][phase][step], padded with NaN where a rank of a failed run measured fewer
// steps; phase_steps[rank] says how many are real.
void write_phase_times(const H5Io& io, hid_t g, const RunRecord& run) {
  const size_t ranks = run.ranks.size();
  std::vector<int64_t> steps(ranks);
  for (size_t r = 0; r < ranks; ++r) steps[r] = static_cast<int64_t>(steps_of(io, run, r));
  const size_t longest = ranks ? static_cast<size_t>(*std::max_element(steps.begin(), steps.end())) : 0;
  std::vector<float> table(ranks * kPhaseCount * longest, kMissing);
  for (size_t r = 0; r < ranks; ++r)
    for (size_t p = 0; p < static_cast<size_t>(kPhaseCount); ++p) {
      const auto& series = run.ranks[r].phase_us[p];
      std::copy(series.begin(), series.end(), table.begin() + static_cast<long>((r * kPhaseCount + p) * longest));
    }
  H5Dataset set = io.put_floats(g, "phase_us", {ranks, static_cast<hsize_t>(kPhaseCount), longest}, table);
  io.put_string_list(set.get(), "phases", phase_names());
  io.put_string(set.get(), "units", "microseconds");
  io.put_ints(g, "phase_steps", steps);
}

void read_phase_times(const H5Io& io, hid_t g, const std::string& run_name, RunRecord& run) {
  std::vector<hsize_t> dims;
  const auto table = io.get_float_table(g, "phase_us", dims);
  if (dims.size() != 3 || dims[1] != static_cast<hsize_t>(kPhaseCount))
    throw io.error(run_name + "/phase_us has shape other than [ranks][" + std::to_string(kPhaseCount) + "][steps]");
  {
    H5Dataset set = io.open_dataset(g, "phase_us");
    if (io.get_string_list(set.get(), "phases") != phase_names())
      throw io.error(run_name + "/phase_us names other phases than this ddpscale measures");
  }
  const size_t ranks = dims[0], longest = dims[2];
  const auto steps = io.get_ints(g, "phase_steps", static_cast<long>(ranks));
  run.ranks.resize(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    if (steps[r] < 0 || static_cast<size_t>(steps[r]) > longest)
      throw io.error(run_name + "/phase_steps[" + std::to_string(r) + "] is out of range");
    run.ranks[r].rank = static_cast<int>(r);
    for (size_t p = 0; p < static_cast<size_t>(kPhaseCount); ++p) {
      const auto begin = table.begin() + static_cast<long>((r * kPhaseCount + p) * longest);
      run.ranks[r].phase_us[p].assign(begin, begin + steps[r]);
    }
  }
}

// NVML series differ in length between ranks: [ranks][longest] padded with NaN, plus
// <name>_count[rank].
void write_rank_series(const H5Io& io, hid_t g, const std::string& name, const std::vector<RankTimings>& ranks,
                       std::vector<float> RankTimings::*series) {
  size_t longest = 0;
  for (const auto& r : ranks) longest = std::max(longest, (r.*series).size());
  std::vector<float> padded(ranks.size() * longest, kMissing);
  std::vector<int64_t> counts;
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::copy((ranks[i].*series).begin(), (ranks[i].*series).end(), padded.begin() + static_cast<long>(i * longest));
    counts.push_back(static_cast<int64_t>((ranks[i].*series).size()));
  }
  io.put_floats(g, name, {ranks.size(), longest}, padded);
  io.put_ints(g, name + "_count", counts);
}

void read_rank_series(const H5Io& io, hid_t g, const std::string& name, std::vector<RankTimings>& ranks,
                      std::vector<float> RankTimings::*series) {
  std::vector<hsize_t> dims;
  const auto padded = io.get_float_table(g, name, dims);
  if (dims.size() != 2 || dims[0] != ranks.size()) throw io.error("dataset '" + name + "' is not [ranks][samples]");
  const auto counts = io.get_ints(g, name + "_count", static_cast<long>(ranks.size()));
  const size_t longest = dims[1];
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (counts[i] < 0 || static_cast<size_t>(counts[i]) > longest)
      throw io.error("dataset '" + name + "_count' is out of range at rank " + std::to_string(i));
    const auto begin = padded.begin() + static_cast<long>(i * longest);
    (ranks[i].*series).assign(begin, begin + counts[i]);
  }
}

// Instruments: one table per run, instruments float32[ranks][names][longest] (NaN-padded,
// attribute `names` in kInstrumentNames' order) and instrument_counts int64[ranks * names]
// (rank-major): two datasets, not two per instrument, because each HDF5 dataset costs about
// a kilobyte of headers and a study stores thousands of runs.
void write_instruments(const H5Io& io, hid_t run_group, const std::vector<RankTimings>& ranks) {
  std::vector<std::string> names(std::begin(kInstrumentNames), std::end(kInstrumentNames));
  size_t longest = 0;
  for (const RankTimings& rank : ranks)
    for (const auto& [name, series] : rank.instruments) longest = std::max(longest, series.size());
  std::vector<float> table(ranks.size() * names.size() * longest, kMissing);
  std::vector<int64_t> counts(ranks.size() * names.size(), 0);
  for (size_t r = 0; r < ranks.size(); ++r)
    for (size_t i = 0; i < names.size(); ++i) {
      const auto found = ranks[r].instruments.find(names[i]);
      if (found == ranks[r].instruments.end()) continue;
      std::copy(found->second.begin(), found->second.end(),
                table.begin() + static_cast<long>((r * names.size() + i) * longest));
      counts[r * names.size() + i] = static_cast<int64_t>(found->second.size());
    }
  H5Dataset set = io.put_floats(run_group, "instruments", {ranks.size(), names.size(), longest}, table);
  io.put_string_list(set.get(), "names", names);
  io.put_ints(run_group, "instrument_counts", counts);
}

// The first layout of the instruments, which files of older builds have: a group
// `instruments` holding, per instrument, float32[ranks][max] NaN-padded and NAME_count[ranks].
void read_instrument_group(const H5Io& io, hid_t run_group, std::vector<RankTimings>& ranks) {
  H5Group group = io.open_group(run_group, "instruments");
  for (const std::string& name : io.member_names(group.get())) {
    const bool is_count = name.size() > 6 && name.compare(name.size() - 6, 6, "_count") == 0;
    if (is_count) continue;
    std::vector<hsize_t> dims;
    const auto padded = io.get_float_table(group.get(), name, dims);
    if (dims.size() != 2 || dims[0] != ranks.size())
      throw io.error("dataset 'instruments/" + name + "' is not [ranks][samples]");
    const auto counts = io.get_ints(group.get(), name + "_count", static_cast<long>(ranks.size()));
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (counts[r] < 0 || static_cast<size_t>(counts[r]) > dims[1])
        throw io.error("dataset 'instruments/" + name + "_count' is out of range at rank " + std::to_string(r));
      if (counts[r] == 0) continue;
      const auto begin = padded.begin() + static_cast<long>(r * dims[1]);
      ranks[r].instruments[name].assign(begin, begin + counts[r]);
    }
  }
}

// Optional: files written before instruments existed have none (schema version unchanged).
// Read by the names stored, so a file with other instruments than this build's reads too.
void read_instruments(const H5Io& io, hid_t run_group, std::vector<RankTimings>& ranks) {
  if (!io.has_link(run_group, "instruments")) return;
  if (!io.has_link(run_group, "instrument_counts")) return read_instrument_group(io, run_group, ranks);
  std::vector<hsize_t> dims;
  const auto table = io.get_float_table(run_group, "instruments", dims);
  std::vector<std::string> names;
  {
    H5Dataset set = io.open_dataset(run_group, "instruments");
    names = io.get_string_list(set.get(), "names");
  }
  if (dims.size() != 3 || dims[0] != ranks.size() || dims[1] != names.size())
    throw io.error("dataset 'instruments' is not [ranks][names][samples]");
  const auto counts = io.get_ints(run_group, "instrument_counts", static_cast<long>(ranks.size() * names.size()));
  const size_t longest = dims[2];
  for (size_t r = 0; r < ranks.size(); ++r)
    for (size_t i = 0; i < names.size(); ++i) {
      const int64_t count = counts[r * names.size() + i];
      if (count < 0 || static_cast<size_t>(count) > longest)
        throw io.error("dataset 'instrument_counts' is out of range at rank " + std::to_string(r));
      if (count == 0) continue;
      const auto begin = table.begin() + static_cast<long>((r * names.size() + i) * longest);
      ranks[r].instruments[names[i]].assign(begin, begin + count);
    }
}

const char* status_text(RunStatus status) { return status == RunStatus::ok ? "ok" : "failed"; }

RunStatus parse_status(const H5Io& io, const std::string& run_name, const std::string& text) {
  if (text == "ok") return RunStatus::ok;
  if (text == "failed") return RunStatus::failed;
  throw io.error(run_name + ": status '" + text + "' is neither 'ok' nor 'failed'");
}

}  // namespace

void write_run(const H5Io& io, hid_t runs, const RunRecord& run) {
  H5Group g = io.create_group(runs, run_group_name(run.index));
  io.put_int(g.get(), "index", run.index);
  io.put_uint(g.get(), "seed", run.seed);
  if (run.start_unix_ms > 0) io.put_int(g.get(), "start_unix_ms", run.start_unix_ms);
  io.put_string(g.get(), "status", status_text(run.status));
  io.put_string(g.get(), "failure", run.failure);
  io.put_double(g.get(), "samples_per_second", run.samples_per_second);
  io.put_floats(g.get(), "loss", {run.loss.size()}, run.loss);
  io.put_int(g.get(), "loss_every", run.loss_every);
  write_phase_times(io, g.get(), run);
  std::vector<double> wall;
  std::vector<int64_t> peak;
  for (const auto& rank : run.ranks) {
    wall.push_back(rank.wall_seconds);
    peak.push_back(rank.peak_memory_bytes);
  }
  io.put_doubles(g.get(), "wall_seconds", wall);
  io.put_ints(g.get(), "peak_memory_bytes", peak);
  write_rank_series(io, g.get(), "gpu_utilization_pct", run.ranks, &RankTimings::gpu_utilization_pct);
  write_rank_series(io, g.get(), "gpu_memory_used_mib", run.ranks, &RankTimings::gpu_memory_used_mib);
  write_rank_series(io, g.get(), "gpu_power_w", run.ranks, &RankTimings::gpu_power_w);
  write_rank_series(io, g.get(), "gpu_busy_us", run.ranks, &RankTimings::gpu_busy_us);
  write_rank_series(io, g.get(), "calibration_host_us", run.ranks, &RankTimings::calibration_host_us);
  write_rank_series(io, g.get(), "calibration_device_us", run.ranks, &RankTimings::calibration_device_us);
  io.put_int(g.get(), "launch", run.launch);
  std::vector<int64_t> process_ids;
  for (const auto& rank : run.ranks) process_ids.push_back(rank.process_id);
  io.put_ints(g.get(), "process_id", process_ids);
  write_instruments(io, g.get(), run.ranks);
}

RunRecord read_run(const H5Io& io, hid_t runs, const std::string& name) {
  H5Group g = io.open_group(runs, name);
  RunRecord run;
  run.index = static_cast<int>(io.get_int(g.get(), "index"));
  run.seed = io.get_uint(g.get(), "seed");
  // Optional: files written before it existed lack it (schema version unchanged).
  if (io.has_attribute(g.get(), "start_unix_ms")) run.start_unix_ms = io.get_int(g.get(), "start_unix_ms");
  run.status = parse_status(io, name, io.get_string(g.get(), "status"));
  run.failure = io.get_string(g.get(), "failure");
  run.samples_per_second = io.get_double(g.get(), "samples_per_second");
  run.loss = io.get_floats(g.get(), "loss");
  // Optional: files written before graph mode kept blocks hold every step's loss.
  if (io.has_attribute(g.get(), "loss_every")) run.loss_every = static_cast<int>(io.get_int(g.get(), "loss_every"));
  read_phase_times(io, g.get(), name, run);
  const long ranks = static_cast<long>(run.ranks.size());
  const auto wall = io.get_doubles(g.get(), "wall_seconds", ranks);
  const auto peak = io.get_ints(g.get(), "peak_memory_bytes", ranks);
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    run.ranks[r].wall_seconds = wall[r];
    run.ranks[r].peak_memory_bytes = peak[r];
  }
  read_rank_series(io, g.get(), "gpu_utilization_pct", run.ranks, &RankTimings::gpu_utilization_pct);
  read_rank_series(io, g.get(), "gpu_memory_used_mib", run.ranks, &RankTimings::gpu_memory_used_mib);
  read_rank_series(io, g.get(), "gpu_power_w", run.ranks, &RankTimings::gpu_power_w);
  // Optional in schema version 1: files written before --gpu-busy-steps existed lack it.
  if (io.has_link(g.get(), "gpu_busy_us"))
    read_rank_series(io, g.get(), "gpu_busy_us", run.ranks, &RankTimings::gpu_busy_us);
  // Optional too: files of builds without the host-drift calibration lack it.
  for (const auto& [name, series] : {std::pair{"calibration_host_us", &RankTimings::calibration_host_us},
                                     std::pair{"calibration_device_us", &RankTimings::calibration_device_us}})
    if (io.has_link(g.get(), name)) read_rank_series(io, g.get(), name, run.ranks, series);
  // Optional too: launches, process ids and instruments (docs/hdf5-schema.md).
  if (io.has_attribute(g.get(), "launch")) run.launch = static_cast<int>(io.get_int(g.get(), "launch"));
  if (io.has_link(g.get(), "process_id")) {
    const auto ids = io.get_ints(g.get(), "process_id", ranks);
    for (size_t r = 0; r < run.ranks.size(); ++r) run.ranks[r].process_id = ids[r];
  }
  read_instruments(io, g.get(), run.ranks);
  return run;
}

}  // namespace ddpscale
