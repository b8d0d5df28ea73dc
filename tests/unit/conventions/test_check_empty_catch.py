#!/usr/bin/python3
"""check_empty_catch.py finds an empty uncommented catch and accepts commented or non-empty ones."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_empty_catch  # noqa: E402

bad = "void f() {\n  try {\n    g();\n  } catch (const std::exception&) {\n  }\n}\n"
assert check_empty_catch.offences("x.cpp", bad) == ["x.cpp:4: catch (const std::exception&) {"], \
    check_empty_catch.offences("x.cpp", bad)
assert check_empty_catch.offences("x.cpp", "try { g(); } catch (...) {}\n") == ["x.cpp:1: catch (...) {}"]
inside = "try {\n  g();\n} catch (const E&) {\n  // best effort: nothing recorded depends on it\n}\n"
assert check_empty_catch.offences("x.cpp", inside) == []
same_line = "try { g(); } catch (const E&) {  // why\n}\n"
assert check_empty_catch.offences("x.cpp", same_line) == []
handled = "try { g(); } catch (const E& e) {\n  if (x) { log(e); }\n}\n"
assert check_empty_catch.offences("x.cpp", handled) == []
print("check_empty_catch finds an empty uncommented catch and accepts the others")
