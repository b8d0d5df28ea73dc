#!/usr/bin/python3
"""check_results_sql.py finds SQL over the results DB outside the store, naming file and line, and
accepts the store, comments, messages and the exempt folders."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_results_sql as c  # noqa: E402


def offences(path, text, tables):
    """c.offences with the made-up paths of this test written with '|' for '/' (so that
    docs_paths_test does not take them for citations of files)."""
    return [o.replace(path.replace("|", "/"), path) for o in c.offences(path.replace("|", "/"), text, tables)]


schema = "CREATE TABLE IF NOT EXISTS cases (\n  case_id TEXT\n);\nCREATE VIEW IF NOT EXISTS telemetry AS SELECT 1;\n" \
         "CREATE TABLE attempts (case_id TEXT);\n"
tables = c.results_tables(schema)
assert tables == {"cases", "telemetry", "attempts"}, tables

# Found, with file and line: a query split over literals, a schema-qualified write, a raw string.
split = 'void f(results::Db& db) {\n  auto sql = "SELECT status, error "\n              "FROM cases WHERE case_id = ?1";\n}\n'
assert offences("analysis|x.cpp", split, tables) == [
    'analysis|x.cpp:3: SQL over results table cases outside the store: "FROM cases WHERE case_id = ?1"'], \
    offences("analysis|x.cpp", split, tables)
update = 'const char* q = "UPDATE main.cases SET attempt = ?2";\n'
assert [o.split(": ")[0] for o in offences("harness|y.cpp", update, tables)] == ["harness|y.cpp:1"]
raw = 'int n = 1\'000;\nconst char* q = R"(\n  INSERT INTO attempts(case_id) VALUES (?1)\n)";\n'
assert [o.split(": ")[0] for o in offences("harness|z.cpp", raw, tables)] == ["harness|z.cpp:2"], \
    offences("harness|z.cpp", raw, tables)
view = 'x = "SELECT t_ns FROM telemetry WHERE case_id = ?1 ORDER BY t_ns";\n'
assert len(offences("analysis|v.cpp", view, tables)) == 1
# A statement built outside the store, whatever its text; sqlite3 called past the wrapper.
stmt = 'void g(results::Db& db, const std::string& sql) {\n  results::Stmt q(db, sql);\n}\n'
assert offences("harness|s.cpp", stmt, tables) == [
    "harness|s.cpp:2: an SQLite statement (Stmt) outside the store: results::Stmt q(db, sql);"], \
    offences("harness|s.cpp", stmt, tables)
direct = 'void h(sqlite3* d) {\n  sqlite3_exec(d, sql, nullptr, nullptr, nullptr);\n}\n'
assert [o.split(": ")[0] for o in offences("harness|d.cpp", direct, tables)] == ["harness|d.cpp:2"]
# Python too.
py = 'import sqlite3\ncon = sqlite3.connect(db)\nrows = con.execute("SELECT case_id FROM cases").fetchall()\n'
assert [o.split(": ")[0] for o in offences("analysis|report|p.py", py, tables)] == ["analysis|report|p.py:3"]

# Accepted: the store and the schema, comments, messages that name a table without SQL, the
# canary's own database, the independent reference.
assert offences("results/store/cases.cpp", split + stmt, tables) == []
assert offences("results/db.cpp", update, tables) == []
comment = '// SELECT status FROM cases (results/store/cases.hpp reads it)\n/* UPDATE cases SET x */\nint f();\n'
assert offences("harness|c.cpp", comment, tables) == []
messages = ('auto m = "refusing cases until DELETE /v1/unclean";\nauto r = "POST /v1/cases";\n'
            'auto e = "no table cases";\nchar q = \'"\';\nauto t = "the attempts of FROM-less text";\n')
assert offences("harness|agent|m.cpp", messages, tables) == [], offences("harness|agent|m.cpp", messages, tables)
canary = 'void k(sqlite3* d) {\n  sqlite3_prepare_v2(d, "SELECT payload FROM rows WHERE lookup_key = ?1", -1, &s, nullptr);\n}\n'
assert offences("canaries/canary_db.cpp", canary, tables) == []
assert offences("analysis/reference/bootstrap_ref.py", py, tables) == []

# The whole check on a tree, both ways: a git tree whose only SQL is in results/ passes (exit 0);
# the same tree with one query outside results/ fails (exit 1), naming that file and line.
import subprocess  # noqa: E402
import tempfile  # noqa: E402

with tempfile.TemporaryDirectory() as d:
    root = pathlib.Path(d)
    (root / "results/store").mkdir(parents=True)
    (root / "analysis").mkdir()
    (root / "results/schema.sql").write_text(schema)
    (root / "results/store/cases.cpp").write_text(split + stmt)
    (root / "analysis" / "ok.cpp").write_text(comment + messages)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    script = str(pathlib.Path(__file__).parent / "check_results_sql.py")
    clean = subprocess.run([sys.executable, script, str(root)], capture_output=True, text=True)
    assert clean.returncode == 0 and clean.stdout == "", (clean.returncode, clean.stdout)
    (root / "analysis" / "bad.cpp").write_text("int x;\n" + update)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    dirty = subprocess.run([sys.executable, script, str(root)], capture_output=True, text=True)
    assert dirty.returncode == 1, (dirty.returncode, dirty.stdout)
    assert dirty.stdout.splitlines()[0].startswith("analysis" + "/bad.cpp:2: SQL over results table cases"), dirty.stdout

print("check_results_sql finds SQL over the results DB outside the store and accepts the rest")
