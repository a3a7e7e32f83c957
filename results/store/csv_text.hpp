// CSV text as every CSV file ddpscale writes and reads has it (summary.csv, compare.csv,
// commbench.csv, predict.csv, the kernel tables): RFC 4180 fields, and the reader that
// `ddpscale predict` and the tests read them back with.
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

enum class CsvQuoting {
  when_needed,  // RFC 4180's minimum: only a field with a comma, quote or line break
  always,       // every field, so a reader can find a field's end by its closing quote
};

// One field: quoted as `quoting` says (quotes inside doubled).
std::string csv_field(const std::string& text, CsvQuoting quoting = CsvQuoting::when_needed);

// And back: the records of RFC 4180 text, fields unquoted (quoted fields may hold commas,
// doubled quotes and line breaks). Throws std::runtime_error for text that ends inside a
// quoted field.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

}  // namespace ddpscale
