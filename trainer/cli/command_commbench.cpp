#include "comm/commbench.hpp"
#include "comm/mpi_context.hpp"
#include "comm/nccl_profile.hpp"
#include "trainer/cli/commands.hpp"
#include "trainer/command_line/help_option.hpp"
#include "trainer/command_line/cli_util.hpp"
#include "trainer/process/heartbeat.hpp"
#include "trainer/process/launch_prologue.hpp"

#include <cxxopts.hpp>

#include <chrono>
#include <iostream>
#include <vector>

namespace ddpscale {

static cxxopts::Options commbench_options(const char* program) {
  cxxopts::Options options(program,
                           "Allreduce bandwidth sweep with nccl-tests' definitions (time per op, slowest rank; "
                           "algbw = bytes/time; busbw = algbw*2(n-1)/n).\nRun under mpirun, one rank per GPU.");
  options.add_options()
      ("min-bytes", "smallest message (K, M, G suffixes)", cxxopts::value<std::string>()->default_value("8"))
      ("e,max-bytes", "largest message", cxxopts::value<std::string>()->default_value("128M"))
      ("f,factor", "size multiplier between steps", cxxopts::value<size_t>()->default_value("4"))
      ("w,warmup", "untimed iterations per size", cxxopts::value<int>()->default_value("5"))
      ("n,iters", "timed iterations per size", cxxopts::value<int>()->default_value("20"))
      ("op", "sum or avg", cxxopts::value<std::string>()->default_value("sum"))
      ("nccl-env", "NCCL profile as KEY=VALUE,... (NCCL_* keys only)", cxxopts::value<std::string>()->default_value(""))
      ("then-nccl-env", "after the sweep, apply this NCCL profile, create a NEW communicator in the same process and "
       "sweep again (shows whether NCCL picks up variables changed after its first init)",
       cxxopts::value<std::string>()->default_value(""));
  add_launch_options(options, "", "auto, cpu (MPI backend) or cuda (NCCL backend)");
  options.add_options()("h,help", "show this help");
  return options;
}

static CommBenchOptions validated_options(const cxxopts::ParseResult& args) {
  CommBenchOptions options;
  options.min_bytes = parse_byte_size("min-bytes", args["min-bytes"].as<std::string>());
  options.max_bytes = parse_byte_size("max-bytes", args["max-bytes"].as<std::string>());
  options.factor = args["factor"].as<size_t>();
  options.warmup_iters = args["warmup"].as<int>();
  options.iters = args["iters"].as<int>();
  const auto op = args["op"].as<std::string>();
  if (op != "sum" && op != "avg") throw UsageError("--op '" + op + "' is not sum or avg");
  options.op = op == "sum" ? ReduceOp::sum : ReduceOp::average;
  if (options.iters < 1) throw UsageError("--iters must be at least 1");
  if (options.warmup_iters < 0) throw UsageError("--warmup must not be negative");
  commbench_sizes(options);  // throws on a bad range or factor
  return options;
}

namespace {

// Rank 0's rows as each size is measured and, while a size takes long (gigabytes on CPU
// ranks take tens of seconds), a comment line at least every kEvery (heartbeat_interval) saying which size is
// under way, so a long sweep is never silence.
class RowPrinter {
 public:
  static constexpr std::chrono::seconds kEvery{10};

  RowPrinter(const CommBenchOptions& bench, bool leader)
      : sizes_(commbench_sizes(bench)),
        op_(bench.op),
        size_started_(std::chrono::steady_clock::now()),
        heartbeat_(heartbeat_interval(kEvery), [this] { return beat(); }, leader) {}

  void print(const CommBenchRow& row) {
    const auto lock = heartbeat_.lock();
    print_commbench_row(stdout, row, op_);
    ++measured_;
    size_started_ = std::chrono::steady_clock::now();
    heartbeat_.printed();
  }

 private:
  // With the heartbeat's lock held: the size under way and how long it has taken.
  bool beat() {
    if (measured_ >= sizes_.size()) return false;
    const auto since =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - size_started_).count();
    std::printf("# measuring %zu bytes (size %zu of %zu) for %lld s\n", sizes_[measured_], measured_ + 1,
                sizes_.size(), static_cast<long long>(since));
    std::fflush(stdout);
    return true;
  }

  std::vector<size_t> sizes_;
  ReduceOp op_;
  size_t measured_ = 0;
  std::chrono::steady_clock::time_point size_started_;
  Heartbeat heartbeat_;  // rank 0 only; last, so its thread starts after everything it reads
};

}  // namespace

// One full sweep on a fresh communicator; returns the number of wrong values seen.
static size_t sweep_and_print(const MpiContext& mpi, const DeviceChoice& device, const CommBenchOptions& bench) {
  auto comm = make_communicator(mpi.world(), device);
  if (mpi.rank() == 0) print_commbench_header(stdout, *comm, bench);
  std::vector<CommBenchRow> rows;
  {
    RowPrinter printer(bench, mpi.rank() == 0);
    rows = run_commbench(*comm, mpi.world(), bench, [&](const CommBenchRow& row) {
      if (mpi.rank() == 0) printer.print(row);
    });
  }
  size_t wrong = 0;
  double busbw_sum = 0;
  for (const auto& row : rows) {
    wrong += row.wrong;
    busbw_sum += row.busbw_gbs;
  }
  if (mpi.rank() == 0) {
    std::printf("# out of bounds values : %zu %s\n", wrong, wrong ? "ERROR" : "OK");
    std::printf("# avg bus bandwidth    : %.3f GB/s\n", rows.empty() ? 0.0 : busbw_sum / rows.size());
  }
  return wrong;
}

int run_commbench_command(int argc, char** argv) {
  // -e, -f, -w and -n are all_reduce_perf's letters; -b, its smallest size, is the batch size
  // in train, so commbench spells it out.
  CurrentSpellings spelt(argc, argv, {{"-b", "--min-bytes", "-b is --batch-size in train"}});
  auto options = commbench_options(argv[0]);
  cxxopts::ParseResult args;
  CommBenchOptions bench;
  LaunchOptions launch;
  try {
    args = options.parse(spelt.argc(), spelt.argv());
    if (printed_help(options, args, "mpirun -np 2 ddpscale commbench --min-bytes 1K -e 64M")) return 0;
    bench = validated_options(args);
    launch = launch_options_from(args);
    apply_nccl_profile(parse_nccl_profile("command line", args["nccl-env"].as<std::string>()));
    parse_nccl_profile("--then-nccl-env", args["then-nccl-env"].as<std::string>());  // validate before any MPI
  } catch (const std::exception& e) {
    std::cerr << "ddpscale commbench: " << e.what() << std::endl;
    return 2;
  }
  MpiContext mpi(&argc, &argv);
  DeviceChoice device;
  try {
    device = start_on_device(mpi, launch);
  } catch (const UsageError& e) {
    if (mpi.rank() == 0) std::cerr << "ddpscale commbench: " << e.what() << std::endl;
    return 2;
  }
  const std::string then_env = args["then-nccl-env"].as<std::string>();
  size_t wrong = sweep_and_print(mpi, device, bench);
  if (!then_env.empty()) {
    apply_nccl_profile(parse_nccl_profile("--then-nccl-env", then_env));
    if (mpi.rank() == 0) std::printf("# second sweep, new communicator, after setting %s\n", then_env.c_str());
    wrong += sweep_and_print(mpi, device, bench);
  }
  return wrong ? 1 : 0;
}

}  // namespace ddpscale
