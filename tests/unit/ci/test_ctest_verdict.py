#!/usr/bin/python3
"""Drives .ci/ctest_verdict.py both ways on JUnit reports shaped like ctest's
(ctest --output-junit): green only when every report exists, lists tests, and each ran and
passed; red, naming the test or the report, otherwise. Usage: test_ctest_verdict.py REPO_ROOT"""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.getcwd()
VERDICT = os.path.join(ROOT, ".ci", "ctest_verdict.py")


def case(name, status="run", failure=False, out=""):
    body = f"<system-out>{out}</system-out>"
    if failure:
        body += '<failure message="Failed"/>'
    if status == "notrun":
        body += '<skipped message="Disabled or SKIP_RETURN_CODE"/>'
    return f'<testcase name="{name}" classname="{name}" time="1" status="{status}">{body}</testcase>'


def report(*cases):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="Linux-c++" tests="%d">%s</testsuite>\n'
            % (len(cases), "".join(cases)))


class Verdict(unittest.TestCase):
    def run_verdict(self, *reports, missing=0):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, text in enumerate(reports):
                p = os.path.join(d, f"r{i}.xml")
                with open(p, "w") as f:
                    f.write(text)
                paths.append(p)
            paths += [os.path.join(d, f"missing{i}.xml") for i in range(missing)]
            r = subprocess.run(["/usr/bin/python3", VERDICT, *paths], capture_output=True, text=True)
            return r.returncode, r.stdout + r.stderr

    def test_all_passed_in_two_reports_is_green(self):
        rc, out = self.run_verdict(report(case("a"), case("b")), report(case("guest")))
        self.assertEqual(rc, 0, out)
        self.assertIn("all 3 test(s) ran and passed", out)

    def test_failure_is_red_and_named(self):
        rc, out = self.run_verdict(report(case("a")), report(case("guest", status="fail", failure=True)))
        self.assertEqual(rc, 1, out)
        self.assertIn("guest: failed", out)

    def test_ctest_skip_is_red(self):
        rc, out = self.run_verdict(report(case("a"), case("skipper", status="notrun")))
        self.assertEqual(rc, 1, out)
        self.assertIn("skipper: skipped / not run", out)

    def test_disabled_is_red(self):
        rc, out = self.run_verdict(report(case("off", status="disabled")))
        self.assertEqual(rc, 1, out)
        self.assertIn("off: disabled", out)

    def test_googletest_skip_inside_a_passing_binary_is_red(self):
        out_text = "[ RUN      ] Suite.T\n[  SKIPPED ] Suite.T (0 ms)\n"
        rc, out = self.run_verdict(report(case("bin", out=out_text)))
        self.assertEqual(rc, 1, out)
        self.assertIn("bin: GoogleTest skipped Suite.T", out)

    def test_missing_report_is_red_even_when_the_other_passed(self):
        rc, out = self.run_verdict(report(case("a")), missing=1)
        self.assertEqual(rc, 1, out)
        self.assertIn("no usable ctest report", out)
        self.assertIn("missing0.xml", out)

    def test_report_with_no_test_is_red(self):
        rc, out = self.run_verdict(report(case("a")), report())
        self.assertEqual(rc, 1, out)
        self.assertIn("lists no test", out)

    def test_truncated_report_is_red(self):
        rc, out = self.run_verdict(report(case("a"))[:60])
        self.assertEqual(rc, 1, out)
        self.assertIn("no usable ctest report", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
