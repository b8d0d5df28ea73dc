#!/usr/bin/python3
"""Verdict of .ci/run on ctest's JUnit reports (ctest --output-junit FILE), one or more.

Exit 0 only when every report exists and lists a test, and every test case in them ran and
passed. Otherwise prints
each test that failed, was skipped or not run (ctest status "notrun": SKIP_RETURN_CODE, a
missing executable), is disabled, or whose output holds a GoogleTest "[  SKIPPED ]" line (the
tests' FAIL_REGULAR_EXPRESSION already fails those; named here with the GoogleTest test), and
exits 1. A report that is missing or lists no test is a problem too: the ctest run that
should have written it did not run to the end. Usage: ctest_verdict.py JUNIT_XML...
"""
import re
import sys
import xml.etree.ElementTree as ET

GTEST_SKIP = re.compile(r"^\[  SKIPPED \] ([A-Za-z_]\w*\.\S+)", re.M)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: ctest_verdict.py JUNIT_XML...")
    problems, total = [], 0
    for path in sys.argv[1:]:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            problems.append(f"no usable ctest report {path} ({e}): its tests did not run to the end")
            continue
        n = judge(root, problems)
        if n == 0:
            problems.append(f"{path} lists no test")
        total += n
    if problems:
        print(f"ci: RED: {len(problems)} problem(s) among {total} test(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"ci: all {total} test(s) ran and passed")
    return 0


def judge(root, problems):
    """Appends to problems each test case of one report that did not run and pass; returns
    the number of test cases in it."""
    total = 0
    for tc in root.iter("testcase"):
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
    return total


if __name__ == "__main__":
    sys.exit(main())
