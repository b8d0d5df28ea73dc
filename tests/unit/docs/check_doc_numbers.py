#!/usr/bin/python3
"""Numbers the documentation quotes, held to their source (ours).

Each rule names the quoting files and the source; a finding says what differs.

  ci-budget     the shipped CI run's wall time: docs/CI.md "What the check judges" (its opening) and
                "Budgets" (the A/A run and the table) and the header of campaigns/ci-regression.yaml
                say the same "N min M s"
  study-table4  the study's Table 4 in analysis/data/study_facts.hpp (kStudyTable4) is what
                docs/OUTPUTS.md, analysis/README.md and `harness compare --published --help`
                (harness/cli/cmd_report.cpp) quote
  study-medians the study's static-zram swap-out and refault medians (kStudyMechanism) are
                what campaigns/README.md quotes
  figures       every figure analysis/report/figures.py writes (its docstring) is named in
                docs/OUTPUTS.md "Outputs", and the count in words is right
  kernel-config every option harness/vm/kernel_requirements.cpp requires is in docs/CI.md's table

Usage: check_doc_numbers.py SOURCE_DIR     (exit 0 = consistent, 1 = findings on stderr)
"""
import csv
import json
import os
import re
import sys

WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def flat(text):
    """Whitespace (line breaks of wrapped prose, comment markers) collapsed to one space."""
    return re.sub(r"\s+(#\s+)?", " ", text)


def section(md, heading):
    m = re.search(r"^## " + re.escape(heading) + r".*?$(.*?)(?=^## |\Z)", md, re.M | re.S)
    return m.group(1) if m else ""


def ci_budget(root, problems):
    ci_md = read(root, "docs/CI.md")
    judges = flat(section(ci_md, "What the check judges"))
    budgets = flat(section(ci_md, "Budgets"))
    yaml = flat(read(root, "campaigns/ci-regression.yaml"))
    m = re.search(r"took (\d+ min \d+ s) wall", budgets)
    if not m:
        problems.append("ci-budget: docs/CI.md \"Budgets\" no longer says \"took N min M s wall\"")
        return
    budget = m.group(1)
    if budget + " under TCG" not in judges:
        problems.append(f"ci-budget: docs/CI.md \"What the check judges\" opening does not quote the measured "
                        f"{budget} under TCG")
    y = re.search(r"Budget: .*?(\d+ min \d+ s) wall", yaml)
    if not y or y.group(1) != budget:
        problems.append(f"ci-budget: campaigns/ci-regression.yaml header says {y.group(1) if y else 'no N min M s'}, "
                        f"docs/CI.md measured {budget}")
    if f"| {budget} |" not in budgets:
        problems.append(f"ci-budget: docs/CI.md \"Budgets\" does not quote the shipped run's {budget}")


def study_numbers(root):
    h = read(root, "analysis/data/study_facts.hpp")
    t4 = re.search(r"kStudyTable4\[4\] = \{(.*?)\};", h, re.S).group(1)
    rows = [tuple(float(x) for x in r.split(",")) for r in re.findall(r"\{([0-9., ]+)\}", t4)]
    mech = re.search(r"kStudyMechanism\[3\] = \{(.*?)\};", h, re.S).group(1)
    med = [tuple(float(x) for x in r.split(",")) for r in re.findall(r"\{([0-9., ]+)\}", mech)]
    return rows, med


def study_table4(root, problems):
    rows, med = study_numbers(root)
    if len(rows) != 4:
        problems.append(f"study-table4: found {len(rows)} rows of kStudyTable4 in analysis/data/study_facts.hpp")
        return
    quoted = [f"{e:.3f} [{lo:.3f}, {up:.3f}]" for e, lo, up in rows]
    for rel in ["docs/OUTPUTS.md", "harness/cli/cmd_report.cpp"]:
        text = flat(read(root, rel)).replace('" "', "")  # C++ string literals split over lines
        for q in quoted:
            if q not in text:
                problems.append(f"study-table4: {rel} does not quote the study's {q} (analysis/data/study_facts.hpp)")
    if quoted[2] not in flat(read(root, "analysis/README.md")):
        problems.append(f"study-table4: analysis/README.md does not quote SQLite / static as {quoted[2]}")
    static = med[0]
    text = flat(read(root, "campaigns/README.md"))
    for v, what in [(static[0], "swap-out KiB"), (static[1], "refaults")]:
        q = f"{int(v):,}"
        if q not in text:
            problems.append(f"study-medians: campaigns/README.md does not quote the study's static-zram {what} {q}")


def figures(root, problems):
    doc = read(root, "analysis/report/figures.py").split('"""')[1]
    names = re.findall(r"^  ([a-z0-9_<>]+\.png)", doc, re.M)
    out = flat(section(read(root, "docs/OUTPUTS.md"), "Outputs"))
    for n in names:
        if f"`{n}`" not in out:
            problems.append(f"figures: docs/OUTPUTS.md \"Outputs\" does not name {n} (analysis/report/figures.py writes it)")
    word = WORDS.get(len(names), str(len(names)))
    if f"{word} figures" not in out:
        problems.append(f"figures: docs/OUTPUTS.md \"Outputs\" should say \"{word} figures\" (analysis/report/figures.py writes "
                        f"{len(names)})")


def kernel_config(root, problems):
    opts = re.findall(r'\{"(CONFIG_[A-Z0-9_]+)"', read(root, "harness/vm/kernel_requirements.cpp"))
    ci = section(read(root, "docs/CI.md"), "The kernel configuration a candidate kernel needs")
    if len(opts) < 10:
        problems.append(f"kernel-config: found only {len(opts)} options in harness/vm/kernel_requirements.cpp")
    for o in opts:
        if f"`{o}`" not in ci:
            problems.append(f"kernel-config: docs/CI.md does not list {o} (harness/vm/kernel_requirements.cpp needs it)")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    problems = []
    for rule in [ci_budget, study_table4, figures, kernel_config]:
        try:
            rule(root, problems)
        except (OSError, AttributeError, IndexError, ValueError, KeyError) as e:
            problems.append(f"{rule.__name__}: cannot check: {e}")
    print(f"check_doc_numbers: 4 rules, {len(problems)} finding(s)", file=sys.stderr)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
