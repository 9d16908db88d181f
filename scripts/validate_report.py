#!/usr/bin/python3
"""Validate gpufact reports against core/report/report.schema.json.

usage: validate_report.py SCHEMA REPORT [REPORT...]

Prints "ok FILE" for a valid report, or "invalid FILE: <path>: <message>" for each error (at
most 10 per file, the rest counted). Exit status: 0 when every report is valid, 1 when any is
invalid or unreadable, 2 on a usage error (wrong arguments, unreadable or malformed schema).
Needs python3-jsonschema (Debian 12 ships 4.10).
"""

import json
import re
import sys

MAX_ERRORS = 10


def usage(message=None):
    if message:
        print(f"validate_report.py: {message}", file=sys.stderr)
    print("usage: validate_report.py SCHEMA REPORT [REPORT...]", file=sys.stderr)
    sys.exit(2)


def json_path(error):
    """'$.results[3].metrics[0].value', '$.experiments["host.blas"].plots[0]': where the error is."""
    path = "$"
    for part in error.absolute_path:
        if isinstance(part, int):
            path += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(part)):
            path += f".{part}"
        else:
            path += f"[{json.dumps(str(part), ensure_ascii=False)}]"  # $.experiments["host.blas"]
    return path


def short(text, limit=300):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def reject_constant(name):
    # Python's json module accepts NaN/Infinity/-Infinity, which are not JSON; refuse them as
    # any other reader of the report would (gpufact itself writes null for non-finite numbers).
    raise ValueError(f"{name} is not valid JSON")


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=reject_constant)


def path_key(error):
    return [f"{p:012d}" if isinstance(p, int) else str(p) for p in error.absolute_path]


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) < 3:
        usage()
    try:
        import jsonschema
    except ImportError:
        usage("python3-jsonschema is not installed (apt-get install python3-jsonschema)")

    schema_path, reports = argv[1], argv[2:]
    try:
        schema = load_json(schema_path)
    except (OSError, ValueError) as e:
        usage(f"cannot read schema {schema_path}: {e}")
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        usage(f"schema {schema_path} is not a valid JSON Schema: {e.message}")
    validator = cls(schema)

    all_ok = True
    for path in reports:
        try:
            doc = load_json(path)
        except OSError as e:
            print(f"invalid {path}: $: cannot read: {e.strerror or e}")
            all_ok = False
            continue
        except ValueError as e:
            print(f"invalid {path}: $: not valid JSON: {e}")
            all_ok = False
            continue
        errors = sorted(validator.iter_errors(doc), key=path_key)
        if not errors:
            print(f"ok {path}")
            continue
        all_ok = False
        for e in errors[:MAX_ERRORS]:
            print(f"invalid {path}: {json_path(e)}: {short(e.message)}")
        if len(errors) > MAX_ERRORS:
            print(f"invalid {path}: ...: {len(errors) - MAX_ERRORS} more errors not shown")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
