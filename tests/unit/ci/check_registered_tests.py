#!/usr/bin/python3
"""Every test of the tree is registered with ctest, and every registered test carries the skip guard.

From ctest itself (`ctest --show-only=json-v1` on the build tree), never a list kept by hand:
- guard: each registered test's FAIL_REGULAR_EXPRESSION must match what each tool prints for a
  skip, a disabled test or a run of no test (SKIP_OUTPUTS: GoogleTest 1.12, Python 3.11
  unittest), so that such a run fails the ctest test whatever its exit status and however long
  its output (the top-level CMakeLists.txt's HARNESS_SKIP_GUARD); and no test may turn an exit
  status into a skip or ignore it (SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION,
  PASS_REGULAR_EXPRESSION) or be DISABLED;
- registration: every tracked C++ file under tests/ that defines a GoogleTest test is linked
  into a registered test binary (its tests, listed by the binary with --gtest_list_tests, name
  the file), and every tracked test_*.py, check_*.py and *_test.sh under tests/ is on a
  registered test's command line. A test dropped from CMake (its harness_add_test or add_test
  deleted, its source left out of SOURCES, its folder's CMakeLists.txt gone) fails here by name.
Usage: check_registered_tests.py BUILD_DIR SOURCE_DIR; exit 0 when both hold, 1 with one line
per problem, 2 when ctest cannot list the build tree's tests. Needs every test binary built.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# What each tool prints when a test does not run as a pass; the guard must match each.
SKIP_OUTPUTS = {
    "a GoogleTest skip": "[ RUN      ] Suite.Test\n[  SKIPPED ] Suite.Test (0 ms)\n",
    "a disabled GoogleTest test": "[  PASSED  ] 3 tests.\n\n  YOU HAVE 1 DISABLED TEST\n\n",
    "a GoogleTest binary that ran no test": "[==========] 0 tests from 0 test suites ran. (0 ms total)\n",
    "a Python unittest skip": "Ran 4 tests in 0.010s\n\nOK (skipped=1)\n",
    "a Python unittest run of no test": "Ran 0 tests in 0.000s\n\nOK\n",
}
FORBIDDEN = ("SKIP_RETURN_CODE", "SKIP_REGULAR_EXPRESSION", "PASS_REGULAR_EXPRESSION", "DISABLED")
GTEST_DEFINITION = re.compile(r"^\s*(TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\s*\(", re.M)
SCRIPT_TEST = re.compile(r"(^|/)(test_[^/]*\.py|check_[^/]*\.py|[^/]*_test\.sh)$")


def props(test):
    """A test's properties from ctest's json-v1 as {name: value}."""
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def where(doc, test):
    """FILE:LINE of the CMake call that registered `test` (the first frame in a CMakeLists.txt
    under tests/, else the innermost), or '' when ctest gives no backtrace."""
    graph, node = doc.get("backtraceGraph", {}), test.get("backtrace")
    frames = []
    while node is not None:
        n = graph["nodes"][node]
        frames.append((graph["files"][n["file"]], n.get("line", 0)))
        node = n.get("parent")
    for f, line in frames:
        if "/tests/" in f or f.startswith("tests/"):
            return f"{f}:{line}"
    return f"{frames[0][0]}:{frames[0][1]}" if frames else ""


def by_harness_add_test(doc, test):
    """True when the test was registered by harness_add_test (a GoogleTest binary)."""
    graph, node = doc.get("backtraceGraph", {}), test.get("backtrace")
    while node is not None:
        n = graph["nodes"][node]
        if "command" in n and graph["commands"][n["command"]] == "harness_add_test":
            return True
        node = n.get("parent")
    return False


def guard_problems(doc):
    """One line per registered test whose guard misses a kind of skip, or that sets a property
    turning a status into a skip, ignoring it, or disabling the test."""
    out = []
    for t in doc["tests"]:
        p, at = props(t), where(doc, t)
        regexes = p.get("FAIL_REGULAR_EXPRESSION", [])
        regexes = [regexes] if isinstance(regexes, str) else regexes
        missed = [kind for kind, text in SKIP_OUTPUTS.items() if not any(re.search(r, text) for r in regexes)]
        if missed:
            out.append(f"{t['name']} ({at}): no skip guard for {', '.join(missed)} "
                       f"(FAIL_REGULAR_EXPRESSION \"${{HARNESS_SKIP_GUARD}}\", top-level CMakeLists.txt)")
        for name in FORBIDDEN:
            if name in p and p[name] not in (False, "", "0", "OFF"):
                out.append(f"{t['name']} ({at}): sets {name} (a skip or a pass that ignores the exit status)")
    return out


def unregistered(tracked_gtest_files, tracked_scripts, linked_files, commands):
    """One line per tracked test source no registered test runs: GoogleTest files linked into no
    registered binary (linked_files: the paths the binaries name, absolute or relative to where
    they were compiled, so a tracked path matches as the end of one), scripts on no registered
    command line."""
    out = [f"{f}: defines GoogleTest tests, but no registered ctest test links it (dropped from CMake?)"
           for f in sorted(tracked_gtest_files) if not any(l == f or l.endswith("/" + f) for l in linked_files)]
    args = {a for cmd in commands for a in cmd}
    out += [f"{s}: no registered ctest test runs it (dropped from CMake?)"
            for s in sorted(tracked_scripts) if not any(a.endswith("/" + s) or a == s for a in args)]
    return out


def listed_files(binary):
    """The source files of the GoogleTest tests a built binary lists, as their __FILE__ says:
    absolute, or relative to the compiler's directory (ccache's base_dir rewrites them so, and a
    cached object keeps the form of the build that first compiled it)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "list.json")
        r = subprocess.run([binary, "--gtest_list_tests", f"--gtest_output=json:{out}"], capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"{binary} --gtest_list_tests exited {r.returncode}: {r.stderr[-500:]}")
        doc = json.load(open(out))
    return {os.path.normpath(t["file"]) for suite in doc.get("testsuites", []) for t in suite.get("testsuite", [])
            if "file" in t}


def tracked(source_dir):
    """(files under tests/ defining GoogleTest tests, test scripts under tests/), from git."""
    files = subprocess.run(["git", "-C", source_dir, "ls-files", "tests"], capture_output=True, text=True,
                           check=True).stdout.split()
    gtest = [f for f in files if f.endswith(".cpp") and "/fixtures/" not in f
             and GTEST_DEFINITION.search(pathlib.Path(source_dir, f).read_text(errors="replace"))]
    return gtest, [f for f in files if SCRIPT_TEST.search(f) and "/fixtures/" not in f]


def registration_problems(doc, source_dir):
    """unregistered() over the tree, with every harness_add_test binary listing its tests."""
    linked, problems = set(), []
    for t in doc["tests"]:
        if not by_harness_add_test(doc, t):
            continue
        if "command" not in t:
            problems.append(f"{t['name']} ({where(doc, t)}): its binary is not built, so its tests cannot be listed")
            continue
        try:
            linked |= listed_files(t["command"][0])
        except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
            problems.append(f"{t['name']}: its tests cannot be listed: {e}")
    gtest, scripts = tracked(source_dir)
    return problems + unregistered(gtest, scripts, linked, [t.get("command", []) for t in doc["tests"]])


def main(argv):
    if len(argv) != 3:
        print("usage: check_registered_tests.py BUILD_DIR SOURCE_DIR")
        return 2
    r = subprocess.run(["ctest", "--test-dir", argv[1], "--show-only=json-v1"], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"ctest --show-only=json-v1 on {argv[1]} exited {r.returncode}: {r.stderr}")
        return 2
    doc = json.loads(r.stdout)
    problems = guard_problems(doc) + registration_problems(doc, argv[2])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) among {len(doc['tests'])} registered test(s)")
        return 1
    print(f"all {len(doc['tests'])} registered test(s) carry the skip guard; every test source under tests/ is registered")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
