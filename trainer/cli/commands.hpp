// The subcommands of `ddpscale`. Each takes the arguments after its name (argv[0] is
// "ddpscale <command>") and returns the process exit code.
#pragma once

namespace ddpscale {

int run_info_command(int argc, char** argv);
int run_commbench_command(int argc, char** argv);
int run_models_command(int argc, char** argv);
int run_train_command(int argc, char** argv);
int run_sweep_command(int argc, char** argv);
int run_study_command(int argc, char** argv);
int run_report_command(int argc, char** argv);
int run_compare_command(int argc, char** argv);
int run_predict_command(int argc, char** argv);
int run_import_pytorch_command(int argc, char** argv);

}  // namespace ddpscale
