#!/usr/bin/python3
"""compile_objects.py over a compile_commands.json written here: only the compiles in matching
folders run, each through the launcher in its own folder; a failed compile is named and exits 1;
a pattern that matches nothing exits 2."""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "compile_objects.py")


def run(build, pattern, launcher):
    return subprocess.run([sys.executable, script, build, pattern, launcher, "2"], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as build:
    log = os.path.join(build, "ran.log")
    launcher = os.path.join(build, "launcher.sh")
    with open(launcher, "w") as f:  # records the folder and the command, then runs it
        f.write(f'#!/bin/sh\necho "$(pwd) $*" >> {log}\nexec "$@"\n')
    os.chmod(launcher, 0o755)
    entries = []
    for folder, command in (("tests/unit/case", "true -o a.o"), ("tests/vm/campaign", "true -o b.o"),
                            ("harness/case", "true -o c.o"), ("tests/unit/kernel", "false -o d.o")):
        os.makedirs(os.path.join(build, folder))
        entries.append({"directory": os.path.join(build, folder), "command": command,
                        "file": os.path.join(build, folder, command[-3:-2] + ".cpp")})
    with open(os.path.join(build, "compile_commands.json"), "w") as f:
        json.dump(entries, f)

    done = run(build, "^tests/(unit/case|vm/campaign)$", launcher)
    assert done.returncode == 0, done.stderr
    ran = sorted(open(log).read().splitlines())
    assert ran == [f"{build}/tests/unit/case true -o a.o", f"{build}/tests/vm/campaign true -o b.o"], ran

    done = run(build, "^tests/", launcher)
    assert done.returncode == 1, done
    assert f"{build}/tests/unit/kernel/d.cpp: compile failed (exit 1)" in done.stderr, done.stderr
    assert "3 of 4 compiles" not in done.stdout and "2 of 3 compiles" in done.stdout, done.stdout

    done = run(build, "^nowhere/", launcher)
    assert done.returncode == 2 and "no compile in a folder matching '^nowhere/'" in done.stderr, done
print("compile_objects.py: matching folders only, failures named")
