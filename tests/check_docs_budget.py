#!/usr/bin/env python3
"""The documentation's budget and honesty, checked: each failure names the offending file (and
line) and the rule it breaks.

Usage: check_docs_budget.py [ROOT]      check the repository at ROOT (default: this script's ../)
       check_docs_budget.py --self-test each rule on crafted bad inputs (must fire) and good
                                        inputs (must stay quiet), in temporary folders

Rules:
- size: docs/benchmarks.md at most 400 lines, docs/methodology.md at most 600; docs/ at most
  10 MB (10,000,000 bytes) and 300 files.
- history: documentation and source comments say what is and why, never how it came to be.
  HISTORY_PATTERNS (below) is the word list; it is matched across line breaks. Dates
  (2026-11-23) and commit hashes (7 to 40 hex digits with at least one digit and one letter)
  are history too, except where a figure must name them: docs/benchmarks.md and docs/results/
  (each figure names date, machine, commit and command, by rule) and README.md (which quotes
  figures with their date). Scanned: every *.md outside docs/results/, build folders and
  tests/; the comments (and Python docstrings) of *.cpp, *.hpp, *.h, *.cmake, CMakeLists.txt,
  *.sh and *.py. This script is exempt: it holds the word list.
- links: every relative link [text](path) in docs/*.md, README.md, experiments/README.md and
  scripts/README.md names a file or folder that exists; every scripts/... path those files
  name exists, or is stated as "made by scripts/X at commit C" (git history keeps it).
- specs: experiments/README.md's "Shipped specs" table has one row per sweep spec in
  experiments/ (a YAML file with a `models` key), and its models, runs, launches and
  warm-up + steps columns say what the spec file says (PyYAML reads it).
"""
import os
import re
import sys
import tempfile

BENCHMARKS_MAX_LINES = 400
METHODOLOGY_MAX_LINES = 600
DOCS_MAX_BYTES = 10_000_000
DOCS_MAX_FILES = 300

# Phrases that narrate how something came to be. Words are joined by \s+ so a phrase broken
# over two lines still matches.
HISTORY_PATTERNS = [
    r"no\s+longer(?!\s+than)",
    r"(?<!\bis\s)(?<!\bare\s)(?<!\bbe\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bbeen\s)\bused\s+to\b",
    r"(?:before|after|since|until|as\s+of)\s+commit\b",
    r"this\s+session",
    r"\bsession\s+\d+",
    r"\bissue\s+#?\d+",
    r"\bissue\s+#",
    r"\b(?:is|are|was|has|have)\s+now\b",
    r"\bnow\s+(?:steps|runs|reads|takes|gives|uses|has|does)\b",
    r"\bas\s+before\b",
    r"\b(?:as|than)\s+it\s+did\s+before\b",
    r"\bpreviously\b",
    r"\bformerly\b",
    r"\boriginally\b",
    r"\buntil\s+recently\b",
    r"\bonce\s+(?:accepted|refused|crashed)\b",
    r"\bnot\s+yet\s+run\b",
    r"\bwe\s+(?:changed|fixed|replaced|removed)\b",
    r"\bthe\s+old\s+(?:code|version|behaviou?r|way|format)\b",
    r"\bearlier\s+(?:version|build|builds|code)\b",
    r"\banymore\b",
]
HISTORY_RE = re.compile("|".join(f"(?:{p})" for p in HISTORY_PATTERNS), re.IGNORECASE)
DATE_RE = re.compile(r"(?<![0-9])20\d\d-[01]\d-[0-3]\d(?![0-9])")
HASH_RE = re.compile(r"(?<![0-9A-Za-z_./-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9A-Za-z_])")

# Outputs and other projects' sources that land in a checkout (the .gitignore'd folders,
# hidden ones such as a .venv or a .nccl-tests copy): not this project's text.
SKIPPED_DIRS = {"studies", "out", "bench-out", "reports", "models-out", "node_modules", "__pycache__"}
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cmake", ".sh", ".py")
LINKED_DOCS = ["README.md", "experiments/README.md", "scripts/README.md"]


def rel(root, path):
    return os.path.relpath(path, root).replace(os.sep, "/")


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def walk_files(root):
    for folder, dirs, files in os.walk(root):
        here = rel(root, folder)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(("build", "."))
                         and not (here == "docs" and d == "results"))
        for name in sorted(files):
            yield os.path.join(folder, name)


# ---------------------------------------------------------------- size

def check_size(root):
    problems = []
    for name, limit in (("docs/benchmarks.md", BENCHMARKS_MAX_LINES), ("docs/methodology.md", METHODOLOGY_MAX_LINES)):
        path = os.path.join(root, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                lines = sum(1 for _ in f)
            if lines > limit:
                problems.append(f"{name}: {lines} lines, over its budget of {limit}")
    docs = os.path.join(root, "docs")
    files, size = 0, 0
    for folder, _, names in os.walk(docs):
        for name in names:
            files += 1
            size += os.path.getsize(os.path.join(folder, name))
    if files > DOCS_MAX_FILES:
        problems.append(f"docs/: {files} files, over its budget of {DOCS_MAX_FILES}")
    if size > DOCS_MAX_BYTES:
        problems.append(f"docs/: {size} bytes, over its budget of {DOCS_MAX_BYTES}")
    return problems


# ---------------------------------------------------------------- history

def mask_except(text, spans):
    """text with every character outside spans blanked (newlines kept), so offsets and line
    numbers stay those of the file."""
    keep = bytearray(len(text))
    for start, end in spans:
        keep[start:end] = b"\x01" * (end - start)
    return "".join(c if keep[i] or c == "\n" else " " for i, c in enumerate(text))


def cpp_comment_spans(text):
    spans, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("R\"", i):
            close = text.find(")" + text[i + 2:text.find("(", i)] + "\"", i)
            i = n if close < 0 else close + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            spans.append((i + 2, end))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            spans.append((i + 2, end))
            i = end + 2
        else:
            i += 1
    return spans


def hash_comment_spans(text, docstrings):
    spans = []
    if docstrings:
        for m in re.finditer(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', text, re.DOTALL):
            spans.append((m.start() + 3, m.end() - 3))
    for m in re.finditer(r"(?:^|(?<=\s))#(?![!{#])[^\n]*", text, re.MULTILINE):
        if not any(s <= m.start() < e for s, e in spans):
            spans.append((m.start() + 1, m.end()))
    return spans


def scanned_text(root, path):
    """The part of a file the history rule reads, or None where it reads nothing."""
    name = rel(root, path)
    if name.startswith("tests/") and name.endswith(".md"):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        return None
    if name.endswith(".md"):
        return text
    if name.endswith((".cpp", ".hpp", ".h")):
        return mask_except(text, cpp_comment_spans(text))
    if name.endswith((".cmake", ".sh")) or os.path.basename(name) == "CMakeLists.txt":
        return mask_except(text, hash_comment_spans(text, docstrings=False))
    if name.endswith(".py"):
        return mask_except(text, hash_comment_spans(text, docstrings=True))
    return None


def stamps_allowed(name):
    return name in ("docs/benchmarks.md", "README.md") or name.startswith("docs/results/")


def check_history(root):
    problems = []
    self_name = os.path.abspath(__file__)
    for path in walk_files(root):
        if os.path.abspath(path) == self_name:
            continue
        text = scanned_text(root, path)
        if text is None:
            continue
        name = rel(root, path)
        for m in HISTORY_RE.finditer(text):
            phrase = " ".join(m.group(0).split())
            problems.append(f"{name}:{line_of(text, m.start())}: narrates history (\"{phrase}\")")
        if stamps_allowed(name):
            continue
        for m in DATE_RE.finditer(text):
            problems.append(f"{name}:{line_of(text, m.start())}: a date ({m.group(0)}) outside docs/benchmarks.md and docs/results/")
        for m in HASH_RE.finditer(text):
            problems.append(f"{name}:{line_of(text, m.start())}: a commit hash ({m.group(0)}) outside docs/benchmarks.md and docs/results/")
    return problems


# ---------------------------------------------------------------- links

LINK_RE = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
SCRIPT_RE = re.compile(r"scripts/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.(?:sh|py)\b")


def linked_docs(root):
    docs = os.path.join(root, "docs")
    names = [f"docs/{n}" for n in sorted(os.listdir(docs)) if n.endswith(".md")] if os.path.isdir(docs) else []
    return names + [n for n in LINKED_DOCS if os.path.exists(os.path.join(root, n))]


def check_links(root):
    problems = []
    for name in linked_docs(root):
        path = os.path.join(root, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in LINK_RE.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            target = target.split("#", 1)[0]
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(path), target))):
                problems.append(f"{name}:{line_of(text, m.start())}: broken link to {m.group(1)}")
        flat = " ".join(text.split("\n"))
        for m in SCRIPT_RE.finditer(text):
            script = m.group(0)
            if os.path.exists(os.path.join(root, script)):
                continue
            after = flat[m.end():m.end() + 60]
            if re.match(r"\s+at\s+commit\s+[0-9a-f]{7,40}\b", after):
                continue
            problems.append(f"{name}:{line_of(text, m.start())}: names {script}, which does not exist "
                            "(say \"made by " + script + " at commit C\" if git history keeps it)")
    return problems


# ---------------------------------------------------------------- specs

SPEC_DEFAULTS = {"runs": 5, "warmup": 10, "steps": 100}


def model_name(entry):
    model = entry["model"] if isinstance(entry, dict) else str(entry)
    if model.startswith("torchscript:"):
        model = os.path.basename(model[len("torchscript:"):])
        if model.endswith(".pt"):
            model = model[:-3]
    return model


def spec_table(text):
    """The rows of the table under "## Shipped specs", as lists of cells."""
    start = text.find("## Shipped specs")
    if start < 0:
        return None, None, 0
    lines = text[start:].split("\n")
    first_line = line_of(text, start)
    header, rows = None, []
    for k, line in enumerate(lines[1:], start=1):
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if header is not None and rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
        elif not set(line.replace("|", "").strip()) <= set("-: "):
            rows.append((first_line + k, cells))
    return header, rows, first_line


def plain(cell):
    return cell.replace("`", "").strip()


def check_spec_row(name, spec, cells, where):
    problems = []
    models_cell, runs_cell, launches_cell, steps_cell = cells
    listed = {plain(m) for m in plain(models_cell).split(",") if plain(m)}
    in_spec = {model_name(m) for m in spec.get("models", [])}
    if listed != in_spec:
        problems.append(f"{where}: {name}'s models are {', '.join(sorted(in_spec))}; the table says {', '.join(sorted(listed))}")
    runs = spec.get("runs", SPEC_DEFAULTS["runs"])
    number = re.match(r"\s*(\d+)", plain(runs_cell))
    if not number or int(number.group(1)) != runs:
        problems.append(f"{where}: {name} has {runs} runs per configuration; the table says \"{runs_cell}\"")
    if "launches" in spec:
        number = re.match(r"\s*(\d+)", plain(launches_cell))
        if not number or int(number.group(1)) != spec["launches"]:
            problems.append(f"{where}: {name} has {spec['launches']} launches; the table says \"{launches_cell}\"")
    elif "default" not in launches_cell:
        problems.append(f"{where}: {name} sets no launches (the default); the table says \"{launches_cell}\"")
    top = (spec.get("warmup", SPEC_DEFAULTS["warmup"]), spec.get("steps", SPEC_DEFAULTS["steps"]))
    allowed = {top}
    for override in spec.get("overrides", []) or []:
        if "warmup" in override or "steps" in override:
            allowed.add((override.get("warmup", top[0]), override.get("steps", top[1])))
    stated = {(int(w), int(s)) for w, s in re.findall(r"(\d+)\s*\+\s*(\d+)", plain(steps_cell))}
    if stated != allowed:
        want = "; ".join(f"{w} + {s}" for w, s in sorted(allowed, key=lambda p: p != top))
        problems.append(f"{where}: {name} runs warm-up + steps {want}; the table says \"{steps_cell}\"")
    return problems


def check_specs(root):
    import yaml
    readme = os.path.join(root, "experiments", "README.md")
    if not os.path.exists(readme):
        return []
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    header, rows, table_line = spec_table(text)
    wanted = ["spec", "models", "runs", "launches", "warm-up + steps"]
    if header is None or header[:len(wanted)] != wanted:
        return [f"experiments/README.md:{table_line}: the \"Shipped specs\" table must begin with the columns "
                + " | ".join(wanted)]
    problems, seen = [], set()
    for line, cells in rows:
        where = f"experiments/README.md:{line}"
        name = plain(cells[0])
        seen.add(name)
        path = os.path.join(root, "experiments", name)
        if not os.path.exists(path):
            problems.append(f"{where}: {name} is not in experiments/")
            continue
        with open(path, encoding="utf-8") as f:
            spec = yaml.safe_load(f)
        problems += check_spec_row(name, spec, cells[1:5], where)
    for name in sorted(os.listdir(os.path.join(root, "experiments"))):
        if not name.endswith(".yaml") or name in seen:
            continue
        with open(os.path.join(root, "experiments", name), encoding="utf-8") as f:
            spec = yaml.safe_load(f)
        if isinstance(spec, dict) and "models" in spec:
            problems.append(f"experiments/README.md:{table_line}: the sweep spec {name} has no row in \"Shipped specs\"")
    return problems


CHECKS = [check_size, check_history, check_links, check_specs]


def check_all(root):
    problems = []
    for check in CHECKS:
        problems += check(root)
    return problems


# ---------------------------------------------------------------- self-test

GOOD_SPEC = "name: s\nmodels: [mlp-medium, {model: torchscript:models-out/r/resnet18.pt}]\nbatch_sizes: [8]\n" \
            "world_sizes: [1, 2]\nruns: 6\nlaunches: 3\nwarmup: 3\nsteps: 20\n" \
            "overrides:\n  - {models: [mlp-medium], steps: 40}\n"
GOOD_TABLE = "# Specs\n\n## Shipped specs\n\n| spec | models | runs | launches | warm-up + steps | what |\n" \
             "|---|---|---:|---:|---|---|\n| s.yaml | mlp-medium, resnet18 | 6 | 3 | 3 + 20; mlp-medium 3 + 40 | a study |\n"


def write(root, name, text):
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def good_repository(root):
    write(root, "README.md", "# Tool\n\nMeasured 2026-11-26 at ab12cd3 ([figures](docs/benchmarks.md)).\n")
    write(root, "docs/benchmarks.md", "# Figures\n\n| date | 2026-11-23 |\n| commit | 41f4670 |\n\n"
          "[data](results/x/report.md); made by scripts/gpu/gone.sh at commit 41f4670.\n" + "line\n" * 390)
    write(root, "docs/methodology.md", "# Methodology\n\nEach run is timed; see [figures](benchmarks.md#figures).\n"
          "The histogram is used to pick a bin. The seed study uses 15 runs.\n" + "line\n" * 590)
    write(root, "docs/results/x/report.md", "Measured 2026-11-23, commit e5daaef; used to\nbe slower.\n")
    write(root, "experiments/README.md", GOOD_TABLE)
    write(root, "experiments/s.yaml", GOOD_SPEC)
    write(root, "experiments/networks.yaml", "networks:\n  a: {bandwidth: 1Gb/s}\n")
    write(root, "scripts/run.sh", "#!/usr/bin/env bash\n# Runs the study; ${#names[@]} names.\necho \"no longer in a comment\"\n")
    write(root, "src/a.cpp", "// Buckets fill in reverse order, as PyTorch's reducer does.\n"
          "int seed = 0x9e3779b9; const char* s = \"2026-11-23 no longer\"; /* why: a ring */\n")
    write(root, ".venv/lib/site.py", "# no longer read; measured 2026-11-23\n")  # not the project's text
    write(root, "build/gen.cpp", "// no longer generated\n")
    write(root, "src/a.py", "\"\"\"What a run is.\"\"\"\nx = 'since commit abc1234'  # the median, not the mean\n")


def expect(label, problems, needle):
    hits = [p for p in problems if needle in p]
    if not hits:
        print(f"FAIL: {label}: no problem naming {needle!r}; got {problems}")
        return False
    print(f"ok: {label}: {hits[0]}")
    return True


def self_test():
    ok = True
    with tempfile.TemporaryDirectory() as root:
        good_repository(root)
        problems = check_all(root)
        if problems:
            print(f"FAIL: a good repository gave problems: {problems}")
            ok = False
        else:
            print("ok: a good repository passes every rule")

    bad_cases = [
        ("benchmarks.md over 400 lines", lambda r: write(r, "docs/benchmarks.md", "x\n" * 401), "docs/benchmarks.md: 401 lines"),
        ("methodology.md over 600 lines", lambda r: write(r, "docs/methodology.md", "x\n" * 601), "docs/methodology.md: 601 lines"),
        ("docs/ over 300 files", lambda r: [write(r, f"docs/results/f/{k}.csv", "1\n") for k in range(300)], "files, over its budget of 300"),
        ("docs/ over 10 MB", lambda r: write(r, "docs/results/big.csv", "0" * (DOCS_MAX_BYTES + 1)), "bytes, over its budget"),
        ("history words in a doc, across a line break", lambda r: write(r, "docs/multinode.md", "It no\nlonger refuses.\n"), "docs/multinode.md:1: narrates history (\"no longer\")"),
        ("\"before commit\" in a doc", lambda r: write(r, "docs/own-models.md", "x\n(before\ncommit 7567fac it was)\n"), "docs/own-models.md:2: narrates history"),
        ("\"its first run now steps\"", lambda r: write(r, "docs/arch.md", "its first run now steps at 1.9 ms\n"), "docs/arch.md:1: narrates history (\"now steps\")"),
        ("\"used to\" as history", lambda r: write(r, "docs/arch.md", "The sweep used to run\n"), "narrates history (\"used to\")"),
        ("an issue number", lambda r: write(r, "docs/arch.md", "See issue #59.\n"), "narrates history (\"issue #59\")"),
        ("a date in methodology.md", lambda r: write(r, "docs/methodology.md", "measured 2026-11-24 on an H200\n"), "docs/methodology.md:1: a date (2026-11-24)"),
        ("a commit in methodology.md", lambda r: write(r, "docs/methodology.md", "at\ncommit e5daaef\n"), "docs/methodology.md:2: a commit hash (e5daaef)"),
        ("a date in a C++ comment", lambda r: write(r, "src/b.hpp", "int x;  // measured 2026-11-25\n"), "src/b.hpp:1: a date"),
        ("a commit in a block comment", lambda r: write(r, "src/b.cpp", "/* the layout of\n   3a85ae6 */ int y;\n"), "src/b.cpp:2: a commit hash (3a85ae6)"),
        ("history in a shell comment", lambda r: write(r, "scripts/b.sh", "echo hi  # this session's fix\n"), "scripts/b.sh:1: narrates history (\"this session\")"),
        ("history in a CMake comment", lambda r: write(r, "tests/x.cmake", "# commbench, which once accepted 0\nadd_test()\n"), "tests/x.cmake:1: narrates history (\"once accepted\")"),
        ("history in a folder of the project's own", lambda r: write(r, "tools/y.py", "# no longer\n"), "tools/y.py:1: narrates history"),
        ("history in a Python docstring", lambda r: write(r, "scripts/c.py", "\"\"\"Runs faster than it did before.\"\"\"\n"), "scripts/c.py:1: narrates history"),
        ("a broken link in docs", lambda r: write(r, "docs/own-models.md", "[data](results/gone/report.md)\n"), "docs/own-models.md:1: broken link to results/gone/report.md"),
        ("a broken link in README.md", lambda r: write(r, "README.md", "[m](docs/missing.md#x)\n"), "README.md:1: broken link to docs/missing.md#x"),
        ("a removed script named without its commit", lambda r: write(r, "docs/own-models.md", "Run scripts/gpu/gone.sh.\n"), "names scripts/gpu/gone.sh, which does not exist"),
        ("a spec's runs drift from the table", lambda r: write(r, "experiments/s.yaml", GOOD_SPEC.replace("runs: 6", "runs: 15")), "s.yaml has 15 runs per configuration"),
        ("a spec's launches drift", lambda r: write(r, "experiments/s.yaml", GOOD_SPEC.replace("launches: 3", "launches: 5")), "s.yaml has 5 launches"),
        ("a spec's steps drift", lambda r: write(r, "experiments/s.yaml", GOOD_SPEC.replace("steps: 20", "steps: 60")), "s.yaml runs warm-up + steps 3 + 60"),
        ("an override's steps missing from the table", lambda r: write(r, "experiments/s.yaml", GOOD_SPEC.replace("steps: 40", "steps: 50")), "3 + 50"),
        ("a spec's models drift", lambda r: write(r, "experiments/s.yaml", GOOD_SPEC.replace("mlp-medium,", "mlp-large,")), "s.yaml's models are"),
        ("a spec with no row", lambda r: write(r, "experiments/t.yaml", "models: [gru]\nbatch_sizes: [8]\n"), "the sweep spec t.yaml has no row"),
        ("a row without its spec", lambda r: write(r, "experiments/README.md", GOOD_TABLE + "| u.yaml | gru | 5 | default | 10 + 100 | x |\n"), "u.yaml is not in experiments/"),
        ("a launches default the table misstates", lambda r: write(r, "experiments/s.yaml", GOOD_SPEC.replace("launches: 3\n", "")), "sets no launches"),
    ]
    for label, spoil, needle in bad_cases:
        with tempfile.TemporaryDirectory() as root:
            good_repository(root)
            spoil(root)
            ok = expect(label, check_all(root), needle) and ok
    print("PASSED: self-test" if ok else "FAILED: self-test")
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) > 2:
        print(__doc__)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), ".."))
    problems = check_all(root)
    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        print(f"{len(problems)} problems: docs over budget, narrating history, with broken links or "
              "disagreeing with the specs (rules: tests/check_docs_budget.py)")
        return 1
    print("PASSED: docs within budget, no history narrated, links resolve, specs match experiments/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
