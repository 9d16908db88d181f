#!/usr/bin/env python3
"""Per-kernel totals of a gpufact_ktrace timeline (CSV, optionally .xz).

    scripts/ktrace_summary.py TRACE.csv[.xz] [--top N] [--match TEXT] [--streams]
    scripts/ktrace_summary.py TRACE.csv[.xz] --timeline FROM:TO [--after TEXT] [--match TEXT]
    scripts/ktrace_summary.py TRACE.csv[.xz] --sm-time FROM:TO [--after TEXT] [--sms N]
    scripts/ktrace_summary.py --self-test

Prints, busiest first, each kernel (name cut at its template arguments' first '<' or '('), its
launches, total and mean GPU time in microseconds and its share of the summed kernel time; memcpy
and memset entries are grouped by kind. --match keeps only names containing TEXT. --streams
groups by stream and kernel instead, so the panel and update streams of a look-ahead show apart.

--timeline FROM:TO lists the entries that start FROM..TO microseconds after the trace's first
entry (or after the last start of a kernel whose name contains --after TEXT, e.g. the input check
that opens the last timed call), in start order: offset, duration, gap since the stream's
previous entry ended, stream, grid and name. That shows a critical chain: what runs back to back
on one stream and where it waits.

--sm-time FROM:TO (same window and --after) asks whether the window's kernels, side by side on
several streams, are bound by the chain or by the SMs: per kernel, the SM-time its blocks hold,
duration × min(SMs, grid / blocks per SM), with blocks per SM from its registers (64K a Hopper
SM, a warp's allocated in 256s), shared memory (228 KB, 1 KB more a block) and threads (2048),
against the window's span × SMs (--sms, 132 for an H100). An upper bound (a launch's last blocks
count as if they held their SMs to its end); near or past 100% the SMs, not the chain, set the time.
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


def window(spec, option, rows, plain, after):
    """(FROM, TO, origin in ns) of a FROM:TO window over rows sorted by start, or an exit code:
    the origin is the first row's start, or the last start of a kernel whose name contains `after`."""
    try:
        lo, hi = (float(x) for x in spec.split(":"))
    except ValueError:
        print(f"{option}: expected FROM:TO in microseconds, got '{spec}'", file=sys.stderr)
        return 2
    if not rows:
        print("no entries", file=sys.stderr)
        return 1
    origin = int(rows[0]["start_ns"])
    if after:
        starts = [int(r["start_ns"]) for r in rows if r["kind"] == "kernel" and after in short_name(plain[r["name"]])]
        if not starts:
            print(f"--after: no kernel name contains '{after}'", file=sys.stderr)
            return 1
        origin = starts[-1]
    return lo, hi, origin


def timeline(rows, plain, args) -> int:
    rows = sorted(rows, key=lambda r: int(r["start_ns"]))
    w = window(args.timeline, "--timeline", rows, plain, args.after)
    if isinstance(w, int):
        return w
    lo, hi, origin = w
    names = [short_name(plain[r["name"]]) if r["kind"] == "kernel" else f"{r['kind']} {r['name']}" for r in rows]
    print(f"{'start us':>10s} {'dur us':>8s} {'gap us':>8s} {'stream':>6s} {'grid':>6s}  name")
    stream_end = {}
    for r, name in zip(rows, names):
        start, end, stream = int(r["start_ns"]), int(r["end_ns"]), r["stream"]
        gap = (start - stream_end[stream]) * 1e-3 if stream in stream_end else float("nan")
        stream_end[stream] = max(end, stream_end.get(stream, end))
        offset = (start - origin) * 1e-3
        if offset < lo or offset > hi or (args.match and args.match not in name):
            continue
        print(f"{offset:10.1f} {(end - start) * 1e-3:8.1f} {gap:8.1f} {stream:>6s} {r['grid'] or '':>6s}  {name[:70]}")
    return 0


def blocks_per_sm(row) -> int:
    """Thread blocks of this launch one Hopper SM holds at once, by registers, shared memory and threads."""
    threads = max(1, int(row["block"] or 1))
    warps = (threads + 31) // 32
    regs = max(1, int(row["registers"] or 1))
    per_warp = (regs * 32 + 255) // 256 * 256
    by_regs = 65536 // (per_warp * warps)
    shared = int(row["shared_bytes"] or 0)
    by_shared = 233472 // (shared + 1024)
    return max(1, min(by_regs, by_shared, 2048 // threads, 32))


def sm_time(rows, plain, args) -> int:
    kernels = sorted((r for r in rows if r["kind"] == "kernel"), key=lambda r: int(r["start_ns"]))
    w = window(args.sm_time, "--sm-time", kernels, plain, args.after)
    if isinstance(w, int):
        return w
    lo, hi, origin = w
    held = collections.Counter()
    first = last = None
    for r in kernels:
        start, end = int(r["start_ns"]), int(r["end_ns"])
        if not lo <= (start - origin) * 1e-3 <= hi:
            continue
        first = start if first is None else min(first, start)
        last = end if last is None else max(last, end)
        sms = min(args.sms, int(r["grid"] or 1) / blocks_per_sm(r))
        held[short_name(plain[r["name"]])] += (end - start) * 1e-3 * sms
    if first is None:
        print("no kernels in the window", file=sys.stderr)
        return 1
    span = (last - first) * 1e-3
    print(f"span {span:.1f} us x {args.sms} SMs = {span * args.sms:.0f} SM-us; "
          f"kernels held {sum(held.values()):.0f} ({100 * sum(held.values()) / (span * args.sms):.0f}%)")
    for name, t in held.most_common(args.top):
        print(f"{name[:60]:60s} {t:11.0f} {100 * t / (span * args.sms):5.1f}%")
    return 0


SELF_TEST_TRACE = """kind,start_ns,end_ns,stream,grid,block,shared_bytes,registers,name
kernel,1000,3000,7,1,256,0,32,"check_kernel"
kernel,4000,9000,7,16,256,0,64,"panel_kernel<float>(float*)"
memcpy,9500,10000,7,,,,,"64 bytes, kind 8"
kernel,5000,20000,8,100,128,0,40,"update_kernel"
kernel,21000,22000,7,1,256,0,32,"check_kernel"
kernel,24000,26000,7,16,256,0,64,"panel_kernel<float>(float*)"
"""


def self_test() -> int:
    import contextlib
    import io
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.csv")
        with open(path, "w") as f:
            f.write(SELF_TEST_TRACE)

        def run(*argv):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                sys.argv = ["ktrace_summary.py", path, *argv]
                rc = main()
            return rc, out.getvalue().splitlines()

        rc, lines = run("--top", "2")
        assert rc == 0 and lines[1].split()[:3] == ["update_kernel", "1", "15.0"], lines
        assert lines[2].split()[:3] == ["panel_kernel", "2", "7.0"], lines
        rc, lines = run("--timeline", "0:10", "--after", "check")  # the last check opens the window
        assert rc == 0 and len(lines) == 3, lines
        offset, duration, gap = (float(x) for x in lines[2].split()[:3])
        assert (offset, duration, gap) == (3.0, 2.0, 2.0), lines
        rc, lines = run("--timeline", "0:100", "--match", "memcpy")
        assert rc == 0 and len(lines) == 2 and lines[1].split()[:3] == ["8.5", "0.5", "0.5"], lines
        assert run("--timeline", "x")[0] == 2
        # panel_kernel: 16 blocks of 8 warps at 64 registers (16K a block), 4 a SM: 4 SMs for 5 and
        # 2 us; update_kernel: 100 blocks of 4 warps at 40 registers (5K), 12 a SM: 8.3 SMs for 15 us.
        rc, lines = run("--sm-time", "0:10", "--after", "check", "--sms", "10")
        assert rc == 0 and lines[0].startswith("span 5.0 us x 10 SMs = 50 SM-us; kernels held 8 "), lines
        rc, lines = run("--sm-time", "0:30", "--sms", "10")
        assert rc == 0 and lines[1].split()[:2] == ["update_kernel", "125"], lines
        assert lines[2].split()[:2] == ["panel_kernel", "28"], lines
        assert run("--sm-time", "5:1")[0] == 1
        assert run("--timeline", "0:1", "--after", "nosuch")[0] == 1
    print("ktrace_summary self-test passed")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", default="")
    parser.add_argument("--streams", action="store_true")
    parser.add_argument("--timeline", default="")
    parser.add_argument("--after", default="")
    parser.add_argument("--sm-time", default="")
    parser.add_argument("--sms", type=int, default=132)
    args = parser.parse_args()
    opener = lzma.open if args.trace.endswith(".xz") else open
    with opener(args.trace, "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    plain = demangle(sorted({r["name"] for r in rows if r["kind"] == "kernel"}))
    if args.timeline:
        return timeline(rows, plain, args)
    if args.sm_time:
        return sm_time(rows, plain, args)
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
