// Shared by the MPI test binaries: the MPI context of the run, and a printer that shows
// non-zero ranks' failures (with their rank) without repeating their passing output.
#pragma once
#include "comm/mpi_context.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace ddpscale::testing {

extern MpiContext* g_mpi;

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
  }

 private:
  int rank_;
};

}  // namespace ddpscale::testing
