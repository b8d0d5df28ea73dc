#!/usr/bin/python3
"""Self-containment check of the repository's documentation.

Scans every text file of the source tree (docs, READMEs, source comments, report
templates in the analysis code, scripts, campaign files) and fails when

  1. a cited repository path (e.g. `harness/case/SPEC.md`, `analysis/README.md`,
     `case/SPEC.md`) does not exist in the repository;
  2. a file points outside the repository: the designer's shared folder or the
     development machine's work tree (the patterns are built below, so this file does
     not match itself);
  3. a cited section (`docs/DESIGN.md "The case"`) is not a heading of that page;
  4. a key the campaign loader (harness/campaign/model/campaign_yaml.cpp and its section readers,
     campaign_yaml_*.cpp: harness/campaign/model/campaign_yaml_sections.hpp), an engine's
     provider-block parser (harness/pool/*/*.cpp) or the hosts file reader
     (harness/pool/hosts/hosts_file.cpp) accepts is missing from docs/CAMPAIGN.md.

Usage: check_doc_paths.py SOURCE_DIR     (exit 0 = clean, 1 = findings listed on stderr)
"""
import os
import re
import sys

TEXT_EXT = {".md", ".hpp", ".cpp", ".h", ".py", ".sh", ".yaml", ".yml", ".sql", ".txt", ".in", ".cff", ".cmake"}
SKIP_DIRS = {".git", "build", "out", "__pycache__"}
TOP_DIRS = {"docs", "harness", "analysis", "canaries", "pressure", "qualify", "results", "campaigns", "tests"}
CITABLE_EXT = r"(?:md|hpp|cpp|h|py|sh|yaml|sql|cff|in|txt)"
# a repository-relative path: dir/.../name.ext, not preceded by a path character
PATH_RE = re.compile(r"(?<![A-Za-z0-9_./~$<>{}*-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\." + CITABLE_EXT + r")(?![A-Za-z0-9_/<>{}*])")
SECTION_RE = re.compile(r"((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]+\.md)[:,]?\s*\\?\"([^\"\\]{3,80})\\?\"")
OUTSIDE = [".." + "/shared", "/" + "work/", "/" + "work\\b"]


def repo_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not (rel == "." and x.startswith("build"))]
        for f in files:
            out.append(os.path.normpath(os.path.join(rel, f)))
    return out


def headings(path):
    hs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#+\s+(.*)", line)
            if m:
                hs.append(m.group(1).strip().strip("`").lower())
    return hs


def resolve(token, citing, fileset, suffixes):
    """The repository file a cited token names, or None."""
    if token in fileset or token + ".in" in fileset:  # .in: generated at configure time
        return token
    local = os.path.normpath(os.path.join(os.path.dirname(citing), token))
    if local in fileset:
        return local
    first = token.split("/")[0]
    if first in TOP_DIRS:
        return None  # a full path that does not exist
    return suffixes.get(token)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = repo_files(root)
    fileset = set(files)
    suffixes = {}
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            suffixes.setdefault("/".join(parts[i:]), f)
    # this check and its own test quote bad citations on purpose
    me = os.path.relpath(os.path.dirname(os.path.abspath(__file__)), root)
    problems = []
    scanned = cited = 0
    for f in sorted(files):
        # docs/samples/ holds verbatim output of a named real run (docs/CI.md): its paths are
        # that run's machine's, cited as they were written, not references into this repository.
        if os.path.splitext(f)[1] not in TEXT_EXT or f.startswith(me + "/") or "/fixtures/" in f or \
                f.startswith("docs/samples/"):
            continue
        try:
            text = open(os.path.join(root, f), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        scanned += 1
        for n, line in enumerate(text.splitlines(), 1):
            for pat in OUTSIDE:
                if re.search(pat, line):
                    problems.append(f"{f}:{n}: points outside the repository: {line.strip()[:120]}")
            for m in PATH_RE.finditer(line):
                token = m.group(1)
                if token.startswith(("./", "../")) or "//" in token:
                    continue
                first = token.split("/")[0]
                # only paths that look like repository paths: a top-level folder, or a
                # folder/file pair that some repository file ends with
                if first not in TOP_DIRS and token not in suffixes and not any(
                        p in TOP_DIRS for p in token.split("/")[:-1]):
                    continue
                cited += 1
                if resolve(token, f, fileset, suffixes) is None:
                    problems.append(f"{f}:{n}: cites {token}, which is not in the repository")
            for m in SECTION_RE.finditer(line):
                target = resolve(m.group(1), f, fileset, suffixes)
                if target is None and m.group(1) in fileset:
                    target = m.group(1)
                if target is None or not target.startswith("docs/"):
                    continue  # section checks for the docs/ pages (the ones source comments cite)
                section = m.group(2).lower()
                hs = headings(os.path.join(root, target))
                if not any(section == h or h.startswith(section) for h in hs):
                    problems.append(f"{f}:{n}: cites section \"{m.group(2)}\" of {target}, which has no such heading")
    # 4. campaign keys documented
    key_re = r"(?:scalar<[^>]+>\(|optional_scalar<[^>]+>\(|positive_int\(\w+, |child\(|get\()\"([a-z_]+)\""
    loader = ""
    campaign_dir = os.path.join(root, "harness/campaign/model")
    for f in sorted(os.listdir(campaign_dir)):
        if f == "campaign_yaml.cpp" or (f.startswith("campaign_yaml_") and f.endswith(".cpp")):
            loader += open(os.path.join(campaign_dir, f), encoding="utf-8").read()
    hosts = open(os.path.join(root, "harness/pool/hosts/hosts_file.cpp"), encoding="utf-8").read()
    engines = ""
    for d, _, fs in sorted(os.walk(os.path.join(root, "harness/pool"))):
        for f in sorted(fs):
            if f.endswith(".cpp") and f != "hosts_file.cpp":
                engines += open(os.path.join(d, f), encoding="utf-8").read()
    doc = open(os.path.join(root, "docs/CAMPAIGN.md"), encoding="utf-8").read()
    keys = set(re.findall(key_re, loader)) | set(re.findall(key_re, engines))
    kinds = set(re.findall(r"\{\"([a-z0-9_]+)\", \{(?:true|false)", loader))
    host_keys = set(re.findall(key_re, hosts))
    if len(keys) < 30 or len(kinds) < 5 or len(host_keys) < 4:
        problems.append(f"campaign key extraction found too few keys ({len(keys)}, {len(kinds)}, {len(host_keys)}): "
                        "update this check to the loader's code")
    for k in sorted(keys | kinds | host_keys):
        if not re.search(r"[`.\[]" + re.escape(k) + r"[`.\[]", doc):
            problems.append(f"docs/CAMPAIGN.md: campaign/hosts key or assertion kind `{k}` is not documented")
    print(f"check_doc_paths: {scanned} files scanned, {cited} path citations, "
          f"{len(keys)} campaign keys, {len(kinds)} assertion kinds, {len(host_keys)} hosts keys", file=sys.stderr)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
