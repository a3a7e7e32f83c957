// A configuration record whose runs are given launch by launch, for the tests of the
// statistics over launches and of the rule that stops adding them.
#pragma once
#include "results/store/run_record.hpp"

#include <string>
#include <vector>

namespace ddpscale::testing_samples {

// `model` on `world` ranks, id "<model>_w<world>", of a study of `launches` launches; the
// settings a 1-rank and an N-rank record need to be each other's twin are set alike.
inline ConfigRecord record_over_launches(const std::string& model, int world,
                                         const std::vector<std::vector<double>>& throughput_by_launch, int launches) {
  ConfigRecord r;
  r.id = model + "_w" + std::to_string(world);
  r.params.model = model;
  r.params.parameters = 1000;
  r.params.batch_per_rank = 8;
  r.params.global_batch = 8 * world;
  r.params.world_size = world;
  r.params.backend = world == 1 ? "none" : "mpi";
  r.params.measured_steps = 5;
  r.params.runs = 2 * launches;
  r.launches = launches;
  int index = 0;
  for (size_t l = 0; l < throughput_by_launch.size(); ++l)
    for (double t : throughput_by_launch[l]) {
      RunRecord run;
      run.index = index++;
      run.launch = static_cast<int>(l);
      run.samples_per_second = t;
      r.runs.push_back(run);
    }
  return r;
}

}  // namespace ddpscale::testing_samples
