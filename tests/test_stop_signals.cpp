// A stopped sweep names the signal it received by its own name (study/stop_signals.hpp).
#include "trainer/study/stop_signals.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace ddpscale {
namespace {

TEST(StopSignals, NamedByTheirOwnNames) {
  EXPECT_STREQ(stop_signal_name(SIGINT), "SIGINT");
  EXPECT_STREQ(stop_signal_name(SIGTERM), "SIGTERM");
  EXPECT_STREQ(stop_signal_name(SIGHUP), "SIGHUP");
  EXPECT_STREQ(stop_signal_name(0), "a signal");
}

TEST(StopSignals, SigtermSaysThatMpirunPassesCtrlCOnAsIt) {
  EXPECT_STREQ(stop_signal_origin(SIGINT), " (Ctrl-C)");
  EXPECT_NE(std::string(stop_signal_origin(SIGTERM)).find("mpirun passes a Ctrl-C"), std::string::npos);
  EXPECT_STREQ(stop_signal_origin(SIGHUP), "");
}

}  // namespace
}  // namespace ddpscale
