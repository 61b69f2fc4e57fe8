"""The -dask path on a real LocalCluster bound to loopback."""

import os

import pytest

import testing
from testing.cli import main

from .conftest import EPD, ROOT, fake_engine

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = ROOT + (os.pathsep + old if old else "")
    from distributed import LocalCluster

    c = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
    )
    try:
        yield c
    finally:
        c.close()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@pytest.mark.timeout(180)
def test_dask_run_matches_local_run(cluster, capsys, tmp_path, monkeypatch):
    cache = tmp_path / "numba-cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    envfile = tmp_path / "env.txt"
    common = fake_engine("good", "--envfile", str(envfile)) + fake_engine(
        "random", "--style", "random"
    ) + [
        "-each", "tc=30+1", "-maxmoves", "40", "-ratinginterval", "0",
        "-rounds", "4", "-repeat",
        "-openings", f"file={EPD}", "order=random", "-srand", "5",
    ]  # fmt: skip
    code = main(common + ["-dask", cluster.scheduler_address, "-rundir", str(tmp_path / "d")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "(client only)" in out.out
    code = main(common + ["-concurrency", "2", "-rundir", str(tmp_path / "l")])
    assert code == 0
    d = testing.results(str(tmp_path / "d"))
    loc = testing.results(str(tmp_path / "l"))
    keys = ["pair_id", "game_in_pair", "white", "black", "opening_index", "result", "plies"]
    assert len(d) == 8
    assert d[keys].values.tolist() == loc[keys].values.tolist()
    # NUMBA_CACHE_DIR reached the engine processes on the workers.
    assert str(cache) in envfile.read_text()
