#include "comm/nccl_profile.hpp"

#include <cstdlib>
#include <sstream>

extern char** environ;

namespace ddpscale {

void validate_nccl_profile(const NcclProfile& profile) {
  for (const auto& [key, value] : profile.variables) {
    if (key.rfind("NCCL_", 0) != 0)
      throw NcclProfileError("NCCL profile '" + profile.name + "': key '" + key +
                             "' is not an NCCL variable (only NCCL_* keys are accepted)");
    if (value.empty())
      throw NcclProfileError("NCCL profile '" + profile.name + "': " + key + " has an empty value");
    if (key == "NCCL_NVLS_ENABLE" && value != "0")
      throw NcclProfileError("NCCL profile '" + profile.name +
                             "': NCCL_NVLS_ENABLE must stay 0 (NVLink multicast is not allowed on these hosts)");
  }
}

NcclProfile parse_nccl_profile(const std::string& name, const std::string& assignments) {
  NcclProfile profile;
  profile.name = name;
  std::string normalised = assignments;
  for (char& c : normalised)
    if (c == ',') c = ' ';
  std::istringstream words(normalised);
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      throw NcclProfileError("NCCL profile '" + name + "': '" + word + "' is not KEY=VALUE");
    profile.variables[word.substr(0, eq)] = word.substr(eq + 1);
  }
  validate_nccl_profile(profile);
  return profile;
}

void apply_nccl_profile(const NcclProfile& profile) {
  validate_nccl_profile(profile);
  for (const auto& [key, value] : profile.variables) setenv(key.c_str(), value.c_str(), 1);
  enforce_no_nvls();
}

void enforce_no_nvls() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
}

std::map<std::string, std::string> nccl_variables_in_effect() {
  std::map<std::string, std::string> in_effect;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string assignment = *entry;
    if (assignment.rfind("NCCL_", 0) != 0) continue;
    const auto eq = assignment.find('=');
    if (eq == std::string::npos) continue;
    in_effect[assignment.substr(0, eq)] = assignment.substr(eq + 1);
  }
  return in_effect;
}

}  // namespace ddpscale
