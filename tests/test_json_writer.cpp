#include <gtest/gtest.h>

#include <cmath>

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
