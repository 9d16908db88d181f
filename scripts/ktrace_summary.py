#!/usr/bin/env python3
"""Per-kernel totals of a gpufact_ktrace timeline (CSV, optionally .xz).

    scripts/ktrace_summary.py TRACE.csv[.xz] [--top N] [--match TEXT] [--streams]

Prints, busiest first, each kernel (name cut at its template arguments' first '<' or '('), its
launches, total and mean GPU time in microseconds and its share of the summed kernel time; memcpy
and memset entries are grouped by kind. --match keeps only names containing TEXT. --streams
groups by stream and kernel instead, so the panel and update streams of a look-ahead show apart.
"""
import argparse
import collections
import csv
import lzma
import re
import shutil
import subprocess
import sys


def demangle(names):
    """Names through c++filt where the machine has it, else unchanged."""
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, check=False).stdout
    lines = out.splitlines()
    return dict(zip(names, lines)) if len(lines) == len(names) else {n: n for n in names}


def short_name(name: str) -> str:
    name = re.sub(r"\(anonymous namespace\)::", "", name)
    name = re.sub(r"^void ", "", name)
    for stop in ("<", "("):
        if stop in name:
            name = name[: name.index(stop)]
    return name.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", default="")
    parser.add_argument("--streams", action="store_true")
    args = parser.parse_args()
    opener = lzma.open if args.trace.endswith(".xz") else open
    with opener(args.trace, "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    plain = demangle(sorted({r["name"] for r in rows if r["kind"] == "kernel"}))
    count = collections.Counter()
    total = collections.Counter()
    for row in rows:
        kind = row["kind"]
        name = short_name(plain[row["name"]]) if kind == "kernel" else kind
        if args.match and args.match not in name:
            continue
        if args.streams:
            name = f"[{row['stream']}] {name}"
        count[name] += 1
        total[name] += (int(row["end_ns"]) - int(row["start_ns"])) * 1e-3
    if not total:
        print("no entries", file=sys.stderr)
        return 1
    whole = sum(total.values())
    print(f"{'kernel':60s} {'launches':>8s} {'total us':>11s} {'mean us':>9s} {'share':>6s}")
    for name, t in total.most_common(args.top):
        print(f"{name[:60]:60s} {count[name]:8d} {t:11.1f} {t / count[name]:9.2f} {100 * t / whole:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
