#!/usr/bin/python3
"""Fails on an empty catch clause that does not say, inside its braces, why nothing is lost.

docs/DESIGN.md "Errors": an exception swallowed without a word is how a lost case or a silently
missing value hides. The rule (ours):
- a catch body is empty when, its comments removed, nothing but whitespace and `;` is left;
- an empty body passes only with a comment inside its braces of at least MIN_WORDS words
  (a reason, not a marker: `// NOLINT`, `// ignore it` and `/* */` do not count);
- a comment outside the braces (before `catch`, or after the closing brace on the same line)
  does not count: it can be moved away from the catch, or be about something else.
Comments and string literals (raw strings included) are neither catches nor braces.
Scope: every tracked .cpp/.hpp of the repository, tests included.
Usage: check_empty_catch.py REPO_ROOT; exit 0 when clean, 1 with one line per offence
(FILE:LINE: the catch clause).
"""
import pathlib
import re
import subprocess
import sys

MIN_WORDS = 3
CATCH = re.compile(r"\bcatch\s*\([^)]*\)\s*\{")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
RAW_OPEN = re.compile(r'R"([^ ()\\\t\n]{0,16})\(')


def _skip_literal(text, i, quote):
    """Index just past the string or character literal whose opening quote is at i."""
    i += 1
    while i < len(text) and text[i] != quote and text[i] != "\n":
        i += 2 if text[i] == "\\" else 1
    return i + 1


def split_code(text):
    """(code, comments): code is text with every comment and literal blanked to spaces (newlines
    kept, so offsets and line numbers hold); comments is [(start, end, comment text)]."""
    code, comments, i, n = list(text), [], 0, len(text)

    def blank(a, b):
        for k in range(a, min(b, n)):
            if code[k] != "\n":
                code[k] = " "

    while i < n:
        two = text[i:i + 2]
        raw = RAW_OPEN.match(text, i) if text[i] == "R" and (i == 0 or not text[i - 1].isalnum()) else None
        if two == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments.append((i, end, text[i + 2:end]))
        elif two == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            comments.append((i, end, text[i + 2:end - 2]))
        elif raw:
            close = text.find(")" + raw.group(1) + '"', raw.end())
            end = n if close < 0 else close + len(raw.group(1)) + 2
        elif text[i] in "\"'" and not (text[i] == "'" and i > 0 and text[i - 1].isalnum()):
            end = _skip_literal(text, i, text[i])  # a digit separator (1'000) is no literal
        else:
            i += 1
            continue
        blank(i, end)
        i = end
    return "".join(code), comments


def body_end(code, start):
    """Index just past the brace closing the block whose body starts at `start` (in `code`,
    comments and literals blanked)."""
    depth, i = 1, start
    while depth and i < len(code):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
        i += 1
    return i


def says_why(comment):
    """True when a comment holds at least MIN_WORDS words and is not a lint marker."""
    words = WORD.findall(comment)
    return len(words) >= MIN_WORDS and not words[0].startswith("NOLINT")


def offences(path, text):
    """One line `FILE:LINE: catch clause` per empty catch without a reason inside its braces."""
    code, comments = split_code(text)
    out = []
    for m in CATCH.finditer(code):
        end = body_end(code, m.end())
        if code[m.end():end - 1].replace(";", "").strip():
            continue  # a statement: handled, rethrown or turned into a value
        inside = [c for a, b, c in comments if a >= m.end() and b <= end - 1]
        if any(says_why(c) for c in inside):
            continue
        line_end = text.find("\n", m.start())
        catch_line = text[m.start():line_end if line_end >= 0 else len(text)]
        out.append(f"{path}:{text.count(chr(10), 0, m.start()) + 1}: {catch_line.strip()}")
    return out


def sources(root):
    """Every tracked C++ source and header of the repository (tests included)."""
    return subprocess.run(["git", "-C", str(root), "ls-files", "*.cpp", "*.hpp"], capture_output=True, text=True,
                          check=True).stdout.split()


def main(argv):
    root = pathlib.Path(argv[1])
    found = []
    for f in sources(root):
        found += offences(f, (root / f).read_text(errors="replace"))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} empty catch clause(s) without a comment inside the braces saying why nothing is lost "
              f"(at least {MIN_WORDS} words)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
