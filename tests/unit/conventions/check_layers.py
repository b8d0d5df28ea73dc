#!/usr/bin/python3
"""Fails on an include that breaks the product's floors and rooms (docs/DESIGN.md "Layout").

The rules, each on the `#include "..."` lines of the product's C++ sources (every tracked
.cpp/.hpp outside tests/):
  (a) nothing outside harness/cli includes harness/cli (the CLI maps outcomes to exit codes);
  (b) analysis/ never includes harness/campaign (the planner uses analysis, not the reverse);
  (c) no two units include each other (a unit is a/b.hpp, a/b.cpp and the private header of a
      class split over several files, a/b_impl.hpp: the pimpl is part of its class's unit);
  (d) a command of harness/campaign/commands includes no other file of that folder but the
      shared base (command_campaign, command_env): no command reaches sideways into another;
  (e) a room includes no room later in its order (ROOMS below);
  (f) no engine is named outside harness/pool: an engine's folder (harness/pool/ENGINE/) is
      included only from harness/pool and from harness/cli, which wires the commands
      (`harness vm`) that manage one engine's guests; the rest asks the Pool (pool.hpp).
Usage: check_layers.py REPO_ROOT; exit 0 when clean, 1 with one line per violation.
"""
import pathlib
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# Each folder's rooms, bottom up: a room may include the rooms before it, never one after it.
ROOMS = {
    "harness/campaign": ["model", "plan", "store", "check", "runner", "commands"],
    "analysis": ["stats", "data", "tables", "compare", "simulate", "report"],
}
COMMANDS = "harness/campaign/commands/"
COMMAND_BASE = {COMMANDS + "command_campaign", COMMANDS + "command_env"}
POOL = "harness/pool/"


def unit(path):
    """a/b.hpp, a/b.cpp and a/b_impl.hpp -> a/b."""
    return re.sub(r"(_impl\.hpp|\.cpp|\.hpp)$", "", path)


def room(path):
    """(folder, index of its room) of `path`, or None when it is in no ordered room."""
    for top, rooms in ROOMS.items():
        if path.startswith(top + "/"):
            r = path[len(top) + 1:].split("/")[0]
            if r in rooms:
                return top, rooms.index(r)
    return None


def violations(includes):
    """The violations of `includes` (file -> the quoted includes it has), one line each, sorted."""
    out = []
    by_unit = {}
    for f, incs in includes.items():
        for i in incs:
            if unit(i) != unit(f):
                by_unit.setdefault(unit(f), set()).add(unit(i))
            if i.startswith("harness/cli/") and not f.startswith("harness/cli/"):
                out.append(f"{f}: includes {i}: nothing below harness/cli includes it (a)")
            if f.startswith("analysis/") and i.startswith("harness/campaign/"):
                out.append(f"{f}: includes {i}: analysis never includes harness/campaign (b)")
            if (f.startswith(COMMANDS) and i.startswith(COMMANDS) and unit(i) != unit(f)
                    and unit(i) not in COMMAND_BASE):
                out.append(f"{f}: includes {i}: a command includes no other command (d)")
            if (i.startswith(POOL) and i.count("/") >= 3 and not f.startswith(POOL)
                    and not f.startswith("harness/cli/")):
                out.append(f"{f}: includes {i}: an engine is named only in harness/pool (f)")
            rf, ri = room(f), room(i)
            if rf and ri and rf[0] == ri[0] and ri[1] > rf[1]:
                rooms = ROOMS[rf[0]]
                out.append(f"{f}: includes {i}: room {rooms[rf[1]]} is below room {rooms[ri[1]]} in "
                           f"{rf[0]} ({' < '.join(rooms)}) (e)")
    for a, deps in by_unit.items():
        for b in deps:
            if a < b and a in by_unit.get(b, set()):
                out.append(f"{a} <-> {b}: the two units include each other (c)")
    return sorted(out)


def sources(root):
    files = subprocess.run(["git", "-C", str(root), "ls-files", "*.cpp", "*.hpp"], capture_output=True, text=True,
                           check=True).stdout.split()
    return [f for f in files if not f.startswith("tests/")]


def main(argv):
    root = pathlib.Path(argv[1])
    includes = {f: set(INCLUDE.findall((root / f).read_text(errors="replace"))) for f in sources(root)}
    found = violations(includes)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the floors and rooms of docs/DESIGN.md \"Layout\"")
        return 1
    print(f"{len(includes)} product sources: no include against the floors and rooms of docs/DESIGN.md \"Layout\"")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
