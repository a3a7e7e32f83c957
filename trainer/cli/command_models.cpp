#include "models/model_catalog.hpp"
#include "models/torchscript_catalog.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/study/train_options.hpp"

#include <cxxopts.hpp>

#include <iostream>

namespace ddpscale {

static std::string mebibytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

int run_models_command(int argc, char** argv) {
  cxxopts::Options options(argv[0], "Lists the models: exact parameter count, layers, fp32 weight and Adam-state "
                                    "memory.\nSize families: mlp@<size> and transformer@<size>, e.g. mlp@10M, "
                                    "transformer@100M (100K to 2B).\nYour own model: torchscript:PATH with "
                                    "--input-shape 3x224x224 or --input tokens:VOCAB:SEQ: loads it and runs one "
                                    "forward (batch 3), whose output shape it prints.");
  options.add_options()("names", "models or size families to describe (default: the built-in models)",
                        cxxopts::value<std::vector<std::string>>())
      ("input-shape", "torchscript:PATH: float inputs [batch, SHAPE]", cxxopts::value<std::string>()->default_value(""), "SHAPE")
      ("input", "torchscript:PATH: int64 token ids", cxxopts::value<std::string>()->default_value(""), "tokens:VOCAB:SEQ")
      ("classes", "torchscript:PATH: label classes (0 = the output's last axis)", cxxopts::value<int64_t>()->default_value("0"))
      ("h,help", "show this help");
  options.parse_positional({"names"});
  options.positional_help("[NAME...]");
  std::vector<std::string> names;
  try {
    const auto args = options.parse(argc, argv);
    if (printed_help(options, args, "ddpscale models mlp-medium transformer@100M")) return 0;
    names = args.count("names") ? args["names"].as<std::vector<std::string>>() : builtin_model_names();
    std::vector<ModelDescription> described;
    for (const auto& name : names) {
      EngineOptions o;
      o.model = name;
      o.input_shape = args["input-shape"].as<std::string>();
      o.input = args["input"].as<std::string>();
      o.classes = args["classes"].as<int64_t>();
      if (is_torchscript_model(name)) validate_model_input(o);
      described.push_back(describe_model(name, is_torchscript_model(name) ? model_options_from(o) : ModelOptions{}));
    }
    std::printf("%-20s %14s %12s %12s  %s\n", "name", "parameters", "weights", "adam state", "layers");
    for (const auto& d : described) {
      std::printf("%-20s %14lld %12s %12s  %s\n", d.name.c_str(), static_cast<long long>(d.parameters),
                  mebibytes(d.weight_bytes_fp32).c_str(), mebibytes(d.adam_state_bytes_fp32).c_str(), d.layers.c_str());
    }
  } catch (const std::exception& e) {
    std::cerr << "ddpscale models: " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace ddpscale
