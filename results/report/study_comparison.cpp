#include "results/report/study_comparison.hpp"

#include "results/analysis/host_drift.hpp"
#include "results/report/report_document.hpp"
#include "results/report/report_format.hpp"
#include "results/store/config_fields.hpp"
#include "results/store/csv_text.hpp"
#include "results/store/run_store.hpp"
#include "results/store/text_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <type_traits>
#include <variant>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

// How many significant configurations the summary line names before "and N more".
constexpr size_t kNamedInSummary = 10;

bool never_matched(const std::string& attribute) { return attribute == "runs" || attribute == "seed"; }

// One field's value as text: doubles at full precision, so 1e-3 and 1.0000001e-3 differ.
struct FieldText {
  const ConfigParams& p;
  std::string operator()(std::string ConfigParams::*m) const { return p.*m; }
  std::string operator()(bool ConfigParams::*m) const { return p.*m ? "true" : "false"; }
  std::string operator()(double ConfigParams::*m) const { return round_trip_text(p.*m); }
  std::string operator()(std::vector<std::string> ConfigParams::*m) const {
    std::string text;
    for (const std::string& item : p.*m) text += item + ";";
    return text;
  }
  std::string operator()(StringMap ConfigParams::*m) const {
    std::string text;
    for (const auto& [name, value] : p.*m) text += name + "=" + value + ";";
    return text;
  }
  template <typename Integer>
  std::string operator()(Integer ConfigParams::*m) const {
    static_assert(std::is_integral_v<Integer>);
    return std::to_string(p.*m);
  }
};

void check_ignore_fields(const std::vector<std::string>& ignore_fields) {
  for (const std::string& name : ignore_fields) {
    bool known = false;
    std::string names;
    for (const ConfigField& field : kConfigFields) {
      if (field.resume != Resume::must_match || never_matched(field.attribute)) continue;
      known = known || name == field.attribute;
      names += std::string(names.empty() ? "" : ", ") + field.attribute;
    }
    if (!known) throw CompareError("cannot leave '" + name + "' out of the match: not a matched field; the fields are " + names);
  }
}

std::string label_of(const ConfigComparison& c) {
  return c.id_a == c.id_b ? c.id_a : c.id_a + " ~ " + c.id_b;
}

std::string ratio_text(double ratio, const Interval& ci) {
  ConfigSpeedup as_speedup;
  as_speedup.speedup = ratio;
  as_speedup.speedup_ci = ci;
  return speedup_text(as_speedup);  // "1.02x [0.98, 1.06]": the report's wording
}

bool overlap(const Interval& x, const Interval& y) { return x.low <= y.high && y.low <= x.high; }

// The N-rank comparison of configuration `index` of an analysis, if it has a twin.
const Comparison* n_rank_comparison_of(const StudyAnalysis& analysis, size_t index) {
  for (const Comparison& c : analysis.comparisons)
    if (c.n_gpu == index) return &c;
  return nullptr;
}

std::map<std::string, size_t> index_by_key(const StudyAnalysis& analysis, const std::vector<std::string>& ignore,
                                           const char* which) {
  std::map<std::string, size_t> by_key;
  for (size_t i = 0; i < analysis.configs.size(); ++i) {
    const auto [it, inserted] = by_key.emplace(comparison_match_key(analysis.configs[i].params, ignore), i);
    if (!inserted)
      throw CompareError(std::string("study ") + which + ": configurations " + analysis.configs[it->second].id + " and " +
                         analysis.configs[i].id +
                         " differ only in fields left out of the match (or in runs or seed); compare folders that "
                         "hold one of them each, or leave fewer fields out");
  }
  return by_key;
}

ComparedStudy describe(const LoadedStudy& study) {
  ComparedStudy s;
  for (const StudySource& source : study.sources) {
    s.path += (s.path.empty() ? "" : ", ") + source.path;
    if (!s.metadata && source.metadata) s.metadata = source.metadata;
  }
  s.configurations = study.configs.size();
  s.skipped = study.skipped;
  return s;
}

// Over the configurations whose speedups were compared with intervals on both sides.
double median_relative_half_width(const std::vector<ConfigComparison>& configs,
                                  std::optional<ConfigSpeedup> ConfigComparison::*side) {
  std::vector<double> widths;
  for (const ConfigComparison& c : configs) {
    if (c.agreement != SpeedupAgreement::agree && c.agreement != SpeedupAgreement::differ) continue;
    const ConfigSpeedup& s = *(c.*side);
    widths.push_back((s.speedup_ci.high - s.speedup_ci.low) / 2 / s.speedup);
  }
  return median(widths);
}

std::string summary_line(const ComparisonResult& r) {
  std::string line;
  if (r.speedups_compared == 0) {
    line = "no speedup to compare (no N-rank configuration with its 1-rank twin in both studies)";
  } else {
    line = "speedups agree on " + std::to_string(r.speedups_agree) + " of " + std::to_string(r.speedups_compared) +
           " configurations";
    if (r.speedups_without_interval > 0)
      line += " (" + std::to_string(r.speedups_without_interval) + " without an interval: fewer than 2 runs)";
    if (std::isfinite(r.median_relative_half_width_a))
      line += ", with a median 95% half-width of " + percent(r.median_relative_half_width_a) + " of the speedup in A and " +
              percent(r.median_relative_half_width_b) + " in B";
  }
  const double host_ratio = r.host_calibration_us_b / r.host_calibration_us_a;
  if (std::isfinite(host_ratio) && drift_of(host_ratio) > kDriftThreshold)
    line += "; the two hosts ran the fixed calibration loop at different speeds (" + format_number(r.host_calibration_us_a) +
            " us in A, " + format_number(r.host_calibration_us_b) + " us in B, median): each study's intervals cover its own "
            "host's launches, not the other host's speed, so speedups may differ beyond both intervals";
  line += "; throughput changed significantly on " + std::to_string(r.significant.size()) + " of " +
          std::to_string(r.configs.size());
  for (size_t i = 0; i < r.significant.size() && i < kNamedInSummary; ++i) {
    const ConfigComparison& c = r.configs[r.significant[i]];
    line += (i ? "; " : ": ") + label_of(c) + " " + ratio_text(c.ratio, c.ratio_ci) + ", p " +
            (c.p_value < 0.001 ? "< 0.001" : "= " + p_text(c.p_value));
  }
  if (r.significant.size() > kNamedInSummary)
    line += "; and " + std::to_string(r.significant.size() - kNamedInSummary) + " more";
  if (!r.only_in_a.empty() || !r.only_in_b.empty())
    line += "; " + std::to_string(r.only_in_a.size()) + " configuration(s) only in A, " +
            std::to_string(r.only_in_b.size()) + " only in B";
  return line;
}

// A folder written by `ddpscale report` (or its summary.json) where a study was expected.
bool looks_like_report(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path.filename() == "summary.json" || path.filename() == "summary.csv";
  if (!fs::is_directory(path, ec)) return false;
  const bool report_files = fs::exists(path / "summary.json", ec) || fs::exists(path / "report.md", ec);
  return report_files && list_config_files(path.string()).empty() && !fs::exists(path / kStudyFileName, ec);
}

LoadedStudy load_side(const std::string& path, const char* which, const LoadOptions& options) {
  std::error_code ec;
  if (path.empty()) throw CompareError(std::string("study ") + which + ": no path given; pass a study folder made by `ddpscale sweep`");
  if (!fs::exists(path, ec))
    throw CompareError(std::string("study ") + which + ": " + path +
                       ": no such file or folder; pass a study folder made by `ddpscale sweep`");
  if (looks_like_report(path))
    throw CompareError(std::string("study ") + which + ": " + path +
                       " is a report (summary.json), not a study: compare resamples each configuration's runs, and "
                       "summary.json holds only per-configuration summaries; pass the study folder the report was "
                       "made from (the folder with study.h5 and the <config-id>.h5 files)");
  try {
    return load_studies({path}, options);
  } catch (const StoreError& e) {
    throw CompareError(std::string("study ") + which + ": " + e.what());
  }
}

}  // namespace

const char* agreement_name(SpeedupAgreement agreement) {
  switch (agreement) {
    case SpeedupAgreement::not_compared: return "not compared";
    case SpeedupAgreement::agree: return "agree";
    case SpeedupAgreement::differ: return "differ";
    case SpeedupAgreement::without_interval: return "no interval";
  }
  return "?";
}

std::string comparison_match_key(const ConfigParams& params, const std::vector<std::string>& ignore_fields) {
  std::string key;
  for (const ConfigField& field : kConfigFields) {
    if (field.resume != Resume::must_match || never_matched(field.attribute)) continue;
    if (std::find(ignore_fields.begin(), ignore_fields.end(), field.attribute) != ignore_fields.end()) continue;
    key += (key.empty() ? "" : "|") + std::string(field.attribute) + "=" + std::visit(FieldText{params}, field.member);
  }
  return key;
}

ComparisonResult compare_loaded(const LoadedStudy& study_a, const LoadedStudy& study_b, const CompareOptions& options) {
  check_ignore_fields(options.ignore_fields);
  ComparisonResult r;
  r.a = describe(study_a);
  r.b = describe(study_b);
  r.options = options;
  // The report's own analysis of each study: its speedups, intervals and kept runs.
  r.host_calibration_us_a = median_host_calibration_us(study_a.configs);
  r.host_calibration_us_b = median_host_calibration_us(study_b.configs);
  const StudyAnalysis a = analyze_study(study_a.configs, options.bootstrap);
  const StudyAnalysis b = analyze_study(study_b.configs, options.bootstrap);
  const std::map<std::string, size_t> a_by_key = index_by_key(a, options.ignore_fields, "A");
  const std::map<std::string, size_t> b_by_key = index_by_key(b, options.ignore_fields, "B");

  for (size_t i = 0; i < a.configs.size(); ++i) {
    const ConfigSummary& ca = a.configs[i];
    const std::string key = comparison_match_key(ca.params, options.ignore_fields);
    const auto in_b = b_by_key.find(key);
    if (in_b == b_by_key.end()) {
      r.only_in_a.push_back(ca.id);
      continue;
    }
    const ConfigSummary& cb = b.configs[in_b->second];
    ConfigComparison c;
    c.key = key;
    c.id_a = ca.id;
    c.id_b = cb.id;
    c.params = ca.params;
    c.throughput_a = ca.throughput;
    c.throughput_b = cb.throughput;
    // The ratio B/A is the report's speedup with A in the place of the 1-rank runs: the
    // same means, the same independent resampling of each side, the same seed.
    const SpeedupEstimate ratio = bootstrap_speedup(ca.kept_throughputs, cb.kept_throughputs, 1, options.bootstrap);
    c.ratio = ratio.speedup;
    // One kept run has no spread to resample: no interval (as the report's speedups).
    if (ca.throughput.n >= 2 && cb.throughput.n >= 2) c.ratio_ci = ratio.speedup_ci;
    c.p_value = welch_t_test(cb.kept_throughputs, ca.kept_throughputs).p_value;
    c.significant = c.p_value < options.alpha && c.ratio_ci.valid() && !c.ratio_ci.contains(1.0);

    if (ca.params.world_size > 1) {
      const Comparison* ka = n_rank_comparison_of(a, i);
      const Comparison* kb = n_rank_comparison_of(b, in_b->second);
      if (ka) c.speedup_a = ka->speedup;
      if (kb) c.speedup_b = kb->speedup;
      if (ka && kb) {
        if (!ka->speedup.speedup_ci.valid() || !kb->speedup.speedup_ci.valid())
          c.agreement = SpeedupAgreement::without_interval;
        else
          c.agreement = overlap(ka->speedup.speedup_ci, kb->speedup.speedup_ci) ? SpeedupAgreement::agree
                                                                                 : SpeedupAgreement::differ;
      }
    }
    switch (c.agreement) {
      case SpeedupAgreement::agree: ++r.speedups_agree; break;
      case SpeedupAgreement::differ: ++r.speedups_differ; break;
      case SpeedupAgreement::without_interval: ++r.speedups_without_interval; break;
      case SpeedupAgreement::not_compared: break;
    }
    if (c.significant) r.significant.push_back(r.configs.size());
    r.configs.push_back(std::move(c));
  }
  for (const ConfigSummary& cb : b.configs)
    if (!a_by_key.count(comparison_match_key(cb.params, options.ignore_fields))) r.only_in_b.push_back(cb.id);
  r.speedups_compared = r.speedups_agree + r.speedups_differ + r.speedups_without_interval;
  r.median_relative_half_width_a = median_relative_half_width(r.configs, &ConfigComparison::speedup_a);
  r.median_relative_half_width_b = median_relative_half_width(r.configs, &ConfigComparison::speedup_b);

  if (r.configs.empty()) {
    const auto first = [](const std::vector<std::string>& ids) { return ids.empty() ? std::string("none") : ids.front(); };
    throw CompareError("no configuration in common: A (" + r.a.path + ") has " + std::to_string(a.configs.size()) +
                       ", e.g. " + first(r.only_in_a) + "; B (" + r.b.path + ") has " + std::to_string(b.configs.size()) +
                       ", e.g. " + first(r.only_in_b) +
                       ". Configurations match on every setting except runs and seed; if the studies differ in one "
                       "on purpose (two NCCL profiles, two devices), leave that field out of the match (e.g. "
                       "--ignore nccl_profile)");
  }
  r.summary_line = summary_line(r);
  return r;
}

ComparisonResult compare_studies(const std::string& dir_a, const std::string& dir_b, const CompareOptions& options) {
  check_ignore_fields(options.ignore_fields);
  const LoadedStudy a = load_side(dir_a, "A", options.load);
  const LoadedStudy b = load_side(dir_b, "B", options.load);
  return compare_loaded(a, b, options);
}

// ---- Output -----------------------------------------------------------------------------

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::string speedup_or_missing(const std::optional<ConfigSpeedup>& s) {
  return s ? speedup_text(*s) : "no 1-rank twin";
}

ReportDocument build_document(const ComparisonResult& r) {
  ReportDocument doc;
  doc.title = "ddpscale compare: B against A";
  doc.paragraph("**" + r.summary_line + ".**");

  doc.heading("Studies");
  ReportTable studies;
  studies.header = {"", "A", "B"};
  const auto row = [&](const std::string& name, auto of) { studies.rows.push_back({name, of(r.a), of(r.b)}); };
  const auto meta = [](auto member) {
    return [member](const ComparedStudy& s) { return s.metadata ? member(*s.metadata) : std::string("n/a (no study.h5)"); };
  };
  row("folder", [](const ComparedStudy& s) { return s.path; });
  row("configurations", [](const ComparedStudy& s) { return std::to_string(s.configurations); });
  row("created (UTC)", meta([](const StudyMetadata& m) { return m.created_utc; }));
  row("git commit", meta([](const StudyMetadata& m) { return m.git_commit; }));
  row("hosts", meta([](const StudyMetadata& m) { return joined(m.hostnames); }));
  row("GPUs", meta([](const StudyMetadata& m) { return m.gpu_names.empty() ? std::string("none") : joined(m.gpu_names); }));
  row("NCCL", meta([](const StudyMetadata& m) { return m.nccl_version.empty() ? std::string("n/a") : m.nccl_version; }));
  doc.table(studies);
  std::string matched = "Configurations are matched on every setting except runs and seed";
  if (!r.options.ignore_fields.empty()) matched += " and " + joined(r.options.ignore_fields) + " (left out as asked)";
  doc.paragraph(matched + ". " + std::to_string(r.configs.size()) + " in both, " + std::to_string(r.only_in_a.size()) +
                " only in A, " + std::to_string(r.only_in_b.size()) + " only in B.");

  doc.heading("Throughput, B against A");
  ReportTable throughput;
  throughput.header = {"configuration", "A samples/s", "B samples/s", "B/A [95% CI]", "p", "changed"};
  throughput.right_aligned = {false, true, true, true, true, false};
  for (const ConfigComparison& c : r.configs)
    throughput.rows.push_back({label_of(c), throughput_text(c.throughput_a), throughput_text(c.throughput_b),
                               ratio_text(c.ratio, c.ratio_ci), p_text(c.p_value),
                               c.significant ? (c.ratio > 1 ? "**faster**" : "**slower**") : ""});
  doc.table(throughput);

  ReportTable speedups;
  speedups.header = {"configuration", "speedup in A [95% CI]", "speedup in B [95% CI]", "intervals"};
  speedups.right_aligned = {false, true, true, false};
  for (const ConfigComparison& c : r.configs) {
    if (c.params.world_size == 1) continue;
    const char* verdict = c.agreement == SpeedupAgreement::differ ? "**differ**" : agreement_name(c.agreement);
    speedups.rows.push_back({label_of(c), speedup_or_missing(c.speedup_a), speedup_or_missing(c.speedup_b), verdict});
  }
  if (!speedups.rows.empty()) {
    doc.heading("Speedup over 1 rank, in A and in B");
    doc.table(speedups);
  }

  if (!r.only_in_a.empty() || !r.only_in_b.empty()) {
    doc.heading("Only in one study");
    std::vector<std::string> items;
    for (const std::string& id : r.only_in_a) items.push_back("only in A: " + id);
    for (const std::string& id : r.only_in_b) items.push_back("only in B: " + id);
    doc.bullets(items);
  }

  const BootstrapOptions& bs = r.options.bootstrap;
  doc.heading("How to read this");
  doc.paragraph(
      "Per configuration, the runs the report keeps (failed runs and throughput outliers out). Samples/s are the "
      "mean over runs with a 95% interval [low, high] on the log scale (the t-interval of the mean log throughput, "
      "exponentiated: never below zero), as in the report. B/A is the ratio of "
      "mean throughputs; its interval is a percentile bootstrap (" + group_thousands(bs.resamples) +
      " resamples, seed " + std::to_string(bs.seed) + ", each study's runs resampled on their own), p is Welch's "
      "two-tailed t-test of B's against A's throughputs. Throughput changed significantly when p < " +
      round_trip_text(r.options.alpha) + " and the interval excludes 1. Speedups are the report's (the same bootstrap "
      "against the 1-rank twin in the same study); they agree when their two intervals overlap, which is a lenient "
      "test: disjoint intervals are strong evidence of a change, overlapping ones are not proof of none. "
      "docs/methodology.md, \"Comparing two studies\".");
  return doc;
}

std::string cell_text(double value) { return std::isfinite(value) ? round_trip_text(value) : ""; }

}  // namespace

std::string comparison_markdown(const ComparisonResult& result) { return render_markdown(build_document(result)); }
std::string comparison_html(const ComparisonResult& result) { return render_html(build_document(result)); }

std::string comparison_csv(const ComparisonResult& r) {
  std::string out =
      "in,id_a,id_b,model,parameters,scaling,batch_per_rank,world_size,exec,dtype,nccl_profile,runs_kept_a,runs_kept_b,"
      "samples_per_s_mean_a,samples_per_s_mean_b,ratio,ratio_ci95_low,ratio_ci95_high,welch_p,significant,"
      "speedup_a,speedup_a_ci95_low,speedup_a_ci95_high,speedup_b,speedup_b_ci95_low,speedup_b_ci95_high,speedups\n";
  for (const ConfigComparison& c : r.configs) {
    const ConfigParams& p = c.params;
    out += "both," + csv_field(c.id_a) + "," + csv_field(c.id_b) + "," + csv_field(p.model) + "," +
           std::to_string(p.parameters) + "," + csv_field(p.scaling) + "," + std::to_string(p.batch_per_rank) + "," +
           std::to_string(p.world_size) + "," + csv_field(p.exec) + "," + csv_field(p.dtype) + "," +
           csv_field(p.nccl_profile) + "," + std::to_string(c.throughput_a.n) + "," + std::to_string(c.throughput_b.n) +
           "," + cell_text(c.throughput_a.mean) + "," + cell_text(c.throughput_b.mean) + "," + cell_text(c.ratio) +
           "," + cell_text(c.ratio_ci.low) + "," + cell_text(c.ratio_ci.high) + "," + cell_text(c.p_value) + "," +
           (c.significant ? "true" : "false");
    for (const std::optional<ConfigSpeedup>& s : {c.speedup_a, c.speedup_b})
      out += s ? "," + cell_text(s->speedup) + "," + cell_text(s->speedup_ci.low) + "," +
                     cell_text(s->speedup_ci.high)
               : std::string(",,,");
    out += "," + csv_field(c.agreement == SpeedupAgreement::not_compared ? "" : agreement_name(c.agreement)) + "\n";
  }
  // Configurations of one study only: their id, the rest empty.
  for (const std::string& id : r.only_in_a) out += "A," + csv_field(id) + std::string(25, ',') + "\n";
  for (const std::string& id : r.only_in_b) out += "B,," + csv_field(id) + std::string(24, ',') + "\n";
  return out;
}

std::string comparison_json(const ComparisonResult& r) {
  using Json = nlohmann::ordered_json;
  const auto study = [](const ComparedStudy& s) {
    Json object = {{"path", s.path}, {"configurations", static_cast<int64_t>(s.configurations)}};
    if (s.metadata) {
      object["created_utc"] = s.metadata->created_utc;
      object["git_commit"] = s.metadata->git_commit;
      object["hostnames"] = s.metadata->hostnames;
    }
    object["skipped"] = s.skipped;
    return object;
  };
  Json json = {{"a", study(r.a)}, {"b", study(r.b)}};
  json["options"] = {{"resamples", r.options.bootstrap.resamples},
                     {"seed", static_cast<int64_t>(r.options.bootstrap.seed)},
                     {"confidence", r.options.bootstrap.confidence},
                     {"alpha", r.options.alpha},
                     {"ignored_fields", r.options.ignore_fields}};
  json["summary"] = {{"line", r.summary_line},
                     {"configurations_in_both", static_cast<int64_t>(r.configs.size())},
                     {"only_in_a", static_cast<int64_t>(r.only_in_a.size())},
                     {"only_in_b", static_cast<int64_t>(r.only_in_b.size())},
                     {"speedups_compared", static_cast<int64_t>(r.speedups_compared)},
                     {"speedups_agree", static_cast<int64_t>(r.speedups_agree)},
                     {"speedups_differ", static_cast<int64_t>(r.speedups_differ)},
                     {"speedups_without_interval", static_cast<int64_t>(r.speedups_without_interval)},
                     {"throughput_changed_significantly", static_cast<int64_t>(r.significant.size())},
                     {"median_relative_half_width_a", r.median_relative_half_width_a},
                     {"median_relative_half_width_b", r.median_relative_half_width_b}};
  const auto speedup = [](const std::optional<ConfigSpeedup>& s) {
    if (!s) return Json();
    return Json{{"speedup", s->speedup},
                {"ci95_low", s->speedup_ci.low},
                {"ci95_high", s->speedup_ci.high},
                {"welch_p", s->p_value}};
  };
  Json& configurations = json["configurations"] = Json::array();
  for (const ConfigComparison& c : r.configs) {
    configurations.push_back({{"id_a", c.id_a},
                              {"id_b", c.id_b},
                              {"model", c.params.model},
                              {"parameters", static_cast<int64_t>(c.params.parameters)},
                              {"scaling", c.params.scaling},
                              {"batch_per_rank", static_cast<int64_t>(c.params.batch_per_rank)},
                              {"world_size", c.params.world_size},
                              {"runs_kept_a", static_cast<int64_t>(c.throughput_a.n)},
                              {"runs_kept_b", static_cast<int64_t>(c.throughput_b.n)},
                              {"samples_per_s_mean_a", c.throughput_a.mean},
                              {"samples_per_s_mean_b", c.throughput_b.mean},
                              {"ratio", c.ratio},
                              {"ratio_ci95_low", c.ratio_ci.low},
                              {"ratio_ci95_high", c.ratio_ci.high},
                              {"welch_p", c.p_value},
                              {"significant", c.significant},
                              {"speedup_a", speedup(c.speedup_a)},
                              {"speedup_b", speedup(c.speedup_b)},
                              {"speedups", c.agreement == SpeedupAgreement::not_compared
                                               ? Json()
                                               : Json(agreement_name(c.agreement))}});
  }
  json["only_in_a"] = r.only_in_a;
  json["only_in_b"] = r.only_in_b;
  return json_text(json) + "\n";
}

std::vector<std::string> write_comparison(const ComparisonResult& result, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw std::runtime_error(out_dir + ": cannot create the output folder: " + ec.message());
  std::vector<std::string> files;
  const auto out = [&](const std::string& name, const std::string& text) {
    const std::string path = (fs::path(out_dir) / name).string();
    write_whole_file(path, text);
    files.push_back(path);
  };
  const ReportDocument document = build_document(result);
  out("compare.md", render_markdown(document));
  out("compare.html", render_html(document));
  out("compare.csv", comparison_csv(result));
  out("compare.json", comparison_json(result));
  return files;
}

}  // namespace ddpscale
