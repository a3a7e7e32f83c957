#!/usr/bin/python3
"""Checks that a study ran across the two namespace nodes (tests/cluster/two_node_test.sh).

  check_two_nodes.py STUDY_DIR [--rate-bits-per-s R] [--ifname IF]

Asserts, with h5py: study.h5's /metadata hostnames are exactly node1 and node2 (one rank on
each, so the hosts recorded differ); with --ifname, /metadata/nccl_variables records
NCCL_SOCKET_IFNAME=IF; with --rate-bits-per-s, /commbench exists and its largest allreduce
(64 MiB) took at least S * 8 / R (busbw, which for 2 ranks equals algbw = bytes/time, cannot
exceed the shaped link's rate: a faster time means the traffic did not cross the link). The
largest size, where the rate and not the link's latency sets the time, so that the bound stays
far above the unshaped veth's time at every rate the test uses. It prints that time against the
two bounds of docs/multinode.md: S/R (any algorithm with both directions busy) and 2S/R (reduce
then broadcast, what OpenMPI's non-blocking in-place allreduce does on 2 ranks).

Exit 0: all good; 1: a check failed; 77: h5py or numpy missing.
"""
import argparse
import sys

try:
    import h5py
    import numpy as np
except ImportError as missing:
    print(f"SKIPPED: {missing} (Debian: apt-get install python3-h5py python3-numpy)")
    sys.exit(77)


def text(value):
    return value.decode("utf-8") if isinstance(value, (bytes, np.bytes_)) else str(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("study")
    parser.add_argument("--rate-bits-per-s", type=float)
    parser.add_argument("--ifname")
    args = parser.parse_args()
    problems = []
    with h5py.File(f"{args.study}/study.h5", "r") as f:
        meta = f["metadata"]
        hosts = [text(h) for h in meta.attrs["hostnames"]]
        print(f"hosts recorded: {hosts}")
        if hosts != ["node1", "node2"]:
            problems.append(f"hostnames {hosts}, expected ['node1', 'node2']")
        if args.ifname:
            nccl = {k: text(v) for k, v in meta["nccl_variables"].attrs.items()} if "nccl_variables" in meta else {}
            print(f"NCCL variables recorded: {nccl}")
            if nccl.get("NCCL_SOCKET_IFNAME") != args.ifname:
                problems.append(f"NCCL_SOCKET_IFNAME not recorded as {args.ifname}: {nccl}")
        if args.rate_bits_per_s:
            if "commbench" not in f:
                problems.append("no /commbench in study.h5")
            else:
                size = np.asarray(f["commbench/bytes"])
                time_us = np.asarray(f["commbench/time_us"])
                busbw = np.asarray(f["commbench/busbw_gbs"])
                if len(size) == 0:
                    problems.append("/commbench has no rows")
                else:
                    i = int(np.argmax(size))
                    mib = size[i] / (1 << 20)
                    one_way_us = size[i] * 8 / args.rate_bits_per_s * 1e6
                    print(f"{mib:.0f} MiB allreduce: {time_us[i]:.0f} us (busbw {busbw[i]:.4f} GB/s); "
                          f"link bound S/R {one_way_us:.0f} us, reduce+broadcast bound 2S/R {2 * one_way_us:.0f} us; "
                          f"link rate {args.rate_bits_per_s / 8e9:.4f} GB/s")
                    if time_us[i] < one_way_us:
                        problems.append(f"{mib:.0f} MiB allreduce took {time_us[i]:.0f} us, less than the "
                                        f"{one_way_us:.0f} us the shaped link allows: the traffic did not cross it")
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print(f"OK: {args.study} ran on node1 and node2")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
