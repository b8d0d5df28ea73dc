#!/usr/bin/python3
"""Fails on a function (or lambda) of the product longer than 80 lines.

Issue 48, item 7 and docs/DESIGN.md "Layout": a function a reader cannot hold on one screen
mixes ideas that belong in rooms of their own. Lengths come from Universal Ctags (`end:`
field: first to last line, the signature's line included). Scope: every tracked C++ source
and header of the product (harness/, analysis/, results/, pressure/, canaries/, qualify/; tests
are not held to it): a header's inline functions, templates, member functions defined in a class
and lambdas at namespace scope are measured like a .cpp's. A function ctags gives no end line
cannot be measured and is an offence too.
Usage: check_function_length.py REPO_ROOT [LIMIT]; exit 0 when every function has at most LIMIT (80) lines, 1 with one line per
offence (FILE:LINE: NAME has N lines, or cannot be measured), 2 when ctags is missing or is not Universal Ctags.
"""
import pathlib
import subprocess
import sys

LIMIT = 80
SCOPE = ("harness/", "analysis/", "results/", "pressure/", "canaries/", "qualify/")
CXX_FILES = ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.h", "*.hh", "*.hxx", "*.ipp", "*.tpp", "*.inl")


def lengths(ctags_lines):
    """(file, line, name, n_lines) per function/lambda tag of `ctags --fields=+ne -f -` output;
    n_lines is None for a tag without an end line (ctags could not find its body's end)."""
    out = []
    for raw in ctags_lines:
        cols = raw.rstrip("\n").split("\t")
        if len(cols) < 4:
            continue
        fields = dict(c.split(":", 1) for c in cols[3:] if ":" in c)
        kind = cols[3] if ":" not in cols[3] else fields.get("kind", "")
        if kind not in ("f", "function") or "line" not in fields:
            continue
        name = "a lambda" if cols[0].startswith("__anon") else cols[0]
        line = int(fields["line"])
        out.append((cols[1], line, name, int(fields["end"]) - line + 1 if "end" in fields else None))
    return out


def sources(root):
    files = subprocess.run(["git", "-C", str(root), "ls-files", *CXX_FILES], capture_output=True, text=True,
                           check=True).stdout.split()
    return [f for f in files if f.startswith(SCOPE)]


def universal_ctags():
    """The Universal Ctags binary (Debian installs it as ctags-universal, ctags an alternative), or None."""
    for name in ("ctags-universal", "ctags"):
        try:
            version = subprocess.run([name, "--version"], capture_output=True, text=True).stdout
        except FileNotFoundError:
            continue
        if "Universal Ctags" in version:
            return name
    return None


def main(argv):
    root = pathlib.Path(argv[1])
    limit = int(argv[2]) if len(argv) > 2 else LIMIT
    ctags = universal_ctags()
    if ctags is None:
        print("check_function_length: needs Universal Ctags (Debian package universal-ctags)")
        return 2
    # --language-force: a .h is C++ here, not C
    tags = subprocess.run([ctags, "--language-force=C++", "--kinds-C++=f", "--fields=+ne", "-f", "-"] + sources(root),
                          cwd=root, capture_output=True, text=True, check=True).stdout.splitlines()
    found = [t for t in lengths(tags) if t[3] is None or t[3] > limit]
    for f, line, name, n in sorted(found, key=lambda t: t[:3]):
        print(f"{f}:{line}: {name} has {n} lines (at most {limit})" if n is not None else
              f"{f}:{line}: {name} cannot be measured (ctags found no end of its body)")
    if found:
        print(f"{len(found)} function(s) over {limit} lines")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
