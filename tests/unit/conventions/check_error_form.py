#!/usr/bin/python3
"""Fails on a product function that hands back its failure as text (docs/DESIGN.md "Errors").

The rule (ours, issue 56): in a product header (a tracked .hpp outside tests/), a function
declared at namespace or class scope whose return type is std::string, std::optional<std::string>
or std::vector<std::string>, or which takes a non-const std::string& or std::string* parameter, is
flagged when its name, the name of that parameter or the comment just above it contains one of
WORDS (case-insensitive: check, validate, problem, error, refus, reason, obstacle, cause, why; in
the comment at the start of a word, and not in `code`, "quoted text" or a sentence saying what
the function throws, the other form of a failure). A failure is returned as harness::Expected<T>
or harness::Checked (harness/error/expected.hpp); text that is a value (a file's contents, a
stored reason, a report) is declared with a name and doc that do not trip the rule, or listed in
VALUES with its reason.
Usage: check_error_form.py REPO_ROOT; exit 0 when clean, 1 with one line per offence
(FILE:LINE: the function and what tripped the rule).
"""
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_empty_catch import split_code  # noqa: E402  (comments and literals blanked, offsets kept)

WORDS = re.compile(r"check|validate|problem|error|refus|reason|obstacle|cause|why", re.IGNORECASE)
# In a comment a word counts at the start of a word, not inside a name (runtime_error, IoError,
# interface-error, <stem>-check.md).
DOC_WORDS = re.compile(r"(?<![\w:./<>-])(?:" + WORDS.pattern + ")", re.IGNORECASE)
TEXT_TYPES = {"std::string", "std::optional<std::string>", "std::vector<std::string>"}
OUT_PARAM = re.compile(r"\bstd::string\s*(?:&(?!&)|\*)")
SPECIFIERS = re.compile(r"\[\[[^\]]*\]\]|\b(?:inline|static|virtual|constexpr|friend|explicit|extern)\b")
SCOPE = re.compile(r"\b(?:namespace|class|struct|union|enum|extern)\b")
# Not read in a comment: code and quoted text (`harness check`, "must be 0600"), and a sentence
# that says what the function throws ("Throws IoError.", "Errors: DbError ...": the other form).
QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"")
THROWS = re.compile(r"\b(?:[Tt]hrows|Errors)\b(?:[^.]|\.(?!\s|$))*\.?")
ACCESS = re.compile(r"public|private|protected")
HEAD = re.compile(r"^(.*?)\s*((?:\w+\s*::\s*)*~?\w+)\s*$", re.DOTALL)

# Text that is a value, not a failure, though its name or doc trips the rule:
# (header, function) -> why it is a value.
VALUES = {
    ("harness/agent/cases/unclean_mark.hpp", "reason"): "the stored mark's sentence (412 text, health refusal)",
    ("harness/agent/cases/unclean_mark.hpp", "reason_in_health"): "reason() of the mark a health answer carries",
    ("harness/campaign/check/ab_report.hpp", "check_markdown"): "the Markdown report of `harness check`",
    ("harness/campaign/commands/check_command.hpp", "fresh_check_db"): "a new DB path for `harness check`",
    ("harness/case/control/policy.hpp", "why"): "ParamError's message without its field (an accessor)",
    ("harness/pool/capacity.hpp", "refusal"): "CapacityVerdict's text of its own verdict (an accessor)",
    ("harness/pool/libvirt/virt.hpp", "last_error"): "libvirt's message of its last error, read for a throw",
    ("harness/vm/subprocess.hpp", "run_checked"): "a command's stdout; a failed command throws",
    ("qualify/qualify.hpp", "reasons"): "a qualification report's reasons (docs/DESIGN.md: the model of a value)",
    ("results/store/attempts.hpp", "last_attempt_error"): "a stored column of the results DB",
}


def strip_templates(head):
    """`head` without its `template <...>` prefixes (nested angle brackets included)."""
    while (m := re.search(r"\btemplate\s*<", head)):
        depth, i = 1, m.end()
        while depth and i < len(head):
            depth += {"<": 1, ">": -1}.get(head[i], 0)
            i += 1
        head = head[:m.start()] + head[i:]
    return head


def matching(code, i, open_, close):
    """Index of the bracket closing the one at i."""
    depth = 0
    for j in range(i, len(code)):
        depth += 1 if code[j] == open_ else -1 if code[j] == close else 0
        if depth == 0:
            return j
    return len(code) - 1


def declarations(code):
    """(offset of the declaration, offset of its '(', name, return type, parameters) of each function
    declared at namespace or class scope of `code` (comments and literals blanked); function bodies
    and initialisers are skipped."""
    out, start, seen, i, n = [], 0, False, 0, len(code)
    while i < n:
        c = code[i]
        if c == "#" and code[code.rfind("\n", 0, i) + 1:i].strip() == "":
            while (end := code.find("\n", i)) > 0 and code[end - 1] == "\\":
                i = end + 1
            i, start, seen = (n if end < 0 else end), (n if end < 0 else end), False
        elif c in ";}" or (c == ":" and ACCESS.fullmatch(code[start:i].strip())):
            start, seen = i + 1, False
        elif c == "{":
            if seen or not SCOPE.search(code[start:i]):
                i = matching(code, i, "{", "}")  # a body or an initialiser: nothing in it is declared here
            start, seen = i + 1, False
        elif c == "(" and not seen and "=" not in code[start:i]:
            close = matching(code, i, "(", ")")
            m = HEAD.match(SPECIFIERS.sub(" ", strip_templates(code[start:i])).strip())
            if m:
                kind = re.sub(r"\s+", "", m.group(1))
                params = [p.strip() for p in split_top(code[i + 1:close])]
                first = start + len(code[start:i]) - len(code[start:i].lstrip())
                out.append((first, i, re.sub(r"\s+", "", m.group(2)), kind, params))
            seen, i = True, close
        i += 1
    return out


def split_top(text):
    """`text` split at its commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += 1 if ch in "(<[{" else -1 if ch in ")>]}" else 0
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur] if cur.strip() else parts


def doc_above(lines, line):
    """The comment lines just above 0-based `line` of `lines` (a // run or a /* */ block)."""
    doc, k = [], line - 1
    while k >= 0 and (s := lines[k].strip()) and (s.startswith(("//", "/*", "*")) or s.endswith("*/")):
        doc.append(s)
        k -= 1
    text = " ".join(re.sub(r"^(?://+|/\*+|\*+/?)", "", d).strip() for d in reversed(doc))
    return THROWS.sub(" ", QUOTED.sub(" ", text))


def offences(path, text):
    """One line `FILE:LINE: ...` per function of header `path` that returns or takes its failure as text."""
    code, _ = split_code(text)
    lines = text.split("\n")
    out = []
    for offset, paren, name, kind, params in declarations(code):
        text_out = [p for p in params if OUT_PARAM.search(p) and not re.search(r"\bconst\b", p)]
        if kind not in TEXT_TYPES and not text_out:
            continue
        line = text.count("\n", 0, offset)
        short = name.split("::")[-1]
        said = [(where, m) for where, m in (("its name", WORDS.search(short)),
                                            ("its parameter", WORDS.search(" ".join(text_out))),
                                            ("the comment above it", DOC_WORDS.search(doc_above(lines, line)))) if m]
        if not said or (path, short) in VALUES:
            continue
        form = f"returns {kind}" if kind in TEXT_TYPES else f"takes {' '.join(text_out[0].split())}"
        where, m = said[0]
        out.append(f"{path}:{text.count(chr(10), 0, paren) + 1}: {name} {form} and {where} says '{m.group(0)}': "
                   f"return harness::Expected<T> or harness::Checked")
    return out


def sources(root):
    """Tracked product headers (a file deleted in the work tree but still tracked is left out)."""
    files = subprocess.run(["git", "-C", str(root), "ls-files", "*.hpp"], capture_output=True, text=True,
                           check=True).stdout.split()
    return [f for f in files if not f.startswith("tests/") and (root / f).is_file()]


def main(argv):
    root = pathlib.Path(argv[1])
    found, headers = [], sources(root)
    for f in headers:
        found += offences(f, (root / f).read_text(errors="replace"))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} function(s) returning or taking a failure as text (docs/DESIGN.md \"Errors\")")
        return 1
    print(f"{len(headers)} product headers: no function hands back its failure as text (docs/DESIGN.md \"Errors\")")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
