// `ddpscale import-pytorch` (results/store/pytorch_import.hpp) and the report's engines section
// (results/report/report_engines.hpp): a reference line becomes a pytorch-ddp configuration beside its
// ddpscale twin, lines that fit no twin are refused with the reason, and the engines' ratios
// and verdicts come out as worked by hand; section 6 shows the memory each launch held first.
#include "results/report/report_engines.hpp"
#include "results/report/summary_export.hpp"
#include "results/store/pytorch_import.hpp"
#include "results/store/run_store.hpp"
#include "tests/report_test_helpers.hpp"

#include <nlohmann/json.hpp>

namespace ddpscale {
namespace {

using nlohmann::json;
using report_test::make_config;

// A ddpscale configuration as a sweep writes it (id from config_id, the file's hash kept).
ConfigRecord ddpscale_config(int world, const std::vector<double>& throughputs, double bucket_mb = 25) {
  ConfigRecord c = make_config("resnet-mini", 1234, 8, world, throughputs);
  c.params.model_sha256 = "ab12";
  c.params.model_input = "3x32x32";
  c.params.bucket_mb = bucket_mb;
  c.params.device = "cuda";
  c.id = config_id(c.params);
  return c;
}

// The same configuration as `ddpscale import-pytorch` writes PyTorch DDP's runs of it.
ConfigRecord pytorch_config(int world, const std::vector<double>& throughputs) {
  ConfigRecord c = ddpscale_config(world, throughputs);
  c.params.engine = kEnginePytorchDdp;
  c.id = config_id(c.params);
  return c;
}

// A line as scripts/gpu/pytorch_ddp_reference.py prints it: `runs` runs of 3 steps.
// The report of these configurations, as markdown (written into a folder of its own).
std::string write_report_md(const std::vector<ConfigRecord>& records) {
  const report_test::fs::path out =
      report_test::fs::temp_directory_path() / ("ddpscale_engines_report_" + std::to_string(getpid()));
  const std::string md =
      report_test::markdown_report(report_test::in_memory_study(records), analyze_study(records), out);
  report_test::fs::remove_all(out);
  return md;
}

json reference_line(int world, int runs = 2) {
  json line = {{"tool", "pytorch"}, {"variant", "eager"}, {"model", "resnet-mini"}, {"dtype", "float32"},
               {"broadcast_buffers", true}, {"parameters", 1234}, {"batch_per_gpu", 8}, {"world_size", world},
               {"warmup", 5}, {"steps", 3}, {"bucket_mb", 25.0}, {"optimizer", "adam-fused"}, {"lr", 0.001},
               {"seed", 42}, {"device", "cuda"}, {"input", "3x32x32"}, {"model_sha256", "ab12"},
               {"nccl_variables", {{"NCCL_NVLS_ENABLE", "0"}}}};
  json records = json::array();
  for (int k = 0; k < runs; ++k) {
    json ranks = json::array();
    for (int r = 0; r < world; ++r)
      ranks.push_back({{"rank", r}, {"step_us", {100.0 + k, 110.0 + r, 120.0}}, {"wall_seconds", 0.5},
                       {"process_id", 700 + r}, {"peak_memory_bytes", 4096}});
    records.push_back({{"index", k}, {"seed", 42 + k}, {"start_unix_ms", 1000 * (k + 1)},
                       {"samples_per_second", 50.0 * world + k}, {"ranks", ranks}});
  }
  line["run_records"] = records;
  return line;
}

TEST(PytorchImport, ALineBecomesAPytorchDdpConfigurationWithItsTwinsIdentity) {
  const ConfigRecord twin = ddpscale_config(2, {100, 101});
  ImportOptions options;
  options.launch = 1;
  options.launches = 3;
  const ConfigRecord r = pytorch_record(reference_line(2), twin.params, options);
  EXPECT_EQ(r.params.engine, "pytorch-ddp");
  EXPECT_EQ(r.id, "resnet-mini_b8_w2_weak_adam-fused_float32_bk25_ov_eager_default_pytorch-ddp");
  EXPECT_EQ(r.params.model_sha256, "ab12");
  EXPECT_EQ(r.params.optimizer, "adam-fused");
  EXPECT_EQ(r.params.backend, "nccl");
  EXPECT_EQ(r.params.measured_steps, 3);
  EXPECT_EQ(r.params.warmup_steps, 5);
  EXPECT_EQ(r.params.runs, 6);  // 2 runs in each of 3 launches
  EXPECT_EQ(r.params.nccl_variables.at("NCCL_NVLS_ENABLE"), "0");
  ASSERT_EQ(r.runs.size(), 2u);
  // Launch 2 of 3 holds runs 2 and 3, as the sweep's even split gives them.
  EXPECT_EQ(r.runs[1].index, 3);
  EXPECT_EQ(r.runs[1].launch, 1);
  EXPECT_EQ(r.runs[1].seed, 43u);
  EXPECT_EQ(r.runs[1].start_unix_ms, 2000);
  EXPECT_DOUBLE_EQ(r.runs[1].samples_per_second, 101.0);
  ASSERT_EQ(r.runs[1].ranks.size(), 2u);
  const RankTimings& rank1 = r.runs[1].ranks[1];
  EXPECT_EQ(rank1.process_id, 701);
  EXPECT_EQ(rank1.phase_us[static_cast<size_t>(Phase::step)], (std::vector<float>{101.0f, 111.0f, 120.0f}));
  for (Phase untimed : {Phase::forward, Phase::backward, Phase::allreduce_exposed, Phase::optimizer}) {
    ASSERT_EQ(rank1.phase_us[static_cast<size_t>(untimed)].size(), 3u);
    EXPECT_TRUE(std::isnan(rank1.phase_us[static_cast<size_t>(untimed)][0])) << phase_name(untimed);
  }
}

// The reference's --process-shift reaches every rank of every run, as ddpscale's own does.
TEST(PytorchImport, TheProcessShiftIsRecordedPerRank) {
  const ConfigRecord twin = ddpscale_config(2, {100, 101});
  ImportOptions options;
  options.launch = 2;
  options.launches = 4;
  json line = reference_line(2);
  EXPECT_TRUE(pytorch_record(line, twin.params, options).runs[0].ranks[0].instruments.count("process_shift_mib") == 0);
  line["process_shift_mib"] = 40;
  const ConfigRecord r = pytorch_record(line, twin.params, options);
  for (const RunRecord& run : r.runs)
    for (const RankTimings& rank : run.ranks) EXPECT_EQ(rank.instruments.at("process_shift_mib"), (std::vector<float>{40.0f}));
}

// Section 6's launch table gets a column of the memory each launch held first, both
// engines' runs, once any launch held some; a study without shifts has no such column.
TEST(PytorchImport, TheLaunchTableShowsWhatEachLaunchHeldFirst) {
  const std::vector<ConfigRecord> unshifted = {ddpscale_config(1, {50, 51}), ddpscale_config(2, {90, 91})};
  EXPECT_EQ(write_report_md(unshifted).find("MiB held first"), std::string::npos);

  std::vector<ConfigRecord> shifted = unshifted;
  ImportOptions options;
  options.launches = 2;
  for (int launch = 0; launch < 2; ++launch) {
    options.launch = launch;
    json line = reference_line(1);
    line["process_shift_mib"] = 40 * launch;
    ConfigRecord pytorch = pytorch_record(line, shifted[0].params, options);
    if (launch == 0)
      shifted.push_back(pytorch);
    else
      shifted.back().runs.insert(shifted.back().runs.end(), pytorch.runs.begin(), pytorch.runs.end());
  }
  const std::string md = write_report_md(shifted);
  ASSERT_NE(md.find("| MiB held first |"), std::string::npos) << md;
  // PyTorch DDP's 1-rank configuration, launches 1 and 2: 0 and 40 MiB held first.
  const auto row_of = [&md](const std::string& start) {
    const size_t at = md.find(start);
    return at == std::string::npos ? std::string() : md.substr(at, md.find('\n', at) - at);
  };
  const std::string first = row_of("PyTorch DDP | 1 | 2 |"), second = row_of("PyTorch DDP | 2 | 2 |");
  ASSERT_GE(first.size(), 6u) << md;
  ASSERT_GE(second.size(), 6u) << md;
  EXPECT_EQ(first.substr(first.size() - 5), "| 0 |") << first;
  EXPECT_EQ(second.substr(second.size() - 6), "| 40 |") << second;
}

TEST(PytorchImport, TheTwinIsTheOneRunAsTheReferenceRuns) {
  const std::vector<ConfigRecord> study = {ddpscale_config(1, {50, 51}), ddpscale_config(2, {90, 91}, 100),
                                           ddpscale_config(2, {95, 96}, 25)};
  EXPECT_EQ(engine_twin(reference_line(1), study).id, study[0].id);
  // Two 2-rank twins differ only in bucket size: the line's 25 MB picks one.
  EXPECT_EQ(engine_twin(reference_line(2), study).id, study[2].id);
}

TEST(PytorchImport, LinesWithoutATwinAreRefusedWithTheReason) {
  const std::vector<ConfigRecord> study = {ddpscale_config(1, {50, 51})};
  const auto refusal = [&](const json& line) {
    try {
      engine_twin(line, study);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal(reference_line(2)).find("no ddpscale configuration of resnet-mini batch 8 on 2 rank(s)"),
            std::string::npos);
  json other_file = reference_line(1);
  other_file["model_sha256"] = "ffff";
  EXPECT_NE(refusal(other_file).find("it has: resnet-mini batch 8 on 1 rank(s)"), std::string::npos);
  json other_count = reference_line(1);
  other_count["parameters"] = 1235;
  EXPECT_NE(refusal(other_count).find("PyTorch counts 1235 parameters"), std::string::npos);
  json compiled = reference_line(1);
  compiled["variant"] = "compile-default";
  EXPECT_NE(refusal(compiled).find("variant \"compile-default\""), std::string::npos);

  json short_rank = reference_line(1);
  short_rank["run_records"][0]["ranks"][0]["step_us"] = {1.0, 2.0};
  EXPECT_THROW(pytorch_record(short_rank, study[0].params, {}), std::invalid_argument);
  json no_runs = reference_line(1);
  no_runs.erase("run_records");
  EXPECT_THROW(pytorch_record(no_runs, study[0].params, {}), std::invalid_argument);
}

TEST(PytorchImport, ImportWritesEveryLineOrNothing) {
  const report_test::fs::path dir = report_test::fs::temp_directory_path() / ("ddpscale_import_" + std::to_string(getpid()));
  report_test::fs::remove_all(dir);
  report_test::fs::create_directories(dir);
  for (const ConfigRecord& c : {ddpscale_config(1, {50, 51}), ddpscale_config(2, {90, 91})}) write_config(dir.string(), c);
  const auto write_lines = [&](const std::vector<json>& lines) {
    std::ofstream out(dir / "pytorch.jsonl");
    out << "# a log line the import passes over\n";
    for (const json& line : lines) out << line.dump() << "\n";
  };
  json unmatched = reference_line(2);
  unmatched["batch_per_gpu"] = 16;
  write_lines({reference_line(1), unmatched});
  EXPECT_THROW(import_pytorch_runs(dir.string(), (dir / "pytorch.jsonl").string(), {}), std::invalid_argument);
  EXPECT_EQ(list_config_files(dir.string()).size(), 2u) << "a refused file must write nothing";

  write_lines({reference_line(1), reference_line(2)});
  const auto imported = import_pytorch_runs(dir.string(), (dir / "pytorch.jsonl").string(), {});
  ASSERT_EQ(imported.size(), 2u);
  EXPECT_EQ(imported[1].twin_id, ddpscale_config(2, {}).id);
  const ConfigRecord back = read_config(imported[1].file);
  EXPECT_EQ(back.params.engine, "pytorch-ddp");
  EXPECT_EQ(back.runs.size(), 2u);
  EXPECT_EQ(back.runs[0].ranks[1].phase_us[static_cast<size_t>(Phase::step)], (std::vector<float>{100, 111, 120}));
  report_test::fs::remove_all(dir);
}

// Hand-worked: ddpscale 1 rank {100, 100}, 2 ranks {180, 180}; PyTorch 1 rank {100, 100},
// 2 ranks {120, 120}. Every resample of equal values gives the same means, so each interval
// is the point: speedups 1.8 and 1.2, ratios 1.0 (level) and 1.5 (faster).
TEST(PytorchImport, TheEnginesSectionPairsTheTwoEnginesComparisons) {
  const std::vector<ConfigRecord> records = {ddpscale_config(1, {100, 100}), ddpscale_config(2, {180, 180}),
                                             pytorch_config(1, {100, 100}), pytorch_config(2, {120, 120})};
  const StudyAnalysis a = analyze_study(records);
  ASSERT_EQ(a.comparisons.size(), 2u);
  const std::vector<EnginePair> pairs = engine_pairs(a);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_DOUBLE_EQ(pairs[0].ddpscale->speedup.speedup, 1.8);
  EXPECT_DOUBLE_EQ(pairs[0].pytorch->speedup.speedup, 1.2);
  EXPECT_DOUBLE_EQ(pairs[0].ratio_one.speedup, 1.0);
  EXPECT_DOUBLE_EQ(pairs[0].ratio_n.speedup, 1.5);
  EXPECT_EQ(engine_ratio_verdict(pairs[0].ratio_one), "level");
  EXPECT_EQ(engine_ratio_verdict(pairs[0].ratio_n), "faster");
  SpeedupEstimate below;
  below.speedup = 0.9;
  below.speedup_ci = {0.85, 0.95};
  EXPECT_EQ(engine_ratio_verdict(below), "slower");

  // The report: the section, and an answer that speaks for ddpscale's engine alone.
  const std::string md = write_report_md(records);
  EXPECT_NE(md.find("## 7. Beside PyTorch DDP"), std::string::npos);
  EXPECT_NE(md.find("| resnet-mini | 8 | 2 | 100.0 / 180.0 | 100.0 / 120.0 | 1.80x \\[1.80, 1.80\\] | "
                    "1.20x \\[1.20, 1.20\\] | 1.00 \\[1.00, 1.00\\] level | 1.50 \\[1.50, 1.50\\] faster | "
                    "same: both paid off |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("paid off (the speedup's whole 95% interval above 1) in 1 of 1 comparisons"), std::string::npos);
  EXPECT_NE(md.find("the two engines' verdicts agree on 1 of 1 configurations"), std::string::npos);

  // summary.json: the same ratios, one object per pair of configurations.
  const json engines = json::parse(summary_json(a))["engines"];
  ASSERT_EQ(engines.size(), 2u) << engines.dump(1);
  EXPECT_EQ(engines[0]["world_size"], 1);
  EXPECT_DOUBLE_EQ(engines[0]["ddpscale_over_pytorch"].get<double>(), 1.0);
  EXPECT_EQ(engines[0]["verdict"], "level");
  EXPECT_EQ(engines[1]["world_size"], 2);
  EXPECT_DOUBLE_EQ(engines[1]["ddpscale_over_pytorch"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(engines[1]["ci95_low"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(engines[1]["pytorch_samples_per_second"].get<double>(), 120.0);
  EXPECT_EQ(engines[1]["verdict"], "faster");
  EXPECT_EQ(engines[1]["ddpscale_config"], a.configs[pairs[0].ddpscale->n_gpu].id);
  EXPECT_EQ(engines[1]["pytorch_config"], a.configs[pairs[0].pytorch->n_gpu].id);
}

// Hand-worked: ddpscale 1 rank {100, 100}, 2 ranks {180, 180}: 1.8x, paid off. PyTorch 1 rank
// {100, 100}, 2 ranks {60, 140}: every resample's mean is 60, 100 or 140, so its speedup
// interval is [0.6, 1.4], which holds 1: undecided, not "did not pay off".
TEST(PytorchImport, AnEngineWhoseIntervalHoldsOneIsUndecidedNotOpposite) {
  const std::vector<ConfigRecord> records = {ddpscale_config(1, {100, 100}), ddpscale_config(2, {180, 180}),
                                             pytorch_config(1, {100, 100}), pytorch_config(2, {60, 140})};
  const StudyAnalysis a = analyze_study(records);
  const std::vector<EnginePair> pairs = engine_pairs(a);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].ddpscale->payoff, Payoff::paid_off);
  ASSERT_TRUE(pairs[0].pytorch->speedup.speedup_ci.contains(1.0));
  EXPECT_EQ(pairs[0].pytorch->payoff, Payoff::undecided);

  const std::string md = write_report_md(records);
  EXPECT_NE(md.find("| differ: ddpscale paid off, PyTorch DDP undecided |"), std::string::npos) << md;
  EXPECT_NE(md.find("the two engines' verdicts agree on 0 of 1 configurations (of the 1 that differ: 1 undecided "
                    "under one engine, its speedup's interval holding 1; 0 opposite, paid off under one and "
                    "decidedly not under the other)"),
            std::string::npos)
      << md;
}

// Hand-worked: a study of 1 rank only, as a 1-GPU user runs it: ddpscale {100, 100} against
// PyTorch {125, 125}, no comparison, a ratio of 0.8 whose every resample is the point.
TEST(PytorchImport, ConfigurationsWithoutASpeedupStillShowBothEnginesRatio) {
  const std::vector<ConfigRecord> records = {ddpscale_config(1, {100, 100}), pytorch_config(1, {125, 125})};
  const StudyAnalysis a = analyze_study(records);
  ASSERT_TRUE(a.comparisons.empty());
  EXPECT_TRUE(engine_pairs(a).empty());
  const std::vector<EngineTwin> twins = engine_twins_without_comparison(a);
  ASSERT_EQ(twins.size(), 1u);
  EXPECT_EQ(a.configs[twins[0].ddpscale].params.engine, kEngineDdpscale);
  EXPECT_EQ(a.configs[twins[0].pytorch].params.engine, kEnginePytorchDdp);
  EXPECT_DOUBLE_EQ(twins[0].ratio.speedup, 0.8);
  EXPECT_EQ(engine_ratio_verdict(twins[0].ratio), "slower");

  const std::string md = write_report_md(records);
  EXPECT_NE(md.find("Beside PyTorch DDP"), std::string::npos);
  EXPECT_NE(md.find("| resnet-mini | 8 | 1 | 100.0 | 125.0 | 0.800 \\[0.800, 0.800\\] slower |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("ddpscale's step is slower in 1 of the 1 configuration both engines ran without a speedup to compare."),
            std::string::npos);
  EXPECT_EQ(md.find("verdicts agree"), std::string::npos);

  const json engines = json::parse(summary_json(a))["engines"];
  ASSERT_EQ(engines.size(), 1u) << engines.dump(1);
  EXPECT_EQ(engines[0]["model"], "resnet-mini");
  EXPECT_EQ(engines[0]["world_size"], 1);
  EXPECT_DOUBLE_EQ(engines[0]["ddpscale_over_pytorch"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(engines[0]["ci95_high"].get<double>(), 0.8);
  EXPECT_EQ(engines[0]["verdict"], "slower");
}

TEST(PytorchImport, AStudyOfOneEngineHasNoEnginesSection) {
  const std::string md = write_report_md({ddpscale_config(1, {100, 100}), ddpscale_config(2, {180, 180})});
  EXPECT_EQ(md.find("Beside PyTorch DDP"), std::string::npos);
}

}  // namespace
}  // namespace ddpscale
