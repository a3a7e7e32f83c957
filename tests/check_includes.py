#!/usr/bin/env python3
"""Every quoted include is written from the repository root: "results/store/run_store.hpp",
"trainer/engine/training_session.hpp", never "run_store.hpp" or "engine/training_session.hpp".
One include root for the whole project, so a reader finds any included file from its name
alone, and moving a file breaks its includes at once instead of leaving them to resolve
through a folder's include path.

Usage: check_includes.py [ROOT]         each quoted include in ROOT's C++ and CUDA files (*.cpp,
                                        *.hpp, *.h, *.cu, *.cuh; build and hidden folders skipped) must
                                        name a file relative to ROOT (default: this script's ../)
       check_includes.py --fix [ROOT]   rewrite each include that is not rooted to the one file
                                        of the project whose path ends with it, or, for a file
                                        that moved, with its longest tail that any does (an
                                        error where none or several do), drop repeats, and group
                                        each rewritten file's leading includes: its own header,
                                        the project's (sorted), third-party, the standard
                                        library's
       check_includes.py --self-test    the check and the fix on crafted files, in temporary
                                        folders

Headers generated into the build folder (GENERATED) are exempt.
"""
import os
import re
import sys
import tempfile

# What is not the project's text, and the helpers of a self-test, as the docs check has them.
from check_docs_budget import SKIPPED_DIRS, rel, write

# Written into the build folder at build time, found there through the target's include path.
GENERATED = {
    "git_commit.hpp",  # trainer/process/CMakeLists.txt: the commit the binary was built from
}
SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
ANY_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def source_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(("build", ".")))
        for name in sorted(files):
            if name.endswith(SUFFIXES):
                yield rel(root, os.path.join(folder, name))


def rooted(root, target):
    return target in GENERATED or (not target.startswith(".") and os.path.isfile(os.path.join(root, target)))


def check(root):
    problems = []
    for name in source_files(root):
        with open(os.path.join(root, name), encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                m = INCLUDE_RE.match(line)
                if m and not rooted(root, m.group(1)):
                    problems.append(f"{name}:{number}: #include \"{m.group(1)}\" is not a path from the repository root")
    return problems


# ---------------------------------------------------------------- fix

def resolve(files, target):
    """The one project file whose path is target or ends with /target; for a file that moved
    ("results/run_store.hpp" now in results/store/), with target's shorter tails, down to the
    file name, the longest that any file's path ends with."""
    parts = [p for p in target.split("/") if p not in ("", ".", "..")]
    for k in range(len(parts)):
        tail = "/".join(parts[k:])
        found = [f for f in files if f == tail or f.endswith("/" + tail)]
        if len(found) == 1:
            return found[0]
        if found:
            raise LookupError(f"#include \"{target}\" matches {len(found)} files: {', '.join(found)}")
    raise LookupError(f"#include \"{target}\" matches no file")


def include_group(name, line):
    """0 own header, 1 the project's, 2 third-party and system, 3 the standard library's."""
    quote, target = ANY_INCLUDE_RE.match(line).groups()
    if quote == '"':
        own = os.path.splitext(name)[0]
        return 0 if name.endswith((".cpp", ".cu")) and os.path.splitext(target)[0] == own else 1
    return 2 if "/" in target or "." in target else 3


def group_leading_includes(name, lines):
    """lines with the first run of #include and blank lines regrouped, a blank line between
    groups; a run broken by anything else ends there. The project's headers are sorted (each is
    self-contained); the others keep their order, which a system header may need."""
    start = next((i for i, line in enumerate(lines) if ANY_INCLUDE_RE.match(line)), None)
    if start is None:
        return lines
    end = start
    while end < len(lines) and (ANY_INCLUDE_RE.match(lines[end]) or not lines[end].strip()):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    groups = [[], [], [], []]
    for line in lines[start:end]:
        if line.strip():
            groups[include_group(name, line)].append(line)
    groups[1].sort(key=lambda line: ANY_INCLUDE_RE.match(line).group(2))
    block = []
    for group in groups:
        if group:
            block += (["\n"] if block else []) + group
    return lines[:start] + block + lines[end:]


def fix(root):
    files = list(source_files(root))
    errors, changed = [], []
    for name in files:
        path = os.path.join(root, name)
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        out, seen, touched = [], set(), False
        for number, line in enumerate(lines, start=1):
            m = INCLUDE_RE.match(line)
            if m:
                target = m.group(1)
                if not rooted(root, target):
                    try:
                        line = line[:m.start(1)] + resolve(files, target) + line[m.end(1):]
                        touched = True
                    except LookupError as e:
                        errors.append(f"{name}:{number}: {e}")
                key = INCLUDE_RE.match(line).group(1)
                if key in seen:
                    touched = True
                    continue
                seen.add(key)
            out.append(line)
        if touched:
            out = group_leading_includes(name, out)
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(out)
            changed.append(name)
    return changed, errors


# ---------------------------------------------------------------- self-test

def read(root, name):
    with open(os.path.join(root, name), encoding="utf-8") as f:
        return f.read()


def good_repository(root):
    write(root, "lib/store/run_store.hpp", "#pragma once\n#include <string>\n")
    write(root, "lib/store/run_store.cpp", "#include \"lib/store/run_store.hpp\"\n\n#include <vector>\n")
    write(root, "app/engine/session.hpp", "#pragma once\n#include \"lib/store/run_store.hpp\"\n")
    write(root, "app/launch/report.cpp", "#include \"git_commit.hpp\"  // generated\n#include <hdf5.h>\n")
    write(root, "tests/test_store.cpp", "#include \"app/engine/session.hpp\"\n#include <gtest/gtest.h>\n")
    write(root, "build/gen/x.cpp", "#include \"not_here.hpp\"\n")  # a build folder: not checked
    write(root, "notes.md", "#include \"bare.hpp\"\n")  # not a source file


def expect(label, ok, detail):
    print(("ok: " if ok else "FAIL: ") + f"{label}: {detail}")
    return ok


def self_test():
    ok = True
    with tempfile.TemporaryDirectory() as root:
        good_repository(root)
        problems = check(root)
        ok = expect("a rooted repository passes", not problems, problems or "no problems") and ok

    bad_cases = [
        ("a bare include", "tests/test_store.cpp", "#include <gtest/gtest.h>\n#include \"run_store.hpp\"\n",
         "tests/test_store.cpp:2: #include \"run_store.hpp\" is not a path"),
        ("a folder-relative include", "app/launch/main.cpp", "#include \"engine/session.hpp\"\n",
         "app/launch/main.cpp:1: #include \"engine/session.hpp\" is not a path"),
        ("a relative include", "app/engine/step.hpp", "#pragma once\n#include \"../launch/x.hpp\"\n",
         "app/engine/step.hpp:2: #include \"../launch/x.hpp\" is not a path"),
        ("an include of nothing", "lib/store/run_record.cpp", "#include \"lib/store/run_record.hpp\"\n",
         "lib/store/run_record.cpp:1: #include \"lib/store/run_record.hpp\" is not a path"),
        ("an indented include in a CUDA file", "lib/k.cuh", "#if 1\n  #  include \"session.hpp\"\n#endif\n",
         "lib/k.cuh:2: #include \"session.hpp\" is not a path"),
    ]
    for label, name, text, needle in bad_cases:
        with tempfile.TemporaryDirectory() as root:
            good_repository(root)
            write(root, name, text)
            hits = [p for p in check(root) if needle in p]
            ok = expect(label, bool(hits), hits[0] if hits else f"no problem naming {needle!r}") and ok

    with tempfile.TemporaryDirectory() as root:
        good_repository(root)
        write(root, "app/engine/step.hpp", "#pragma once\n")
        write(root, "app/engine/session.cpp",
              "#include <vector>\n#include <torch/torch.h>\n\n#include \"session.hpp\"\n#include \"store/run_store.hpp\"\n"
              "#include \"app/step.hpp\"\n"
              "#include \"engine/session.hpp\"\n\nint x;\n#include \"run_store.hpp\"\n")
        changed, errors = fix(root)
        want = ("#include \"app/engine/session.hpp\"\n\n#include \"app/engine/step.hpp\"\n#include \"lib/store/run_store.hpp\"\n\n#include <torch/torch.h>\n\n"
                "#include <vector>\n\nint x;\n")
        got = read(root, "app/engine/session.cpp")
        ok = expect("--fix roots, drops repeats and groups", got == want and not errors and check(root) == [],
                    f"changed {changed}" if got == want else f"wrote {got!r}, errors {errors}") and ok
        ok = expect("--fix leaves rooted files alone", "lib/store/run_store.cpp" not in changed, f"changed {changed}") and ok

    with tempfile.TemporaryDirectory() as root:
        good_repository(root)
        write(root, "app/store/run_store.hpp", "#pragma once\n")
        write(root, "app/a.cpp", "#include \"run_store.hpp\"\n")
        _, errors = fix(root)
        hits = [e for e in errors if e.startswith("app/a.cpp:1:") and "matches 2 files" in e]
        ok = expect("--fix refuses an ambiguous include", bool(hits) and read(root, "app/a.cpp") == "#include \"run_store.hpp\"\n",
                    hits[0] if hits else f"errors {errors}") and ok

    print("PASSED: self-test" if ok else "FAILED: self-test")
    return 0 if ok else 1


def main(argv):
    args = argv[1:]
    if args == ["--self-test"]:
        return self_test()
    do_fix = args[:1] == ["--fix"]
    args = args[1:] if do_fix else args
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print(__doc__)
        return 2
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    if do_fix:
        changed, errors = fix(root)
        for name in changed:
            print(f"rewrote {name}")
        for error in errors:
            print(f"FAIL: {error}")
        return 1 if errors else 0
    problems = check(root)
    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        print(f"{len(problems)} includes not written from the repository root (tests/check_includes.py --fix "
              "rewrites them)")
        return 1
    print("PASSED: every quoted include is a path from the repository root")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
