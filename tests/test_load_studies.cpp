// Loading studies for `ddpscale report` (study_analysis, run_store): bad inputs (missing,
// empty, truncated, foreign HDF5, other schema version, not HDF5) named with what is wrong,
// and --skip-bad loading the good files and listing the rest. The bad files are forged with
// the HDF5 C API directly.
#include "results/report/report_writer.hpp"
#include "results/store/run_store.hpp"
#include "tests/report_test_helpers.hpp"
#include "tests/sample_records.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

using namespace report_test;

class LoadStudies : public ::testing::Test {
 protected:
  // A study folder with study.h5 and one good configuration file.
  std::string good_study(const std::string& name) {
    const fs::path dir = tmp_.path() / name;
    fs::create_directories(dir);
    write_study(dir.string(), testing_samples::sample_metadata());
    write_config(dir.string(), make_config("mlp", 1000, 8, 1, kOneRank));
    return dir.string();
  }
  std::string good_file(const std::string& dir) const { return (fs::path(dir) / "mlp_b8_w1_weak.h5").string(); }

  static std::string load_error(const std::vector<std::string>& paths) {
    try {
      load_studies(paths);
    } catch (const StoreError& e) {
      return e.what();
    }
    return "";
  }
  // The message of a folder with one good and one damaged file: names the damaged file
  // first, says what is wrong, and points to --skip-bad.
  static void expect_named(const std::string& message, const std::string& bad, const std::string& what) {
    EXPECT_EQ(message.rfind(bad + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_NE(message.find("--skip-bad"), std::string::npos) << message;
  }

  std::string truncated_copy(const std::string& dir) {
    const std::string bad = (fs::path(dir) / "truncated.h5").string();
    fs::copy_file(good_file(dir), bad);
    fs::resize_file(bad, fs::file_size(bad) / 2);
    return bad;
  }
  static std::string foreign_hdf5(const std::string& dir) {
    const std::string bad = (fs::path(dir) / "foreign.h5").string();
    const hid_t file = H5Fcreate(bad.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[1] = {3};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t data = H5Dcreate2(file, "values", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const int values[3] = {1, 2, 3};
    H5Dwrite(data, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    H5Dclose(data);
    H5Sclose(space);
    H5Fclose(file);
    return bad;
  }
  std::string other_version(const std::string& dir) {
    ConfigRecord record = make_config("mlp", 1000, 8, 2, kTwoRanks);
    record.id = "version2";
    write_config(dir, record);
    const std::string bad = (fs::path(dir) / "version2.h5").string();
    testing_samples::set_int_attribute(bad, "schema_version", 2);
    return bad;
  }
  static std::string text_file(const std::string& dir) {
    const std::string bad = (fs::path(dir) / "notes.h5").string();
    std::ofstream(bad) << "these are notes, not HDF5\n";
    return bad;
  }

  TempDir tmp_;
};

TEST_F(LoadStudies, GoodStudyLoads) {
  const std::string dir = good_study("good");
  const LoadedStudy loaded = load_studies({dir});
  ASSERT_EQ(loaded.configs.size(), 1u);
  EXPECT_EQ(loaded.configs[0].id, "mlp_b8_w1_weak");
  ASSERT_EQ(loaded.sources.size(), 1u);
  EXPECT_EQ(loaded.sources[0].config_files, 1u);
  ASSERT_TRUE(loaded.sources[0].metadata.has_value());
  EXPECT_EQ(loaded.sources[0].metadata->git_commit, "abc123");
  EXPECT_TRUE(loaded.skipped.empty());
  // A single configuration file is an input too.
  EXPECT_EQ(load_studies({good_file(dir)}).configs.size(), 1u);
}

TEST_F(LoadStudies, MissingPathIsNamed) {
  const std::string missing = tmp_ / "no-such-study";
  EXPECT_EQ(load_error({missing}), missing + ": no such file or folder");
  EXPECT_THROW(load_studies({}), StoreError);
}

TEST_F(LoadStudies, FolderWithoutConfigurationsIsNamed) {
  const std::string empty = tmp_ / "empty";
  fs::create_directories(empty);
  std::string message = load_error({empty});
  EXPECT_EQ(message.rfind(empty + ": no configuration files", 0), 0u) << message;
  // study.h5 alone is not a configuration.
  const std::string only_study = tmp_ / "only-study";
  fs::create_directories(only_study);
  write_study(only_study, testing_samples::sample_metadata());
  message = load_error({only_study});
  EXPECT_EQ(message.rfind(only_study + ": no configuration files", 0), 0u) << message;
}

TEST_F(LoadStudies, TruncatedFileIsNamed) {
  const std::string dir = good_study("truncated");
  expect_named(load_error({dir}), truncated_copy(dir), "truncated");
}

TEST_F(LoadStudies, ForeignHdf5FileIsNamed) {
  const std::string dir = good_study("foreign");
  expect_named(load_error({dir}), foreign_hdf5(dir), "not a ddpscale run store file");
}

TEST_F(LoadStudies, OtherSchemaVersionIsNamed) {
  const std::string dir = good_study("version");
  expect_named(load_error({dir}), other_version(dir), "schema version 2, this ddpscale reads version 1");
}

TEST_F(LoadStudies, TextFileIsNamed) {
  const std::string dir = good_study("text");
  expect_named(load_error({dir}), text_file(dir), "not an HDF5 file");
}

TEST_F(LoadStudies, DamagedFileGivenDirectlyIsNamed) {
  const std::string dir = good_study("direct");
  const std::string bad = truncated_copy(dir);
  const std::string message = load_error({bad});
  EXPECT_EQ(message.rfind(bad + ": ", 0), 0u) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST_F(LoadStudies, SkipBadLoadsTheGoodFilesAndListsTheRest) {
  const std::string dir = good_study("mixed");
  std::vector<std::string> bad = {truncated_copy(dir), foreign_hdf5(dir), other_version(dir), text_file(dir)};
  const std::string missing = tmp_ / "missing-study";
  bad.push_back(missing);
  // Several damaged files without --skip-bad: the first is named and the rest counted.
  const std::string message = load_error({dir});
  EXPECT_NE(message.find(" (and 3 more); pass --skip-bad"), std::string::npos) << message;

  LoadOptions options;
  options.skip_bad = true;
  const LoadedStudy loaded = load_studies({dir, missing}, options);
  ASSERT_EQ(loaded.configs.size(), 1u);
  EXPECT_EQ(loaded.configs[0].id, "mlp_b8_w1_weak");
  ASSERT_EQ(loaded.skipped.size(), bad.size());
  for (const std::string& path : bad) {
    const auto named = std::count_if(loaded.skipped.begin(), loaded.skipped.end(),
                                     [&](const std::string& s) { return s.rfind(path + ": ", 0) == 0; });
    EXPECT_EQ(named, 1) << path;
  }
  // Nothing readable at all is still an error, with --skip-bad too.
  EXPECT_THROW(load_studies({missing}, options), StoreError);
}

// `ddpscale study --out DIR` keeps its study in DIR/study beside spec.yaml and report/: DIR
// itself is accepted wherever a study is read, and a folder that holds a study is its own.
TEST_F(LoadStudies, TheFolderOfTheStudyCommandLoads) {
  const fs::path out = tmp_.path() / "mynet";
  const std::string study = good_study("mynet/study");
  std::ofstream(out / "spec.yaml") << "name: mynet\n";
  fs::create_directories(out / "report");
  EXPECT_EQ(study_folder_in(out.string()), study);
  EXPECT_EQ(study_folder_in(study), study);
  const LoadedStudy loaded = load_studies({out.string()});
  ASSERT_EQ(loaded.configs.size(), 1u);
  ASSERT_EQ(loaded.sources.size(), 1u);
  EXPECT_EQ(loaded.sources[0].path, study);
  EXPECT_TRUE(loaded.sources[0].metadata.has_value());
  // A folder that holds a study of its own is read as it is, whatever it has below.
  write_config(out.string(), make_config("mlp", 1000, 16, 1, kOneRank));
  EXPECT_EQ(study_folder_in(out.string()), out.string());
}

TEST(SpecName, TheTopLevelNameKey) {
  EXPECT_EQ(spec_name("# a study\nname: seed-study\nmodels: [mlp-medium]\n"), "seed-study");
  EXPECT_EQ(spec_name("models:\n  - name: not-this\nname: \"quoted\"  # why\n"), "quoted");
  EXPECT_EQ(spec_name("models: [mlp]\n"), "");
}

}  // namespace
}  // namespace ddpscale
