#!/usr/bin/python3
"""Drives check_doc_numbers.py both ways: the repository passes, and a copy of the files it
reads, with one quoted number or its source changed at a time, fails naming the rule."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(sys.argv[1])
CHECK = os.path.join(HERE, "check_doc_numbers.py")
FILES = ["docs/OUTPUTS.md", "campaigns/ci-regression.yaml", "campaigns/README.md", "docs/CI.md", "analysis/README.md",
         "analysis/data/study_facts.hpp", "analysis/report/figures.py", "harness/cli/cmd_report.cpp",
         "harness/vm/kernel_requirements.cpp"]


def run(d):
    p = subprocess.run([sys.executable, CHECK, d], capture_output=True, text=True)
    return p.returncode, p.stderr


def expect(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def copy_tree(d):
    for rel in FILES:
        os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
        shutil.copy(os.path.join(SRC, rel), os.path.join(d, rel))


def replace(d, rel, old, new):
    p = os.path.join(d, rel)
    text = open(p, encoding="utf-8").read()
    expect(old in text, f"{rel} holds {old!r} (update this test)")
    open(p, "w", encoding="utf-8").write(text.replace(old, new))  # every quote of it


rc, err = run(SRC)
expect(rc == 0, "the repository's quoted numbers match their sources: " + err)

# (file, old, new, the rule the finding must name)
CASES = [
    ("campaigns/ci-regression.yaml", "11 min 10 s wall", "15 min 00 s wall", "ci-budget"),
    ("docs/CI.md", "11 min 10 s under TCG", "11 min 20 s under TCG", "ci-budget"),
    ("docs/OUTPUTS.md", "0.704 [0.675,\n  0.735]", "0.704 [0.676,\n  0.735]", "study-table4"),
    ("docs/OUTPUTS.md", "`zram_timecourse.png`", "`zram_course.png`", "figures"),
    ("analysis/data/study_facts.hpp", "{0.938, 0.906, 0.971}", "{0.939, 0.906, 0.971}", "study-table4"),
    ("campaigns/README.md", "99,198", "99,199", "study-medians"),
    ("analysis/report/figures.py", "  reclaim_execution.png", "  reclaim_execution.png   x\n  extra_figure.png", "figures"),
    ("docs/CI.md", "`CONFIG_ZRAM`", "`CONFIG_ZRAMX`", "kernel-config"),
]
for rel, old, new, rule in CASES:
    with tempfile.TemporaryDirectory() as d:
        copy_tree(d)
        rc, err = run(d)
        expect(rc == 0, "the copied files pass: " + err)
        replace(d, rel, old, new)
        rc, err = run(d)
        expect(rc == 1 and rule + ":" in err, f"changing {rel} is found by {rule}: rc={rc} {err}")
print("test_check_doc_numbers: ok")
