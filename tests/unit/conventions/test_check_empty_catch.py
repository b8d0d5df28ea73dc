#!/usr/bin/python3
"""check_empty_catch.py: a catch whose body holds no statement (whitespace, `;` and comments
only) must carry, inside its braces, a comment of at least three words saying why nothing is
lost; a comment outside the braces, a bare marker or an empty comment does not count, and the
whole tree (tests included) is in scope. Each case is run on its own; every failure is listed."""
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_empty_catch  # noqa: E402

P, T = "harness" + "/", "tests" + "/"  # spelled so that the doc-path check does not take them for citations
failures = []


def expect(name, text, want_lines):
    """The lines (1-based) check_empty_catch.offences reports for `text` must be `want_lines`."""
    got = [int(o.split(":")[1]) for o in check_empty_catch.offences("x.cpp", text)]
    if got != want_lines:
        failures.append(f"{name}: offences on lines {got}, expected {want_lines}")


# Empty and uncommented: an offence.
expect("empty body on its own lines", "void f() {\n  try {\n    g();\n  } catch (const std::exception&) {\n  }\n}\n", [4])
expect("empty body on one line", "try { g(); } catch (...) {}\n", [1])
# Loopholes of the earlier check: each is still an empty catch.
expect("a lone semicolon", "try { g(); } catch (...) { ; }\n", [1])
expect("semicolons over lines", "try {\n  g();\n} catch (const E&) {\n  ;\n  ;\n}\n", [3])
expect("a comment after the closing brace", "try { g(); } catch (...) {}  // ignore errors here please\n", [1])
expect("a comment before the catch", "try { g(); }  // best effort: nothing depends on it\ncatch (...) {}\n", [2])
expect("an empty block comment inside", "try { g(); } catch (...) { /* */ }\n", [1])
expect("a bare marker inside", "try { g(); } catch (...) {  // NOLINT\n}\n", [1])
expect("two words inside", "try { g(); } catch (...) {\n  // ignore it\n}\n", [1])
# Braces inside comments and strings do not end or open a body.
expect("a brace in a comment inside", "try { g(); } catch (...) {\n  // }\n}\nint x;\n", [1])
expect("a catch inside a comment is no catch", "// catch (...) {}\nint x;\n", [])
expect("a catch inside a string is no catch", 'const char* s = "catch (...) {}";\n', [])
expect("a raw string holding a brace", 'try { g(); } catch (...) { log(R"({)"); }\n', [])
# Why, in a comment inside the braces: accepted.
expect("a comment inside", "try {\n  g();\n} catch (const E&) {\n  // best effort: nothing recorded depends on it\n}\n", [])
expect("a comment inside, on the catch line", "try { g(); } catch (const E&) {  // stays NULL, named below\n}\n", [])
expect("a block comment inside", "try { g(); } catch (...) { /* a destructor must not throw */ }\n", [])
expect("handled", "try { g(); } catch (const E& e) {\n  if (x) { log(e); }\n}\n", [])
expect("rethrown", "try { g(); } catch (...) { throw; }\n", [])
expect("two catches, the second empty", "try { g(); } catch (const A&) { h(); } catch (const B&) {\n}\n", [1])

# Scope: every tracked C++ source, tests included.
with tempfile.TemporaryDirectory() as d:
    subprocess.run(["git", "init", "-q", d], check=True)
    for rel in (f"{P}a.cpp", f"{T}unit/x/b_test.cpp", f"{T}common/c.hpp"):
        p = pathlib.Path(d, rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("void f() {\n  try { g(); } catch (...) {}\n}\n")
    subprocess.run(["git", "-C", d, "add", "."], check=True)
    scanned = sorted(check_empty_catch.sources(pathlib.Path(d)))
    if scanned != [f"{P}a.cpp", f"{T}common/c.hpp", f"{T}unit/x/b_test.cpp"]:
        failures.append(f"scope: scanned {scanned}, expected the product's and the tests' sources")
    with open(os.devnull, "w") as null:
        saved, sys.stdout = sys.stdout, null
        try:
            rc = check_empty_catch.main(["check_empty_catch.py", d])
        finally:
            sys.stdout = saved
    if rc != 1:
        failures.append(f"scope: main() returned {rc} on a tree with three empty catches, expected 1")

for f in failures:
    print("FAIL", f)
if failures:
    sys.exit(1)
print("check_empty_catch finds every empty catch without a reason inside its braces and accepts the others")
