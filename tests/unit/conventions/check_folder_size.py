#!/usr/bin/python3
"""Fails on a product folder that holds more than 20 .cpp files at one level.

docs/DESIGN.md "Layout" (ours, issue 56 item 7): a concern that outgrows about 20 files at one
level is split into rooms, subfolders by idea; one idea per file. Scope: the tracked .cpp files
of the product (harness/, analysis/, results/, pressure/, canaries/, qualify/; tests are not held
to it), counted per folder, a subfolder's files apart from its parent's.
Usage: check_folder_size.py REPO_ROOT [LIMIT]; exit 0 when every folder holds at most LIMIT (20)
.cpp files, 1 with one line per offence (FOLDER: N .cpp files, the limit).
"""
import collections
import posixpath
import subprocess
import sys

LIMIT = 20
SCOPE = ("harness/", "analysis/", "results/", "pressure/", "canaries/", "qualify/")


def counts(paths):
    """Folder -> number of .cpp files directly in it, for the paths of the product's scope."""
    c = collections.Counter()
    for p in paths:
        if p.startswith(SCOPE) and p.endswith(".cpp"):
            c[posixpath.dirname(p)] += 1
    return c


def main(argv):
    root = argv[1]
    limit = int(argv[2]) if len(argv) > 2 else LIMIT
    files = subprocess.run(["git", "-C", root, "ls-files", "*.cpp"], capture_output=True, text=True,
                           check=True).stdout.split()
    found = sorted((d, n) for d, n in counts(files).items() if n > limit)
    for d, n in found:
        print(f"{d}: {n} .cpp files at one level (at most {limit}): split it into rooms, subfolders by idea")
    if found:
        print(f"{len(found)} folder(s) over {limit} .cpp files")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
