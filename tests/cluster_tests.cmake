# An emulated two-node cluster (tests/cluster/, docs/multinode.md): two network +
# UTS namespaces (node1, node2) joined by a veth pair shaped to 4 Gbit/s with tc tbf, one
# slurmd per node, OpenMPI over TCP on that link only. It runs
# `sbatch -N 2 slurm/study-multinode.sbatch tests/specs/tiny.yaml` (one rank per node, with
# the allreduce benchmark) and the same study through `mpirun --hostfile`, checks both with
# h5py, SIGKILLs the rank on node2 of a third study and requeues the job (it must end within
# --comm-timeout and resume to the full study, nothing lost or duplicated), and tears
# everything down. About 65 s on 2 cores run alone, most of it waiting (SLURM's job start, the
# requeue's 10 s credential expiry) with each node's processes on a core of their own
# (cluster_lib.sh): a 2-rank step of mlp-medium crosses the 4 Gbit/s link in about 5 ms. It
# runs beside another test all the same (never beside slurm_study, whose daemons have the same
# names): its kill follows the first stored files within a poll of 0.05 s while a later
# configuration runs for seconds, and the killed job ends within --comm-timeout (10 s) where
# it takes about 3 s. Needs root, namespaces, veth, tc, munge and slurm-wlm, and is skipped
# (77) with the reason where any is missing.
add_test(NAME cluster_two_nodes
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cluster/two_node_test.sh $<TARGET_FILE:ddpscale>
                 ${CMAKE_BINARY_DIR}/studies/cluster)
set_tests_properties(cluster_two_nodes PROPERTIES LABELS "cluster;slurm"
                     ENVIRONMENT "DDPSCALE_H5PY_PYTHON=${DDPSCALE_H5PY_PYTHON}"
                     TIMEOUT 600 SKIP_RETURN_CODE 77)
