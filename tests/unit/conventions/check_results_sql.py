#!/usr/bin/python3
"""Fails on SQL over the results DB written outside the store.

Issue 56 item 3 and results/README.md "One store": SQL text over the tables of the results DB
(cases, attempts, schedule, campaign_meta, arms and every per-case table of results/schema.sql)
lives in results/ only: the schema (schema.sql, its version steps in db.cpp) and the store
(store/, import.cpp). Everything else reads and writes through the store's typed API.

Offences, in every tracked product source outside results/ (C++ and Python; tests are not held to
it):
  - a string literal naming a results table or view (read from results/schema.sql) after an SQL
    keyword that takes a table: FROM, JOIN, INTO, UPDATE or TABLE (as the project writes SQL: upper
    case; "main." or another schema name may come between), e.g. "SELECT status FROM cases" or
    "UPDATE main.cases SET ...";
  - the token Stmt in C++ code (an SQLite statement on a results::Db: SQL run outside the store,
    whatever text it is built from);
  - a call of sqlite3_prepare* or sqlite3_exec in C++ code (the results DB opened past its wrapper).
Comments do not count. Exempt, each for its reason: canaries/ (sqlite3 calls only: the SQLite
canary's own workload database, not the results DB) and analysis/reference/ (the independent
NumPy reference reads the DB by itself: sharing the store's reading would make it no cross-check).
Usage: check_results_sql.py REPO_ROOT; exit 0 when clean, 1 with one line per offence
(FILE:LINE: what was found).
"""
import io
import pathlib
import re
import subprocess
import sys
import tokenize

STORE = ("results/",)
REFERENCE = ("analysis/reference/",)  # independent by design (docstring)
OWN_SQLITE = ("canaries/",)           # the canary's own workload database
TAKES_TABLE = r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(?:\"?\w+\"?\.)?\"?"
STMT = re.compile(r"\bStmt\b")
RAW_SQLITE = re.compile(r"\bsqlite3_(prepare\w*|exec)\s*\(")


def results_tables(schema_text):
    """Names of the tables and views results/schema.sql creates."""
    return set(re.findall(r"CREATE\s+(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", schema_text, re.IGNORECASE))


def cpp_pieces(text):
    """(code, literals) of C++ `text`: the code with comments and literals blanked (newlines kept),
    and each string literal as (line, content). Handles "..." with escapes, R"d(...)d", '...',
    and digit separators (1'000)."""
    code, literals, i, n, line = [], [], 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            code.append("\n" * text.count("\n", i, j))
            line += text.count("\n", i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            end = text.find(")" + delim + '"', open_paren)
            end = n if end < 0 else end
            literals.append((line, text[open_paren + 1:end]))
            stop = min(n, end + len(delim) + 2)
            code.append("\n" * text.count("\n", i, stop))
            line += text.count("\n", i, stop)
            i = stop
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                literals.append((line, text[i + 1:j]))
            code.append(" ")
            i = j + 1
        else:
            if c == "\n":
                line += 1
            code.append(c)
            i += 1
    return "".join(code), literals


def python_literals(text):
    """Each string literal of Python `text` as (line, content)."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING:
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError):
        pass  # an unparsable file has no literals this check can judge; the build or its own test fails on it
    return out


def sql_offences(path, literals, tables):
    """Literals naming a results table after an SQL keyword that takes one."""
    relation = re.compile(TAKES_TABLE + r"(" + "|".join(sorted(tables)) + r")\b")
    out = []
    for line, lit in literals:
        m = relation.search(lit)
        if m:
            excerpt = " ".join(lit.split())[:80]
            out.append(f"{path}:{line}: SQL over results table {m.group(1)} outside the store: \"{excerpt}\"")
    return out


def offences(path, text, tables):
    """Every offence of product file `path` (its text `text`), by the rules of the docstring."""
    if path.startswith(STORE) or path.startswith(REFERENCE):
        return []
    if path.endswith(".py"):
        return sql_offences(path, python_literals(text), tables)
    code, literals = cpp_pieces(text)
    out = sql_offences(path, literals, tables)
    for number, row in enumerate(code.split("\n"), start=1):
        if STMT.search(row):
            out.append(f"{path}:{number}: an SQLite statement (Stmt) outside the store: {row.strip()[:80]}")
        if RAW_SQLITE.search(row) and not path.startswith(OWN_SQLITE):
            out.append(f"{path}:{number}: sqlite3 called directly outside the store: {row.strip()[:80]}")
    return out


def sources(root):
    """Tracked product sources (a file deleted in the work tree but still tracked is left out)."""
    files = subprocess.run(["git", "-C", str(root), "ls-files", "*.cpp", "*.hpp", "*.h", "*.cpp.in", "*.py"],
                           capture_output=True, text=True, check=True).stdout.split()
    return [f for f in files if not f.startswith("tests/") and (root / f).is_file()]


def main(argv):
    root = pathlib.Path(argv[1])
    tables = results_tables((root / "results/schema.sql").read_text())
    if "cases" not in tables or "attempts" not in tables:
        print("results/schema.sql: no table cases or attempts found; is REPO_ROOT right?")
        return 1
    found = []
    for f in sources(root):
        found += offences(f, (root / f).read_text(errors="replace"), tables)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} place(s) with SQL over the results DB outside the store (results/README.md \"One store\")")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
