#!/usr/bin/env python3
"""Checks the SASS of the FMA probes (kernels/compute/fma_chains.cu, volkov08 §3.3-3.5): each
throughput kernel's loop is (512 / ILP) x ILP FFMA with nothing spilled, the shared-operand
kernels load every b with LDS, and the latency kernels run 256 FFMA per unrolled body.

usage: check_fma_sass.py LIBRARY_OR_OBJECT
Exits 77 (ctest: skipped) when cuobjdump is not installed."""
import re
import sys

from sass_listing import functions_of


def main():
    found = functions_of(sys.argv[1])
    if found is None:
        return 77
    failures, checked = [], 0
    for name, ins in found.items():
        ops = [op.split(".")[0] for _, op, _ in ins]
        count = {op: ops.count(op) for op in set(ops)}
        ffma, lds = count.get("FFMA", 0), count.get("LDS", 0)
        spills = count.get("LDL", 0) + count.get("STL", 0)
        m = re.search(r"fma_chains(_shared)?_kernelILi(\d)E", name)
        if m:
            checked += 1
            ilp = int(m.group(2))
            loop = (512 // ilp) * ilp
            # The loop's FFMAs plus at most one per chain for the start values.
            if not loop <= ffma <= loop + ilp + 2:
                failures.append(f"{name}: {ffma} FFMA, expected {loop} in the loop (+ <= {ilp} for start values)")
            if m.group(1) and lds < loop:
                failures.append(f"{name}: {lds} LDS, expected one per FMA ({loop})")
            if spills:
                failures.append(f"{name}: {spills} local-memory spill instructions")
        elif "fma_latency_kernel" in name:
            checked += 1
            if ffma < 256 or ffma % 256 > 4:
                failures.append(f"{name}: {ffma} FFMA, expected 256 per unrolled body")
    if checked < 19:
        failures.append(f"found {checked} FMA probe kernels, expected 19 (8 + 8 throughput, 3 latency)")
    for f in failures:
        print("FAIL", f)
    print(f"{checked} kernels checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
