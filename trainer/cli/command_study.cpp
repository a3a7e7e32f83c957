// `ddpscale study`: "does a second GPU pay off for my model?" in one command. It writes the
// sweep spec a user would otherwise write by hand (the model on 1 and N ranks at the given
// batch sizes, the spec's defaults for the rest), runs it as `ddpscale sweep` does, launches
// included, and writes the report. Everything lands in one folder:
//   OUT/spec.yaml   the spec (rerun it with `ddpscale sweep OUT/spec.yaml --out ...`)
//   OUT/study/      the HDF5 files
//   OUT/report/     report.md, report.html, plots, summary.csv/json
// With one GPU (one rank launched) and --allreduce NAME, it measures 1 rank only and the
// report predicts --gpus from that machine's allreduce curve and cost of sharing a node.
#include "comm/mpi_context.hpp"
#include "models/torchscript_catalog.hpp"
#include "prediction/interconnect_curves.hpp"
#include "results/store/run_store.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/cli/predict_options.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/command_line/invocation.hpp"
#include "trainer/process/launch_prologue.hpp"
#include "trainer/study/sweep_runner.hpp"
#include "trainer/study/sweep_spec.hpp"
#include "trainer/study/train_options.hpp"

#include <yaml-cpp/yaml.h>
#include <cxxopts.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace ddpscale {
namespace {

struct StudyRequest {
  std::string model, input_shape, input, dtype;
  int64_t classes = 0;
  std::vector<int64_t> batch_sizes;
  int world_size = 0;  // 0: the ranks launched
  int runs = 0, warmup = -1, steps = 0, launches = 0;  // 0 / -1: the spec's defaults
  std::string out_dir;
  std::string allreduce;  // predict from this curve (a name in experiments/interconnects.yaml or a commbench.csv)
  std::string gpus;       // the GPU counts to predict
};

// The spec, written with yaml-cpp so that any path or input string is quoted as YAML needs.
std::string spec_text(const StudyRequest& r, int world_size) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value
      << std::filesystem::path(is_torchscript_model(r.model) ? torchscript_path(r.model) : r.model).stem().string();
  out << YAML::Key << "models" << YAML::Value << YAML::BeginSeq;
  // A built-in name alone is a plain entry (the spec takes a map only for torchscript:PATH;
  // an input or classes given with a built-in name stay, for its parser to refuse by name).
  const bool plain = !is_torchscript_model(r.model) && r.input_shape.empty() && r.input.empty() && r.classes == 0;
  if (plain) {
    out << YAML::DoubleQuoted << r.model;
  } else {
    out << YAML::BeginMap << YAML::Key << "model" << YAML::Value << YAML::DoubleQuoted << r.model;
    if (!r.input_shape.empty()) out << YAML::Key << "input_shape" << YAML::Value << YAML::DoubleQuoted << r.input_shape;
    if (!r.input.empty()) out << YAML::Key << "input" << YAML::Value << YAML::DoubleQuoted << r.input;
    if (r.classes > 0) out << YAML::Key << "classes" << YAML::Value << r.classes;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "batch_sizes" << YAML::Value << YAML::Flow << r.batch_sizes;
  out << YAML::Key << "world_sizes" << YAML::Value << YAML::Flow
      << (world_size == 1 ? std::vector<int>{1} : std::vector<int>{1, world_size});
  if (!r.dtype.empty()) out << YAML::Key << "dtype" << YAML::Value << r.dtype;
  if (r.runs > 0) out << YAML::Key << "runs" << YAML::Value << r.runs;
  if (r.warmup >= 0) out << YAML::Key << "warmup" << YAML::Value << r.warmup;
  if (r.steps > 0) out << YAML::Key << "steps" << YAML::Value << r.steps;
  if (r.launches > 0) out << YAML::Key << "launches" << YAML::Value << r.launches;
  out << YAML::EndMap;
  return std::string("# Written by `ddpscale study` (its command line is in the study's metadata).\n") + out.c_str() +
         "\n";
}

StudyRequest request_from(const cxxopts::ParseResult& args) {
  StudyRequest r;
  if (!args.count("model"))
    throw UsageError("give the model: --model torchscript:PATH --input-shape 3x224x224 (your file) or a built-in "
                     "name (ddpscale models lists them)");
  r.model = args["model"].as<std::string>();
  r.input_shape = args["input-shape"].as<std::string>();
  r.input = args["input"].as<std::string>();
  r.classes = args["classes"].as<int64_t>();
  r.batch_sizes = args["batch-size"].as<std::vector<int64_t>>();
  for (int64_t b : r.batch_sizes)
    if (b <= 0) throw UsageError("--batch-size takes positive batch sizes per GPU, e.g. 32,64; got " + std::to_string(b));
  r.world_size = args["world-size"].as<int>();
  if (args.count("allreduce")) r.allreduce = args["allreduce"].as<std::string>();
  r.gpus = args["gpus"].as<std::string>();
  if (!r.allreduce.empty()) {
    try {  // before anything is measured: a misspelt name would fail the report, after the study
      allreduce_curve_by_name_or_file(r.allreduce, default_interconnects_file());
    } catch (const std::exception& e) {
      throw UsageError("--allreduce " + r.allreduce + ": " + e.what());
    }
  }
  if (r.world_size == 1 && r.allreduce.empty())
    throw UsageError("--world-size 1 has nothing to compare with: give the N of \"1 vs N\" (2 or more), or predict N "
                     "from one GPU with --allreduce NAME (" + interconnect_names(default_interconnects_file()) + ")");
  if (r.world_size < 0) throw UsageError("--world-size must be 1 or more");
  if (args.count("dtype")) r.dtype = canonical_dtype(args["dtype"].as<std::string>());
  if (args.count("runs")) r.runs = args["runs"].as<int>();
  if (args.count("warmup")) r.warmup = args["warmup"].as<int>();
  if (args.count("steps")) r.steps = args["steps"].as<int>();
  if (args.count("launches")) r.launches = args["launches"].as<int>();
  r.out_dir = args["out"].as<std::string>();
  // Before any work: a file in the way would otherwise stop the study only where it writes.
  for (const std::string& folder : {r.out_dir, (std::filesystem::path(r.out_dir) / "study").string(),
                                    (std::filesystem::path(r.out_dir) / "report").string()})
    require_output_folder("--out", folder);
  return r;
}

void add_study_options(cxxopts::Options& options) {
  options.add_options()
      ("m,model", "the model: torchscript:PATH (your file, with --input-shape or --input) or a built-in name",
       cxxopts::value<std::string>())
      ("input-shape", "a torchscript:PATH model's float input per sample, e.g. 3x224x224",
       cxxopts::value<std::string>()->default_value(""))
      ("input", "a torchscript:PATH model's token input, tokens:VOCAB:SEQ", cxxopts::value<std::string>()->default_value(""))
      ("classes", "label classes (0: the output's last axis)", cxxopts::value<int64_t>()->default_value("0"))
      ("b,batch-size", "batch sizes per GPU, each measured on 1 and N GPUs (weak scaling)",
       cxxopts::value<std::vector<int64_t>>()->default_value("32"), "B,...")
      ("world-size", "the N of 1 vs N (0: every rank launched)", cxxopts::value<int>()->default_value("0"))
      ("dtype", "float32 or bfloat16 (default: the spec's, float32)", cxxopts::value<std::string>())
      ("r,runs", "runs per configuration (default: the spec's)", cxxopts::value<int>())
      ("warmup", "untimed steps per run (default: the spec's)", cxxopts::value<int>())
      ("steps", "measured steps per run (default: the spec's)", cxxopts::value<int>())
      ("launches", "launches of fresh processes sharing the runs (default: 3 on GPUs, 1 on CPU)", cxxopts::value<int>())
      ("o,out", "folder for spec.yaml, study/ and report/ (created)", cxxopts::value<std::string>()->default_value("my-study"))
      ("resume", "continue the study in --out (configurations already complete are kept)")
      ("overwrite", "measure again, replacing what --out holds")
      ("launcher", "how each launch is started: the launcher and its options before -np",
       cxxopts::value<std::string>()->default_value("mpirun --bind-to none"))
      ("allreduce", "with one GPU: measure 1 rank only and let the report predict --gpus from this machine's "
                    "allreduce curve and cost of sharing a node, a name in experiments/interconnects.yaml (" +
                    interconnect_names(default_interconnects_file()) + ") or a commbench.csv; with N ranks, the "
                    "report also predicts from it", cxxopts::value<std::string>())
      ("gpus", "GPU counts the report predicts with --allreduce", cxxopts::value<std::string>()->default_value("2,4,8"));
  add_launch_options(options, "", "auto, cpu or cuda");
  options.add_options()("h,help", "show this help");
}

// Rank 0 writes the spec where the study's launches (nested sweeps) and the user find it.
std::string write_spec(const MpiContext& mpi, const std::string& out_dir, const std::string& text) {
  const auto path = std::filesystem::path(out_dir) / "spec.yaml";
  if (mpi.rank() == 0) {
    std::filesystem::create_directories(out_dir);
    std::ofstream file(path);
    file << text;
    if (!file) throw std::runtime_error("cannot write " + path.string());
  }
  return path.string();
}

// The sweep inside would refuse too, but in its own words (`ddpscale sweep`, OUT/study): this
// names the command and the folder the user typed, whose rerun is what was asked.
void refuse_a_study_already_there(const std::string& out_dir, const SweepOptions& sweep) {
  if (sweep.resume || sweep.overwrite || !holds_study((std::filesystem::path(out_dir) / "study").string())) return;
  throw UsageError("--out " + out_dir + " already holds a study; run this command again with --resume to continue "
                   "it (configurations already complete are kept) or with --overwrite to measure it again, or give "
                   "another --out (nothing was changed)");
}

int write_study_report(const std::string& study_dir, const std::string& report_dir, const StudyRequest& request) {
  std::vector<std::string> words = {"ddpscale report", study_dir, "--out", report_dir};
  if (!request.allreduce.empty())
    words.insert(words.end(), {"--predict", "gpus=" + request.gpus + ";allreduce=" + request.allreduce});
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  return run_report_command(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

int run_study_command(int argc, char** argv) {
  cxxopts::Options options(argv[0], "Does a second GPU (or N) pay off for this model? Measures it on 1 and N ranks at "
                                    "each batch size, as `ddpscale sweep` measures a spec (launches, interleaved "
                                    "runs, intervals), and writes the report: OUT/spec.yaml, OUT/study/, "
                                    "OUT/report/report.md.");
  add_study_options(options);
  const std::string program = argv[0];
  StudyRequest request;
  SweepOptions sweep;
  LaunchOptions launch;
  std::string usage_error;
  try {
    const auto args = options.parse(argc, argv);
    if (printed_help(options, args,
                     "mpirun -np 2 ddpscale study --model torchscript:resnet18.pt --input-shape 3x224x224 -b 32,64 "
                     "--out studies/resnet18"))
      return 0;
    request = request_from(args);
    sweep.resume = args.count("resume") > 0;
    sweep.overwrite = args.count("overwrite") > 0;
    refuse_a_study_already_there(request.out_dir, sweep);
    sweep.launcher = args["launcher"].as<std::string>();
    sweep.command_line = typed_command_line(argc, argv);
    launch = launch_options_from(args);
    // What each launch of the study (a nested `ddpscale sweep`) must be given as it was here.
    if (args.count("device")) sweep.launch_args.insert(sweep.launch_args.end(), {"--device", args["device"].as<std::string>()});
    if (args.count("allow-shared-gpu")) sweep.launch_args.push_back("--allow-shared-gpu");
    if (args.count("comm-timeout"))
      sweep.launch_args.insert(sweep.launch_args.end(), {"--comm-timeout", std::to_string(args["comm-timeout"].as<int>())});
  } catch (const std::exception& e) {
    usage_error = usage_error_text(e, argc, argv, program);
  }
  MpiContext mpi(&argc, &argv);
  SweepSpec spec;
  std::string text;  // the spec as written to OUT/spec.yaml, parsed on every rank alike
  if (usage_error.empty()) {
    try {
      const int world = request.world_size > 0 ? request.world_size : mpi.size();
      if (world < 2 && request.allreduce.empty())
        throw UsageError("one rank was launched: run it as mpirun -np N ddpscale study ... (N GPUs, or 2 CPU ranks), "
                         "give --world-size N, or with one GPU predict N from a measured machine: --allreduce NAME (" +
                         interconnect_names(default_interconnects_file()) + ")");
      text = spec_text(request, world);
      spec = parse_sweep_spec(text, (std::filesystem::path(request.out_dir) / "spec.yaml").string());
    } catch (const std::exception& e) {
      usage_error = usage_error_text(e, argc, argv, program);
    }
  }
  sweep.command_line = launch_command_line(sweep.command_line, mpi.size());
  const auto device = agree_on_device(mpi, program, launch, usage_error);
  if (!device) return 2;
  sweep.spec_path = write_spec(mpi, request.out_dir, text);
  sweep.out_dir = (std::filesystem::path(request.out_dir) / "study").string();
  const int status = run_sweep(mpi, *device, spec, sweep);
  if (mpi.rank() != 0 || (status != 0 && status != 3)) return status;
  const std::string report_dir = (std::filesystem::path(request.out_dir) / "report").string();
  const int report_status = write_study_report(sweep.out_dir, report_dir, request);
  if (report_status == 0)
    std::cout << "study: " << report_dir << "/report.md answers it; the spec is " << sweep.spec_path
              << " (rerun it with ddpscale sweep)" << std::endl;
  return report_status != 0 ? report_status : status;
}

}  // namespace ddpscale
