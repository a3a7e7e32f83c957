#!/usr/bin/env python3
"""Holds every subcommand's flags and every sweep spec key to the naming rule of
experiments/README.md ("Flags and spec keys: one naming rule"):

- every spec key has the `ddpscale train` or `sweep` flag the rule gives it (the key with
  dashes; --no-KEY for a key that is true by default; the singular of a grid axis), or is
  one of the keys that describe a whole study;
- flags have no underscores, one short letter means one long flag in every subcommand,
  and every --out has a default;
- every subcommand's --help ends with an example naming that subcommand;
- the old spellings still work and print a deprecation line naming the new one.

Usage: check_flag_rule.py DDPSCALE WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

SUBCOMMANDS = ["info", "commbench", "models", "train", "sweep", "study", "report", "compare", "predict",
               "import-pytorch"]
# Keys of a study as a whole: train measures one configuration, so they have no flag.
STUDY_ONLY_KEYS = {"name", "interleave_runs", "design", "paired_seconds", "paired_window", "overrides", "target_half_width", "min_launches", "process_shifts_mib"}
# The grid's axes are lists (plural keys); the flag sets one value.
GRID_AXES = {"models": "model", "batch_sizes": "batch-size", "world_sizes": "world-size",
             "nccl_profiles": "nccl-profile"}
# True unless the spec says false: the flag that turns them off is --no-KEY.
TRUE_BY_DEFAULT = {"overlap", "dropout", "memory_check", "broadcast_buffers"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(ddpscale, args, cwd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run([ddpscale] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def help_of(ddpscale, command, cwd):
    result = run(ddpscale, [command, "--help"], cwd)
    check(result.returncode == 0, f"{command} --help: exit {result.returncode}: {result.stderr[-300:]}")
    return result.stdout


def flags_in(help_text):
    """{long flag: short letter or None} of the option lines of a cxxopts help."""
    flags = {}
    # Option lines are indented a little; a wrapped description far more.
    for match in re.finditer(r"^ {1,10}(?:-(\w), )?--([A-Za-z0-9_-]+)", help_text, re.M):
        flags[match.group(2)] = match.group(1)
    return flags


def option_text(lines, flag):
    """An option's lines in a cxxopts help, its wrapped description joined."""
    start = next(i for i, line in enumerate(lines) if re.match(r"\s+(-\w, )?--" + flag + r"\b", line))
    text = lines[start].strip()
    for line in lines[start + 1:]:
        if not line.strip() or re.match(r" {1,10}-", line):  # the next option, not a wrapped line
            break
        text += " " + line.strip()
    return text


def check_help(command, text):
    lines = [line for line in text.rstrip().splitlines()]
    check(len(lines) >= 2 and lines[-2] == "Example:" and f"ddpscale {command}" in lines[-1],
          f"{command} --help does not end with 'Example:' and a {command} command line: {lines[-2:]}")
    flags = flags_in(text)
    check(flags, f"{command} --help lists no flags")
    for flag, _ in flags.items():
        check("_" not in flag, f"{command}: --{flag} has an underscore (flags take dashes)")
    if "out" in flags:
        option = option_text(lines, "out")
        check("default:" in option, f"{command}: --out has no default folder: {option}")
    return flags


def spec_keys(ddpscale, work_dir):
    """The keys sweep accepts, from its message for an unknown one."""
    spec = os.path.join(work_dir, "unknown-key.yaml")
    with open(spec, "w") as f:
        f.write("models: [mlp-medium]\nbatch_sizes: [8]\nworld_sizes: [1]\nnot_a_key: 1\n")
    result = run(ddpscale, ["sweep", spec, "--dry-run", "--device", "cpu"], work_dir)
    match = re.search(r"the keys are (.*?) \(experiments/README.md", result.stderr)
    if not match:
        failures.append(f"sweep does not list its keys for an unknown one: {result.stderr[-400:]}")
        return []
    return match.group(1).split(", ")


def flag_for(key):
    if key in GRID_AXES:
        return GRID_AXES[key]
    if key in TRUE_BY_DEFAULT:
        return "no-" + key.replace("_", "-")
    return key.replace("_", "-")


def check_old_spellings(ddpscale, work_dir):
    trained = run(ddpscale, ["train", "-m", "mlp-medium", "--features", "16", "--classes", "4", "--batch", "4",
                             "--runs", "1", "--warmup", "0", "--steps", "2", "--device", "cpu"], work_dir)
    check(trained.returncode == 0, f"train --batch 4: exit {trained.returncode}: {trained.stderr[-400:]}")
    check("--batch is deprecated" in trained.stderr and "write --batch-size" in trained.stderr,
          f"train --batch: no deprecation line naming --batch-size: {trained.stderr[-400:]}")
    check("batch 4 per rank" in trained.stdout, f"train --batch 4 did not train batch 4: {trained.stdout[:400]}")

    shifted = run(ddpscale, ["train", "--placement-shifts=0,20", "--runs", "2", "--device", "cpu"], work_dir)
    check("--placement-shifts is deprecated" in shifted.stderr and
          "--placement-shifts-mib moves where GPU buffers land" in shifted.stderr,
          f"train --placement-shifts=0,20: not read as --placement-shifts-mib: {shifted.stderr[-400:]}")

    bench = run(ddpscale, ["commbench", "-b", "1K", "-e", "4K", "-n", "2", "-w", "1", "--device", "cpu"], work_dir)
    check(bench.returncode == 0, f"commbench -b 1K: exit {bench.returncode}: {bench.stderr[-400:]}")
    check("-b is deprecated" in bench.stderr and "write --min-bytes" in bench.stderr,
          f"commbench -b: no deprecation line naming --min-bytes: {bench.stderr[-400:]}")
    check(re.search(r"^\s+1024\s", bench.stdout, re.M) is not None,
          f"commbench -b 1K did not start at 1024 bytes: {bench.stdout[-600:]}")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    ddpscale, work_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(work_dir)

    flags = {command: check_help(command, help_of(ddpscale, command, work_dir)) for command in SUBCOMMANDS}
    letters = {}
    for command, named in flags.items():
        for flag, letter in named.items():
            if letter and letters.setdefault(letter, flag) != flag:
                failures.append(f"-{letter} is --{letters[letter]} in one subcommand and --{flag} in {command}")

    keys = spec_keys(ddpscale, work_dir)
    check(len(keys) > 20, f"too few spec keys read: {keys}")
    for key in keys:
        if key in STUDY_ONLY_KEYS:
            continue
        flag = flag_for(key)
        check(flag in flags["train"] or flag in flags["sweep"],
              f"spec key {key}: neither train nor sweep has --{flag} (the rule in experiments/README.md), "
              "and it is not a key of a whole study")

    check_old_spellings(ddpscale, work_dir)
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print(f"PASS: {len(SUBCOMMANDS)} subcommands' help and {len(keys)} spec keys follow the rule; "
          "old spellings work with a deprecation line")


if __name__ == "__main__":
    main()
