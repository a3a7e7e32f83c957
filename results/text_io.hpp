// Whole files in and out, and numbers as text that reads back as the same double: the
// small pieces every writer of results/ (JSON, CSV, report, plot data) shares.
#pragma once
#include <string>

namespace ddpscale {

// Throw std::runtime_error naming the file and the system's reason.
std::string read_whole_file(const std::string& path);
void write_whole_file(const std::string& path, const std::string& bytes);

// The shortest text that reads back as the same double, whatever the C locale (a "1,5"
// would break gnuplot, CSV and JSON alike). Infinite and NaN values give "inf"/"nan":
// callers decide how their format writes a missing number.
std::string round_trip_text(double value);

}  // namespace ddpscale
