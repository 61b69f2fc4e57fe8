"""The -dask path on a real LocalCluster bound to loopback."""

import os

import pytest

import testing
from testing.cli import main
from tests.conftest import root_on_pythonpath

from .conftest import EPD, fake_engine

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with root_on_pythonpath():
        c = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            silence_logs=40,
        )
        try:
            yield c
        finally:
            c.close()


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


def _scaled_run(tmp_path, cluster, name, scale):
    common = fake_engine("good") + fake_engine("random", "--style", "random") + [
        "-each", "tc=30+1", "-maxmoves", "10", "-ratinginterval", "0", "-rounds", "2",
        "-repeat", "-dask", cluster.scheduler_address, "-rundir", str(tmp_path / name),
        "-scale-tc", *scale,
    ]  # fmt: skip
    return main(common)


@pytest.mark.timeout(180)
def test_scale_tc_scales_each_workers_clock_by_its_bench(cluster, capsys, tmp_path):
    # the fake engine's bench: 12345 nodes at 1000 nps; the reference is twice as fast
    code = _scaled_run(tmp_path, cluster, "s", ["nps=2000", "nodes=12345",
                                                "bench=--bench 1000"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.count("bench 12345 nodes, 1000 nps, time control x 2.00") == 2, out.out
    df = testing.results(str(tmp_path / "s"))
    assert len(df) == 4
    from testing.store import RunStore

    store = RunStore(str(tmp_path / "s"))
    pgns = [r["pgn"] for r in store.games(["pgn"])]
    store.close()
    assert len(pgns) == 4 and all('[TimeControl "60+2"]' in p for p in pgns)
    with open(tmp_path / "s" / "summary.json") as f:
        report = __import__("json").load(f)["scale_tc"]
    assert len(report) == 2 and all(r["factor"] == 2.0 for r in report.values())


@pytest.mark.timeout(180)
@pytest.mark.parametrize("scale,reason", [
    (["nps=10000", "bench=--bench 1000"], "too slow: 1000 nps against the reference 10000, "
                                          "factor 10.00 > maxfactor 3"),
    (["nps=1000", "nodes=999", "bench=--bench 1000"],
     "bench signature 12345 differs from the reference 999"),
    (["nps=1000"], "printed no 'Nodes searched : N'"),  # the fake has no `bench` command
])
def test_scale_tc_refuses_slow_or_different_workers(cluster, capsys, tmp_path, scale, reason):
    code = _scaled_run(tmp_path, cluster, "s", scale)
    out = capsys.readouterr()
    assert code == 1
    assert out.out.count("refused: ") == 2 and reason in out.out, out.out
    assert "every worker was refused" in out.err
    assert len(testing.results(str(tmp_path / "s"))) == 0


def test_scale_tc_needs_dask(capsys, tmp_path):
    code = main(fake_engine("a") + fake_engine("b") + [
        "-each", "tc=1", "-scale-tc", "nps=1000", "-rundir", str(tmp_path / "r")])
    assert code == 2 and "needs -dask" in capsys.readouterr().err


@pytest.mark.timeout(300)
def test_workers_that_join_or_leave_mid_run_get_or_give_back_their_pairs(capsys, tmp_path):
    with root_on_pythonpath():
        _join_and_leave(capsys, tmp_path)


def _join_and_leave(capsys, tmp_path):
    """As on fishtest, the fleet changes under a run: a worker that joins is benched and
    plays; when one leaves, its pinned pairs are played elsewhere; every game is stored once."""
    import json
    import threading
    import time

    from distributed import LocalCluster

    c = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                     dashboard_address=":0", silence_logs=40)
    rd = str(tmp_path / "j")
    first = next(iter(c.scheduler.workers))
    slow = ["--movetime", "0.05"]
    argv = fake_engine("good", *slow) + fake_engine("random", "--style", "random", *slow) + [
        "-each", "tc=30+1", "-maxmoves", "10", "-ratinginterval", "0", "-rounds", "10",
        "-repeat", "-dask", c.scheduler_address, "-rundir", rd,
        "-scale-tc", "nps=1000", "nodes=12345", "bench=--bench 1000",
    ]  # fmt: skip
    def played():
        try:
            return len(testing.results(rd))
        except Exception:
            return 0

    def stored(pair_id):
        try:
            return int((testing.results(rd)["pair_id"] == pair_id).sum())
        except Exception:
            return 0

    def newcomer_pair():
        """The pair the worker that joined holds, if any (the scheduler runs in this process;
        a worker may take long to start on a loaded machine)."""
        for ws in list(c.scheduler.workers.values()):
            if ws.address != first and ws.processing:
                return next(iter(ws.processing)).key
        return None

    def change_the_fleet():  # main() keeps the main thread for its signal handlers
        deadline = time.monotonic() + 150
        while played() < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        c.scale(2)  # a worker joins
        while (key := newcomer_pair()) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        pair_id = int(str(key).split("-")[2]) if key else -1  # wasp-pair-ID-...
        while stored(pair_id) < 2 and time.monotonic() < deadline:  # its first pair is in
            time.sleep(0.05)
        c.scale(1)  # and one leaves, with a pair in its hands or not

    t = threading.Thread(target=change_the_fleet, daemon=True)
    try:
        t.start()
        codes = [main(argv)]
        t.join(60)
    finally:
        c.close()
    out = capsys.readouterr()
    assert codes == [0], out.err
    assert out.out.count("bench 12345 nodes, 1000 nps, time control x 1.00") == 2, out.out
    df = testing.results(rd)
    assert len(df) == 20
    games = sorted(zip(df["pair_id"], df["game_in_pair"], strict=True))
    assert games == [(p, g) for p in range(10) for g in range(2)]
    with open(os.path.join(rd, "summary.json")) as f:
        workers = json.load(f)["workers"]
    assert len(workers) == 2 and all(n >= 1 for n in workers.values()), workers


@pytest.mark.timeout(240)
def test_a_lost_scheduler_stops_the_run_with_its_games_stored_and_resume_ends_it(
        capsys, tmp_path):
    import threading
    import time

    from distributed import LocalCluster

    def cluster():
        return LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                            host="127.0.0.1", dashboard_address=":0", silence_logs=40)

    rd = str(tmp_path / "k")
    slow = ["--movetime", "0.05"]
    with root_on_pythonpath():
        first = cluster()
        argv = fake_engine("good", *slow) + fake_engine("random", "--style", "random", *slow) + [
            "-each", "tc=30+1", "-maxmoves", "10", "-ratinginterval", "0", "-rounds", "8",
            "-repeat", "-dask", first.scheduler_address, "-rundir", rd,
        ]  # fmt: skip

        def kill_the_scheduler():
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if len(testing.results(rd)) >= 4:
                        break
                except Exception:
                    pass
                time.sleep(0.2)
            first.close()

        threading.Thread(target=kill_the_scheduler, daemon=True).start()
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "lost the scheduler" in err and f"-resume {rd}" in err, err
        kept = len(testing.results(rd))
        assert 4 <= kept < 16
        second = cluster()
        try:
            assert main(["-resume", rd, "-dask", second.scheduler_address]) == 0
        finally:
            second.close()
    df = testing.results(rd)
    games = sorted(zip(df["pair_id"], df["game_in_pair"], strict=True))
    assert games == [(p, g) for p in range(8) for g in range(2)]  # nothing lost or twice
