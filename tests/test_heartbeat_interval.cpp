// heartbeat_interval (trainer/process/heartbeat.hpp): the standard interval, or the one the
// tests inject through DDPSCALE_HEARTBEAT_SECONDS; a bad value is named and ignored.
#include "trainer/process/heartbeat.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace ddpscale {
namespace {

using namespace std::chrono_literals;

constexpr const char* kVariable = "DDPSCALE_HEARTBEAT_SECONDS";

// Sets the variable for one test and removes it after, so the cases do not leak into each other.
class HeartbeatInterval : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(kVariable); }
  static void set(const char* value) { setenv(kVariable, value, 1); }
};

TEST_F(HeartbeatInterval, UnsetOrEmptyGivesTheStandardInterval) {
  unsetenv(kVariable);
  EXPECT_EQ(heartbeat_interval(10s), 10000ms);
  set("");
  EXPECT_EQ(heartbeat_interval(10s), 10000ms);
}

TEST_F(HeartbeatInterval, SecondsWithFractionsAreTakenToTheMillisecond) {
  set("0.5");
  EXPECT_EQ(heartbeat_interval(10s), 500ms);
  set("2");
  EXPECT_EQ(heartbeat_interval(10s), 2000ms);
  set("0.0001");  // below a millisecond: the shortest interval there is, not zero
  EXPECT_EQ(heartbeat_interval(10s), 1ms);
}

TEST_F(HeartbeatInterval, AValueThatIsNotAPositiveNumberIsNamedAndIgnored) {
  for (const char* bad : {"0", "-1", "abc", "1s", "nan", "inf"}) {
    set(bad);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(heartbeat_interval(10s), 10000ms) << bad;
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(said, std::string("ddpscale: DDPSCALE_HEARTBEAT_SECONDS='") + bad +
                        "' is not a positive number of seconds; ignored\n");
  }
}

}  // namespace
}  // namespace ddpscale
