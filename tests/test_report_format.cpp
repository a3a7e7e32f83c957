// Numbers as the report prints them (report_format): significant digits, "n/a" for what is
// not a number, thousands grouped.
#include "results/report/report_format.hpp"
#include "tests/report_test_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace ddpscale {
namespace {

using namespace report_test;

TEST(ReportFormatting, FormatNumberKeepsSignificantDigits) {
  EXPECT_EQ(format_number(1.8), "1.80");
  EXPECT_EQ(format_number(12.34), "12.3");
  EXPECT_EQ(format_number(1234.5678), "1235");            // never fewer than 0 decimals
  EXPECT_EQ(format_number(1234.5678, 6), "1234.57");
  EXPECT_EQ(format_number(0.012345, 2), "0.012");
  EXPECT_EQ(format_number(0.000123456, 3), "0.000123");
  EXPECT_EQ(format_number(-2.5), "-2.50");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(1e9), "1000000000");
  EXPECT_EQ(format_number(100.0, 4), "100.0");
  // Rounding that carries into the next power of ten keeps 3 significant digits.
  EXPECT_EQ(format_number(9.996), "10.0");
  EXPECT_EQ(format_number(99.96), "100");
  EXPECT_EQ(format_number(0.09996), "0.100");
  EXPECT_EQ(format_number(std::nan("")), "n/a");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "n/a");
  EXPECT_EQ(format_number(-std::numeric_limits<double>::infinity()), "n/a");
}

TEST(ReportFormatting, ThroughputTextGivesTheLogScaleIntervalAsItsBounds) {
  // The scattered runs of test_statistics.cpp: mean 1516.67, interval [14.21, 31534.7].
  EXPECT_EQ(throughput_text(summarize_positive({250.0, 4000.0, 300.0})), "1517 [14.21, 31535]");
  EXPECT_EQ(throughput_text(summarize_positive({100.0})), "100.0 (n=1, no CI)");
  EXPECT_EQ(throughput_text(summarize_positive({})), "n/a");
}

TEST(ReportFormatting, GroupThousands) {
  EXPECT_EQ(group_thousands(0), "0");
  EXPECT_EQ(group_thousands(999), "999");
  EXPECT_EQ(group_thousands(1000), "1,000");
  EXPECT_EQ(group_thousands(258432), "258,432");
  EXPECT_EQ(group_thousands(1234567), "1,234,567");
  EXPECT_EQ(group_thousands(-1234), "-1,234");
  EXPECT_EQ(group_thousands(-999), "-999");
  EXPECT_EQ(group_thousands(std::numeric_limits<int64_t>::max()), "9,223,372,036,854,775,807");
  EXPECT_EQ(group_thousands(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

}  // namespace
}  // namespace ddpscale
