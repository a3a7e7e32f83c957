#include "trainer/study/paired_blocks.hpp"

#include "comm/check.hpp"
#include "comm/communicator.hpp"
#include "comm/mpi_context.hpp"
#include "results/statistics/statistics.hpp"
#include "trainer/engine/initial_model.hpp"
#include "trainer/engine/training_session.hpp"
#include "trainer/study/config_runner.hpp"
#include "trainer/study/memory_preflight.hpp"
#include "trainer/study/timing_exchange.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

namespace ddpscale {

// The two live sessions of a rank of the N-rank group: its own 1-rank session and its part of
// the N-rank one (none on other ranks). Each has its own copy of the model (one InitialModel
// hands out one live model).
struct PairedSessions {
  std::shared_ptr<InitialModel> one_model, n_model;
  std::unique_ptr<TrainingSession> one, n;
};

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Rank 0's value on every rank of `world`. The others may wait out rank 0's 1-rank work
// (its warm-up, its pilot, a block): they sleep between tests instead of taking a core.
void broadcast_from_rank0(const MpiGroup& world, int& value, const std::string& what) {
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Ibcast(&value, 1, MPI_INT, 0, world.handle(), &request));
  if (world.rank() == 0)
    wait_within_comm_timeout(request, what, WaitPolling::spin);
  else
    wait_without_bound(request, std::chrono::milliseconds(1));
}

// A session of `world_size` ranks in which this process is `rank`.
std::unique_ptr<TrainingSession> make_session(const TrainOptions& options, int rank, int world_size, Communicator* comm,
                                              const DeviceChoice& device, InitialModel& model) {
  SessionSetup setup;
  setup.options = engine_options(options, world_size, 0);
  setup.run_index = 0;
  setup.rank = rank;
  setup.world_size = world_size;
  setup.device = torch_device_of(device);
  setup.comm = comm;
  setup.initial_model = &model;
  return std::make_unique<TrainingSession>(setup);
}

// Wall time of `steps` steps of a session, synchronized with the device at the end (and,
// from the block before, at the start).
double time_steps(TrainingSession& session, int steps) {
  const auto start = Clock::now();
  session.train_steps(steps);
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// The pilot: 1-rank steps timed one by one, up to kPilotSteps or kPilotMostSeconds, and the
// block length the autocorrelation of their log times gives (rank 0 only).
void run_pilot(TrainingSession& one, PairedLaunch& out) {
  std::vector<double> step_us, log_step_us;
  const auto start = Clock::now();
  while (static_cast<int>(step_us.size()) < kPilotSteps && (step_us.size() < 8 || seconds_since(start) < kPilotMostSeconds)) {
    step_us.push_back(time_steps(one, 1));
    log_step_us.push_back(std::log(std::max(step_us.back(), 1e-3)));
  }
  out.pilot_step_us = median(step_us);
  out.autocorrelation = autocorrelation(log_step_us, std::min<int>(kPilotMaxLag, static_cast<int>(step_us.size()) / 2));
  out.block_steps = choose_block_steps(out.autocorrelation, out.pilot_step_us);
}

// One block of one side. Each block starts with one untimed lead-in step: it absorbs what
// the switch from the other session costs (a rank waking from its sleep, caches and clocks
// the other session left), which would otherwise fall on whichever side follows a switch
// more often. 1 rank: the N-rank group's rank `one_rank` trains alone, the others pass. N
// ranks: the members meet (asleep while one of them finishes a 1-rank block), take the
// lead-in step together, meet again so their clocks start together, and the block takes the
// slowest member's time. Returns the time on the ranks that took part (0 elsewhere).
double run_block(const PairedSetup& setup, PairedSessions& sessions, bool n_ranks, int one_rank, int steps) {
  if (!setup.n_group) return 0;
  const MpiGroup& group = *setup.n_group;
  if (!n_ranks) {
    if (group.rank() != one_rank) return 0;
    sessions.one->train_steps(1);
    return time_steps(*sessions.one, steps);
  }
  group.barrier_within_comm_timeout("paired blocks: meeting for an N-rank block", WaitPolling::sleep);
  sessions.n->train_steps(1);
  group.barrier_within_comm_timeout("paired blocks: starting an N-rank block's clock", WaitPolling::spin);
  const double mine = time_steps(*sessions.n, steps);
  return max_over_group(group, mine);
}

// The pair's two block times, from the ranks that ran them, on every rank. Every rank waits
// here (asleep) until the pair's last block is over, so the next pair's 1-rank block, on
// whichever rank, never runs beside this one's.
void end_pair(const MpiGroup& world, BlockPair& pair) {
  double times[2] = {pair.a_us, pair.b_us};
  MPI_Request request = MPI_REQUEST_NULL;
  DDPSCALE_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE, MPI_MAX, world.handle(), &request));
  wait_within_comm_timeout(request, "paired blocks: the end of a pair", WaitPolling::sleep);
  pair.a_us = times[0];
  pair.b_us = times[1];
}

// Which side each block of a pair runs: the speedup pair's A is the 1-rank side.
bool a_is_n_ranks(PairKind kind) { return kind == PairKind::same_n_ranks; }
bool b_is_n_ranks(PairKind kind) { return kind != PairKind::same_one_rank; }

void run_pair(const PairedSetup& setup, PairedSessions& sessions, const PlannedPair& plan, int steps,
              Clock::time_point start, PairedLaunch& out) {
  BlockPair pair;
  pair.kind = plan.kind;
  pair.a_first = plan.a_first;
  pair.one_rank = plan.kind == PairKind::same_n_ranks ? 0 : plan.one_rank;
  pair.start_s = seconds_since(start);
  if (plan.a_first) {
    pair.a_us = run_block(setup, sessions, a_is_n_ranks(plan.kind), plan.one_rank, steps);
    pair.b_us = run_block(setup, sessions, b_is_n_ranks(plan.kind), plan.one_rank, steps);
  } else {
    pair.b_us = run_block(setup, sessions, b_is_n_ranks(plan.kind), plan.one_rank, steps);
    pair.a_us = run_block(setup, sessions, a_is_n_ranks(plan.kind), plan.one_rank, steps);
  }
  end_pair(*setup.world, pair);
  if (setup.world->rank() == 0) out.pairs.push_back(pair);
}

// Builds and warms up both sessions; "" or why not (the same text on every rank).
std::string prepare_sessions(const PairedSetup& setup, PairedSessions& sessions) {
  std::string failure;
  try {
    if (setup.n_group) {
      const MpiGroup& group = *setup.n_group;
      sessions.n_model = make_initial_model(setup.n_ranks, setup.device);
      sessions.n = make_session(setup.n_ranks, group.rank(), group.size(), setup.n_comm, setup.device, *sessions.n_model);
      sessions.n->train_steps(std::max(1, setup.n_ranks.warmup));
      sessions.one_model = make_initial_model(setup.one_rank, setup.device);
      sessions.one = make_session(setup.one_rank, 0, 1, nullptr, setup.device, *sessions.one_model);
      sessions.one->train_steps(std::max(1, setup.one_rank.warmup));
    }
  } catch (const std::exception& e) {
    failure = e.what();
    failure = failure.substr(0, failure.find('\n'));
  }
  std::string message = failure;
  if (any_rank_failed(*setup.world, !failure.empty(), message)) return message.empty() ? "a rank failed" : message;
  return "";
}

}  // namespace

// One speedup of a window: its setup, live sessions, block length and what it measured.
struct PairedWindow::Member {
  PairedSetup setup;
  PairedSessions sessions;
  PairedOutcome outcome;
  int n_size = 0;         // the N-rank group's size, on every rank
  int rounds = 0;         // rounds run so far
  double spent_s = 0;     // seconds of its own rounds so far (rank 0's clock)
  bool wants_more = true;  // the same on every rank
};

PairedWindow::PairedWindow() = default;
PairedWindow::~PairedWindow() = default;

void PairedWindow::add(const PairedSetup& setup) {
  auto member = std::make_unique<Member>();
  member->setup = setup;
  const MpiGroup& world = *setup.world;
  PairedOutcome& outcome = member->outcome;
  outcome.failure = prepare_sessions(setup, member->sessions);
  member->wants_more = outcome.failure.empty();
  if (member->wants_more) {
    PairedLaunch& out = outcome.blocks;
    out.launch = setup.launch;
    if (world.rank() == 0) run_pilot(*member->sessions.one, out);
    if (setup.n_group) {
      const double n_rank_step_us =
          run_block(setup, member->sessions, true, 0, kSlowSidePilotSteps) / kSlowSidePilotSteps;
      if (world.rank() == 0)
        out.block_steps = shorten_block_for_slow_side(out.block_steps, out.pilot_step_us, n_rank_step_us);
    }
    int steps = out.block_steps;
    broadcast_from_rank0(world, steps, "paired blocks: the block length from rank 0's pilot");
    out.block_steps = steps;
    member->n_size = setup.n_group ? setup.n_group->size() : 0;
    broadcast_from_rank0(world, member->n_size, "paired blocks: the N-rank group's size");
  }
  members_.push_back(std::move(member));
}

void PairedWindow::run() {
  if (members_.empty()) return;
  const MpiGroup& world = *members_.front()->setup.world;
  // Every member's start_s counts from the window's first pair.
  const auto start = Clock::now();
  for (auto& member : members_) member->outcome.blocks.window_speedups = static_cast<int>(members_.size());
  for (bool any = true; any;) {
    any = false;
    for (auto& member : members_) {
      if (!member->wants_more) continue;
      const PairedSetup& setup = member->setup;
      PairedLaunch& out = member->outcome.blocks;
      const auto round_start = Clock::now();
      for (const PlannedPair& plan : plan_round(setup.one_rank.seed, setup.launch, member->rounds, false, member->n_size))
        run_pair(setup, member->sessions, plan, out.block_steps, start, out);
      member->spent_s += seconds_since(round_start);
      ++member->rounds;
      int more = world.rank() == 0 && another_round(member->rounds, member->spent_s, setup.budget_seconds) ? 1 : 0;
      broadcast_from_rank0(world, more, "paired blocks: whether another round runs");
      member->wants_more = more != 0;
      any = any || member->wants_more;
    }
  }
}

PairedOutcome PairedWindow::take(size_t i) { return std::move(members_.at(i)->outcome); }

size_t paired_window_length(const std::vector<int64_t>& bytes, int64_t budget_bytes, int most) {
  size_t length = 0;
  int64_t total = 0;
  for (const int64_t b : bytes) {
    if (static_cast<int>(length) >= most || b < 0) break;
    if (length > 0 && total + b > budget_bytes) break;
    total += b;
    ++length;
  }
  return std::max<size_t>(length, 1);
}

int64_t paired_sessions_bytes(const TrainOptions& a, const ModelDescription& model_a, const TrainOptions& b,
                              const ModelDescription& model_b) {
  const MemoryEstimate ea = estimate_training_memory(model_a, a, a.world_size);
  const MemoryEstimate eb = estimate_training_memory(model_b, b, b.world_size);
  if (!ea.activations_estimated || !eb.activations_estimated) return -1;
  return ea.total() + eb.total();
}

int64_t agree_on_window_memory(const MpiContext& mpi, const DeviceChoice& device, int widest) {
  double free_bytes = 0;
  try {
    const FreeMemory free = read_free_memory(mpi, device, widest);
    free_bytes = static_cast<double>(free.bytes) / std::max(1, free.ranks_sharing);
  } catch (const std::exception&) {
    free_bytes = 0;
  }
  const double smallest = min_over_group(mpi.world(), free_bytes, "sweep: the ranks' free memory for the paired windows");
  return static_cast<int64_t>(std::min(smallest * kPairedWindowMemoryShare, 9.0e18));
}

void print_paired_outcome(const std::string& id, const PairedOutcome& outcome) {
  if (!outcome.failure.empty()) {
    std::fprintf(stderr, "[sweep] %s: no paired blocks (%s); its speedup is the runs'\n", id.c_str(),
                 outcome.failure.c_str());
    return;
  }
  const PairedLaunch& blocks = outcome.blocks;
  std::fprintf(stderr, "[sweep] %s: %zu paired blocks of %d steps against 1 rank (pilot: %.0f us a step, lag-1 "
               "autocorrelation %.2f)\n",
               id.c_str(), blocks.pairs.size(), blocks.block_steps, blocks.pilot_step_us,
               blocks.autocorrelation.empty() ? std::nan("") : blocks.autocorrelation[0]);
}

}  // namespace ddpscale
