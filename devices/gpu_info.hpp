// What `ddpscale info` and the study metadata say about the GPUs: names, memory, driver,
// and how each pair is linked. Empty on a build without CUDA.
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

struct GpuDevice {
  int index = 0;
  std::string name;
  size_t memory_bytes = 0;
  std::string pci_bus_id;
};

struct GpuLink {
  int a = 0, b = 0;
  bool peer_access = false;   // cudaDeviceCanAccessPeer
  int nvlinks = 0;            // active NVLink links between the two (NVML)
  std::string path;           // "NVLink", or the PCIe path NVML reports ("same PCIe switch", "across CPU sockets", ...)
};

struct GpuInventory {
  bool cuda_built = false;
  std::string driver_version;
  std::string cuda_runtime_version;
  std::vector<GpuDevice> devices;
  std::vector<GpuLink> links;
  std::string error;  // why the inventory is empty, if it is
};

GpuInventory query_gpu_inventory();
int visible_gpu_count();  // 0 without CUDA or without devices
std::string describe_links(const GpuInventory& inventory);  // one line: "GPU0-GPU1 NVLink x18, P2P yes"

}  // namespace ddpscale
