"""wasp.warmup: lean loads from numba's cache, a miss still compiles, `quit` while loading."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

KERNEL = """
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, _nrt=False)
def total(a):
    s = 0
    for x in a:
        s += x
    return s


@njit(cache=True)
def doubled(n):
    return np.arange(n) * 2  # allocates: needs numba's runtime
"""

RUN = """
import sys
from wasp.warmup import _lean_numba
import numpy as np

with _lean_numba():
    import kernel
    print(kernel.total(np.arange(10)), kernel.doubled(4).sum())
stats = kernel.total.stats
print(sorted(stats.cache_hits.values()), sorted(stats.cache_misses.values()))
print("numba.np.arraymath" in sys.modules, "scipy" in sys.modules, "yaml" in sys.modules)
print(kernel.total(np.arange(3, dtype=np.int32)))  # a new signature compiles as usual
"""


def _run(code, cwd, env):
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.splitlines()


def test_lean_loads_compile_on_a_miss_then_load_without_numba_registries(tmp_path):
    import os

    (tmp_path / "kernel.py").write_text(KERNEL)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))
    cold = _run(RUN, tmp_path, env)
    assert cold[0] == "45 12"
    assert cold[1] == "[] [1]"  # compiled (numba refreshed its registries for it)
    assert cold[3] == "3"
    warm = _run(RUN, tmp_path, env)
    assert warm[0] == "45 12"
    assert warm[1] == "[1] []"  # loaded from the cache ...
    assert warm[2] == "False False False"  # ... without numba's registries, scipy or yaml
    assert warm[3] == "3"


def test_lean_loads_are_scoped_outside_an_engine_process():
    code = textwrap.dedent("""
        from wasp.warmup import _lean_numba
        from numba.core import caching
        before = caching.Cache.load_overload
        with _lean_numba():
            during = caching.Cache.load_overload
        print(during is not before, caching.Cache.load_overload is before)
    """)
    assert _run(code, ROOT, None) == ["True True"]


def test_the_engine_loads_the_net_group_alone_then_all_groups():
    code = textwrap.dedent("""
        import sys
        from wasp import warmup
        warmup.warmup(kernels="engine")
        print(sorted(warmup._DONE), warmup.ready("net"), warmup.ready("all"))
        print("wasp.evaluate" in sys.modules and
              bool(sys.modules["wasp.evaluate"].evaluate.overloads))
        warmup.warmup()
        print(sorted(warmup._DONE), warmup.ready("all"))
    """)
    assert _run(code, ROOT, None) == ["['net'] True False",
                                      "False",  # the hand-written evaluation is not loaded
                                      "['hand', 'net', 'tools'] True"]


def test_a_group_name_that_is_none_is_refused():
    from wasp.warmup import groups

    assert groups("all") == ("net", "hand", "tools") and groups("engine") == ("net",)
    with pytest.raises(ValueError, match="kernels must be one of net, hand, tools"):
        groups("everything")


def test_only_cached_raises_on_a_miss_and_compiles_nothing(tmp_path):
    import os

    (tmp_path / "kernel.py").write_text(KERNEL)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))
    code = textwrap.dedent("""
        import numpy as np
        from wasp.warmup import NotCached, _lean_numba, only_cached
        with _lean_numba():
            import kernel
            try:
                with only_cached():
                    kernel.total(np.arange(10))
            except NotCached as exc:
                print("not cached:", exc)
            print(len(kernel.total.overloads))
            print(kernel.total(np.arange(10)))  # outside the block a miss compiles
    """)
    assert _run(code, tmp_path, env) == ["not cached: kernel.total", "0", "45"]


def test_quit_right_after_uci_ends_the_engine_cleanly():
    """`quit` may come while the kernels still load (or compile): exit code 0, no hang."""
    r = subprocess.run([sys.executable, "-m", "wasp.cli"], input="uci\nquit\n", cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.splitlines()[-1] == "uciok"


def test_runtime_is_set_up_for_kernels_that_name_it_and_in_doubt():
    from wasp.warmup import _uses_runtime

    def payload(code):
        return (("lib", "object", (code, b"bitcode")), "fndesc")

    assert not _uses_runtime(payload(b"\x7fELF ... _ZN4wasp6search ..."))
    assert _uses_runtime(payload(b"\x7fELF ... NRT_MemInfo_alloc_safe_aligned ..."))
    assert _uses_runtime(payload(b"\x7fELF ... _nrt_get_sample_external_allocator ..."))
    assert _uses_runtime((("lib", "bitcode", b"..."), "fndesc"))
    assert _uses_runtime(("something else",))


def _reporter(*lines, code=0):
    """A stand-in compiling process: prints `lines`, exits with `code`."""
    body = "; ".join(f"print({line!r}, flush=True)" for line in lines)
    return [sys.executable, "-c", f"{body}; raise SystemExit({code})"]


def test_parallel_processes_reports_count_in_one_bar(capsys):
    from wasp.warmup import compile_parallel

    more = {"a": _reporter("wasp-warmup compiling 0 x.one", "wasp-warmup compiling 1 x.two"),
            "b": _reporter("some other output", "wasp-warmup compiling 0 y.one")}
    assert compile_parallel(None, jobs=2, verbose=False, more=more,
                            progress={"a": 2, "b": 1}) == 0
    err = capsys.readouterr().err
    assert "compiling kernels: 3/3 kernels" in err and "3 compilations in" in err
    assert err.count("3 compilations in") == 1  # one bar for both processes
    assert "some other output" not in err


def test_parallel_processes_that_compile_nothing_show_nothing(capsys):
    from wasp.warmup import compile_parallel

    assert compile_parallel(None, verbose=False, more={"a": _reporter("loaded")},
                            progress={"a": 5}) == 0
    assert capsys.readouterr().err == ""


def test_a_failed_process_shows_its_output_and_returns_1(capsys):
    from wasp.warmup import compile_parallel

    more = {"a": _reporter("wasp-warmup compiling 0 x.one", "it broke", code=3)}
    assert compile_parallel(None, verbose=False, more=more, progress={"a": 2}) == 1
    err = capsys.readouterr().err
    assert "the a kernels failed to compile" in err and "it broke" in err
