// NCCL environment profiles: named sets of NCCL_* variables applied before an NCCL
// communicator is created (NCCL reads most of them once, at init). Plain code, no NCCL
// header: profiles are validated and recorded on CPU-only builds too.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpscale {

struct NcclProfile {
  std::string name = "default";
  std::map<std::string, std::string> variables;  // NCCL_* only
};

class NcclProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws NcclProfileError for a key that does not start with NCCL_, an empty value, or an
// attempt to enable NVLink multicast (NCCL_NVLS_ENABLE other than 0).
void validate_nccl_profile(const NcclProfile& profile);

// Parses "NCCL_ALGO=Tree,NCCL_PROTO=Simple" (comma or whitespace separated).
NcclProfile parse_nccl_profile(const std::string& name, const std::string& assignments);

// Validates, then sets the variables in this process's environment (overwriting).
void apply_nccl_profile(const NcclProfile& profile);

// Forces NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1:
// NVLink multicast must stay off on the shared GPU hosts.
void enforce_no_nvls();

// Every NCCL_* variable in this process's environment now, sorted by name.
std::map<std::string, std::string> nccl_variables_in_effect();

}  // namespace ddpscale
