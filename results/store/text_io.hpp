// Whole files in and out, numbers as text that reads back as the same double, and JSON as
// text: the small pieces every writer of results/ (JSON, CSV, report, plot data) shares.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace ddpscale {

// Throw std::runtime_error naming the file and the system's reason.
std::string read_whole_file(const std::string& path);
void write_whole_file(const std::string& path, const std::string& bytes);

// The shortest text that reads back as the same double, whatever the C locale (a "1,5"
// would break gnuplot, CSV and JSON alike). Infinite and NaN values give "inf"/"nan":
// callers decide how their format writes a missing number.
std::string round_trip_text(double value);

// JSON text as every JSON file ddpscale writes has it (summary.json, predict.json,
// compare.json, `ddpscale info`): nlohmann-json's, indented by two, keys in the order they
// were set (ordered_json), numbers round-tripping their doubles, NaN and infinities as
// null, and bytes that are not UTF-8 (a hostname, a path) as U+FFFD instead of an exception.
std::string json_text(const nlohmann::ordered_json& value);

}  // namespace ddpscale
