#!/usr/bin/env python3
"""Prints the split-k table that volkov08.fig5's summary derived from its sweep (the fastest
explicit `splits` per (m, n, k)), ready to store as configs/tuning/sgemm_splitk.json:

    scripts/splitk_table.py REPORT.json > configs/tuning/sgemm_splitk.json

Exits 1 when the report holds no such result (run volkov08.fig5 with explicit splits values)."""
import json
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        report = json.load(f)
    tables = [r["data"]["table"] for r in report.get("results", [])
              if r.get("artifact") == "volkov08.fig5 splitk table" and "table" in r.get("data", {})]
    if not tables:
        print(f"{argv[1]}: no 'volkov08.fig5 splitk table' result", file=sys.stderr)
        return 1
    print(json.dumps(tables[-1], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
