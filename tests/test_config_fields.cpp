// The field tables of config_fields.hpp against the structs they describe. Every member of
// ConfigParams and StudyMetadata is set to a value unlike its default through a structured
// binding, which must name every member: a member added to a struct fails to compile here
// until the test gives it a value, and then fails the round trip until its table has a row.
// A row left out of a table loses its member on the way through the store (it reads back as
// the default) and, for ConfigParams, makes --resume blind to it.
#include "results/store/config_fields.hpp"
#include "results/store/run_store.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

// ---- helpers over a struct's members, as a tuple of references --------------------------------

// Indices of the members in which two tuples differ.
template <typename TupleA, typename TupleB, size_t... I>
std::vector<size_t> differing(const TupleA& a, const TupleB& b, std::index_sequence<I...>) {
  std::vector<size_t> out;
  ((std::get<I>(a) == std::get<I>(b) ? void() : out.push_back(I)), ...);
  return out;
}
template <typename TupleA, typename TupleB>
std::vector<size_t> differing(const TupleA& a, const TupleB& b) {
  return differing(a, b, std::make_index_sequence<std::tuple_size_v<TupleA>>());
}

// Member `which` of `source` copied into `target`.
template <typename Tuple, typename Source, size_t... I>
void copy_one(size_t which, Tuple target, const Source& source, std::index_sequence<I...>) {
  ((I == which ? void(std::get<I>(target) = std::get<I>(source)) : void()), ...);
}

std::string names(const std::vector<size_t>& indices, const std::vector<std::string>& all) {
  std::string text;
  for (size_t i : indices) text += (text.empty() ? "" : ", ") + all.at(i);
  return text.empty() ? "none" : text;
}

// ---- ConfigParams ---------------------------------------------------------------------------

// The members in declaration order; kParamNames follows the same order.
template <typename Params>
auto param_members(Params& p) {
  auto& [model, parameters, batch_per_rank, global_batch, world_size, scaling, optimizer, learning_rate, dtype,
         bucket_mb, overlap, exec, allreduce_dtype, nccl_profile, nccl_variables, warmup_steps, measured_steps, runs,
         seed, device, backend, model_sha256, model_input, broadcast_buffers, engine] = p;
  return std::tie(model, parameters, batch_per_rank, global_batch, world_size, scaling, optimizer, learning_rate,
                  dtype, bucket_mb, overlap, exec, allreduce_dtype, nccl_profile, nccl_variables, warmup_steps,
                  measured_steps, runs, seed, device, backend, model_sha256, model_input, broadcast_buffers,
                  engine);
}
const std::vector<std::string> kParamNames = {
    "model",           "parameters",   "batch_per_rank", "global_batch", "world_size",     "scaling", "optimizer",
    "learning_rate",   "dtype",        "bucket_mb",      "overlap",      "exec",           "allreduce_dtype",
    "nccl_profile",    "nccl_variables", "warmup_steps", "measured_steps", "runs",         "seed",    "device",
    "backend",         "model_sha256", "model_input", "broadcast_buffers", "engine"};

ConfigParams params_unlike_defaults() {
  ConfigParams p;
  auto [model, parameters, batch_per_rank, global_batch, world_size, scaling, optimizer, learning_rate, dtype,
        bucket_mb, overlap, exec, allreduce_dtype, nccl_profile, nccl_variables, warmup_steps, measured_steps, runs,
        seed, device, backend, model_sha256, model_input, broadcast_buffers, engine] = param_members(p);
  model = "transformer@1M";
  parameters = 1000123;
  batch_per_rank = 48;
  global_batch = 96;
  world_size = 2;
  scaling = "strong";
  optimizer = "sgd";
  learning_rate = 0.25;
  dtype = "bfloat16";
  bucket_mb = 12.5;
  overlap = false;
  exec = "graph";
  allreduce_dtype = "bfloat16";
  nccl_profile = "nvls-off";
  nccl_variables = {{"NCCL_NVLS_ENABLE", "0"}};
  warmup_steps = 3;
  measured_steps = 7;
  runs = 11;
  seed = 1ull << 40;
  device = "cuda";
  backend = "nccl";
  model_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  model_input = "3x224x224";
  broadcast_buffers = false;
  engine = "pytorch-ddp";
  return p;
}

// ---- StudyMetadata --------------------------------------------------------------------------

template <typename Metadata>
auto metadata_members(Metadata& m) {
  auto& [tool_version, git_commit, command_line, spec_text, created_utc, hostnames, gpu_names, gpu_driver,
         cuda_version, nccl_version, mpi_version, torch_version, hdf5_version, link_topology, nccl_variables] = m;
  return std::tie(tool_version, git_commit, command_line, spec_text, created_utc, hostnames, gpu_names, gpu_driver,
                  cuda_version, nccl_version, mpi_version, torch_version, hdf5_version, link_topology, nccl_variables);
}
const std::vector<std::string> kMetadataNames = {
    "tool_version", "git_commit",   "command_line", "spec_text",     "created_utc",  "hostnames",     "gpu_names",
    "gpu_driver",   "cuda_version", "nccl_version", "mpi_version",   "torch_version", "hdf5_version", "link_topology",
    "nccl_variables"};

StudyMetadata metadata_unlike_defaults() {
  StudyMetadata m;
  auto [tool_version, git_commit, command_line, spec_text, created_utc, hostnames, gpu_names, gpu_driver,
        cuda_version, nccl_version, mpi_version, torch_version, hdf5_version, link_topology, nccl_variables] =
      metadata_members(m);
  tool_version = "9.9.9";
  git_commit = "0123abc";
  command_line = "ddpscale sweep s.yaml --out o";
  spec_text = "models: [mlp-small]\n";
  created_utc = "2026-11-23T00:00:00Z";
  hostnames = {"a", "b"};
  gpu_names = {"NVIDIA H200"};
  gpu_driver = "550.54";
  cuda_version = "12.4";
  nccl_version = "2.21.5";
  mpi_version = "Open MPI 4.1.4";
  torch_version = "2.3.0";
  hdf5_version = "1.10.8";
  link_topology = "GPU0-GPU1: NVLink";
  nccl_variables = {{"NCCL_ALGO", "Ring"}};
  return m;
}

// ---- the tests --------------------------------------------------------------------------------

class ConfigFields : public ::testing::Test {
 protected:
  ConfigParams params_through_the_store(const ConfigParams& params) const {
    ConfigRecord record;
    record.id = "fields";
    record.params = params;
    write_config(dir_.string(), record);
    return read_config((dir_ / "fields.h5").string()).params;
  }

  TempDir temp_;
  const fs::path dir_ = temp_.path();
};

// Otherwise a member left at its default would pass the round trip without a row.
TEST_F(ConfigFields, TheTestValuesDifferFromTheDefaultsInEveryMember) {
  ConfigParams params;
  const ConfigParams unlike = params_unlike_defaults();
  EXPECT_EQ(differing(param_members(params), param_members(unlike)).size(), kParamNames.size());
  StudyMetadata metadata;
  const StudyMetadata unlike_metadata = metadata_unlike_defaults();
  EXPECT_EQ(differing(metadata_members(metadata), metadata_members(unlike_metadata)).size(), kMetadataNames.size());
}

TEST_F(ConfigFields, EveryConfigParamsMemberHasARowAndSurvivesTheStore) {
  const ConfigParams written = params_unlike_defaults();
  const ConfigParams read = params_through_the_store(written);
  EXPECT_EQ(names(differing(param_members(written), param_members(read)), kParamNames), "none")
      << "these ConfigParams members came back changed: give each a row in kConfigFields (config_fields.hpp)";
  EXPECT_EQ(std::size(kConfigFields), kParamNames.size()) << "kConfigFields must have one row per ConfigParams member";
}

TEST_F(ConfigFields, EveryStudyMetadataMemberHasARowAndSurvivesTheStore) {
  const StudyMetadata written = metadata_unlike_defaults();
  write_study(dir_.string(), written);
  const StudyMetadata read = read_study(dir_.string());
  EXPECT_EQ(names(differing(metadata_members(written), metadata_members(read)), kMetadataNames), "none")
      << "these StudyMetadata members came back changed: give each a row in kMetadataFields (config_fields.hpp)";
  EXPECT_EQ(std::size(kMetadataFields), kMetadataNames.size()) << "kMetadataFields must have one row per member";
}

// --resume reuses a file only when every setting matches: a change to any one member but
// nccl_variables (the environment the trainer found, not a setting) is another experiment.
TEST_F(ConfigFields, ResumeTellsApartAChangeToAnyMemberButTheNcclEnvironment) {
  const ConfigParams base, other = params_unlike_defaults();
  std::vector<size_t> not_matched;
  for (size_t member = 0; member < kParamNames.size(); ++member) {
    ConfigParams changed = base;
    copy_one(member, param_members(changed), param_members(other), std::make_index_sequence<25>());
    if (same_params(base, changed)) not_matched.push_back(member);
  }
  EXPECT_EQ(names(not_matched, kParamNames), "nccl_variables");
}

// What expand_sweep (trainer/) may take from the table: the dimensions a sweep spec lists.
TEST_F(ConfigFields, SweepDimensionsAreTheOnesASpecLists) {
  std::vector<std::string> dimensions;
  for (const ConfigField& field : kConfigFields)
    if (field.sweep == Sweep::dimension) dimensions.push_back(field.attribute);
  EXPECT_EQ(dimensions, (std::vector<std::string>{"model", "batch_per_rank", "world_size", "scaling", "dtype",
                                                  "bucket_mb", "overlap", "exec", "allreduce_dtype", "nccl_profile"}));
}

}  // namespace
}  // namespace ddpscale
