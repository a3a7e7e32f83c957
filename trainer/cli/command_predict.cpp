// `ddpscale predict`: a study (or a report folder) in, predicted scaling out: N GPUs in one
// node, or K nodes of G GPUs, with 95% prediction intervals and the predictor's self-check
// against the study's own N-GPU measurements. Needs no MPI and no GPU.
#include "prediction/prediction_inputs.hpp"
#include "prediction/prediction_report.hpp"
#include "prediction/prediction_trust.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/cli/predict_options.hpp"
#include "trainer/command_line/cli_util.hpp"

#include <cxxopts.hpp>

#include <iostream>

namespace ddpscale {

int run_predict_command(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Predicts the step time, throughput, speedup and efficiency of every 1-GPU configuration of a study on more "
      "GPUs (--gpus) or more nodes (--nodes, --gpus-per-node, and --network or --network-commbench), with 95% "
      "prediction intervals and plots of speedup and efficiency against N, from the "
      "study's own phase times and allreduce curve (a study of 1 GPU has none: --allreduce names a measured one "
      "or gives a commbench.csv); and checks itself on the study's measured N-GPU configurations, "
      "each predicted without its own runs. Input: a study folder (ddpscale sweep --out) or a report folder "
      "(summary.csv with commbench.csv). docs/methodology.md, \"Predicted scaling\", states the model.");
  options.add_options()
      ("study", "study folder or report folder", cxxopts::value<std::string>())
      ("o,out", "output folder (predict.md, predict.html, plots/, predict.csv, validation.csv, predict.json)",
       cxxopts::value<std::string>()->default_value("predict"))
      ("no-plots", "tables only, no gnuplot")
      ("h,help", "show this help");
  add_predict_target_options(options);
  options.parse_positional({"study"});
  options.positional_help("STUDY_OR_REPORT_DIR");
  PredictTargetArgs target_args;
  PredictOptions predict;
  std::string input, out;
  bool with_plots = true;
  try {
    const auto args = options.parse(argc, argv);
    if (printed_help(options, args, "ddpscale predict studies/seed --gpus 4,8 --out predict")) return 0;
    if (!args.count("study")) throw UsageError("no study given: ddpscale predict STUDY_DIR --gpus 4,8 --out DIR");
    input = args["study"].as<std::string>();
    out = args["out"].as<std::string>();
    require_output_folder("--out", out);
    with_plots = !args.count("no-plots");
    target_args = predict_target_args(args);
    predict = predict_options_from(target_args);
  } catch (const std::exception& e) {
    std::cerr << "ddpscale predict: " << e.what() << " (see ddpscale predict --help)" << std::endl;
    return 2;
  }

  try {
    const StudyDigest study = load_study_digest(input);
    require_allreduce_curve(study, predict, target_args, input);
    const AllreduceCurve curve = allreduce_curve_of(study, predict);
    std::cerr << "ddpscale predict: " << study.configs.size() << " configurations; allreduce curve of "
              << curve.bytes.size() << " sizes on " << curve.ranks << " GPUs: " << curve.source << "; predicting..."
              << std::endl;
    ScalingPrediction result = predict_scaling(study, predict);
    assess_predictions(result, study, predict);
    const PredictionFiles files = write_prediction(result, predict, input, out, with_plots);
    std::cout << self_check_line(result.summary) << std::endl;
    for (const std::string& warning : result.warnings) std::cerr << "ddpscale predict: warning: " << warning << std::endl;
    if (!result.unreliable.empty())
      std::cout << "predictions: unreliable, no break-even verdict drawn: " << result.unreliable << std::endl;
    std::cout << "predictions: " << result.predictions.size() << " rows in " << out << "/predict.md" << std::endl;
    for (const std::string& note : result.notes) std::cerr << "ddpscale predict: note: " << note << std::endl;
    if (with_plots && !files.plots_note.empty()) std::cerr << "ddpscale predict: " << files.plots_note << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "ddpscale predict: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace ddpscale
