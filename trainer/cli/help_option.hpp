// --help, alike in every subcommand.
#pragma once
#include <cxxopts.hpp>
#include <iostream>
#include <string>
#include <vector>

namespace ddpscale {

// With --help: prints the help of `groups` (every group when empty) and returns true; the
// subcommand then exits 0.
inline bool printed_help(const cxxopts::Options& options, const cxxopts::ParseResult& args,
                         const std::vector<std::string>& groups = {}) {
  if (!args.count("help")) return false;
  std::cout << options.help(groups) << std::endl;
  return true;
}

}  // namespace ddpscale
