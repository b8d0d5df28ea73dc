#!/usr/bin/python3
"""check_error_form.py: a product header's function that returns std::string, optional<string> or
vector<string>, or takes a non-const std::string& or std::string*, is flagged when its name, that
parameter's name or the comment just above it says check, validate, problem, error, refus, reason,
obstacle, cause or why; values (names and docs that do not say so, the listed ones, what a
comment quotes, a sentence saying what it throws) pass, and tests are out of scope. Each case is
run on its own; every failure is listed."""
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_error_form as c  # noqa: E402

P, T = "harness" + "/", "tests" + "/"  # spelled so that the doc-path check does not take them for citations
failures = []


def expect(name, text, want_lines, path=P + "x.hpp"):
    """The lines (1-based) c.offences reports for header `text` must be `want_lines`."""
    got = [int(o.split(":")[1]) for o in c.offences(path, text)]
    if got != want_lines:
        failures.append(f"{name}: offences on lines {got}, expected {want_lines}: {c.offences(path, text)}")


# Flagged: a failure handed back as text, found by the name, the out-parameter or the doc.
expect("a problem as optional<string>", "std::optional<std::string> arm_name_problem(const std::string& n);\n", [1])
expect("empty string = ok", "namespace a {\n/// \"\" when fine.\nstd::string check_rules(const json& r);\n}\n", [3])
expect("a refusal", "inline std::string pilot_kernel_refusal(const C& c) { return \"\"; }\n", [1])
expect("a list of problems", "[[nodiscard]] std::vector<std::string> telemetry_problems(Db& db);\n", [1])
expect("an out-parameter why", "bool parse(std::string_view t,\n           std::string& why);\n", [1])
expect("an out-pointer error", "std::optional<int> parse(const std::string& t, std::string* error = nullptr);\n", [1])
expect("the doc says so", "/// Why `p` is not safe, or nullopt.\nstd::optional<std::string> unsafe(const std::string& p);\n", [2])
expect("a block-comment doc", "/* Returns the obstacle, if any. */\nstd::string kvm(const std::string& root);\n", [2])
expect("a member function", "class A {\n public:\n  /// The refusal, \"\" when none.\n  std::string refusal() const;\n};\n", [4])
expect("a template", "template <class T>\nstd::string validate(const T& v);\n", [2])
expect("a virtual with a body", "struct E {\n  /// \"\" when n fits, else why not.\n  virtual std::string count_mismatch(int n) const {\n"
       "    return \"\";\n  }\n};\n", [3])
# Passed: values, the one error form, what a comment quotes or says it throws, bodies.
expect("Checked", "/// Whether `n` is an arm name, or the Problem.\nChecked check_arm_name(const std::string& n);\n", [])
expect("Expected", "Expected<std::string> check_run_db(const std::string& c);\n", [])
expect("a value", "/// The bytes of `path`.\nstd::optional<std::string> read_small_file(const std::string& path);\n", [])
expect("a const string& parameter", "bool send(const std::string& error_text);\n", [])
expect("an out-parameter that is a value", "/// Reads the body.\nbool read_body(std::string& body);\n", [])
expect("a sentence naming what it throws",
       "/// The file's text. Throws IoError on a read error.\nstd::string read(const std::string& p);\n", [])
expect("Errors: names the exception", "/// Text. Errors: std::runtime_error.\nstd::string render(int x);\n", [])
expect("quoted text and code", "/// \"must be 0600\" or `harness check`.\nstd::string text(int x);\n", [])
expect("a word inside a name", "/// Throws nothing; names runtime_error and IoError, interface-error.\nstd::string f(int x);\n", [])
expect("a comment not just above", "/// The refusal.\n\nstd::string g(int x);\n", [])
expect("a local variable in a body", "inline int f() {\n  std::string error(3, 'x');\n  return 0;\n}\n", [])
expect("an initialised variable", "inline const std::string kReason = f(\"x\");\n", [])
expect("a listed value", "std::optional<std::string> last_attempt_error(Db& db, const std::string& id);\n", [],
       path="results/store/attempts.hpp")
expect("a preprocessor line", "#define CHECK(x) std::string problem(x)\nint y;\n", [])

# Scope: product headers only (not sources, not tests); main() exits 1 naming each offence.
with tempfile.TemporaryDirectory() as d:
    subprocess.run(["git", "init", "-q", d], check=True)
    bad = "std::string design_arms_problem(const C& c);\n"
    for rel in (f"{P}a.hpp", f"{P}b.cpp", f"{T}unit/x/c.hpp"):
        p = pathlib.Path(d, rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(bad)
    subprocess.run(["git", "-C", d, "add", "."], check=True)
    scanned = sorted(c.sources(pathlib.Path(d)))
    if scanned != [f"{P}a.hpp"]:
        failures.append(f"scope: scanned {scanned}, expected the product's headers only")
    with open(os.devnull, "w") as null:
        saved, sys.stdout = sys.stdout, null
        try:
            rc = c.main(["check_error_form.py", d])
            pathlib.Path(d, f"{P}a.hpp").write_text("Checked check_design_arms(const C& c);\n")
            clean = c.main(["check_error_form.py", d])
        finally:
            sys.stdout = saved
    if rc != 1 or clean != 0:
        failures.append(f"scope: main() returned {rc} with one offence (expected 1) and {clean} without (expected 0)")

for f in failures:
    print("FAIL", f)
if failures:
    sys.exit(1)
print("check_error_form finds every failure handed back as text and accepts values and the one error form")
