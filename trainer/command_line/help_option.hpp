// --help, alike in every subcommand, and the old spellings of renamed options.
#pragma once
#include <cxxopts.hpp>
#include <string>
#include <vector>

namespace ddpscale {

// With --help: prints the help of `groups` (every group when empty), then `example`, a
// command line that works as printed, and returns true; the subcommand then exits 0.
bool printed_help(const cxxopts::Options& options, const cxxopts::ParseResult& args, const std::string& example,
                  const std::vector<std::string>& groups = {});

// An option renamed to follow the naming rule (experiments/README.md, "Flags and spec keys"):
// the old spelling still works for one release, with a line saying what to write instead.
struct RenamedOption {
  std::string old_spelling;  // "--batch" or "-b"
  std::string current;       // "--batch-size"
  std::string why;           // the clash or rule the rename settles, for the deprecation line
};

// The arguments with every old spelling replaced by its current one ("--batch=8" and
// "--batch 8" alike; a short "-b8" too), after one deprecation line per old spelling on
// stderr (from the first rank only, when launched under mpirun).
class CurrentSpellings {
 public:
  CurrentSpellings(int argc, char** argv, const std::vector<RenamedOption>& renamed);
  int argc() const { return static_cast<int>(words_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> words_;
  std::vector<char*> pointers_;  // into words_, then NULL
};

}  // namespace ddpscale
