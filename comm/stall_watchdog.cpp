#include "stall_watchdog.hpp"

#include <cstdio>

namespace ddpscale {

StallWatchdog::StallWatchdog(StreamProbe probe, std::chrono::milliseconds timeout, std::chrono::milliseconds poll,
                             std::function<void(const std::string& why)> on_stall)
    : probe_(std::move(probe)), timeout_(timeout), poll_(poll), on_stall_(std::move(on_stall)) {
  thread_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool StallWatchdog::sleep_one_poll() {
  std::unique_lock<std::mutex> lock(mutex_);
  return !wake_.wait_for(lock, poll_, [this] { return stopping_; });
}

void StallWatchdog::watch() {
  using clock = std::chrono::steady_clock;
  probe_.place_marker();
  clock::time_point placed_at = clock::now();
  while (sleep_one_poll()) {
    const std::string error = probe_.async_error();
    if (!error.empty()) {
      on_stall_(error);
      return;
    }
    if (probe_.marker_reached()) {
      probe_.place_marker();
      placed_at = clock::now();
    } else if (clock::now() - placed_at > timeout_) {
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
