#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "run_store.hpp"
#include "sample_records.hpp"

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

class RunStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ddpscale_store_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string error_of(const std::string& path) {
    try {
      read_config(path);
    } catch (const StoreError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir;
};

TEST_F(RunStore, ConfigRoundTrip) {
  const ConfigRecord written = testing_samples::sample_config();
  write_config(dir.string(), written);
  const auto files = list_config_files(dir.string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(fs::path(files[0]).filename().string(), written.id + ".h5");
  EXPECT_FALSE(fs::exists(files[0] + ".tmp"));

  const ConfigRecord read = read_config(files[0]);
  EXPECT_EQ(read.id, written.id);
  EXPECT_TRUE(same_params(read.params, written.params));
  EXPECT_EQ(read.params.nccl_variables, written.params.nccl_variables);
  ASSERT_EQ(read.runs.size(), 3u);
  EXPECT_EQ(read.runs[1].status, RunStatus::failed);
  EXPECT_EQ(read.runs[1].failure, "non-finite loss (nan) at measured step 3");
  EXPECT_DOUBLE_EQ(read.runs[2].samples_per_second, written.runs[2].samples_per_second);
  EXPECT_EQ(read.runs[0].loss, written.runs[0].loss);
  ASSERT_EQ(read.runs[0].ranks.size(), 2u);
  for (int p = 0; p < kPhaseCount; ++p)
    EXPECT_EQ(read.runs[2].ranks[1].phase_us[static_cast<size_t>(p)], written.runs[2].ranks[1].phase_us[static_cast<size_t>(p)]);
  EXPECT_EQ(read.runs[0].ranks[1].peak_memory_bytes, written.runs[0].ranks[1].peak_memory_bytes);
  EXPECT_DOUBLE_EQ(read.runs[0].ranks[0].wall_seconds, written.runs[0].ranks[0].wall_seconds);
  // NVML series of different lengths per rank come back with their own lengths.
  EXPECT_EQ(read.runs[0].ranks[0].gpu_utilization_pct, written.runs[0].ranks[0].gpu_utilization_pct);
  EXPECT_EQ(read.runs[0].ranks[1].gpu_utilization_pct, written.runs[0].ranks[1].gpu_utilization_pct);
  EXPECT_EQ(read.runs[0].ranks[1].gpu_power_w.size(), 2u);
}

TEST_F(RunStore, StudyRoundTripWithCommbench) {
  StudyMetadata meta = testing_samples::sample_metadata();
  CommBenchTable bench{{1024, 4096}, {10.5, 12.0}, {0.1, 0.34}, {0.1, 0.34}};
  write_study(dir.string(), meta, bench);
  CommBenchTable back;
  const StudyMetadata read = read_study(dir.string(), &back);
  EXPECT_EQ(read.command_line, meta.command_line);
  EXPECT_EQ(read.spec_text, meta.spec_text);
  EXPECT_EQ(read.hostnames, meta.hostnames);
  EXPECT_EQ(read.gpu_names, meta.gpu_names);
  EXPECT_EQ(read.nccl_variables, meta.nccl_variables);
  EXPECT_EQ(back.busbw_gbs, bench.busbw_gbs);
  EXPECT_TRUE(list_config_files(dir.string()).empty());  // study.h5 is not a configuration
}

TEST_F(RunStore, RefusesOtherSchemaVersion) {
  ConfigRecord record = testing_samples::sample_config();
  write_config(dir.string(), record);
  const std::string path = list_config_files(dir.string())[0];
  testing_samples::set_int_attribute(path, "schema_version", 99);
  EXPECT_EQ(error_of(path), path + ": schema version 99, this ddpscale reads version 1");
}

TEST_F(RunStore, RefusesTruncatedAndForeignFiles) {
  write_config(dir.string(), testing_samples::sample_config());
  const std::string path = list_config_files(dir.string())[0];
  fs::resize_file(path, fs::file_size(path) / 2);
  EXPECT_NE(error_of(path).find(path + ": "), std::string::npos);
  EXPECT_TRUE(error_of(path).find("truncated") != std::string::npos) << error_of(path);

  const std::string text = (dir / "notes.h5").string();
  std::ofstream(text) << "not hdf5\n";
  EXPECT_EQ(error_of(text), text + ": not an HDF5 file (or truncated)");
  EXPECT_EQ(error_of((dir / "missing.h5").string()), (dir / "missing.h5").string() + ": no such file");
}

TEST_F(RunStore, UnwritableDirectoryNamesThePathAndLeavesNoTemporary) {
  const fs::path file_in_the_way = dir / "plain-file";
  std::ofstream(file_in_the_way) << "x";
  const std::string bad_dir = (file_in_the_way / "sub").string();
  ConfigRecord record = testing_samples::sample_config();
  try {
    write_config(bad_dir, record);
    FAIL() << "writing under a regular file succeeded";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(bad_dir + "/" + record.id + ".h5"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(bad_dir + "/" + record.id + ".h5.tmp"));
}

TEST_F(RunStore, ResumeMatchesOnlyIdenticalParameters) {
  const ConfigRecord record = testing_samples::sample_config();
  write_config(dir.string(), record);
  const std::string path = list_config_files(dir.string())[0];
  EXPECT_TRUE(config_file_matches(path, record.params));
  ConfigParams changed = record.params;
  changed.measured_steps += 1;
  EXPECT_FALSE(config_file_matches(path, changed));
  changed = record.params;
  changed.bucket_mb = 1;
  EXPECT_FALSE(config_file_matches(path, changed));
  EXPECT_FALSE(config_file_matches((dir / "absent.h5").string(), record.params));
}

TEST_F(RunStore, TemporaryFilesAreNotListed) {
  std::ofstream((dir / "x.h5.tmp").string()) << "partial";
  EXPECT_TRUE(list_config_files(dir.string()).empty());
}

}  // namespace
}  // namespace ddpscale
