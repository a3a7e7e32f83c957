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
//
// Two threads, because the probe itself can block: once the training thread has filled the
// CUDA launch queue and waits inside the driver, the probe's CUDA calls may wait with it (on
// 2 H200s a rank stopped with SIGSTOP left its peer silent for 34 s with a 4 s time-out). One
// thread calls the probe and stamps each sign of progress; the other only reads the clock
// and that stamp, so it reports the stall even while the probe is stuck in a call.
#pragma once
#include <atomic>
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
  void probe_stream();       // calls the probe; may block inside it
  void judge_progress();     // clock and stamps only; calls on_stall
  // Sleeps one poll interval; false when asked to stop.
  bool sleep_one_poll();
  int64_t now_ns() const;

  StreamProbe probe_;
  std::chrono::milliseconds timeout_, poll_;
  std::function<void(const std::string&)> on_stall_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string backend_error_;                 // set by the prober, under mutex_
  std::atomic<int64_t> last_progress_ns_{0};  // when a marker was last placed (steady clock)
  std::thread prober_, judge_;
};

}  // namespace ddpscale
