#include "results/report/summary_export.hpp"
#include "results/store/csv_text.hpp"

#include "results/report/report_engines.hpp"
#include "results/store/config_fields.hpp"
#include "results/store/text_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <variant>

namespace ddpscale {
namespace {

// One column: its name and how to read it from a configuration and its comparison (the
// comparison is null for 1-GPU rows and unmatched N-GPU rows).
struct Column {
  std::string name;
  std::function<double(const ConfigSummary&, const Comparison*)> number;  // NaN: empty cell
  std::function<std::string(const ConfigSummary&)> text;                  // used when set
  std::function<bool(const ConfigSummary&)> flag;  // used when set: true/false, a JSON boolean
};

Column text_column(const std::string& name, std::function<std::string(const ConfigSummary&)> text) {
  return Column{name, nullptr, std::move(text), nullptr};
}
Column number_column(const std::string& name, std::function<double(const ConfigSummary&, const Comparison*)> number) {
  return Column{name, std::move(number), nullptr, nullptr};
}
Column flag_column(const std::string& name, std::function<bool(const ConfigSummary&)> flag) {
  return Column{name, nullptr, nullptr, std::move(flag)};
}

// The column of one configuration field, written as its type says.
struct FieldColumn {
  const std::string& name;
  Column operator()(std::string ConfigParams::*member) const {
    return text_column(name, [member](const ConfigSummary& s) { return s.params.*member; });
  }
  Column operator()(bool ConfigParams::*member) const {
    return flag_column(name, [member](const ConfigSummary& s) { return s.params.*member; });
  }
  template <typename Number>
  Column operator()(Number ConfigParams::*member) const {
    // Lists and maps never get here: summary_columns_well_formed() refuses them at compile time.
    if constexpr (!std::is_arithmetic_v<Number>) throw std::logic_error(name + " cannot be a summary column");
    else
      return number_column(name, [member](const ConfigSummary& s, const Comparison*) {
        return static_cast<double>(s.params.*member);
      });
  }
};

// The configuration's columns, in the positions kConfigFields gives them.
void add_config_columns(std::vector<Column>& columns) {
  std::vector<const ConfigField*> in_order;
  for (const ConfigField& field : kConfigFields)
    if (field.column.name) in_order.push_back(&field);
  std::sort(in_order.begin(), in_order.end(),
            [](const ConfigField* a, const ConfigField* b) { return a->column.position < b->column.position; });
  for (const ConfigField* field : in_order)
    columns.push_back(std::visit(FieldColumn{field->column.name}, field->member));
}

void add_summary_columns(std::vector<Column>& columns, const std::string& prefix,
                         std::function<const Summary&(const ConfigSummary&)> of) {
  auto add = [&](const std::string& field, double Summary::*member) {
    columns.push_back(number_column(prefix + "_" + field, [of, member](const ConfigSummary& c, const Comparison*) {
      return of(c).*member;
    }));
  };
  columns.push_back(number_column(prefix + "_n", [of](const ConfigSummary& c, const Comparison*) {
    return static_cast<double>(of(c).n);
  }));
  add("mean", &Summary::mean);
  add("sd", &Summary::sd);
  add("ci95_low", &Summary::ci_low);
  add("ci95_high", &Summary::ci_high);
  add("median", &Summary::median);
  add("q1", &Summary::q1);
  add("q3", &Summary::q3);
}

// The paired design's columns (results/statistics/paired_speedup.hpp): 1 where the speedup came from it,
// the A/A ratios and the solo check with their intervals; empty cells elsewhere.
void add_paired_estimate_columns(std::vector<Column>& c, const std::string& name,
                                 PairedEstimate PairedChecks::*member) {
  const auto of = [member](const Comparison* k) -> const PairedEstimate* {
    return k && k->paired.measured ? &(k->paired.*member) : nullptr;
  };
  c.push_back(number_column(name, [of](const ConfigSummary&, const Comparison* k) { return of(k) ? of(k)->ratio : kNaN; }));
  c.push_back(number_column(name + "_ci95_low", [of](const ConfigSummary&, const Comparison* k) {
    return of(k) ? of(k)->ci.low : kNaN;
  }));
  c.push_back(number_column(name + "_ci95_high", [of](const ConfigSummary&, const Comparison* k) {
    return of(k) ? of(k)->ci.high : kNaN;
  }));
}

void add_paired_columns(std::vector<Column>& c) {
  c.push_back(number_column("speedup_paired", [](const ConfigSummary&, const Comparison* k) {
    return k ? (k->paired.measured ? 1.0 : 0.0) : kNaN;
  }));
  c.push_back(number_column("paired_pairs", [](const ConfigSummary&, const Comparison* k) {
    return k && k->paired.measured ? static_cast<double>(k->paired.speedup.pairs) : kNaN;
  }));
  c.push_back(number_column("paired_block_steps_median", [](const ConfigSummary&, const Comparison* k) {
    if (!k || !k->paired.measured) return kNaN;
    return median(std::vector<double>(k->paired.block_steps.begin(), k->paired.block_steps.end()));
  }));
  add_paired_estimate_columns(c, "aa_one_rank", &PairedChecks::same_one_rank);
  add_paired_estimate_columns(c, "aa_n_ranks", &PairedChecks::same_n_ranks);
  add_paired_estimate_columns(c, "solo_check", &PairedChecks::solo);
  add_paired_estimate_columns(c, "solo_check_n_ranks", &PairedChecks::solo_n_ranks);
}

std::vector<Column> columns() {
  std::vector<Column> c;
  c.push_back(text_column("id", [](const ConfigSummary& s) { return s.id; }));
  add_config_columns(c);
  c.push_back(number_column("runs_total", [](const ConfigSummary& s, const Comparison*) { return double(s.runs_total); }));
  c.push_back(number_column("runs_ok", [](const ConfigSummary& s, const Comparison*) { return double(s.runs_ok); }));
  c.push_back(number_column("runs_failed", [](const ConfigSummary& s, const Comparison*) { return double(s.runs_failed); }));
  c.push_back(number_column("success_rate", [](const ConfigSummary& s, const Comparison*) { return s.success_rate; }));
  c.push_back(number_column("outliers_removed", [](const ConfigSummary& s, const Comparison*) { return double(s.outliers_removed); }));
  add_summary_columns(c, "samples_per_s", [](const ConfigSummary& s) -> const Summary& { return s.throughput; });
  for (int p = 0; p < kPhaseCount; ++p) {
    add_summary_columns(c, std::string(phase_name(static_cast<Phase>(p))) + "_us",
                        [p](const ConfigSummary& s) -> const Summary& { return s.phase_us[static_cast<size_t>(p)]; });
  }
  c.push_back(number_column("peak_memory_bytes", [](const ConfigSummary& s, const Comparison*) { return s.peak_memory_bytes; }));
  c.push_back(number_column("gpu_utilization_pct", [](const ConfigSummary& s, const Comparison*) { return s.gpu_utilization_pct; }));
  c.push_back(number_column("gpu_busy_us", [](const ConfigSummary& s, const Comparison*) { return s.gpu_busy_us; }));
  c.push_back(number_column("calibration_host_us", [](const ConfigSummary& s, const Comparison*) { return s.calibration_host_us; }));
  c.push_back(number_column("calibration_device_us", [](const ConfigSummary& s, const Comparison*) { return s.calibration_device_us; }));
  c.push_back(number_column("speedup", [](const ConfigSummary&, const Comparison* k) { return k ? k->speedup.speedup : kNaN; }));
  c.push_back(number_column("speedup_ci95_low", [](const ConfigSummary&, const Comparison* k) { return k ? k->speedup.speedup_ci.low : kNaN; }));
  c.push_back(number_column("speedup_ci95_high", [](const ConfigSummary&, const Comparison* k) { return k ? k->speedup.speedup_ci.high : kNaN; }));
  c.push_back(number_column("efficiency", [](const ConfigSummary&, const Comparison* k) {
    return k ? k->speedup.speedup / k->speedup.world_size : kNaN;
  }));
  c.push_back(number_column("welch_p", [](const ConfigSummary&, const Comparison* k) { return k ? k->speedup.p_value : kNaN; }));
  c.push_back(text_column("paid_off", [](const ConfigSummary&) { return std::string(); }));  // filled per row below
  add_paired_columns(c);
  return c;
}

// A missing number is an empty cell, as spreadsheets expect.
std::string number_text(double value) { return std::isfinite(value) ? round_trip_text(value) : ""; }

const Comparison* comparison_of(const StudyAnalysis& analysis, size_t config) {
  for (const Comparison& c : analysis.comparisons)
    if (c.n_gpu == config) return &c;
  return nullptr;
}

std::string paid_off_text(const ConfigSummary& s, const Comparison* k) {
  if (s.params.world_size == 1 || !k) return "";
  return k->paid_off() ? "true" : "false";
}

using Json = nlohmann::ordered_json;

// One object per configuration, a member per summary.csv column, and its failures.
Json configurations_json(const StudyAnalysis& analysis) {
  const std::vector<Column> cols = columns();
  Json configurations = Json::array();
  for (size_t row = 0; row < analysis.configs.size(); ++row) {
    const ConfigSummary& s = analysis.configs[row];
    const Comparison* k = comparison_of(analysis, row);
    Json entry;
    for (const Column& col : cols) {
      Json& cell = entry[col.name];
      if (col.name == "paid_off") {
        const std::string paid = paid_off_text(s, k);
        if (!paid.empty()) cell = paid == "true";  // else null
      } else if (col.flag) {
        cell = col.flag(s);
      } else if (col.text) {
        cell = col.text(s);
      } else {
        cell = col.number(s, k);  // NaN is written as null
      }
    }
    entry["failures"] = s.failures;
    configurations.push_back(std::move(entry));
  }
  return configurations;
}

// An object that starts with the threshold group it belongs to.
Json group_object(const ThresholdGroup& group) {
  return Json{{"world_size", group.world_size}, {"exec", group.exec}, {"dtype", group.dtype}};
}

// family: "" for a group's break-even over all its models.
Json break_even_object(const ThresholdGroup& group, const std::string& family, const BreakEven& be) {
  Json object = group_object(group);
  if (!family.empty()) object["family"] = family;
  object.update(Json{{"configurations", static_cast<int64_t>(be.configs)},
                     {"found", be.found},
                     {"parameters", be.parameters},
                     {"ci95_low", be.ci.low},
                     {"ci95_high", be.ci.high},
                     {"extrapolated", be.extrapolated},
                     {"far_extrapolated", be.far_extrapolated},
                     {"fit_intercept", be.fit.intercept},
                     {"fit_slope_per_decade", be.fit.slope},
                     {"reason", be.reason}});
  return object;
}

Json break_even_json(const StudyAnalysis& analysis) {
  Json list = Json::array();
  for (const auto& [group, be] : analysis.break_even) list.push_back(break_even_object(group, "", be));
  return list;
}

// -1 ("no such size") as null.
Json parameters_or_null(int64_t parameters) { return parameters < 0 ? Json() : Json(parameters); }

Json measured_thresholds_json(const StudyAnalysis& analysis) {
  Json measured = Json::array();
  for (const auto& [group, rows] : analysis.measured_thresholds)
    for (const MeasuredThreshold& m : rows) {
      Json object = group_object(group);
      object.update(Json{{"family", m.family},
                         {"batch_per_rank", m.batch},
                         {"sizes_compared", m.sizes},
                         {"pays_off_from_parameters", parameters_or_null(m.pays_from)},
                         {"pays_off_from_model", m.pays_from_model},
                         {"largest_not_paying_parameters", parameters_or_null(m.largest_not_paying)},
                         {"largest_not_paying_model", m.largest_not_paying_model}});
      measured.push_back(std::move(object));
    }
  return measured;
}

// Per model family, for groups that compared several (study_analysis.hpp).
Json break_even_by_family_json(const StudyAnalysis& analysis) {
  Json by_family = Json::array();
  for (const auto& [group, families] : analysis.break_even_by_family)
    for (const auto& [family, be] : families) by_family.push_back(break_even_object(group, family, be));
  return by_family;
}

// One pair of twin configurations, ddpscale's and PyTorch DDP's, and their ratio.
Json engine_entry(const StudyAnalysis& analysis, size_t ddpscale, size_t pytorch, const SpeedupEstimate& ratio) {
  const ConfigParams& p = analysis.configs[ddpscale].params;
  return Json{{"ddpscale_config", analysis.configs[ddpscale].id},
              {"pytorch_config", analysis.configs[pytorch].id},
              {"model", p.model},
              {"batch_per_rank", p.batch_per_rank},
              {"world_size", p.world_size},
              {"dtype", p.dtype},
              {"exec", p.exec},
              {"ddpscale_samples_per_second", analysis.configs[ddpscale].throughput.mean},
              {"pytorch_samples_per_second", analysis.configs[pytorch].throughput.mean},
              {"ddpscale_over_pytorch", ratio.speedup},
              {"ci95_low", ratio.speedup_ci.valid() ? Json(ratio.speedup_ci.low) : Json()},
              {"ci95_high", ratio.speedup_ci.valid() ? Json(ratio.speedup_ci.high) : Json()},
              {"verdict", engine_ratio_verdict(ratio)}};
}

// Both engines' twins (report_engines.hpp), one object per pair of configurations: the
// report's "Beside PyTorch DDP" figures for a script that checks them.
Json engines_json(const StudyAnalysis& analysis) {
  Json engines = Json::array();
  std::set<size_t> listed;  // a 1-rank configuration is in one pair per larger world size
  for (const EnginePair& e : engine_pairs(analysis)) {
    if (listed.insert(e.ddpscale->one_gpu).second)
      engines.push_back(engine_entry(analysis, e.ddpscale->one_gpu, e.pytorch->one_gpu, e.ratio_one));
    if (listed.insert(e.ddpscale->n_gpu).second)
      engines.push_back(engine_entry(analysis, e.ddpscale->n_gpu, e.pytorch->n_gpu, e.ratio_n));
  }
  for (const EngineTwin& e : engine_twins_without_comparison(analysis))
    engines.push_back(engine_entry(analysis, e.ddpscale, e.pytorch, e.ratio));
  return engines;
}

}  // namespace

std::string summary_csv(const StudyAnalysis& analysis) {
  const std::vector<Column> cols = columns();
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) out += (i ? "," : "") + cols[i].name;
  out += "\n";
  for (size_t row = 0; row < analysis.configs.size(); ++row) {
    const ConfigSummary& s = analysis.configs[row];
    const Comparison* k = comparison_of(analysis, row);
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i) out += ",";
      if (cols[i].name == "paid_off") out += paid_off_text(s, k);
      else if (cols[i].text) out += csv_field(cols[i].text(s));
      else if (cols[i].flag) out += cols[i].flag(s) ? "true" : "false";
      else out += number_text(cols[i].number(s, k));
    }
    out += "\n";
  }
  return out;
}

std::string summary_json(const StudyAnalysis& analysis) {
  Json json;
  json["configurations"] = configurations_json(analysis);
  json["break_even"] = break_even_json(analysis);
  json["measured_thresholds"] = measured_thresholds_json(analysis);
  json["break_even_by_family"] = break_even_by_family_json(analysis);
  json["engines"] = engines_json(analysis);
  return json_text(json) + "\n";
}

std::string commbench_csv(const CommBenchTable& table, int ranks) {
  std::string csv = "bytes,time_us,algbw_gbs,busbw_gbs,ranks\n";
  for (size_t i = 0; i < table.bytes.size(); ++i)
    csv += round_trip_text(table.bytes[i]) + "," + round_trip_text(table.time_us[i]) + "," +
           round_trip_text(table.algbw_gbs[i]) + "," + round_trip_text(table.busbw_gbs[i]) + "," + std::to_string(ranks) +
           "\n";
  return csv;
}

}  // namespace ddpscale
