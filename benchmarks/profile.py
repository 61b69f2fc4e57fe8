"""Where the search spends its time: `wasp bench` under Linux `perf`, by kernel.

numba's machine code has no symbols perf can see, so the profiled process keeps the object
code numba loads or compiles, reads each function's offset and size with `nm`, asks numba's
engine where the function landed, and writes perf's map of JIT code (/tmp/perf-PID.map).
The report then names the kernels (wasp.search._search, wasp.evaluate.evaluate, ...); callees
inlined into a kernel count as that kernel.

    python benchmarks/profile.py [--depth 10] [--top 25]

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
    from wasp.benchmark import bench

    bench(depth)
    from numba.core.registry import cpu_target

    engine = cpu_target.target_context.codegen()._engine._ee
    rows, seen = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        for k, buf in enumerate(objects):
            path = os.path.join(tmp, f"{k}.o")
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
                    rows.append((address, int(fields[1], 16), fields[3]))
    with open(f"/tmp/perf-{os.getpid()}.map", "w", encoding="utf-8") as f:
        for address, size, name in sorted(rows):
            f.write(f"{address:x} {size:x} {name}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=None, help="bench depth (default: bench's)")
    ap.add_argument("--top", type=int, default=25, help="lines of the report")
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
        status = subprocess.call(cmd, env={**os.environ, CHILD_FLAG: "1"})
        if status:
            return status
        report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "sym"],
                                capture_output=True, text=True, check=False).stdout
    shares: dict[str, float] = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(\S+)", line)
        if m:
            name = readable(m.group(2))
            shares[name] = shares.get(name, 0.0) + float(m.group(1))
    jit = sum(v for k, v in shares.items() if k.startswith("wasp."))
    print(f"\n{'share':>7}  function   (wasp kernels: {jit:.1f} % of all samples; the rest is "
          "Python, numba's loading and the kernel)")
    for name, share in sorted(shares.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{share:6.2f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
