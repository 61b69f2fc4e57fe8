"""Where the search spends its time: `wasp bench` under Linux `perf`, by kernel.

numba's machine code has no symbols perf can see, so the profiled process keeps the object
code numba loads or compiles, reads each function's offset and size with `nm`, asks numba's
engine where the function landed, and writes perf's map of JIT code (/tmp/perf-PID.map).
The report then names the kernels (wasp.search._search, wasp.evaluate.evaluate, ...); callees
inlined into a kernel count as that kernel.

    python benchmarks/profile.py [--depth 10] [--top 25]
    python benchmarks/profile.py --annotate evaluate.evaluate   # hot instructions of a kernel

Needs `perf` (apt-get install linux-perf) and `nm` (binutils); run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHILD_FLAG = "WASP_PROFILE_CHILD"
KEEP_DIR = "WASP_PROFILE_KEEP"  # where the child leaves its object files and their symbols


def readable(symbol: str) -> str:
    """numba's mangled name (_ZN4wasp6search7_searchB4v120B48...E...) as wasp.search._search."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        size = int(symbol[i:j])
        parts.append(symbol[j:j + size])
        i = j + size
    return ".".join(parts) if parts else symbol


def _child(depth: int) -> None:
    """Run bench with numba's object code kept; write perf's JIT map for this process."""
    from numba.core import codegen

    objects = []
    lib = codegen.CPUCodeLibrary
    loaded, compiled = lib._object_getbuffer_hook.__func__, lib._object_compiled_hook.__func__

    def keep_loaded(cls, ll_module):
        buf = loaded(cls, ll_module)
        if buf:
            objects.append(buf)
        return buf

    def keep_compiled(cls, ll_module, buf):
        objects.append(buf)
        return compiled(cls, ll_module, buf)

    lib._object_getbuffer_hook = classmethod(keep_loaded)
    lib._object_compiled_hook = classmethod(keep_compiled)

    sys.path.insert(0, ROOT)
    from wasp import kernelcache

    kernelcache.setup(("wasp",))
    from wasp.benchmark import bench

    bench(depth)
    from numba.core.registry import cpu_target

    engine = cpu_target.target_context.codegen()._engine._ee
    rows, seen = [], set()
    keep = os.environ[KEEP_DIR]
    for k, buf in enumerate(objects):
        path = os.path.join(keep, f"{k}.o")
        with open(path, "wb") as f:
            f.write(buf)
        out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                             text=True, check=False).stdout
        for line in out.splitlines():
            fields = line.split()
            if len(fields) != 4 or fields[2] not in ("t", "T", "w", "W") or \
                    fields[3] in seen:
                continue
            address = engine.get_function_address(fields[3])
            if address:
                seen.add(fields[3])
                rows.append((address, int(fields[1], 16), fields[3], path, int(fields[0], 16)))
    with open(f"/tmp/perf-{os.getpid()}.map", "w", encoding="utf-8") as f:
        for address, size, name, _, _ in sorted(rows):
            f.write(f"{address:x} {size:x} {name}\n")
    with open(os.path.join(keep, "functions.tsv"), "w", encoding="utf-8") as f:
        for address, size, name, path, value in sorted(rows):
            f.write(f"{address}\t{size}\t{name}\t{path}\t{value}\n")


def annotate(data: str, keep: str, pattern: str, top: int) -> None:
    """The hottest instructions of the kernels whose readable name contains `pattern`, each
    with the instructions before it (a sample usually lands just after the slow one)."""
    ips: dict[int, int] = {}
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip"], capture_output=True,
                         text=True, check=False).stdout
    for line in out.split():
        ip = int(line, 16)
        ips[ip] = ips.get(ip, 0) + 1
    total = sum(ips.values())
    with open(os.path.join(keep, "functions.tsv"), encoding="utf-8") as f:
        functions = [line.rstrip("\n").split("\t") for line in f]
    for address, size, name, path, value in functions:
        address, size, value = int(address), int(size), int(value)
        if pattern not in readable(name):
            continue
        hits = {ip - address: n for ip, n in ips.items() if address <= ip < address + size}
        samples = sum(hits.values())
        if not samples:
            continue
        print(f"\n== {readable(name)}: {samples} samples, {100 * samples / total:.2f} % of all")
        dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "intel",
                               f"--start-address={value}", f"--stop-address={value + size}",
                               path], capture_output=True, text=True, check=False).stdout
        code = []
        for line in dump.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
            if m:
                code.append((int(m.group(1), 16) - value, m.group(2).strip()))
        where = {off: k for k, (off, _) in enumerate(code)}
        shown = set()
        for off, n in sorted(hits.items(), key=lambda kv: -kv[1])[:top]:
            k = where.get(off)
            if k is None or k in shown:
                continue
            print(f"-- {n} samples ({100 * n / samples:.1f} % of the function) at +{off:#x}")
            for j in range(max(0, k - 6), min(len(code), k + 2)):
                shown.add(j)
                mark = hits.get(code[j][0], 0)
                print(f"{mark:6d}  +{code[j][0]:#06x}  {code[j][1]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=None, help="bench depth (default: bench's)")
    ap.add_argument("--top", type=int, default=25, help="lines of the report")
    ap.add_argument("--annotate", default=None, metavar="NAME",
                    help="also show the hottest instructions of kernels whose name contains "
                         "NAME (e.g. evaluate.evaluate); needs objdump")
    args = ap.parse_args()
    if os.environ.get(CHILD_FLAG):
        _child(args.depth)
        return 0
    for tool in ("perf", "nm"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        cmd = ["perf", "record", "-q", "-F", "999", "-o", data, "--", sys.executable,
               os.path.abspath(__file__)] + (["--depth", str(args.depth)] if args.depth else [])
        status = subprocess.call(cmd, env={**os.environ, CHILD_FLAG: "1", KEEP_DIR: tmp})
        if status:
            return status
        report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "sym"],
                                capture_output=True, text=True, check=False).stdout
        print_shares(report, args.top)
        if args.annotate:
            annotate(data, tmp, args.annotate, args.top)
    return 0


def print_shares(report: str, top: int) -> None:
    shares: dict[str, float] = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(\S+)", line)
        if m:
            name = readable(m.group(2))
            shares[name] = shares.get(name, 0.0) + float(m.group(1))
    jit = sum(v for k, v in shares.items() if k.startswith("wasp."))
    print(f"\n{'share':>7}  function   (wasp kernels: {jit:.1f} % of all samples; the rest is "
          "Python, numba's loading and the kernel)")
    for name, share in sorted(shares.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{share:6.2f}%  {name}")


if __name__ == "__main__":
    sys.exit(main())
