// `ddpscale report`: study folders in, report folder out. Needs no MPI and no GPU; the
// model registry only lends its layer summaries. With --predict, the "Predicted scaling"
// section is composed here, from prediction/ (which results/ must not depend on).
#include "models/catalog/builtin_models.hpp"
#include "prediction/prediction_inputs.hpp"
#include "prediction/prediction_report.hpp"
#include "prediction/prediction_trust.hpp"
#include "results/analysis/study_analysis.hpp"
#include "results/report/report_writer.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/cli/predict_options.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/command_line/invocation.hpp"

#include <cxxopts.hpp>

#include <iostream>
#include <optional>

namespace ddpscale {
namespace {

// The built-in model's layer summary, when the stored count says the model was built with
// the default options (a study with other features/vocab would otherwise be misdescribed).
// A study names a TorchScript model by its file's stem, which names no built-in model: "n/a".
ModelArchitecture architecture_from_registry(const std::string& model, int64_t parameters) {
  try {
    const ModelDescription d = describe_builtin_model(model, ModelOptions{});
    if (d.parameters == parameters) return {d.layers};
    return {"non-default model options (registry default has " + std::to_string(d.parameters) + " parameters)"};
  } catch (const std::exception&) {
    return {};
  }
}

std::string joined(const std::vector<std::string>& inputs) {
  std::string text;
  for (const std::string& input : inputs) text += (text.empty() ? "" : " ") + input;
  return text;
}

// The prediction `ddpscale predict` would make of the same study and targets, as the
// report's last section; its tables beside report.md.
struct ReportPrediction {
  PredictTargetArgs args;  // as given, for the messages
  PredictOptions options;
  ScalingPrediction result;
  std::string source;
};

ExtraSection predicted_scaling_section(const ReportPrediction& prediction) {
  return {"Predicted scaling", [&prediction](ReportDocument& doc, const ExtraSection::AddFigure& add_figure) {
            doc.paragraph("What more GPUs or nodes would give, as ddpscale predict predicts it (the same numbers; "
                          "predict.csv, validation.csv and predict.json beside this report).");
            add_prediction_blocks(doc, prediction.result, prediction.options, prediction.source, 3, add_figure);
          },
          std::string("predicts them from the one-rank runs, ") +
              (prediction.result.calibration.empty() ? "from the allreduce curve alone (model only)."
                                                     : "calibrated; it names the allreduce curve and the calibration.") +
              (prediction.result.warnings.empty() ? "" : " Warning: " + prediction.result.warnings.front() + ".") +
              (prediction.result.unreliable.empty() ? "" : " Its predictions failed their self-check: unreliable.")};
}

cxxopts::Options report_command_options(const char* program) {
  cxxopts::Options options(program, "Turns study folders (made by `ddpscale sweep`) into report.md, report.html, plots "
                                    "(SVG, PNG) and summary.csv/summary.json: confidence intervals, speedups with "
                                    "significance, phase breakdowns and parameter thresholds.");
  options.add_options()
      ("studies", "study folders or configuration files", cxxopts::value<std::vector<std::string>>())
      ("o,out", "report folder (created; files in it are replaced)", cxxopts::value<std::string>()->default_value("report"))
      ("price-per-gpu-hour", "price of one GPU-hour, for the cost per million samples", cxxopts::value<double>())
      ("skip-bad", "report on the readable files and list the unreadable ones instead of stopping")
      ("no-plots", "tables only, no gnuplot")
      ("predict", "add a \"Predicted scaling\" section, as `ddpscale predict` makes it: ';'-separated keys of predict's "
                  "options, e.g. \"gpus=4,8;nodes=2,4;gpus-per-node=8;network=ib-ndr-400\" (keys: gpus, nodes, "
                  "gpus-per-node, network, networks, network-commbench, allreduce, interconnects, draws; \"\" for "
                  "predict's defaults)",
       cxxopts::value<std::string>())
      ("h,help", "show this help");
  options.parse_positional({"studies"});
  options.positional_help("STUDY_DIR [STUDY_DIR...]");
  return options;
}

// Loads the studies, analyses them, predicts where asked and writes the report folder; says
// what it wrote on standard output and what it skipped or doubts on standard error.
void write_study_report(const std::vector<std::string>& inputs, const LoadOptions& load, ReportOptions& report,
                        std::optional<ReportPrediction>& prediction) {
  const LoadedStudy study = load_studies(inputs, load);
  for (const std::string& skipped : study.skipped) std::cerr << "ddpscale report: skipped " << skipped << std::endl;
  const StudyAnalysis analysis = analyze_study(study.configs);
  if (prediction) {
    const StudyDigest digest = digest_from_loaded(study, analysis);
    require_allreduce_curve(digest, prediction->options, prediction->args, prediction->source);
    prediction->result = predict_scaling(digest, prediction->options);
    assess_predictions(prediction->result, digest, prediction->options);
    report.extra_sections.push_back(predicted_scaling_section(*prediction));
  }
  ReportResult result = write_report(study, analysis, report);
  if (prediction) {
    const auto tables = write_prediction_tables(prediction->result, prediction->options, prediction->source, report.out_dir);
    result.files.insert(result.files.end(), tables.begin(), tables.end());
    std::cout << "predicted scaling: " << self_check_line(prediction->result.summary) << std::endl;
    for (const std::string& warning : prediction->result.warnings)
      std::cerr << "ddpscale report: warning: " << warning << std::endl;
    if (!prediction->result.unreliable.empty())
      std::cout << "predicted scaling: unreliable, no break-even verdict drawn: " << prediction->result.unreliable
                << std::endl;
    for (const std::string& note : prediction->result.notes) std::cerr << "ddpscale report: note: " << note << std::endl;
  }
  if (!result.plots_note.empty()) std::cerr << "ddpscale report: " << result.plots_note << std::endl;
  std::cout << "report: " << result.files.front() << " (" << analysis.configs.size() << " configurations, "
            << analysis.comparisons.size() << " comparisons; " << result.files.size() << " files in "
            << report.out_dir << ")" << std::endl;
}

}  // namespace

int run_report_command(int argc, char** argv) {
  cxxopts::Options options = report_command_options(argv[0]);
  ReportOptions report;
  LoadOptions load;
  std::vector<std::string> inputs;
  std::optional<ReportPrediction> prediction;
  try {
    const auto args = options.parse(argc, argv);
    if (printed_help(options, args, "ddpscale report studies/seed --out reports/seed")) return 0;
    if (!args.count("studies")) {
      std::cerr << "ddpscale report: no study given: ddpscale report STUDY_DIR [...] --out REPORT_DIR" << std::endl;
      return 2;
    }
    inputs = args["studies"].as<std::vector<std::string>>();
    report.out_dir = args["out"].as<std::string>();
    require_output_folder("--out", report.out_dir);
    report.inputs = inputs;
    report.command_line = typed_command_line(argc, argv);
    report.plots = !args.count("no-plots");
    report.describe_model = architecture_from_registry;
    if (args.count("price-per-gpu-hour")) {
      report.price_per_gpu_hour = args["price-per-gpu-hour"].as<double>();
      if (!(report.price_per_gpu_hour > 0)) {
        std::cerr << "ddpscale report: --price-per-gpu-hour must be a positive number" << std::endl;
        return 2;
      }
    }
    load.skip_bad = args.count("skip-bad") > 0;
    if (args.count("predict")) {
      const PredictTargetArgs spec = parse_predict_spec(args["predict"].as<std::string>());
      prediction = ReportPrediction{spec, predict_options_from(spec), {}, joined(inputs)};
    }
  } catch (const std::exception& e) {
    std::cerr << "ddpscale report: " << e.what() << " (see ddpscale report --help)" << std::endl;
    return 2;
  }

  try {
    write_study_report(inputs, load, report, prediction);
  } catch (const std::exception& e) {
    std::cerr << "ddpscale report: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace ddpscale
