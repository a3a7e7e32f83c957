#include "results/store/h5_io.hpp"
#include "results/store/hdf5_handles.hpp"
#include "results/store/run_store.hpp"
#include "tests/sample_records.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

// Replaces a root string attribute, to forge a file that some other program wrote.
void set_root_string_attribute(const std::string& path, const char* name, const std::string& value) {
  H5File file(DDPSCALE_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), path));
  DDPSCALE_H5_CHECK(H5Adelete(file.get(), name), path);
  H5Datatype type(DDPSCALE_H5_CHECK(H5Tcopy(H5T_C_S1), path));
  DDPSCALE_H5_CHECK(H5Tset_size(type.get(), value.size() + 1), path);
  H5Dataspace scalar(DDPSCALE_H5_CHECK(H5Screate(H5S_SCALAR), path));
  H5Attribute attr(DDPSCALE_H5_CHECK(H5Acreate2(file.get(), name, type.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT), path));
  DDPSCALE_H5_CHECK(H5Awrite(attr.get(), type.get(), value.c_str()), path);
}

// Rewrites every run's instruments into their first layout (a group holding one
// [ranks][max] dataset and one NAME_count per instrument), as files of that time have them.
void to_instrument_group_layout(const std::string& path) {
  H5File file(DDPSCALE_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), path));
  const H5Io io(path);
  H5Group runs = io.open_group(file.get(), "runs");
  for (const std::string& run_name : io.member_names(runs.get())) {
    H5Group run = io.open_group(runs.get(), run_name);
    std::vector<hsize_t> dims;
    const std::vector<float> table = io.get_float_table(run.get(), "instruments", dims);
    std::vector<std::string> names;
    {
      H5Dataset set(DDPSCALE_H5_CHECK(H5Dopen2(run.get(), "instruments", H5P_DEFAULT), path));
      names = io.get_string_list(set.get(), "names");
    }
    const std::vector<int64_t> counts = io.get_ints(run.get(), "instrument_counts");
    DDPSCALE_H5_CHECK(H5Ldelete(run.get(), "instruments", H5P_DEFAULT), path);
    DDPSCALE_H5_CHECK(H5Ldelete(run.get(), "instrument_counts", H5P_DEFAULT), path);
    H5Group group = io.create_group(run.get(), "instruments");
    const size_t ranks = dims[0], longest = dims[2];
    for (size_t i = 0; i < names.size(); ++i) {
      std::vector<float> series(ranks * longest);
      std::vector<int64_t> series_counts(ranks);
      for (size_t r = 0; r < ranks; ++r) {
        std::copy_n(table.begin() + static_cast<long>((r * names.size() + i) * longest), longest,
                    series.begin() + static_cast<long>(r * longest));
        series_counts[r] = counts[r * names.size() + i];
      }
      io.put_floats(group.get(), names[i], {ranks, longest}, series);
      io.put_ints(group.get(), names[i] + "_count", series_counts);
    }
  }
}

class RunStore : public ::testing::Test {
 protected:
  // The StoreError message read_config throws, or "" if it read the file.
  static std::string read_error(const std::string& path) {
    try {
      read_config(path);
    } catch (const StoreError& e) {
      return e.what();
    }
    return "";
  }
  std::string write_sample() {
    const ConfigRecord record = testing_samples::sample_config();
    write_config(dir.string(), record);
    return (dir / (record.id + ".h5")).string();
  }
  std::vector<std::string> leftover_temporaries() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
      if (entry.path().extension() == ".tmp") found.push_back(entry.path().string());
    return found;
  }

  TempDir temp_;
  const fs::path dir = temp_.path();
};

TEST_F(RunStore, ConfigRoundTripKeepsEveryValue) {
  const ConfigRecord written = testing_samples::sample_config();
  const std::string path = write_sample();
  EXPECT_EQ(list_config_files(dir.string()), std::vector<std::string>{path});
  EXPECT_TRUE(leftover_temporaries().empty());

  const ConfigRecord read = read_config(path);
  EXPECT_EQ(read.id, "mlp-medium_b32_w2_sample");
  EXPECT_TRUE(same_params(read.params, written.params));
  EXPECT_EQ(read.params.model, "mlp-medium");
  EXPECT_EQ(read.params.parameters, 258432);
  EXPECT_EQ(read.params.nccl_variables.at("NCCL_ALGO"), "Tree");
  EXPECT_EQ(read.params.nccl_variables.size(), 2u);

  ASSERT_EQ(read.runs.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(read.runs[k].index, static_cast<int>(k));
    EXPECT_EQ(read.runs[k].seed, 42u + k);
    EXPECT_DOUBLE_EQ(read.runs[k].samples_per_second, written.runs[k].samples_per_second);
    ASSERT_EQ(read.runs[k].ranks.size(), 2u);
    for (size_t r = 0; r < 2; ++r) {
      const RankTimings& got = read.runs[k].ranks[r];
      const RankTimings& want = written.runs[k].ranks[r];
      EXPECT_EQ(got.rank, static_cast<int>(r));
      EXPECT_EQ(got.phase_us, want.phase_us);  // 7 phases x 5 steps, exact floats
      EXPECT_DOUBLE_EQ(got.wall_seconds, want.wall_seconds);
      EXPECT_EQ(got.peak_memory_bytes, want.peak_memory_bytes);
      EXPECT_EQ(got.gpu_utilization_pct, want.gpu_utilization_pct);
      EXPECT_EQ(got.gpu_memory_used_mib, want.gpu_memory_used_mib);
      EXPECT_EQ(got.gpu_power_w, want.gpu_power_w);
      EXPECT_EQ(got.gpu_busy_us, want.gpu_busy_us);
    }
  }
  EXPECT_EQ(read.runs[0].status, RunStatus::ok);
  EXPECT_EQ(read.runs[0].failure, "");
  EXPECT_EQ(read.runs[0].loss, written.runs[0].loss);
  EXPECT_FLOAT_EQ(read.runs[2].ranks[1].phase_us[static_cast<size_t>(Phase::step)][4],
                  testing_samples::sample_phase_us(2, 1, 6, 4));
  // NVML series of different lengths per rank come back with their own lengths.
  EXPECT_EQ(read.runs[0].ranks[0].gpu_power_w, (std::vector<float>{100, 110, 120}));
  EXPECT_EQ(read.runs[0].ranks[1].gpu_power_w, (std::vector<float>{130, 140}));
  EXPECT_EQ(read.runs[0].ranks[0].gpu_busy_us, (std::vector<float>{250.5f}));
  EXPECT_TRUE(read.runs[0].ranks[1].gpu_busy_us.empty());

  EXPECT_EQ(read.runs[1].status, RunStatus::failed);
  EXPECT_EQ(read.runs[1].failure, "non-finite loss (nan) at measured step 3");
  ASSERT_EQ(read.runs[1].loss.size(), 5u);
  EXPECT_TRUE(std::isnan(read.runs[1].loss[3]));
  EXPECT_FLOAT_EQ(read.runs[1].loss[4], 1.6f);
}

// The allreduce's precision is part of a configuration's identity; files written before it
// existed have no such attribute and read as float32 (what they reduced in).
TEST_F(RunStore, AllreduceDtypeRoundTrips) {
  ConfigRecord record = testing_samples::sample_config();
  record.params.allreduce_dtype = "bfloat16";
  write_config(dir.string(), record);
  const ConfigRecord back = read_config((dir / (record.id + ".h5")).string());
  EXPECT_EQ(back.params.allreduce_dtype, "bfloat16");
  EXPECT_TRUE(same_params(back.params, record.params));
  EXPECT_FALSE(same_params(back.params, testing_samples::sample_config().params));  // float32 is another config
}

// Which build measured a configuration and when each run started travel with it; older files
// have none of these attributes.
TEST_F(RunStore, BuildAndTimesRoundTripAndAreOptional) {
  ConfigRecord record = testing_samples::sample_config();
  record.git_commit = "e5daaef";
  record.finished_utc = "2026-11-23T05:44:25Z";
  record.runs[0].start_unix_ms = 1795412665123;
  write_config(dir.string(), record);
  ConfigRecord back = read_config((dir / (record.id + ".h5")).string());
  EXPECT_EQ(back.git_commit, "e5daaef");
  EXPECT_EQ(back.finished_utc, "2026-11-23T05:44:25Z");
  EXPECT_EQ(back.runs[0].start_unix_ms, 1795412665123);
  EXPECT_EQ(back.runs[1].start_unix_ms, 0);  // not stored: reads as unknown

  record.git_commit.clear();
  record.finished_utc.clear();
  write_config(dir.string(), record);  // as files written before the attributes existed
  back = read_config((dir / (record.id + ".h5")).string());
  EXPECT_EQ(back.git_commit, "");
  EXPECT_EQ(back.finished_utc, "");
}

// The host-drift calibration is one reading per rank (device: none on CPU ranks); files
// written before it existed lack both datasets and read as "no reading".
TEST_F(RunStore, CalibrationRoundTripsAndIsOptional) {
  ConfigRecord record = testing_samples::sample_config();
  record.runs[0].ranks[0].calibration_host_us = {312.5f};
  record.runs[0].ranks[1].calibration_host_us = {318.25f};
  record.runs[0].ranks[1].calibration_device_us = {97.0f};
  write_config(dir.string(), record);
  const std::string path = (dir / (record.id + ".h5")).string();
  ConfigRecord back = read_config(path);
  EXPECT_EQ(back.runs[0].ranks[0].calibration_host_us, std::vector<float>{312.5f});
  EXPECT_EQ(back.runs[0].ranks[1].calibration_host_us, std::vector<float>{318.25f});
  EXPECT_TRUE(back.runs[0].ranks[0].calibration_device_us.empty());
  EXPECT_EQ(back.runs[0].ranks[1].calibration_device_us, std::vector<float>{97.0f});
  EXPECT_TRUE(back.runs[2].ranks[0].calibration_host_us.empty());

  // As a file from before the calibration: the four datasets of run 0 removed.
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* name : {"calibration_host_us", "calibration_host_us_count", "calibration_device_us",
                           "calibration_device_us_count"})
    EXPECT_GE(H5Ldelete(file, (std::string("runs/run_0000/") + name).c_str(), H5P_DEFAULT), 0) << name;
  H5Fclose(file);
  back = read_config(path);
  EXPECT_TRUE(back.runs[0].ranks[0].calibration_host_us.empty());
  EXPECT_TRUE(back.runs[0].ranks[1].calibration_device_us.empty());
}

// The per-layer gradient timing of one instrumented backward pass: every field of every
// parameter survives, in registration order, a gradient that never arrived stays NaN; a
// file without the group (as every file before it existed) reads as "not recorded"; and
// merging launches keeps the first launch's record.
TEST_F(RunStore, GradientTimingRoundTripsAndIsOptional) {
  ConfigRecord record = testing_samples::sample_config();
  GradientTiming& timing = record.gradient_timing;
  timing.clock = "cuda_event";
  timing.step = "last_warmup";
  timing.run = 2;
  timing.backward_us = 1234.5;
  timing.parameters = {{"layers.0.weight", 204544, 4, 1100.25},
                       {"layers.0.bias", 256, 2, 1090.0},
                       {"head.weight", 12288, 4, 10.5},
                       {"frozen_but_listed", 3, 8, std::numeric_limits<double>::quiet_NaN()}};
  write_config(dir.string(), record);
  const std::string path = (dir / (record.id + ".h5")).string();
  const GradientTiming back = read_config(path).gradient_timing;
  ASSERT_TRUE(back.recorded());
  EXPECT_EQ(back.clock, "cuda_event");
  EXPECT_EQ(back.step, "last_warmup");
  EXPECT_EQ(back.run, 2);
  EXPECT_DOUBLE_EQ(back.backward_us, 1234.5);
  ASSERT_EQ(back.parameters.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.parameters[i].name, timing.parameters[i].name);
    EXPECT_EQ(back.parameters[i].elements, timing.parameters[i].elements);
    EXPECT_EQ(back.parameters[i].element_bytes, timing.parameters[i].element_bytes);
    EXPECT_DOUBLE_EQ(back.parameters[i].ready_us, timing.parameters[i].ready_us);
  }
  EXPECT_EQ(back.parameters[3].name, "frozen_but_listed");
  EXPECT_EQ(back.parameters[3].element_bytes, 8);
  EXPECT_TRUE(std::isnan(back.parameters[3].ready_us));

  // As a file from before gradient timing: the group removed.
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_GE(H5Ldelete(file, "gradient_timing", H5P_DEFAULT), 0);
  H5Fclose(file);
  const ConfigRecord old = read_config(path);
  EXPECT_FALSE(old.gradient_timing.recorded());
  EXPECT_EQ(old.runs.size(), 3u);  // the rest of the file reads as it was written

  ConfigRecord first = testing_samples::sample_config(), second = first;
  first.launches = second.launches = 2;
  second.launch = 1;
  for (RunRecord& run : second.runs) run.index += 3;
  second.gradient_timing = timing;  // the first launch recorded none
  const std::vector<ConfigRecord> merged = merge_launches({first, second});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].gradient_timing.parameters.size(), 4u);
}

// Graph mode keeps one loss per block of replays and says so; files written before that
// lack the attribute and read as one loss per step.
TEST_F(RunStore, LossEveryRoundTripsAndIsOptional) {
  ConfigRecord record = testing_samples::sample_config();
  record.runs[0].loss_every = 50;
  write_config(dir.string(), record);
  const std::string path = (dir / (record.id + ".h5")).string();
  ConfigRecord back = read_config(path);
  EXPECT_EQ(back.runs[0].loss_every, 50);
  EXPECT_EQ(back.runs[1].loss_every, 1);

  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_GE(H5Adelete_by_name(file, "runs/run_0000", "loss_every", H5P_DEFAULT), 0);
  H5Fclose(file);
  back = read_config(path);
  EXPECT_EQ(back.runs[0].loss_every, 1);
}

// Which step a kept loss belongs to: every step's with loss_every 1; with blocks of 50 over
// 103 steps, the ends of the blocks 0-49, 50-99 and the short 100-102.
TEST(RunRecord, StepOfLossNamesTheBlockEnd) {
  RunRecord eager;
  EXPECT_EQ(eager.step_of_loss(0, 100), 0);
  EXPECT_EQ(eager.step_of_loss(17, 100), 17);
  RunRecord graph;
  graph.loss_every = 50;
  EXPECT_EQ(graph.step_of_loss(0, 103), 49);
  EXPECT_EQ(graph.step_of_loss(1, 103), 99);
  EXPECT_EQ(graph.step_of_loss(2, 103), 102);
  EXPECT_EQ(graph.step_of_loss(0, 20), 19);  // a run shorter than a block
}

// A run that failed early: one rank measured 2 steps, the other none, no NVML samples.
TEST_F(RunStore, FailedRunWithUnevenRanksKeepsEachRanksLength) {
  ConfigRecord record = testing_samples::sample_config();
  RunRecord& run = record.runs[1];
  run.failure = "rank 1: CUDA out of memory";
  run.loss = {2.5f};
  for (auto& series : run.ranks[0].phase_us) series.resize(2);
  for (auto& series : run.ranks[1].phase_us) series.clear();
  for (auto& rank : run.ranks) rank.gpu_power_w.clear();
  write_config(dir.string(), record);

  const RunRecord back = read_config((dir / (record.id + ".h5")).string()).runs[1];
  EXPECT_EQ(back.failure, "rank 1: CUDA out of memory");
  EXPECT_EQ(back.loss, std::vector<float>{2.5f});
  ASSERT_EQ(back.ranks.size(), 2u);
  EXPECT_EQ(back.ranks[0].phase_us[static_cast<size_t>(Phase::forward)],
            (std::vector<float>{testing_samples::sample_phase_us(1, 0, 1, 0), testing_samples::sample_phase_us(1, 0, 1, 1)}));
  EXPECT_TRUE(back.ranks[1].phase_us[static_cast<size_t>(Phase::forward)].empty());
  EXPECT_TRUE(back.ranks[0].gpu_power_w.empty());
  EXPECT_EQ(back.ranks[0].gpu_utilization_pct, (std::vector<float>{50, 60, 70}));
}

TEST_F(RunStore, RankWhosePhasesDisagreeIsRefusedAtWrite) {
  ConfigRecord record = testing_samples::sample_config();
  record.runs[0].ranks[1].phase_us[3].pop_back();
  try {
    write_config(dir.string(), record);
    FAIL() << "a rank with 5 steps in one phase and 4 in another was written";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / (record.id + ".h5")).string() + ": run 0 rank 1: phases have different step counts");
  }
  EXPECT_TRUE(leftover_temporaries().empty());
  EXPECT_FALSE(fs::exists(dir / (record.id + ".h5")));
}

TEST_F(RunStore, StudyRoundTripWithCommbench) {
  StudyMetadata meta = testing_samples::sample_metadata();
  meta.cuda_version = "12.4";
  meta.hdf5_version = "1.10.8";
  meta.spec_text = std::string(100 * 1024, 'y') + "\nend";  // beyond a compact attribute's 64 KiB
  const CommBenchTable bench{{1024, 4096}, {10.5, 12.0}, {0.1, 0.34}, {0.0975, 0.33}};
  write_study(dir.string(), meta, bench);
  EXPECT_TRUE(leftover_temporaries().empty());

  CommBenchTable table;
  const StudyMetadata read = read_study(dir.string(), &table);
  EXPECT_EQ(read.tool_version, "0.1.0");
  EXPECT_EQ(read.git_commit, "abc123");
  EXPECT_EQ(read.command_line, "ddpscale sweep experiments/quick.yaml --out x");
  EXPECT_EQ(read.created_utc, "2026-11-22T00:00:00Z");
  EXPECT_EQ(read.spec_text.size(), 100u * 1024 + 4);
  EXPECT_EQ(read.spec_text.substr(read.spec_text.size() - 4), "\nend");
  EXPECT_EQ(read.hostnames, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(read.gpu_names, (std::vector<std::string>{"NVIDIA H200", "NVIDIA H200"}));
  EXPECT_EQ(read.cuda_version, "12.4");
  EXPECT_EQ(read.hdf5_version, "1.10.8");
  EXPECT_EQ(read.gpu_driver, "");
  EXPECT_EQ(read.link_topology, "GPU0-GPU1 NVLink x18, P2P yes");
  EXPECT_EQ(read.nccl_variables, (std::map<std::string, std::string>{{"NCCL_NVLS_ENABLE", "0"}}));

  EXPECT_EQ(table.bytes, (std::vector<double>{1024, 4096}));
  EXPECT_EQ(table.time_us, (std::vector<double>{10.5, 12.0}));
  EXPECT_EQ(table.algbw_gbs, (std::vector<double>{0.1, 0.34}));
  EXPECT_EQ(table.busbw_gbs, (std::vector<double>{0.0975, 0.33}));
  EXPECT_TRUE(list_config_files(dir.string()).empty());  // study.h5 is not a configuration
}

TEST_F(RunStore, StudyWithoutCommbenchAndWithEmptyLists) {
  StudyMetadata meta = testing_samples::sample_metadata();
  meta.hostnames.clear();
  meta.gpu_names.clear();
  meta.nccl_variables.clear();
  write_study(dir.string(), meta);
  CommBenchTable table{{1}, {2}, {3}, {4}};
  const StudyMetadata read = read_study(dir.string(), &table);
  EXPECT_TRUE(table.bytes.empty());
  EXPECT_TRUE(read.hostnames.empty());
  EXPECT_TRUE(read.gpu_names.empty());
  EXPECT_TRUE(read.nccl_variables.empty());
  EXPECT_EQ(read.git_commit, "abc123");

  // Added later, the table replaces the file whole and the metadata survives.
  write_study(dir.string(), read, {{8}, {1.5}, {0.005}, {0.0075}});
  EXPECT_EQ(read_study(dir.string(), &table).command_line, "ddpscale sweep experiments/quick.yaml --out x");
  EXPECT_EQ(table.busbw_gbs, std::vector<double>{0.0075});
}

TEST_F(RunStore, CommbenchColumnsOfDifferentLengthAreRefused) {
  const std::string study = (dir / "study.h5").string();
  try {
    write_study(dir.string(), testing_samples::sample_metadata(), {{1, 2}, {1}, {1, 2}, {1, 2}});
    FAIL() << "ragged commbench table written";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              study + ": commbench columns differ in length (bytes 2, time_us 1, algbw_gbs 2, busbw_gbs 2)");
  }
  EXPECT_FALSE(fs::exists(study));
}

TEST_F(RunStore, RefusesOtherSchemaVersion) {
  const std::string path = write_sample();
  testing_samples::set_int_attribute(path, "schema_version", 99);
  EXPECT_EQ(read_error(path), path + ": schema version 99, this ddpscale reads version 1");
  EXPECT_FALSE(config_file_matches(path, testing_samples::sample_config().params));
}

TEST_F(RunStore, RefusesOtherSchemaName) {
  const std::string path = write_sample();
  set_root_string_attribute(path, "schema", "someone-elses-store");
  EXPECT_EQ(read_error(path), path + ": not a ddpscale run store file (no root attribute schema = 'ddpscale-run-store')");
}

TEST_F(RunStore, RefusesStudyFileAsConfiguration) {
  write_study(dir.string(), testing_samples::sample_metadata());
  const std::string study = (dir / "study.h5").string();
  EXPECT_EQ(read_error(study), study + ": a study file, not a configuration file");
}

TEST_F(RunStore, RefusesTruncatedFile) {
  const std::string path = write_sample();
  fs::resize_file(path, fs::file_size(path) / 2);
  const std::string message = read_error(path);
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST_F(RunStore, RefusesTextFileAndMissingFile) {
  const std::string text = (dir / "notes.h5").string();
  std::ofstream(text) << "not hdf5\n";
  EXPECT_EQ(read_error(text), text + ": not an HDF5 file (or truncated)");
  const std::string missing = (dir / "missing.h5").string();
  EXPECT_EQ(read_error(missing), missing + ": no such file");
  EXPECT_THROW(read_study((dir / "nowhere").string()), StoreError);
}

TEST_F(RunStore, RefusesIncompleteFile) {
  const std::string path = write_sample();
  testing_samples::set_int_attribute(path, "complete", 0);
  EXPECT_EQ(read_error(path), path + ": incomplete file (its writer stopped before finishing it)");
}

TEST_F(RunStore, UnwritableDirectoryNamesThePathAndLeavesNoTemporary) {
  const fs::path file_in_the_way = dir / "plain-file";
  std::ofstream(file_in_the_way) << "x";
  const std::string bad_dir = (file_in_the_way / "sub").string();
  const ConfigRecord record = testing_samples::sample_config();
  const std::string final_path = bad_dir + "/" + record.id + ".h5";
  try {
    write_config(bad_dir, record);
    FAIL() << "writing under a regular file succeeded";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(final_path + ": H5Fcreate", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("unable to create file"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(final_path + ".tmp"));
  EXPECT_TRUE(leftover_temporaries().empty());
  EXPECT_THROW(write_study(bad_dir, testing_samples::sample_metadata()), StoreError);
}

TEST_F(RunStore, RewriteReplacesTheOldFile) {
  ConfigRecord record = testing_samples::sample_config();
  write_config(dir.string(), record);
  record.runs.pop_back();
  write_config(dir.string(), record);
  EXPECT_EQ(read_config((dir / (record.id + ".h5")).string()).runs.size(), 2u);
  EXPECT_TRUE(leftover_temporaries().empty());
}

TEST_F(RunStore, ResumeMatchesOnlyIdenticalParameters) {
  const ConfigParams params = testing_samples::sample_config().params;
  const std::string path = write_sample();
  EXPECT_TRUE(config_file_matches(path, params));
  ConfigParams other = params;
  other.measured_steps += 1;
  EXPECT_FALSE(config_file_matches(path, other));
  other = params;
  other.bucket_mb = 1;
  EXPECT_FALSE(config_file_matches(path, other));
  other = params;
  other.overlap = false;
  EXPECT_FALSE(config_file_matches(path, other));
  other = params;
  other.nccl_profile = "nvls_off";
  EXPECT_FALSE(config_file_matches(path, other));
  // The environment's NCCL variables are recorded, not compared: a resumed sweep knows
  // them only once it runs.
  other = params;
  other.nccl_variables.clear();
  EXPECT_TRUE(config_file_matches(path, other));
  EXPECT_FALSE(config_file_matches((dir / "absent.h5").string(), params));
}

TEST_F(RunStore, ListsOnlyCompleteConfigurationFilesSorted) {
  ConfigRecord b = testing_samples::sample_config();
  b.id = "b_config";
  ConfigRecord a = b;
  a.id = "a_config";
  ConfigRecord unfinished = b;
  unfinished.id = "c_unfinished";
  write_config(dir.string(), b);
  write_config(dir.string(), a);
  write_config(dir.string(), unfinished);
  testing_samples::set_int_attribute((dir / "c_unfinished.h5").string(), "complete", 0);
  write_study(dir.string(), testing_samples::sample_metadata());
  std::ofstream((dir / "x.h5.tmp").string()) << "partial";
  std::ofstream((dir / "notes.h5").string()) << "not hdf5";
  std::ofstream((dir / "readme.txt").string()) << "text";

  std::vector<std::string> skipped;
  EXPECT_EQ(list_config_files(dir.string(), &skipped),
            (std::vector<std::string>{(dir / "a_config.h5").string(), (dir / "b_config.h5").string()}));
  std::sort(skipped.begin(), skipped.end());
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0], (dir / "c_unfinished.h5").string() + ": incomplete file (its writer stopped before finishing it)");
  EXPECT_EQ(skipped[1], (dir / "notes.h5").string() + ": not an HDF5 file (or truncated)");
  EXPECT_TRUE(list_config_files((dir / "no-such-dir").string()).empty());
}

}  // namespace
}  // namespace ddpscale

namespace ddpscale {
namespace {

// What a writer killed outright leaves (<id>.h5.tmp) goes; finished files and anything
// that is not the store's own unfinished file stay.
TEST_F(RunStore, RemoveUnfinishedWritesTakesOnlyTheStoresTemporaries) {
  const std::string finished = write_sample();
  std::ofstream(dir / "killed_mid_write.h5.tmp") << "partial";
  std::ofstream(dir / "notes.tmp") << "a user's file";
  remove_unfinished_writes(dir.string());
  EXPECT_TRUE(fs::exists(finished));
  EXPECT_FALSE(fs::exists(dir / "killed_mid_write.h5.tmp"));
  EXPECT_TRUE(fs::exists(dir / "notes.tmp"));
  EXPECT_EQ(list_config_files(dir.string()), std::vector<std::string>{finished});
}

// Launches, process ids and instruments: written, read back exactly, and merged by
// configuration id when a study of several launches wrote one file per launch.
TEST_F(RunStore, LaunchesProcessIdsAndInstrumentsRoundTripAndMerge) {
  std::vector<ConfigRecord> launches;
  for (int launch = 0; launch < 2; ++launch) {
    ConfigRecord record = testing_samples::sample_config();
    record.launch = launch;
    record.launches = 2;
    record.runs.erase(record.runs.begin() + 2);  // two runs a launch, indices 2 launch apart
    for (size_t k = 0; k < record.runs.size(); ++k) {
      RunRecord& run = record.runs[k];
      run.index = static_cast<int>(2 * launch + k);
      run.launch = launch;
      for (RankTimings& rank : run.ranks) {
        rank.process_id = 1000 * (launch + 1) + rank.rank;
        rank.instruments["cpu_cores"] = {0, 3, 17};
        rank.instruments["context_switches"] = {5, static_cast<float>(rank.rank)};
        if (rank.rank == 1) rank.instruments["gpu_sm_clock_mhz"] = {1980, 1755, 1980};
        rank.instruments["process_shift_mib"] = {static_cast<float>(20 * launch)};
      }
    }
    write_config(dir.string(), record);
    launches.push_back(read_config((dir / config_file_name(record.id, launch, 2)).string()));
  }
  EXPECT_TRUE(fs::exists(dir / "mlp-medium_b32_w2_sample.launch-2-of-2.h5"));
  const RankTimings& back = launches[1].runs[0].ranks[1];
  EXPECT_EQ(launches[1].launch, 1);
  EXPECT_EQ(launches[1].launches, 2);
  EXPECT_EQ(launches[1].runs[0].launch, 1);
  EXPECT_EQ(back.process_id, 2001);
  EXPECT_EQ(back.instruments.at("cpu_cores"), (std::vector<float>{0, 3, 17}));
  EXPECT_EQ(back.instruments.at("context_switches"), (std::vector<float>{5, 1}));
  EXPECT_EQ(back.instruments.at("gpu_sm_clock_mhz"), (std::vector<float>{1980, 1755, 1980}));
  EXPECT_EQ(launches[1].runs[0].ranks[0].instruments.count("gpu_sm_clock_mhz"), 0u);  // not measured there
  EXPECT_EQ(back.instruments.at("process_shift_mib"), (std::vector<float>{20}));
  EXPECT_EQ(launches[0].runs[0].ranks[1].instruments.at("process_shift_mib"), (std::vector<float>{0}));

  const std::vector<ConfigRecord> merged = merge_launches(launches);
  ASSERT_EQ(merged.size(), 1u);
  ASSERT_EQ(merged[0].runs.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(merged[0].runs[static_cast<size_t>(k)].index, k);
    EXPECT_EQ(merged[0].runs[static_cast<size_t>(k)].launch, k / 2);
  }
}

// A file written before launches and instruments existed reads as launch 0 of 1, no
// process ids and no instruments.
TEST_F(RunStore, FilesWithoutLaunchesReadAsOneLaunch) {
  const ConfigRecord read = read_config(write_sample());
  EXPECT_EQ(read.launches, 1);
  EXPECT_EQ(read.launch, 0);
  EXPECT_EQ(merge_launches({read, read}).size(), 2u);  // one-launch records are never merged
}

// Files written while the instruments were a group of datasets read the same values.
TEST_F(RunStore, InstrumentsInTheirFirstLayoutRead) {
  ConfigRecord record = testing_samples::sample_config();
  for (RunRecord& run : record.runs)
    for (RankTimings& rank : run.ranks) {
      rank.instruments["cpu_cores"] = {2, 5};
      if (rank.rank == 1) rank.instruments["gpu_sm_clock_mhz"] = {1980, 1755, 1980};
    }
  write_config(dir.string(), record);
  const std::string path = (dir / (record.id + ".h5")).string();
  to_instrument_group_layout(path);
  const ConfigRecord back = read_config(path);
  const RankTimings& rank1 = back.runs[0].ranks[1];
  EXPECT_EQ(rank1.instruments.at("cpu_cores"), (std::vector<float>{2, 5}));
  EXPECT_EQ(rank1.instruments.at("gpu_sm_clock_mhz"), (std::vector<float>{1980, 1755, 1980}));
  EXPECT_EQ(back.runs[0].ranks[0].instruments.count("gpu_sm_clock_mhz"), 0u);
}

}  // namespace
}  // namespace ddpscale

namespace ddpscale {
namespace {

// The paired design's blocks travel with their launch's file and merge launch by launch;
// a file without /paired reads as measured with runs alone.
TEST_F(RunStore, PairedBlocksRoundTripAndMergeByLaunch) {
  ConfigRecord record = testing_samples::sample_config();
  EXPECT_TRUE(read_config(write_sample()).paired.empty());
  record.launches = 2;
  for (int launch = 0; launch < 2; ++launch) {
    record.launch = launch;
    PairedLaunch paired;
    paired.launch = launch;
    paired.block_steps = 7 + launch;
    paired.pilot_step_us = 512.25;
    paired.autocorrelation = {0.9, 0.5, -0.125};
    paired.window_speedups = 3 + launch;
    paired.pairs = {{PairKind::speedup, true, 1000.5, 700.25, 0.0, 1},
                    {PairKind::same_one_rank, false, 999.0, 1001.0, 0.0021, 0},
                    {PairKind::same_n_ranks, true, 702.0, 698.0, 0.0043}};
    record.paired = {paired};
    write_config(dir.string(), record);
  }
  std::vector<ConfigRecord> read;
  for (int launch = 0; launch < 2; ++launch)
    read.push_back(read_config((dir / config_file_name(record.id, launch, 2)).string()));
  ASSERT_EQ(read[1].paired.size(), 1u);
  const PairedLaunch& back = read[1].paired[0];
  EXPECT_EQ(back.launch, 1);
  EXPECT_EQ(back.block_steps, 8);
  EXPECT_EQ(back.pilot_step_us, 512.25);
  EXPECT_EQ(back.autocorrelation, (std::vector<double>{0.9, 0.5, -0.125}));
  EXPECT_EQ(back.window_speedups, 4);
  EXPECT_EQ(read[0].paired[0].window_speedups, 3);
  ASSERT_EQ(back.pairs.size(), 3u);
  EXPECT_EQ(back.pairs[1].kind, PairKind::same_one_rank);
  EXPECT_FALSE(back.pairs[1].a_first);
  EXPECT_EQ(back.pairs[0].a_us, 1000.5);
  EXPECT_EQ(back.pairs[0].b_us, 700.25);
  EXPECT_EQ(back.pairs[2].start_s, 0.0043);
  EXPECT_EQ(back.pairs[0].one_rank, 1);  // the rank whose 1-rank session ran the block
  EXPECT_EQ(back.pairs[1].one_rank, 0);
  const std::vector<ConfigRecord> merged = merge_launches(read);
  ASSERT_EQ(merged.size(), 1u);
  ASSERT_EQ(merged[0].paired.size(), 2u);
  EXPECT_EQ(merged[0].paired[0].launch, 0);
  EXPECT_EQ(merged[0].paired[1].launch, 1);
}

}  // namespace
}  // namespace ddpscale
