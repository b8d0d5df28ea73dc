#!/usr/bin/python3
"""Fails on a catch clause with an empty body and no comment saying why nothing is lost.

docs/DESIGN.md "Errors": an exception swallowed without a word is how a lost case or a silently
missing value hides. A catch that deliberately does nothing says why, in a comment inside its
braces or on the catch line. Scope: the product's C++ sources (every tracked .cpp/.hpp outside
tests/). Usage: check_empty_catch.py REPO_ROOT; exit 0 when clean, 1 with one line per offence
(FILE:LINE: the catch clause).
"""
import pathlib
import re
import subprocess
import sys

CATCH = re.compile(r"catch\s*\([^)]*\)\s*\{")


def body_end(text, start):
    """Index just past the brace closing the block whose body starts at `start`."""
    depth, i = 1, start
    while depth and i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
        i += 1
    return i


def offences(path, text):
    out = []
    for m in CATCH.finditer(text):
        body = text[m.end():body_end(text, m.end()) - 1]
        line_end = text.find("\n", m.start())
        catch_line = text[m.start():line_end if line_end >= 0 else len(text)]
        if body.strip() == "" and "//" not in catch_line:
            out.append(f"{path}:{text.count(chr(10), 0, m.start()) + 1}: {catch_line.strip()}")
    return out


def sources(root):
    files = subprocess.run(["git", "-C", str(root), "ls-files", "*.cpp", "*.hpp"], capture_output=True, text=True,
                           check=True).stdout.split()
    return [f for f in files if not f.startswith("tests/")]


def main(argv):
    root = pathlib.Path(argv[1])
    found = []
    for f in sources(root):
        found += offences(f, (root / f).read_text(errors="replace"))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} empty catch clause(s) without a comment saying why nothing is lost")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
