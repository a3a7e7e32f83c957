#!/usr/bin/env python3
"""Checks `ddpscale report --predict`'s "Predicted scaling" section against `ddpscale predict`
run on the same study with the same targets: the section is in report.md and report.html,
predict.csv and validation.csv beside the report are byte for byte predict's, and every row of
the section's predictions table is the row predict.md prints and holds predict.csv's numbers
as the table rounds them.

Usage: check_report_prediction.py REPORT_DIR PREDICT_DIR
Exit 0: every check held; 1: the first that did not, printed.
"""
import csv
import os
import re
import sys


def fail(message):
    print(f"check_report_prediction: FAIL: {message}")
    sys.exit(1)


def read(path):
    if not os.path.exists(path):
        fail(f"{path} is missing")
    with open(path, encoding="utf-8") as f:
        return f.read()


def table_after(markdown, heading_pattern, what):
    """The rows (lists of cells) of the first table after the first heading matching the pattern."""
    match = re.search(heading_pattern, markdown, re.MULTILINE)
    if not match:
        fail(f"{what}: no heading matching {heading_pattern!r}")
    rows = []
    for line in markdown[match.end():].splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
        elif rows:
            break
    if len(rows) < 3:
        fail(f"{what}: no table with rows after {match.group(0)!r}")
    return rows[2:]  # past the header and the alignment row


def interval(point, low, high, digits):
    f = f"{{:.{digits}f}}"
    return f"{f.format(float(point))} \\[{f.format(float(low))}, {f.format(float(high))}\\]"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    report, predict = sys.argv[1], sys.argv[2]
    report_md = read(os.path.join(report, "report.md"))
    section = re.search(r"^## (\d+)\. Predicted scaling$", report_md, re.MULTILINE)
    if not section:
        fail("report.md has no '## N. Predicted scaling' section")
    section_md = report_md[section.start():]
    if "Predicted scaling</h2>" not in read(os.path.join(report, "report.html")):
        fail("report.html has no Predicted scaling heading")

    for name in ("predict.csv", "validation.csv"):
        if read(os.path.join(report, name)) != read(os.path.join(predict, name)):
            fail(f"{name} beside the report differs from predict's")
    read(os.path.join(report, "predict.json"))

    in_report = table_after(section_md, r"^### Predictions$", "report.md's section")
    in_predict = table_after(read(os.path.join(predict, "predict.md")), r"^## Predictions$", "predict.md")
    if in_report != in_predict:
        fail(f"the section's predictions table differs from predict.md's:\n{in_report}\n{in_predict}")
    with open(os.path.join(predict, "predict.csv")) as f:
        rows = list(csv.DictReader(f))
    if len(rows) != len(in_report) or not rows:
        fail(f"{len(in_report)} table rows for {len(rows)} rows of predict.csv")
    for cells, row in zip(in_report, rows):
        expected = {
            5: f"{row['nodes']}x{row['gpus_per_node']}",
            8: interval(row["step_us"], row["step_us_low"], row["step_us_high"], 1),
            9: interval(row["samples_per_s"], row["samples_per_s_low"], row["samples_per_s_high"], 0),
            10: interval(row["speedup"], row["speedup_low"], row["speedup_high"], 2),
            11: interval(row["efficiency"], row["efficiency_low"], row["efficiency_high"], 3),
        }
        for column, text in expected.items():
            if cells[column] != text:
                fail(f"{row['model']} {row['nodes']}x{row['gpus_per_node']}: column {column} is {cells[column]!r}, "
                     f"predict.csv says {text!r}")

    self_check = table_after(section_md, r"^### Self-check against the study's own measurements$", "self-check")
    with open(os.path.join(predict, "validation.csv")) as f:
        if len(self_check) != len(list(csv.DictReader(f))):
            fail("the section's self-check table and validation.csv have different row counts")
    figures = re.findall(r"^!\[[^\]]*\]\((plots/predicted_(speedup|efficiency)_[^)]+\.svg)\)$", section_md, re.MULTILINE)
    if "Plots: gnuplot" in report_md:  # the report drew its plots: so must the section
        if not figures:
            fail("the report drew plots but the section has no predicted speedup/efficiency figure")
        for path, _ in figures:
            read(os.path.join(report, path))
    print(f"check_report_prediction: section {section.group(1)}, {len(in_report)} predictions equal to predict's, "
          f"{len(self_check)} self-check rows, {len(figures)} figures")


if __name__ == "__main__":
    main()
