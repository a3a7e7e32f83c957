// Rank 0's progress lines of a sweep launch, and the clock format they and the --dry-run
// estimate print times in.
#pragma once
#include "trainer/process/heartbeat.hpp"
#include "trainer/study/sweep_eta.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace ddpscale {

// "1:02:03": hours, minutes and seconds.
std::string clock_text(double seconds);

// Rank 0's progress lines: one when a configuration is stored (and, on a terminal, one line
// redrawn after every run) and, between those, one at least every kHeartbeat
// (heartbeat_interval) naming what is running, so a long configuration or a launch starting
// up is never silence. The eta is
// SweepEta's, from the run times measured so far (docs/methodology.md, "Progress and its
// estimate"); "?" until a configuration has finished.
class SweepProgress {
 public:
  static constexpr std::chrono::seconds kHeartbeat{10};

  SweepProgress(size_t total_configs, size_t total_runs, std::vector<PlannedConfiguration> plan, bool leader);

  void run_done(size_t config);
  void config_done(size_t config, const std::string& id, const std::string& note);
  void skipped(size_t config, size_t runs);
  // Configurations first .. first + members - 1 begin (interleaved twins, or one alone).
  void now_running(size_t first, size_t members, const std::string& what);
  void runs_began();
  // What the progress line names as running, the estimate unchanged (a window's paired blocks).
  void now_doing(const std::string& what);

 private:
  double seconds_since_start() const;
  // Called with the heartbeat's lock held.
  void print(char end, const std::string& what = "");
  bool beat();

  size_t total_configs_, total_runs_;
  size_t configs_ = 0, runs_ = 0;
  SweepEta eta_;
  std::chrono::steady_clock::time_point start_;
  bool tty_;
  std::string running_;  // the configuration (or pair) under way
  Heartbeat heartbeat_;  // rank 0 only; last, so its thread starts after everything it reads
};

}  // namespace ddpscale
