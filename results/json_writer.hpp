// A small streaming JSON writer (objects, arrays, strings escaped per RFC 8259) for
// `ddpscale info`, summary.json and the study metadata. No parser: we only ever write.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ddpscale {

std::string json_escape(const std::string& text);

class JsonWriter {
 public:
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(const std::string& name);
  JsonWriter& value(const std::string& text);
  JsonWriter& value(const char* text) { return value(std::string(text)); }
  JsonWriter& value(double number);  // NaN and inf are written as null
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();

  template <typename T>
  JsonWriter& field(const std::string& name, const T& v) {
    key(name);
    return value(v);
  }

  const std::string& str() const { return out_; }

 private:
  void before_value();
  JsonWriter& close_scope(char closer);
  void newline();

  std::string out_;
  int indent_;
  std::vector<bool> first_in_scope_;
  bool after_key_ = false;
};

}  // namespace ddpscale
