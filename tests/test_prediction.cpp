// Predicted scaling (prediction/): the allreduce cost model and the bucket/backward overlap
// simulation on hand-worked cases, the report-folder input, and the 95% prediction
// interval's coverage on simulated studies whose true step times are known.
#include "prediction/allreduce_cost.hpp"
#include "prediction/network_profiles.hpp"
#include "prediction/overlap_simulation.hpp"
#include "prediction/prediction_inputs.hpp"
#include "prediction/prediction_report.hpp"
#include "prediction/scaling_prediction.hpp"
#include "results/report/summary_export.hpp"
#include "results/store/csv_text.hpp"
#include "results/store/text_io.hpp"
#include "tests/prediction_test_helpers.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

namespace ddpscale {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TEST(NetworkProfile, ParsesBandwidthAndLatencyUnits) {
  const NetworkProfile p = parse_network_profile("400Gb/s,3us");
  EXPECT_DOUBLE_EQ(p.bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(p.latency_us, 3.0);
  EXPECT_DOUBLE_EQ(parse_network_profile("25GB/s,0.5ms").bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(parse_network_profile("25GB/s,0.5ms").latency_us, 500.0);
  EXPECT_DOUBLE_EQ(parse_network_profile("100Mb/s,50us").bytes_per_s, 12.5e6);
  for (const char* bad : {"400Gb/s", "400Gbps,3us", "fast,3us", "400Gb/s,3s", "0Gb/s,3us"})
    EXPECT_THROW(parse_network_profile(bad), std::invalid_argument) << bad;
}

// Measured points (bytes, us): (1e3, 10), (1e6, 100), (8e6, 730). In between, log(time) is
// linear in log(bytes), so 10^4.5 bytes take 10^1.5 us; below the curve the time stays 10 us;
// above it each byte costs what it cost between the last two sizes, 630 us / 7e6 bytes.
// The values pass through exp(log()), hence 1e-12 relative.
AllreduceCostModel three_point_curve() { return AllreduceCostModel({1e3, 1e6, 8e6}, {10, 100, 730}, 2); }

TEST(AllreduceCost, InterpolatesTheMeasuredCurveInLogLog) {
  const AllreduceCostModel model = three_point_curve();
  EXPECT_NEAR(model.measured_time_us(1e3), 10, 1e-12 * 10);
  EXPECT_NEAR(model.measured_time_us(1e6), 100, 1e-12 * 100);
  EXPECT_NEAR(model.measured_time_us(std::pow(10.0, 4.5)), std::pow(10.0, 1.5), 1e-12 * 100);
  EXPECT_NEAR(model.measured_time_us(10), 10, 1e-12 * 10);
  EXPECT_NEAR(model.measured_time_us(15e6), 730 + 7e6 * 630 / 7e6, 1e-12 * 2000);
}

// Measured on 2 ranks: latency 10 us (the smallest size), 1 MB in 100 us, so 90 us of it is
// the data. A 4-rank ring takes 2(4-1) = 6 steps where 2 ranks took 2 (latency x 3) and moves
// 2(3)/4 = 1.5 of the message where 2 ranks moved 1: 30 + 90 x 1.5 = 165 us.
TEST(AllreduceCost, RingScalesLatencyAndDataWithTheRankCount) {
  const AllreduceCostModel model = three_point_curve();
  EXPECT_NEAR(model.ring_us(1e6, 2), 100, 1e-12 * 100);
  EXPECT_NEAR(model.ring_us(1e6, 4), 165, 1e-12 * 165);
  EXPECT_NEAR(model.ring_us(1e6, 8), 10 * 7 + 90 * (7.0 / 8) / 0.5, 1e-12 * 300);
  EXPECT_EQ(model.ring_us(1e6, 1), 0);
  const AllreduceCost one_node = model.cost(1e6, {1, 4}, {});
  EXPECT_NEAR(one_node.time_us, 165, 1e-12 * 165);
  EXPECT_EQ(one_node.algorithm, AllreduceAlgorithm::ring);
}

// 2 nodes x 4 GPUs, 8 MB, a network of 1 GB/s (1e-3 us per byte) and 5 us. The node's links
// at 8 MB: 720 us of data on 2 ranks, each sending 2(2-1)/2 = 1 of the message: 9e-5 us per byte.
// Ring over 8 ranks: 14 steps x max(10/2, 5) us + 14/8 x 8e6 bytes x max(9e-5, 1e-3) us
//   = 70 + 14000 = 14070 us.
// Hierarchical: the 4-GPU ring inside the node (10 x 3 + 720 x 1.5 = 1110 us) plus the 2-node
// allreduce of 2 MB per GPU: 2 x 5 + 1 x 2e6 x 1e-3 = 2010 us; 3120 us, the cheaper.
TEST(AllreduceCost, BetweenNodesPicksTheCheaperOfRingAndHierarchical) {
  const AllreduceCostModel model = three_point_curve();
  NetworkProfile slow;
  slow.bytes_per_s = 1e9;
  slow.latency_us = 5;
  const AllreduceCost cost = model.cost(8e6, {2, 4}, slow);
  EXPECT_EQ(cost.algorithm, AllreduceAlgorithm::hierarchical);
  EXPECT_NEAR(cost.time_us, 1110 + 2010, 1e-12 * 3120);
  // One GPU per node: the ring crosses only the network (2 steps x 1 us + 8e6 x 1e-6 us),
  // and the hierarchy, with nothing inside a node, costs the same; the ring is kept.
  NetworkProfile fast;
  fast.bytes_per_s = 1e12;
  fast.latency_us = 1;
  const AllreduceCost flat = model.cost(8e6, {2, 1}, fast);
  EXPECT_EQ(flat.algorithm, AllreduceAlgorithm::ring);
  EXPECT_NEAR(flat.time_us, 2 * 1.0 + 8e6 * 1e-6, 1e-12 * 10);
}

// One step of the measured ring: latency 10 us over 2(2-1) = 2 steps, 5 us; at 8 MB, 720 us of
// data over the 8e6 x 2(2-1)/2 bytes each rank sent, 9e-5 us per byte. The ring on 4 ranks
// from the steps: 6 x 5 + 1.5 x 8e6 x 9e-5 = 30 + 1080 = 1110 us, as ring_us scales it.
TEST(AllreduceCost, RingStepsRebuildTheScaledRing) {
  const AllreduceCostModel model = three_point_curve();
  EXPECT_NEAR(model.step_latency_us(), 5, 1e-12 * 5);
  EXPECT_NEAR(model.us_per_byte_sent(8e6), 9e-5, 1e-12 * 9e-5);
  EXPECT_NEAR(model.ring_us(8e6, 4), 1110, 1e-12 * 1110);
  EXPECT_NEAR(6 * model.step_latency_us() + 1.5 * 8e6 * model.us_per_byte_sent(8e6), model.ring_us(8e6, 4), 1e-9);
}

// The network as a curve measured between 2 nodes (one rank each): (1e3, 20), (1e6, 100),
// (4e6, 400) us, linear in log-log between the last two, so 2 MB take 200 us; 8 MB, past
// the largest size, 400 + 4e6 x 300 / 3e6 = 800 us.
// 2 nodes x 4 GPUs, 8 MB: hierarchical = the node's 4-GPU ring (1110 us) + the 2-node
// allreduce of 2 MB per GPU, as measured (200 us) = 1310 us. The ring over 8 ranks goes at
// the slower step: latency max(5, 20/2) = 10 us, per byte max(9e-5, (800-20)/8e6 = 9.75e-5):
// 14 x 10 + 14/8 x 8e6 x 9.75e-5 = 140 + 1365 = 1505 us; the hierarchy is cheaper.
// 4 nodes: the 2 MB between 4 nodes, scaled as a ring: 20 x 3 + 180 x (3/4) / (1/2) = 330 us.
TEST(AllreduceCost, MeasuredNetworkCurveReplacesTheLinkProfile) {
  const AllreduceCostModel model = three_point_curve();
  NetworkProfile measured;
  measured.measured_curve = std::make_shared<AllreduceCostModel>(std::vector<double>{1e3, 1e6, 4e6},
                                                                 std::vector<double>{20, 100, 400}, 2);
  EXPECT_TRUE(measured.given());
  const AllreduceCost two_nodes = model.cost(8e6, {2, 4}, measured);
  EXPECT_EQ(two_nodes.algorithm, AllreduceAlgorithm::hierarchical);
  EXPECT_NEAR(two_nodes.time_us, 1110 + 200, 1e-9 * 1310);
  EXPECT_NEAR(model.cost(8e6, {4, 4}, measured).time_us, 1110 + 330, 1e-9 * 1440);
  // One GPU per node: both algorithms are the network alone; the 2-node ring is the curve itself.
  const AllreduceCost flat = model.cost(8e6, {2, 1}, measured);
  EXPECT_EQ(flat.algorithm, AllreduceAlgorithm::ring);
  EXPECT_NEAR(flat.time_us, 800, 1e-9 * 800);
  EXPECT_THROW(model.cost(8e6, {2, 4}, NetworkProfile{}), std::invalid_argument);
}

TEST(AllreduceCost, InterpolationErrorIsZeroOnAPowerLawAndKnownOnAKink) {
  const AllreduceCostModel power({1e3, 1e4, 1e5, 1e6}, {10, 20, 40, 80}, 2);
  EXPECT_NEAR(power.interpolation_log_sd(), 0, 1e-12);
  // The middle point of three, twice what the line through its neighbours says: log 2.
  const AllreduceCostModel kink({1e3, 1e4, 1e5}, {10, 40, 40}, 2);
  EXPECT_NEAR(kink.interpolation_log_sd(), std::log(40 / 20.0), 1e-12);
  EXPECT_THROW(AllreduceCostModel({1e3}, {10}, 2), std::invalid_argument);
  EXPECT_THROW(AllreduceCostModel({1e3, 1e2}, {10, 20}, 2), std::invalid_argument);
}

// ---- Named networks and measured network curves -----------------------------------------

TEST(NetworkProfiles, NamedNetworksFromYaml) {
  const std::string yaml =
      "networks:\n"
      "  fast:\n    bandwidth: 400Gb/s\n    latency: 3us\n    about: one NIC per GPU\n"
      "  slow:\n    bandwidth: 25Gb/s\n    latency: 0.03ms\n";
  const auto catalog = parse_network_catalog(yaml, "nets.yaml");
  ASSERT_EQ(catalog.size(), 2u);
  EXPECT_EQ(catalog[0].name, "fast");
  EXPECT_EQ(catalog[0].about, "one NIC per GPU");
  EXPECT_DOUBLE_EQ(catalog[0].profile.bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(catalog[0].profile.latency_us, 3);
  EXPECT_EQ(catalog[0].profile.text, "fast (400Gb/s,3us)");
  EXPECT_DOUBLE_EQ(catalog[1].profile.bytes_per_s, 3.125e9);
  EXPECT_DOUBLE_EQ(catalog[1].profile.latency_us, 30);
}

TEST(NetworkProfiles, CatalogErrorsNameTheFileLineAndKey) {
  auto message_of = [](const std::string& yaml) {
    try {
      parse_network_catalog(yaml, "nets.yaml");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of("nets: {}\n").rfind("nets.yaml: expected a map 'networks:'", 0), 0u);
  EXPECT_NE(message_of("networks:\n  a:\n    bandwidth: 1Gb/s\n").find("nets.yaml:3: network 'a' needs latency"),
            std::string::npos);
  EXPECT_NE(message_of("networks:\n  a:\n    bandwidth: 1Gb/s\n    latency: 1us\n    speed: 2\n")
                .find("unknown key 'speed'"),
            std::string::npos);
  EXPECT_NE(message_of("networks:\n  a:\n    bandwidth: 1Gbit\n    latency: 1us\n").find("network 'a': network profile"),
            std::string::npos);
}

// The repository's file: every entry parses, and --network NAME finds one; a profile with a
// comma is parsed without the file; an unknown name lists the names there are.
TEST(NetworkProfiles, RepositoryFileAndLookup) {
  const std::string path = std::string(DDPSCALE_SOURCE_DIR) + "/experiments/networks.yaml";
  const auto catalog = load_network_catalog(path);
  ASSERT_GE(catalog.size(), 4u);
  const NetworkProfile ndr = network_by_profile_or_name("ib-ndr-400", path);
  EXPECT_DOUBLE_EQ(ndr.bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(ndr.latency_us, 3);
  EXPECT_DOUBLE_EQ(network_by_profile_or_name("25GB/s,5us", "/no/such/file.yaml").bytes_per_s, 25e9);
  try {
    network_by_profile_or_name("token-ring", path);
    ADD_FAILURE() << "an unknown name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ib-ndr-400, "), std::string::npos) << e.what();
  }
  EXPECT_THROW(network_by_profile_or_name("ib-ndr-400", "/no/such/file.yaml"), std::invalid_argument);
}

TEST(NetworkProfiles, CommbenchCsvBetweenNodes) {
  TempDir dir;
  CommBenchTable table;
  table.bytes = {1e3, 1e6, 4e6};
  table.time_us = {20, 100, 400};
  table.algbw_gbs = table.busbw_gbs = {0, 0, 0};
  write_whole_file(dir.str() + "/between.csv", commbench_csv(table, 2));
  const NetworkProfile network = network_from_commbench(dir.str() + "/between.csv");
  ASSERT_TRUE(network.measured_curve);
  EXPECT_EQ(network.measured_curve->measured_ranks(), 2);
  EXPECT_NEAR(network.measured_curve->measured_time_us(2e6), 200, 1e-9);
  EXPECT_NE(network.text.find("between 2 nodes"), std::string::npos);
  write_whole_file(dir.str() + "/one.csv", commbench_csv(table, 1));
  EXPECT_THROW(network_from_commbench(dir.str() + "/one.csv"), std::runtime_error);
  write_whole_file(dir.str() + "/other.csv", "a,b\n1,2\n");
  EXPECT_THROW(network_from_commbench(dir.str() + "/other.csv"), std::runtime_error);
}

TEST(OverlapSimulation, BucketsFillFirstCapThenFullCapsThenTheRest) {
  EXPECT_EQ(bucket_sizes(10 * kMiB, 1 * kMiB, 4 * kMiB), (std::vector<double>{kMiB, 4 * kMiB, 4 * kMiB, kMiB}));
  EXPECT_EQ(bucket_sizes(0.5 * kMiB, 1 * kMiB, 4 * kMiB), (std::vector<double>{0.5 * kMiB}));
  EXPECT_TRUE(bucket_sizes(0, 1, 4).empty());
}

// Four buckets of 100 bytes from an even stream over a 1000 us backward: ready at 250, 500,
// 750 and 1000 us.
std::vector<SimulatedBucket> four_buckets() { return even_stream({100, 100, 100, 100}); }

TEST(OverlapSimulation, WithoutOverlapEverythingIsExposed) {
  const OverlapTimeline t = simulate_overlap(four_buckets(), {50, 50, 50, 50}, 1000, false);
  EXPECT_DOUBLE_EQ(t.allreduce_total_us, 200);
  EXPECT_DOUBLE_EQ(t.allreduce_exposed_us, 200);
}

// Each allreduce (50 us) ends before the next bucket is ready: only the last, ready when
// backward ends, is left after it.
TEST(OverlapSimulation, FastAllreducesHideAllButTheLastBucket) {
  const OverlapTimeline t = simulate_overlap(four_buckets(), {50, 50, 50, 50}, 1000, true);
  EXPECT_DOUBLE_EQ(t.allreduce_total_us, 200);
  EXPECT_DOUBLE_EQ(t.allreduce_exposed_us, 50);
}

// 400 us each: one stream, in order: 250-650, 650-1050, 1050-1450, 1450-1850; backward ends
// at 1000, so 850 us are exposed.
TEST(OverlapSimulation, SlowAllreducesQueueBehindEachOther) {
  const OverlapTimeline t = simulate_overlap(four_buckets(), {400, 400, 400, 400}, 1000, true);
  EXPECT_DOUBLE_EQ(t.allreduce_total_us, 1600);
  EXPECT_DOUBLE_EQ(t.allreduce_exposed_us, 850);
}

// ---- Buckets placed from recorded gradient timing ------------------------------------
//
// A 3-layer MLP, float32, registered fc1, fc2, fc3 (weight, then bias):
//   index  parameter   elements  bytes      ready (us after backward started)
//   0      fc1.weight  786432    3145728    950   the first layer's gradient comes last
//   1      fc1.bias    768       3072       800
//   2      fc2.weight  393216    1572864    450
//   3      fc2.bias    512       2048       400
//   4      fc3.weight  196608    786432     120
//   5      fc3.bias    384       1536       100
// 1,377,920 parameters, 5,511,680 bytes; the backward pass took 1000 us.
//
// Buckets as the reducer fills them, in reverse registration order, the first capped at
// 1 MiB (1,048,576 bytes), the others at 2 MiB (2,097,152):
//   bucket 0: #5 (1536), #4 (787968 in all), #3 (790016); #2 would make 2,362,880 > 1 MiB
//   bucket 1: #2 (1572864), #1 (1575936); #0 would make 4,721,664 > 2 MiB
//   bucket 2: #0 alone (3,145,728, larger than any cap)
// Each ready when its last gradient is: bucket 0 at max(100, 120, 400) = 400 us, bucket 1 at
// max(450, 800) = 800 us, bucket 2 at 950 us.
//
// Allreduce cost: the curve (4096 B, 1 us), (4 MiB, 1024 us) measured on 2 ranks is 1 us
// per 4096 bytes, exactly, in log-log interpolation; on the same 2 ranks the ring is the
// curve. Bucket 0: 790016 / 4096 = 192.875 us, bucket 1: 1575936 / 4096 = 384.75 us,
// bucket 2: 3145728 / 4096 = 768 us.
// One stream, in order: bucket 0 runs 400 - 592.875; bucket 1 800 - 1184.75; bucket 2 is
// ready at 950 but waits for the stream: 1184.75 - 1952.75. Backward ends at 1000, so
// 952.75 us are exposed, of 1345.625 us in all.
//
// The even stream the predictor falls back to cuts 5,511,680 bytes into 1 MiB, 2 MiB,
// 2 MiB and 268,800 bytes (256, 512, 512 and 65.625 us), ready at 1000 x their cumulative
// share of the bytes: 190.2, 570.7 (1000 x 3145728 / 5511680), 951.2 and 1000 us. Bucket 0
// ends at 446.2, before bucket 1 is ready; from there the stream stays busy: 570.7 + 512 +
// 512 + 65.625 = 1660.4, so 1000 x 3145728 / 5511680 + 89.625 = 660.4 us exposed, 292 us
// fewer than where the first layer's gradient really comes last.
GradientTiming three_layer_mlp_timing() {
  GradientTiming t;
  t.clock = "host";
  t.step = "last_warmup";
  t.backward_us = 1000;
  t.parameters = {{"fc1.weight", 786432, 4, 950}, {"fc1.bias", 768, 4, 800}, {"fc2.weight", 393216, 4, 450},
                  {"fc2.bias", 512, 4, 400},      {"fc3.weight", 196608, 4, 120}, {"fc3.bias", 384, 4, 100}};
  return t;
}

const BucketCaps kMlpCaps{1.0, 2.0};  // first_bucket_mb, bucket_mb

TEST(RecordedBuckets, PlacedAsTheReducerPlacesThemAndReadyWhenTheirLastGradientIs) {
  const auto buckets = recorded_buckets(three_layer_mlp_timing(), kMlpCaps, 0);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].parameters, (std::vector<size_t>{5, 4, 3}));
  EXPECT_EQ(buckets[1].parameters, (std::vector<size_t>{2, 1}));
  EXPECT_EQ(buckets[2].parameters, (std::vector<size_t>{0}));
  EXPECT_DOUBLE_EQ(buckets[0].bytes, 790016);
  EXPECT_DOUBLE_EQ(buckets[1].bytes, 1575936);
  EXPECT_DOUBLE_EQ(buckets[2].bytes, 3145728);
  EXPECT_DOUBLE_EQ(buckets[0].ready_fraction * 1000, 400);
  EXPECT_DOUBLE_EQ(buckets[1].ready_fraction * 1000, 800);
  EXPECT_DOUBLE_EQ(buckets[2].ready_fraction * 1000, 950);

  const OverlapTimeline t = simulate_overlap(buckets, {192.875, 384.75, 768}, 1000, true);
  EXPECT_DOUBLE_EQ(t.allreduce_total_us, 1345.625);
  EXPECT_DOUBLE_EQ(t.allreduce_exposed_us, 952.75);
}

// Buckets go out in index order: with fc2.bias (bucket 0) ready at 850 us, bucket 1, whose
// own gradients are in at 800, waits for bucket 0 and launches at 850 too.
TEST(RecordedBuckets, ABucketLaunchesNoEarlierThanTheOneAheadOfIt) {
  GradientTiming timing = three_layer_mlp_timing();
  timing.parameters[3].ready_us = 850;
  const auto buckets = recorded_buckets(timing, kMlpCaps, 0);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(buckets[0].ready_fraction * 1000, 850);
  EXPECT_DOUBLE_EQ(buckets[1].ready_fraction * 1000, 850);
  EXPECT_DOUBLE_EQ(buckets[2].ready_fraction * 1000, 950);
}

// A bfloat16 allreduce sends 2 bytes an element, but the reducer cuts buckets by the
// parameters' own float32 bytes: the same members, half the bytes on the wire.
TEST(RecordedBuckets, Bfloat16AllreduceKeepsTheMembersAndHalvesTheBytes) {
  const auto buckets = recorded_buckets(three_layer_mlp_timing(), kMlpCaps, 2.0);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[1].parameters, (std::vector<size_t>{2, 1}));
  EXPECT_DOUBLE_EQ(buckets[0].bytes, 395008);
  EXPECT_DOUBLE_EQ(buckets[2].bytes, 1572864);
}

// The same model through predict_scaling: a 1-GPU configuration with the timing above
// (step 3000 us, backward 1000 us) predicted on 2 GPUs with the 1 us per 4096 bytes curve.
// Without the timing (a study written before it was recorded) the even stream stands in,
// and a note says so.
StudyDigest three_layer_mlp_study(bool with_timing) {
  MeasuredConfig c;
  c.id = "mlp3_b64_w1";
  c.params.model = "mlp3";
  c.params.parameters = 1377920;
  c.params.batch_per_rank = c.params.global_batch = 64;
  c.params.world_size = 1;
  c.params.bucket_mb = 2;
  c.params.overlap = true;
  c.step_us = {3000, 0, 5};
  c.backward_us = {1000, 0, 5};
  c.throughput = {64 / 3000e-6, 0, 5};
  if (with_timing) c.gradient_timing = three_layer_mlp_timing();
  StudyDigest study;
  study.configs.push_back(c);
  study.commbench_bytes = {4096, 4 * kMiB};
  study.commbench_time_us = {1, 1024};
  study.commbench_ranks = 2;
  return study;
}

TEST(RecordedBuckets, PredictionUsesTheRecordedTimingAndFallsBackToTheEvenStream) {
  PredictOptions options;
  options.targets = {{1, 2}};
  options.draws = 100;
  const ScalingPrediction recorded = predict_scaling(three_layer_mlp_study(true), options);
  ASSERT_EQ(recorded.predictions.size(), 1u);
  const Prediction& p = recorded.predictions[0];
  EXPECT_TRUE(p.recorded_gradient_timing);
  EXPECT_NEAR(p.allreduce_total_us, 1345.625, 1e-6);
  EXPECT_NEAR(p.allreduce_exposed_us, 952.75, 1e-6);
  EXPECT_NEAR(p.step_us.point, 3952.75, 1e-6);
  EXPECT_TRUE(recorded.notes.empty());
  EXPECT_NE(prediction_csv(recorded).find(",recorded\n"), std::string::npos);

  const ScalingPrediction even = predict_scaling(three_layer_mlp_study(false), options);
  ASSERT_EQ(even.predictions.size(), 1u);
  EXPECT_FALSE(even.predictions[0].recorded_gradient_timing);
  EXPECT_NEAR(even.predictions[0].allreduce_exposed_us, 1000.0 * 3145728 / 5511680 + 89.625, 1e-6);
  ASSERT_EQ(even.notes.size(), 1u);
  EXPECT_NE(even.notes[0].find("one even stream of gradients over backward"), std::string::npos) << even.notes[0];
  EXPECT_NE(prediction_csv(even).find(",even_stream\n"), std::string::npos);
}

TEST(PredictionInputs, CsvFieldsWithQuotesAndCommas) {
  const auto rows = parse_csv("a,b,c\n1,\"x, \"\"y\"\"\",\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "x, \"y\"", ""}));
  EXPECT_THROW(parse_csv("a,\"b\n"), std::runtime_error);  // ends inside a quoted field
}

// ---- Coverage of the 95% interval on simulated studies -------------------------------

double draw_normal(std::mt19937_64& generator) {
  std::normal_distribution<double> normal(0.0, 1.0);
  return normal(generator);
}

double standard_error_of(const PhaseStats& s) { return s.sd / std::sqrt(static_cast<double>(s.n)); }

// A configuration measured `runs` times: run medians of the step around `true_step_us`,
// spread sd_fraction of it.
MeasuredConfig simulated_config(const std::string& model, int world_size, double true_step_us, double backward_us,
                                double sd_fraction, int runs, std::mt19937_64& generator) {
  std::vector<double> steps, backwards;
  for (int r = 0; r < runs; ++r) {
    steps.push_back(true_step_us * (1 + sd_fraction * draw_normal(generator)));
    backwards.push_back(backward_us * (1 + sd_fraction * draw_normal(generator)));
  }
  return measured_config(model, 10'000'000, 64, world_size, steps, backwards);
}

// The model holds by construction here (a power-law allreduce curve that its interpolation
// reproduces exactly, the N-rank step = the 1-rank step + the simulated exposed allreduce),
// so the model-only interval should cover the measured mean about 95% of the time. Over
// 400 simulated studies the count of misses is binomial: 95% +- 2 x 1.1%, so the issue's
// band of 90% to 99% holds unless the interval is wrong.
TEST(PredictionInterval, CoversTheMeasuredMeanOfSimulatedStudies) {
  std::mt19937_64 generator(4242);
  const std::vector<double> bytes = {1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  std::vector<double> times;
  for (double b : bytes) times.push_back(2.0 * std::pow(b, 0.6));  // exact in log-log
  const AllreduceCostModel curve(bytes, times, 2);
  const double step1 = 8000, backward = 3000, sd_fraction = 0.03;
  const auto buckets = bucket_sizes(4e7, kMiB, 25 * kMiB);
  std::vector<double> bucket_us;
  for (double b : buckets) bucket_us.push_back(curve.cost(b, {1, 2}, {}).time_us);
  const double exposed = simulate_overlap(even_stream(buckets), bucket_us, backward, true).allreduce_exposed_us;
  ASSERT_GT(exposed, 100.0);  // the prediction has something to predict

  PredictOptions options;
  options.draws = 1000;
  int covered = 0;
  const int studies = 400;
  for (int s = 0; s < studies; ++s) {
    StudyDigest study;
    study.commbench_bytes = bytes;
    study.commbench_time_us = times;
    study.commbench_ranks = 2;
    study.configs.push_back(simulated_config("m", 1, step1, backward, sd_fraction, 20, generator));
    study.configs.push_back(simulated_config("m", 2, step1 + exposed, backward, sd_fraction, 20, generator));
    options.seed = 1000 + static_cast<uint64_t>(s);
    const ScalingPrediction result = predict_scaling(study, options);
    ASSERT_EQ(result.validation.size(), 1u);
    covered += result.validation[0].model_only_covered;
  }
  const double coverage = static_cast<double>(covered) / studies;
  EXPECT_GE(coverage, 0.90);
  EXPECT_LE(coverage, 0.99);
}

// One slow run among six short ones puts a step's standard error near its mean (a CPU study's
// mlp-medium at batch 8 read 1,271 us with an sd of 1,553 us over 6 runs). Every drawn step
// and throughput stays positive: the interval of a throughput has a positive low end, and
// the point lies inside it.
TEST(PredictionInterval, StaysPositiveWhenARunsSpreadExceedsItsMean) {
  const std::vector<double> bytes = {1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  std::vector<double> times;
  for (double b : bytes) times.push_back(2.0 * std::pow(b, 0.6));
  const auto config = [](int world, const std::vector<double>& steps) {
    std::vector<double> backwards;
    for (double step : steps) backwards.push_back(step / 2);
    return measured_config("m", 250'000, 8, world, steps, backwards);
  };
  StudyDigest study;
  study.commbench_bytes = bytes;
  study.commbench_time_us = times;
  study.commbench_ranks = 2;
  study.configs.push_back(config(1, {300, 320, 310, 4000, 305, 315}));
  study.configs.push_back(config(2, {420, 5200, 430, 410, 425, 440}));
  ASSERT_GT(standard_error_of(study.configs[0].step_us), study.configs[0].step_us.mean / 3);
  PredictOptions options;
  options.draws = 2000;
  const ScalingPrediction result = predict_scaling(study, options);
  ASSERT_EQ(result.validation.size(), 1u);
  const Prediction& p = result.validation[0].model_only;
  EXPECT_GT(p.step_us.interval95.low, 0);
  EXPECT_GT(p.throughput.interval95.low, 0);
  EXPECT_GT(p.speedup.interval95.low, 0);
  EXPECT_TRUE(p.throughput.interval95.contains(p.throughput.point))
      << p.throughput.interval95.low << " " << p.throughput.point << " " << p.throughput.interval95.high;
}

// A report folder (summary.csv + commbench.csv) gives a digest; the prediction of a study
// with one 2-rank configuration writes its files with its self-check row, and its model
// error as a node_sharing block.
TEST(PredictionInputs, ReportFolderToPredictionFiles) {
  TempDir dir;
  const std::string header =
      "id,model,parameters,scaling,batch_per_rank,global_batch,world_size,optimizer,learning_rate,dtype,exec,"
      "allreduce_dtype,bucket_mb,overlap,nccl_profile,device,backend,measured_steps,samples_per_s_n,samples_per_s_mean,"
      "samples_per_s_sd,backward_us_n,backward_us_mean,backward_us_sd,step_us_n,step_us_mean,step_us_sd\n";
  write_whole_file(dir.str() + "/summary.csv",
                   header +
                       "m_w1,m,1000000,weak,8,8,1,adam,0.001,float32,eager,float32,25,true,default,cpu,none,100,10,8000,"
                       "80,10,300,5,10,1000,10\n"
                       "m_w2,m,1000000,weak,8,16,2,adam,0.001,float32,eager,float32,25,true,default,cpu,mpi,100,10,"
                       "15000,150,10,300,5,10,1060,12\n");
  CommBenchTable curve;
  curve.bytes = {1e3, 1e6, 4e6};
  curve.time_us = {10, 50, 150};
  curve.algbw_gbs = curve.busbw_gbs = {0, 0, 0};
  write_whole_file(dir.str() + "/commbench.csv", commbench_csv(curve, 2));
  const StudyDigest digest = load_study_digest(dir.str());
  ASSERT_EQ(digest.configs.size(), 2u);
  EXPECT_EQ(digest.commbench_ranks, 2);
  EXPECT_EQ(digest.configs[1].step_us.mean, 1060);
  PredictOptions options;
  options.targets = {{1, 4}};
  const ScalingPrediction result = predict_scaling(digest, options);
  ASSERT_EQ(result.validation.size(), 1u);
  // 4 MB of gradients in one 1 MiB and one 3 MiB bucket, both ready by the end of a 300 us
  // backward (the first at 75 us): the last one's allreduce is what is left exposed.
  const Prediction& two = result.validation[0].model_only;
  EXPECT_GT(two.allreduce_exposed_us, 0.0);
  EXPECT_NEAR(two.step_us.point, 1000 + two.allreduce_exposed_us, 1e-9);
  ASSERT_EQ(result.predictions.size(), 1u);
  EXPECT_EQ(result.predictions[0].topology.gpus_per_node, 4);
  EXPECT_LT(result.predictions[0].efficiency.point, 1.0);
  const PredictionFiles files = write_prediction(result, options, dir.str(), dir.str() + "/out", false);
  EXPECT_EQ(files.plots_note, "plots were not asked for (--no-plots)");
  EXPECT_EQ(files.files.size(), 6u);
  for (const char* name : {"predict.md", "predict.html", "predict.csv", "validation.csv", "predict.json",
                           "node-sharing.yaml"})
    EXPECT_TRUE(std::filesystem::exists(dir.str() + "/out/" + name)) << name;
  // The one 2-GPU configuration's model error, as a named machine's node_sharing block.
  const std::string block = read_whole_file(dir.str() + "/out/node-sharing.yaml");
  EXPECT_NE(block.find("    node_sharing:\n      gpus: 2\n"), std::string::npos) << block;
  ASSERT_EQ(result.measured_node_sharing.costs.size(), 1u);
  ASSERT_EQ(result.measured_node_sharing.costs[0].step_errors.size(), 1u);
  const size_t list = block.find("step_errors: [");
  ASSERT_NE(list, std::string::npos) << block;
  // Written with 4 significant digits: rounding moves it by at most half a unit of the 4th
  // digit, 5e-4 of its magnitude.
  const double written = std::stod(block.substr(list + 14));
  const double error = result.measured_node_sharing.costs[0].step_errors[0];
  EXPECT_NEAR(written, error, 5e-4 * std::abs(error) + 1e-12) << block;
  EXPECT_NEAR(error, 1060 / two.step_us.point - 1, 1e-12);  // the measured 2-GPU step over the model's
  // The self-check row, as each renderer escapes the id.
  EXPECT_NE(read_whole_file(dir.str() + "/out/predict.md").find("| m\\_w2 | 2 |"), std::string::npos);
  EXPECT_NE(read_whole_file(dir.str() + "/out/predict.html").find("<td>m_w2</td>"), std::string::npos);
  EXPECT_THROW(load_study_digest(dir.str() + "/out"), std::runtime_error);
}

// ---- The document and its plots ----------------------------------------------------------

Prediction predicted(const std::string& model, int64_t batch, Topology topology, double speedup, double low, double high) {
  Prediction p;
  p.model = model;
  p.parameters = 1000;
  p.scaling = "weak";
  p.exec = "eager";
  p.batch_per_rank = batch;
  p.topology = topology;
  p.speedup = {speedup, {low, high}};
  const double ranks = topology.ranks();
  p.efficiency = {speedup / ranks, {low / ranks, high / ranks}};
  return p;
}

// Model m at batch 64 on 1x8, 1x4 (out of order), 2x8 and 2x4 (a second topology of 8 GPUs),
// and at batch 32 on 1x4; model n on 1x4: per model a speedup and an efficiency plot, a line
// per batch through every N in order, the second 8-GPU topology on a line of its own.
TEST(PredictionPlots, SpeedupAndEfficiencyAgainstRanksPerModel) {
  ScalingPrediction result;
  result.predictions = {predicted("m@1M", 64, {1, 8}, 6, 5, 7), predicted("m@1M", 64, {1, 4}, 3.5, 3, 4),
                        predicted("m@1M", 64, {2, 8}, 12, 10, 14), predicted("m@1M", 64, {2, 4}, 5, 4, 6),
                        predicted("m@1M", 32, {1, 4}, 3, 2.5, 3.5), predicted("n", 64, {1, 4}, 2, 1.5, 2.5)};
  const auto plots = prediction_plots(result);
  ASSERT_EQ(plots.size(), 4u);
  const LinePlot& speedup = plots[0].first;
  EXPECT_EQ(speedup.name, "predicted_speedup_m_1M__weak_scaling__eager");
  EXPECT_TRUE(speedup.log_x);
  EXPECT_TRUE(speedup.draw_reference_line);
  ASSERT_EQ(speedup.series.size(), 3u);
  EXPECT_EQ(speedup.series[0].label, "batch 64/GPU");
  EXPECT_EQ(speedup.series[0].x, (std::vector<double>{4, 8, 16}));
  EXPECT_EQ(speedup.series[0].y, (std::vector<double>{3.5, 6, 12}));
  EXPECT_EQ(speedup.series[0].y_low, (std::vector<double>{3, 5, 10}));
  EXPECT_EQ(speedup.series[0].y_high, (std::vector<double>{4, 7, 14}));
  EXPECT_EQ(speedup.series[1].label, "batch 64/GPU, 2x4");
  EXPECT_EQ(speedup.series[1].x, (std::vector<double>{8}));
  EXPECT_EQ(speedup.series[2].label, "batch 32/GPU");
  const LinePlot& efficiency = plots[1].first;
  EXPECT_EQ(efficiency.name, "predicted_efficiency_m_1M__weak_scaling__eager");
  EXPECT_EQ(efficiency.series[0].y, (std::vector<double>{3.5 / 4, 6.0 / 8, 12.0 / 16}));
  EXPECT_EQ(efficiency.series[0].y_high, (std::vector<double>{4.0 / 4, 7.0 / 8, 14.0 / 16}));
  EXPECT_NE(plots[1].second.find("95% prediction intervals"), std::string::npos);
  EXPECT_EQ(plots[2].first.series.size(), 1u);  // model n
}

// The blocks predict.md and the report's section are made of: the self-check, the table of
// predictions with its numbers as predict.csv rounds them, every plot handed to add_plot, the
// break-even table; a sub-heading level of the caller's choosing.
TEST(PredictionDocument, BlocksCarryTheTablesAndEveryPlot) {
  ScalingPrediction result;
  result.predictions = {predicted("m", 64, {1, 4}, 3.5, 3, 4), predicted("m", 64, {1, 8}, 6, 5, 7)};
  result.predictions[0].step_us = {1234.56, {1200, 1300}};
  PredictOptions options;
  ReportDocument doc;
  std::vector<std::string> drawn;
  add_prediction_blocks(doc, result, options, "studies/x", 3,
                        [&](const LinePlot& plot, const std::string&) { drawn.push_back(plot.name); });
  EXPECT_EQ(drawn, (std::vector<std::string>{"predicted_speedup_m__weak_scaling__eager",
                                             "predicted_efficiency_m__weak_scaling__eager"}));
  std::vector<std::string> headings;
  const ReportTable* predictions = nullptr;
  for (const ReportBlock& block : doc.blocks()) {
    if (block.kind == ReportBlock::Kind::heading) {
      EXPECT_EQ(block.level, 3);
      headings.push_back(block.text);
    }
    if (block.kind == ReportBlock::Kind::table && block.table.header.at(0) == "model") predictions = &block.table;
  }
  EXPECT_EQ(headings, (std::vector<std::string>{"Self-check against the study's own measurements", "Predictions",
                                                "Predicted break-even model size"}));
  ASSERT_NE(predictions, nullptr);
  ASSERT_EQ(predictions->rows.size(), 2u);
  EXPECT_EQ(predictions->rows[0][5], "1x4");
  EXPECT_EQ(predictions->rows[0][8], "1234.6 [1200.0, 1300.0]");
  EXPECT_EQ(predictions->rows[0][10], "3.50 [3.00, 4.00]");
  EXPECT_EQ(predictions->rows[1][11], "0.750 [0.625, 0.875]");
}

}  // namespace
}  // namespace ddpscale
