"""SASS listings for the tests/check_*_sass.py checks: finding cuobjdump and splitting its
`-sass` output into functions."""
import os
import re
import shutil
import subprocess

INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)(.*)")


def cuobjdump():
    """Path of cuobjdump (PATH, then $CUDA_HOME/bin, then /usr/local/cuda/bin), or None."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        path = os.path.join(root, "bin", "cuobjdump")
        if root and os.access(path, os.X_OK):
            return path
    return None


def disassemble(tool, binary):
    """`cuobjdump -sass` text of a library or object."""
    return subprocess.run([tool, "-sass", binary], check=True, capture_output=True, text=True).stdout


def functions_of(binary, keep=lambda name: True):
    """functions() of the binary's SASS, or None (after saying so) when cuobjdump is missing:
    the checks then exit 77, which ctest reports as skipped."""
    tool = cuobjdump()
    if not tool:
        print("cuobjdump not found: SASS not checked")
        return None
    return functions(disassemble(tool, binary), keep)


def functions(sass, keep=lambda name: True):
    """{mangled name: [(address, opcode with modifiers, rest of the line)]} for the functions
    whose name `keep` accepts; the predicate guard is dropped."""
    out, name = {}, None
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1) if keep(m.group(1)) else None
            if name:
                out[name] = []
            continue
        m = INSTRUCTION.match(line)
        if name and m:
            out[name].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return out
