"""Where a cold compile's CPU time goes, kernel by kernel (issue 48):

    python benchmarks/compile_profile.py net             # the engine's search with the net
    python benchmarks/compile_profile.py hand tools      # groups of `wasp warmup`
    python benchmarks/compile_profile.py -- -m tuner.cli loop --quick -dir /tmp/q   # any command

Compiles into an empty cache (a temporary NUMBA_CACHE_DIR unless --cache) in this process,
with listeners on numba's "numba:compile" and "numba:run_pass" events and timers around the
LLVM steps of each code library: for each kernel and signature compiled, the CPU seconds of
this thread (compiles run on the calling thread) spent in it alone (`self`: its callees'
compiles taken out) and with its callees (`incl`), split into numba's typing and rewrites
(`typing`: untyped passes, type inference, inlining), lowering to LLVM IR (`lower`), LLVM's
module optimisation (`opt`) and machine code (`mc`), and the LLVM functions linked into its
library before that optimisation (`funcs`: every callee's code is optimised again in each
library that links it). A command after `--` runs as `python ARGS` would (`-m module` or a
script), its subprocesses not profiled.
"""

import argparse
import json
import os
import runpy
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TYPING = ("nopython_type_inference", "inline", "rewrite", "translate_bytecode", "fixup_args",
          "ir_processing", "with_lifting", "dead_branch", "literal", "generic_rewrites",
          "simplify_cfg", "reconstruct_ssa", "nopython_rewrites", "annotate_types",
          "ir_legalization", "parfor", "canonicalize", "find_literally", "make_function",
          "dead_code", "preserve_ir", "strip_phis", "nopython_supported", "iterator")


class Profile:
    """The listener: a stack of timers a thread; each ends with its own time (nested
    timers taken out) added to its kernel's entry under its category."""

    def __init__(self):
        self.local = threading.local()
        self.kernels = {}  # (name, signature) -> {category: cpu s, "funcs": n, "incl": s}

    def stack(self):
        if not hasattr(self.local, "stack"):
            self.local.stack = []
        return self.local.stack

    def owner(self):
        for kind, key, *_ in reversed(self.stack()):
            if kind == "compile":
                return key
        return ("(outside)", "")

    def start(self, kind, key):
        self.stack().append([kind, key, time.thread_time(), 0.0])

    def end(self, category=None):
        kind, key, t0, nested = self.stack().pop()
        spent = time.thread_time() - t0
        if self.stack():
            self.stack()[-1][3] += spent
        owner = key if kind == "compile" else self.owner()
        entry = self.kernels.setdefault(owner, {})
        cat = category or kind
        entry[cat] = entry.get(cat, 0.0) + spent - nested
        if kind == "pass":  # each of numba's passes, for the --json file
            passes = entry.setdefault("by_pass", {})
            passes[key] = passes.get(key, 0.0) + spent - nested
        if kind == "compile":
            entry["incl"] = entry.get("incl", 0.0) + spent
            entry["count"] = entry.get("count", 0) + 1
        return entry

    def notify(self, event):
        if event.kind == "numba:compile":
            if event.is_start:
                d = event.data["dispatcher"]
                f = d.py_func
                self.start("compile", (f"{f.__module__}.{f.__qualname__}",
                                       str(tuple(event.data["args"]))))
            else:
                self.end("other")
        elif event.kind == "numba:run_pass":
            if event.is_start:
                name = event.data["name"].split(" [", 1)[0]
                self.start("pass", name)
            else:
                name = self.stack()[-1][1]
                if name == "native_lowering":
                    cat = "lower"
                elif any(name.startswith(p) for p in TYPING):
                    cat = "typing"
                else:
                    cat = "misc"
                self.end(cat)

    def install(self):
        from numba.core import codegen, event

        event.Listener.register(Profile)
        event.register("numba:compile", self)
        event.register("numba:run_pass", self)
        profile = self
        lib = codegen.CPUCodeLibrary
        optimize, specific = lib._optimize_final_module, codegen.JITCodeLibrary._finalize_specific

        def _optimize_final_module(self):
            funcs = sum(1 for f in self._final_module.functions if not f.is_declaration)
            entry = profile.kernels.setdefault(profile.owner(), {})
            entry["funcs"] = entry.get("funcs", 0) + funcs
            profile.start("opt", None)
            try:
                return optimize(self)
            finally:
                profile.end("opt")

        def _finalize_specific(self):
            profile.start("mc", None)
            try:
                return specific(self)
            finally:
                profile.end("mc")

        lib._optimize_final_module = _optimize_final_module
        codegen.JITCodeLibrary._finalize_specific = _finalize_specific


def table(kernels, top):
    """Lines of the `top` kernels by self CPU, and the totals."""
    cats = ("typing", "lower", "opt", "mc")
    rows = []
    for (name, sig), e in kernels.items():
        own = sum(v for k, v in e.items() if k not in ("incl", "funcs", "count", "by_pass"))
        rows.append((own, name, sig, e))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    out = [f"{'kernel':44} {'self':>6} {'incl':>6} " + " ".join(f"{c:>6}" for c in cats)
           + f" {'funcs':>5}  signature"]
    for own, name, sig, e in rows[:top]:
        short = name.split(".", 1)[-1] if name.startswith(("wasp.", "tuner.")) else name
        out.append(f"{short[:44]:44} {own:6.1f} {e.get('incl', 0):6.1f} "
                   + " ".join(f"{e.get(c, 0):6.1f}" for c in cats)
                   + f" {e.get('funcs', 0):5d}  {sig[:60]}")
    sums = {c: sum(r[3].get(c, 0) for r in rows) for c in cats}
    out.append(f"{'all ' + str(len(rows)) + ' compiles':44} {total:6.1f} {'':6} "
               + " ".join(f"{sums[c]:6.1f}" for c in cats))
    return out


def main():
    argv = sys.argv[1:]
    command = None
    if "--" in argv:
        command, argv = argv[argv.index("--") + 1:], argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("groups", nargs="*", help="warmup groups (net, hand, tools)")
    ap.add_argument("--cache", help="the cache base (default: an empty temporary directory)")
    ap.add_argument("--top", type=int, default=15, help="kernels shown (default 15)")
    ap.add_argument("--json", help="also write every kernel's figures to this file")
    args = ap.parse_args(argv)
    if not args.groups and not command:
        ap.error("give groups or a command after --")
    tmp = None
    if not args.cache:
        tmp = tempfile.TemporaryDirectory(prefix="wasp-compile-profile-")
        args.cache = tmp.name
    os.environ["NUMBA_CACHE_DIR"] = args.cache
    sys.path.insert(0, ROOT)
    from wasp import kernelcache

    kernelcache.setup(("wasp", "tuner") if command else ("wasp",))
    import numba  # noqa: F401

    profile = Profile()
    profile.install()
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        if command:
            sys.argv = command[1:] if command[0] == "-m" else command
            if command[0] == "-m":
                sys.argv = [command[1], *command[2:]]
                try:
                    runpy.run_module(command[1], run_name="__main__", alter_sys=True)
                except SystemExit as e:
                    if e.code not in (0, None):
                        print(f"the command exited with {e.code}", file=sys.stderr)
            else:
                runpy.run_path(command[0], run_name="__main__")
        else:
            from wasp import warmup

            for group in args.groups:
                warmup.RUNS[group]()
    finally:
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        kids = os.times()
        print(f"\nwall {wall:.1f} s, CPU {cpu:.1f} s (this process; children "
              f"{kids.children_user + kids.children_system:.1f} s), load average "
              f"{load:.1f} -> {os.getloadavg()[0]:.1f}")
        for line in table(profile.kernels, args.top):
            print(line)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump([{"kernel": k[0], "signature": k[1], **v}
                           for k, v in profile.kernels.items()], f, indent=1)
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
