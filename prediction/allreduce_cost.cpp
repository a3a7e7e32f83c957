#include "prediction/allreduce_cost.hpp"

#include "comm/bus_bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ddpscale {
namespace {

// "400Gb/s" -> bytes per second; the unit decides bits or bytes, decimal prefixes.
double parse_bandwidth(const std::string& text) {
  size_t used = 0;
  const double value = std::stod(text, &used);
  const std::string unit = text.substr(used);
  if (unit == "Gb/s") return value * 1e9 / 8;
  if (unit == "Mb/s") return value * 1e6 / 8;
  if (unit == "GB/s") return value * 1e9;
  if (unit == "MB/s") return value * 1e6;
  throw std::invalid_argument("unit '" + unit + "'");
}

double parse_latency_us(const std::string& text) {
  size_t used = 0;
  const double value = std::stod(text, &used);
  const std::string unit = text.substr(used);
  if (unit == "us") return value;
  if (unit == "ms") return value * 1e3;
  throw std::invalid_argument("unit '" + unit + "'");
}

// Linear interpolation of y in x between points (x0, y0) and (x1, y1), extended past them.
double along_line(double x, double x0, double y0, double x1, double y1) {
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

}  // namespace

NetworkProfile parse_network_profile(const std::string& text) {
  const auto comma = text.find(',');
  const std::string usage = "network profile '" + text +
                            "': give bandwidth per GPU and latency, e.g. \"400Gb/s,3us\" (Gb/s, Mb/s, GB/s or MB/s; us or ms)";
  if (comma == std::string::npos) throw std::invalid_argument(usage);
  NetworkProfile profile;
  profile.text = text;
  try {
    profile.bytes_per_s = parse_bandwidth(text.substr(0, comma));
    profile.latency_us = parse_latency_us(text.substr(comma + 1));
  } catch (const std::exception&) {
    throw std::invalid_argument(usage);
  }
  if (!(profile.bytes_per_s > 0) || !(profile.latency_us >= 0)) throw std::invalid_argument(usage);
  return profile;
}

double allreduce_time_us_from_busbw(double bytes, double busbw_gbs, int ranks) {
  if (ranks < 2 || !(busbw_gbs > 0)) throw std::invalid_argument("a bus bandwidth needs 2 or more ranks and a positive value");
  const double algbw_bytes_per_us = busbw_gbs * 1e3 / allreduce_bus_factor(ranks);
  return bytes / algbw_bytes_per_us;
}

const char* algorithm_name(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::ring: return "ring";
    case AllreduceAlgorithm::hierarchical: return "hierarchical";
    case AllreduceAlgorithm::none: break;
  }
  return "none";
}

AllreduceCostModel::AllreduceCostModel(std::vector<double> bytes, std::vector<double> time_us, int measured_ranks)
    : measured_ranks_(measured_ranks) {
  if (bytes.size() != time_us.size() || bytes.size() < 2)
    throw std::invalid_argument("the allreduce model needs at least two commbench rows (sizes and times)");
  if (measured_ranks < 2) throw std::invalid_argument("the commbench curve must come from 2 or more ranks");
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!(bytes[i] > 0) || !(time_us[i] > 0)) throw std::invalid_argument("commbench rows need positive sizes and times");
    if (i > 0 && !(bytes[i] > bytes[i - 1])) throw std::invalid_argument("commbench sizes must increase");
    log_bytes_.push_back(std::log(bytes[i]));
    log_time_.push_back(std::log(time_us[i]));
  }
}

double AllreduceCostModel::measured_time_us(double bytes) const {
  if (!(bytes > 0)) return 0;
  const double x = std::log(bytes);
  if (x <= log_bytes_.front()) return std::exp(log_time_.front());
  const size_t last = log_bytes_.size() - 1;
  // Past the largest size each further byte costs what it cost between the last two sizes:
  // the fixed latency does not grow with the message, the data does.
  if (x >= log_bytes_[last]) {
    const double b0 = std::exp(log_bytes_[last - 1]), b1 = std::exp(log_bytes_[last]);
    const double t0 = std::exp(log_time_[last - 1]), t1 = std::exp(log_time_[last]);
    return t1 + (bytes - b1) * std::max(0.0, t1 - t0) / (b1 - b0);
  }
  const size_t i = static_cast<size_t>(std::upper_bound(log_bytes_.begin(), log_bytes_.end(), x) - log_bytes_.begin());
  return std::exp(along_line(x, log_bytes_[i - 1], log_time_[i - 1], log_bytes_[i], log_time_[i]));
}

double AllreduceCostModel::step_latency_us() const {
  return std::exp(log_time_.front()) / (2.0 * (measured_ranks_ - 1));
}

double AllreduceCostModel::us_per_byte_sent(double bytes) const {
  if (!(bytes > 0)) return 0;
  const double data_part = std::max(0.0, measured_time_us(bytes) - std::exp(log_time_.front()));
  return data_part / (bytes * allreduce_bus_factor(measured_ranks_));
}

double AllreduceCostModel::ring_us(double bytes, int ranks) const {
  if (ranks < 2 || !(bytes > 0)) return 0;
  const double m = measured_ranks_, n = ranks;
  const double latency = std::exp(log_time_.front());
  const double bandwidth_part = std::max(0.0, measured_time_us(bytes) - latency);
  return latency * (n - 1) / (m - 1) + bandwidth_part * allreduce_bus_factor(ranks) / allreduce_bus_factor(measured_ranks_);
}

namespace {

// One step of a ring over a link: its latency and its time per byte sent.
struct LinkStep {
  double latency_us = 0;
  double us_per_byte = 0;
};

LinkStep network_step(const NetworkProfile& network, double message_bytes) {
  if (network.measured_curve)
    return {network.measured_curve->step_latency_us(), network.measured_curve->us_per_byte_sent(message_bytes)};
  return {network.latency_us, 1e6 / network.bytes_per_s};
}

// An allreduce of `bytes` over a ring of `ranks` ranks whose every step is `step`.
double ring_over(const LinkStep& step, double bytes, double ranks) {
  return 2 * (ranks - 1) * step.latency_us + 2 * (ranks - 1) / ranks * bytes * step.us_per_byte;
}

}  // namespace

AllreduceCost AllreduceCostModel::cost(double bytes, const Topology& topology, const NetworkProfile& network) const {
  if (topology.ranks() < 2 || !(bytes > 0)) return {};
  if (topology.nodes == 1) return {ring_us(bytes, topology.gpus_per_node), AllreduceAlgorithm::ring};
  if (!network.given()) throw std::invalid_argument("an allreduce between nodes needs a network profile");
  const int K = topology.nodes, G = topology.gpus_per_node;
  // A ring step crosses the network at each node boundary and a node's links elsewhere: the
  // ring goes at the slower of the two (with one GPU per node, the network alone).
  const LinkStep net = network_step(network, bytes);
  const LinkStep node{step_latency_us(), us_per_byte_sent(bytes)};
  const LinkStep slower = G > 1 ? LinkStep{std::max(node.latency_us, net.latency_us), std::max(node.us_per_byte, net.us_per_byte)}
                                : net;
  const double ring = ring_over(slower, bytes, topology.ranks());
  if (G == 1) return {ring, AllreduceAlgorithm::ring};  // one GPU per node: no hierarchy to use
  // Hierarchical: the node's ring for reduce-scatter + all-gather, and between nodes an
  // allreduce of the 1/G of the message each GPU holds, over its own link.
  const double in_node = ring_us(bytes, G);
  const double between_nodes = network.measured_curve ? network.measured_curve->ring_us(bytes / G, K)
                                                      : ring_over(network_step(network, bytes / G), bytes / G, K);
  const double hierarchical = in_node + between_nodes;
  if (ring <= hierarchical) return {ring, AllreduceAlgorithm::ring};
  return {hierarchical, AllreduceAlgorithm::hierarchical};
}

double AllreduceCostModel::interpolation_log_sd() const {
  double sum_squares = 0;
  size_t count = 0;
  for (size_t i = 1; i + 1 < log_bytes_.size(); ++i) {
    const double predicted =
        along_line(log_bytes_[i], log_bytes_[i - 1], log_time_[i - 1], log_bytes_[i + 1], log_time_[i + 1]);
    sum_squares += (log_time_[i] - predicted) * (log_time_[i] - predicted);
    ++count;
  }
  return count ? std::sqrt(sum_squares / static_cast<double>(count)) : 0.0;
}

}  // namespace ddpscale
