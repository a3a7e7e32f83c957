#include "trainer/study/fault_injection.hpp"

#include <cstdio>
#include <cstdlib>

namespace ddpscale {

int fault_injection_rank(const char* variable, const char* effect) {
  const char* value = std::getenv(variable);
  if (value == nullptr || *value == '\0') return -1;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0) {
    std::fprintf(stderr, "ddpscale: %s='%s' is not a rank; ignored\n", variable, value);
    return -1;
  }
  std::fprintf(stderr, "ddpscale: fault injection: %s=%ld %s\n", variable, parsed, effect);
  return static_cast<int>(parsed);
}

}  // namespace ddpscale
