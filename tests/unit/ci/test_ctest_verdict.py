#!/usr/bin/python3
"""Drives .ci/ctest_verdict.py both ways: on JUnit reports and registered-test lists shaped like
ctest's (--output-junit, --show-only=json-v1), and on a real ctest run of a small project whose
passing tests print a skip after more than 1 KiB of output (what ctest keeps of a passing test's
output), guarded as this build's tests are. Green only when every registered test is in one lane
and ran and passed there; red, naming the test, otherwise.
Usage: test_ctest_verdict.py REPO_ROOT BUILD_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

if len(sys.argv) < 3:
    sys.exit("usage: test_ctest_verdict.py REPO_ROOT BUILD_DIR")
BUILD = sys.argv.pop(2)
ROOT = sys.argv.pop(1)
VERDICT = os.path.join(ROOT, ".ci", "ctest_verdict.py")


def case(name, status="run", failure=False, out=""):
    body = f"<system-out>{out}</system-out>"
    if failure:
        body += '<failure message="Failed"/>'
    if status == "notrun":
        body += '<skipped message="SKIP_RETURN_CODE=77"/>'
    return f'<testcase name="{name}" classname="{name}" time="1" status="{status}">{body}</testcase>'


def report(*cases):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="Linux-c++" tests="%d">%s</testsuite>\n'
            % (len(cases), "".join(cases)))


def listing(*names):
    """A `ctest --show-only=json-v1` document registering `names`."""
    return json.dumps({"kind": "ctestInfo", "version": {"major": 1, "minor": 0},
                       "tests": [{"name": n, "properties": []} for n in names]})


def run_verdict(all_tests, lanes):
    """Runs the verdict on a registered list and {lane: (registered names, report text or None)}."""
    with tempfile.TemporaryDirectory() as d:
        reg = os.path.join(d, "all.json")
        with open(reg, "w") as f:
            f.write(listing(*all_tests))
        junit = os.path.join(d, "junit")
        os.mkdir(junit)
        for lane, (names, text) in lanes.items():
            with open(os.path.join(junit, lane + ".registered.json"), "w") as f:
                f.write(listing(*names))
            if text is not None:
                with open(os.path.join(junit, lane + ".xml"), "w") as f:
                    f.write(text)
        r = subprocess.run(["/usr/bin/python3", VERDICT, reg, junit], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr


class Verdict(unittest.TestCase):
    def test_all_passed_in_two_lanes_is_green(self):
        rc, out = run_verdict(["a", "b", "guest"], {"fast": (["a", "b"], report(case("a"), case("b"))),
                                                    "guest": (["guest"], report(case("guest")))})
        self.assertEqual(rc, 0, out)
        self.assertIn("all 3 registered test(s) ran, each in one lane, and passed", out)

    def test_an_empty_lane_with_its_empty_report_is_green(self):
        rc, out = run_verdict(["a"], {"fast": (["a"], report(case("a"))), "guest2": ([], report())})
        self.assertEqual(rc, 0, out)

    def test_failure_is_red_and_named(self):
        rc, out = run_verdict(["a", "guest"], {"fast": (["a"], report(case("a"))),
                                               "guest": (["guest"], report(case("guest", status="fail", failure=True)))})
        self.assertEqual(rc, 1, out)
        self.assertIn("guest: failed", out)

    def test_a_registered_test_missing_from_its_report_is_red_and_named(self):
        rc, out = run_verdict(["a", "dropped"], {"fast": (["a", "dropped"], report(case("a")))})
        self.assertEqual(rc, 1, out)
        self.assertIn("dropped: registered in lane fast but not in its report (never run)", out)

    def test_a_registered_test_in_no_lane_is_red_and_named(self):
        rc, out = run_verdict(["a", "orphan"], {"fast": (["a"], report(case("a")))})
        self.assertEqual(rc, 1, out)
        self.assertIn("orphan: registered but in no lane (never run)", out)

    def test_a_test_in_two_lanes_is_red(self):
        rc, out = run_verdict(["a"], {"fast": (["a"], report(case("a"))), "guest2": (["a"], report(case("a")))})
        self.assertEqual(rc, 1, out)
        self.assertIn("a: in lanes fast, guest2 (run more than once)", out)

    def test_a_reported_test_its_lane_does_not_register_is_red(self):
        rc, out = run_verdict(["a"], {"fast": (["a"], report(case("a"), case("stale")))})
        self.assertEqual(rc, 1, out)
        self.assertIn("stale: in lane fast's report but not registered in that lane", out)

    def test_ctest_skip_is_red(self):
        rc, out = run_verdict(["a", "skipper"], {"fast": (["a", "skipper"], report(case("a"), case("skipper", "notrun")))})
        self.assertEqual(rc, 1, out)
        self.assertIn("skipper: skipped / not run (SKIP_RETURN_CODE=77)", out)

    def test_disabled_is_red(self):
        rc, out = run_verdict(["off"], {"fast": (["off"], report(case("off", status="disabled")))})
        self.assertEqual(rc, 1, out)
        self.assertIn("off: disabled", out)

    def test_googletest_skip_kept_in_a_passing_report_is_named(self):
        out_text = "[ RUN      ] Suite.T\n[  SKIPPED ] Suite.T (0 ms)\n"
        rc, out = run_verdict(["bin"], {"fast": (["bin"], report(case("bin", out=out_text)))})
        self.assertEqual(rc, 1, out)
        self.assertIn("bin: GoogleTest skipped Suite.T", out)

    def test_a_missing_report_names_each_test_of_its_lane(self):
        rc, out = run_verdict(["a", "g1", "g2"], {"fast": (["a"], report(case("a"))), "guest": (["g1", "g2"], None)})
        self.assertEqual(rc, 1, out)
        self.assertIn("lane guest: no usable ctest report", out)
        self.assertIn("g1: registered in lane guest but not in its report (never run)", out)
        self.assertIn("g2: registered in lane guest but not in its report (never run)", out)

    def test_a_report_cut_short_is_red(self):
        rc, out = run_verdict(["a"], {"fast": (["a"], report(case("a"))[:60])})
        self.assertEqual(rc, 1, out)
        self.assertIn("no usable ctest report", out)
        self.assertIn("a: registered in lane fast but not in its report", out)

    def test_no_lane_at_all_is_red(self):
        rc, out = run_verdict(["a"], {})
        self.assertEqual(rc, 1, out)
        self.assertIn("no lane in", out)
        self.assertIn("a: registered but in no lane (never run)", out)

    def test_no_registered_test_is_red(self):
        rc, out = run_verdict([], {"fast": ([], report())})
        self.assertEqual(rc, 1, out)
        self.assertIn("lists no registered test", out)


def guard_of_this_build():
    """The FAIL_REGULAR_EXPRESSION this build gives its own test (HARNESS_SKIP_GUARD)."""
    r = subprocess.run(["ctest", "--test-dir", BUILD, "--show-only=json-v1", "-R", "^ci_verdict_test$"],
                       capture_output=True, text=True, check=True)
    tests = json.loads(r.stdout)["tests"]
    assert len(tests) == 1, tests
    value = {p["name"]: p["value"] for p in tests[0]["properties"]}["FAIL_REGULAR_EXPRESSION"]
    return [value] if isinstance(value, str) else value


LONG = "x" * 3000  # more than the 1024 bytes ctest keeps of a passing test's output
PROJECT = """cmake_minimum_required(VERSION 3.25)
project(skips NONE)
enable_testing()
add_test(NAME gtest_skip_after_long_output COMMAND /usr/bin/python3 -c "print('{long}'); print('[  SKIPPED ] Suite.T (0 ms)')")
add_test(NAME unittest_skip_after_long_output COMMAND /usr/bin/python3 {dir}/skipping.py)
add_test(NAME passes COMMAND /usr/bin/python3 -c "print('{long}')")
set(guard {guard})
if(guard)
  set_tests_properties(gtest_skip_after_long_output unittest_skip_after_long_output passes
                       PROPERTIES FAIL_REGULAR_EXPRESSION "${{guard}}")
endif()
"""
SKIPPING = """import unittest
class T(unittest.TestCase):
    def test_runs(self):
        print('{long}')
    @unittest.skip('no tool')
    def test_skipped(self):
        pass
unittest.main()
"""


def run_real_ctest(d, guard):
    """Configures and runs the small project with `guard` (a list of regexes, or none) as its
    tests' FAIL_REGULAR_EXPRESSION, as one lane; returns (verdict exit, verdict output, JUnit root)."""
    src, build, junit = (os.path.join(d, x) for x in ("src", "build", "junit"))
    for p in (src, junit):
        os.makedirs(p)
    cmake_list = " ".join('"' + g.replace("\\", "\\\\").replace('"', '\\"') + '"' for g in guard)
    with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
        f.write(PROJECT.format(long=LONG, dir=src, guard=cmake_list or '""'))
    with open(os.path.join(src, "skipping.py"), "w") as f:
        f.write(SKIPPING.format(long=LONG))
    subprocess.run(["cmake", "-S", src, "-B", build], check=True, capture_output=True)
    subprocess.run(["ctest", "--test-dir", build, "--output-junit", os.path.join(junit, "fast.xml")], capture_output=True)
    listed = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], check=True, capture_output=True,
                            text=True).stdout
    for path in (os.path.join(junit, "fast.registered.json"), os.path.join(d, "all.json")):
        with open(path, "w") as f:
            f.write(listed)
    r = subprocess.run(["/usr/bin/python3", VERDICT, os.path.join(d, "all.json"), junit], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr, ET.parse(os.path.join(junit, "fast.xml")).getroot()


class RealCtest(unittest.TestCase):
    def test_without_the_guard_a_skip_after_1_KiB_passes_and_its_report_hides_it(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, root = run_real_ctest(d, [])
        cases = {tc.get("name"): tc for tc in root.iter("testcase")}
        self.assertEqual(len(cases), 3, out)
        for name in ("gtest_skip_after_long_output", "unittest_skip_after_long_output"):
            self.assertEqual(cases[name].get("status"), "run", name)
            kept = cases[name].findtext("system-out") or ""
            self.assertNotIn("SKIPPED", kept, name)
            self.assertNotIn("skipped=", kept, name)
            self.assertIn("removed since it exceeds the threshold of 1024 bytes", kept, name)
        self.assertEqual(rc, 0, out)  # what the guard is for: the report alone shows no skip

    def test_with_this_builds_guard_each_skip_fails_its_test_and_the_verdict_names_it(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, root = run_real_ctest(d, guard_of_this_build())
        statuses = {tc.get("name"): tc.get("status") for tc in root.iter("testcase")}
        self.assertEqual(statuses, {"gtest_skip_after_long_output": "fail", "unittest_skip_after_long_output": "fail",
                                    "passes": "run"}, out)
        self.assertEqual(rc, 1, out)
        self.assertIn("gtest_skip_after_long_output: failed", out)
        self.assertIn("unittest_skip_after_long_output: failed", out)
        self.assertNotIn("passes:", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
