// What an allreduce of a given size costs on N GPUs in one node, or on K nodes of G GPUs,
// from the study's own commbench curve (measured at the study's world size, in one node)
// and, between nodes, a network profile. docs/methodology.md ("Predicted scaling") gives
// the model, its sources and its limits.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace ddpscale {

class AllreduceCostModel;

// An allreduce curve to predict from: the study's own commbench, or one named in
// experiments/interconnects.yaml, or a commbench.csv measured elsewhere (--allreduce).
// time_us per message size (in place, float32 sum), measured with `ranks` ranks in one node.
struct AllreduceCurve {
  std::vector<double> bytes, time_us;
  int ranks = 0;
  std::string source;  // what the report says the curve is and where it came from
  bool given() const { return ranks >= 2 && bytes.size() >= 2; }
};

// nccl-tests' conversion from bus bandwidth to time for an allreduce of `bytes` on `ranks`
// ranks: algbw = busbw x n / (2(n-1)), time = bytes / algbw. busbw in GB/s (1e9 bytes/s).
double allreduce_time_us_from_busbw(double bytes, double busbw_gbs, int ranks);

// The network between nodes: either a link described by bandwidth per GPU (one NIC per GPU,
// as on DGX-class nodes) and one-way latency, or a commbench curve measured between nodes
// with one rank per node (measured_curve, which then replaces the two numbers).
struct NetworkProfile {
  double bytes_per_s = 0;
  double latency_us = 0;
  std::shared_ptr<const AllreduceCostModel> measured_curve;
  std::string text;  // as the user gave it, for the report
  bool given() const { return bytes_per_s > 0 || measured_curve != nullptr; }
};
// "400Gb/s,3us", "25GB/s,5us", "100Mb/s,50us": bandwidth in Gb/s, Mb/s, GB/s or MB/s
// (decimal units), latency in us or ms. Throws std::invalid_argument saying the format.
NetworkProfile parse_network_profile(const std::string& text);

struct Topology {
  int nodes = 1;
  int gpus_per_node = 1;
  int ranks() const { return nodes * gpus_per_node; }
};

// Which algorithm the model chose for a message, after NCCL's rule: the one whose modelled
// time is lowest (NCCL's tuner does the same per collective and size, over its own latency
// and bandwidth tables: src/graph/tuning.cc).
enum class AllreduceAlgorithm { none, ring, hierarchical };
const char* algorithm_name(AllreduceAlgorithm algorithm);

struct AllreduceCost {
  double time_us = 0;
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::none;
};

class AllreduceCostModel {
 public:
  // bytes and time_us: the commbench rows (in place, float32 sum), measured with
  // measured_ranks ranks in one node; at least two rows with increasing sizes.
  AllreduceCostModel(std::vector<double> bytes, std::vector<double> time_us, int measured_ranks);

  // The measured curve at measured_ranks: linear interpolation of log(time) in log(bytes),
  // the ends extended (a constant time below the smallest size; above the largest, each
  // further byte at the cost per byte between the last two sizes).
  double measured_time_us(double bytes) const;
  // Ring allreduce on n ranks joined as the measured ones were (one node's links, or with a
  // curve measured between nodes, the network), scaled from the measured curve: the latency
  // (the smallest size's time) grows with the ring's 2(n-1) steps, the rest with the data
  // each rank moves, 2(n-1)/n of the message (nccl-tests' bus factor).
  double ring_us(double bytes, int ranks) const;
  // One step of that ring: its latency, and the time per byte a rank sends at a message
  // of `bytes` (the curve's data part over the 2(m-1)/m of the message each of the m
  // measured ranks sent). ring_us(b, n) = 2(n-1) step_latency_us() + 2(n-1)/n b us_per_byte_sent(b).
  double step_latency_us() const;
  double us_per_byte_sent(double bytes) const;
  // The cheaper of a ring over every rank (each step as slow as the slower of the node's
  // links and the network) and the hierarchical allreduce (reduce-scatter in the node, an
  // allreduce of 1/G of the message between nodes on each GPU's own link, all-gather in
  // the node). One node: ring_us. network is ignored for one node.
  AllreduceCost cost(double bytes, const Topology& topology, const NetworkProfile& network) const;

  // Leave-one-out relative error of the interpolation over the inner rows: the spread the
  // prediction intervals give the allreduce (standard deviation of log(measured/predicted)).
  double interpolation_log_sd() const;
  int measured_ranks() const { return measured_ranks_; }

 private:
  std::vector<double> log_bytes_, log_time_;
  int measured_ranks_;
};

}  // namespace ddpscale
