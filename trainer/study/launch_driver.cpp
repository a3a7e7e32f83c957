#include "trainer/study/launch_driver.hpp"

#include "comm/check.hpp"
#include "comm/mpi_context.hpp"
#include "trainer/command_line/invocation.hpp"
#include "trainer/study/stop_signals.hpp"
#include "trainer/study/sweep_options.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/search_path.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace ddpscale {

namespace bp = boost::process;

namespace {

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The variable's name in NAME=value.
std::string name_of(const std::string& assignment) { return assignment.substr(0, assignment.find('=')); }

// What a running Open MPI, PMIx or SLURM job gives its processes, as opposed to what a user
// sets: a nested launcher that sees these believes it is one of the job's processes.
bool set_by_the_running_job(const std::string& name) {
  if (starts_with(name, "OMPI_MCA_")) {
    // The job's own wiring among the MCA parameters; btl, pml and the like are the user's.
    for (const char* job : {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
                            "OMPI_MCA_mpi_oversubscribe", "OMPI_MCA_rmaps_", "OMPI_MCA_shmem_RUNTIME_QUERY_hint",
                            "OMPI_MCA_hwloc_base_binding_policy", "OMPI_MCA_opal_"})
      if (starts_with(name, job)) return true;
    return false;
  }
  if (starts_with(name, "OMPI_ALLOW_RUN_AS_ROOT")) return false;
  if (name == kStudyCommandVariable) return true;  // the driver sets its own
  for (const char* job : {"OMPI_", "PMIX_", "PMI_", "ORTE_", "OPAL_", "HWLOC_", "SLURM_STEP", "SLURM_PROCID",
                          "SLURM_LOCALID", "SLURM_NODEID", "SLURM_TASK_PID", "SLURM_GTIDS", "SLURM_STEPID"})
    if (starts_with(name, job)) return true;
  return false;
}

// --host h1:2,h2:2 where the ranks span several hosts, in the order of their ranks.
std::string host_list(const std::vector<std::string>& rank_hosts) {
  std::vector<std::pair<std::string, int>> hosts;
  for (const std::string& host : rank_hosts) {
    if (hosts.empty() || hosts.back().first != host) hosts.push_back({host, 0});
    ++hosts.back().second;
  }
  std::string list;
  for (const auto& [host, slots] : hosts) list += (list.empty() ? "" : ",") + host + ":" + std::to_string(slots);
  return list;
}

bool spans_several_hosts(const std::vector<std::string>& rank_hosts) {
  for (const std::string& host : rank_hosts)
    if (host != rank_hosts.front()) return true;
  return false;
}

// The launch under way (rank 0 only), for the signal handler: SIGINT or SIGTERM to the driver
// goes on to it, so the launch stores what it is writing and stops (130) as a sweep does.
volatile sig_atomic_t running_launch = 0;
volatile sig_atomic_t stop_requested = 0;  // the stop signal the driver received (0: none)

void forward_stop(int signal_number) {
  stop_requested = signal_number;
  if (running_launch > 0) kill(static_cast<pid_t>(running_launch), signal_number);
}

void install_forwarding() {
  struct sigaction action {};
  action.sa_handler = forward_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// The program as execvp would find it: a word with a slash as it is, else its first match on
// PATH; "" when there is none.
std::string program_path(const std::string& word) {
  if (word.find('/') != std::string::npos) return word;
  return bp::search_path(word).string();
}

// Exactly these NAME=value variables and no others (bp::environment starts empty; a word
// without '=' is no variable and is left out, as execve's envp would ignore it).
bp::environment environment_of(const std::vector<std::string>& assignments) {
  bp::environment environment;
  for (const std::string& assignment : assignments) {
    const size_t equals = assignment.find('=');
    if (equals != std::string::npos) environment[assignment.substr(0, equals)] = assignment.substr(equals + 1);
  }
  return environment;
}

int cannot_start(const std::string& program, const std::string& why) {
  std::fprintf(stderr, "ddpscale sweep: cannot start the launch: %s: %s\n", program.c_str(), why.c_str());
  return 127;  // as a shell says a command it could not run
}

}  // namespace

int run_launch(const std::vector<std::string>& command, const std::vector<std::string>& environment) {
  if (command.empty()) throw std::invalid_argument("run_launch: an empty command");
  const std::string program = program_path(command.front());
  if (program.empty()) return cannot_start(command.front(), "not found on PATH");
  std::fflush(stdout);
  std::fflush(stderr);
  // The child dies with the driver (PR_SET_PDEATHSIG, set between fork and exec): a driver
  // killed outright leaves no launch behind.
  const auto die_with_the_driver = bp::extend::on_exec_setup([](auto&) { prctl(PR_SET_PDEATHSIG, SIGTERM); });
  std::error_code error;
  // An exec that fails is reported here through Boost.Process's error pipe; its child has
  // exited by then, left for the driver's own exit to reap.
  bp::child launch(bp::exe = program, bp::args = std::vector<std::string>(command.begin() + 1, command.end()),
                   environment_of(environment), die_with_the_driver, error);
  if (error) return cannot_start(command.front(), error.message());
  running_launch = launch.id();
  launch.wait();  // waitpid, resumed after the signals the driver forwards
  running_launch = 0;
  const int status = launch.native_exit_code();  // as waitpid gives it
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

namespace {

// A barrier the ranks that do not start launches wait in without holding a core: a launch
// may run for hours, and on CPU the launch's ranks need the cores.
void wait_beside_the_launch(const MpiGroup& world) {
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Ibarrier(world.handle(), &request));
  wait_without_bound(request, std::chrono::milliseconds(20));
}

std::vector<std::string> sweep_args_for(const SweepOptions& options, int launch) {
  std::vector<std::string> args = {this_executable(), "sweep", options.spec_path, "--out", options.out_dir,
                                   "--launch", std::to_string(launch + 1)};
  // Each launch overwrites its own files under --overwrite; otherwise it continues the study
  // the earlier launches began.
  args.push_back(options.overwrite ? "--overwrite" : "--resume");
  args.insert(args.end(), options.launch_args.begin(), options.launch_args.end());
  return args;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) environment.emplace_back(*e);
  return environment;
}

// The launch status that ends the study early: every comparison is precise enough.
constexpr int kStudyPrecise = -1;

// Rank 0's part of launch k: ask `plan`, start the launch where needed and wait for it.
// Returns 0, kStudyPrecise or an exit code.
int lead_launch(const MpiContext& mpi, const SweepOptions& options, int k, int launches, const LaunchPlanner& plan,
                int& measured) {
  LaunchOutlook outlook;
  try {
    outlook = plan(k);
  } catch (const std::exception& e) {
    outlook.error = e.what();
  }
  if (!outlook.error.empty()) {
    std::fprintf(stderr, "ddpscale sweep: before launch %d of %d: %s\n", k + 1, launches, outlook.error.c_str());
    return 2;
  }
  if (outlook.study_precise) {
    const std::string which = k + 1 < launches ? "launches " + std::to_string(k + 1) + "-" + std::to_string(launches)
                                               : "launch " + std::to_string(k + 1);
    std::fprintf(stderr, "[sweep] %s of %d: not needed: %s\n", which.c_str(), launches, outlook.note.c_str());
    return kStudyPrecise;
  }
  if (!outlook.needed) {
    std::fprintf(stderr, "[sweep] launch %d of %d: %s\n", k + 1, launches,
                 outlook.note.empty() ? "complete, skipped" : outlook.note.c_str());
    return 0;
  }
  const auto command = launch_command(options.launcher, mpi.hostnames(), sweep_args_for(options, k));
  std::fprintf(stderr, "[sweep] launch %d of %d: fresh processes (%s ...)%s%s\n", k + 1, launches,
               command.front().c_str(), outlook.note.empty() ? "" : "; ", outlook.note.c_str());
  int status = 0;
  try {
    std::vector<std::string> environment = launch_environment(current_environment());
    environment.push_back(std::string(kStudyCommandVariable) + "=" + options.command_line);
    status = run_launch(command, environment);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddpscale sweep: launch %d of %d on %s: %s\n", k + 1, launches, mpi.hostname().c_str(),
                 e.what());
    status = 1;
  }
  if (stop_requested) status = 130;
  ++measured;
  if (status != 0 && status != 3) {
    const std::string stopped = stop_requested ? std::string("stopped by ") + stop_signal_name(stop_requested) +
                                                     stop_signal_origin(stop_requested)
                                               : "stopped";
    std::fprintf(stderr, "[sweep] launch %d of %d ended with exit code %d; %s\n", k + 1, launches, status,
                 status == 130 ? (stopped + ": run the same command with --resume to continue").c_str()
                               : "rerun the same command with --resume to continue from there");
  }
  return status;
}

}  // namespace

LaunchShare launch_share(int runs, int launch, int launches) {
  LaunchShare share;
  const int base = runs / launches, extra = runs % launches;
  share.first = launch * base + std::min(launch, extra);
  share.end = share.first + base + (launch < extra ? 1 : 0);
  return share;
}

std::vector<std::string> launch_command(const std::string& launcher, const std::vector<std::string>& rank_hosts,
                                        const std::vector<std::string>& sweep_args) {
  std::vector<std::string> command = split_words(launcher);
  // Open MPI refuses root unless told; the study's own launch was allowed, so this one is.
  if (geteuid() == 0 && !command.empty() && command.front().find("mpi") != std::string::npos &&
      std::find(command.begin(), command.end(), "--allow-run-as-root") == command.end())
    command.insert(command.begin() + 1, "--allow-run-as-root");
  command.push_back("-np");
  command.push_back(std::to_string(rank_hosts.size()));
  if (spans_several_hosts(rank_hosts)) {
    command.push_back("--host");
    command.push_back(host_list(rank_hosts));
  }
  command.insert(command.end(), sweep_args.begin(), sweep_args.end());
  return command;
}

std::vector<std::string> launch_environment(const std::vector<std::string>& environment) {
  std::vector<std::string> kept;
  for (const std::string& assignment : environment)
    if (!set_by_the_running_job(name_of(assignment))) kept.push_back(assignment);
  return kept;
}

int drive_launches(const MpiContext& mpi, const SweepOptions& options, int launches, const LaunchPlanner& plan) {
  const bool leader = mpi.rank() == 0;
  int result = 0, measured = 0;
  // Every rank: mpirun passes a Ctrl-C on as SIGTERM to all of them; rank 0 forwards it to
  // the launch under way, the others wait for rank 0's verdict instead of dying at once.
  install_forwarding();
  for (int k = 0; k < launches; ++k) {
    // 0: go on, kStudyPrecise: stop here, anything else: the launch's (or the planner's) exit code.
    int status = 0;
    if (leader) status = lead_launch(mpi, options, k, launches, plan, measured);
    else wait_beside_the_launch(mpi.world());
    if (leader) wait_beside_the_launch(mpi.world());
    MPI_Request request = MPI_REQUEST_NULL;
    DDPSCALE_MPI_CHECK(MPI_Ibcast(&status, 1, MPI_INT, 0, mpi.world().handle(), &request));
    wait_without_bound(request);
    if (status == kStudyPrecise) break;
    if (status == 3) {
      result = 3;  // recorded failures: the next launches still measure the other runs
    } else if (status != 0) {
      return status;  // rank 0 said why
    }
  }
  if (leader)
    std::fprintf(stderr, "[sweep] done: %d launch%s measured now, of at most %d, in %s (`ddpscale report %s` reads "
                 "them as one study)\n", measured, measured == 1 ? "" : "es", launches, options.out_dir.c_str(),
                 options.out_dir.c_str());
  return result;
}

}  // namespace ddpscale
