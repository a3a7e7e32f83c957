#!/usr/bin/env python3
"""Summarises a `ctest -V` log: how many tests ran, passed, failed and were skipped, and why.

Usage: gpu_test_summary.py LOG

CTest counts a whole test binary as one test; a GoogleTest binary that skips some of its
cases still counts as passed. So this also counts the GoogleTest cases inside each test
("[  SKIPPED ]" with the reason GTEST_SKIP gave) and the reasons of tests CTest skipped
(exit code 77, with the "SKIPPED: ..." or "needs ..." line the test printed).
Exit code: 1 if any test failed, else 0.
"""
import collections
import re
import sys

RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#(\d+): (\S+) \.*\s*(\*+)?(Passed|Failed|Skipped|Not Run|Timeout|Exception)?")
OUTPUT = re.compile(r"^(\d+): (.*)$")
CASE_SKIPPED = re.compile(r"\[  SKIPPED \] (\S+) \(")
CASE_OK = re.compile(r"\[       OK \] (\S+) \(")
CASE_FAILED = re.compile(r"\[  FAILED  \] (\S+) \(")
REASON = re.compile(r"(needs \d+ GPUs?[^\n]*|built without CUDA[^\n]*|no GPU[^\n]*|SKIPPED: [^\n]*)")


def parse(lines):
    """Per test number: its name, CTest's verdict, and its output lines."""
    outputs = collections.defaultdict(list)
    verdicts = {}
    for line in lines:
        line = line.rstrip("\n")
        result = RESULT.match(line)
        if result:
            number, name, _, verdict = result.groups()
            verdicts[number] = (name, verdict or "Failed")
            continue
        output = OUTPUT.match(line)
        if output:
            outputs[output.group(1)].append(output.group(2))
    return verdicts, outputs


def case_counts(output):
    """GoogleTest cases that ran and that skipped (with the reason printed before each)."""
    ran = skipped = 0
    reasons = collections.Counter()
    last_reason = None
    for line in output:
        reason = REASON.search(line)
        if reason:
            last_reason = reason.group(1).strip()
        if CASE_SKIPPED.search(line):
            skipped += 1
            reasons[last_reason or "no reason given"] += 1
            last_reason = None
        elif CASE_OK.search(line) or CASE_FAILED.search(line):
            ran += 1
    return ran, skipped, reasons


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], errors="replace") as log:
        verdicts, outputs = parse(log)
    tally = collections.Counter(verdict for _, verdict in verdicts.values())
    print(f"GPU tests: {len(verdicts)} in all; {tally['Passed']} passed, {tally['Skipped']} skipped, "
          f"{len(verdicts) - tally['Passed'] - tally['Skipped']} failed")
    cases_ran = cases_skipped = 0
    for number, (name, verdict) in sorted(verdicts.items(), key=lambda item: int(item[0])):
        output = outputs.get(number, [])
        ran, skipped, reasons = case_counts(output)
        cases_ran += ran
        cases_skipped += skipped
        line = f"  {verdict:<8} {name}"
        if ran or skipped:
            line += f": {ran} cases ran, {skipped} skipped"
        if verdict == "Skipped" and not reasons:
            found = [REASON.search(text).group(1) for text in output if REASON.search(text)]
            reasons = collections.Counter(found[-1:] or ["no reason given"])
        if verdict == "Skipped" and not (ran or skipped):
            line += f" ({next(iter(reasons))})"
        elif reasons:
            line += " (" + "; ".join(f"{why}: {n}" for why, n in reasons.most_common()) + ")"
        print(line)
    print(f"GoogleTest cases inside them: {cases_ran} ran, {cases_skipped} skipped")
    return 1 if len(verdicts) - tally["Passed"] - tally["Skipped"] else 0


if __name__ == "__main__":
    sys.exit(main())
