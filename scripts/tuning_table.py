#!/usr/bin/env python3
"""Prints the tuning table an experiment's summary derived on a GPU (a result of that experiment
whose data holds "tuning_table"), ready to store under configs/tuning/:

    scripts/tuning_table.py REPORT.json volkov08.sgemm_tune > configs/tuning/sgemm_simt.json
    scripts/tuning_table.py REPORT.json volkov08.fig5       > configs/tuning/sgemm_splitk.json
    scripts/tuning_table.py REPORT.json anderson10.fig7     > configs/tuning/caqr.json

Exits 1 when the report holds no such result."""
import json
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        report = json.load(f)
    tables = [r["data"]["tuning_table"] for r in report.get("results", [])
              if r.get("experiment") == argv[2] and "tuning_table" in r.get("data", {})]
    if not tables:
        print(f"{argv[1]}: no {argv[2]} result with a tuning table", file=sys.stderr)
        return 1
    json.dump(tables[-1], sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
