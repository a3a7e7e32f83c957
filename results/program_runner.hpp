// Running a helper program (gnuplot, for the report's plots) without a shell: fork/execv
// with the arguments as they are, stdin from /dev/null, stdout and stderr captured. Apart
// from report_plots.cpp, which decides what to run.
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

struct ProgramResult {
  int wait_status = 0;
  std::string out, err;

  bool succeeded() const;
  std::string describe_status() const;  // "exit status 1", "killed by signal 9"
};

// Runs program (an absolute path) with args in work_dir and waits for it. Nothing in the
// arguments is ever interpreted. Throws std::runtime_error when it cannot fork or wait.
ProgramResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::string& work_dir);

// The absolute path of `program` found on PATH as execvp would find it, minus empty PATH
// entries; "" when it is not there.
std::string find_on_path(const std::string& program);

// The first few non-blank lines of a program's message: enough for gnuplot's
// "<script>" line N: <what> and the command it quotes, short enough for a report.
std::string first_lines(const std::string& text, size_t max_lines = 6, size_t max_chars = 1200);

}  // namespace ddpscale
