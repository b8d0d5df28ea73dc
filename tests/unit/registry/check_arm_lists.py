#!/usr/bin/python3
"""No hand-kept list of the study's arm names outside the policy registry.

The names of the study's three arms are defined once, in their policy files
(harness/case/policies/*.cpp, the ones with a study_position). Everything else gets them from
the registry (harness::case_::study_arms()), from the plan or from the results DB's `arms`
table. This check reads the product's sources (C++, Python, SQL) and fails when two or more of
those names appear as string literals within three consecutive lines: that is a list kept by
hand. The few places where the study's names are history or the study's published data are
allowed below, each with its reason.

Usage: check_arm_lists.py REPO_ROOT  (exit 0 = none found, 1 = lists found, listed)
"""
import pathlib
import re
import sys

PRODUCT_DIRS = ["harness", "analysis", "results", "qualify", "canaries", "pressure"]
SUFFIXES = {".cpp", ".hpp", ".h", ".py", ".sql", ".in"}
WINDOW = 3

# file (relative to the root) -> why the study's names may be listed there
ALLOWED = {
    "results/db.cpp": "the version-5 schema's CHECK list, converted to the arms table (history)",
    "analysis/compare_published.cpp": "the study's published Table 4 and medians, keyed by the study's arms",
    "analysis/study_medians.hpp": "the study's published mechanism medians, keyed by the study's arms",
    "analysis/reference/bootstrap_ref.py": "the independent reference takes the study's arms (order, short labels) "
    "from the study, not from the product it checks",
}


def study_names(root: pathlib.Path):
    names = []
    for f in sorted((root / "harness/case/policies").glob("*.cpp")):
        text = f.read_text()
        if "study_position" not in text:
            continue
        m = re.search(r'\.name\s*=\s*"([a-z][a-z0-9-]*)"', text)
        if m:
            names.append(m.group(1))
    return names


def find_lists(root: pathlib.Path, names):
    literal = re.compile(r"""["'](%s)["']""" % "|".join(re.escape(n) for n in names))
    found = []
    for d in PRODUCT_DIRS:
        for f in sorted((root / d).rglob("*")):
            rel = f.relative_to(root).as_posix()
            if f.suffix not in SUFFIXES or not f.is_file() or rel in ALLOWED:
                continue
            if rel.startswith("harness/case/policies/"):
                continue  # where each name is defined, once
            lines = f.read_text(errors="replace").splitlines()
            for i in range(len(lines)):
                window = "\n".join(lines[i:i + WINDOW])
                hits = set(literal.findall(window))
                if len(hits) >= 2 and set(literal.findall(lines[i])):
                    found.append(f"{rel}:{i + 1}: {sorted(hits)}: {lines[i].strip()[:100]}")
                    break  # one report per file is enough to find it
    return found


def main(argv):
    root = pathlib.Path(argv[1]).resolve()
    names = study_names(root)
    if len(names) < 2:
        print(f"expected the study's arms in harness/case/policies/, found {names}")
        return 1
    found = find_lists(root, names)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} file(s) keep a list of the study's arm names by hand; take them from the "
              "registry (harness::case_::study_arms()), the plan or the results DB's arms table")
        return 1
    print(f"no hand-kept list of {names} outside the registry")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
