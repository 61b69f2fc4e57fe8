"""`wasp gui`: the JSON API over HTTP (urllib against a server on an ephemeral port), the
command line, and an end-to-end game in headless Chromium driven by Selenium."""

import http.client
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

import chess
import chess.pgn
import pytest

from tests.conftest import ROOT
from wasp.fen import STARTING_FEN
from wasp.gui import BoardServer

ARTIFACTS = ROOT / "test-artifacts"
PROMOTION_FEN = "4k3/1P6/8/8/8/8/5PPP/6K1 w - - 0 1"


# -- a server on an ephemeral port, and requests to it ----------------------------------------


@contextmanager
def serving(srv):
    """`srv` (an HTTP server) serving from a thread for the with-block, then shut down."""
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(10)


@pytest.fixture(scope="module")
def server():
    from wasp.warmup import warmup

    warmup()
    with serving(BoardServer("127.0.0.1", 0)) as srv:
        yield srv


def call(srv, method, path, body=None, raw=None, headers=None):
    """(status, JSON or text, response headers) for a request; errors are answers too."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    hdrs = {"Content-Type": "application/json"} if data is not None else {}
    hdrs.update(headers or {})
    req = urllib.request.Request(srv.url.rstrip("/") + path, data=data, method=method,
                                 headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            status, text, rh = resp.status, resp.read().decode(), resp.headers
    except urllib.error.HTTPError as e:
        status, text, rh = e.code, e.read().decode(), e.headers
    if (rh.get("Content-Type") or "").startswith("application/json"):
        return status, json.loads(text), rh
    return status, text, rh


def new_game(srv, **body):
    status, state, _ = call(srv, "POST", "/api/games", body)
    assert status == 201, state
    return state


def play(srv, state, *moves):
    for m in moves:
        status, state, _ = call(srv, "POST", f"/api/games/{state['id']}/move", {"move": m})
        assert status == 200, state
    return state


def wait_until(srv, state, ok, timeout=120):
    """Long-poll the game until ok(state)."""
    deadline = time.monotonic() + timeout
    while not ok(state):
        assert time.monotonic() < deadline, f"timed out; last state {state}"
        _, state, _ = call(srv, "GET", f"/api/games/{state['id']}?since={state['version']}&wait=5")
    return state


# -- static files and paths ----------------------------------------------------------------------


def test_page_and_its_static_files_are_served(server):
    status, text, headers = call(server, "GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "/static/app.js" in text and "/static/style.css" in text
    for path, kind in (("/static/app.js", "text/javascript"), ("/static/style.css", "text/css")):
        status, text, headers = call(server, "GET", path)
        assert status == 200 and headers["Content-Type"].startswith(kind) and text


def test_page_uses_no_network_resources(server):
    """The page works offline: no CDN, no external fonts or scripts."""
    for path in ("/", "/static/app.js", "/static/style.css"):
        _, text, _ = call(server, "GET", path)
        assert "http://" not in text and "https://" not in text and "//cdn" not in text


def test_unknown_path_is_404_with_a_message(server):
    status, body, _ = call(server, "GET", "/nothing-here")
    assert status == 404 and "not found" in body["error"] and "/nothing-here" in body["error"]


@pytest.mark.parametrize("path", [
    "/../../etc/passwd",
    "/static/../../../../etc/passwd",
    "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/static/%2e%2e/server.py",
    "/static/..%2f..%2fgame.py",
    "/static/%2e%2e%2fgame.py",
    "/static/app.js/../../server.py",
    "//etc/passwd",
    "/static//etc/passwd",
    "/static/",
    "/static/index.html/",
    "/wasp/gui/server.py",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/static/..\\..\\server.py",
])
def test_path_traversal_attempts_get_404(server, path):
    # http.client sends the path byte for byte (no client-side clean-up of the dots)
    conn = http.client.HTTPConnection(server.server_address[0], server.server_address[1],
                                      timeout=30)
    conn.request("GET", path)
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    assert resp.status == 404
    assert "not found" in json.loads(text)["error"]
    assert "root:" not in text and "import" not in text


def test_a_refused_request_leaves_a_kept_alive_connection_usable(server):
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
    body = json.dumps({"move": "e2e4"})
    for path in ("/api/games/nosuchgame/move", "/nothing-here", "/api/games/x/fly"):
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert resp.status in (404, 405) and "error" in json.loads(resp.read())
        conn.request("GET", "/static/style.css")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read()
    conn.close()


def test_other_host_names_are_refused_on_loopback(server):
    status, body, _ = call(server, "GET", "/", headers={"Host": "evil.example:8000"})
    assert status == 403 and "Host" in body["error"]
    status, _, _ = call(server, "GET", "/", headers={"Host": f"localhost:{server.server_port}"})
    assert status == 200


def test_wrong_methods_get_405(server):
    assert call(server, "POST", "/", raw=b"")[0] == 405
    assert call(server, "GET", "/api/games")[0] == 405
    game = new_game(server)
    assert call(server, "GET", f"/api/games/{game['id']}/move")[0] == 405
    assert call(server, "POST", f"/api/games/{game['id']}", {})[0] == 405


# -- bad requests ---------------------------------------------------------------------------------


def test_malformed_json_is_400(server):
    status, body, _ = call(server, "POST", "/api/games", raw=b'{"fen": ')
    assert status == 400 and "malformed JSON" in body["error"]
    status, body, _ = call(server, "POST", "/api/games", raw=b'["e2e4"]')
    assert status == 400 and "object" in body["error"]
    status, body, _ = call(server, "POST", "/api/games", raw=b"\xff\xfe")
    assert status == 400


def test_json_must_be_sent_as_json(server):
    status, body, _ = call(server, "POST", "/api/games", raw=b"{}",
                           headers={"Content-Type": "text/plain"})
    assert status == 415 and "application/json" in body["error"]


def test_oversized_body_is_413(server):
    status, body, _ = call(server, "POST", "/api/games", raw=b" " * (65 * 1024))
    assert status == 413 and "too large" in body["error"]


@pytest.mark.parametrize("fen, reason", [
    ("xx", "expected 4 to 6 fields"),
    ("8/8/8/8/8/8/8/8 w - - 0 1", "king"),
    ("4k3/8/8/8/8/8/8/4K2P w - - 0 1", "pawns"),
    ("4k3/8/8/8/8/8/8/r3K3 b - - 0 1", "side not to move is in check"),
    ("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", "side not to move is in check"),
    ("   ", "non-empty"),
    (42, "string"),
])
def test_bad_fen_is_400_with_the_reason(server, fen, reason):
    status, body, _ = call(server, "POST", "/api/games", {"fen": fen})
    assert status == 400 and reason in body["error"], body


@pytest.mark.parametrize("player, reason", [
    ({"type": "robot"}, "'human' or 'engine'"),
    ({"type": "engine", "depth": 0}, "between 1 and 40"),
    ({"type": "engine", "movetime": "fast"}, "whole number"),
    ({"type": "engine", "movetime": 10}, "between 50"),
    ({"type": "engine", "movetime": 500, "depth": 3}, "not both"),
    ([1, 2], "expected an object"),
])
def test_bad_player_settings_are_400(server, player, reason):
    status, body, _ = call(server, "POST", "/api/games", {"black": player})
    assert status == 400 and reason in body["error"], body


def test_unknown_game_id_is_404(server):
    for method, path in (("GET", "/api/games/nosuchgame"),
                         ("POST", "/api/games/nosuchgame/move"),
                         ("GET", "/api/games/nosuchgame/pgn")):
        status, body, _ = call(server, method, path, {"move": "e2e4"} if method == "POST"
                               else None)
        assert status == 404 and "no game 'nosuchgame'" in body["error"]
    game = new_game(server)
    assert call(server, "POST", f"/api/games/{game['id']}/fly", {})[0] == 404
    assert call(server, "GET", f"/api/games/{game['id']}/pgn/x")[0] == 404


def test_illegal_move_is_400_and_the_game_is_unchanged(server):
    game = new_game(server)
    for move, reason in (("e2e5", "illegal move 'e2e5'"), ("e7e5", "illegal move"),
                         ("e2", "not a UCI move"), (17, "UCI form")):
        status, body, _ = call(server, "POST", f"/api/games/{game['id']}/move", {"move": move})
        assert status == 400 and reason in body["error"], body
    status, body, _ = call(server, "POST", f"/api/games/{game['id']}/move", {"mvoe": "e2e4"})
    assert status == 400 and "expected" in body["error"]
    _, after, _ = call(server, "GET", f"/api/games/{game['id']}")
    assert after["fen"] == STARTING_FEN and after["version"] == game["version"]
    assert play(server, after, "e2e4")["turn"] == "b"  # still usable


def test_a_move_on_the_engines_turn_is_409(server):
    game = new_game(server, white={"type": "engine", "movetime": 600_000})
    status, body, _ = call(server, "POST", f"/api/games/{game['id']}/move", {"move": "e2e4"})
    assert status == 409 and "engine's turn" in body["error"]
    call(server, "POST", f"/api/games/{game['id']}/close", {})


def test_undo_with_no_moves_and_stop_when_idle_are_409(server):
    game = new_game(server)
    assert call(server, "POST", f"/api/games/{game['id']}/undo", {})[0] == 409
    assert call(server, "POST", f"/api/games/{game['id']}/stop", {})[0] == 409
    status, body, _ = call(server, "POST", f"/api/games/{game['id']}/settings", {"colour": 1})
    assert status == 400 and "unknown settings" in body["error"]


# -- playing -----------------------------------------------------------------------------------


def test_human_against_human_moves_check_and_undo(server):
    game = new_game(server, white="human", black="human")
    assert game["legal"] and game["human_to_move"] and game["result"] is None
    game = play(server, game, "e2e4", "f7f6", "d2d4", "g7g5")
    assert [m["san"] for m in game["moves"]] == ["e4", "f6", "d4", "g5"]
    game = play(server, game, "d1h5")
    assert game["check"] == "e8" and game["moves"][-1]["san"] == "Qh5#"
    assert game["result"] == {"result": "1-0", "reason": "checkmate, White wins"}
    assert game["legal"] == [] and not game["human_to_move"]
    status, body, _ = call(server, "POST", f"/api/games/{game['id']}/move", {"move": "a7a6"})
    assert status == 409 and "game is over" in body["error"]
    _, game, _ = call(server, "POST", f"/api/games/{game['id']}/undo", {})
    assert len(game["moves"]) == 4 and game["result"] is None and game["turn"] == "w"
    assert game["last_move"] == "g7g5" and game["check"] is None


@pytest.mark.parametrize("fen, moves, result, reason", [
    ("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", ["f1f7"], "1/2-1/2", "stalemate"),
    ("7k/8/8/8/8/8/8/K6N w - - 0 1", [], "1/2-1/2", "insufficient material"),
    (STARTING_FEN, ["g1f3", "g8f6", "f3g1", "f6g8"] * 2, "1/2-1/2", "threefold repetition"),
    ("7k/8/8/8/8/8/R7/K7 w - - 99 80", ["a2a3"], "1/2-1/2", "fifty-move"),
    ("7k/8/8/8/8/6r1/7r/K7 b - - 0 1", ["g3g1"], "0-1", "checkmate, Black wins"),
])
def test_game_end_is_reported(server, fen, moves, result, reason):
    game = play(server, new_game(server, fen=fen, white="human", black="human"), *moves)
    assert game["result"]["result"] == result and reason in game["result"]["reason"]


def test_promotion_moves_and_their_san(server):
    game = new_game(server, fen=PROMOTION_FEN, black="human")
    assert {"b7b8q", "b7b8r", "b7b8b", "b7b8n"} <= set(game["legal"])
    game = play(server, game, "b7b8n")
    assert game["moves"][-1]["san"] == "b8=N"
    game = play(server, game, "e8e7")
    _, game, _ = call(server, "POST", f"/api/games/{game['id']}/undo", {})
    _, game, _ = call(server, "POST", f"/api/games/{game['id']}/undo", {})
    game = play(server, game, "b7b8q")
    assert game["moves"][-1]["san"] == "b8=Q+" and game["check"] == "e8"


def test_engine_answers_with_its_evaluation_and_pv_in_san(server):
    game = new_game(server, black={"type": "engine", "depth": 5})
    game = play(server, game, "e2e4")
    assert not game["human_to_move"]
    game = wait_until(server, game, lambda s: s["human_to_move"])
    reply = game["moves"][-1]
    assert reply["by"] == "engine"
    analysis = reply["analysis"]
    assert analysis["depth"] == 5 and analysis["pv"][0] == reply["san"]
    assert analysis["score"][0] in "+-#"
    assert analysis["pv_text"].startswith("1... " + reply["san"])
    board = chess.Board()
    board.push_uci("e2e4")
    for san in analysis["pv"]:  # every PV move is legal SAN, as python-chess writes it
        move = board.parse_san(san)
        assert board.san(move) == san
        board.push(move)


def test_undo_against_the_engine_goes_back_to_the_humans_turn(server):
    game = new_game(server, black={"type": "engine", "depth": 3})
    game = wait_until(server, play(server, game, "d2d4"), lambda s: s["human_to_move"])
    assert len(game["moves"]) == 2
    _, game, _ = call(server, "POST", f"/api/games/{game['id']}/undo", {})
    assert game["moves"] == [] and game["human_to_move"]


def test_engine_against_engine_is_driven_by_the_server(server):
    engine = {"type": "engine", "depth": 2}
    game = new_game(server, white=engine, black=engine)
    game = wait_until(server, game, lambda s: len(s["moves"]) >= 6)
    assert all(m["by"] == "engine" and m["analysis"]["pv"] for m in game["moves"])
    _, game, _ = call(server, "POST", f"/api/games/{game['id']}/undo", {})
    assert game["paused"]  # undo pauses engine against engine
    time.sleep(0.5)
    _, later, _ = call(server, "GET", f"/api/games/{game['id']}")
    assert len(later["moves"]) == len(game["moves"])
    _, game, _ = call(server, "POST", f"/api/games/{game['id']}/settings", {"paused": False})
    wait_until(server, game, lambda s: len(s["moves"]) > len(later["moves"]))
    call(server, "POST", f"/api/games/{game['id']}/close", {})


def test_engine_against_engine_plays_to_mate(server):
    engine = {"type": "engine", "depth": 3}
    game = new_game(server, fen="6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", white=engine,
                    black=engine)
    game = wait_until(server, game, lambda s: s["result"] is not None)
    assert game["moves"][0]["san"] == "Ra8#" and game["moves"][0]["analysis"]["score"] == "#1"
    assert game["result"]["reason"] == "checkmate, White wins"


def test_move_now_stops_a_long_search(server):
    game = new_game(server, black={"type": "engine", "movetime": 600_000})
    game = wait_until(server, play(server, game, "e2e4"), lambda s: s["thinking"])
    time.sleep(0.3)
    status, _, _ = call(server, "POST", f"/api/games/{game['id']}/stop", {})
    assert status == 200
    game = wait_until(server, game, lambda s: s["human_to_move"], timeout=30)
    assert game["moves"][-1]["by"] == "engine"


def test_long_poll_returns_on_a_change_or_after_the_wait(server):
    game = new_game(server, white="human", black="human")
    t0 = time.monotonic()
    _, same, _ = call(server, "GET", f"/api/games/{game['id']}?since={game['version']}&wait=0.5")
    assert same["version"] == game["version"] and time.monotonic() - t0 >= 0.45
    threading.Timer(0.3, lambda: play(server, game, "c2c4")).start()
    t0 = time.monotonic()
    _, moved, _ = call(server, "GET", f"/api/games/{game['id']}?since={game['version']}&wait=20")
    assert moved["version"] > game["version"] and time.monotonic() - t0 < 10
    status, body, _ = call(server, "GET", f"/api/games/{game['id']}?since=x")
    assert status == 400


def test_pgn_download_parses_with_python_chess(server):
    game = new_game(server, fen=PROMOTION_FEN, white="human", black="human")
    game = play(server, game, "b7b8r", "e8e7", "b8b7")
    status, text, headers = call(server, "GET", f"/api/games/{game['id']}/pgn")
    assert status == 200 and headers["Content-Type"].startswith("application/x-chess-pgn")
    assert headers["Content-Disposition"].startswith("attachment; filename=")
    parsed = chess.pgn.read_game(io.StringIO(text))
    assert parsed.headers["FEN"] == PROMOTION_FEN and parsed.headers["SetUp"] == "1"
    assert parsed.headers["White"] == "Human" and parsed.headers["Result"] == "*"
    assert [m.uci() for m in parsed.mainline_moves()] == ["b7b8r", "e8e7", "b8b7"]
    assert not parsed.errors


def test_cli_prints_the_address_and_stops_on_ctrl_c():
    proc = subprocess.Popen([sys.executable, "-m", "wasp.cli", "gui", "--port", "0"],
                            cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = ""
        deadline = time.monotonic() + 600
        while "board at" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
        url = line.split("board at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert resp.status == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- the page in headless Chromium --------------------------------------------------------------


def _chrome(download_dir):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        pytest.skip("chromium and chromium-driver are not installed")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1300,900"):
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='wasp-chrome-')}")
    opts.add_experimental_option("prefs", {
        "download.default_directory": str(download_dir),
        "download.prompt_for_download": False,
        "safebrowsing.enabled": False,
    })
    driver = webdriver.Chrome(options=opts, service=Service(driver_path))
    driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                           {"behavior": "allow", "downloadPath": str(download_dir)})
    return driver


def browser(download_dir, timeout, poll):
    """A headless Chromium (`_chrome`), a wait of `timeout` s on it (polled every `poll` s,
    stale elements ignored) and `css`, an element by selector; test-artifacts/ made for the
    screenshots."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = _chrome(download_dir)
    wait = WebDriverWait(driver, timeout, poll_frequency=poll,
                         ignored_exceptions=(StaleElementReferenceException,))
    ARTIFACTS.mkdir(exist_ok=True)
    return driver, wait, lambda selector: driver.find_element(By.CSS_SELECTOR, selector)


def test_a_game_in_headless_chromium(server, tmp_path):
    """Click moves, promote, flip, let the engine answer, read its PV, save and parse the PGN."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver, wait, css = browser(downloads, 120, 0.05)

    def board_state():
        return driver.execute_script(
            "const b = document.getElementById('board');"
            "return [b.dataset.fen, Number(b.dataset.version || 0)];")

    def click(square):
        css(f"#sq-{square}").click()

    def move(a, b):
        before = board_state()[1]
        click(a)
        click(b)
        wait.until(lambda d: board_state()[1] > before)

    def moves_text():  # read in one script: the list is redrawn on every change
        return driver.execute_script(
            "return [...document.querySelectorAll('#moves .move')].map(e => e.textContent)")

    try:
        driver.get(server.url)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#sq-e2 .piece"))

        # Human against human from the initial position: select a piece, see its squares, move.
        Select(css("#black-type")).select_by_value("human")
        css("#newgame").click()
        wait.until(lambda d: css("#status").text.startswith("White to move"))
        click("g1")
        targets = {e.get_attribute("data-square")
                   for e in driver.find_elements(By.CSS_SELECTOR, ".sq.target")}
        assert targets == {"f3", "h3"}
        assert "selected" in css("#sq-g1").get_attribute("class")
        click("g1")  # a second click puts it down
        assert not driver.find_elements(By.CSS_SELECTOR, ".sq.target")
        move("e2", "e4")
        move("d7", "d5")
        move("g1", "f3")
        assert moves_text() == ["e4", "d5", "Nf3"]
        for sq in ("g1", "f3"):
            assert "last" in css(f"#sq-{sq}").get_attribute("class")
        click("f3")
        click("f5")  # not a legal square: nothing is sent, the knight is put down
        assert moves_text() == ["e4", "d5", "Nf3"]
        css("#undo").click()
        wait.until(lambda d: moves_text() == ["e4", "d5"])
        move("f1", "b5")  # check: the king's square is marked
        assert moves_text() == ["e4", "d5", "Bb5+"]
        assert "check" in css("#sq-e8").get_attribute("class")
        assert "check" in css("#status").text

        # A bad FEN: a clear message, and the game on the board stays playable.
        css("#fen").send_keys("this is not a fen")
        css("#newgame").click()
        wait.until(lambda d: "invalid fen" in css("#message").text)
        assert moves_text() == ["e4", "d5", "Bb5+"]
        move("c7", "c6")  # still playable after the refusal

        # From a FEN one move from promotion, against the engine at depth 4.
        Select(css("#black-type")).select_by_value("engine")
        Select(css("#black-mode")).select_by_value("depth")
        css("#black-value").clear()
        css("#black-value").send_keys("4")
        css("#fen").clear()
        css("#fen").send_keys(PROMOTION_FEN)
        css("#newgame").click()
        wait.until(lambda d: board_state()[0] == PROMOTION_FEN)
        assert css("#message").text == ""
        click("b7")
        click("b8")
        chooser = css("#promotion")
        assert chooser.is_displayed()
        driver.save_screenshot(str(ARTIFACTS / "gui-promotion.png"))
        pieces = [b.get_attribute("data-piece") for b in
                  driver.find_elements(By.CSS_SELECTOR, "#promotion-pieces button")]
        assert pieces == ["q", "r", "b", "n"]
        css("#promotion-cancel").click()
        assert not chooser.is_displayed() and board_state()[0] == PROMOTION_FEN
        click("b7")
        click("b8")
        css('#promotion-pieces button[data-piece="q"]').click()
        wait.until(lambda d: moves_text()[:1] == ["b8=Q+"])

        # The engine answers (it is in check); its evaluation and PV appear in SAN.
        wait.until(lambda d: len(moves_text()) >= 2 and "Black (Wasp-Py) is thinking"
                   not in css("#status").text)
        reply = moves_text()[1]
        pv = css("#pv").text
        assert pv.startswith("1... " + reply), pv
        assert css("#eval").text[0] in "+-#"
        assert "depth 4" in css("#eval-detail").text
        board = chess.Board(PROMOTION_FEN)
        board.push_san("b8=Q+")
        for word in pv.split():
            if not word[0].isdigit():
                board.push_san(word)  # each PV move is legal SAN

        # Flip: black at the bottom, h1 top-left ... a8 bottom-right.
        css("#flip").click()
        squares = [e.get_attribute("data-square")
                   for e in driver.find_elements(By.CSS_SELECTOR, "#board .sq")]
        assert squares[0] == "h1" and squares[-1] == "a8"
        assert css("#board").get_attribute("data-flipped") == "true"

        # One more move by clicking (the queen goes back down the b-file), then the engine again.
        move("b8", "b3")
        wait.until(lambda d: len(moves_text()) >= 4 and css("#status").text.startswith("White"))
        assert css("#pv").text
        driver.save_screenshot(str(ARTIFACTS / "gui-board.png"))

        # Save the PGN: a download, parsed by python-chess.
        sans = moves_text()
        css("#save").click()
        deadline = time.monotonic() + 30
        files = []
        while time.monotonic() < deadline:
            files = [f for f in os.listdir(downloads) if f.endswith(".pgn")]
            if files:
                break
            time.sleep(0.1)
        assert files, os.listdir(downloads)
        text = (downloads / files[0]).read_text()
        game = chess.pgn.read_game(io.StringIO(text))
        assert not game.errors
        assert game.headers["FEN"] == PROMOTION_FEN
        assert game.headers["White"] == "Human" and game.headers["Black"] == "Wasp-Py (depth 4)"
        node, played = game, []
        for m in game.mainline_moves():
            played.append(node.board().san(m))
            node = node.next()
        assert played == sans
        assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"
                    and "favicon" not in e["message"] and "400" not in e["message"]]
    except Exception:
        driver.save_screenshot(str(ARTIFACTS / "gui-board-failure.png"))
        raise
    finally:
        driver.quit()


# -- engine options of `wasp gui` -------------------------------------------------------------

ORIGINAL = ROOT / "wasp" / "evalfiles" / "wasp-1.02.txt"


def _engine_analysis(settings):
    """The analysis of the board engine's first move (white, depth 6) with these options."""
    from wasp.gui.game import Game

    game = Game("options", white={"type": "engine", "depth": 6}, engine_settings=settings)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            state = game.state()
            if state["moves"]:
                return state["moves"][0]["analysis"]
            game.wait_for_change(state["version"], 1.0)
        raise AssertionError("the engine did not move")
    finally:
        game.close()


def test_board_engine_takes_an_eval_file_and_search_parameters():
    base = _engine_analysis([])
    assert _engine_analysis([("EvalFile", str(ORIGINAL))])["nodes"] != base["nodes"]
    assert _engine_analysis([("NullMoveR", "1")])["nodes"] != base["nodes"]
    assert _engine_analysis([("Hash", "1")])["depth"] == 6


def test_cli_refuses_a_bad_engine_option_before_serving():
    r = subprocess.run([sys.executable, "-m", "wasp.cli", "gui", "--port", "0", "--option",
                        "NullMoveR=99"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 1 and "NullMoveR: 99 is outside its range" in r.stderr
