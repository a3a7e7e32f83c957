// How a study of several launches is split and started (trainer/study/launch_driver.hpp):
// the runs each launch takes, the launcher's command line, the environment a nested launch
// gets, and the spec key.
#include "trainer/study/launch_driver.hpp"
#include "trainer/study/sweep_spec.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

TEST(LaunchShare, SplitsRunsEvenlyEarlierLaunchesTakingTheRest) {
  // 10 runs over 3 launches: 4, 3, 3, contiguous and covering every run once.
  const LaunchShare a = launch_share(10, 0, 3), b = launch_share(10, 1, 3), c = launch_share(10, 2, 3);
  EXPECT_EQ(a.first, 0);
  EXPECT_EQ(a.end, 4);
  EXPECT_EQ(b.first, 4);
  EXPECT_EQ(b.end, 7);
  EXPECT_EQ(c.first, 7);
  EXPECT_EQ(c.end, 10);
  const LaunchShare only = launch_share(5, 0, 1);
  EXPECT_EQ(only.first, 0);
  EXPECT_EQ(only.end, 5);
}

// As launch_command adds it for an MPI launcher run as root (CI runs as root).
std::vector<std::string> as_this_user(std::vector<std::string> command) {
  if (geteuid() == 0) command.insert(command.begin() + 1, "--allow-run-as-root");
  return command;
}

TEST(LaunchCommand, SameShapeOnOneHost) {
  const auto command = launch_command("mpirun --bind-to none", {"node1", "node1"}, {"/bin/ddpscale", "sweep", "s.yaml"});
  EXPECT_EQ(command, as_this_user({"mpirun", "--bind-to", "none", "-np", "2", "/bin/ddpscale", "sweep", "s.yaml"}));
}

TEST(LaunchCommand, NamesTheHostsInRankOrderWhenTheRanksSpanSeveral) {
  const auto command = launch_command("mpiexec", {"a", "a", "b", "b"}, {"x"});
  EXPECT_EQ(command, as_this_user({"mpiexec", "-np", "4", "--host", "a:2,b:2", "x"}));
}

TEST(LaunchEnvironment, DropsTheRunningJobsWiringKeepsUserSettings) {
  const std::vector<std::string> given = {"PATH=/usr/bin",
                                          "OMPI_COMM_WORLD_SIZE=2",
                                          "OMPI_COMM_WORLD_RANK=0",
                                          "OMPI_MCA_orte_hnp_uri=1234.0;tcp://10.0.0.1:5000",
                                          "OMPI_MCA_ess=pmi",
                                          "PMIX_RANK=0",
                                          "OMPI_MCA_btl=self,vader",
                                          "OMPI_ALLOW_RUN_AS_ROOT=1",
                                          "NCCL_NVLS_ENABLE=0",
                                          "SLURM_JOB_ID=7",
                                          "SLURM_STEP_ID=0",
                                          "SLURM_PROCID=1"};
  const std::vector<std::string> expected = {"PATH=/usr/bin", "OMPI_MCA_btl=self,vader", "OMPI_ALLOW_RUN_AS_ROOT=1",
                                             "NCCL_NVLS_ENABLE=0", "SLURM_JOB_ID=7"};
  EXPECT_EQ(launch_environment(given), expected);
}

// run_launch with /bin/sh standing in for the launcher: what it returns and what it passes on.
TEST(RunLaunch, GivesTheChildExactlyTheGivenEnvironment) {
  // GIVEN arrives; HOME, set in this process (or not), is not passed on, so it is unset there.
  const std::vector<std::string> script = {"sh", "-c", "test \"$GIVEN\" = 'a=b c' && test -z \"${HOME+set}\""};
  EXPECT_EQ(run_launch(script, {"PATH=/usr/bin:/bin", "GIVEN=a=b c"}), 0);
  EXPECT_EQ(run_launch(script, {"PATH=/usr/bin:/bin", "GIVEN=other"}), 1);
}

TEST(RunLaunch, ReturnsTheExitStatusOr128PlusTheSignal) {
  EXPECT_EQ(run_launch({"sh", "-c", "exit 3"}, {}), 3);
  // SIGKILL: the one signal a test's parent cannot have left ignored for the shell.
  EXPECT_EQ(run_launch({"sh", "-c", "kill -KILL $$"}, {}), 128 + 9);
  EXPECT_EQ(run_launch({"/bin/sh", "-c", "exit 4"}, {}), 4);  // a path is run as it is
}

TEST(RunLaunch, AProgramThatCannotStartIs127) {
  EXPECT_EQ(run_launch({"ddpscale-no-such-launcher"}, {}), 127);
  EXPECT_EQ(run_launch({"/nonexistent/mpirun", "-np", "2"}, {}), 127);
  EXPECT_THROW(run_launch({}, {}), std::invalid_argument);
}

TEST(LaunchesKey, DefaultsByDeviceAndTheSpecsValueWins) {
  SweepSpec spec = parse_sweep_spec("models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\n", "t.yaml");
  EXPECT_EQ(launches_for(spec, false), kDefaultLaunchesCpu);
  EXPECT_EQ(launches_for(spec, true), kDefaultLaunchesGpu);
  spec = parse_sweep_spec("models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\nlaunches: 2\n", "t.yaml");
  EXPECT_EQ(launches_for(spec, false), 2);
  EXPECT_EQ(launches_for(spec, true), 2);
  EXPECT_THROW(parse_sweep_spec("models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1]\nlaunches: 0\n", "t.yaml"),
               SpecError);
}

}  // namespace
}  // namespace ddpscale
