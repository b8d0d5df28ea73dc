#!/usr/bin/python3
"""Drives check_doc_paths.py both ways on small synthetic trees: a clean tree passes, and
each kind of finding (missing cited file, a reference outside the repository, a cited
section that is not a heading, an undocumented campaign key) fails with its message."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(sys.argv[1])
CHECK = os.path.join(HERE, "check_doc_paths.py")


def make_tree(d):
    # every repository file as an empty placeholder (so real citations resolve), then the
    # files the check reads with their real contents
    sys.path.insert(0, HERE)
    import check_doc_paths
    for rel in check_doc_paths.repo_files(SRC):
        os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
        open(os.path.join(d, rel), "w").close()
    pool = [r for r in check_doc_paths.repo_files(SRC) if r.startswith("harness/pool/") and r.endswith(".cpp")]
    loader = [r for r in check_doc_paths.repo_files(SRC)
              if r.startswith("harness/campaign/model/campaign_yaml") and r.endswith(".cpp")]  # the loader and its section readers
    # the docs/ pages with their contents: they cite each other's sections (docs/CAMPAIGN.md cites
    # docs/LABS.md "Running on a libvirt lab"), which an empty placeholder would not hold
    docs = [r for r in check_doc_paths.repo_files(SRC) if r.startswith("docs/") and r.endswith(".md")]
    for rel in loader + docs + pool:
        os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
        shutil.copy(os.path.join(SRC, rel), os.path.join(d, rel))
    os.makedirs(os.path.join(d, "harness/case"), exist_ok=True)
    with open(os.path.join(d, "harness/case/SPEC.md"), "w") as f:
        f.write("# Spec\n")
    with open(os.path.join(d, "harness/case/x.hpp"), "w") as f:
        f.write('// See harness/case/SPEC.md and case/SPEC.md (docs/DESIGN.md "The case").\n')


def run(d):
    p = subprocess.run([sys.executable, CHECK, d], capture_output=True, text=True)
    return p.returncode, p.stderr


def expect(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


with tempfile.TemporaryDirectory() as d:
    make_tree(d)
    rc, err = run(d)
    expect(rc == 0, "clean tree passes: " + err)
    expect("path citations" in err, "reports a count: " + err)

    bad = os.path.join(d, "harness/case/bad.cpp")
    cases = [
        ("// see harness/case/NOPE.md\n", "cites harness/case/NOPE.md, which is not in the repository"),
        ("// facts: ../" + "shared/DESIGN.md\n", "points outside the repository"),
        ("// /" + "work/main/x\n", "points outside the repository"),
        ('// (docs/DESIGN.md "No such section")\n', 'cites section "No such section"'),
    ]
    for text, msg in cases:
        with open(bad, "w") as f:
            f.write(text)
        rc, err = run(d)
        expect(rc == 1 and msg in err, f"{text!r} fails with {msg!r}: rc={rc} {err}")
    os.remove(bad)

    doc = os.path.join(d, "docs/CAMPAIGN.md")
    with open(doc) as f:
        text = f.read()
    with open(doc, "w") as f:
        f.write(text.replace("`runner.case_timeout_s`", "`runner.timeout`"))
    rc, err = run(d)
    expect(rc == 1 and "`case_timeout_s` is not documented" in err, "undocumented key fails: " + err)
print("test_check_doc_paths: ok")
