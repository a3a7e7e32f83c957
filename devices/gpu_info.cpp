#include "devices/gpu_info.hpp"

#ifdef DDPSCALE_CUDA
#include <cuda_runtime.h>
#include <nvml.h>
#endif

namespace ddpscale {

#ifdef DDPSCALE_CUDA
namespace {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

const char* pcie_path_name(nvmlGpuTopologyLevel_t level) {
  switch (level) {
    case NVML_TOPOLOGY_INTERNAL: return "same board";
    case NVML_TOPOLOGY_SINGLE: return "one PCIe switch";
    case NVML_TOPOLOGY_MULTIPLE: return "several PCIe switches";
    case NVML_TOPOLOGY_HOSTBRIDGE: return "PCIe host bridge";
    case NVML_TOPOLOGY_NODE: return "PCIe across host bridges in one NUMA node";
    case NVML_TOPOLOGY_SYSTEM: return "PCIe across CPU sockets (SMP)";
  }
  return "unknown";
}

// Active NVLinks of `from` whose far end is `to`, matched by PCI domain/bus/device
// (the bus-id strings come in two widths depending on the NVML call).
int count_nvlinks(nvmlDevice_t from, const nvmlPciInfo_t& to) {
  int links = 0;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t active;
    if (nvmlDeviceGetNvLinkState(from, link, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED) continue;
    nvmlPciInfo_t remote;
    if (nvmlDeviceGetNvLinkRemotePciInfo_v2(from, link, &remote) != NVML_SUCCESS) continue;
    if (remote.domain == to.domain && remote.bus == to.bus && remote.device == to.device) ++links;
  }
  return links;
}

bool nvlink_p2p_ok(nvmlDevice_t a, nvmlDevice_t b) {
  nvmlGpuP2PStatus_t status;
  return nvmlDeviceGetP2PStatus(a, b, NVML_P2P_CAPS_INDEX_NVLINK, &status) == NVML_SUCCESS &&
         status == NVML_P2P_STATUS_OK;
}

}  // namespace

int visible_gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

GpuInventory query_gpu_inventory() {
  GpuInventory inventory;
  inventory.cuda_built = true;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) inventory.cuda_runtime_version = cuda_version_text(runtime);
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    inventory.error = cudaGetErrorString(err);
    return inventory;
  }
  const bool nvml_ok = nvmlInit_v2() == NVML_SUCCESS;
  if (nvml_ok) {
    char driver[96] = {0};
    if (nvmlSystemGetDriverVersion(driver, sizeof(driver)) == NVML_SUCCESS) inventory.driver_version = driver;
  }
  std::vector<nvmlDevice_t> handles(static_cast<size_t>(count), nullptr);
  std::vector<nvmlPciInfo_t> pci(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    GpuDevice device;
    device.index = i;
    device.name = prop.name;
    device.memory_bytes = prop.totalGlobalMem;
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof(bus), i);
    device.pci_bus_id = bus;
    inventory.devices.push_back(device);
    if (nvml_ok && nvmlDeviceGetHandleByPciBusId_v2(bus, &handles[static_cast<size_t>(i)]) == NVML_SUCCESS)
      nvmlDeviceGetPciInfo_v3(handles[static_cast<size_t>(i)], &pci[static_cast<size_t>(i)]);
  }
  for (int a = 0; a < count; ++a) {
    for (int b = a + 1; b < count; ++b) {
      GpuLink link;
      link.a = a;
      link.b = b;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, a, b) == cudaSuccess) link.peer_access = can != 0;
      nvmlDevice_t ha = handles[static_cast<size_t>(a)], hb = handles[static_cast<size_t>(b)];
      if (ha && hb) {
        link.nvlinks = count_nvlinks(ha, pci[static_cast<size_t>(b)]);
        nvmlGpuTopologyLevel_t level;
        if (link.nvlinks > 0 || nvlink_p2p_ok(ha, hb))
          link.path = "NVLink";
        else if (nvmlDeviceGetTopologyCommonAncestor(ha, hb, &level) == NVML_SUCCESS)
          link.path = pcie_path_name(level);
      }
      inventory.links.push_back(link);
    }
  }
  if (nvml_ok) nvmlShutdown();
  return inventory;
}

#else

int visible_gpu_count() { return 0; }

GpuInventory query_gpu_inventory() {
  GpuInventory inventory;
  inventory.error = "built without CUDA (CPU-only LibTorch): ranks use the MPI backend";
  return inventory;
}

#endif

std::string describe_links(const GpuInventory& inventory) {
  if (inventory.links.empty()) return inventory.devices.size() <= 1 ? "single device" : "unknown";
  std::string text;
  for (const auto& link : inventory.links) {
    if (!text.empty()) text += "; ";
    text += "GPU" + std::to_string(link.a) + "-GPU" + std::to_string(link.b) + " " +
            (link.path.empty() ? "unknown path" : link.path);
    if (link.nvlinks > 0) text += " x" + std::to_string(link.nvlinks);
    text += std::string(", P2P ") + (link.peer_access ? "yes" : "no");
  }
  return text;
}

}  // namespace ddpscale
