#!/usr/bin/python3
"""Verdict of .ci/run on ctest's JUnit report (ctest --output-junit FILE).

Exit 0 only when the report exists and every test case in it ran and passed. Otherwise prints
each test that failed, was skipped or not run (ctest status "notrun": SKIP_RETURN_CODE, a
missing executable), is disabled, or whose output holds a GoogleTest "[  SKIPPED ]" line (the
tests' FAIL_REGULAR_EXPRESSION already fails those; named here with the GoogleTest test), and
exits 1. Usage: ctest_verdict.py JUNIT_XML
"""
import re
import sys
import xml.etree.ElementTree as ET

GTEST_SKIP = re.compile(r"^\[  SKIPPED \] ([A-Za-z_]\w*\.\S+)", re.M)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ctest_verdict.py JUNIT_XML")
    path = sys.argv[1]
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ci: no usable ctest report {path} ({e}): the tests did not run to the end", file=sys.stderr)
        return 1
    cases = root.iter("testcase")
    problems, total = [], 0
    for tc in cases:
        total += 1
        name, status = tc.get("name", "?"), tc.get("status", "?")
        out = tc.findtext("system-out") or ""
        skipped_inside = sorted(set(GTEST_SKIP.findall(out)))
        if status == "notrun":
            why = tc.find("skipped")
            problems.append(f"{name}: skipped / not run ({why.get('message', '') if why is not None else ''})")
        elif status == "disabled":
            problems.append(f"{name}: disabled")
        elif status != "run" or tc.find("failure") is not None:
            problems.append(f"{name}: failed")
        if skipped_inside:
            problems.append(f"{name}: GoogleTest skipped {', '.join(skipped_inside)}")
    if total == 0:
        print(f"ci: {path} lists no test", file=sys.stderr)
        return 1
    if problems:
        print(f"ci: RED: {len(problems)} problem(s) among {total} test(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"ci: all {total} test(s) ran and passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
