// When a study has launched enough: with a spec's target_half_width, a sweep stops adding
// launches to a comparison once the 95% interval of its speedup, computed over the launches
// it has so far exactly as the report computes it, lies within +-target of the speedup.
// The interval is as wide as the host's speed differs between launches, which varies from
// machine to machine by a factor of four (docs/benchmarks.md, "Reproducibility"): a fixed
// count of launches is either too few on a noisy host or time wasted on a quiet one.
// Reads the run store; no LibTorch, no MPI.
#pragma once
#include "results/statistics/statistics.hpp"
#include "results/store/run_record.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ddpscale {

// Four: over fewer, Student's quantile for launches - 1 degrees of freedom (12.7 for two,
// 4.30 for three, 3.18 for four) makes an interval too wide to stop on, and a spread guessed
// from two or three launches is too often small by chance to stop on it.
constexpr int kDefaultMinLaunches = 4;

// The stopping rule of a study's spec, read back from the spec text study.h5 keeps:
// target_half_width (0: none, every launch measured every configuration) and min_launches
// (0 where the spec leaves it to the default, min(kDefaultMinLaunches, launches)).
struct LaunchRule {
  double target_half_width = 0;
  int min_launches = 0;
};
// A text that is not YAML, or holds neither key, gives the rule of no target.
LaunchRule launch_rule_of_spec(const std::string& spec_text);

// Half the interval's width relative to the estimate, (high - low) / 2 / speedup: 0.05 for
// a speedup of 1.60 with the interval [1.52, 1.68]. NaN without a valid interval.
double relative_half_width(double speedup, const Interval& interval);

struct LaunchPrecision {
  size_t comparisons = 0;         // N-rank configurations with a 1-rank twin, among those read
  size_t within_target = 0;       // of them, those whose interval is within the target
  double widest_open = kNaN;      // the widest relative half-width of the others (NaN: none)
  // Ids of the configurations no launch needs any more: a 1-rank configuration whose every
  // comparison is within the target, and each such comparison's N-rank configuration. A
  // configuration without a twin, or whose twin still needs runs, is not among them: the
  // twins of a comparison run side by side (interleave_runs) and stop together.
  std::set<std::string> settled;
};

// The precision of `records` (one configuration's launches each merged, as merge_launches
// gives them) against `target` (0.05 for +-5%).
LaunchPrecision launch_precision(const std::vector<ConfigRecord>& records, double target);

// The same from the files a study folder holds for launches 0 .. before - 1 of a study of
// `launches` launches: what launch `before` knows when it starts. Throws StoreError for a
// file it cannot read.
LaunchPrecision launch_precision_in(const std::string& dir, int before, int launches, double target);

// launch_precision_in for a caller that asks before every launch, as the sweep's driver
// does: each file is read once (again only if its size or time changed), so the question
// before launch 40 costs the reading of the last launch's files, not of all 39 launches'
// (which took 2.3 s of 3.8 for 826 files on the 2-core machine).
class LaunchPrecisionReader {
 public:
  explicit LaunchPrecisionReader(std::string dir) : dir_(std::move(dir)) {}
  LaunchPrecision before_launch(int before, int launches, double target);

 private:
  struct Stored {
    uintmax_t size = 0;
    int64_t modified = 0;
    ConfigRecord record;
  };
  std::string dir_;
  std::map<std::string, Stored> by_path_;
};

}  // namespace ddpscale
