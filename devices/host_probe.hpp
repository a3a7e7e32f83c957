// What the host was doing around a run, read from Linux's /proc and /sys and getrusage:
// which cores the process ran on, how fast they were clocked, how often the process was
// switched out, and how much CPU time the hypervisor gave to other guests (steal). Read
// before and after a run, never inside the measured steps.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ddpscale {

struct HostCounters {
  int64_t voluntary_switches = 0;    // getrusage(RUSAGE_SELF): all threads of the process
  int64_t involuntary_switches = 0;
  double steal_ms = 0;               // /proc/stat's steal over all cores since boot; NaN where absent
};
HostCounters read_host_counters();

// The distinct cores the process's threads last ran on (/proc/self/task/*/stat, field 39),
// ascending; empty where /proc cannot be read.
std::vector<int> cores_of_this_process();

// The mean current frequency of the cores in MHz: cpufreq's scaling_cur_freq where the
// kernel has it, else /proc/cpuinfo's "cpu MHz" lines; NaN where neither can be read.
double mean_core_mhz(const std::vector<int>& cores);

// Parsers of the two /proc files, exposed for tests: field 39 ("processor") of a
// /proc/<pid>/task/<tid>/stat line (-1 if malformed; the command name may hold blanks and
// parentheses), and the steal field of /proc/stat's first line in clock ticks (NaN if absent).
int last_core_of_stat_line(const std::string& stat_line);
double steal_ticks_of_proc_stat(const std::string& proc_stat);

}  // namespace ddpscale
