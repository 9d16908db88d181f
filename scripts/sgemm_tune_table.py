#!/usr/bin/env python3
"""Writes the SIMT SGEMM tuning table (configs/tuning/sgemm_simt.json format) from a gpufact
report that ran volkov08.sgemm_tune: the summary's "tuning_table" result.

usage: sgemm_tune_table.py REPORT.json > configs/tuning/sgemm_simt.json"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        report = json.load(f)
    tables = [r["data"]["tuning_table"] for r in report.get("results", [])
              if r.get("experiment") == "volkov08.sgemm_tune" and "tuning_table" in r.get("data", {})]
    if not tables:
        print(f"{sys.argv[1]}: no volkov08.sgemm_tune summary with a tuning table", file=sys.stderr)
        return 1
    json.dump(tables[-1], sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
