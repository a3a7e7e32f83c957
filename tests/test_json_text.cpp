// json_text (text_io.hpp): how every JSON file ddpscale writes spells what it holds.
#include "results/store/text_io.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace ddpscale {
namespace {

using Json = nlohmann::ordered_json;

TEST(JsonText, KeysStayInTheOrderTheyWereSetAndIndentByTwo) {
  Json json;
  json["z"] = 1;
  json["a"] = Json::array({1.5, "x", nullptr});
  json["empty"] = Json::object();
  json["ok"] = true;
  EXPECT_EQ(json_text(json), "{\n  \"z\": 1,\n  \"a\": [\n    1.5,\n    \"x\",\n    null\n  ],\n"
                             "  \"empty\": {},\n  \"ok\": true\n}");
}

// A missing number (NaN) and an infinite one are null: JSON has no spelling for them, and
// Python's json would otherwise read a bare NaN that other readers reject.
TEST(JsonText, NonFiniteNumbersAreNull) {
  const Json json = Json::array({std::nan(""), std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(), 2.5});
  EXPECT_EQ(json_text(json), "[\n  null,\n  null,\n  null,\n  2.5\n]");
}

TEST(JsonText, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_text(Json("a\"b\\c\n\x01")), "\"a\\\"b\\\\c\\n\\u0001\"");
}

// A hostname or path that is not UTF-8 must not stop the report: the bad byte becomes U+FFFD.
TEST(JsonText, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  EXPECT_EQ(json_text(Json(std::string("node\xff" "1"))), "\"node\xef\xbf\xbd" "1\"");
  EXPECT_EQ(json_text(Json("caf\xc3\xa9")), "\"caf\xc3\xa9\"");  // UTF-8 stays as it is
}

// Numbers round-trip: a script reading summary.json gets the very doubles the report used,
// while short decimals stay short.
TEST(JsonText, NumbersRoundTripAndShortDecimalsStayShort) {
  const double third = 1.0 / 3.0, big = 123456789.123456789, tiny = 2.5e-300;
  const std::string text = json_text(Json::array({third, big, tiny, 0.1, 1e-3}));
  EXPECT_NE(text.find("  0.1,\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  0.001\n"), std::string::npos) << text;
  const Json parsed = Json::parse(text);
  EXPECT_EQ(parsed[0].get<double>(), third);
  EXPECT_EQ(parsed[1].get<double>(), big);
  EXPECT_EQ(parsed[2].get<double>(), tiny);
  EXPECT_EQ(parsed[3].get<double>(), 0.1);
  EXPECT_EQ(parsed[4].get<double>(), 1e-3);
}

}  // namespace
}  // namespace ddpscale
