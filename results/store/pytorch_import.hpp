// `ddpscale import-pytorch`: runs of PyTorch's DistributedDataParallel as
// scripts/gpu/pytorch_ddp_reference.py prints them (one JSON object a line, each with its
// run_records: every run's per-step times on every rank), stored in a study folder as
// configurations of the pytorch-ddp engine beside their ddpscale twins. `ddpscale report` and
// `compare` then show both engines' answers: what an efficient engine gets, and what a
// PyTorch DDP job gets (docs/methodology.md, "Where the engine differs from PyTorch DDP").
#pragma once
#include "results/store/run_record.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace ddpscale {

struct ImportOptions {
  int launch = 0;    // 0-based: the launch these runs are (one reference process set)
  int launches = 1;  // of how many; >1 writes <id>.launch-k-of-n.h5 files beside the others
  std::string git_commit;    // the importing build's, recorded as the file's
  std::string finished_utc;  // when imported (ISO 8601)
};

// What one imported line became.
struct ImportedConfig {
  std::string id;       // the pytorch-ddp configuration's id
  std::string twin_id;  // the ddpscale configuration it stands beside
  size_t runs = 0;
  std::string file;     // where it was written
};

// The ddpscale configuration a reference line stands beside: same model file (name and
// SHA-256), parameters, batch per GPU, world size, dtype and execution mode, weak scaling;
// where several differ only in engine settings (bucket size, allreduce precision, NCCL
// profile, buffers), the one with the line's bucket size and buffers, the default profile
// and a float32 allreduce. Throws std::invalid_argument saying what was looked for and what
// the study has, for none or several, or for a parameter count that differs (another model).
const ConfigRecord& engine_twin(const nlohmann::json& line, const std::vector<ConfigRecord>& ddpscale_configs);

// One reference line as a configuration of the pytorch-ddp engine: the twin's identity
// (model, input, file hash, parameters, batch, scaling, dtype, exec, device) and the line's
// settings (optimizer, learning rate, buckets, buffers, warm-up and measured steps, seed);
// each rank's step times become the step phase, the phases PyTorch does not time are NaN.
// Throws std::invalid_argument for a line without run_records or with step counts that
// disagree with its steps.
ConfigRecord pytorch_record(const nlohmann::json& line, const ConfigParams& twin, const ImportOptions& options);

// Every line of jsonl_path that is a reference result (others, such as log lines, are
// passed over), imported into study_dir. Nothing is written unless every line finds its
// twin. Throws std::invalid_argument (a line, with its number) or StoreError (the folder).
std::vector<ImportedConfig> import_pytorch_runs(const std::string& study_dir, const std::string& jsonl_path,
                                                const ImportOptions& options);

}  // namespace ddpscale
