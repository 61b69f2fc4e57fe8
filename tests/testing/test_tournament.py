"""Whole runs through the CLI: failures with -recover, SPRT stop, tables, SIGKILL + -resume."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

import testing
from testing.cli import main
from tests.wasp.helpers import Charge

from .conftest import EPD, ROOT, fake_engine


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


GOOD = fake_engine("good")
RANDOM = fake_engine("random", "--style", "random")
FAST = ["-each", "tc=0.5+0", "timemargin=100", "-maxmoves", "30", "-ratinginterval", "0"]


@pytest.mark.parametrize("fail", ["crash", "hang", "stall", "illegal"])
def test_failing_engine_is_scored_and_run_continues(capsys, tmp_path, fail):
    # Per-engine clocks over FAST's: the good engine's is not under test (a long one, so a
    # stalled host cannot flag it); the bad one's 2 s leave its sound (instant) moves seconds
    # to spare, and its stall of 2.6 s oversteps 2 s + 0.1 s margin but answers within the
    # runner's 1 s grace for `stop` (a loss on time, not a stalled connection).
    bad = fake_engine("bad", "--fail", fail, "--after", "2", "--delay", "2.6") + ["tc=2+0"]
    argv = [*FAST, *GOOD, "tc=30+0", *bad, "-rounds", "2", "-recover",
            "-rundir", str(tmp_path / "r")]
    code, out, err = run(capsys, argv)
    assert code == 0, err
    df = testing.results(str(tmp_path / "r"))
    assert len(df) == 2
    expected = {"crash": "crash", "hang": "stall", "stall": "timeout", "illegal": "illegal-move"}
    # The bad engine fails in every game it plays after its 2nd move (stall: only once).
    assert df["termination"].iloc[0] == expected[fail]
    assert df["score"].iloc[0] == 1.0
    if fail != "stall":
        assert (df["score"] == 1.0).all()
        assert (df["termination"] == expected[fail]).all()
    assert "Finished game 2" in out
    if fail == "stall":  # the loser's clock shows the time it ran out of, not a full one
        lost = df.iloc[0]
        side = "white" if lost["white"] == "bad" else "black"
        assert lost[f"{side}_left"] <= 0.0 and lost[f"{side}_time"] >= 2.0


def test_crash_without_recover_stops_the_run(capsys, tmp_path):
    bad = fake_engine("bad", "--fail", "crash", "--after", "2")
    argv = GOOD + bad + FAST + ["-rounds", "4", "-rundir", str(tmp_path / "r")]
    code, out, err = run(capsys, argv)
    assert code == 1
    assert "use -recover" in err
    assert len(testing.results(str(tmp_path / "r"))) == 1  # the game is stored and scored


def test_engine_that_cannot_start(capsys, tmp_path):
    bad = fake_engine("bad", "--fail", "nostart")
    code, _, err = run(capsys, GOOD + bad + FAST + ["-rundir", str(tmp_path / "r")])
    assert code == 1 and "failed to start" in err


def test_sprt_stops_and_reports_decision(capsys, tmp_path):
    argv = GOOD + RANDOM + FAST + [
        "-rounds", "200", "-repeat", "-concurrency", "2",
        "-openings", f"file={EPD}", "order=sequential",
        "-sprt", "elo0=0", "elo1=200", "alpha=0.1", "beta=0.1",
        "-pgnout", str(tmp_path / "g.pgn"), "-epdout", str(tmp_path / "g.epd"),
        "-rundir", str(tmp_path / "r"),
    ]  # fmt: skip
    code, out, err = run(capsys, argv)
    assert code == 0, err
    assert "SPRT: H1 accepted after" in out
    assert "Ptnml(0-2):" in out and "LLR:" in out
    df = testing.results(str(tmp_path / "r"))
    assert len(df) < 400
    # Every started pair was finished: pentanomial counts stay whole.
    assert (df.groupby("pair_id").size() == 2).all()
    assert open(tmp_path / "g.pgn").read().count("[Event ") == len(df)
    assert len(open(tmp_path / "g.epd").read().splitlines()) == len(df)


def test_gauntlet_rating_table(capsys, tmp_path):
    random2 = fake_engine("random2", "--style", "random") + ["restart=on"]
    argv = GOOD + RANDOM + random2 + FAST + [
        "-tournament", "gauntlet", "-rounds", "2", "-repeat", "-concurrency", "2",
        "-openings", f"file={EPD}", "-rundir", str(tmp_path / "r"),
    ]  # fmt: skip
    code, out, err = run(capsys, argv)
    assert code == 0, err
    assert "Ratings relative to good" in out and "nElo" in out and "Ptnml(0-2)" in out
    df = testing.results(str(tmp_path / "r"))
    assert len(df) == 8 and set(df["engine2"]) == {"random", "random2"}
    cols = {"white", "black", "opening_index", "result", "termination", "plies",
            "white_time", "black_time", "pair_id"}  # fmt: skip
    assert cols <= set(df.columns)


def _count(db: str) -> int:
    try:
        con = sqlite3.connect(db, timeout=1)
        try:
            return con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _cli(args, **kw):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen(
        [sys.executable, "-m", "testing.cli", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        **kw,
    )


def test_sigkill_then_resume_equals_uninterrupted_run(tmp_path):
    common = GOOD + RANDOM + [
        "-each", "tc=30+1", "-maxmoves", "60", "-ratinginterval", "0",
        "-rounds", "12", "-repeat", "-concurrency", "2",
        "-openings", f"file={EPD}", "order=random", "-srand", "11",
    ]  # fmt: skip
    full = tmp_path / "full"
    p = _cli(common + ["-rundir", str(full)])
    assert p.wait(120) == 0, p.stderr.read()

    killed = tmp_path / "killed"
    p = _cli(common + ["-rundir", str(killed)])
    db = str(killed / "games.sqlite")
    deadline = time.monotonic() + 60
    while _count(db) < 5 and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.01)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(10)
    stored = _count(db)
    assert 5 <= stored < 24, stored

    p = _cli(["-resume", str(killed)])
    assert p.wait(120) == 0, p.stderr.read()
    a = testing.results(str(full))
    b = testing.results(str(killed))
    assert len(a) == len(b) == 24
    keys = ["pair_id", "game_in_pair", "white", "black", "opening_index", "result", "plies"]
    assert a[keys].values.tolist() == b[keys].values.tolist()
    assert a["score"].sum() == b["score"].sum()


def _descendants(pid: int) -> set[int]:
    """Live processes below pid (from /proc), engines in their own sessions included."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(d))
    found, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.add(c)
            todo.append(c)
    return found


def _alive(pids) -> set[int]:
    left = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    left.add(pid)
        except OSError:
            pass
    return left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 130), (signal.SIGKILL, -9)])
def test_killed_runner_leaves_no_worker_or_engine_behind(tmp_path, sig, code):
    rundir = tmp_path / "r"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with open(tmp_path / "err.txt", "w") as err:  # not a pipe: an orphan would hold it open
        p = subprocess.Popen(
            [sys.executable, "-m", "testing.cli", *GOOD, *RANDOM, "-each", "tc=30+1",
             "-maxmoves", "200", "-ratinginterval", "0", "-rounds", "20", "-concurrency", "2",
             "-rundir", str(rundir)], env=env, stdout=subprocess.DEVNULL, stderr=err)
    below = set()
    try:
        deadline = time.monotonic() + 60
        while _count(str(rundir / "games.sqlite")) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        # Between games a worker restarts its engines, so wait until the next games have
        # started: 2 workers and their 4 engines.
        deadline = time.monotonic() + 20
        below = _descendants(p.pid)
        while len(below) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
            below = _descendants(p.pid)
        assert len(below) >= 6, below
        os.kill(p.pid, sig)
        assert p.wait(20) == code, (tmp_path / "err.txt").read_text()
        deadline = time.monotonic() + 15
        while _alive(below) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(below)
        stored = _count(str(rundir / "games.sqlite"))
        assert 1 <= stored < 20
    finally:
        for pid in _alive(below | {p.pid}):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.engines
def test_stockfish_against_fairymax_match(capsys, tmp_path, stockfish, fairymax):
    pgn = tmp_path / "games.pgn"
    argv = [
        "-engine", f"cmd={stockfish}", "name=Stockfish", "option.Hash=16",
        "-engine", f"cmd={fairymax}", "name=Fairy-Max", "proto=xboard",
        "-each", "tc=2+0.02", "timemargin=400", "-maxmoves", "80",
        "-rounds", "2", "-repeat", "-concurrency", "2",
        "-openings", f"file={EPD}", "order=sequential", "start=10",
        "-pgnout", str(pgn), "-log", str(tmp_path / "io.log"),
        "-rundir", str(tmp_path / "r"),
    ]  # fmt: skip
    with Charge() as match:
        code, out, err = run(capsys, argv)
    assert code == 0, err
    df = testing.results(str(tmp_path / "r"))
    assert len(df) == 4
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    stolen = summary["cpu_steal_pct"] or 0.0  # the runner's own reading over the games
    # A time loss is the runner's clock or protocol handling at fault, unless the host took
    # the CPU away in a burst, or other processes kept every core busy (the same excuse the
    # clock referee of the engine tests makes): runnable work queued for a CPU for 5 % of
    # the match (the kernel's pressure-stall count, with the steal: `withheld`) or more.
    withheld = 100 * match.withheld / max(match.wall, 1e-9)
    lost = df[df["time_loss"]]
    assert lost.empty or stolen >= 5 or withheld >= 5, (stolen, withheld,
                                                        lost.to_dict("records"))
    assert set(df["opening_index"]) == {9, 10}
    assert "Ptnml(0-2):" in out and "move latency" in out
    assert pgn.read_text().count('[White "Stockfish"]') == 2
    log = (tmp_path / "io.log").read_text()
    assert "Stockfish > go wtime" in log and "Fairy-Max < move " in log
    # Resuming a finished run plays nothing and counts nothing twice.
    code, out, err = run(capsys, ["-resume", str(tmp_path / "r")])
    assert code == 0 and "Finished game" not in out
    assert len(testing.results(str(tmp_path / "r"))) == 4
    assert pgn.read_text().count("[Event ") == 4


def test_host_steal_share_and_its_note_in_the_summary():
    from testing.tournament import Runner, host_steal, steal_share

    reading = host_steal()
    if reading is not None:  # Linux: steal never exceeds the total
        assert 0 <= reading[0] <= reading[1]
    assert steal_share((100, 1000), (150, 1500)) == 10.0
    assert steal_share(None, (1, 2)) is None and steal_share((5, 10), (5, 10)) == 0.0
    s = {"games_this_session": 10, "wall_s": 60.0, "time_losses_this_session": 2,
         "runner_cpu_per_game_s": None, "latency_median_ms": None, "cpu_steal_pct": 12.5}
    text = Runner.summary_text(s)
    assert "CPU stolen by the host 12.5 %" in text and "timemargin=" in text
    assert "stolen" not in Runner.summary_text({**s, "cpu_steal_pct": 0.1})
    assert "Note" not in Runner.summary_text({**s, "time_losses_this_session": 0})



@pytest.mark.parametrize("policy,per_pair", [
    ("default", [0, 1, 2, 3, 4, 5, 6, 7]),
    ("encounter", [0, 0, 1, 1, 2, 2, 3, 3]),
    ("round", [0, 0, 0, 0, 1, 1, 1, 1]),
])
def test_openings_policy_decides_which_games_share_an_opening(capsys, tmp_path, policy,
                                                              per_pair):
    argv = GOOD + RANDOM + fake_engine("random2", "--style", "random") + [
        "-each", "nodes=1", "-maxmoves", "3", "-ratinginterval", "0",
        "-tournament", "gauntlet", "-rounds", "2", "-games", "4", "-repeat",
        "-openings", f"file={EPD}", f"policy={policy}", "-rundir", str(tmp_path / "r"),
    ]  # fmt: skip
    code, _, err = run(capsys, argv)
    assert code == 0, err
    df = testing.results(str(tmp_path / "r")).sort_values(["pair_id", "game_in_pair"])
    # per round: good-random (two pairs), then good-random2 (two pairs); sequential book
    assert df["opening_index"].tolist() == [k for k in per_pair for _ in (0, 1)]


def test_use_affinity_pins_each_running_game_to_its_own_core(capsys, tmp_path):
    import os as _os

    if len(_os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores")
    cores = sorted(_os.sched_getaffinity(0))[:2]
    log = tmp_path / "aff.txt"
    argv = fake_engine("a", "--affinityfile", str(log)) + \
        fake_engine("b", "--style", "random", "--affinityfile", str(log)) + [
        "-each", "nodes=1", "-maxmoves", "6", "-ratinginterval", "0", "-rounds", "4",
        "-repeat", "-concurrency", "2", "-use-affinity", f"{cores[0]},{cores[1]}",
        "-rundir", str(tmp_path / "r"),
    ]  # fmt: skip
    code, _, err = run(capsys, argv)
    assert code == 0, err
    seen: dict[str, set[str]] = {}
    for line in log.read_text().splitlines():
        pid, allowed = line.split()
        seen.setdefault(pid, set()).add(allowed)
    # every engine ran on one core only at each move, and both cores were used
    assert all("," not in a for s in seen.values() for a in s)
    assert set().union(*seen.values()) == {str(c) for c in cores}


@pytest.mark.parametrize("argv,needle", [
    (["-use-affinity", "0,4096"], "core 4096 is not present"),
    (["-use-affinity", "1-0"], "bad core range"),
    (["-use-affinity", "0", "-concurrency", "2"], "each game needs a core of its own"),
    (["-use-affinity", "-dask", "tcp://127.0.0.1:1"], "cannot be combined with -dask"),
])
def test_use_affinity_refuses_bad_core_lists(capsys, tmp_path, argv, needle):
    code, _, err = run(capsys, GOOD + RANDOM + FAST + argv + ["-rundir", str(tmp_path / "r")])
    assert code == 2 and needle in err, err


def test_an_option_the_engine_does_not_declare_is_warned_of(capfd, tmp_path, stockfish):
    argv = ["-engine", f"cmd={stockfish}", "name=sf1", "option.Hahs=16", "-engine",
            f"cmd={stockfish}", "name=sf2", "-each", "nodes=300", "-games", "2",
            "-rundir", str(tmp_path / "r")]
    code = main(argv)
    err = capfd.readouterr().err  # the games' worker processes write to the real stderr
    assert code == 0
    assert "warning: sf1: option 'Hahs': the engine declares no such option" in err
    assert err.count("option 'Hahs'") <= 2  # once per process, not once per game


def test_xboard_engines_play_node_limited_games_by_st_and_nps(capsys, tmp_path):
    """-each nodes=N for an xboard engine: CECP's `st 1` with `nps N` (N nodes a move), so
    the game is node-limited, not played on a default clock."""
    argv = ["-engine", f"cmd={sys.executable}", "arg=-m", "arg=wasp.cli", f"dir={ROOT}",
            "proto=xboard", "name=wasp-xb", *GOOD, "-each", "nodes=2000", "-games", "2",
            "-maxmoves", "12", "-rundir", str(tmp_path / "r")]
    code, out, err = run(capsys, argv)
    assert code == 0, err
    df = testing.results(str(tmp_path / "r"))
    assert len(df) == 2 and not df["time_loss"].any()
    side = "white" if df.iloc[0]["white"] == "wasp-xb" else "black"
    sent = [ln.split(" ", 2)[2] for ln in testing.transcript(str(tmp_path / "r"), 1, side)
            .splitlines() if ln.split(" ", 2)[1] == ">"]
    assert "st 1" in sent and "nps 2000" in sent
