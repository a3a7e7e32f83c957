#include "trainer/process/system_report.hpp"

#include "comm/mpi_context.hpp"
#include "comm/nccl_profile.hpp"
#include "devices/gpu_info.hpp"
#include "git_commit.hpp"  // generated at build time: DDPSCALE_GIT_COMMIT
#include "results/store/hdf5_library.hpp"
#include "results/store/text_io.hpp"

#include <torch/version.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <ctime>
#include <thread>
#ifdef DDPSCALE_CUDA
#include "comm/nccl_communicator.hpp"
#endif

namespace ddpscale {

std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

std::string cuda_version() {
  const auto inventory = query_gpu_inventory();
  return inventory.cuda_built ? inventory.cuda_runtime_version : "none";
}

std::string nccl_version() {
#ifdef DDPSCALE_CUDA
  return NcclCommunicator::loaded_version();
#else
  return "none";
#endif
}

std::string build_version() { return DDPSCALE_VERSION; }

std::string build_git_commit() { return DDPSCALE_GIT_COMMIT; }

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string system_report_json(const MpiContext& mpi) {
  const auto inventory = query_gpu_inventory();
  nlohmann::ordered_json json;
  json["tool"] = std::string("ddpscale ") + DDPSCALE_VERSION;
  json["git_commit"] = DDPSCALE_GIT_COMMIT;
  json["date_utc"] = utc_now_iso8601();
  json["ranks"] = {{"world_size", mpi.size()}, {"local_rank_source", mpi.local_rank_source()}, {"hosts", mpi.hostnames()}};
  json["cpu_count"] = static_cast<int64_t>(std::thread::hardware_concurrency());
  json["versions"] = {{"libtorch", torch_version()}, {"cuda", cuda_version()}, {"nccl", nccl_version()},
                      {"mpi", mpi.library_version()}, {"hdf5", hdf5_library_version()}};
  nlohmann::ordered_json& gpus = json["gpus"];
  gpus["cuda_build"] = inventory.cuda_built;
  gpus["driver"] = inventory.driver_version;
  if (!inventory.error.empty()) gpus["note"] = inventory.error;
  gpus["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : inventory.devices)
    gpus["devices"].push_back({{"index", d.index}, {"name", d.name},
                               {"memory_bytes", static_cast<int64_t>(d.memory_bytes)}, {"pci_bus_id", d.pci_bus_id}});
  gpus["links"] = nlohmann::ordered_json::array();
  for (const auto& l : inventory.links) {
    nlohmann::ordered_json link = {{"a", l.a}, {"b", l.b}, {"path", l.path}};
    // NVML cannot always match NVLink ends (e.g. in VMs with remapped PCI ids): no count then.
    if (l.nvlinks > 0) link["nvlinks"] = l.nvlinks;
    link["peer_access"] = l.peer_access;
    gpus["links"].push_back(std::move(link));
  }
  json["nccl_variables"] = nlohmann::ordered_json::object();
  for (const auto& [key, value] : nccl_variables_in_effect()) json["nccl_variables"][key] = value;
  return json_text(json);
}

StudyMetadata collect_study_metadata(const MpiContext& mpi, const std::string& command_line) {
  const auto inventory = query_gpu_inventory();
  StudyMetadata meta;
  meta.tool_version = build_version();
  meta.git_commit = DDPSCALE_GIT_COMMIT;
  meta.command_line = command_line;
  meta.created_utc = utc_now_iso8601();
  meta.hostnames = mpi.hostnames();
  for (const auto& d : inventory.devices) meta.gpu_names.push_back(d.name);
  meta.gpu_driver = inventory.driver_version;
  meta.cuda_version = inventory.cuda_built ? inventory.cuda_runtime_version : "none";
  meta.nccl_version = nccl_version();
  meta.mpi_version = mpi.library_version();
  meta.torch_version = torch_version();
  meta.hdf5_version = hdf5_library_version();
  meta.link_topology = describe_links(inventory);
  meta.nccl_variables = nccl_variables_in_effect();
  return meta;
}

}  // namespace ddpscale
