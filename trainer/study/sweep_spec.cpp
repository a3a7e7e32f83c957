#include "trainer/study/sweep_spec.hpp"

#include "models/torchscript_catalog.hpp"
#include "results/analysis/launch_precision.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>

namespace ddpscale {
namespace {

class SpecReader {
 public:
  explicit SpecReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& what) const {
    std::ostringstream message;
    message << path_;
    if (node.IsDefined() && node.Mark().line >= 0) message << ":" << node.Mark().line + 1;
    message << ": key '" << key << "': " << what;
    throw SpecError(message.str());
  }

  template <typename T>
  T scalar(const YAML::Node& node, const std::string& key, const char* expected) const {
    if (!node.IsScalar()) fail(node, key, std::string("expected ") + expected);
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      fail(node, key, std::string("expected ") + expected + ", got '" + node.Scalar() + "'");
    }
  }

  // A scalar or a list of scalars, as a list.
  template <typename T>
  std::vector<T> list(const YAML::Node& node, const std::string& key, const char* expected) const {
    std::vector<T> values;
    if (node.IsSequence()) {
      for (const auto& item : node) values.push_back(scalar<T>(item, key, expected));
    } else {
      values.push_back(scalar<T>(node, key, expected));
    }
    if (values.empty()) fail(node, key, "must not be empty");
    return values;
  }

  template <typename T>
  T positive(const YAML::Node& node, const std::string& key) const {
    const T value = scalar<T>(node, key, "a positive number");
    if (!(value > 0)) fail(node, key, "must be positive, got " + node.Scalar());
    return value;
  }

 private:
  std::string path_;
};

// `models:` is a name or a list of names and {model: torchscript:PATH, input_shape | input,
// classes} mappings.
void parse_models(const SpecReader& r, const YAML::Node& node, SweepSpec& spec) {
  if (!node.IsSequence()) {
    spec.models = r.list<std::string>(node, "models", "model names");
    return;
  }
  for (const auto& item : node) {
    if (!item.IsMap()) {
      spec.models.push_back(r.scalar<std::string>(item, "models", "model names or {model: torchscript:PATH, ...}"));
      continue;
    }
    if (!item["model"]) r.fail(item, "models", "a mapping needs 'model: torchscript:PATH'");
    const auto name = r.scalar<std::string>(item["model"], "models.model", "a model name");
    if (!is_torchscript_model(name))
      r.fail(item, "models", "only torchscript:PATH models take input_shape / input / classes here, not " + name);
    ModelInput input;
    for (const auto& kv : item) {
      const auto key = kv.first.as<std::string>();
      if (key == "model") continue;
      if (key == "input_shape") input.input_shape = r.scalar<std::string>(kv.second, "models.input_shape", "a shape like 3x224x224");
      else if (key == "input") input.input = r.scalar<std::string>(kv.second, "models.input", "tokens:VOCAB:SEQ");
      else if (key == "classes") input.classes = r.positive<int64_t>(kv.second, "models.classes");
      else r.fail(kv.first, "models." + key, "unknown key (allowed: model, input_shape, input, classes)");
    }
    spec.models.push_back(name);
    spec.model_inputs[name] = input;
  }
  if (spec.models.empty()) r.fail(node, "models", "must not be empty");
}

const std::set<std::string> kTopKeys = {"name", "models", "batch_sizes", "world_sizes", "scaling", "runs",
                                        "warmup", "steps", "optimizer", "lr", "dtype", "exec", "bucket_mb",
                                        "first_bucket_mb", "overlap", "optimizer_impl", "nccl_profiles", "seed", "dropout",
                                        "broadcast_buffers",
                                        "placement_shifts_mib", "process_shifts_mib",
                                        "seq_len", "features", "vocab", "classes", "overrides", "gpu_busy_steps",
                                        "allreduce_dtype", "interleave_runs", "input_shape", "input",
                                        "memory_check", "launches", "target_half_width", "min_launches",
                                        "design", "paired_seconds", "paired_window"};

void parse_nccl_profiles(const SpecReader& r, const YAML::Node& node, SweepSpec& spec) {
  if (!node.IsMap()) r.fail(node, "nccl_profiles", "expected a map of profile name -> {NCCL_VAR: value}");
  for (const auto& entry : node) {
    const auto name = entry.first.as<std::string>();
    NcclProfile profile;
    profile.name = name;
    if (!entry.second.IsNull()) {
      if (!entry.second.IsMap()) r.fail(entry.second, "nccl_profiles." + name, "expected a map of NCCL_* variables");
      for (const auto& var : entry.second)
        profile.variables[var.first.as<std::string>()] =
            r.scalar<std::string>(var.second, "nccl_profiles." + name + "." + var.first.as<std::string>(), "a value");
    }
    try {
      validate_nccl_profile(profile);
    } catch (const NcclProfileError& e) {
      r.fail(entry.second, "nccl_profiles." + name, e.what());
    }
    spec.nccl_profiles.push_back(profile);
  }
}

std::vector<int64_t> positive_list(const SpecReader& r, const YAML::Node& node, const std::string& key) {
  auto values = r.list<int64_t>(node, key, "positive integers");
  for (int64_t v : values)
    if (v <= 0) r.fail(node, key, "must be positive, got " + std::to_string(v));
  return values;
}

// A precision or a list of them, each by its canonical name (canonical_dtype).
std::vector<std::string> precision_list(const SpecReader& r, const YAML::Node& node, const std::string& key) {
  std::vector<std::string> names;
  for (const auto& name : r.list<std::string>(node, key, "float32 or bfloat16")) {
    try {
      names.push_back(canonical_dtype(name));
    } catch (const std::exception&) {
      r.fail(node, key, "'" + name + "' is not float32 (fp32) or bfloat16 (bf16)");
    }
  }
  return names;
}

void parse_overrides(const SpecReader& r, const YAML::Node& node, SweepSpec& spec) {
  if (!node.IsSequence()) r.fail(node, "overrides", "expected a list of {models: [...], runs/warmup/steps: N}");
  for (const auto& item : node) {
    if (!item.IsMap()) r.fail(item, "overrides", "each entry must be a map");
    SpecOverride o;
    for (const auto& kv : item) {
      const auto key = kv.first.as<std::string>();
      if (key == "models") o.models = r.list<std::string>(kv.second, "overrides.models", "model names");
      else if (key == "runs") o.runs = r.positive<int>(kv.second, "overrides.runs");
      else if (key == "steps") o.steps = r.positive<int>(kv.second, "overrides.steps");
      else if (key == "warmup") o.warmup = r.scalar<int>(kv.second, "overrides.warmup", "an integer");
      else if (key == "batch_sizes") o.batch_sizes = positive_list(r, kv.second, "overrides.batch_sizes");
      else r.fail(kv.first, "overrides." + key, "unknown key (allowed: models, runs, warmup, steps, batch_sizes)");
    }
    if (o.models.empty()) r.fail(item, "overrides", "each entry needs 'models'");
    spec.overrides.push_back(o);
  }
}

YAML::Node load_yaml(const std::string& text, const std::string& path) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw SpecError(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
}

// The spec is a map of known keys and has the three that span the grid.
void check_keys(const SpecReader& r, const YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) throw SpecError(path + ": expected a YAML map of keys (models, batch_sizes, ...)");
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (!kTopKeys.count(key)) {
      std::string keys;
      for (const std::string& known : kTopKeys) keys += (keys.empty() ? "" : ", ") + known;
      r.fail(kv.first, key, "unknown key; the keys are " + keys + " (experiments/README.md describes them)");
    }
  }
  for (const char* required : {"models", "batch_sizes", "world_sizes"})
    if (!root[required]) throw SpecError(path + ": key '" + required + "' is required");
}

// name, models, batch_sizes, world_sizes and scaling.
void parse_grid(const SpecReader& r, const YAML::Node& root, SweepSpec& spec) {
  spec.name = root["name"] ? r.scalar<std::string>(root["name"], "name", "a string") : "study";
  parse_models(r, root["models"], spec);
  spec.batch_sizes = positive_list(r, root["batch_sizes"], "batch_sizes");
  for (const auto& world : r.list<int>(root["world_sizes"], "world_sizes", "positive integers")) {
    if (world <= 0) r.fail(root["world_sizes"], "world_sizes", "must be positive, got " + std::to_string(world));
    spec.world_sizes.push_back(world);
  }
  if (root["scaling"]) {
    spec.scaling = r.list<std::string>(root["scaling"], "scaling", "weak or strong");
    for (const auto& s : spec.scaling)
      if (s != "weak" && s != "strong") r.fail(root["scaling"], "scaling", "'" + s + "' is not weak or strong");
  }
}

// runs, steps, warmup, the optimizer, its learning rate and gpu_busy_steps.
void parse_schedule(const SpecReader& r, const YAML::Node& root, TrainOptions& b) {
  if (root["runs"]) b.runs = r.positive<int>(root["runs"], "runs");
  if (root["steps"]) b.steps = r.positive<int>(root["steps"], "steps");
  if (root["warmup"]) {
    b.warmup = r.scalar<int>(root["warmup"], "warmup", "an integer");
    if (b.warmup < 0) r.fail(root["warmup"], "warmup", "must not be negative");
  }
  if (root["optimizer"]) {
    b.optimizer = r.scalar<std::string>(root["optimizer"], "optimizer", "adam or sgd");
    if (b.optimizer != "adam" && b.optimizer != "sgd") r.fail(root["optimizer"], "optimizer", "must be adam or sgd");
  }
  if (root["optimizer_impl"]) b.optimizer_impl = r.scalar<std::string>(root["optimizer_impl"], "optimizer_impl", "auto, libtorch or fused");
  if (root["lr"]) b.lr = r.positive<double>(root["lr"], "lr");
  if (root["gpu_busy_steps"]) {
    b.gpu_busy_steps = r.scalar<int>(root["gpu_busy_steps"], "gpu_busy_steps", "an integer");
    if (b.gpu_busy_steps < 0) r.fail(root["gpu_busy_steps"], "gpu_busy_steps", "must not be negative");
  }
}

// dtype, allreduce_dtype and exec.
void parse_precision_and_exec(const SpecReader& r, const YAML::Node& root, SweepSpec& spec) {
  if (root["dtype"]) spec.dtypes = precision_list(r, root["dtype"], "dtype");
  if (root["allreduce_dtype"]) spec.allreduce_dtypes = precision_list(r, root["allreduce_dtype"], "allreduce_dtype");
  if (root["exec"]) {
    spec.execs = r.list<std::string>(root["exec"], "exec", "eager or graph");
    for (const auto& mode : spec.execs)
      if (mode != "eager" && mode != "graph") r.fail(root["exec"], "exec", "'" + mode + "' is not eager or graph");
  }
}

// placement_shifts_mib (within a process) and process_shifts_mib (one per launch).
void parse_memory_shifts(const SpecReader& r, const YAML::Node& root, SweepSpec& spec) {
  if (root["placement_shifts_mib"]) {
    spec.base.placement_shifts_mib =
        r.list<int>(root["placement_shifts_mib"], "placement_shifts_mib", "MiB, e.g. [0, 20, 40, 60]");
    for (int mib : spec.base.placement_shifts_mib)
      if (mib < 0) r.fail(root["placement_shifts_mib"], "placement_shifts_mib", "must not be negative");
  }
  if (root["process_shifts_mib"]) {
    spec.process_shifts_mib =
        r.list<int>(root["process_shifts_mib"], "process_shifts_mib", "MiB, one per launch in turn, e.g. [0, 20, 40, 60]");
    for (int mib : spec.process_shifts_mib)
      if (mib < 0) r.fail(root["process_shifts_mib"], "process_shifts_mib", "must not be negative");
  }
}

// interleave_runs, design, paired_seconds and paired_window, and whether they go together.
void parse_design(const SpecReader& r, const YAML::Node& root, SweepSpec& spec) {
  if (root["interleave_runs"]) spec.interleave_runs = r.scalar<bool>(root["interleave_runs"], "interleave_runs", "true or false");
  if (root["design"]) {
    spec.design = r.scalar<std::string>(root["design"], "design", "paired or runs");
    if (spec.design != "paired" && spec.design != "runs")
      r.fail(root["design"], "design",
             "is paired (1-rank and N-rank blocks of steps take turns inside one job: the default) or runs (whole "
             "runs of each side, compared over launches)");
  }
  if (root["paired_seconds"]) spec.paired_seconds = r.positive<double>(root["paired_seconds"], "paired_seconds");
  if (root["paired_window"]) spec.paired_window = r.positive<int>(root["paired_window"], "paired_window");
  if (spec.design == "paired" && root["interleave_runs"] && !spec.interleave_runs)
    r.fail(root["interleave_runs"], "interleave_runs",
           "false needs design: runs (the paired design measures each N-rank configuration beside its 1-rank twin)");
}

// launches, target_half_width and min_launches.
void parse_launch_count(const SpecReader& r, const YAML::Node& root, SweepSpec& spec) {
  if (root["launches"]) spec.launches = r.positive<int>(root["launches"], "launches");
  if (root["target_half_width"]) {
    spec.target_half_width = r.positive<double>(root["target_half_width"], "target_half_width");
    if (spec.target_half_width >= 1)
      r.fail(root["target_half_width"], "target_half_width",
             "is a share of the speedup, below 1: 0.05 stops adding launches once each speedup's 95% interval is "
             "within +-5% of it");
  }
  if (root["min_launches"]) {
    spec.min_launches = r.positive<int>(root["min_launches"], "min_launches");
    if (!root["target_half_width"])
      r.fail(root["min_launches"], "min_launches",
             "only counts with target_half_width (the launches every configuration runs before the target may stop "
             "it); add target_half_width or remove min_launches");
    if (spec.min_launches < 2)
      r.fail(root["min_launches"], "min_launches", "must be 2 or more: an interval over launches needs two of them");
  }
}

// dropout, broadcast_buffers, first_bucket_mb and the models' input and sizes.
void parse_model_options(const SpecReader& r, const YAML::Node& root, TrainOptions& b) {
  if (root["dropout"]) b.dropout = r.scalar<bool>(root["dropout"], "dropout", "true or false");
  if (root["broadcast_buffers"])
    b.broadcast_buffers = r.scalar<bool>(root["broadcast_buffers"], "broadcast_buffers", "true or false");
  if (root["first_bucket_mb"]) b.first_bucket_mb = r.positive<double>(root["first_bucket_mb"], "first_bucket_mb");
  // torchscript:PATH models' input (docs/own-models.md), for every such model in `models`.
  if (root["input_shape"]) b.input_shape = r.scalar<std::string>(root["input_shape"], "input_shape", "a shape like 3x224x224");
  if (root["input"]) b.input = r.scalar<std::string>(root["input"], "input", "tokens:VOCAB:SEQ");
  for (const char* key : {"seq_len", "features", "vocab", "classes"})
    if (root[key]) {
      const auto value = r.positive<int64_t>(root[key], key);
      if (std::string(key) == "seq_len") b.seq_len = value;
      if (std::string(key) == "features") b.features = value;
      if (std::string(key) == "vocab") b.vocab = value;
      if (std::string(key) == "classes") b.classes = value;
    }
}

// bucket_mb and overlap, each a value or a list of them.
void parse_buckets(const SpecReader& r, const YAML::Node& root, SweepSpec& spec) {
  if (root["bucket_mb"]) {
    spec.bucket_mb = r.list<double>(root["bucket_mb"], "bucket_mb", "positive numbers (MiB)");
    for (double mb : spec.bucket_mb)
      if (!(mb > 0)) r.fail(root["bucket_mb"], "bucket_mb", "must be positive");
  }
  if (root["overlap"]) spec.overlap = r.list<bool>(root["overlap"], "overlap", "true or false");
}

}  // namespace

// The keys are read in a fixed order, so that a spec with several mistakes is always told
// of the same one first.
SweepSpec parse_sweep_spec(const std::string& text, const std::string& path) {
  SweepSpec spec;
  spec.path = path;
  spec.text = text;
  const YAML::Node root = load_yaml(text, path);
  SpecReader r(path);
  check_keys(r, root, path);
  parse_grid(r, root, spec);
  parse_schedule(r, root, spec.base);
  parse_precision_and_exec(r, root, spec);
  parse_memory_shifts(r, root, spec);
  if (root["seed"]) spec.base.seed = r.scalar<uint64_t>(root["seed"], "seed", "a non-negative integer");
  parse_design(r, root, spec);
  if (root["memory_check"]) spec.memory_check = r.scalar<bool>(root["memory_check"], "memory_check", "true or false");
  parse_launch_count(r, root, spec);
  parse_model_options(r, root, spec.base);
  parse_buckets(r, root, spec);
  if (root["nccl_profiles"]) parse_nccl_profiles(r, root["nccl_profiles"], spec);
  if (root["overrides"]) parse_overrides(r, root["overrides"], spec);
  return spec;
}

SweepSpec load_sweep_spec(const std::string& path) {
  // A directory opens as an empty stream and would read as an empty spec; say what it is.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    throw SpecError(path + ": cannot open the sweep spec (missing or unreadable)");
  if (status.type() == std::filesystem::file_type::directory)
    throw SpecError(path + ": is a directory, not a sweep spec (give the YAML file)");
  errno = 0;
  std::ifstream in(path);
  if (!in)
    throw SpecError(path + ": cannot open the sweep spec: " +
                    (errno != 0 ? std::strerror(errno) : ec ? ec.message() : "unknown error"));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw SpecError(path + ": cannot read the sweep spec: " + std::strerror(errno));
  return parse_sweep_spec(text.str(), path);
}

static std::vector<int64_t> batch_sizes_for(const SweepSpec& spec, const std::string& model) {
  std::vector<int64_t> sizes = spec.batch_sizes;
  for (const auto& o : spec.overrides)
    if (!o.batch_sizes.empty() && std::find(o.models.begin(), o.models.end(), model) != o.models.end())
      sizes = o.batch_sizes;
  return sizes;
}

static void apply_overrides(const SweepSpec& spec, TrainOptions& options) {
  for (const auto& o : spec.overrides) {
    if (std::find(o.models.begin(), o.models.end(), options.model) == o.models.end()) continue;
    if (o.runs > 0) options.runs = o.runs;
    if (o.warmup >= 0) options.warmup = o.warmup;
    if (o.steps > 0) options.steps = o.steps;
  }
}

namespace {

// One sweep dimension of the spec: the ConfigParams field it varies (its row in
// results/store/config_fields.hpp, marked Sweep::dimension), how many values the spec lists and
// how value i is set on a configuration's options. Batch size, world size and NCCL profile
// are dimensions too but walked apart: a model's override may list its own batch sizes, the
// world sizes alternate direction, and a launch runs one profile.
struct SweepDimension {
  const char* field;
  size_t values;
  std::function<void(TrainOptions&, size_t)> set;
  // Meaningless without communication: world size 1 runs the first value only.
  bool communication_only = false;
};

template <typename T, typename Options>  // Options: TrainOptions or the EngineOptions it extends
SweepDimension dimension(const char* field, const std::vector<T>& values, T Options::*member,
                         bool communication_only = false) {
  return {field, values.size(), [&values, member](TrainOptions& o, size_t i) { o.*member = values[i]; },
          communication_only};
}

// In the order of the nested loops they replace (outermost first): the order of a study.
std::vector<SweepDimension> sweep_dimensions(const SweepSpec& spec) {
  return {dimension("model", spec.models, &TrainOptions::model),
          dimension("scaling", spec.scaling, &TrainOptions::scaling),
          dimension("dtype", spec.dtypes, &TrainOptions::dtype),
          dimension("exec", spec.execs, &TrainOptions::exec),
          dimension("bucket_mb", spec.bucket_mb, &TrainOptions::bucket_mb, true),
          // std::vector<bool> hands out proxies, not references: its own setter.
          {"overlap", spec.overlap.size(), [&spec](TrainOptions& o, size_t i) { o.overlap = spec.overlap[i]; }, true},
          dimension("allreduce_dtype", spec.allreduce_dtypes, &TrainOptions::allreduce_dtype, true)};
}

// The next combination of value indices, the last dimension fastest; false after the last.
bool advance(std::vector<size_t>& index, const std::vector<SweepDimension>& dimensions) {
  for (size_t d = dimensions.size(); d-- > 0;) {
    if (++index[d] < dimensions[d].values) return true;
    index[d] = 0;
  }
  return false;
}

}  // namespace

std::vector<std::string> swept_fields() {
  const SweepSpec spec;
  std::vector<std::string> fields;
  for (const auto& d : sweep_dimensions(spec)) fields.push_back(d.field);
  for (const char* walked_apart : {"batch_per_rank", "world_size", "nccl_profile"}) fields.push_back(walked_apart);
  return fields;
}

std::vector<SweepConfig> expand_sweep(const SweepSpec& spec, const std::string& nccl_profile) {
  std::vector<SweepConfig> configs;
  const std::vector<SweepDimension> dimensions = sweep_dimensions(spec);
  for (const auto& d : dimensions)
    if (d.values == 0) return configs;
  std::vector<int> worlds = spec.world_sizes;
  std::sort(worlds.begin(), worlds.end());
  std::vector<size_t> index(dimensions.size(), 0);
  bool ascending = true;
  do {
    TrainOptions options = spec.base;
    bool first_communication_values = true;
    for (size_t d = 0; d < dimensions.size(); ++d) {
      dimensions[d].set(options, index[d]);
      if (dimensions[d].communication_only && index[d] != 0) first_communication_values = false;
    }
    if (!is_torchscript_model(options.model)) options.input_shape = options.input = "";  // built-in: their own inputs
    const auto own = spec.model_inputs.find(options.model);
    if (own != spec.model_inputs.end()) {
      if (!own->second.input_shape.empty() || !own->second.input.empty()) {
        options.input_shape = own->second.input_shape;
        options.input = own->second.input;
      }
      if (own->second.classes > 0) options.classes = own->second.classes;
    }
    for (int64_t batch : batch_sizes_for(spec, options.model)) {
      std::vector<int> order = worlds;
      if (!ascending) std::reverse(order.begin(), order.end());
      ascending = !ascending;
      for (int world : order) {
        // Overlap, buckets and the allreduce's precision mean nothing without communication:
        // one world-1 config per (model, scaling, dtype, exec, batch), measured with the
        // first bucket/overlap/allreduce values.
        if (world == 1 && !first_communication_values) continue;
        SweepConfig c;
        c.options = options;
        set_fixed_batch(c.options, batch);
        c.options.world_size = world;
        apply_overrides(spec, c.options);
        c.nccl_profile = nccl_profile;
        configs.push_back(c);
      }
    }
  } while (advance(index, dimensions));
  return configs;
}

int launches_for(const SweepSpec& spec, bool on_cuda) {
  if (spec.launches > 0) return spec.launches;
  return on_cuda ? kDefaultLaunchesGpu : kDefaultLaunchesCpu;
}

int min_launches_for(const SweepSpec& spec, int launches) {
  if (spec.target_half_width <= 0) return 0;
  if (spec.min_launches > 0) return spec.min_launches;
  return std::min(kDefaultMinLaunches, launches);
}

int process_shift_of_launch(const SweepSpec& spec, int launch) {
  if (spec.process_shifts_mib.empty()) return 0;
  return spec.process_shifts_mib[static_cast<size_t>(launch) % spec.process_shifts_mib.size()];
}

}  // namespace ddpscale
