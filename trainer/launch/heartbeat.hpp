// Keeps a long quiet stretch of a command from being silence: while its owner lives, a
// thread calls `beat` once no line has gone out for `quiet` (checked every second). The
// owner and the thread share one mutex: the owner holds lock() around everything it prints
// and calls printed() after each line; `beat` runs with it held and returns whether it
// printed. Only the rank that prints starts the thread (enabled).
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace ddpscale {

class Heartbeat {
 public:
  using Clock = std::chrono::steady_clock;

  // Declare it last in its owner: the thread then starts after, and is joined before,
  // everything `beat` reads.
  Heartbeat(std::chrono::seconds quiet, std::function<bool()> beat, bool enabled)
      : quiet_(quiet), beat_(std::move(beat)), last_line_(Clock::now()) {
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
    while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; }))
      if (Clock::now() - last_line_ >= quiet_ && beat_()) last_line_ = Clock::now();
  }

  const std::chrono::seconds quiet_;
  const std::function<bool()> beat_;
  Clock::time_point last_line_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ddpscale
