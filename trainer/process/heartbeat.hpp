// Keeps a long quiet stretch of a command from being silence: while its owner lives, a
// thread calls `beat` once no line has gone out for `quiet` (checked every second, or four
// times per `quiet` where that is shorter). The owner and the thread share one mutex: the
// owner holds lock() around everything it prints and calls printed() after each line; `beat`
// runs with it held and returns whether it printed. Only the rank that prints starts the
// thread (enabled).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

namespace ddpscale {

// The quiet stretch after which a heartbeat line goes out: `standard`, unless the environment
// variable DDPSCALE_HEARTBEAT_SECONDS holds a positive number of seconds (fractions allowed).
// The tests set it to prove "a line per interval" in seconds instead of waiting out 10-second
// intervals; a value that is not a positive number is named on stderr and ignored.
inline std::chrono::milliseconds heartbeat_interval(std::chrono::seconds standard) {
  constexpr const char* kVariable = "DDPSCALE_HEARTBEAT_SECONDS";
  const char* value = std::getenv(kVariable);
  if (value == nullptr || *value == '\0') return standard;
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  if (*end != '\0' || !(seconds > 0) || !std::isfinite(seconds)) {
    std::fprintf(stderr, "ddpscale: %s='%s' is not a positive number of seconds; ignored\n", kVariable, value);
    return standard;
  }
  return std::max(std::chrono::milliseconds(1), std::chrono::milliseconds(std::llround(seconds * 1000)));
}

class Heartbeat {
 public:
  using Clock = std::chrono::steady_clock;

  // Declare it last in its owner: the thread then starts after, and is joined before,
  // everything `beat` reads.
  Heartbeat(std::chrono::milliseconds quiet, std::function<bool()> beat, bool enabled)
      : quiet_(quiet), look_every_(look_interval(quiet)), beat_(std::move(beat)), last_line_(Clock::now()) {
    if (enabled) thread_ = std::thread([this] { beat_until_stopped(); });
  }
  ~Heartbeat() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }
  void printed() { last_line_ = Clock::now(); }  // with lock() held

 private:
  void beat_until_stopped() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, look_every_, [this] { return stopping_; }))
      if (Clock::now() - last_line_ >= quiet_ && beat_()) last_line_ = Clock::now();
  }

  // Once a second, or four times per interval where it is shorter, so a line is at most a
  // quarter of an interval late.
  static std::chrono::milliseconds look_interval(std::chrono::milliseconds quiet) {
    return std::clamp(quiet / 4, std::chrono::milliseconds(1), std::chrono::milliseconds(1000));
  }

  const std::chrono::milliseconds quiet_;
  const std::chrono::milliseconds look_every_;
  const std::function<bool()> beat_;
  Clock::time_point last_line_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ddpscale
