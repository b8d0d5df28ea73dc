#!/usr/bin/python3
"""Verdict of .ci/run: every registered ctest test ran, in exactly one lane, and passed.

Usage: ctest_verdict.py REGISTERED_JSON JUNIT_DIR
  REGISTERED_JSON  `ctest --show-only=json-v1` of the whole build tree: every registered test.
  JUNIT_DIR        one lane per NAME.registered.json (`ctest --show-only=json-v1` with that
                   lane's label filters) beside NAME.xml (`ctest --output-junit` of the lane's
                   run); harness/scripts/test.sh writes both for each ctest run it makes.
The expected tests come from ctest itself, never from a list kept by hand. Exit 0 only when
every registered test is in exactly one lane, each lane's report lists every test of that lane,
and each ran and passed. Otherwise exit 1, naming each test that failed, was skipped or not run
(ctest status "notrun": SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION, a missing executable), is
disabled, is missing from its lane's report (the report is missing or cut short, or ctest did not
run it), is in no lane or in two, or is in a report without being registered in its lane.
A GoogleTest or Python skip fails its test through the skip guard (FAIL_REGULAR_EXPRESSION, which
ctest matches against the whole output); a "[  SKIPPED ]" line ctest kept in the report (at most
1 KiB of a passing test's output) is named as well, but nothing here depends on it.
"""
import json
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

GTEST_SKIP = re.compile(r"^\[  SKIPPED \] ([A-Za-z_]\w*\.\S+)", re.M)
LANE_SUFFIX = ".registered.json"


def registered(path):
    """Test names of a `ctest --show-only=json-v1` file, in ctest's order; raises OSError or
    ValueError when the file is missing or is not that JSON."""
    doc = json.loads(pathlib.Path(path).read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list):
        raise ValueError("no \"tests\" list: not ctest --show-only=json-v1 output")
    return [t["name"] for t in doc["tests"]]


def judge_report(lane, expected, root, problems):
    """Appends one problem per test of `expected` (one lane's registered names) that the lane's
    JUnit report `root` does not show as run and passed, and per test case it shows that the
    lane does not register."""
    seen = set()
    for tc in root.iter("testcase"):
        name, status = tc.get("name", "?"), tc.get("status", "?")
        seen.add(name)
        if name not in expected:
            problems.append(f"{name}: in lane {lane}'s report but not registered in that lane")
        if status == "notrun":
            why = tc.find("skipped")
            problems.append(f"{name}: skipped / not run ({why.get('message', '') if why is not None else ''})")
        elif status == "disabled":
            problems.append(f"{name}: disabled")
        elif status != "run" or tc.find("failure") is not None:
            problems.append(f"{name}: failed")
        skipped_inside = sorted(set(GTEST_SKIP.findall(tc.findtext("system-out") or "")))
        if skipped_inside:
            problems.append(f"{name}: GoogleTest skipped {', '.join(skipped_inside)}")
    for name in expected:
        if name not in seen:
            problems.append(f"{name}: registered in lane {lane} but not in its report (never run)")


def judge_lanes(all_tests, lanes, problems):
    """Appends one problem per registered test in no lane or in more than one."""
    where = {}
    for lane, names in lanes.items():
        for n in names:
            where.setdefault(n, []).append(lane)
    for n in all_tests:
        if n not in where:
            problems.append(f"{n}: registered but in no lane (never run)")
        elif len(where[n]) > 1:
            problems.append(f"{n}: in lanes {', '.join(where[n])} (run more than once)")
    for n in where:
        if n not in all_tests:
            problems.append(f"{n}: in lane {', '.join(where[n])} but not among the registered tests")


def verdict(registered_json, junit_dir):
    """(problems, number of registered tests)."""
    problems = []
    try:
        all_tests = registered(registered_json)
    except (OSError, ValueError, KeyError, TypeError) as e:
        return [f"no usable list of the registered tests {registered_json} ({e})"], 0
    if not all_tests:
        problems.append(f"{registered_json} lists no registered test")
    lanes = {}
    for f in sorted(pathlib.Path(junit_dir).glob("*" + LANE_SUFFIX)):
        lane = f.name[:-len(LANE_SUFFIX)]
        try:
            lanes[lane] = registered(f)
        except (OSError, ValueError, KeyError, TypeError) as e:
            problems.append(f"lane {lane}: no usable list of its tests {f} ({e})")
            continue
        report = pathlib.Path(junit_dir, lane + ".xml")
        try:
            root = ET.parse(report).getroot()
        except (OSError, ET.ParseError) as e:
            problems.append(f"lane {lane}: no usable ctest report {report} ({e}): its tests did not run to the end")
            root = ET.Element("testsuite")
        judge_report(lane, lanes[lane], root, problems)
    if not lanes:
        problems.append(f"no lane in {junit_dir} (no *{LANE_SUFFIX}): no ctest run was made")
    judge_lanes(all_tests, lanes, problems)
    return problems, len(all_tests)


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: ctest_verdict.py REGISTERED_JSON JUNIT_DIR")
    problems, total = verdict(argv[1], argv[2])
    if problems:
        print(f"ci: RED: {len(problems)} problem(s) among {total} registered test(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"ci: all {total} registered test(s) ran, each in one lane, and passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
