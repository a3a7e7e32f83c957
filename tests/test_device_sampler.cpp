// The sampling loop of devices/device_sampler.hpp with a probe standing in for NVML, so the
// loop is tested where there is no GPU; the NVML probe itself runs under label gpu.
#include "devices/device_sampler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;

namespace ddpscale {
namespace {

// Reading i gives utilisation i, memory 10 i, power 100 i: the order of the samples shows.
SampleProbe counting_probe(std::atomic<int>& calls) {
  return [&calls]() -> std::optional<DeviceSample> {
    const int i = calls++;
    return DeviceSample{static_cast<float>(i), 10.0f * i, 100.0f * i};
  };
}

TEST(DeviceSampler, ReadsAtStartRegularlyAndAtStopInOrder) {
  std::atomic<int> calls{0};
  DeviceSampler sampler(counting_probe(calls), 5ms);
  const auto began = std::chrono::steady_clock::now();
  sampler.start();
  // At least 60 ms, and on until a reading between start and stop has happened: a loaded
  // machine may not schedule the sampler's thread for longer than that (bounded at 10 s).
  std::this_thread::sleep_for(60ms);
  while (calls.load() < 2 && std::chrono::steady_clock::now() - began < 10s) std::this_thread::sleep_for(5ms);
  sampler.stop();
  const auto elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count();
  const auto& samples = sampler.samples();
  // One at start, one at stop, and at least one in between (waited for above).
  ASSERT_GE(samples.size(), 3u);
  ASSERT_EQ(samples.size(), static_cast<size_t>(calls.load()));
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].utilization_pct, static_cast<float>(i));
    EXPECT_EQ(samples[i].memory_used_mib, 10.0f * i);
    EXPECT_EQ(samples[i].power_w, 100.0f * i);
  }
  // Never faster than the interval (a loaded machine may sleep longer than asked: the
  // bound follows the time that really passed).
  EXPECT_LE(samples.size(), static_cast<size_t>(elapsed_ms / 5 + 3));
}

TEST(DeviceSampler, AShortWindowStillHasTwoReadingsAndRestartForgets) {
  std::atomic<int> calls{0};
  DeviceSampler sampler(counting_probe(calls), 1000ms);
  sampler.start();
  sampler.stop();  // long before the first interval: the start and stop readings only
  ASSERT_EQ(sampler.samples().size(), 2u);
  sampler.start();
  sampler.stop();
  ASSERT_EQ(sampler.samples().size(), 2u);
  EXPECT_EQ(sampler.samples()[0].utilization_pct, 2.0f);  // readings 2 and 3, not 0 and 1
}

TEST(DeviceSampler, FailedReadingsAndAnEmptyProbeGiveNoSamples) {
  DeviceSampler unreadable([]() -> std::optional<DeviceSample> { return std::nullopt; }, 1ms);
  unreadable.start();
  std::this_thread::sleep_for(10ms);
  unreadable.stop();
  EXPECT_TRUE(unreadable.samples().empty());

  DeviceSampler none(SampleProbe{}, 1ms);
  EXPECT_FALSE(none.enabled());
  none.start();
  none.stop();
  EXPECT_TRUE(none.samples().empty());
}

TEST(DeviceSampler, StopWithoutStartAndDestructionWhileRunningAreSafe) {
  std::atomic<int> calls{0};
  {
    DeviceSampler sampler(counting_probe(calls), 1ms);
    sampler.stop();
    EXPECT_TRUE(sampler.samples().empty());
    sampler.start();
    std::this_thread::sleep_for(5ms);
  }  // destroyed while sampling: joins instead of terminating
  EXPECT_GE(calls.load(), 2);
}

}  // namespace
}  // namespace ddpscale
