# Whole studies through `ddpscale sweep` on 2 ranks (README.md's quick study among them), and SLURM.
# Included from tests/CMakeLists.txt, after run_store_outside_tools.cmake (which defines
# DDPSCALE_H5PY_PYTHON). Which of them run alone and which beside another test: the end of
# tests/CMakeLists.txt. Skipped (77) where h5py or SLURM is missing, never silently passed.
set(ddpscale_studies_dir ${CMAKE_BINARY_DIR}/studies)
set(ddpscale_sweep_env DDPSCALE_H5PY_PYTHON=${DDPSCALE_H5PY_PYTHON})

# experiments/quick.yaml end to end, read back with h5py. The study stays in
# build/studies/quick for later tests: FIXTURES_REQUIRED quick_study.
add_test(NAME sweep_quick_study
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/quick_study_test.sh $<TARGET_FILE:ddpscale>
                 ${ddpscale_studies_dir}/quick -- ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_quick_study PROPERTIES LABELS "mpi;study" FIXTURES_SETUP quick_study
                     ENVIRONMENT "${ddpscale_sweep_env}" TIMEOUT 900 SKIP_RETURN_CODE 77)

# SIGKILL to mpirun mid-sweep, --resume, and the result equals an uninterrupted sweep;
# an existing study without --resume/--overwrite is refused (tests/specs/tiny.yaml).
add_test(NAME sweep_kill_resume
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/kill_resume_test.sh $<TARGET_FILE:ddpscale>
                 ${ddpscale_studies_dir}/kill_resume -- ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_kill_resume PROPERTIES LABELS "mpi;study"
                     ENVIRONMENT "${ddpscale_sweep_env}" TIMEOUT 600 SKIP_RETURN_CODE 77)

# The kill-and-resume soak, shortened: 3 random kills + resumes, without the allreduce benchmark
# (15 s of start-up per launch on CPU). The full soak, benchmark included, is
# `bash tests/soak_kill_resume.sh 10` (after the README's build).
add_test(NAME sweep_soak_kill_resume
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/soak_kill_resume.sh 3 --no-commbench --bin $<TARGET_FILE:ddpscale>
                 --work ${ddpscale_studies_dir}/soak -- ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_soak_kill_resume PROPERTIES LABELS "mpi;study"
                     ENVIRONMENT "${ddpscale_sweep_env}" TIMEOUT 900 SKIP_RETURN_CODE 77)

# interleave_runs: twins alternate run by run (A B B A), read back from the runs' start times.
add_test(NAME sweep_interleave
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/interleave_test.sh $<TARGET_FILE:ddpscale>
                 ${ddpscale_studies_dir}/interleave -- ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_interleave PROPERTIES LABELS "mpi;study"
                     ENVIRONMENT "${ddpscale_sweep_env}" TIMEOUT 300 SKIP_RETURN_CODE 77)

# The paired design on 3 ranks for twins of 1 and 2: the third rank waits out the blocks.
add_test(NAME sweep_paired_spare_rank
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/paired_spare_rank_test.sh $<TARGET_FILE:ddpscale>
                 ${ddpscale_studies_dir}/paired-spare-rank -- ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_paired_spare_rank PROPERTIES LABELS "mpi;study"
                     ENVIRONMENT "${ddpscale_sweep_env}" TIMEOUT 300 PROCESSORS 2 SKIP_RETURN_CODE 77)

# launches: 2: one command runs two launches of fresh processes; files, process ids and
# instruments read back with h5py; the report; --resume at launch granularity.
add_test(NAME sweep_launches
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launches_test.sh $<TARGET_FILE:ddpscale>
                 ${ddpscale_studies_dir}/launches -- ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_launches PROPERTIES LABELS "mpi;study"
                     ENVIRONMENT "${ddpscale_sweep_env}" TIMEOUT 300 SKIP_RETURN_CODE 77)

# target_half_width: the driver skips a launch no comparison needs and runs one that some
# comparison needs, on launches whose agreement the test sets (h5py).
add_test(NAME sweep_launches_precise
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launches_precise_test.sh $<TARGET_FILE:ddpscale>
                 ${ddpscale_studies_dir}/launches-precise -- ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_launches_precise PROPERTIES LABELS "mpi;study"
                     ENVIRONMENT "${ddpscale_sweep_env}" TIMEOUT 300 SKIP_RETURN_CODE 77)

# Per-layer gradient timing: a 2-rank sweep of mlp-medium on 1 and 2 ranks
# (tests/specs/gradient-timing.yaml) writes /gradient_timing into each configuration file:
# its 8 parameters, their elements adding up to the model's, ready times within backward,
# the last layer's gradients ready before the first layer's.
add_test(NAME sweep_gradient_timing
         COMMAND bash -c [=[
set -u
bin="$1" spec="$2" out="$3" check="$4"; shift 4
rm -rf "$out" && mkdir -p "$(dirname "$out")"
"$@" -np 2 "$bin" sweep "$spec" --out "$out" --no-commbench > "$out.log" 2>&1 || { cat "$out.log"; exit 1; }
"$DDPSCALE_H5PY_PYTHON" "$check" "$out"
]=] sweep_gradient_timing $<TARGET_FILE:ddpscale> ${CMAKE_CURRENT_SOURCE_DIR}/specs/gradient-timing.yaml
                 ${ddpscale_studies_dir}/gradient-timing ${CMAKE_CURRENT_SOURCE_DIR}/check_gradient_timing.py
                 ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_gradient_timing PROPERTIES LABELS "mpi;study" ENVIRONMENT "${ddpscale_sweep_env}"
                     TIMEOUT 300 SKIP_RETURN_CODE 77)

# A progress line at least every heartbeat interval: a configuration that runs longer is
# named while it runs, before its stored line. The interval is injected
# (DDPSCALE_HEARTBEAT_SECONDS=0.5, looked at every 125 ms) so that one run of a few seconds
# (tests/specs/heartbeat.yaml) proves a line per interval: at least two progress lines name
# the configuration while it runs, and no two progress lines are more than 1 s apart by the
# clock of the line's arrival (the interval, a quarter of it for the look, and 375 ms of
# scheduling slack on a loaded 2-core machine: the standard 10 s interval would leave gaps
# of seconds).
add_test(NAME sweep_heartbeat
         COMMAND bash -c [=[
set -u
bin="$1" spec="$2" out="$3"; shift 3
rm -rf "$out" && mkdir -p "$(dirname "$out")"
"$@" -np 2 "$bin" sweep "$spec" --out "$out" --no-commbench 2>&1 |
  while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$out.log"
status=${PIPESTATUS[0]}
cat "$out.log"
[ "$status" -eq 0 ] || { echo "sweep exit $status"; exit 1; }
beats=$(grep -c '^[0-9.]* \[sweep\] configs 0/1 .*running mlp-30M_b64_w1' "$out.log")
[ "$beats" -ge 2 ] || { echo "$beats progress lines while the run ran, expected at least 2"; exit 1; }
grep '^[0-9.]* \[sweep\] ' "$out.log" |
  awk '{ if (NR > 1 && $1 - last > 1.0) { printf "gap of %.3f s before: %s\n", $1 - last, $0; bad = 1 } last = $1 } END { exit bad }'
]=] sweep_heartbeat $<TARGET_FILE:ddpscale> ${CMAKE_CURRENT_SOURCE_DIR}/specs/heartbeat.yaml
                 ${ddpscale_studies_dir}/heartbeat ${DDPSCALE_MPIRUN})
set_tests_properties(sweep_heartbeat PROPERTIES LABELS "mpi;study" TIMEOUT 300
                     ENVIRONMENT "${ddpscale_sweep_env};DDPSCALE_HEARTBEAT_SECONDS=0.5")

# The progress estimate against the time really left, on the quick study's stamped progress
# lines (four launches, each its runs and a window of paired blocks), and --dry-run's
# estimated total, started without mpirun, from the study it stored, against the time it
# took (tests/eta_test.sh). Reads what sweep_quick_study measured alone (RUN_SERIAL, at the
# end of tests/CMakeLists.txt) and times nothing itself.
add_test(NAME sweep_eta_accuracy
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/eta_test.sh $<TARGET_FILE:ddpscale> ${PROJECT_SOURCE_DIR}/experiments/quick.yaml
                 ${ddpscale_studies_dir}/quick 32 8)
set_tests_properties(sweep_eta_accuracy PROPERTIES LABELS "study" TIMEOUT 120 ENVIRONMENT "${ddpscale_sweep_env}"
                     FIXTURES_REQUIRED quick_study PASS_REGULAR_EXPRESSION "\\[sweep_eta_accuracy\\] ok")

# --dry-run started as a plain process, with no study in --out to estimate from: it exits 0
# and estimates from 2 steps of each model and batch timed on this process.
add_test(NAME sweep_dry_run_without_measurements
         COMMAND bash -c [=[
set -u
printed=$("$@")
status=$?
echo "$printed"
[ "$status" -eq 0 ] || { echo "--dry-run exited with $status"; exit 1; }
# Nothing stored: 2 steps of each model and batch (2 here) timed on this process stand in.
grep -Eq '^# estimate: about [0-9]+:[0-9]{2}:[0-9]{2} for 12 runs of 4 configurations, from 2 step times probed on this process alone' <<<"$printed" ||
  { echo "no estimate line from the probe"; exit 1; }
echo "dry run without measurements ok"
]=] sweep_dry_run_without_measurements $<TARGET_FILE:ddpscale> sweep ${CMAKE_CURRENT_SOURCE_DIR}/specs/tiny.yaml
                 --out ${ddpscale_studies_dir}/never-measured --dry-run --device cpu)
set_tests_properties(sweep_dry_run_without_measurements PROPERTIES LABELS unit TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "dry run without measurements ok"
                     ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

# A one-node SLURM cluster on localhost (root; munge + slurmctld + slurmd) runs
# slurm/study.sbatch on tests/specs/tiny.yaml. 77 (skipped) where SLURM cannot start.
add_test(NAME slurm_study
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm_study_test.sh $<TARGET_FILE:ddpscale>
                 ${ddpscale_studies_dir}/slurm)
set_tests_properties(slurm_study PROPERTIES LABELS slurm
                     ENVIRONMENT "${ddpscale_sweep_env}" TIMEOUT 900 SKIP_RETURN_CODE 77)

# The shipped specs parse, validate and expand to the grids experiments/README.md describes
# (--dry-run trains nothing; --probe-seconds 0: no step timed for an estimate): quick 2x2x2, seed study 4x5x2 + 6x2, reference 2x5x2,
# thresholds 9x3x2 + 5x3x2 + 2x2 + 3x1x2, strong-scaling thresholds 9x3x2 + 5x3x2 + 2x2,
# NCCL profiles 2x3x2 per profile, precision 2x3x2x2.
foreach(spec_and_count quick:8 seed-study:52 reference-comparison:20 thresholds:94 thresholds-strong:88 nccl-profiles:12
        precision:24)
  string(REPLACE ":" ";" spec_and_count ${spec_and_count})
  list(GET spec_and_count 0 spec)
  list(GET spec_and_count 1 count)
  set(profile_args)
  if(spec STREQUAL "nccl-profiles")
    set(profile_args --nccl-profile seed-pcie)
  endif()
  add_test(NAME sweep_spec_${spec}
           COMMAND ${DDPSCALE_MPIRUN} -np 2 $<TARGET_FILE:ddpscale> sweep ${PROJECT_SOURCE_DIR}/experiments/${spec}.yaml
                   --dry-run --probe-seconds 0 --device cpu ${profile_args})
  set_tests_properties(sweep_spec_${spec} PROPERTIES LABELS "mpi;study" TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "# [a-z-]+: ${count} configurations in run order")
endforeach()
# exec-modes.yaml, graph-scaling.yaml and threshold-modes.yaml ask for CUDA graphs and GPU-busy profiling, which a
# CPU run refuses before measuring anything, naming the first configuration that needs them
# and what it needs.
foreach(spec_and_first exec-modes:mlp-medium graph-scaling:mlp-large threshold-modes:mlp-100K)
  string(REPLACE ":" ";" spec_and_first ${spec_and_first})
  list(GET spec_and_first 0 spec)
  list(GET spec_and_first 1 first_model)
  add_test(NAME sweep_spec_${spec}
           COMMAND ${DDPSCALE_MPIRUN} -np 2 $<TARGET_FILE:ddpscale> sweep ${PROJECT_SOURCE_DIR}/experiments/${spec}.yaml
                   --dry-run --device cpu)
  set_tests_properties(sweep_spec_${spec} PROPERTIES LABELS "mpi;study" TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "configuration ${first_model} batch [0-9]+ world 1: --gpu-busy-steps measures the GPU's kernel time; on CPU there is none")
endforeach()

# process_shifts_mib: the launches take the amounts in turn, so their number must divide
# the launches (checked first, on any device), and a CPU run has no device memory to hold.
add_test(NAME sweep_process_shifts_uneven
         COMMAND ${DDPSCALE_MPIRUN} -np 2 $<TARGET_FILE:ddpscale> sweep ${CMAKE_CURRENT_SOURCE_DIR}/specs/process-shifts.yaml
                 --launches 3 --dry-run --probe-seconds 0 --device cpu)
set_tests_properties(sweep_process_shifts_uneven PROPERTIES LABELS "mpi;study" TIMEOUT 120
                     PASS_REGULAR_EXPRESSION "process_shifts_mib gives 2 amounts for 3 launches: make launches: a multiple of 2")
add_test(NAME sweep_process_shifts_on_cpu
         COMMAND ${DDPSCALE_MPIRUN} -np 2 $<TARGET_FILE:ddpscale> sweep ${CMAKE_CURRENT_SOURCE_DIR}/specs/process-shifts.yaml
                 --dry-run --probe-seconds 0 --device cpu)
set_tests_properties(sweep_process_shifts_on_cpu PROPERTIES LABELS "mpi;study" TIMEOUT 120
                     PASS_REGULAR_EXPRESSION "process_shifts_mib moves where GPU buffers land; on a CPU there are none")

# The two-node cluster of namespaces (docs/multinode.md): tests/cluster_tests.cmake.
include(${CMAKE_CURRENT_LIST_DIR}/cluster_tests.cmake)
