// Named allreduce curves (prediction/interconnect_curves) and what --allreduce does with one:
// nccl-tests' bus-bandwidth conversion on hand-worked numbers, the repository's
// experiments/interconnects.yaml (every curve with its source, the H100 one equal to the
// commbench.csv it was copied from), a study of 1 GPU predicted to 2, 4 and 8 GPUs from a
// curve, and the leave-one-model-out self-check.
#include "prediction/interconnect_curves.hpp"
#include "prediction/prediction_inputs.hpp"
#include "prediction/scaling_prediction.hpp"
#include "results/report/summary_export.hpp"
#include "results/store/text_io.hpp"
#include "tests/error_message.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace ddpscale {
namespace {

const std::string kRepositoryCatalog = std::string(DDPSCALE_SOURCE_DIR) + "/experiments/interconnects.yaml";

using testing_errors::message_of;

// busbw = algbw x 2(n-1)/n, so algbw = busbw x n / (2(n-1)). 1 GiB on 8 GPUs at a busbw of
// 100 GB/s: algbw = 100 x 8/14 = 57.142857 GB/s, time = 1073741824 / 57.142857e9 s
// = 18790.48192 us. On 2 GPUs algbw = busbw: 1e9 bytes at 100 GB/s take 10000 us.
TEST(InterconnectCurves, BusBandwidthToTimeByTheRingFactor) {
  EXPECT_NEAR(allreduce_time_us_from_busbw(1073741824.0, 100, 8), 18790.48192, 1e-5);
  EXPECT_NEAR(allreduce_time_us_from_busbw(1e9, 100, 2), 10000, 1e-9);
  EXPECT_THROW(allreduce_time_us_from_busbw(1e9, 100, 1), std::invalid_argument);
  EXPECT_THROW(allreduce_time_us_from_busbw(1e9, 0, 8), std::invalid_argument);
}

// A curve given in bus bandwidth on 8 GPUs becomes times: 1 KB at 0.0875 GB/s takes
// 1000 x (14/8) / 87.5 = 20 us (the latency), 1e9 bytes at 100 GB/s 1e9 x (14/8) / 1e5
// = 17500 us. The predictor's ring gives the same curve back on 8 GPUs; on 4 it keeps the
// bus bandwidth: the latency over 6 steps instead of 14, the data part (17480 us) over the
// (3/4) of the message each rank moves instead of (7/8).
TEST(InterconnectCurves, BusBandwidthEntryCarriedToOtherCounts) {
  const std::string yaml =
      "interconnects:\n"
      "  eight:\n"
      "    about: 8 GPUs on a switch\n    measured: 2026-01-01\n    source: a page, 2026-01-02\n"
      "    gpus: 8\n    bytes: [1000, 1000000000]\n    busbw_gbs: [0.0875, 100]\n";
  const auto catalog = parse_interconnect_catalog(yaml, "ic.yaml");
  ASSERT_EQ(catalog.size(), 1u);
  const AllreduceCurve& curve = catalog[0].curve;
  EXPECT_EQ(curve.ranks, 8);
  EXPECT_NEAR(curve.time_us[0], 20, 1e-9);     // 1000 x 14/8 / 87.5 bytes per us
  EXPECT_NEAR(curve.time_us[1], 17500, 1e-6);  // 1e9 x 14/8 / 100e3 bytes per us
  EXPECT_EQ(curve.source, "eight: 8 GPUs on a switch (a page, 2026-01-02; measured 2026-01-01)");
  const AllreduceCostModel model(curve.bytes, curve.time_us, curve.ranks);
  EXPECT_NEAR(model.ring_us(1e9, 8), 17500, 1e-6);
  EXPECT_NEAR(model.ring_us(1e9, 4), 20 * 3.0 / 7 + 17480 * (3.0 / 4) / (7.0 / 8), 1e-6);
}

TEST(InterconnectCurves, EntryErrorsNameTheFileLineAndWhatToWrite) {
  const std::string head = "interconnects:\n  a:\n    about: x\n    measured: today\n";
  EXPECT_EQ(message_of([] { parse_interconnect_catalog("networks: {}\n", "ic.yaml"); })
                .rfind("ic.yaml: expected a map 'interconnects:'", 0),
            0u);
  EXPECT_NE(message_of([&] { parse_interconnect_catalog(head + "    gpus: 2\n    bytes: [1, 2]\n    time_us: [1, 2]\n", "ic.yaml"); })
                .find("ic.yaml:3: interconnect 'a' needs source"),
            std::string::npos);
  const std::string sourced = head + "    source: s\n    gpus: 2\n    bytes: [1, 2]\n";
  EXPECT_NE(message_of([&] { parse_interconnect_catalog(sourced + "    time_us: [1, 2]\n    busbw_gbs: [1, 2]\n", "ic.yaml"); })
                .find("needs one of time_us"),
            std::string::npos);
  EXPECT_NE(message_of([&] { parse_interconnect_catalog(sourced + "    time_us: [1]\n", "ic.yaml"); })
                .find("has 2 sizes and 1 times"),
            std::string::npos);
  EXPECT_NE(message_of([&] { parse_interconnect_catalog(sourced + "    time_us: [1, 2]\n    speed: 3\n", "ic.yaml"); })
                .find("unknown key 'speed'"),
            std::string::npos);
  EXPECT_NE(message_of([&] { parse_interconnect_catalog(head + "    source: s\n    gpus: 2\n    bytes: [2, 1]\n"
                                                               "    time_us: [1, 2]\n", "ic.yaml"); })
                .find("sizes must increase"),
            std::string::npos);
}

// The repository's file: every curve says its machine, date and source and is a valid curve
// on 2 or more GPUs; the H100 curve holds exactly the numbers of the commbench.csv it names.
TEST(InterconnectCurves, RepositoryFileHasASourceForEveryCurve) {
  const auto catalog = load_interconnect_catalog(kRepositoryCatalog);
  ASSERT_GE(catalog.size(), 2u);
  for (const NamedInterconnect& ic : catalog) {
    EXPECT_FALSE(ic.about.empty()) << ic.name;
    EXPECT_FALSE(ic.source.empty()) << ic.name;
    EXPECT_EQ(ic.measured.size(), 10u) << ic.name << ": measured as YYYY-MM-DD, got " << ic.measured;
    EXPECT_GE(ic.curve.ranks, 2) << ic.name;
    EXPECT_GE(ic.curve.bytes.size(), 5u) << ic.name;
  }
  EXPECT_EQ(interconnect_names(kRepositoryCatalog), "h200-nvlink-2gpu, h200-nvlink-4gpu, h100-nvlink-2gpu");

  const AllreduceCurve h100 = allreduce_curve_by_name_or_file("h100-nvlink-2gpu", kRepositoryCatalog);
  const CommbenchCurve measured =
      read_commbench_csv(std::string(DDPSCALE_SOURCE_DIR) + "/docs/results/h100x2/seed-study/commbench.csv");
  EXPECT_EQ(h100.bytes, measured.bytes);
  EXPECT_EQ(h100.time_us, measured.time_us);
  EXPECT_EQ(h100.ranks, measured.ranks);
  EXPECT_NE(h100.source.find("docs/results/h100x2/seed-study/commbench.csv"), std::string::npos) << h100.source;

  const AllreduceCurve h200 = allreduce_curve_by_name_or_file("h200-nvlink-2gpu", kRepositoryCatalog);
  ASSERT_EQ(h200.bytes.size(), 15u);  // 8 B to 2 GiB by 4x, as the log's commbench section
  EXPECT_DOUBLE_EQ(h200.bytes.back(), 2147483648.0);
  EXPECT_DOUBLE_EQ(h200.time_us.back(), 6280.78);
  EXPECT_NE(h200.source.find("docs/results/h200x2/allreduce/allreduce.log"), std::string::npos) << h200.source;

  // The 4-GPU machine: its curve on 4 ranks, as allreduce.log's commbench section prints it
  // (1 KiB to 1 GiB by 4x), and a cost of sharing the node measured at 2 and at 4 GPUs, so a
  // study of one GPU predicted for 4 from it takes the cost measured at 4, not carried.
  const AllreduceCurve h200x4 = allreduce_curve_by_name_or_file("h200-nvlink-4gpu", kRepositoryCatalog);
  EXPECT_EQ(h200x4.ranks, 4);
  ASSERT_EQ(h200x4.bytes.size(), 11u);
  EXPECT_DOUBLE_EQ(h200x4.bytes.front(), 1024.0);
  EXPECT_DOUBLE_EQ(h200x4.bytes.back(), 1073741824.0);
  EXPECT_DOUBLE_EQ(h200x4.time_us.back(), 4526.96);
  EXPECT_NE(h200x4.source.find("docs/results/h200x4/allreduce/allreduce.log"), std::string::npos) << h200x4.source;
  const auto x4 = std::find_if(catalog.begin(), catalog.end(), [](const NamedInterconnect& ic) { return ic.name == "h200-nvlink-4gpu"; });
  ASSERT_NE(x4, catalog.end());
  ASSERT_EQ(x4->node_sharing.costs.size(), 2u);
  EXPECT_EQ(x4->node_sharing.costs[0].gpus, 2);
  EXPECT_EQ(x4->node_sharing.costs[1].gpus, 4);
  EXPECT_EQ(node_sharing_at(x4->node_sharing, 4).step_errors, x4->node_sharing.costs[1].step_errors);
  EXPECT_EQ(node_sharing_at(x4->node_sharing, 2).step_errors, x4->node_sharing.costs[0].step_errors);
}

TEST(InterconnectCurves, NameOrCommbenchCsv) {
  TempDir dir;
  CommBenchTable table;
  table.bytes = {1e3, 1e6};
  table.time_us = {10, 100};
  table.algbw_gbs = table.busbw_gbs = {0, 0};
  write_whole_file(dir.str() + "/four.csv", commbench_csv(table, 4));
  const AllreduceCurve curve = allreduce_curve_by_name_or_file(dir.str() + "/four.csv", kRepositoryCatalog);
  EXPECT_EQ(curve.ranks, 4);
  EXPECT_EQ(curve.time_us, (std::vector<double>{10, 100}));
  EXPECT_EQ(curve.source, "commbench.csv measured on 4 GPUs (" + dir.str() + "/four.csv)");
  write_whole_file(dir.str() + "/one.csv", commbench_csv(table, 1));
  EXPECT_NE(message_of([&] { allreduce_curve_by_name_or_file(dir.str() + "/one.csv", kRepositoryCatalog); })
                .find("an allreduce curve needs 2 or more GPUs"),
            std::string::npos);
  EXPECT_NE(message_of([] { allreduce_curve_by_name_or_file("token-ring", kRepositoryCatalog); })
                .find("is not in " + kRepositoryCatalog + " (it has: h200-nvlink-2gpu, h200-nvlink-4gpu, h100-nvlink-2gpu)"),
            std::string::npos);
  EXPECT_NE(interconnect_names("/no/such/file.yaml").find("none: no interconnects file"), std::string::npos);
}

// A 1-GPU configuration of 250,000 parameters: 1e6 bytes of float32 gradients, one bucket
// under the engine's 1 MiB first cap.
MeasuredConfig one_gpu_config(const std::string& model, int64_t batch, double step_us, double backward_us) {
  MeasuredConfig c;
  c.id = model + "_b" + std::to_string(batch) + "_w1";
  c.params.model = model;
  c.params.parameters = 250'000;
  c.params.scaling = "weak";
  c.params.exec = "eager";
  c.params.batch_per_rank = c.params.global_batch = batch;
  c.params.world_size = 1;
  c.params.bucket_mb = 25;
  c.params.overlap = true;
  c.params.allreduce_dtype = "float32";
  c.step_us = {step_us, 0.02 * step_us, 10};
  c.backward_us = {backward_us, 0.02 * backward_us, 10};
  const double throughput = static_cast<double>(batch) * 1e6 / step_us;
  c.throughput = {throughput, 0.02 * throughput, 10};
  return c;
}

// Measured on 2 GPUs: 10 us at 1 KB (the latency), 100 us at 1 MB. The one 1e6-byte bucket on
// N GPUs: 10 (N-1) + 90 x ((N-1)/N) / (1/2) us: 100 on 2, 165 on 4, 227.5 on 8. The backward
// pass (500 us) ends before nothing is left to hide it: the whole allreduce is exposed, so
// the step is 1000 + that.
TEST(InterconnectCurves, OneGpuStudyPredictedFromTheGivenCurve) {
  StudyDigest study;
  study.configs.push_back(one_gpu_config("m", 32, 1000, 500));
  PredictOptions options;
  options.targets = {{1, 2}, {1, 4}, {1, 8}};
  options.draws = 500;
  EXPECT_THROW(predict_scaling(study, options), std::invalid_argument);  // no curve at all
  options.allreduce = {{1e3, 1e6, 8e6}, {10, 100, 730}, 2, "two-gpu test curve"};
  const ScalingPrediction result = predict_scaling(study, options);
  EXPECT_EQ(result.allreduce_curve, "two-gpu test curve");
  EXPECT_EQ(result.allreduce_curve_ranks, 2);
  EXPECT_EQ(result.summary.configurations, 0u);  // nothing measured on N GPUs to check against
  ASSERT_EQ(result.predictions.size(), 3u);
  const double expected_allreduce[] = {100, 165, 227.5};
  for (size_t i = 0; i < 3; ++i) {
    const Prediction& p = result.predictions[i];
    EXPECT_NEAR(p.allreduce_total_us, expected_allreduce[i], 1e-9) << p.topology.gpus_per_node << " GPUs";
    EXPECT_NEAR(p.allreduce_exposed_us, expected_allreduce[i], 1e-9);
    EXPECT_NEAR(p.step_us.point, 1000 + expected_allreduce[i], 1e-9);
    EXPECT_LT(p.step_us.interval95.low, p.step_us.point);
    EXPECT_GT(p.step_us.interval95.high, p.step_us.point);
    EXPECT_LT(p.speedup.interval95.low, p.speedup.point);
    EXPECT_GT(p.speedup.interval95.high, p.speedup.point);
    EXPECT_NEAR(p.speedup.point, p.topology.ranks() * 1000 / (1000 + expected_allreduce[i]), 1e-9);
  }
  // A study's own curve is replaced by the given one.
  study.commbench_bytes = {1e3, 1e6};
  study.commbench_time_us = {1, 2};
  study.commbench_ranks = 2;
  EXPECT_NEAR(predict_scaling(study, options).predictions[2].allreduce_total_us, 227.5, 1e-9);
  options.allreduce = {};
  EXPECT_EQ(predict_scaling(study, options).allreduce_curve, "the study's own commbench, measured on 2 GPUs");
}

// An N-GPU twin whose measured step is the model's times (1 + error), its throughput what the
// 1-GPU run's wall-time factor gives that step.
MeasuredConfig two_gpu_twin(const MeasuredConfig& one, double model_step_us, double error) {
  MeasuredConfig c = one;
  c.id = one.params.model + "_b" + std::to_string(one.params.batch_per_rank) + "_w2";
  c.params.world_size = 2;
  c.params.global_batch = 2 * one.params.batch_per_rank;
  const double step = model_step_us * (1 + error);
  c.step_us = {step, 0.0, 10};
  c.throughput = {one.throughput.mean * one.step_us.mean * 2 / step, 0.0, 10};
  return c;
}

// Model a (3 configurations) runs 20% slower on 2 GPUs than the model says, model b (2) as
// it says. Leave one out calibrates a's first configuration by {0.2, 0.2, 0, 0}: median 0.1,
// throughput error 1.2/1.1 - 1. Leave one model out calibrates it by b's {0, 0} alone: error
// 1.2/1.0 - 1 = 0.2; b's by a's {0.2, 0.2, 0.2}: 1.0/1.2 - 1. Median |error| over the five: 0.2.
TEST(InterconnectCurves, LeaveOneModelOutCalibratesFromTheOtherModelsOnly) {
  StudyDigest study;
  study.commbench_bytes = {1e3, 1e6, 8e6};
  study.commbench_time_us = {10, 100, 730};
  study.commbench_ranks = 2;
  const std::vector<std::pair<std::string, int64_t>> configs = {{"a", 8}, {"a", 16}, {"a", 32}, {"b", 8}, {"b", 16}};
  for (const auto& [model, batch] : configs) study.configs.push_back(one_gpu_config(model, batch, 1000 + batch, 500));
  PredictOptions options;
  options.draws = 500;
  for (size_t i = 0; i < configs.size(); ++i) {
    const double model_step = study.configs[i].step_us.mean + 100;  // one bucket on 2 GPUs, all exposed
    study.configs.push_back(two_gpu_twin(study.configs[i], model_step, configs[i].first == "a" ? 0.2 : 0.0));
  }
  const ScalingPrediction result = predict_scaling(study, options);
  ASSERT_EQ(result.validation.size(), 5u);
  const ValidationRow& a8 = result.validation[0];
  EXPECT_NEAR(a8.model_only_error, 0.2, 1e-9);
  EXPECT_NEAR(a8.calibrated_error, 1.2 / 1.1 - 1, 1e-9);
  ASSERT_TRUE(a8.other_models);
  EXPECT_NEAR(a8.other_models_error, 0.2, 1e-9);
  const ValidationRow& b8 = result.validation[3];
  ASSERT_TRUE(b8.other_models);
  EXPECT_NEAR(b8.other_models_error, 1.0 / 1.2 - 1, 1e-9);
  EXPECT_EQ(result.summary.other_models_configurations, 5u);
  EXPECT_NEAR(result.summary.other_models_median_abs_error, 0.2, 1e-9);
  EXPECT_GE(result.summary.other_models_coverage, 0.0);
  EXPECT_LE(result.summary.other_models_coverage, 1.0);

  // One model only: nothing to leave out, nothing made.
  StudyDigest single;
  single.commbench_bytes = study.commbench_bytes;
  single.commbench_time_us = study.commbench_time_us;
  single.commbench_ranks = 2;
  for (const MeasuredConfig& c : study.configs)
    if (c.params.model == "a") single.configs.push_back(c);
  const ScalingPrediction alone = predict_scaling(single, options);
  ASSERT_EQ(alone.validation.size(), 3u);
  EXPECT_FALSE(alone.validation[0].other_models);
  EXPECT_EQ(alone.summary.other_models_configurations, 0u);
  EXPECT_TRUE(std::isnan(alone.summary.other_models_median_abs_error));
}

// A named profile's cost of sharing a node calibrates a study of one GPU: errors {0.1, 0.3,
// 0.2} have median 0.2, so the step of m (1000 us, one exposed 100 us bucket on 2 GPUs) is
// 1100 x 1.2 = 1320 us. On a study with its own 2-GPU twins the profile is checked instead:
// twins measured 20% above the model read an error of 1.2 / 1.2 - 1 = 0 against it.
TEST(InterconnectCurves, NodeSharingCostCalibratesAOneGpuStudyAndIsChecked) {
  StudyDigest study;
  study.configs.push_back(one_gpu_config("m", 32, 1000, 500));
  PredictOptions options;
  options.targets = {{1, 2}};
  options.draws = 500;
  options.allreduce = {{1e3, 1e6, 8e6}, {10, 100, 730}, 2, "two-gpu test curve"};
  const ScalingPrediction model_only = predict_scaling(study, options);
  EXPECT_FALSE(model_only.predictions[0].calibrated);
  EXPECT_EQ(model_only.calibration, "");
  EXPECT_FALSE(model_only.measured_node_sharing.given());

  options.node_sharing = {{{2, {0.1, 0.3, 0.2}, "three test configurations"}}};
  const ScalingPrediction result = predict_scaling(study, options);
  ASSERT_EQ(result.predictions.size(), 1u);
  const Prediction& p = result.predictions[0];
  EXPECT_TRUE(p.calibrated);
  EXPECT_NEAR(p.step_us.point, 1100 * 1.2, 1e-9);
  EXPECT_NEAR(p.speedup.point, 2 * 1000 / 1320.0, 1e-9);
  // Each draw takes one of the three errors (a third of the draws each) plus the runs' noise,
  // symmetric about zero: the 2.5% end is the 7.5% point of the lowest third, below its
  // centre 1100 x 1.1; the 97.5% end the 92.5% point of the highest, above 1100 x 1.3.
  EXPECT_LT(p.step_us.interval95.low, 1100 * 1.1);
  EXPECT_GT(p.step_us.interval95.high, 1100 * 1.3);
  EXPECT_NE(result.calibration.find("three test configurations"), std::string::npos);

  study.configs.push_back(two_gpu_twin(study.configs[0], 1100, 0.2));
  const ScalingPrediction checked = predict_scaling(study, options);
  ASSERT_EQ(checked.validation.size(), 1u);
  ASSERT_TRUE(checked.validation[0].node_sharing);
  EXPECT_NEAR(checked.validation[0].node_sharing_error, 0.0, 1e-9);
  EXPECT_NEAR(checked.validation[0].model_only_error, 0.2, 1e-9);
  EXPECT_EQ(checked.summary.node_sharing_configurations, 1u);
  // The study's own errors give its node-sharing cost, and calibrate its forward predictions.
  ASSERT_TRUE(checked.measured_node_sharing.given());
  ASSERT_EQ(checked.measured_node_sharing.costs.size(), 1u);
  EXPECT_EQ(checked.measured_node_sharing.costs[0].gpus, 2);
  ASSERT_EQ(checked.measured_node_sharing.costs[0].step_errors.size(), 1u);
  EXPECT_NEAR(checked.measured_node_sharing.costs[0].step_errors[0], 0.2, 1e-9);
  EXPECT_NE(checked.calibration.find("study's own 1 N-GPU"), std::string::npos);
}

// The node_sharing block predict writes is one the catalog reads back, and a bad one is
// refused with the file's line and what to write.
TEST(InterconnectCurves, NodeSharingBlockRoundTripsAndIsChecked) {
  const std::string entry =
      "interconnects:\n"
      "  test-2gpu:\n"
      "    about: two test GPUs\n"
      "    measured: 2026-11-26\n"
      "    source: a test\n"
      "    gpus: 2\n"
      "    bytes: [1000, 1000000]\n"
      "    time_us: [10, 100]\n";
  const NodeSharingCost written{2, {0.125, -0.0625, 0.5}, "a test study: `ddpscale predict x`"};
  const std::vector<NamedInterconnect> back = parse_interconnect_catalog(entry + node_sharing_yaml(written), "t.yaml");
  ASSERT_EQ(back.size(), 1u);
  ASSERT_EQ(back[0].node_sharing.costs.size(), 1u);
  EXPECT_EQ(back[0].node_sharing.costs[0].gpus, 2);
  EXPECT_EQ(back[0].node_sharing.costs[0].source, written.source);
  EXPECT_EQ(back[0].node_sharing.costs[0].step_errors, written.step_errors);  // exact in binary at 4 digits
  EXPECT_TRUE(back[0].node_sharing.costs[0].one_gpu_step_us.empty());
  NodeSharingCost with_steps = written;
  with_steps.one_gpu_step_us = {512, 1024, 2048};  // written to 4 significant digits, as the errors
  const std::vector<NamedInterconnect> stepped =
      parse_interconnect_catalog(entry + node_sharing_yaml(with_steps), "t.yaml");
  EXPECT_EQ(stepped[0].node_sharing.costs[0].one_gpu_step_us, with_steps.one_gpu_step_us);
  EXPECT_FALSE(parse_interconnect_catalog(entry, "t.yaml")[0].node_sharing.given());

  const auto refused = [&](const std::string& block) {
    return message_of([&] { parse_interconnect_catalog(entry + block, "t.yaml"); });
  };
  EXPECT_NE(refused("    node_sharing: {gpus: 2, source: s, step_errors: [0.1, -1.5]}\n").find("t.yaml:9"),
            std::string::npos);
  EXPECT_NE(refused("    node_sharing: {gpus: 2, source: s, step_errors: [0.1, -1.5]}\n").find("not above -1"),
            std::string::npos);
  EXPECT_NE(refused("    node_sharing: {gpus: 2, source: s, step_errors: []}\n").find("step_errors is empty"),
            std::string::npos);
  EXPECT_NE(refused("    node_sharing: {gpus: 2, step_errors: [0.1]}\n").find("needs source"), std::string::npos);
  EXPECT_NE(refused("    node_sharing: {gpus: 2, source: s, step_errors: [0.1], errors: [1]}\n").find("unknown key 'errors'"),
            std::string::npos);
  EXPECT_NE(refused("    node_sharing: {gpus: 2, source: s, step_errors: [0.1, 0.2], one_gpu_step_us: [900]}\n")
                .find("1 one_gpu_step_us for 2 step_errors (give one per error)"),
            std::string::npos);
  EXPECT_NE(refused("    node_sharing: {gpus: 2, source: s, step_errors: [0.1], one_gpu_step_us: [0]}\n")
                .find("one_gpu_step_us must be positive"),
            std::string::npos);
}

// The repository's profiles carry a node-sharing cost with its source, and --allreduce NAME
// hands it to the predictor; a commbench.csv carries none.
TEST(InterconnectCurves, RepositoryProfilesCarryTheirNodeSharingCost) {
  for (const NamedInterconnect& ic : load_interconnect_catalog(kRepositoryCatalog)) {
    ASSERT_TRUE(ic.node_sharing.given()) << ic.name;
    EXPECT_NE(ic.node_sharing.measured_at(ic.curve.ranks), nullptr) << ic.name;  // at the curve's own count
    for (const NodeSharingCost& cost : ic.node_sharing.costs) {
      EXPECT_GE(cost.step_errors.size(), 20u) << ic.name << " at " << cost.gpus;
      EXPECT_NE(cost.source.find("docs/results/"), std::string::npos) << ic.name << " at " << cost.gpus;
    }
    const NodeSharingProfile named = interconnect_by_name_or_file(ic.name, kRepositoryCatalog).node_sharing;
    ASSERT_EQ(named.costs.size(), ic.node_sharing.costs.size()) << ic.name;
    for (size_t k = 0; k < named.costs.size(); ++k)
      EXPECT_EQ(named.costs[k].step_errors, ic.node_sharing.costs[k].step_errors) << ic.name;
  }
  const std::string csv = std::string(DDPSCALE_SOURCE_DIR) + "/docs/results/h100x2/seed-study/commbench.csv";
  EXPECT_FALSE(interconnect_by_name_or_file(csv, kRepositoryCatalog).node_sharing.given());
}

}  // namespace
}  // namespace ddpscale
