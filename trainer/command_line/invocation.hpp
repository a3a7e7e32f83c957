// The command line that started this process, as the user could type it again: the
// program's path as typed (not "ddpscale"), every argument quoted for the shell, and the
// launcher (mpirun and its options) in front when there is one. A study records it and its
// report prints it under "Commands that produced the study", to be run as printed.
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

class MpiContext;

// The absolute path of this process's executable (/proc/self/exe), however it was named on
// the command line. Throws std::runtime_error naming the cause when it cannot be read.
std::string this_executable();

// main() hands over its argv[0] before it renames it "ddpscale <command>" for the help texts.
void remember_program_path(const std::string& path);

// "'a b'" for a word the shell would split or expand; the word itself when it is safe.
std::string shell_quoted(const std::string& word);

// "build/trainer/ddpscale sweep spec.yaml --out 'my study'" from a subcommand's argv, whose
// argv[0] is "ddpscale <command>".
std::string typed_command_line(int argc, char** argv);

// The launcher's own command line, read from /proc: the nearest ancestor process that is
// mpirun, mpiexec, orterun or prterun, with the environment variables that change what it
// does (OMPI_ALLOW_RUN_AS_ROOT*, OMPI_MCA_*) in front. Empty when there is none (one
// process started without a launcher, or srun, whose command is on another host).
std::string launcher_command_line();

// What to record for a launch of `world_size` ranks: the launcher's command line when one
// started us; else `typed` alone for one rank, or behind "mpirun -np N" (with
// --allow-run-as-root as root) for several, which then is a reconstruction.
std::string launch_command_line(const std::string& typed, int world_size);

}  // namespace ddpscale
