#!/usr/bin/env python3
"""Runs every command line of README.md's "Using it" block as printed, then every command
line of the "Commands that produced the study" section of the report those lines wrote,
as printed, and checks that each succeeds (as root too: the README's setup runs as root).

Usage: check_readme_commands.py SOURCE_DIR DDPSCALE TORCHSCRIPT_DIR WORK_DIR

The lines run in WORK_DIR, where build/trainer/ddpscale links to DDPSCALE and experiments/
to the source tree's, so relative paths resolve as they do in a checkout; all lines run in
one bash process, in order, as a reader pastes them (an `export` line carries on).
Substitutions, where the README's line would take long on 2 CPU cores or needs a file the
reader brings, each named in the output:
- experiments/seed-study.yaml (hours on CPU) becomes tests/specs/tiny.yaml (seconds);
- `commbench -e 2G` (almost 2 minutes on CPU) becomes `-e 4M`;
- `train -m mlp-large -b 64` gets `--runs 2 --warmup 1 --steps 5` after it;
- `study ... -b 32,64` measures batch 4 and 8, 2 runs of 1 + 3 steps; `study ... -b 32
  --allreduce` batch 4, 2 runs of 1 + 3 steps;
- resnet18.pt (exported with scripts/export_model.py) is the test's own TorchScript MLP,
  fed 16 features for 4 classes instead of 3x224x224 images for 1000;
- studies/monday and studies/tuesday are copies of the study the sweep line wrote.
"""
import os
import re
import shutil
import subprocess
import sys

SUBSTITUTIONS = [
    ("experiments/seed-study.yaml", "tests/specs/tiny.yaml"),
    ("commbench -e 2G", "commbench -e 4M"),
    ("train -m mlp-large -b 64", "train -m mlp-large -b 64 --runs 2 --warmup 1 --steps 5"),
    ("--input-shape 3x224x224 --classes 1000", "--input-shape 16 --classes 4"),
    ("-b 32,64 --out studies/resnet18", "-b 4,8 --runs 2 --warmup 1 --steps 3 --out studies/resnet18"),
    ("-b 32 --allreduce", "-b 4 --runs 2 --warmup 1 --steps 3 --allreduce"),
]


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def readme_lines(source_dir):
    """The command lines of the first ```sh block under '## Using it', comments dropped."""
    text = open(os.path.join(source_dir, "README.md"), encoding="utf-8").read()
    section = text.split("## Using it", 1)
    if len(section) != 2:
        fail("README.md has no '## Using it' section")
    block = re.search(r"```sh\n(.*?)```", section[1], re.S)
    if not block:
        fail("README.md's 'Using it' has no ```sh block")
    lines = []
    for line in block.group(1).splitlines():
        command = line.split("  #", 1)[0].strip()
        if command and not command.startswith("#"):
            lines.append(command)
    return lines


def report_commands(report_md):
    """The lines of the preformatted block after 'Commands that produced the study'."""
    text = open(report_md, encoding="utf-8").read()
    after = text.split("Commands that produced the study and this report:", 1)
    if len(after) != 2:
        fail(f"{report_md} has no 'Commands that produced the study' section")
    block = re.search(r"```[a-z]*\n(.*?)```", after[1], re.S)
    if not block:
        fail(f"{report_md}: no preformatted block of commands")
    return [line for line in block.group(1).splitlines() if line.strip()]


def run_script(lines, work_dir, what):
    script = "set -e\n" + "\n".join(f"echo '+ {line.replace(chr(39), chr(39) + chr(92) + chr(39) + chr(39))}'\n{line}"
                                    for line in lines) + "\n"
    # A clean environment as a new shell has it: nothing from the test's own settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPI_")}
    result = subprocess.run(["bash", "-c", script], cwd=work_dir, env=env, capture_output=True, text=True,
                            timeout=900)
    sys.stdout.write(result.stdout[-6000:])
    if result.returncode != 0:
        fail(f"{what}: a line failed (exit {result.returncode}); stderr:\n{result.stderr[-4000:]}")


def lay_out(source_dir, ddpscale, torchscript_dir, work_dir):
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(os.path.join(work_dir, "build", "trainer"))
    os.symlink(os.path.abspath(ddpscale), os.path.join(work_dir, "build", "trainer", "ddpscale"))
    for folder in ("experiments", "tests"):
        os.symlink(os.path.join(source_dir, folder), os.path.join(work_dir, folder))
    shutil.copy(os.path.join(torchscript_dir, "mlp.pt"), os.path.join(work_dir, "resnet18.pt"))


def with_substitutions(lines):
    substituted = []
    for line in lines:
        for old, new in SUBSTITUTIONS:
            if old in line:
                print(f"substituted: {old!r} -> {new!r}")
                line = line.replace(old, new)
        substituted.append(line)
    return substituted


def main():
    if len(sys.argv) != 5:
        fail(__doc__)
    source_dir, ddpscale, torchscript_dir, work_dir = (os.path.abspath(a) for a in sys.argv[1:])
    lay_out(source_dir, ddpscale, torchscript_dir, work_dir)
    lines = with_substitutions(readme_lines(source_dir))
    # compare's two studies: copies of the one the sweep line wrote, made right after it.
    sweep_at = next((i for i, line in enumerate(lines) if " sweep " in line and "--out" in line), None)
    compare_at = next((i for i, line in enumerate(lines) if " compare " in line), None)
    if sweep_at is None or compare_at is None:
        fail("README.md's 'Using it' lost its sweep or compare line")
    out = re.search(r"--out (\S+)", lines[sweep_at]).group(1)
    lines.insert(sweep_at + 1, f"cp -r {out} studies/monday && cp -r {out} studies/tuesday")
    print("added: copies of the study as studies/monday and studies/tuesday")
    run_script(lines, work_dir, "README.md, 'Using it'")
    print(f"PASS: {len(lines)} README lines")

    report_lines = [l for l in lines if " report " in l and "--predict" not in l]
    report_dir = re.search(r"--out (\S+)", report_lines[0]).group(1)
    commands = report_commands(os.path.join(work_dir, report_dir, "report.md"))
    if not any("mpirun" in c and " sweep " in c for c in commands):
        fail(f"the report's commands do not show the sweep's launcher: {commands}")
    # Run again from scratch: the sweep refuses a folder that already holds its study.
    shutil.rmtree(os.path.join(work_dir, out))
    shutil.rmtree(os.path.join(work_dir, report_dir))
    run_script(commands, work_dir, f"{report_dir}/report.md, 'Commands that produced the study'")
    print(f"PASS: the report's {len(commands)} commands, as printed: " + " | ".join(commands))


if __name__ == "__main__":
    main()
