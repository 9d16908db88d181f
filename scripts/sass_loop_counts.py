#!/usr/bin/env python3
"""Instruction mix of the main loop of each sgemm_volkov kernel, read from its SASS (volkov08
§4.4: the performance estimate counts the inner loop's instructions in the disassembly).

usage: sass_loop_counts.py --cuobjdump=TOOL LIBRARY OUT.cpp   (build step; TOOL may be empty)
       sass_loop_counts.py --sass FILE OUT.cpp                 (from saved `cuobjdump -sass` text)
       sass_loop_counts.py --cuobjdump=TOOL BINARY --json      (the JSON object on stdout: gpufact
                                                                runs this on itself when it was
                                                                built where cuobjdump was missing;
                                                                only the six kernels are
                                                                disassembled where their names are
                                                                found in BINARY, else all of it)
       sass_loop_counts.py --self-test

The main loop of a kernel is the span [target, branch] of the backward branch that encloses the
most FFMA. In it we count FFMA, FFMA with a shared-memory operand (none on sm_90: FFMA takes no
memory operand, each shared operand is an LDS), LDS, and every other instruction. OUT.cpp defines
gpufact::factorizations::kSgemmVolkovSassJson, a JSON object:
  {"available": true, "loops": {"nn/paper": {"total": .., "ffma": .., "ffma_shared_operand": ..,
   "lds": .., "other": ..}, ...}}
or {"available": false, "reason": "..."} when cuobjdump is missing or fails: the estimate is then
reported as unavailable, never made up."""
import json
import re
import subprocess
import sys

VARIANTS = ["paper", "no_fetch", "no_prefetch"]
KERNELS = 2 * len(VARIANTS)  # NN and NT of each
KERNEL = re.compile(r"sgemm_volkov_(nn|nt)_kernelILi(\d)E")
INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(.*?)\s*;?\s*(?:/\*.*)?$")
LABEL = re.compile(r"^\s*(\.L_x_\d+):\s*$")
BRANCH = re.compile(r"\bBRA(?:\.[A-Z0-9_.]+)?\s+(?:`\(([^)]+)\)|(0x[0-9a-fA-F]+))")


def parse_functions(sass):
    """{function name: [(address, opcode, text)]}, branch targets resolved to addresses."""
    funcs, name, labels, pending = {}, None, {}, []
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            funcs[name] = []
            labels[name] = {}
            pending = []
            continue
        if name is None:
            continue
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSTR.match(line)
        if not m or not m.group(2) or m.group(2).startswith("0x"):
            continue
        addr = int(m.group(1), 16)
        for label in pending:
            labels[name][label] = addr
        pending = []
        text = m.group(2).strip().rstrip(";").strip()
        body = re.sub(r"^@!?U?P[T0-9]+\s+", "", text)
        opcode = body.split()[0] if body else ""
        funcs[name].append((addr, opcode, body))
    resolved = {}
    for fname, instrs in funcs.items():
        out = []
        for addr, opcode, body in instrs:
            target = None
            if opcode.split(".")[0] == "BRA":
                b = BRANCH.search(body)
                if b and b.group(1):
                    target = labels[fname].get(b.group(1))
                elif b and b.group(2):
                    target = int(b.group(2), 16)
            out.append((addr, opcode, body, target))
        resolved[fname] = out
    return resolved


def main_loop_mix(instrs):
    best = None
    for addr, opcode, body, target in instrs:
        if target is None or target > addr:
            continue
        span = [i for i in instrs if target <= i[0] <= addr]
        ffma = sum(1 for i in span if i[1].split(".")[0] == "FFMA")
        if best is None or ffma > best[0]:
            best = (ffma, span)
    if best is None or best[0] == 0:
        return None
    span = best[1]
    ops = [i[1].split(".")[0] for i in span]
    ffma = ops.count("FFMA")
    # An FFMA operand in shared memory would read like [R4+0x10] (G80's local-memory operand).
    ffma_shared = sum(1 for i in span if i[1].split(".")[0] == "FFMA" and "[" in i[2])
    lds = sum(1 for op in ops if op == "LDS")
    return {"total": len(ops), "ffma": ffma, "ffma_shared_operand": ffma_shared, "lds": lds,
            "other": len(ops) - ffma - lds}


def loops_from_sass(sass):
    loops = {}
    for name, instrs in parse_functions(sass).items():
        m = KERNEL.search(name)
        if not m or int(m.group(2)) >= len(VARIANTS):
            continue
        mix = main_loop_mix(instrs)
        if mix:
            loops[m.group(1) + "/" + VARIANTS[int(m.group(2))]] = mix
    return loops


# A kernel's device name as the host code registers it: a NUL-terminated string in the binary
# (the host's own symbol for it has internal linkage, ...L22sgemm_volkov...; PTX names its
# parameters ..._param_N).
KERNEL_NAME = re.compile(
    rb"(?<![A-Za-z0-9_])_ZN[A-Za-z0-9_]*?[^L0-9][0-9]+sgemm_volkov_n[nt]_kernelILi[0-9]E[A-Za-z0-9_]*(?=\0)")


def kernel_names(blob):
    """The sgemm_volkov kernels' device names found in a binary's bytes (not inside the host
    stubs' symbols)."""
    return sorted({m.group(0).decode() for m in KERNEL_NAME.finditer(blob) if b"_param_" not in m.group(0)})


def document_at_run_time(tool, binary):
    """The document from BINARY's own SASS. The whole binary's SASS took 45-50 s on a GPU node, so
    only the six kernels are disassembled (cuobjdump -fun) where their names are found."""
    try:
        with open(binary, "rb") as f:
            names = kernel_names(f.read())
    except OSError:
        names = []
    name = binary.split("/")[-1]
    if len(names) == KERNELS:
        run = subprocess.run([tool, "-sass", "-fun", ",".join(names), binary], capture_output=True, text=True)
        if run.returncode == 0:
            doc = document(run.stdout, f"cuobjdump -sass -fun <the {KERNELS} kernels> {name} (at run time)")
            if doc["available"]:
                return doc
    run = subprocess.run([tool, "-sass", binary], capture_output=True, text=True)
    if run.returncode != 0:
        return {"available": False, "reason": f"{tool} -sass failed: {run.stderr.strip()[:300]}"}
    return document(run.stdout, f"cuobjdump -sass {name} (at run time)")


def write_cpp(path, doc):
    text = json.dumps(doc, indent=1, sort_keys=True)
    with open(path, "w") as f:
        f.write("// Generated by scripts/sass_loop_counts.py at build time; do not edit.\n")
        f.write("namespace gpufact::factorizations {\n")
        f.write('extern const char* const kSgemmVolkovSassJson;\n')
        f.write('const char* const kSgemmVolkovSassJson = R"json(' + text + ')json";\n')
        f.write("}  // namespace gpufact::factorizations\n")


def document(sass, origin):
    loops = loops_from_sass(sass)
    if len(loops) < KERNELS:
        return {"available": False,
                "reason": f"found the main loop of {len(loops)} of {KERNELS} sgemm_volkov kernels in {origin}"}
    return {"available": True, "source": origin, "loops": loops}


SAMPLE = """
	code for sm_90
		Function : _ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nt_kernelILi0EEEvlllfPKflS4_lfPfl
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                    /* 0x00000a00ff017b82 */
                                                                             /* 0x000fe40000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;
.L_x_1:
        /*0020*/                   STS [R3], R2 ;
        /*0030*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0040*/                   LDS R4, [UR4] ;
        /*0050*/                   FFMA R8, R5, R4, R8 ;
        /*0060*/                   LDS.128 R12, [UR4+0x10] ;
        /*0070*/                   FFMA R9, R5, R12, R9 ;
        /*0080*/                   FFMA R10, R5, R13, R10 ;
        /*0090*/               @P0 BRA `(.L_x_1) ;
        /*00a0*/                   EXIT ;
.L_x_2:
        /*00b0*/                   BRA `(.L_x_2);
		Function : _ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nn_kernelILi2EEEvlllfPKflS4_lfPfl
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   LDG.E R2, desc[UR6][R4.64] ;
        /*0020*/                   FFMA R8, R2, R4, R8 ;
        /*0030*/                   IADD3 R3, R3, 0x1, RZ ;
        /*0040*/                   FFMA R9, R2, R5, R9 ;
        /*0050*/              @!P1 BRA 0x20 ;
        /*0060*/                   EXIT ;
"""


def self_test():
    loops = loops_from_sass(SAMPLE)
    want = {"nt/paper": {"total": 8, "ffma": 3, "ffma_shared_operand": 0, "lds": 2, "other": 3},
            "nn/no_prefetch": {"total": 4, "ffma": 2, "ffma_shared_operand": 0, "lds": 0, "other": 2}}
    if loops != want:
        print("FAIL: got", loops, "want", want)
        return 1
    blob = (b"\0_ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nn_kernelILi0EEEvlllfPKflS4_lfPfl\0"
            b"_ZN7gpufact7kernels12_GLOBAL__N_1L22sgemm_volkov_nn_kernelILi1EEEvlllfPKflS4_lfPfl\0"
            b"_ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nn_kernelILi1EEEvlllfPKflS4_lfPfl_param_0\0"
            b"_ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nn_kernelILi2EEEvlllfPKflS4_lfPfl.cold\0"
            b"_ZZL131__device_stub__ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nn_kernelILi0EEEvlllfPKflS4_"
            b"lfPfllllfPKflS0_lfPflE8__handle\0_ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nt_kernelILi2EEEv"
            b"lllfPKflS4_lfPfl\0_ZN7gpufact7kernels4sgemmEv\0")
    names = kernel_names(blob)
    if names != ["_ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nn_kernelILi0EEEvlllfPKflS4_lfPfl",
                 "_ZN7gpufact7kernels12_GLOBAL__N_122sgemm_volkov_nt_kernelILi2EEEvlllfPKflS4_lfPfl"]:
        print("FAIL: kernel names", names)
        return 1
    doc = document(SAMPLE, "sample")
    if doc["available"]:
        print("FAIL: two kernels must not count as all six")
        return 1
    print("sass_loop_counts self-test passed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) == 4 and argv[1].startswith("--cuobjdump=") and argv[3] == "--json":
        tool, binary = argv[1][len("--cuobjdump="):], argv[2]
        print(json.dumps(document_at_run_time(tool, binary)))
        return 0
    if len(argv) == 4 and argv[1].startswith("--cuobjdump="):
        tool, library, out = argv[1][len("--cuobjdump="):], argv[2], argv[3]
        if not tool:
            write_cpp(out, {"available": False, "reason": "cuobjdump was not found when gpufact was built"})
            return 0
        run = subprocess.run([tool, "-sass", library], capture_output=True, text=True)
        if run.returncode != 0:
            write_cpp(out, {"available": False,
                            "reason": f"{tool} -sass failed: {run.stderr.strip()[:300]}"})
            return 0
        write_cpp(out, document(run.stdout, "cuobjdump -sass " + library.split("/")[-1]))
        return 0
    if len(argv) == 4 and argv[1] == "--sass":
        with open(argv[2]) as f:
            write_cpp(argv[3], document(f.read(), argv[2]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
