// The stall watchdog with fake streams: one that never reaches a marker (a stopped peer),
// one that always does (healthy), one whose backend reports an error. The NCCL test that
// stops a real rank is reliability_stuck_rank_nccl (label gpu).
#include "comm/stall_watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace ddpscale {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// How long a test waits for what should come within a poll or two. The tests' time-outs and
// polls are 20-300 ms, but a loaded machine may not run a thread for seconds, so only the
// order of events is asserted tightly (never before the time-out); "promptly" means well
// inside this, and well below the 60 s time-outs and poll intervals it is set against.
constexpr auto kPatience = 15s;

// Collects the watchdog's verdict from its thread.
struct StallRecord {
  std::mutex mutex;
  std::condition_variable changed;
  int calls = 0;
  std::string why;
  Clock::time_point at;

  std::function<void(const std::string&)> callback() {
    return [this](const std::string& text) {
      std::lock_guard<std::mutex> lock(mutex);
      ++calls;
      why = text;
      at = Clock::now();
      changed.notify_all();
    };
  }
  bool wait_for_call(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, limit, [this] { return calls > 0; });
  }
};

TEST(StallWatchdog, AStreamThatStopsIsReportedAfterTheTimeout) {
  StallRecord record;
  std::atomic<int> placed{0};
  StreamProbe probe{[&] { ++placed; }, [] { return false; }, [] { return std::string(); }};
  const auto start = Clock::now();
  StallWatchdog watchdog(probe, 300ms, 20ms, record.callback());
  ASSERT_TRUE(record.wait_for_call(kPatience));
  const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(record.at - start);
  EXPECT_GE(after.count(), 300);  // never before the time-out: that holds on any machine
  EXPECT_NE(record.why.find("no completion within --comm-timeout (0.3 s)"), std::string::npos) << record.why;
  EXPECT_EQ(placed.load(), 1);  // an unreached marker is never replaced
  std::this_thread::sleep_for(100ms);
  std::lock_guard<std::mutex> lock(record.mutex);
  EXPECT_EQ(record.calls, 1);  // reported once, then the watchdog is done
}

TEST(StallWatchdog, AStreamThatKeepsUpIsNeverReportedAndMarkersAreReplaced) {
  StallRecord record;
  std::atomic<int> placed{0};
  StreamProbe probe{[&] { ++placed; }, [] { return true; }, [] { return std::string(); }};
  {
    StallWatchdog watchdog(probe, 100ms, 10ms, record.callback());
    std::this_thread::sleep_for(500ms);  // five time-outs long
  }
  std::lock_guard<std::mutex> lock(record.mutex);
  EXPECT_EQ(record.calls, 0) << record.why;
  EXPECT_GE(placed.load(), 10);  // one new marker per poll that found the last one reached
}

TEST(StallWatchdog, ABackendErrorIsReportedAtTheNextPoll) {
  StallRecord record;
  StreamProbe probe{[] {}, [] { return true; }, [] { return std::string("NCCL async error: remote process exited"); }};
  const auto start = Clock::now();
  StallWatchdog watchdog(probe, 60000ms, 20ms, record.callback());
  ASSERT_TRUE(record.wait_for_call(kPatience));  // long before the 60 s time-out
  EXPECT_EQ(record.why, "NCCL async error: remote process exited");
  EXPECT_LT(record.at - start, kPatience);
}

// The GPU machine's case: the probe's CUDA call itself waits in the driver behind a full
// launch queue. The stall must still be reported on time, from the other thread.
TEST(StallWatchdog, AProbeThatBlocksInsideItsCallIsStillReported) {
  StallRecord record;
  std::mutex gate;
  std::condition_variable opened;
  bool open = false;
  std::atomic<int> queries{0};
  StreamProbe probe{[] {},
                    [&] {
                      if (++queries == 1) return true;  // one marker passes, then the driver blocks
                      std::unique_lock<std::mutex> lock(gate);
                      opened.wait(lock, [&] { return open; });
                      return false;
                    },
                    [] { return std::string(); }};
  const auto start = Clock::now();
  {
    StallWatchdog watchdog(probe, 300ms, 20ms, record.callback());
    const bool reported = record.wait_for_call(kPatience);
    {
      std::lock_guard<std::mutex> lock(gate);  // let the probe return so the watchdog can stop
      open = true;
    }
    opened.notify_all();
    ASSERT_TRUE(reported) << "no report while the probe was blocked";
  }
  const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(record.at - start);
  EXPECT_GE(after.count(), 300);  // not before the time-out; reported while blocked (above)
  EXPECT_NE(record.why.find("no completion within --comm-timeout (0.3 s)"), std::string::npos) << record.why;
}

TEST(StallWatchdog, StopsPromptlyWhenDestroyed) {
  StallRecord record;
  StreamProbe probe{[] {}, [] { return true; }, [] { return std::string(); }};
  auto watchdog = std::make_unique<StallWatchdog>(probe, 600000ms, 60000ms, record.callback());
  const auto start = Clock::now();
  watchdog.reset();  // must not sit out the poll interval
  EXPECT_LT(Clock::now() - start, kPatience);
}

}  // namespace
}  // namespace ddpscale
