#include "comm/nccl_profile.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ddpscale {
namespace {

TEST(NcclProfile, ParsesAssignments) {
  const auto profile = parse_nccl_profile("p", "NCCL_ALGO=Tree, NCCL_PROTO=Simple  NCCL_P2P_DISABLE=1");
  ASSERT_EQ(profile.variables.size(), 3u);
  EXPECT_EQ(profile.variables.at("NCCL_ALGO"), "Tree");
  EXPECT_EQ(profile.variables.at("NCCL_P2P_DISABLE"), "1");
}

TEST(NcclProfile, RejectsNonNcclKeyNamingIt) {
  try {
    parse_nccl_profile("bad", "NCCL_ALGO=Ring CUDA_VISIBLE_DEVICES=1");
    FAIL() << "a non-NCCL key was accepted";
  } catch (const NcclProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA_VISIBLE_DEVICES"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'bad'"), std::string::npos) << e.what();
  }
}

TEST(NcclProfile, RejectsMalformedAndEmpty) {
  EXPECT_THROW(parse_nccl_profile("p", "NCCL_ALGO"), NcclProfileError);
  EXPECT_THROW(parse_nccl_profile("p", "=Tree"), NcclProfileError);
  EXPECT_THROW(parse_nccl_profile("p", "NCCL_ALGO="), NcclProfileError);
}

TEST(NcclProfile, NeverEnablesNvlinkMulticast) {
  EXPECT_THROW(parse_nccl_profile("p", "NCCL_NVLS_ENABLE=1"), NcclProfileError);
  EXPECT_NO_THROW(parse_nccl_profile("p", "NCCL_NVLS_ENABLE=0"));
}

TEST(NcclProfile, ApplySetsVariablesAndKeepsNvlsOff) {
  setenv("NCCL_NVLS_ENABLE", "1", 1);  // as if the user's shell had it on
  apply_nccl_profile(parse_nccl_profile("p", "NCCL_MAX_NCHANNELS=8"));
  const auto in_effect = nccl_variables_in_effect();
  EXPECT_EQ(in_effect.at("NCCL_MAX_NCHANNELS"), "8");
  EXPECT_EQ(in_effect.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_STREQ(std::getenv("TORCH_SYMM_MEM_DISABLE_MULTICAST"), "1");
  EXPECT_STREQ(std::getenv("NVSHMEM_DISABLE_NVLS"), "1");
}

// The seed study's PCIe-like profile (tree, simple, no P2P), written as a spec or
// --nccl-env gives it: space-separated assignments.
TEST(NcclProfile, SeedProfileIsTheSeedsSettings) {
  const auto seed = parse_nccl_profile("seed-pcie", "NCCL_ALGO=Tree NCCL_PROTO=Simple NCCL_P2P_DISABLE=1 "
                                                    "NCCL_BUFFSIZE=33554432 NCCL_NTHREADS=64 NCCL_MAX_NCHANNELS=8 "
                                                    "NCCL_MIN_NCHANNELS=4");
  EXPECT_EQ(seed.variables.at("NCCL_ALGO"), "Tree");
  EXPECT_EQ(seed.variables.at("NCCL_PROTO"), "Simple");
  EXPECT_EQ(seed.variables.at("NCCL_P2P_DISABLE"), "1");
  EXPECT_EQ(seed.variables.at("NCCL_BUFFSIZE"), "33554432");
}

}  // namespace
}  // namespace ddpscale
