#!/usr/bin/python3
"""The study's arm names live in their registrations and in the study-facts file only.

The names of the study's three arms are defined once as policies, in their policy files
(harness/case/policies/*.cpp, the ones with a study_position), and once as the study's published
facts, in analysis/data/study_facts.hpp (beside its Table 4 and medians, which the published
comparison reads; tests/unit/campaign/arms_test.cpp checks that the two agree). Everything else
gets them from the registry (harness::case_::study_arms()), from the study-facts file
(analysis::kStudyArms), from the plan or from the results DB's `arms` table. This check reads the
product's sources (C++, Python, SQL) and fails on any of those names written as a string literal
of its own ("static-zram", 'static-zram') outside a comment: one such literal is a name kept by
hand, two within three consecutive lines a list kept by hand. A name inside a longer text (a
message: "the bounded-reclaim dose") is prose, not a literal of the name. The independent Python
reference is allowed below with its reason.

Usage: check_arm_lists.py REPO_ROOT  (exit 0 = none found, 1 = names found, listed)
"""
import pathlib
import re
import sys

PRODUCT_DIRS = ["harness", "analysis", "results", "qualify", "canaries", "pressure"]
SUFFIXES = {".cpp", ".hpp", ".h", ".py", ".sql", ".in"}
WINDOW = 3
STUDY_FACTS = "analysis/data/study_facts.hpp"
REGISTRATIONS = "harness/case/policies/"

# file (relative to the root) -> why the study's names may be written there
ALLOWED = {
    STUDY_FACTS: "the study's published facts: its arm names beside its Table 4 and medians",
    "analysis/reference/bootstrap_ref.py": "the independent reference takes the study's arms (order, short labels) "
    "from the study, not from the product it checks",
}


def study_names(root: pathlib.Path):
    names = []
    for f in sorted((root / REGISTRATIONS).glob("*.cpp")):
        text = f.read_text()
        if "study_position" not in text:
            continue
        m = re.search(r'\.name\s*=\s*"([a-z][a-z0-9-]*)"', text)
        if m:
            names.append(m.group(1))
    return names


def code_part(line: str, suffix: str) -> str:
    """The line without its trailing comment (// in C++ and SQL-in-C++, # in Python, -- in SQL)."""
    marker = {".py": "#", ".sql": "--"}.get(suffix, "//")
    at = line.find(marker)
    return line if at < 0 else line[:at]


def find_names(root: pathlib.Path, names):
    """Every product file, outside the allowed ones and the registrations, that writes a study
    arm name as a literal of its own: one finding per file, at its first such line, marked
    "list" when two or more names lie within WINDOW consecutive lines there."""
    literal = re.compile(r"""["'](%s)["']""" % "|".join(re.escape(n) for n in names))
    found = []
    for d in PRODUCT_DIRS:
        for f in sorted((root / d).rglob("*")):
            rel = f.relative_to(root).as_posix()
            if f.suffix not in SUFFIXES or not f.is_file() or rel in ALLOWED:
                continue
            if rel.startswith(REGISTRATIONS):
                continue  # where each name is registered, once
            lines = [code_part(l, f.suffix) for l in f.read_text(errors="replace").splitlines()]
            for i, line in enumerate(lines):
                if not literal.search(line):
                    continue
                hits = set(literal.findall("\n".join(lines[i:i + WINDOW])))
                kind = "list" if len(hits) >= 2 else "name"
                found.append(f"{rel}:{i + 1}: {kind} {sorted(hits)}: {line.strip()[:100]}")
                break  # one report per file is enough to find it
    return found


def find_lists(root: pathlib.Path, names):
    """The findings of find_names that are lists (two or more names within WINDOW lines)."""
    return [f for f in find_names(root, names) if ": list [" in f]


def main(argv):
    root = pathlib.Path(argv[1]).resolve()
    names = study_names(root)
    if len(names) < 2:
        print(f"expected the study's arms in {REGISTRATIONS}, found {names}")
        return 1
    found = find_names(root, names)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} file(s) write the study's arm names by hand; take them from the registry "
              f"(harness::case_::study_arms()), the study-facts file ({STUDY_FACTS}), the plan or the "
              "results DB's arms table")
        return 1
    print(f"no study arm name of {names} outside the registrations and {STUDY_FACTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
