#include "prediction/prediction_inputs.hpp"

#include "results/analysis/config_summary.hpp"
#include "results/analysis/study_analysis.hpp"
#include "results/store/csv_text.hpp"
#include "results/store/run_store.hpp"
#include "results/store/text_io.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

PhaseStats stats_of(const Summary& s) { return {s.mean, s.sd, s.n}; }

// The predictor models ddpscale's engine from its phases (backward, allreduce, when each
// gradient is ready); PyTorch DDP's imported runs time only the whole step, so a study's
// pytorch-ddp configurations are left out of the prediction and its self-check.
bool predicts_engine(const std::string& engine) { return engine == kEngineDdpscale; }

int largest_world_size(const StudyDigest& digest) {
  int largest = 0;
  for (const MeasuredConfig& c : digest.configs) largest = std::max(largest, c.params.world_size);
  return largest;
}

// One summary.csv row, by column name.
class CsvRow {
 public:
  CsvRow(const std::map<std::string, size_t>& columns, const std::vector<std::string>& fields, std::string file)
      : columns_(columns), fields_(fields), file_(std::move(file)) {}
  const std::string& text(const std::string& name) const {
    const auto found = columns_.find(name);
    if (found == columns_.end() || found->second >= fields_.size())
      throw std::runtime_error(file_ + ": no column '" + name + "'");
    return fields_[found->second];
  }
  bool has(const std::string& name) const { return columns_.count(name) != 0; }
  double number(const std::string& name) const {
    const std::string& t = text(name);
    return t.empty() ? kNaN : std::stod(t);
  }
  PhaseStats phase(const std::string& prefix) const {
    return {number(prefix + "_mean"), number(prefix + "_sd"), static_cast<size_t>(number(prefix + "_n"))};
  }

 private:
  const std::map<std::string, size_t>& columns_;
  const std::vector<std::string>& fields_;
  std::string file_;
};

MeasuredConfig config_from_row(const CsvRow& row) {
  MeasuredConfig c;
  c.id = row.text("id");
  ConfigParams& p = c.params;
  p.model = row.text("model");
  p.parameters = static_cast<int64_t>(row.number("parameters"));
  p.scaling = row.text("scaling");
  p.batch_per_rank = static_cast<int64_t>(row.number("batch_per_rank"));
  p.global_batch = static_cast<int64_t>(row.number("global_batch"));
  p.world_size = static_cast<int>(row.number("world_size"));
  p.optimizer = row.text("optimizer");
  p.learning_rate = row.number("learning_rate");
  p.dtype = row.text("dtype");
  p.exec = row.text("exec");
  p.bucket_mb = row.number("bucket_mb");
  p.overlap = row.text("overlap") == "true";
  p.nccl_profile = row.text("nccl_profile");
  p.device = row.text("device");
  p.backend = row.text("backend");
  p.measured_steps = static_cast<int>(row.number("measured_steps"));
  try {
    p.allreduce_dtype = row.text("allreduce_dtype");
  } catch (const std::runtime_error&) {
    p.allreduce_dtype = "float32";  // summaries written before the column existed
  }
  c.step_us = row.phase("step_us");
  c.backward_us = row.phase("backward_us");
  c.throughput = row.phase("samples_per_s");
  // speedup holds the paired design's estimate where speedup_paired is 1 (summaries written
  // before the paired design have neither column).
  if (row.has("speedup_paired") && row.number("speedup_paired") == 1.0) c.paired_speedup = row.number("speedup");
  return c;
}

// Each N-GPU configuration's paired speedup, from the study's comparisons, by id.
void add_paired_speedups(const StudyAnalysis& analysis, StudyDigest& digest) {
  std::map<std::string, double> by_id;
  for (const Comparison& k : analysis.comparisons)
    if (k.paired.measured) by_id[analysis.configs[k.n_gpu].id] = k.speedup.speedup;
  for (MeasuredConfig& c : digest.configs)
    if (const auto found = by_id.find(c.id); found != by_id.end()) c.paired_speedup = found->second;
}

}  // namespace

StudyDigest digest_from_loaded(const LoadedStudy& study) { return digest_from_loaded(study, analyze_study(study.configs)); }

StudyDigest digest_from_loaded(const LoadedStudy& study, const StudyAnalysis& analysis) {
  StudyDigest digest;
  if (!study.sources.empty() && study.sources.front().metadata)
    digest.gpu_names = study.sources.front().metadata->gpu_names;
  const CommBenchTable table =
      !study.sources.empty() && study.sources.front().commbench ? *study.sources.front().commbench : CommBenchTable{};
  for (const ConfigRecord& record : study.configs) {
    if (!predicts_engine(record.params.engine)) continue;
    const ConfigSummary summary = summarize_config(record);
    MeasuredConfig c;
    c.id = summary.id;
    c.params = summary.params;
    c.step_us = stats_of(summary.phase_us[static_cast<size_t>(Phase::step)]);
    c.backward_us = stats_of(summary.phase_us[static_cast<size_t>(Phase::backward)]);
    c.throughput = stats_of(summary.throughput);
    c.gradient_timing = record.gradient_timing;
    digest.configs.push_back(c);
  }
  add_paired_speedups(analysis, digest);
  digest.commbench_bytes = table.bytes;
  digest.commbench_time_us = table.time_us;
  // commbench runs once at the start of a sweep, on every rank of the launch.
  digest.commbench_ranks = table.bytes.empty() ? 0 : largest_world_size(digest);
  return digest;
}

StudyDigest digest_from_study(const std::string& study_dir) { return digest_from_loaded(load_studies({study_dir})); }

CommbenchCurve read_commbench_csv(const std::string& path) {
  CommbenchCurve curve;
  const auto rows = parse_csv(read_whole_file(path));
  if (rows.empty() || rows[0].size() < 5 || rows[0][0] != "bytes" || rows[0][1] != "time_us" || rows[0][4] != "ranks")
    throw std::runtime_error(path + ": not a commbench.csv (header bytes,time_us,algbw_gbs,busbw_gbs,ranks, as "
                                    "`ddpscale report` writes it beside report.md)");
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].size() < 5) throw std::runtime_error(path + ": row " + std::to_string(r) + " has too few fields");
    try {
      curve.bytes.push_back(std::stod(rows[r][0]));
      curve.time_us.push_back(std::stod(rows[r][1]));
      curve.ranks = std::stoi(rows[r][4]);
    } catch (const std::logic_error&) {
      throw std::runtime_error(path + ": row " + std::to_string(r) + " is not numbers");
    }
  }
  return curve;
}

StudyDigest digest_from_report(const std::string& report_dir) {
  StudyDigest digest;
  const std::string summary_path = (fs::path(report_dir) / "summary.csv").string();
  const auto rows = parse_csv(read_whole_file(summary_path));
  if (rows.size() < 2) throw std::runtime_error(summary_path + ": no configurations");
  std::map<std::string, size_t> columns;
  for (size_t i = 0; i < rows[0].size(); ++i) columns[rows[0][i]] = i;
  for (size_t r = 1; r < rows.size(); ++r) {
    const CsvRow row(columns, rows[r], summary_path);
    if (columns.count("engine") && !predicts_engine(row.text("engine"))) continue;  // older summaries: ddpscale's
    digest.configs.push_back(config_from_row(row));
  }

  const std::string commbench_path = (fs::path(report_dir) / "commbench.csv").string();
  if (!fs::exists(commbench_path)) return digest;
  const CommbenchCurve curve = read_commbench_csv(commbench_path);
  digest.commbench_bytes = curve.bytes;
  digest.commbench_time_us = curve.time_us;
  digest.commbench_ranks = curve.ranks;
  return digest;
}

StudyDigest load_study_digest(const std::string& given) {
  const std::string folder = study_folder_in(given);
  if (fs::exists(fs::path(folder) / kStudyFileName)) return digest_from_study(folder);
  if (fs::exists(fs::path(folder) / "summary.csv")) return digest_from_report(folder);
  throw std::runtime_error(folder + ": neither a study (" + std::string(kStudyFileName) +
                           ") nor a report (summary.csv); give the folder `ddpscale sweep --out`, `ddpscale study --out` or "
                           "`ddpscale report --out` wrote");
}

}  // namespace ddpscale
