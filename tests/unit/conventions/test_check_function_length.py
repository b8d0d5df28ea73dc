#!/usr/bin/python3
"""check_function_length.py measures functions and lambdas from ctags' line/end fields."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_function_length  # noqa: E402

tags = [
    "run\tlib/a.cpp\t/^void run() {$/;\"\tkind:function\tline:10\tend:100\n",
    "__anon1\tlib/b.cpp\t/^  app.callback([] {$/;\"\tkind:function\tline:5\tend:20\n",
    "Cls\tlib/a.cpp\t/^class Cls {$/;\"\tkind:class\tline:1\tend:300\n",
    "decl\tlib/a.hpp\t/^void decl();$/;\"\tkind:prototype\tline:3\n",
]
got = check_function_length.lengths(tags)
assert got == [("lib/a.cpp", 10, "run", 91), ("lib/b.cpp", 5, "a lambda", 16)], got
print("check_function_length measures functions and lambdas and ignores classes and prototypes")
