#include "devices/host_probe.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace ddpscale {
namespace {

constexpr double kNotRead = std::numeric_limits<double>::quiet_NaN();

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string whole_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// cpufreq's current frequency of one core in MHz, NaN where the kernel has none (VMs often).
double cpufreq_mhz(int core) {
  const std::string text =
      first_line_of("/sys/devices/system/cpu/cpu" + std::to_string(core) + "/cpufreq/scaling_cur_freq");
  if (text.empty()) return kNotRead;
  try {
    return std::stod(text) / 1000.0;  // kHz
  } catch (const std::exception&) {
    return kNotRead;
  }
}

// /proc/cpuinfo's "cpu MHz" of each processor, by processor number.
std::vector<double> cpuinfo_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::vector<double> mhz;
  int processor = -1;
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    try {
      if (key == "processor") processor = std::stoi(line.substr(colon + 1));
      if (key == "cpu MHz" && processor >= 0) {
        if (mhz.size() <= static_cast<size_t>(processor)) mhz.resize(static_cast<size_t>(processor) + 1, kNotRead);
        mhz[static_cast<size_t>(processor)] = std::stod(line.substr(colon + 1));
      }
    } catch (const std::exception&) {
      continue;
    }
  }
  return mhz;
}

}  // namespace

int last_core_of_stat_line(const std::string& stat_line) {
  // The command name (field 2) is in parentheses and may contain anything: count fields
  // from the last ')'. Field 3 is the state, so field 39 is the 37th after the ')'.
  const auto close = stat_line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat_line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 39; ++i)
    if (!(fields >> field)) return -1;
  try {
    return std::stoi(field);
  } catch (const std::exception&) {
    return -1;
  }
}

double steal_ticks_of_proc_stat(const std::string& proc_stat) {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice": steal is the 8th.
  std::istringstream in(proc_stat);
  std::string label;
  if (!(in >> label) || label != "cpu") return kNotRead;
  double value = 0;
  for (int i = 1; i <= 8; ++i)
    if (!(in >> value)) return kNotRead;
  return value;
}

HostCounters read_host_counters() {
  HostCounters counters;
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    counters.voluntary_switches = usage.ru_nvcsw;
    counters.involuntary_switches = usage.ru_nivcsw;
  }
  const double ticks = steal_ticks_of_proc_stat(first_line_of("/proc/stat"));
  const long hz = sysconf(_SC_CLK_TCK);
  counters.steal_ms = hz > 0 ? ticks * 1000.0 / static_cast<double>(hz) : kNotRead;
  return counters;
}

std::vector<int> cores_of_this_process() {
  std::set<int> cores;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
    const int core = last_core_of_stat_line(whole_file((it->path() / "stat").string()));
    if (core >= 0) cores.insert(core);
  }
  return {cores.begin(), cores.end()};
}

double mean_core_mhz(const std::vector<int>& cores) {
  if (cores.empty()) return kNotRead;
  std::vector<double> fallback;
  double sum = 0;
  for (int core : cores) {
    double mhz = cpufreq_mhz(core);
    if (!std::isfinite(mhz)) {
      if (fallback.empty()) fallback = cpuinfo_mhz();
      mhz = static_cast<size_t>(core) < fallback.size() ? fallback[static_cast<size_t>(core)] : kNotRead;
    }
    if (!std::isfinite(mhz)) return kNotRead;
    sum += mhz;
  }
  return sum / static_cast<double>(cores.size());
}

}  // namespace ddpscale
