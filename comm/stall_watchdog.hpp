// Declares a collective lost when the communication stream stops making progress.
//
// Why a thread: on NCCL a step's allreduce is awaited on the device (the compute stream
// waits for the communication stream), so when a peer stops (SIGSTOP, a hung node) no host
// thread is waiting on a clock: the rank keeps enqueuing steps until the CUDA queue fills,
// then blocks in the driver forever. The watchdog places a marker behind whatever the
// stream has enqueued, checks every poll interval whether the stream has reached it, and
// calls on_stall when one marker stays unreached for longer than the time-out; a reached
// marker is replaced at once. It never touches the thread that trains, so it costs that
// thread nothing. Backend-neutral (the probe is three callbacks), so it is tested on CPU.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ddpscale {

struct StreamProbe {
  std::function<void()> place_marker;        // behind all work enqueued so far
  std::function<bool()> marker_reached;      // has the stream passed the last marker?
  std::function<std::string()> async_error;  // non-empty: the backend has already failed
};

class StallWatchdog {
 public:
  // on_stall(why) runs on the watchdog's thread, at most once; in ddpscale it takes the job
  // down (fatal_error), in tests it records the message.
  StallWatchdog(StreamProbe probe, std::chrono::milliseconds timeout, std::chrono::milliseconds poll,
                std::function<void(const std::string& why)> on_stall);
  ~StallWatchdog();  // stops and joins the thread
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

 private:
  void watch();
  // Sleeps one poll interval; false when asked to stop.
  bool sleep_one_poll();

  StreamProbe probe_;
  std::chrono::milliseconds timeout_, poll_;
  std::function<void(const std::string&)> on_stall_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ddpscale
