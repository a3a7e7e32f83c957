#!/usr/bin/env python3
"""Writes commbench.csv beside a report.md whose study's runs are gone, from the report's
allreduce table, so that `ddpscale predict REPORT_DIR` has the curve it needs.

Usage: commbench_from_report.py REPORT_DIR [RANKS]

RANKS: how many ranks measured the curve (default: the largest world size in summary.csv,
as `ddpscale sweep` runs commbench on every rank of the launch). Reports written by this
version of ddpscale write commbench.csv themselves.
"""
import csv
import os
import re
import sys

ROW = re.compile(r"^\|\s*([\d,]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|$")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    folder = sys.argv[1]
    with open(os.path.join(folder, "report.md")) as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Allreduce bandwidth measured")), None)
    if start is None:
        sys.exit(f"{folder}/report.md has no allreduce table")
    rows = []
    for line in lines[start + 1:]:
        if rows and not line.startswith("|"):
            break
        match = ROW.match(line.strip())
        if match:
            rows.append([match.group(1).replace(",", "")] + list(match.groups()[1:]))
    if len(sys.argv) == 3:
        ranks = int(sys.argv[2])
    else:
        with open(os.path.join(folder, "summary.csv")) as f:
            ranks = max(int(r["world_size"]) for r in csv.DictReader(f))
    with open(os.path.join(folder, "commbench.csv"), "w") as out:
        out.write("bytes,time_us,algbw_gbs,busbw_gbs,ranks\n")
        for row in rows:
            out.write(",".join(row + [str(ranks)]) + "\n")
    print(f"{folder}/commbench.csv: {len(rows)} sizes, {ranks} ranks")


if __name__ == "__main__":
    main()
