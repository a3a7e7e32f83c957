#include "trainer/study/sweep_progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

namespace ddpscale {

std::string clock_text(double seconds) {
  char text[32];
  const long s = std::lround(seconds);
  std::snprintf(text, sizeof(text), "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return text;
}

SweepProgress::SweepProgress(size_t total_configs, size_t total_runs, std::vector<PlannedConfiguration> plan,
                             bool leader)
    : total_configs_(total_configs),
      total_runs_(total_runs),
      eta_(std::move(plan)),
      start_(std::chrono::steady_clock::now()),
      tty_(isatty(STDERR_FILENO) != 0),
      heartbeat_(heartbeat_interval(kHeartbeat), [this] { return beat(); }, leader) {}

void SweepProgress::run_done(size_t config) {
  const auto lock = heartbeat_.lock();
  ++runs_;
  eta_.run_done(config, seconds_since_start());
  if (tty_) print('\r');
}

void SweepProgress::config_done(size_t config, const std::string& id, const std::string& note) {
  const auto lock = heartbeat_.lock();
  ++configs_;
  eta_.configuration_done(config, seconds_since_start());
  if (tty_) std::fprintf(stderr, "\r\033[K");
  print('\n', id + " " + note);
}

void SweepProgress::skipped(size_t config, size_t runs) {
  const auto lock = heartbeat_.lock();
  ++configs_;
  runs_ += runs;
  eta_.skipped(config);
}

void SweepProgress::now_running(size_t first, size_t members, const std::string& what) {
  const auto lock = heartbeat_.lock();
  running_ = what;
  eta_.group_started(first, members, seconds_since_start());
}

void SweepProgress::runs_began() {
  const auto lock = heartbeat_.lock();
  eta_.runs_began(seconds_since_start());
}

void SweepProgress::now_doing(const std::string& what) {
  const auto lock = heartbeat_.lock();
  running_ = what;
}

double SweepProgress::seconds_since_start() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void SweepProgress::print(char end, const std::string& what) {
  const double elapsed = seconds_since_start();
  const std::optional<double> eta = eta_.seconds_left(elapsed);
  std::fprintf(stderr, "[sweep] configs %zu/%zu  runs %zu/%zu  elapsed %s  eta %s%s%s%c", configs_, total_configs_,
               runs_, total_runs_, clock_text(elapsed).c_str(), eta ? clock_text(*eta).c_str() : "?",
               what.empty() ? "" : "  ", what.c_str(), end);
  std::fflush(stderr);
  if (end == '\n') heartbeat_.printed();
}

bool SweepProgress::beat() {
  if (tty_) std::fprintf(stderr, "\r\033[K");
  print('\n', running_.empty() ? "" : "running " + running_);
  return true;
}

}  // namespace ddpscale
