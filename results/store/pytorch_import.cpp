#include "results/store/pytorch_import.hpp"

#include "results/store/run_store.hpp"
#include "results/store/store_error.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>

namespace ddpscale {
namespace {

using nlohmann::json;

// A field the line must have, with the type asked for; the error names it.
template <typename T>
T required(const json& line, const char* key) {
  if (!line.contains(key)) throw std::invalid_argument(std::string("no \"") + key + "\" field");
  try {
    return line.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(std::string("\"") + key + "\" has the wrong type");
  }
}

std::string exec_of(const json& line) {
  const std::string variant = required<std::string>(line, "variant");
  if (variant == "eager" || variant == "graph") return variant;
  throw std::invalid_argument("variant \"" + variant + "\" has no ddpscale execution mode to stand beside " +
                              "(import the eager or graph variant)");
}

std::string describe_line(const json& line) {
  return required<std::string>(line, "model") + " batch " + std::to_string(required<int64_t>(line, "batch_per_gpu")) +
         " on " + std::to_string(required<int>(line, "world_size")) + " rank(s), " +
         required<std::string>(line, "dtype") + ", " + exec_of(line);
}

std::string describe_config(const ConfigParams& p) {
  return p.model + " batch " + std::to_string(p.batch_per_rank) + " on " + std::to_string(p.world_size) +
         " rank(s), " + p.dtype + ", " + p.exec + (p.scaling == "weak" ? "" : ", " + p.scaling + " scaling");
}

bool same_identity(const json& line, const ConfigParams& p) {
  const std::string sha = line.value("model_sha256", std::string());
  return p.engine == kEngineDdpscale && p.model == required<std::string>(line, "model") &&
         p.batch_per_rank == required<int64_t>(line, "batch_per_gpu") &&
         p.world_size == required<int>(line, "world_size") && p.dtype == required<std::string>(line, "dtype") &&
         p.exec == exec_of(line) && p.scaling == "weak" && (sha.empty() || p.model_sha256.empty() || sha == p.model_sha256);
}

// Among twins that differ only in engine settings, the one run as the reference runs.
bool runs_like_the_reference(const json& line, const ConfigParams& p) {
  return p.bucket_mb == required<double>(line, "bucket_mb") &&
         p.broadcast_buffers == required<bool>(line, "broadcast_buffers") && p.nccl_profile == "default" &&
         p.allreduce_dtype == "float32";
}

std::vector<float> floats_of(const json& values, const char* what) {
  std::vector<float> out;
  for (const json& v : values) {
    if (!v.is_number()) throw std::invalid_argument(std::string(what) + " holds a value that is not a number");
    out.push_back(v.get<float>());
  }
  return out;
}

RankTimings rank_timings(const json& rank, size_t steps) {
  RankTimings timings;
  timings.rank = required<int>(rank, "rank");
  const std::vector<float> step_us = floats_of(required<json>(rank, "step_us"), "step_us");
  if (step_us.size() != steps)
    throw std::invalid_argument("rank " + std::to_string(timings.rank) + " has " + std::to_string(step_us.size()) +
                                " step times for " + std::to_string(steps) + " measured steps");
  for (int p = 0; p < kPhaseCount; ++p)
    timings.phase_us[static_cast<size_t>(p)] =
        static_cast<Phase>(p) == Phase::step ? step_us : std::vector<float>(steps, std::numeric_limits<float>::quiet_NaN());
  timings.wall_seconds = required<double>(rank, "wall_seconds");
  timings.peak_memory_bytes = rank.value("peak_memory_bytes", int64_t{0});
  timings.process_id = rank.value("process_id", int64_t{0});
  return timings;
}

RunRecord run_record(const json& run, size_t steps, int runs_per_launch, const ImportOptions& options) {
  RunRecord record;
  const int index = required<int>(run, "index");
  record.index = options.launch * runs_per_launch + index;
  record.launch = options.launch;
  record.seed = required<uint64_t>(run, "seed");
  record.start_unix_ms = run.value("start_unix_ms", int64_t{0});
  record.samples_per_second = required<double>(run, "samples_per_second");
  if (!(record.samples_per_second > 0))
    throw std::invalid_argument("run " + std::to_string(index) + " has no positive samples_per_second");
  for (const json& rank : required<json>(run, "ranks")) record.ranks.push_back(rank_timings(rank, steps));
  return record;
}

std::vector<ConfigRecord> ddpscale_configs_of(const std::string& study_dir) {
  std::map<std::string, ConfigRecord> by_id;  // a configuration of several launches once
  for (const std::string& path : list_config_files(study_dir)) {
    ConfigRecord record = read_config(path);
    if (record.params.engine == kEngineDdpscale) by_id.emplace(record.id, std::move(record));
  }
  std::vector<ConfigRecord> out;
  for (auto& [id, record] : by_id) out.push_back(std::move(record));
  return out;
}

}  // namespace

const ConfigRecord& engine_twin(const json& line, const std::vector<ConfigRecord>& ddpscale_configs) {
  std::vector<const ConfigRecord*> same, settled;
  for (const ConfigRecord& c : ddpscale_configs)
    if (same_identity(line, c.params)) same.push_back(&c);
  for (const ConfigRecord* c : same)
    if (runs_like_the_reference(line, c->params)) settled.push_back(c);
  if (same.empty()) {
    std::string have;
    for (const ConfigRecord& c : ddpscale_configs) {
      if (have.size() > 400) {
        have += "; ...";
        break;
      }
      have += (have.empty() ? "" : "; ") + describe_config(c.params);
    }
    throw std::invalid_argument("the study has no ddpscale configuration of " + describe_line(line) +
                                " (weak scaling, the same model file) to stand beside; it has: " +
                                (have.empty() ? "none" : have));
  }
  const std::vector<const ConfigRecord*>& pick = settled.empty() ? same : settled;
  if (pick.size() > 1)
    throw std::invalid_argument("several ddpscale configurations could stand beside " + describe_line(line) + ": " +
                                pick[0]->id + " and " + pick[1]->id + "; import into a study that has one");
  const int64_t parameters = required<int64_t>(line, "parameters");
  if (pick.front()->params.parameters != parameters)
    throw std::invalid_argument("PyTorch counts " + std::to_string(parameters) + " parameters in " +
                                describe_line(line) + ", ddpscale " + std::to_string(pick.front()->params.parameters) +
                                ": not the same model");
  return *pick.front();
}

ConfigRecord pytorch_record(const json& line, const ConfigParams& twin, const ImportOptions& options) {
  if (options.launches < 1 || options.launch < 0 || options.launch >= options.launches)
    throw std::invalid_argument("launch " + std::to_string(options.launch + 1) + " of " +
                                std::to_string(options.launches) + " is out of range");
  const json& runs = required<json>(line, "run_records");
  if (!runs.is_array() || runs.empty())
    throw std::invalid_argument("no run_records (a reference older than this ddpscale prints none: run "
                                "scripts/gpu/pytorch_ddp_reference.py from this checkout)");
  const int steps = required<int>(line, "steps");
  ConfigRecord record;
  ConfigParams& p = record.params;
  p = twin;
  p.engine = kEnginePytorchDdp;
  p.optimizer = required<std::string>(line, "optimizer");
  p.learning_rate = required<double>(line, "lr");
  p.bucket_mb = required<double>(line, "bucket_mb");
  p.overlap = true;  // DDP launches each bucket's allreduce as soon as it is full
  p.broadcast_buffers = required<bool>(line, "broadcast_buffers");
  p.allreduce_dtype = "float32";
  p.nccl_profile = "default";
  p.warmup_steps = required<int>(line, "warmup");
  p.measured_steps = steps;
  p.runs = static_cast<int>(runs.size()) * options.launches;
  p.seed = required<uint64_t>(line, "seed");
  p.nccl_variables.clear();
  if (line.contains("nccl_variables"))
    for (const auto& [name, value] : line.at("nccl_variables").items()) p.nccl_variables[name] = value.get<std::string>();
  p.backend = p.world_size == 1 ? "none" : (p.device == "cuda" ? "nccl" : "gloo");
  record.id = config_id(p);
  record.launch = options.launch;
  record.launches = options.launches;
  record.git_commit = options.git_commit;
  record.finished_utc = options.finished_utc;
  for (const json& run : runs) {
    RunRecord r = run_record(run, static_cast<size_t>(steps), static_cast<int>(runs.size()), options);
    if (r.ranks.size() != static_cast<size_t>(p.world_size))
      throw std::invalid_argument("run " + std::to_string(r.index) + " has " + std::to_string(r.ranks.size()) +
                                  " ranks' times for a world of " + std::to_string(p.world_size));
    // The reference's --process-shift, recorded as ddpscale records its own on a GPU.
    if (p.device == "cuda" && line.contains("process_shift_mib"))
      for (RankTimings& rank : r.ranks)
        rank.instruments["process_shift_mib"] = {line.at("process_shift_mib").get<float>()};
    record.runs.push_back(std::move(r));
  }
  return record;
}

std::vector<ImportedConfig> import_pytorch_runs(const std::string& given_dir, const std::string& jsonl_path,
                                                const ImportOptions& options) {
  const std::string study_dir = study_folder_in(given_dir);
  std::ifstream in(jsonl_path);
  if (!in) throw std::invalid_argument(jsonl_path + ": cannot be read");
  const std::vector<ConfigRecord> twins = ddpscale_configs_of(study_dir);
  std::vector<std::pair<ConfigRecord, std::string>> records;  // written only once every line is good
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.empty() || text.front() != '{') continue;
    try {
      const json line = json::parse(text);
      if (line.value("tool", std::string()) != "pytorch") continue;
      const ConfigRecord& twin = engine_twin(line, twins);
      records.emplace_back(pytorch_record(line, twin.params, options), twin.id);
    } catch (const json::exception& e) {
      throw std::invalid_argument(jsonl_path + " line " + std::to_string(number) + ": not JSON (" + e.what() + ")");
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(jsonl_path + " line " + std::to_string(number) + ": " + e.what());
    }
  }
  if (records.empty())
    throw std::invalid_argument(jsonl_path + " holds no result line of scripts/gpu/pytorch_ddp_reference.py");
  std::vector<ImportedConfig> imported;
  for (const auto& [record, twin_id] : records) {
    write_config(study_dir, record);
    imported.push_back({record.id, twin_id, record.runs.size(),
                        study_dir + "/" + config_file_name(record.id, record.launch, record.launches)});
  }
  return imported;
}

}  // namespace ddpscale
