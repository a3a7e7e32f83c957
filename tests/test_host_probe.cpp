// The host instruments' parsers (devices/host_probe.hpp) on lines as Linux writes them
// (proc(5)), and the probes on this machine.
#include "devices/host_probe.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace ddpscale {
namespace {

TEST(HostProbe, LastCoreOfAStatLineCountsFieldsAfterTheCommandName) {
  // proc(5): field 39 is "processor". The command name may hold blanks and ')'.
  std::string line = "1234 (ddp scale) worker) S";
  for (int field = 4; field <= 38; ++field) line += " " + std::to_string(field * 10);
  line += " 7 0 0 0";  // field 39 = 7, then rt_priority, policy, delayacct
  EXPECT_EQ(last_core_of_stat_line(line), 7);
  EXPECT_EQ(last_core_of_stat_line("1234 (short) S 1 2 3"), -1);
  EXPECT_EQ(last_core_of_stat_line("no parenthesis"), -1);
}

TEST(HostProbe, StealIsTheEighthFieldOfTheCpuLine) {
  EXPECT_EQ(steal_ticks_of_proc_stat("cpu  4705 356 584 3699 23 23 0 61 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"), 61);
  EXPECT_TRUE(std::isnan(steal_ticks_of_proc_stat("cpu  1 2 3 4")));
  EXPECT_TRUE(std::isnan(steal_ticks_of_proc_stat("intr 1 2 3")));
}

TEST(HostProbe, ReadsThisProcess) {
  const auto cores = cores_of_this_process();
  ASSERT_FALSE(cores.empty());
  for (int core : cores) EXPECT_GE(core, 0);
  const HostCounters before = read_host_counters();
  const HostCounters after = read_host_counters();
  EXPECT_GE(after.voluntary_switches, before.voluntary_switches);
  EXPECT_GE(after.involuntary_switches, before.involuntary_switches);
}

}  // namespace
}  // namespace ddpscale
