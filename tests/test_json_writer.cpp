#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "json_writer.hpp"

namespace ddpscale {
namespace {

TEST(JsonWriter, NestedCompact) {
  JsonWriter json(0);
  json.begin_object().field("a", 1).key("b").begin_array().value(1.5).value("x").null().end_array()
      .field("ok", true).key("empty").begin_object().end_object().end_object();
  EXPECT_EQ(json.str(), R"({"a":1,"b":[1.5,"x",null],"ok":true,"empty":{}})");
}

TEST(JsonWriter, EscapesControlAndQuotes) {
  EXPECT_EQ(json_escape("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");
}

TEST(JsonWriter, NonFiniteBecomesNull) {
  JsonWriter json(0);
  json.begin_array().value(std::nan("")).value(INFINITY).end_array();
  EXPECT_EQ(json.str(), "[null,null]");
}

}  // namespace
}  // namespace ddpscale

namespace ddpscale {
namespace {

// Numbers round-trip: a script reading summary.json gets the very doubles the report used,
// while short decimals stay short.
TEST(JsonWriter, NumbersRoundTripAndShortDecimalsStayShort) {
  JsonWriter json(0);
  const double third = 1.0 / 3.0, big = 123456789.123456789, tiny = 2.5e-300;
  json.begin_array().value(third).value(big).value(tiny).value(0.1).value(1e-3).end_array();
  const std::string text = json.str();
  EXPECT_NE(text.find("0.1,"), std::string::npos) << text;
  EXPECT_NE(text.find("0.001"), std::string::npos) << text;
  std::vector<double> parsed;
  const char* p = text.c_str() + 1;
  for (int i = 0; i < 5; ++i) {
    char* end = nullptr;
    parsed.push_back(std::strtod(p, &end));
    p = end + 1;  // skip the comma
  }
  EXPECT_EQ(parsed[0], third);
  EXPECT_EQ(parsed[1], big);
  EXPECT_EQ(parsed[2], tiny);
  EXPECT_EQ(parsed[3], 0.1);
  EXPECT_EQ(parsed[4], 1e-3);
}

}  // namespace
}  // namespace ddpscale
