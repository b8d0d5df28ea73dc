#!/usr/bin/python3
"""check_registered_tests.py both ways on ctest json-v1 documents and file lists made here: a test
without the skip guard, with part of it, or with a property that skips or ignores its exit status
is named with the CMake line that registered it; a guarded test passes; a GoogleTest file or a
test script no registered test runs is named. Every failure is listed."""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_registered_tests as c  # noqa: E402

T = "tests" + "/"  # spelled so that the doc-path check does not take these names for citations
failures = []
GUARD = ["\\[  SKIPPED \\]", "YOU HAVE [0-9]+ DISABLED TESTS?", "\\[==========\\] 0 tests from", "[( ]skipped=[0-9]",
         "Ran 0 tests"]


def doc(*tests):
    """A json-v1 document: each test (name, properties, via harness_add_test?) registered at
    line index + 1 of the CMakeLists.txt of folder tests/unit/x, through the top-level
    harness_add_test when flagged."""
    graph = {"commands": ["add_test", "harness_add_test"], "files": ["CMakeLists.txt", f"{T}unit/x/CMakeLists.txt"],
             "nodes": []}
    out = []
    for i, (name, properties, via_function) in enumerate(tests):
        graph["nodes"].append({"file": 1, "line": i + 1, "command": 1 if via_function else 0})
        node = len(graph["nodes"]) - 1
        if via_function:
            graph["nodes"].append({"file": 0, "line": 92, "command": 0, "parent": node})
            node = len(graph["nodes"]) - 1
        out.append({"name": name, "backtrace": node, "command": ["/b/" + name],
                    "properties": [{"name": k, "value": v} for k, v in properties.items()]})
    return {"backtraceGraph": graph, "tests": out}


def expect(name, got, want):
    if got != want:
        failures.append(f"{name}:\n  got  {got}\n  want {want}")


d = doc(("guarded", {"FAIL_REGULAR_EXPRESSION": GUARD, "LABELS": ["unit"]}, True),
        ("plain_unguarded", {"LABELS": ["unit"]}, False),
        ("gtest_only", {"FAIL_REGULAR_EXPRESSION": "\\[  SKIPPED \\]"}, False),
        ("skips_on_77", {"FAIL_REGULAR_EXPRESSION": GUARD, "SKIP_RETURN_CODE": "77"}, False),
        ("passes_on_text", {"FAIL_REGULAR_EXPRESSION": GUARD, "PASS_REGULAR_EXPRESSION": ["ok"]}, False),
        ("off", {"FAIL_REGULAR_EXPRESSION": GUARD, "DISABLED": True}, False))
all_kinds = ", ".join(c.SKIP_OUTPUTS)
expect("guard problems", c.guard_problems(d), [
    f"plain_unguarded ({T}unit/x/CMakeLists.txt:2): no skip guard for {all_kinds} "
    "(FAIL_REGULAR_EXPRESSION \"${HARNESS_SKIP_GUARD}\", top-level CMakeLists.txt)",
    f"gtest_only ({T}unit/x/CMakeLists.txt:3): no skip guard for a disabled GoogleTest test, a GoogleTest binary "
    "that ran no test, a Python unittest skip, a Python unittest run of no test "
    "(FAIL_REGULAR_EXPRESSION \"${HARNESS_SKIP_GUARD}\", top-level CMakeLists.txt)",
    f"skips_on_77 ({T}unit/x/CMakeLists.txt:4): sets SKIP_RETURN_CODE (a skip or a pass that ignores the exit status)",
    f"passes_on_text ({T}unit/x/CMakeLists.txt:5): sets PASS_REGULAR_EXPRESSION (a skip or a pass that ignores the "
    "exit status)",
    f"off ({T}unit/x/CMakeLists.txt:6): sets DISABLED (a skip or a pass that ignores the exit status)",
])
expect("harness_add_test is recognised", [c.by_harness_add_test(d, t) for t in d["tests"]],
       [True, False, False, False, False, False])
# Outputs that are no skip must not trip the guard (a JUnit attribute, a passing summary).
for text in ('<testsuite tests="8" skipped="2">', "[==========] 10 tests from 2 test suites ran.", "Ran 10 tests\n\nOK\n"):
    if any(re.search(r, text) for r in GUARD):
        failures.append(f"the guard matches an output that is no skip: {text!r}")

expect("unregistered", c.unregistered(
    tracked_gtest_files=[f"{T}unit/a/a_test.cpp", f"{T}unit/a/dropped_test.cpp", f"{T}unit/r/rel_test.cpp",
                         f"{T}unit/r/abs_test.cpp"],
    tracked_scripts=[f"{T}unit/b/test_b.py", f"{T}unit/b/check_b.py", f"{T}unit/c/gone_test.sh"],
    linked_files={f"{T}unit/a/a_test.cpp", f"{T}common/helper.hpp", f"../../../../{T}unit/r/rel_test.cpp",
                  f"/src/{T}unit/r/abs_test.cpp", f"/src/other{T}unit/a/dropped_test.cpp"},
    commands=[["/usr/bin/python3", f"/src/{T}unit/b/test_b.py"], ["/usr/bin/python3", f"/src/{T}unit/b/check_b.py", "/src"]]),
    [f"{T}unit/a/dropped_test.cpp: defines GoogleTest tests, but no registered ctest test links it (dropped from CMake?)",
     f"{T}unit/c/gone_test.sh: no registered ctest test runs it (dropped from CMake?)"])
expect("script patterns", [bool(c.SCRIPT_TEST.search(p)) for p in
                           (f"{T}unit/b/test_b.py", f"{T}unit/b/check_b.py", f"{T}unit/p/package_test.sh",
                            f"{T}unit/analysis/cases_json_check.py", f"{T}bench/compile/compile_cpu.py")],
       [True, True, True, False, False])

for f in failures:
    print("FAIL", f)
if failures:
    sys.exit(1)
print("check_registered_tests names unguarded tests, skipping properties and unregistered test sources")
