#!/usr/bin/python3
"""Compiles some objects of a configured build tree, nothing else, through a launcher.

usage: compile_objects.py BUILD_DIR FOLDER_REGEX LAUNCHER JOBS

BUILD_DIR must have been configured with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON (its
compile_commands.json lists every compile, unity sources included, and their sources exist
after configuring). Runs every compile whose folder, relative to BUILD_DIR (say
tests/unit/case), matches FOLDER_REGEX (Python re.search), JOBS at a time, each as
"LAUNCHER <command>" in its folder: with tests/bench/compile/cpu_launcher.sh the compile CPU
of test objects is measured without building the libraries they link (compile_ab.sh
OBJECTS=...). Exits 1, naming the object, if a compile fails, and 2 if nothing matches.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    build, pattern, launcher, jobs = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    path = os.path.join(build, "compile_commands.json")
    with open(path) as f:
        entries = json.load(f)
    chosen = [e for e in entries if pattern.search(os.path.relpath(e["directory"], build))]
    if not chosen:
        print(f"compile_objects: {path}: no compile in a folder matching '{sys.argv[2]}'", file=sys.stderr)
        sys.exit(2)

    def run(entry):
        command = entry.get("command") or shlex.join(entry["arguments"])
        done = subprocess.run(f"{shlex.quote(launcher)} {command}", shell=True, cwd=entry["directory"],
                              capture_output=True, text=True)
        return entry, done

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        for entry, done in pool.map(run, chosen):
            if done.returncode != 0:
                failed += 1
                print(f"compile_objects: {entry['file']}: compile failed (exit {done.returncode})\n{done.stderr}",
                      file=sys.stderr)
    print(f"compile_objects: {len(chosen) - failed} of {len(chosen)} compiles in {build} done")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
