"""`wasp gui --runs DIR`: the dashboard's JSON views of real match, SPSA and tuning runs, its
refusals (paths outside DIR, bad requests), and a live match watched in headless Chromium."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import chess
import pytest

from dashboard.runs import RunError, Runs
from dashboard.server import DashboardServer
from tests.conftest import DATA, ROOT
from tests.testing.conftest import EPD, fake_engine
from tests.wasp.test_gui import serving
from wasp.gui import BoardServer

ARTIFACTS = ROOT / "test-artifacts"
SPSA_FAKE = ROOT / "tests" / "testing" / "fake_engines" / "spsa_uci.py"
SPSA_KNOB = DATA / "spsa_knob.txt"
TUNER_EPD = DATA / "tuner_quiet_200.epd"


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory):
    """A directory with a finished SPRT match, an SPSA run and a tuning run, as the tools
    write them (fake engines that play at once; a one-pass tune on 200 positions)."""
    from testing import cli as match_cli
    from tuner import cli as tune_cli

    root = tmp_path_factory.mktemp("runs")
    os.environ.setdefault("WASP_TUNE_CACHE", str(root / ".tune-cache"))
    assert match_cli.main([*fake_engine("greedy"), *fake_engine("random", "--style", "random"),
                           "-each", "nodes=1", "-games", "12", "-repeat", "-sprt", "elo0=0",
                           "elo1=5", "-openings", f"file={EPD}", "-maxmoves", "80",
                           "-rundir", str(root / "matches" / "sprt")]) == 0
    assert tune_cli.main(["spsa", str(SPSA_KNOB), "-iterations", "4", "-engine",
                          f"cmd={sys.executable}", f"arg={SPSA_FAKE}", "name=fake", "-each",
                          "nodes=1", "-maxmoves", "40", "-openings", f"file={EPD}",
                          "-progress", "off", "-rundir", str(root / "spsa")]) == 0
    assert tune_cli.main(["run", str(TUNER_EPD), "-method", "local", "-params", "pst_knight",
                          "-max-passes", "1", "-k", "1.2", "-quiet",
                          "-dir", str(root / "tune")]) == 0
    (root / "notes").mkdir()  # not a run: left out
    return root


@pytest.fixture(scope="module")
def server(runs_root):
    with serving(DashboardServer("127.0.0.1", 0, runs_dir=str(runs_root))) as srv:
        yield srv


def get(srv, path, **query):
    url = srv.url.rstrip("/") + path + ("?" + urllib.parse.urlencode(query) if query else "")
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            body = r.read()
            return r.status, json.loads(body) if path.startswith("/api") else body
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


# -- the views -----------------------------------------------------------------------------------


def test_the_list_holds_each_run_with_its_kind_state_and_progress(server):
    status, data = get(server, "/api/runs")
    assert status == 200
    runs = {r["id"]: r for r in data["runs"]}
    assert set(runs) == {"matches/sprt", "spsa", "tune"}  # spsa/sprt is on the SPSA page
    assert runs["matches/sprt"]["kind"] == "match"
    assert runs["matches/sprt"]["engines"] == ["greedy", "random"]
    assert runs["matches/sprt"]["progress"].endswith("of 12 games")
    assert runs["spsa"]["kind"] == "spsa" and runs["spsa"]["progress"] == "iteration 4 of 4"
    assert runs["tune"]["kind"] == "tuning"
    assert all(r["state"] == "finished" for r in runs.values()), runs
    starts = [r["started"] for r in data["runs"]]
    assert starts == sorted(starts, reverse=True)  # newest first


def test_the_match_view_agrees_with_the_runners_statistics(server, runs_root):
    from testing import results, sprt

    status, m = get(server, "/api/run", id="matches/sprt")
    assert status == 200 and m["kind"] == "match"
    df = results(str(runs_root / "matches" / "sprt"))
    assert m["games_stored"] == len(df)
    (enc,) = m["encounters"]
    first = df["white"] == "greedy"
    wins = int(((df.result == "1-0") & first).sum() + ((df.result == "0-1") & ~first).sum())
    losses = int(((df.result == "0-1") & first).sum() + ((df.result == "1-0") & ~first).sum())
    assert (enc["wins"], enc["losses"], enc["games"]) == (wins, losses, len(df))
    elo, err, _ = sprt.elo(enc["pentanomial"])
    assert enc["elo"] == pytest.approx(elo, abs=1e-3) and enc["elo_err"] == pytest.approx(
        err, abs=1e-3)
    assert sum(enc["pentanomial"]) == len(df) // 2
    path = enc["sprt"]["path"]
    assert path[-1][0] == len(df)
    assert path[-1][1] == pytest.approx(enc["sprt"]["llr"], abs=1e-3)
    assert enc["sprt"]["llr"] == pytest.approx(
        sprt.llr(enc["pentanomial"], 0, 5), abs=1e-3)
    names = [r["name"] for r in m["ratings"]]
    assert names == ["greedy", "random"]
    assert all(r["games"] == len(df) for r in m["ratings"])
    assert m["ratings"][0]["moves"] > 0 and m["ratings"][0]["mean_depth"] is not None


def test_the_games_table_filters_and_a_game_replays_as_python_chess_plays_it(server, runs_root):
    status, table = get(server, "/api/run/games", id="matches/sprt", engine="random",
                        result="loss")
    assert status == 200
    assert table["games"] and all(
        {"1-0": g["black"], "0-1": g["white"]}.get(g["result"]) == "random"
        for g in table["games"])
    gid = table["games"][0]["id"]
    status, game = get(server, "/api/run/game", id="matches/sprt", game=gid)
    assert status == 200
    board = chess.Board(game["start_fen"])
    for move in game["moves"]:
        assert board.san(chess.Move.from_uci(move["uci"])) == move["san"]
        board.push_uci(move["uci"])
        assert board.fen() == move["fen"]
    assert board.is_game_over() or game["termination"] != "checkmate"


def test_the_spsa_view_has_the_paths_schedule_and_rate(server, runs_root):
    import pandas as pd

    from tuner.spsa.algorithm import Schedule, load_params

    status, s = get(server, "/api/run", id="spsa")
    assert status == 200 and s["kind"] == "spsa"
    csv = pd.read_csv(runs_root / "spsa" / "params.csv")
    (knob,) = s["params"]
    assert knob["name"] == "Knob" and knob["value"] == pytest.approx(csv["Knob"].iloc[-1],
                                                                     abs=1e-3)
    assert [p[0] for p in knob["path"]] == [0, 1, 2, 3, 4]
    (param,) = load_params(str(SPSA_KNOB))
    sched = Schedule(4)
    assert knob["c_k"][0] == [1, pytest.approx(sched.c_k(param, 1), abs=1e-3)]
    assert s["games_per_s"] > 0 and s["done"] == 4


def test_the_tuning_view_has_passes_moved_weights_and_piece_square_tables(server):
    status, t = get(server, "/api/run", id="tune")
    assert status == 200 and t["kind"] == "tuning"
    assert [p["pass"] for p in t["passes"]] == [0, 1]
    assert t["moved"] and all(m["weight"].startswith("pst_knight") for m in t["moved"])
    assert len(t["psts"]) == 12 and all(len(p["after"]) == 64 for p in t["psts"])


def test_each_tool_marks_its_runs_and_unmarked_runs_still_read(runs_root, tmp_path):
    from testing.rundir import KIND_FILE, mark, marked_kind

    assert marked_kind(runs_root / "matches" / "sprt") == "match"
    assert marked_kind(runs_root / "spsa") == "spsa"
    assert marked_kind(runs_root / "tune") == "tuning"
    old = tmp_path / "old"  # as written before the mark: each tool's reader knows its own
    shutil.copytree(runs_root, old, ignore=shutil.ignore_patterns(KIND_FILE, ".tune-cache"))
    mark(old / "notes", "data")  # a kind the dashboard does not show
    runs = Runs(str(old)).list()
    assert {r["id"]: r["kind"] for r in runs["runs"]} == {
        "matches/sprt": "match", "spsa": "spsa", "tune": "tuning"}
    assert not runs["errors"]


def test_the_engine_table_counts_the_moves_the_store_holds(server, runs_root):
    from testing.store import moves

    played = moves(str(runs_root / "matches" / "sprt"))
    status, m = get(server, "/api/run", id="matches/sprt")
    assert {r["name"]: r["moves"] for r in m["ratings"]} == \
        played.groupby("engine").size().to_dict()
    assert len(played) and (played["move"] >= 1).all() and (played["seconds"] >= 0).all()


def test_runs_are_read_without_writing(runs_root, tmp_path):
    """The store is opened read-only: reading a run changes none of its files."""
    import hashlib

    copy = tmp_path / "copy"
    shutil.copytree(runs_root / "matches" / "sprt", copy / "m")

    def files():
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in (copy / "m").iterdir() if not p.name.endswith(("-wal", "-shm"))}

    before = files()
    runs = Runs(str(copy))
    assert runs.detail("m")["games_stored"] == 12
    runs.games("m", {"engine": ["greedy"]})
    runs.game("m", "1")
    runs.list()
    assert files() == before


# -- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize("run_id,status", [
    ("../etc", 400), ("/etc", 404), ("matches/../../x", 400), ("notes", 404),
    ("matches/sprt/../../..", 400), ("matches", 404), ("", 400), ("spsa/%2e%2e", 404),
])
def test_paths_outside_the_directory_or_not_runs_are_refused(server, run_id, status):
    code, data = get(server, "/api/run", id=run_id)
    assert code == status and "error" in data


def test_a_symlink_out_of_the_directory_is_refused(server, runs_root, tmp_path):
    outside = tmp_path / "elsewhere"
    shutil.copytree(runs_root / "matches" / "sprt", outside)
    (runs_root / "link").symlink_to(outside, target_is_directory=True)
    try:
        code, data = get(server, "/api/run", id="link")
        assert code == 403 and "outside" in data["error"]
        ids = {r["id"] for r in get(server, "/api/runs")[1]["runs"]}
        assert "link" not in ids
    finally:
        (runs_root / "link").unlink()


def test_static_files_only_by_their_exact_names(server):
    assert get(server, "/runs")[0] == 200
    for path in ("/static/../server.py", "/static/runs.js/../../runs.py", "/games.sqlite",
                 "/matches/sprt/games.sqlite"):
        code, data = get(server, path)
        assert code == 404, path


def test_the_dashboards_server_still_serves_the_board(server):
    assert get(server, "/")[0] == 200 and get(server, "/static/app.js")[0] == 200
    code, data = get(server, "/api/games/nope")
    assert code == 404 and "no game 'nope'" in data["error"]


def test_bad_requests_get_a_clear_message(server):
    assert get(server, "/api/run")[0] == 400
    code, data = get(server, "/api/run/game", id="matches/sprt", game="x")
    assert code == 400 and "bad game number" in data["error"]
    code, data = get(server, "/api/run/game", id="matches/sprt", game="9999")
    assert code == 404 and "no game 9999" in data["error"]
    code, data = get(server, "/api/run/games", id="matches/sprt", result="maybe")
    assert code == 400 and "unknown result filter" in data["error"]
    code, data = get(server, "/api/run/games", id="matches/sprt", engine="nobody")
    assert code == 400 and "greedy, random" in data["error"]
    code, data = get(server, "/api/run/games", id="matches/sprt", termination="bogus")
    assert code == 400 and "no game of this run ended by 'bogus'" in data["error"]


def test_a_port_in_use_is_a_message_not_a_traceback(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        proc = subprocess.run([sys.executable, "-m", "dashboard", "gui", "--runs", str(tmp_path),
                               "--port", str(s.getsockname()[1])], capture_output=True,
                              text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 1 and "cannot listen on" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_without_runs_the_endpoints_say_how_to_get_them():
    with serving(BoardServer("127.0.0.1", 0)) as srv:
        code, data = get(srv, "/api/runs")
        assert code == 404 and "--runs DIR" in data["error"]


def test_a_missing_runs_directory_is_an_error(tmp_path):
    with pytest.raises(RunError):
        Runs(str(tmp_path / "none"))
    proc = subprocess.run([sys.executable, "-m", "dashboard", "gui", "--runs",
                           str(tmp_path / "none"), "--port", "0"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 1 and "is not a directory" in proc.stderr


def test_a_stopped_run_reads_as_stopped_with_its_resume_command(runs_root, tmp_path):
    copy = tmp_path / "runs"
    shutil.copytree(runs_root / "matches" / "sprt", copy / "m")
    db = sqlite3.connect(copy / "m" / "games.sqlite")
    db.execute("DELETE FROM games WHERE id > 4")
    db.execute("DELETE FROM meta WHERE key = 'sprt_decision'")
    db.commit()
    db.close()
    old = time.time() - 3600
    for p in (copy / "m").iterdir():
        os.utime(p, (old, old))
    (run,) = Runs(str(copy)).list()["runs"]
    assert run["state"] == "stopped" and run["resume"].endswith(str(copy / "m"))


# -- the page in headless Chromium ----------------------------------------------------------------


def test_a_live_match_in_headless_chromium(runs_root, tmp_path):
    """A match playing in the background appears in the list, its page counts games as they
    finish without a reload, a click on a game puts its moves on the board; the SPSA and
    tuning pages draw their plots. Screenshots go to test-artifacts/."""
    from selenium.webdriver.common.by import By

    from tests.wasp.test_gui import browser

    driver, wait, css = browser(tmp_path, 180, 0.2)
    live = runs_root / "live"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # Wasp-Py against itself at a few thousand nodes: a game every few seconds
    engine = ["-engine", f"cmd={sys.executable}", "arg=-m", "arg=wasp.cli"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "testing.cli", *engine, "name=wasp-a", *engine, "name=wasp-b",
         "-each", "nodes=2000", "-games", "40", "-maxmoves", "30", "-openings", f"file={EPD}",
         "-rundir", str(live)], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    srv = DashboardServer("127.0.0.1", 0, runs_dir=str(runs_root))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    def games_count():
        return driver.execute_script("const e = document.getElementById('games-count');"
                                     "return e ? Number(e.textContent) : -1;")

    try:
        driver.get(srv.url + "runs")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, 'tr.run[data-id="live"]'))
        row = css('tr.run[data-id="live"]')
        assert "running" in row.text
        driver.save_screenshot(str(ARTIFACTS / "runs-list.png"))
        row.click()
        wait.until(lambda d: games_count() >= 1)
        marker = driver.execute_script("window.__noReload = 1; return window.__noReload;")
        first = games_count()
        wait.until(lambda d: games_count() >= first + 2)  # counted as games finish
        assert driver.execute_script("return window.__noReload;") == marker  # no reload
        ratings = Runs(str(runs_root)).detail("live")["ratings"]  # the runner's own figures
        assert all(r["nps"] > 0 and r["seldepth"] >= r["mean_depth"] > 0 for r in ratings)
        knps = driver.execute_script(
            "return [...document.querySelectorAll('#ratings tr')][1].children[10].textContent")
        assert float(knps) > 0
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#games-table tr.game"))
        css("#games-table tr.game").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-moves .mv"))
        sans = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#replay-moves .mv")]
        assert sans and all(sans)
        pieces = driver.find_elements(By.CSS_SELECTOR, "#replay-board .piece")
        assert 2 <= len(pieces) <= 32
        css("#replay-back").click()  # one ply back: the board changes
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-moves .mv.current")
                   or len(sans) == 1)
        driver.save_screenshot(str(ARTIFACTS / "runs-match.png"))

        driver.get(srv.url + "runs#/run/spsa")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#spsa-paths svg path")) >= 1)
        assert css("#spsa-iterations").text == "4"
        driver.save_screenshot(str(ARTIFACTS / "runs-spsa.png"))

        driver.get(srv.url + "runs#/run/tune")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tuning-passes svg path"))
        assert len(driver.find_elements(By.CSS_SELECTOR, "#tuning-psts svg")) == 24
        driver.save_screenshot(str(ARTIFACTS / "runs-tuning.png"))
        assert css("#error").get_attribute("class") == "hidden"
    finally:
        driver.quit()
        proc.terminate()
        proc.wait(60)
        srv.shutdown()
        srv.server_close()


def test_a_run_that_cannot_be_read_is_named_with_the_reason(tmp_path):
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "games.sqlite").write_bytes(b"this is not a database" * 100)
    runs = Runs(str(tmp_path))
    listing = runs.list()
    assert listing["runs"] == []
    (err,) = listing["errors"]
    assert err["id"] == "broken" and "cannot read" in err["error"]
    with pytest.raises(RunError, match="cannot read"):
        runs.detail("broken")


