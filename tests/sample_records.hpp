// Records with known values for the store and statistics tests, and for the sample study
// that outside tools (h5py, h5dump) check.
#pragma once
#include "results/store/run_record.hpp"

#include <hdf5.h>

#include <cmath>
#include <limits>
#include <string>

namespace ddpscale::testing_samples {

// Phase p of step s on rank r of run k: a value the Python check recomputes.
inline float sample_phase_us(int k, int r, int p, int s) { return 100.0f * (p + 1) + 10.0f * s + r + 1000.0f * k; }

inline ConfigRecord sample_config() {
  ConfigRecord c;
  c.params.model = "mlp-medium";
  c.params.parameters = 258432;
  c.params.batch_per_rank = 32;
  c.params.global_batch = 64;
  c.params.world_size = 2;
  c.params.backend = "mpi";
  c.params.measured_steps = 5;
  c.params.runs = 3;
  c.params.nccl_variables = {{"NCCL_ALGO", "Tree"}, {"NCCL_NVLS_ENABLE", "0"}};
  c.id = "mlp-medium_b32_w2_sample";
  for (int k = 0; k < 3; ++k) {
    RunRecord run;
    run.index = k;
    run.seed = 42 + static_cast<uint64_t>(k);
    run.samples_per_second = 1000.0 + 10.0 * k;
    for (int s = 0; s < 5; ++s) run.loss.push_back(2.0f - 0.1f * static_cast<float>(s));
    if (k == 1) {
      run.status = RunStatus::failed;
      run.failure = "non-finite loss (nan) at measured step 3";
      run.samples_per_second = 0;
      run.loss[3] = std::numeric_limits<float>::quiet_NaN();
    }
    for (int r = 0; r < 2; ++r) {
      RankTimings t;
      t.rank = r;
      for (int p = 0; p < kPhaseCount; ++p)
        for (int s = 0; s < 5; ++s) t.phase_us[static_cast<size_t>(p)].push_back(sample_phase_us(k, r, p, s));
      t.wall_seconds = 0.5 + 0.01 * r;
      t.peak_memory_bytes = 1000000 + r;
      t.gpu_utilization_pct = r == 0 ? std::vector<float>{50, 60, 70} : std::vector<float>{80, 90};
      t.gpu_memory_used_mib = r == 0 ? std::vector<float>{1, 2, 3} : std::vector<float>{4, 5};
      t.gpu_power_w = r == 0 ? std::vector<float>{100, 110, 120} : std::vector<float>{130, 140};
      // Rank 1 profiled no steps (--gpu-busy-steps found nothing there): one value or none.
      t.gpu_busy_us = r == 0 ? std::vector<float>{250.5f} : std::vector<float>{};
      run.ranks.push_back(t);
    }
    c.runs.push_back(run);
  }
  return c;
}

inline StudyMetadata sample_metadata() {
  StudyMetadata m;
  m.tool_version = "0.1.0";
  m.git_commit = "abc123";
  m.command_line = "ddpscale sweep experiments/quick.yaml --out x";
  m.spec_text = "models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1, 2]\n";
  m.created_utc = "2026-11-22T00:00:00Z";
  m.hostnames = {"node-a", "node-b"};
  m.gpu_names = {"NVIDIA H200", "NVIDIA H200"};
  m.nccl_variables = {{"NCCL_NVLS_ENABLE", "0"}};
  m.link_topology = "GPU0-GPU1 NVLink x18, P2P yes";
  return m;
}

// Rewrites one integer attribute in place (to forge a file of another schema version).
inline void set_int_attribute(const std::string& path, const char* name, int64_t value) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t attr = H5Aopen(file, name, H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_INT64, &value);
  H5Aclose(attr);
  H5Fclose(file);
}

}  // namespace ddpscale::testing_samples
