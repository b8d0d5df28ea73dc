#!/usr/bin/python3
"""Validates a KCIDB I/O file against a JSON Schema, as KCIDB's own validator would, plus the
rules KCIDB states in words: every id starts with its object's origin and a colon, ids are unique
per object type, and every checkout_id / build_id names an object of the file.

Usage: kcidb_validate.py SCHEMA FILE
Exit 0 when valid; 1 with one line per problem ("FILE: <where>: <message>"); 2 on bad usage or an
unreadable file. Uses Debian's python3-jsonschema (Draft 7, its format checker: uri through
python3-rfc3987) and checks date-time itself (RFC 3339, as KCIDB asks).
"""
import datetime
import json
import sys

import jsonschema


def date_time_checker():
    checker = jsonschema.FormatChecker()

    @checker.checks("date-time", raises=ValueError)
    def is_date_time(value):
        if not isinstance(value, str):
            return True
        if "T" not in value or not (value.endswith("Z") or value[-6] in "+-"):
            raise ValueError(f"{value!r} is not an RFC 3339 date-time with a zone")
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        return True

    return checker


def graph_problems(doc):
    """KCIDB's rules in words: ids carry their origin, are unique, and refer to objects present."""
    problems = []
    ids = {}
    for kind in ("checkouts", "builds", "tests"):
        seen = set()
        for i, obj in enumerate(doc.get(kind, [])):
            oid, origin = obj.get("id", ""), obj.get("origin", "")
            if not oid.startswith(origin + ":"):
                problems.append(f"{kind}[{i}].id: {oid!r} does not start with its origin {origin!r} and ':'")
            if oid in seen:
                problems.append(f"{kind}[{i}].id: {oid!r} is not unique among the {kind}")
            seen.add(oid)
        ids[kind] = seen
    for kind, ref, target in (("builds", "checkout_id", "checkouts"), ("tests", "build_id", "builds")):
        for i, obj in enumerate(doc.get(kind, [])):
            if obj.get(ref) not in ids[target]:
                problems.append(f"{kind}[{i}].{ref}: {obj.get(ref)!r} names no object of {target}")
    return problems


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            schema = json.load(f)
        with open(argv[2], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{argv[2]}: unreadable: {e}", file=sys.stderr)
        return 2
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema, format_checker=date_time_checker())
    problems = [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
                for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]
    if not problems:
        problems = graph_problems(doc)
    for p in problems:
        print(f"{argv[2]}: {p}")
    if problems:
        return 1
    print(f"{argv[2]}: valid ({len(doc.get('checkouts', []))} checkout(s), {len(doc.get('builds', []))} build(s), "
          f"{len(doc.get('tests', []))} test(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
