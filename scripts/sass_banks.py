#!/usr/bin/env python3
"""Register-bank conflicts of the FFMA streams in an sm_90 cubin, without a disassembler.

Decodes every `FFMA Rd, Ra, Rb, Rc` (opcode 0x223) from the ELF's .text sections with its
operand-reuse flags, and counts the extra register-file reads that share a bank:

    bank(R) = R mod 2 (two banks); an FFMA reads from the register file every source operand
    that the previous FFMA did not flag for reuse in the same slot, and each read beyond the first
    in one bank costs a cycle.

The model predicts the issue rate 1 / (1 + extra reads per FFMA). Measured on an H100 against 16
register-only FFMA loops (results/nvidia-h100/apply-qt-h-register-banks/), one warp per scheduler
issues at 0.89-1.09 of the predicted rate (median 0.95); banks by R mod 4 or (R / 2) mod 2 do
not fit.

    nvcc -O3 -arch=sm_90a -cubin -o k.cubin k.cu
    scripts/sass_banks.py k.cubin [KERNEL_REGEX] [--dump] [--by-barrier]
    scripts/sass_banks.py --self-test
"""
import argparse
import re
import struct
import sys

FFMA = 0x223  # FFMA with three register sources
BAR = 0xb1d   # BAR.SYNC (__syncthreads)
RZ = 255


def text_sections(path):
    """(kernel name, code bytes) for each .text.<kernel> section of an ELF64 cubin."""
    b = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    headers = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    for h in headers:
        start = names + h[0]
        name = b[start:b.index(b'\0', start)].decode()
        if name.startswith('.text.'):
            yield name[len('.text.'):], b[h[4]:h[4] + h[5]]


def instructions(code):
    """Per 16-byte instruction: (opcode, the three register fields a, b, c, the reuse bits); the
    register fields mean sources only for an FFMA."""
    for off in range(0, len(code), 16):
        lo, hi = struct.unpack_from('<QQ', code, off)
        yield lo & 0xfff, ((lo >> 24) & 0xff, (lo >> 32) & 0xff, hi & 0xff), (hi >> 58) & 0x7


def ffmas(code):
    """Per 16-byte instruction: None, or (sources (a, b, c), reuse bits) of an FFMA."""
    for op, srcs, reuse in instructions(code):
        yield (srcs, reuse) if op == FFMA else None


def extra_reads(code, by_barrier=False):
    """(FFMAs, extra same-bank reads) over the whole kernel, or a list of them per stretch between
    BAR.SYNC instructions (in code order, FFMA-free stretches left out); any instruction other than
    an FFMA ends a reuse chain."""
    cached, count, extra, stretches = {}, 0, 0, []
    for op, srcs, reuse in instructions(code):
        if op == BAR and by_barrier and count:
            stretches.append((count, extra))
            count, extra = 0, 0
        if op != FFMA:
            cached = {}
            continue
        reads = {r for slot, r in enumerate(srcs) if r != RZ and cached.get(slot) != r}
        cached = {slot: r for slot, r in enumerate(srcs) if reuse >> slot & 1}
        banks = [r % 2 for r in reads]
        count += 1
        extra += len(banks) - len(set(banks))
    if not by_barrier:
        return count, extra
    return stretches + ([(count, extra)] if count else [])


# Encodings taken from `cuobjdump -sass` of an sm_90a cubin: FFMA R5, R28.reuse, R60, R5; FFMA R4,
# R28.reuse, R64, R4; FFMA R27, R28, R88, R27; an LDS.128; FFMA R5, R28, R61, R5.
SAMPLE = [(0x0000003c1c057223, 0x040fe20000000005), (0x000000401c047223, 0x040fe20000000004),
          (0x000000581c1b7223, 0x000fe2000000001b), (0x0000000020187984, 0x000e280000000c00),
          (0x0000003d1c057223, 0x000fe20000000005)]
BAR_SYNC = (0x0000000000007b1d, 0x000fec0000010000)  # BAR.SYNC.DEFER_BLOCKING 0x0


def self_test():
    code = b''.join(struct.pack('<QQ', lo, hi) for lo, hi in SAMPLE)
    decoded = [ins for ins in ffmas(code)]
    want = [((28, 60, 5), 1), ((28, 64, 4), 1), ((28, 88, 27), 0), None, ((28, 61, 5), 0)]
    if decoded != want:
        print('FAIL: decoded', decoded, 'want', want)
        return 1
    # R28, R60 clash; R28 cached, R64 and R4 clash; R28 cached, R88 and R27 apart; after the LDS
    # nothing is cached: R28, R61, R5 read, R61 and R5 clash.
    got = extra_reads(code)
    if got != (4, 3):
        print('FAIL: (FFMAs, extra reads)', got, 'want (4, 3)')
        return 1
    # A barrier after the first two FFMAs splits them from the other two, and ends the reuse of
    # R28: the third FFMA now reads R28 and R88 from one bank.
    split = b''.join(struct.pack('<QQ', lo, hi) for lo, hi in SAMPLE[:2] + [BAR_SYNC] + SAMPLE[2:])
    got = extra_reads(split, by_barrier=True)
    if got != [(2, 2), (2, 2)]:
        print('FAIL: per barrier', got, 'want [(2, 2), (2, 2)]')
        return 1
    print('sass_banks self-test passed')
    return 0


def main():
    if sys.argv[1:] == ['--self-test']:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('cubin')
    ap.add_argument('kernel', nargs='?', default='', help='regular expression on the mangled kernel name')
    ap.add_argument('--dump', action='store_true', help='list each FFMA with its reuse flags and parities')
    ap.add_argument('--by-barrier', action='store_true', help='also each stretch between BAR.SYNCs, in code order')
    args = ap.parse_args()
    for name, code in text_sections(args.cubin):
        if not re.search(args.kernel, name):
            continue
        count, extra = extra_reads(code)
        if not count:
            continue
        print(f'{name}: {count} FFMA, {extra / count:.2f} extra reads each, predicted issue rate {1 / (1 + extra / count):.2f}')
        if args.by_barrier:
            for i, (n, e) in enumerate(extra_reads(code, by_barrier=True)):
                print(f'  stretch {i}: {n} FFMA, predicted issue rate {1 / (1 + e / n):.2f}')
        if args.dump:
            for ins in ffmas(code):
                if ins is None:
                    continue
                (a, b, c), reuse = ins
                flags = ''.join('r' if reuse >> s & 1 else '-' for s in range(3))
                print(f'  FFMA R{a}, R{b}, R{c}  reuse {flags}  parity {a % 2}{b % 2}{c % 2}')


if __name__ == '__main__':
    sys.exit(main())
