// `ddpscale report`: study folders in, report folder out. Needs no MPI and no GPU; the
// model registry only lends its layer summaries.
#include <cxxopts.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/help_option.hpp"
#include "model_registry.hpp"
#include "report_writer.hpp"
#include "study_analysis.hpp"

namespace ddpscale {
namespace {

std::string joined_command_line(int argc, char** argv) {
  std::string line = "ddpscale report";
  for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
  return line;
}

// The registry's layer summary, when the stored count says the model was built with the
// default options (a study with other features/vocab would otherwise be misdescribed).
ModelArchitecture architecture_from_registry(const std::string& model, int64_t parameters) {
  try {
    const ModelDescription d = describe_model(model, ModelOptions{});
    if (d.parameters == parameters) return {d.layers};
    return {"non-default model options (registry default has " + std::to_string(d.parameters) + " parameters)"};
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

int run_report_command(int argc, char** argv) {
  cxxopts::Options options(argv[0], "Turns study folders (made by `ddpscale sweep`) into report.md, report.html, plots "
                                    "(SVG, PNG) and summary.csv/summary.json: confidence intervals, speedups with "
                                    "significance, phase breakdowns and parameter thresholds.");
  options.add_options()
      ("studies", "study folders or configuration files", cxxopts::value<std::vector<std::string>>())
      ("o,out", "report folder (created; files in it are replaced)", cxxopts::value<std::string>()->default_value("report"))
      ("price-per-gpu-hour", "price of one GPU-hour, for the cost per million samples", cxxopts::value<double>())
      ("skip-bad", "report on the readable files and list the unreadable ones instead of stopping")
      ("no-plots", "tables only, no gnuplot")
      ("h,help", "show this help");
  options.parse_positional({"studies"});
  options.positional_help("STUDY_DIR [STUDY_DIR...]");
  ReportOptions report;
  LoadOptions load;
  std::vector<std::string> inputs;
  try {
    const auto args = options.parse(argc, argv);
    if (printed_help(options, args)) return 0;
    if (!args.count("studies")) {
      std::cerr << "ddpscale report: no study given: ddpscale report STUDY_DIR [...] --out REPORT_DIR" << std::endl;
      return 2;
    }
    inputs = args["studies"].as<std::vector<std::string>>();
    report.out_dir = args["out"].as<std::string>();
    report.inputs = inputs;
    report.command_line = joined_command_line(argc, argv);
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
  } catch (const std::exception& e) {
    std::cerr << "ddpscale report: " << e.what() << " (see ddpscale report --help)" << std::endl;
    return 2;
  }

  try {
    const LoadedStudy study = load_studies(inputs, load);
    for (const std::string& skipped : study.skipped) std::cerr << "ddpscale report: skipped " << skipped << std::endl;
    const StudyAnalysis analysis = analyze_study(study.configs);
    const ReportResult result = write_report(study, analysis, report);
    if (!result.plots_note.empty()) std::cerr << "ddpscale report: " << result.plots_note << std::endl;
    std::cout << "report: " << result.files.front() << " (" << analysis.configs.size() << " configurations, "
              << analysis.comparisons.size() << " comparisons; " << result.files.size() << " files in "
              << report.out_dir << ")" << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "ddpscale report: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace ddpscale
