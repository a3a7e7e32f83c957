#include "comm/stall_watchdog.hpp"

#include <cstdio>

namespace ddpscale {

StallWatchdog::StallWatchdog(StreamProbe probe, std::chrono::milliseconds timeout, std::chrono::milliseconds poll,
                             std::function<void(const std::string& why)> on_stall)
    : probe_(std::move(probe)), timeout_(timeout), poll_(poll), on_stall_(std::move(on_stall)) {
  last_progress_ns_ = now_ns();
  prober_ = std::thread([this] { probe_stream(); });
  judge_ = std::thread([this] { judge_progress(); });
}

StallWatchdog::~StallWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  judge_.join();
  prober_.join();
}

int64_t StallWatchdog::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool StallWatchdog::sleep_one_poll() {
  std::unique_lock<std::mutex> lock(mutex_);
  return !wake_.wait_for(lock, poll_, [this] { return stopping_; });
}

void StallWatchdog::probe_stream() {
  probe_.place_marker();
  last_progress_ns_ = now_ns();
  while (sleep_one_poll()) {
    std::string error = probe_.async_error();
    if (!error.empty()) {
      std::lock_guard<std::mutex> lock(mutex_);
      backend_error_ = std::move(error);
      return;
    }
    if (probe_.marker_reached()) {
      probe_.place_marker();
      last_progress_ns_ = now_ns();
    }
  }
}

void StallWatchdog::judge_progress() {
  const int64_t timeout_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout_).count();
  while (sleep_one_poll()) {
    std::string error;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      error = backend_error_;
    }
    if (!error.empty()) {
      on_stall_(error);
      return;
    }
    if (now_ns() - last_progress_ns_.load() > timeout_ns) {
      const auto seconds = std::chrono::duration_cast<std::chrono::duration<double>>(timeout_).count();
      char text[64];
      std::snprintf(text, sizeof(text), "%g", seconds);
      on_stall_(std::string("no completion within --comm-timeout (") + text +
                " s): the communication stream made no progress; a peer rank is probably gone or stuck");
      return;
    }
  }
}

}  // namespace ddpscale
