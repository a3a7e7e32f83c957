// The run times a stored study measured, as the sweep's estimate reads them
// (study/sweep_eta.hpp): what `ddpscale sweep --dry-run` estimates from.
#pragma once
#include "trainer/study/sweep_eta.hpp"

#include <string>
#include <vector>

namespace ddpscale {

// One entry per configuration file in `dir` (each launch's file apart), with the time of
// each successful run: its slowest rank's wall time of the measured steps, scaled to its
// warm-up and measured steps. A file stores no time for its setup or wrap-up, nor for the
// moments of a run around its steps, so these times fall short of a sweep's. Empty where
// `dir` does not exist or holds no readable configuration file.
std::vector<MeasuredConfiguration> run_times_in_study(const std::string& dir);

}  // namespace ddpscale
