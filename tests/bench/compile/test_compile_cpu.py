#!/usr/bin/python3
"""compile_cpu.py over a build tree and a launcher log written here: compiles are summed per
kind by the folder of their target (tests/ or the product), links are counted apart, and the
lines /usr/bin/time adds for a failed command are ignored."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as build:
    for d in ("analysis/CMakeFiles/hk_analysis.dir", "tests/unit/case/CMakeFiles/case_unit_tests.dir"):
        os.makedirs(os.path.join(build, d))
    log = os.path.join(build, "cpu.log")
    with open(log, "w") as f:
        f.write("3.00 0.50 4.00 CMakeFiles/hk_analysis.dir/report.cpp.o\n")
        f.write("1.25 0.25 2.00 CMakeFiles/hk_analysis.dir/tables.cpp.o\n")
        f.write("Command exited with non-zero status 1\n")
        f.write("2.00 1.00 3.50 CMakeFiles/case_unit_tests.dir/spec_test.cpp.o\n")
        f.write("0.40 0.10 0.60 libhk_analysis.so\n")
    out = subprocess.run([sys.executable, os.path.join(here, "compile_cpu.py"), build, log],
                         check=True, capture_output=True, text=True).stdout
    rows = [line.split() for line in out.splitlines()]
    assert ["product", "compile", "5", "CPU-s", "in", "2", "commands"] in rows, out
    assert ["tests", "compile", "3", "CPU-s", "in", "1", "commands"] in rows, out
    assert ["product", "link", "0", "CPU-s", "in", "1", "commands"] in rows, out
    assert ["compiling", "in", "all", "8", "CPU-s"] in rows, out
    heaviest = rows.index(["heaviest", "targets", "(compile", "CPU-s):"])
    assert rows[heaviest + 1:heaviest + 3] == [["5", "hk_analysis"], ["3", "case_unit_tests"]], out
print("compile_cpu.py: sums and kinds as expected")
