#!/usr/bin/env python3
"""The C++ sources' shape, checked: no function body over 80 lines, no source file over 600
lines (700 under tests/), except the offenders listed in tests/code_shape_known.txt.

Usage: check_code_shape.py [ROOT]               check the repository at ROOT (default: this
                                                script's ../) against its known list
       check_code_shape.py --list [ROOT]        print every offender with its length
       check_code_shape.py --write-known [ROOT] rewrite tests/code_shape_known.txt from the tree
                                                (after files move, or once offenders are split)
       check_code_shape.py --self-test          the scanner and the ratchet on crafted C++ in a
                                                temporary folder

Scanned: every *.cpp, *.hpp, *.h and *.cu under comm/, devices/, models/, trainer/, results/,
prediction/ and tests/, skipping build* folders and dot-folders.

Rules:
- function: a function body is at most FUNCTION_MAX_LINES lines, counted from the line of its
  opening brace to the line of its closing brace, both included. A function is a free function,
  a member function (defined in its class or outside it), a constructor or a test body
  (TEST(Suite, Name) { ... }); lambdas, local classes and every block inside a function count
  as part of it. A lambda stored in a variable at namespace or class scope is a function named
  after that variable.
- file: a source file has at most FILE_MAX_LINES lines (TESTS_FILE_MAX_LINES under tests/).
- ratchet: tests/code_shape_known.txt lists the offenders to be split, one `path:function` or
  `path` per line (a name twice where two overloads both offend). The check fails on an offender
  the list lacks, and on a list entry that is not an offender (so the list shrinks as code is
  split). --write-known writes the list from the tree.

The scanner (scan_functions) works in two passes:
1. tokens(): C++ text to tokens, skipping comments, string and character literals (raw strings
   R"delim( ... )delim" included; a digit separator 1'000 is no character literal) and
   preprocessor lines (with their backslash continuations). Of each #if / #elif / #else chain
   one branch is read, so braces that a chain repeats in each branch count once; a file is read
   twice, with each chain's first branch and with its last, and the functions of both readings
   are kept.
2. scan_functions(): a stack of scopes (namespace, class, function, other). At namespace or
   class scope the tokens since the last `;`, `{` or `}` are the "head" of what comes; a `{`
   there is classified from its head (classify()): a function body when the head ends with a
   parameter list `name(...)` followed only by const, noexcept, override, final, `&`, `&&`,
   attributes, a trailing return type `-> T` or a constructor's initializer list
   `: a(x), b{y}`; a class body after class/struct/union; a namespace body after namespace or
   extern "C"; otherwise a brace initializer or enum body ("other"). Inside a function or other
   scope braces are only counted, so if/for/while/switch/catch blocks and nested lambdas are
   part of the function that holds them.
"""
import collections
import os
import re
import sys
import tempfile

FUNCTION_MAX_LINES = 80
FILE_MAX_LINES = 600
TESTS_FILE_MAX_LINES = 700
SOURCE_DIRS = ["comm", "devices", "models", "trainer", "results", "prediction", "tests"]
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cu")
KNOWN_LIST = "tests/code_shape_known.txt"

KNOWN_HEADER = """\
# Code-shape offenders: functions longer than {fn} lines (path:function) and source files over
# {file} lines, {tests} under tests/ (path). Each one is to be split into smaller pieces; this
# list may only shrink. tests/check_code_shape.py fails on an offender missing here and on an
# entry here that is not an offender (remove the entry once its code is split).
# Regenerate from the tree after files move or after a split (never to admit a new offender):
#   python3 tests/check_code_shape.py --write-known
""".format(fn=FUNCTION_MAX_LINES, file=FILE_MAX_LINES, tests=TESTS_FILE_MAX_LINES)


class ScanError(Exception):
    """The scanner could not follow a file's braces (reported with file and line)."""


# ---------------------------------------------------------------- pass 1: tokens

Token = collections.namedtuple("Token", "text line")

IDENT_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# Longest first, so "->" is one token and not "-" then ">".
PUNCTUATORS = ["...", "->*", "<=>", "::", "->", "&&", "||", "<<", ">>", "<=", ">=", "==", "!=",
               "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*"]
RAW_PREFIXES = {"R", "LR", "uR", "UR", "u8R"}
FIRST_BRANCH, LAST_BRANCH = "first", "last"
LITERAL = "<literal>"  # the one token a string or character literal becomes


def skip_quoted(text, i, quote):
    """The index after the literal whose opening quote is at text[i]."""
    n = len(text)
    j = i + 1
    while j < n and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return j + 1


def skip_directive(text, i):
    """The index of the newline ending the preprocessor line that starts at text[i] (a line
    ending in a backslash goes on; a /* comment */ in it is skipped whole)."""
    n = len(text)
    while i < n:
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            return n if end < 0 else end
        elif text[i] == "\\" and text.startswith("\n", i + 1):
            i += 2
        elif text.startswith("\\\r\n", i):
            i += 3
        elif text[i] == "\n":
            return i
        else:
            i += 1
    return n


def tokens(text, branch=FIRST_BRANCH, chains=None):
    """The C++ tokens of text (identifiers, numbers, punctuators; each literal as LITERAL),
    with their line numbers; and for each #if chain (by its order in text) its number of
    branches. Of each chain one branch is read: the first, or with branch=LAST_BRANCH the last,
    chains being the numbers of branches that a first reading returned."""
    out = []
    n = len(text)
    i = 0
    line = 1
    line_start = True  # only whitespace so far on this line: a '#' opens a directive
    # The #if chains open at this point: [ordinal, branch being read, branch to read].
    conditionals = []
    ordinal = 0
    sizes = {}

    def skipping():
        return any(c[1] != c[2] for c in conditionals)

    def emit(tok):
        if not skipping():
            out.append(Token(tok, line))

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "#" and line_start:
            end = skip_directive(text, i)
            directive = re.match(r"#\s*(\w*)", text[i:end]).group(1)
            if directive in ("if", "ifdef", "ifndef"):
                wanted = 0 if branch == FIRST_BRANCH or chains is None else chains.get(ordinal, 1) - 1
                conditionals.append([ordinal, 0, wanted])
                ordinal += 1
            elif directive in ("elif", "else", "elifdef", "elifndef") and conditionals:
                conditionals[-1][1] += 1
            elif directive == "endif" and conditionals:
                done = conditionals.pop()
                sizes[done[0]] = done[1] + 1
            line += text.count("\n", i, end)
            i = end
            continue
        line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif c == '"':
            end = skip_quoted(text, i, '"')
            emit(LITERAL)
            i = end
        elif c == "'":
            end = skip_quoted(text, i, "'")
            emit(LITERAL)
            i = end
        elif c in IDENT_CHARS:
            j = i
            while j < n and text[j] in IDENT_CHARS:
                j += 1
            word = text[i:j]
            if word in RAW_PREFIXES and text.startswith('"', j):
                # A raw string: R"delim( ... )delim", which may hold quotes, braces and lines.
                open_paren = text.find("(", j)
                delimiter = text[j + 1:open_paren]
                close = text.find(")" + delimiter + '"', open_paren)
                end = n if close < 0 else close + len(delimiter) + 2
                emit(LITERAL)
                line += text.count("\n", i, end)
                i = end
            elif word[0].isdigit() and text.startswith("'", j):
                # A digit separator (1'000'000): the number goes on.
                k = j
                while k < n and (text[k] in IDENT_CHARS or text[k] in "'."):
                    k += 1
                emit(text[i:k])
                i = k
            else:
                emit(word)
                i = j
        else:
            for p in PUNCTUATORS:
                if text.startswith(p, i):
                    emit(p)
                    i += len(p)
                    break
            else:
                emit(c)
                i += 1
    return out, sizes


# ---------------------------------------------------------------- pass 2: scopes

# Words before a '(' that make it no parameter list.
NOT_FUNCTION_NAMES = {
    "if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "alignas", "decltype",
    "noexcept", "throw", "typeid", "static_assert", "__attribute__", "__declspec", "requires",
    "new", "delete", "co_await", "co_return", "co_yield", "static_cast", "const_cast",
    "reinterpret_cast", "dynamic_cast", "explicit",
}
# What may follow a function's parameter list before its body.
QUALIFIERS = {"const", "volatile", "&", "&&", "mutable", "override", "final", "try", "constexpr",
              "consteval"}
QUALIFIERS_WITH_ARGUMENT = {"noexcept", "throw", "__attribute__", "alignas", "__declspec"}
CLASS_KEYS = {"class", "struct", "union"}
BRACE_GROUP = "{...}"  # a brace initializer inside a head, as one item


class Group:
    """A bracketed part of a head, (...) or [...], as one item."""

    def __init__(self, open_, inner):
        self.open = open_
        self.inner = inner

    def text(self):
        close = {"(": ")", "[": "]"}[self.open]
        return self.open + " ".join(self.inner) + close

    def __repr__(self):
        return self.text()


def is_identifier(item):
    return isinstance(item, str) and bool(re.match(r"[A-Za-z_]\w*$", item))


def group_items(head):
    """The head's tokens with each balanced (...) and [...] collapsed into a Group."""
    items, stack = [], []
    for tok in head:
        if tok in ("(", "["):
            stack.append((tok, items))
            items = []
        elif tok in (")", "]") and stack:
            open_, outer = stack.pop()
            outer.append(Group(open_, [str(x) for x in items]))
            items = outer
        else:
            items.append(tok)
    while stack:  # unbalanced: keep what was read
        open_, outer = stack.pop()
        items = outer + [open_] + items
    return items


def join_items(items):
    """Items as one name: a space only between two words (operator bool), none elsewhere."""
    out = ""
    for item in items:
        text = item.text() if isinstance(item, Group) else item
        if out and is_identifier(text) and (out[-1].isalnum() or out[-1] == "_"):
            out += " "
        out += text
    return out


def skip_back_angles(items, j):
    """Index of the '<' matching the '>' or '>>' at items[j], or -1."""
    depth = 0
    while j >= 0:
        item = items[j]
        if item == ">":
            depth += 1
        elif item == ">>":
            depth += 2
        elif item == "<":
            depth -= 1
            if depth == 0:
                return j
        elif item in (";", "{", "}"):
            return -1
        j -= 1
    return -1


def declarator_name(items, i):
    """The name of the function whose parameter list is items[i], or None where items[i] is
    not a parameter list (a call inside an attribute, a cast, a keyword's argument)."""
    # operator==, operator(), operator bool, operator new: from 'operator' to the list.
    for k in range(max(0, i - 3), i):
        if items[k] == "operator":
            start = k
            while start >= 2 and items[start - 1] == "::" and is_identifier(items[start - 2]):
                start -= 2
            return join_items(items[start:i])
    j = i - 1
    if j < 0:
        return None
    if items[j] in (">", ">>"):  # f<int>(...): a specialisation
        j = skip_back_angles(items, j) - 1
        if j < 0:
            return None
    if not is_identifier(items[j]) or items[j] in NOT_FUNCTION_NAMES:
        return None
    start = j
    if start >= 1 and items[start - 1] == "~":
        start -= 1
    while start >= 2 and items[start - 1] == "::":
        prev = start - 2
        if items[prev] in (">", ">>"):
            prev = skip_back_angles(items, prev) - 1
        if prev < 0 or not is_identifier(items[prev]):
            break
        start = prev
    name = join_items(items[start:i])
    if start == 0 and re.match(r"[A-Z][A-Z0-9_]*$", name) and items[i].inner:
        # A macro that defines a function, TEST(Suite, Name): named with its arguments.
        name += "(" + "".join(items[i].inner) + ")"
    return name


def trailing_kind(rest):
    """What follows a parameter list: 'body' (the next '{' is the body), 'init' (the next '{' is
    a member's brace initializer in a constructor's initializer list) or None (no function)."""
    k = 0
    while k < len(rest):
        item = rest[k]
        if item in QUALIFIERS or (isinstance(item, Group) and item.open == "["):
            k += 1
        elif item in QUALIFIERS_WITH_ARGUMENT:
            k += 2 if k + 1 < len(rest) and isinstance(rest[k + 1], Group) else 1
        else:
            break
    if k == len(rest):
        return "body"
    if rest[k] in ("->", "requires"):
        return "body"
    if rest[k] == ":":
        last = rest[-1]
        if is_identifier(last) or last in (">", ">>"):
            return "init"  # Ctor() : member{ ... the '{' opens member's initializer
        if last == ":" or last == ",":
            return None
        return "body"
    return None


def classify(head):
    """('function', name) | ('init', None) | ('class', name) | ('namespace', None) |
    ('other', None) for a '{' at namespace or class scope after the tokens of head."""
    if head.count("(") > head.count(")"):
        return "other", None  # inside a parameter list's default argument
    items = group_items(head)
    # A lambda kept in a variable: [static] auto name = [captures](...) ... {
    for k, item in enumerate(items):
        if item == "=" and k + 1 < len(items) and isinstance(items[k + 1], Group) and items[k + 1].open == "[":
            name = items[k - 1] if k >= 1 and is_identifier(items[k - 1]) else "lambda"
            return "function", name
    for i, item in enumerate(items):
        if not (isinstance(item, Group) and item.open == "("):
            continue
        name = declarator_name(items, i)
        if name is None:
            continue
        kind = trailing_kind(items[i + 1:])
        if kind == "body":
            return "function", name
        if kind == "init":
            return "init", None
    # Past any template<...> prefix, attributes and access labels: the first keyword says.
    words = [x for x in items if isinstance(x, str)]
    if "namespace" in words or (words[:1] == ["extern"] and LITERAL in words):
        return "namespace", None
    if "enum" in words:
        return "other", None
    depth = 0
    for k, item in enumerate(items):
        if item == "<":
            depth += 1
        elif item == ">":
            depth -= 1
        elif item == ">>":
            depth -= 2
        elif depth <= 0 and item in CLASS_KEYS:
            rest = [x for x in items[k + 1:] if is_identifier(x) and x not in ("final", "alignas")]
            return "class", rest[0] if rest else "(anonymous)"
    return "other", None


Function = collections.namedtuple("Function", "name line end length")


def scan_functions(text, path="<text>"):
    """The functions defined in C++ text: name (with its enclosing classes), the lines of the
    body's opening and closing braces, and its length in lines. Read twice, once with the first
    branch of each #if chain and once with the last (#else), so a function in either is found;
    one found both times (a function around an #if) keeps the longer of its two lengths."""
    first, chains = tokens(text, FIRST_BRANCH)
    found = {}
    for toks in (first, tokens(text, LAST_BRANCH, chains)[0]):
        for fn in scan_tokens(toks, path):
            key = (fn.name, fn.line)
            if key not in found or fn.length > found[key].length:
                found[key] = fn
    return sorted(found.values(), key=lambda fn: (fn.line, fn.name))


def scan_tokens(toks, path):
    """scan_functions on the tokens of one reading of a file."""
    found = []
    # Each scope: [kind, name, line of '{', depth of nested braces, keep_head]
    stack = [["namespace", None, 0, 0, False]]
    head = []
    saved_heads = []  # the head to go on with after an 'other' block that sits inside it
    for tok in toks:
        top = stack[-1]
        if top[0] in ("function", "other"):
            if tok.text == "{":
                top[3] += 1
            elif tok.text == "}":
                top[3] -= 1
                if top[3] == 0:
                    stack.pop()
                    if top[0] == "function":
                        classes = [s[1] for s in stack if s[0] == "class"]
                        name = "::".join(classes + [top[1]])
                        found.append(Function(name, top[2], tok.line, tok.line - top[2] + 1))
                        head = []
                    elif top[4]:
                        head = saved_heads.pop() + [BRACE_GROUP]
                    else:
                        head = []
            continue
        if tok.text == ";":
            head = []
        elif tok.text == "{":
            kind, name = classify(head)
            if kind in ("init", "other"):
                saved_heads.append(head)
                stack.append(["other", None, tok.line, 1, True])
            elif kind == "function":
                stack.append(["function", name, tok.line, 1, False])
            else:
                stack.append([kind, name, tok.line, 0, False])
                head = []
        elif tok.text == "}":
            if len(stack) == 1:
                raise ScanError(f"{path}:{tok.line}: a '}}' closes nothing")
            stack.pop()
            head = []
        else:
            head.append(tok.text)
    if len(stack) > 1:
        raise ScanError(f"{path}:{stack[-1][2]}: this '{{' is never closed")
    return found


# ---------------------------------------------------------------- the tree

def rel(root, path):
    return os.path.relpath(path, root).replace(os.sep, "/")


def source_files(root):
    for top in SOURCE_DIRS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("build", ".")))
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(folder, name)


def file_limit(name):
    return TESTS_FILE_MAX_LINES if name.startswith("tests/") else FILE_MAX_LINES


def offenders(root):
    """(offenders, scan errors): each offender as (key, description), key being the known
    list's `path:function` or `path`."""
    found, errors = [], []
    for path in source_files(root):
        name = rel(root, path)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > file_limit(name):
            found.append((name, f"{name}: {lines} lines, over the file limit of {file_limit(name)}"))
        try:
            functions = scan_functions(text, name)
        except ScanError as e:
            errors.append(f"{e} (the scanner lost track of the braces)")
            continue
        for fn in functions:
            if fn.length > FUNCTION_MAX_LINES:
                found.append((f"{name}:{fn.name}",
                              f"{name}:{fn.line}: {fn.name} is {fn.length} lines, over the function limit of {FUNCTION_MAX_LINES}"))
    return found, errors


def read_known(root):
    """The known list's entries, each with its line number."""
    path = os.path.join(root, KNOWN_LIST)
    if not os.path.exists(path):
        return []
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.strip()
            if line and not line.startswith("#"):
                entries.append((line, number))
    return entries


def write_known(root, quiet=False):
    found, errors = offenders(root)
    for error in errors:
        print(f"FAIL: {error}")
    if errors:
        print(f"FAILED: {len(errors)} files could not be scanned; {KNOWN_LIST} left as it was")
        return 1
    keys = sorted(key for key, _ in found)
    with open(os.path.join(root, KNOWN_LIST), "w", encoding="utf-8") as f:
        f.write(KNOWN_HEADER)
        for key in keys:
            f.write(key + "\n")
    if not quiet:
        print(f"PASSED: wrote {KNOWN_LIST} with {len(keys)} offenders")
    return 0


def check(root):
    """The problems: offenders not in the known list, entries that are not offenders, files the
    scanner could not follow; and the number of offenders."""
    found, errors = offenders(root)
    problems = list(errors)
    known = read_known(root)
    unlisted = collections.Counter(key for key, _ in found)
    for key, number in known:
        if unlisted[key] > 0:
            unlisted[key] -= 1
        else:
            problems.append(f"{KNOWN_LIST}:{number}: {key} is not an offender: remove it from the list")
    for key, description in found:
        if unlisted[key] > 0:
            unlisted[key] -= 1
            problems.append(f"{description}; split it (it is not in {KNOWN_LIST})")
    return problems, len(found)


# ---------------------------------------------------------------- self-test

def body_lines(count):
    return "".join(f"  x += {k};\n" for k in range(count))


# Each case: a file's text and exactly the functions the scanner must find in it, as
# (name, line of '{', length).
SCANNER_CASES = {
    "81 lines": ("int long_one(int x) {\n" + body_lines(79) + "}\n",
                 [("long_one", 1, 81)]),
    "80 lines": ("namespace a {\nint fits(int x)\n{\n" + body_lines(78) + "}\n}  // namespace a\n",
                 [("fits", 3, 80)]),
    "braces in comments, strings, raw strings and directives": (
        "#include <string>\n"                                  # 1
        "#define OPEN {\n"                                     # 2
        "#define MANY(x) \\\n  { x }\n"                        # 3, 4
        "const char* f(int x) {  // }}\n"                      # 5
        "  /* { */ const char* a = \"}{\\\"}\";\n"             # 6
        "  char c = '}'; char d = '\\''; char e = '{';\n"      # 7
        "  const char* r = R\"(})\";\n"                        # 8
        "  const char* s = R\"=[( )\" } )=[\";\n"              # 9
        "  const char* t = u8R\"x(\n{\n{\n)x\";\n"             # 10-13
        "  int n = 1'000'000;\n"                               # 14
        "  return \"{\";\n"                                    # 15
        "}\n"                                                  # 16
        "int g() { return '{'; }\n",                           # 17
        [("f", 5, 12), ("g", 17, 1)]),
    "blocks inside a function": (
        "void run(std::vector<int> v) {\n"                     # 1
        "  if (v.empty()) {\n    return;\n  }\n"               # 2-4
        "  for (int x : v) { while (x) { --x; } }\n"           # 5
        "  switch (v[0]) { case 1: { break; } default: break; }\n"  # 6
        "  try { f(); } catch (const std::exception& e) { g(); }\n"  # 7
        "  auto h = [&](int y) {\n    return y + 1;\n  };\n"   # 8-10
        "  struct Local { int get() const { return 1; } };\n"  # 11
        "}\n",                                                 # 12
        [("run", 1, 12)]),
    "a class body with inline methods": (
        "template <class T>\n"                                 # 1
        "class Box : public Base<T> {\n"                       # 2
        " public:\n"                                           # 3
        "  Box() = default;\n"                                 # 4
        "  T get() const noexcept { return value_; }\n"        # 5
        "  bool operator==(const Box& o) const {\n    return value_ == o.value_;\n  }\n"  # 6-8
        "  void operator()(int x) & { value_ = x; }\n"        # 9
        "  explicit operator bool() const { return true; }\n"  # 10
        "  auto size() const -> std::size_t {\n    return 1;\n  }\n"  # 11-13
        "  struct Inner { void poke() {} };\n"                 # 14
        "  enum class Mode { a, b };\n"                        # 15
        "  std::vector<int> items_{1, 2};\n"                   # 16
        "  T value_{};\n"                                      # 17
        "};\n"                                                 # 18
        "template <class T>\nT Box<T>::twice() const {\n  return value_;\n}\n",  # 19-22
        [("Box::get", 5, 1), ("Box::operator==", 6, 3), ("Box::operator()", 9, 1),
         ("Box::operator bool", 10, 1), ("Box::size", 11, 3), ("Box::Inner::poke", 14, 1),
         ("Box<T>::twice", 20, 3)]),
    "constructors with initializer lists": (
        "Foo::Foo(int a, std::string b)\n"                     # 1
        "    : a_(a), b_{std::move(b)}, c_{}, Base<int>{a} {\n"  # 2
        "  check();\n"                                         # 3
        "}\n"                                                  # 4
        "struct Bar {\n"                                       # 5
        "  Bar(int x) : x_{x}, y_(x) {\n    y_ += 1;\n  }\n"   # 6-8
        "  ~Bar() { x_ = 0; }\n"                               # 9
        "  int x_, y_;\n"                                      # 10
        "};\n",                                                # 11
        [("Foo::Foo", 2, 3), ("Bar::Bar", 6, 3), ("Bar::~Bar", 9, 1)]),
    "namespace-scope initializers, lambdas, macros and conditionals": (
        "namespace {\n"                                        # 1
        "const std::map<std::string, int> kTable = {\n  {\"a\", 1},\n};\n"  # 2-4
        "int x{3};\n"                                          # 5
        "const auto kTwice = [](int v) {\n  return 2 * v;\n};\n"  # 6-8
        "void with_default(std::vector<int> v = {1, 2}) {\n}\n"  # 9-10
        "}  // namespace\n"                                    # 11
        "TEST(Shape, Counts) {\n  EXPECT_EQ(1, 1);\n}\n"       # 12-14
        "extern \"C\" {\nvoid c_api(void) {\n}\n}\n"            # 15-18
        "void guarded() {\n#ifdef FAST\n  if (a) {\n#else\n  if (b) {\n#endif\n    go();\n  }\n}\n",  # 19-27
        [("kTwice", 6, 3), ("with_default", 9, 2), ("TEST(Shape,Counts)", 12, 3),
         ("c_api", 16, 2), ("guarded", 19, 9)]),
    "functions in each branch of an #if chain": (
        "#ifdef DDPSCALE_CUDA\nvoid on_gpu() {\n}\n"                 # 1-3
        "#elif defined(OTHER)\nvoid on_other() { }\n"               # 4-5
        "#else\nvoid on_cpu() {\n  stub();\n}\n#endif\n"          # 6-10
        "#if A\n#if B\nint nested() {\n#endif\n}\n#endif\n",      # 11-16
        [("on_gpu", 2, 2), ("on_cpu", 7, 3), ("nested", 13, 3)]),
}


def write(root, name, text):
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def expect(label, condition, detail):
    print(f"{'ok' if condition else 'FAIL'}: {label}" + ("" if condition else f": {detail}"))
    return condition


def self_test():
    ok = True
    for label, (text, wanted) in SCANNER_CASES.items():
        got = [(fn.name, fn.line, fn.length) for fn in scan_functions(text, label)]
        ok = expect(f"scanner: {label}", got == wanted, f"found {got}, wanted {wanted}") and ok
    try:
        scan_functions("void f() {\n  if (x) {\n}\n", "unbalanced")
        ok = expect("scanner: an unclosed brace is an error", False, "no ScanError") and ok
    except ScanError as e:
        ok = expect("scanner: an unclosed brace is an error", "unbalanced:1:" in str(e), str(e)) and ok

    long_fn = "int long_one(int x) {\n" + body_lines(79) + "}\n"
    fit_fn = "int fits(int x) {\n" + body_lines(78) + "}\n"
    with tempfile.TemporaryDirectory() as root:
        write(root, "trainer/a.cpp", long_fn + fit_fn)
        write(root, "results/big.hpp", "int y;\n" * 601)
        write(root, "tests/test_big.cpp", "int y;\n" * 700)  # tests/ may hold 700 lines
        write(root, "tests/build-x/gen.cpp", long_fn)  # a build folder: not scanned
        write(root, "models/.cache/gen.cpp", long_fn)  # a dot-folder: not scanned
        write(root, "scripts/a.cpp", long_fn)  # outside the scanned folders
        found = sorted(key for key, _ in offenders(root)[0])
        ok = expect("tree: the offenders, exactly", found == ["results/big.hpp", "trainer/a.cpp:long_one"],
                    f"found {found}") and ok
        problems, _ = check(root)
        ok = expect("ratchet: offenders missing from the list fail", len(problems) == 2
                    and all("not in " + KNOWN_LIST in p for p in problems), f"{problems}") and ok
        write_known(root, quiet=True)
        problems, count = check(root)
        ok = expect("ratchet: --write-known's list passes", problems == [] and count == 2, f"{problems}") and ok
        with open(os.path.join(root, KNOWN_LIST), encoding="utf-8") as f:
            listed = f.read()
        ok = expect("ratchet: the list has its header and entries",
                    listed.startswith("# Code-shape offenders") and listed.endswith("results/big.hpp\ntrainer/a.cpp:long_one\n"),
                    listed) and ok
        write(root, "trainer/a.cpp", fit_fn)  # long_one split: its entry is stale
        problems, _ = check(root)
        ok = expect("ratchet: an entry that is not an offender fails",
                    len(problems) == 1 and "trainer/a.cpp:long_one is not an offender" in problems[0], f"{problems}") and ok
        write(root, "trainer/a.cpp", long_fn + long_fn.replace("(int x)", "(double x)"))  # two overloads
        problems, _ = check(root)
        ok = expect("ratchet: a second offender under a listed name fails",
                    len(problems) == 1 and "long_one is 81 lines" in problems[0],
                    f"{problems}") and ok
        write(root, "tests/test_big.cpp", "int y;\n" * 701)
        write(root, "trainer/a.cpp", long_fn + "void broken() {\n")
        problems, _ = check(root)
        ok = expect("tree: a tests/ file over 700 lines and an unscannable file fail",
                    any("tests/test_big.cpp: 701 lines" in p for p in problems)
                    and any("trainer/a.cpp:" in p and "never closed" in p for p in problems), f"{problems}") and ok
    print("PASSED: self-test" if ok else "FAILED: self-test")
    return 0 if ok else 1


# ---------------------------------------------------------------- main

def main(argv):
    args = argv[1:]
    if args == ["--self-test"]:
        return self_test()
    mode = None
    if args and args[0] in ("--list", "--write-known"):
        mode = args.pop(0)
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(__doc__)
        return 2
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    if mode == "--write-known":
        return write_known(root)
    if mode == "--list":
        found, errors = offenders(root)
        for _, description in found:
            print(description)
        for error in errors:
            print(f"FAIL: {error}")
        return 1 if errors else 0
    problems, count = check(root)
    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        print(f"FAILED: {len(problems)} code-shape problems: functions over {FUNCTION_MAX_LINES} lines or files over "
              f"{FILE_MAX_LINES} ({TESTS_FILE_MAX_LINES} under tests/) that {KNOWN_LIST} does not list, or entries "
              "it lists that are not offenders (rules: tests/check_code_shape.py)")
        return 1
    print(f"PASSED: no function over {FUNCTION_MAX_LINES} lines, no file over {FILE_MAX_LINES} "
          f"({TESTS_FILE_MAX_LINES} under tests/) beyond the {count} known offenders in {KNOWN_LIST}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
