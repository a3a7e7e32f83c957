#include "trainer/command_line/help_option.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace ddpscale {
namespace {

// Under mpirun every rank parses the same arguments; one deprecation line is enough.
bool first_rank() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(variable);
    if (value) return std::string(value) == "0";
  }
  return true;
}

// `word` in its deprecated spelling: the current spelling with what followed the deprecated one ("=8" or,
// for a short option, "8"); empty when `word` is not that option.
std::string respelt(const std::string& word, const RenamedOption& option) {
  const std::string& old = option.old_spelling;
  if (word == old) return option.current;
  if (word.rfind(old + "=", 0) == 0) return option.current + word.substr(old.size());
  const bool short_option = old.size() == 2;
  if (short_option && word.rfind(old, 0) == 0) return option.current + "=" + word.substr(old.size());
  return "";
}

}  // namespace

bool printed_help(const cxxopts::Options& options, const cxxopts::ParseResult& args, const std::string& example,
                  const std::vector<std::string>& groups) {
  if (!args.count("help")) return false;
  std::cout << options.help(groups) << "\nExample:\n  " << example << std::endl;
  return true;
}

CurrentSpellings::CurrentSpellings(int argc, char** argv, const std::vector<RenamedOption>& renamed) {
  bool options_ended = false;  // after "--" every word is an argument
  for (int i = 0; i < argc; ++i) {
    std::string word = argv[i];
    options_ended = options_ended || word == "--";
    for (const RenamedOption& option : renamed) {
      if (i == 0 || options_ended) break;
      const std::string current = respelt(word, option);
      if (current.empty()) continue;
      if (first_rank())
        std::fprintf(stderr, "%s: %s is deprecated and goes in the next release: write %s (%s)\n", argv[0],
                     option.old_spelling.c_str(), option.current.c_str(), option.why.c_str());
      word = current;
      break;
    }
    words_.push_back(word);
  }
  for (std::string& word : words_) pointers_.push_back(word.data());
  pointers_.push_back(nullptr);
}

}  // namespace ddpscale
