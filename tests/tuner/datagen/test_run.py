"""tuner.datagen.run and `wasp-tune datagen`: legal FENs, White's-view scores, results that agree
with how each game ended, the run directory's readers, SIGKILL then -resume, a broken game
skipped, Syzygy adjudication. Tiny node limits keep it quick."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import chess
import pytest

from tests.conftest import DATA, ROOT
from tuner import cli
from tuner.datagen.run import (
    DATA_FILE,
    GAMES_FILE,
    SIDE_FILE,
    STATE_FILE,
    VIRI_FILE,
    DatagenConfig,
    DatagenRun,
    SelfPlay,
    generate,
    load_book,
    read_games,
    read_records,
    read_run,
)
from tuner.formats.records import MATE_SCORE

LINE = re.compile(r"^(\S+ [wb] \S+ \S+ \d+ \d+) \| (-?\d+) \| (1\.0|0\.5|0\.0)$")
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
SMALL = dict(games=5, nodes=200, start_nodes=100, seed=3)


def _run(path, **kw):
    run = DatagenRun.create(str(path), DatagenConfig(**{**SMALL, **kw}))
    generate(run, progress=False)
    return run


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("dg") / "run")


def _material(board):
    return sum(v * (len(board.pieces(p, chess.WHITE)) - len(board.pieces(p, chess.BLACK)))
               for p, v in VALUES.items())


def test_data_txt_is_bullet_text_with_legal_fens(small_run):
    lines = open(small_run.file(DATA_FILE)).read().splitlines()
    side = open(small_run.file(SIDE_FILE)).read().splitlines()
    assert lines and len(lines) == len(side) == small_run.state["stats"]["positions"]
    for line in lines:
        m = LINE.match(line)
        assert m, line
        assert chess.Board(m.group(1)).is_valid(), line
        assert -32768 <= int(m.group(2)) <= 32767


def assert_scores_agree_with_material(run):
    """White's-view scores: nine in ten positions with a large material edge, out of check,
    score on that edge's side."""
    agree = total = 0
    for r in read_records(run.path):
        board = chess.Board(r.fen)
        edge = _material(board)
        if abs(edge) >= 5 and not board.is_check():
            total += 1
            agree += (r.score > 0) == (edge > 0)
    assert total >= 10
    assert agree >= 0.9 * total


def test_scores_agree_in_sign_with_a_large_material_edge(small_run):
    assert_scores_agree_with_material(small_run)


def test_results_agree_with_how_each_game_ended(small_run):
    c = small_run.config
    assert small_run.state["games"] == small_run.state["stats"]["games"] == c.games
    assert_games_agree(small_run)


def kill_after_first_game(cmd, rundir, timeout=300):
    """Start datagen `cmd`, SIGKILL it once its first game is committed (a wait on the run's
    state, not a timed sleep); the games committed."""
    proc = subprocess.Popen(cmd, env=_env(), cwd=str(ROOT), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    state = rundir / STATE_FILE
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if state.exists() and json.loads(state.read_text() or "{}").get("games", 0) >= 1:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return json.loads(state.read_text())["games"]


def assert_games_agree(run):
    """Every committed game of `run` replays from its start with legal moves (python-chess),
    its records are its positions in order, and its result agrees with how it ended."""
    c = run.config
    records = list(read_records(run.path))
    games = [g for g in read_games(run.path) if "error" not in g]
    assert len(games) == run.state["stats"]["games"] and games
    by_game = {}
    for r in records:
        by_game.setdefault(r.game, []).append(r)
    for g in games:
        recs = by_game[g["game"]]
        assert len(recs) == g["positions"]
        result = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}[g["result"]]
        assert all(r.result == result for r in recs)
        board = chess.Board(g["book"] or chess.STARTING_FEN)
        for m in g["opening"]:
            board.push_uci(m)
        assert board.fen() == g["start"]
        for r in recs:
            assert board.board_fen() == r.fen.split()[0] and board.ply() == r.ply
            move = chess.Move.from_uci(r.move)
            assert move in board.legal_moves
            board.push(move)
        scores = [r.score for r in recs]
        reason = g["reason"]
        if reason.startswith("checkmate"):
            assert board.is_checkmate()
            assert result == (0.0 if board.turn == chess.WHITE else 1.0)
        elif reason == "adjudicated win":
            tail = scores[-c.win_plies:]
            assert all(s >= c.win_score for s in tail) if result == 1.0 else \
                all(s <= -c.win_score for s in tail)
        elif reason == "adjudicated draw":
            assert result == 0.5
            assert all(abs(s) <= c.draw_score for s in scores[-c.draw_plies:])
        elif reason == "ply cap":
            assert result == 0.5 and len(g["opening"]) + len(recs) == c.max_plies
        elif reason == "stalemate":
            assert board.is_stalemate() and result == 0.5
        elif "repetition" in reason:
            assert board.is_repetition(3) and result == 0.5
        elif "insufficient" in reason:
            assert board.is_insufficient_material() and result == 0.5
        elif "fifty" in reason:
            assert board.halfmove_clock >= 100 and result == 0.5
        else:
            pytest.fail(f"unexpected ending {reason!r}")


def test_the_run_directory_marks_its_kind_and_keeps_statistics(small_run):
    info = read_run(small_run.path)
    assert info["kind"] == "datagen" and info["config"]["nodes"] == 200
    stats = json.load(open(small_run.file("stats.json")))
    assert stats["games"] == 5 and stats["finished"]
    assert sum(stats["results"].values()) == 5
    assert sum(stats["score"]["hist"]) == stats["positions"]
    assert stats["length"]["sum"] == stats["positions"]


@pytest.mark.parametrize("fen,sign", [
    ("3qk3/8/8/8/8/8/8/4K3 w - - 0 1", -1), ("3qk3/8/8/8/8/8/8/4K3 b - - 0 1", -1),
    ("4k3/8/8/8/8/8/8/3QK3 w - - 0 1", 1), ("4k3/8/8/8/8/8/8/3QK3 b - - 0 1", 1)])
def test_scores_are_whites_whichever_side_is_to_move(tmp_path, fen, sign):
    book = tmp_path / "book.epd"
    book.write_text(fen + "\n")
    run = _run(tmp_path / "r", games=1, random_plies=0, openings=str(book),
               start_bound=100000, win_score=500, win_plies=2)
    recs = list(read_records(run.path))
    assert recs and all(r.score * sign >= 500 for r in recs)
    assert recs[0].fen == fen
    assert read_games(run.path)[0]["result"] == ("1-0" if sign > 0 else "0-1")


def test_tablebases_adjudicate(tmp_path):
    import chess.syzygy

    book = tmp_path / "book.epd"
    book.write_text("3qk3/8/8/8/8/8/3n4/3QK3 w - - 0 1\n")  # 5 pieces: no table holds it
    run = _run(tmp_path / "r", games=1, random_plies=0, openings=str(book),
               start_bound=100000, tb=str(DATA / "syzygy"))
    g = read_games(run.path)[0]
    recs = list(read_records(run.path))
    assert g["reason"] == "tablebase" and recs
    board = chess.Board(recs[-1].fen)
    board.push_uci(recs[-1].move)
    assert len(board.piece_map()) <= 4
    with chess.syzygy.open_tablebase(str(DATA / "syzygy")) as tb:
        wdl = tb.probe_wdl(board)
    stm = {2: "1-0", -2: "0-1"}.get(wdl, "1/2-1/2")
    white = stm if board.turn == chess.WHITE else {"1-0": "0-1", "0-1": "1-0"}.get(stm, stm)
    assert g["result"] == white


def test_a_broken_game_is_reported_and_skipped(tmp_path, monkeypatch):
    search = SelfPlay._search

    def broken(self, side, pos, nodes):
        if pos.fullmove_number > 12 and self._broken:
            raise RuntimeError("engine crashed")
        return search(self, side, pos, nodes)

    monkeypatch.setattr(SelfPlay, "_broken", False, raising=False)
    play = SelfPlay._play

    def play_breaking_game_1(self, index, game):
        self._broken = index == 1
        return play(self, index, game)

    monkeypatch.setattr(SelfPlay, "_search", broken)
    monkeypatch.setattr(SelfPlay, "_play", play_breaking_game_1)
    run = _run(tmp_path / "r", games=3)
    games = read_games(run.path)
    assert games[1] == {"game": 1, "error": "RuntimeError: engine crashed"}
    assert {r.game for r in read_records(run.path)} == {0, 2}
    assert run.state["stats"]["errors"] == 1 and run.state["stats"]["games"] == 2


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_sigkill_then_resume_gives_the_uninterrupted_run(tmp_path, small_run):
    rundir = tmp_path / "killed"
    cmd = [sys.executable, "-m", "tuner.cli", "datagen", "-dir", str(rundir), "-quiet",
           "-games", "5", "-nodes", "200", "-start-nodes", "100", "-seed", "3"]
    done = kill_after_first_game(cmd, rundir)
    assert 1 <= done < 5
    with open(rundir / DATA_FILE, "a") as f:  # a game cut off mid-write
        f.write("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 1")
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "datagen", "-resume", str(rundir),
                        "-quiet"], env=_env(), cwd=str(ROOT), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in (DATA_FILE, SIDE_FILE, GAMES_FILE):
        assert (rundir / name).read_bytes() == open(small_run.file(name), "rb").read(), name


@pytest.fixture(scope="module")
def viri_run(tmp_path_factory):
    """small_run's settings with the viriformat data format."""
    run = DatagenRun.create(str(tmp_path_factory.mktemp("dgv") / "run"), DatagenConfig(**SMALL),
                            data_format="viriformat")
    generate(run, progress=False)
    return run


def test_a_viriformat_run_holds_the_text_runs_positions(viri_run, small_run, tmp_path):
    assert not os.path.exists(viri_run.file(DATA_FILE))
    assert viri_run.data_file == viri_run.file(VIRI_FILE)
    fields = lambda r: (r.fen, r.score, r.result, r.move, r.ply, r.game)  # noqa: E731
    assert [fields(r) for r in read_records(viri_run.path)] == \
        [fields(r) for r in read_records(small_run.path)]
    assert cli.main(["data", "convert", small_run.file(DATA_FILE), str(tmp_path / "t.vf"),
                     "-quiet"]) == 0
    assert open(viri_run.file(VIRI_FILE), "rb").read() == (tmp_path / "t.vf").read_bytes()
    assert open(viri_run.file(GAMES_FILE)).read() == open(small_run.file(GAMES_FILE)).read()
    assert read_run(viri_run.path)["files"]["data"] == VIRI_FILE
    positions = viri_run.state["stats"]["positions"]
    assert os.path.getsize(viri_run.file(VIRI_FILE)) < 5 * positions  # about 4.3 bytes each


def test_sigkill_then_resume_a_viriformat_run(tmp_path, viri_run):
    rundir = tmp_path / "killed"
    cmd = [sys.executable, "-m", "tuner.cli", "datagen", "-dir", str(rundir), "-quiet",
           "-games", "5", "-nodes", "200", "-start-nodes", "100", "-seed", "3",
           "-format", "viriformat"]
    done = kill_after_first_game(cmd, rundir)
    assert 1 <= done < 5
    with open(rundir / VIRI_FILE, "ab") as f:  # a game cut off mid-write
        f.write(open(viri_run.file(VIRI_FILE), "rb").read()[:50])
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "datagen", "-resume", str(rundir),
                        "-quiet"], env=_env(), cwd=str(ROOT), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in (VIRI_FILE, GAMES_FILE):
        assert (rundir / name).read_bytes() == open(viri_run.file(name), "rb").read(), name
    assert not (rundir / DATA_FILE).exists()
    assert "data.vf" in r.stdout


def test_more_processes_give_the_same_data(tmp_path, small_run):
    run = DatagenRun.create(str(tmp_path / "c2"), DatagenConfig(**SMALL))
    generate(run, concurrency=2, progress=False)
    assert open(run.file(DATA_FILE)).read() == open(small_run.file(DATA_FILE)).read()


def test_a_book_goes_to_forked_workers_once_not_with_every_game(tmp_path, monkeypatch):
    from testing.executor import LocalExecutor

    sent = []
    submit = LocalExecutor.submit
    monkeypatch.setattr(LocalExecutor, "submit",
                        lambda self, task: (sent.append(task), submit(self, task))[-1])
    config = {**SMALL, "games": 4, "openings": str(DATA / "openings-sample.epd")}
    serial = _run(tmp_path / "s", **config)
    run = DatagenRun.create(str(tmp_path / "c2"), DatagenConfig(**config))
    generate(run, concurrency=2, progress=False)
    assert len(sent) == 4 and all(task.book is None for task in sent)
    assert open(run.file(DATA_FILE)).read() == open(serial.file(DATA_FILE)).read()
    book = {" ".join(line.split()[:3]) for line in open(DATA / "openings-sample.epd")}
    assert all(" ".join(g["book"].split()[:3]) in book for g in read_games(run.path))


def test_a_bad_book_entry_is_named_by_file_and_line(tmp_path):
    book = tmp_path / "book.epd"
    book.write_text("# a comment\n4k3/8/8/8/8/8/8/4K3 w - - 0 1\n4k3/8/8/8/8/8/8/4KK2 w - -\n")
    with pytest.raises(ValueError, match=r"book.epd:3: not a legal position"):
        load_book(book)
    book.write_text("4k3/8/8/8/8/8/8/4K3 w - - 0 1\nnot a position at all\n")
    with pytest.raises(ValueError, match=r"book.epd:2: "):
        load_book(book)


def test_command_line_errors(tmp_path, capsys, small_run):
    assert cli.main(["datagen", "-dir", small_run.path, "-games", "2"]) == 1
    assert "-resume" in capsys.readouterr().err
    assert cli.main(["datagen", "-dir", str(tmp_path / "x"), "-nodes", "0"]) == 2
    assert "-nodes" in capsys.readouterr().err
    assert cli.main(["datagen", "-resume", str(tmp_path / "nothing")]) == 1
    assert "not a datagen run" in capsys.readouterr().err
    assert cli.main(["datagen", "-resume", small_run.path, "-format", "viriformat"]) == 2
    assert "-format" in capsys.readouterr().err
    assert cli.main(["datagen", "-dir", str(tmp_path / "y"), "-openings",
                     str(tmp_path / "no.epd")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()


def test_a_net_as_eval_file_plays_the_games_and_stays_with_the_run(tmp_path, small_run):
    net = str(ROOT / "wasp" / "evalfiles" / "wasp-py-3.nnue")
    run = _run(tmp_path / "net", eval_file=net)
    data = open(run.file(DATA_FILE)).read()
    assert data and data != open(small_run.file(DATA_FILE)).read()
    assert DatagenRun.open(run.path).config.eval_file == net
    again = DatagenRun.create(str(tmp_path / "c2"), DatagenConfig(**SMALL, eval_file=net))
    generate(again, concurrency=2, progress=False)
    assert open(again.file(DATA_FILE)).read() == data


def test_eval_file_errors(tmp_path, capsys):
    assert cli.main(["datagen", "-dir", str(tmp_path / "a"), "-eval-file",
                     str(tmp_path / "none.nnue")]) == 1
    err = capsys.readouterr().err
    assert "EvalFile not loaded" in err and len(err.strip().splitlines()) == 1
    assert cli.main(["datagen", "-dir", str(tmp_path / "b"), "-eval-file",
                     str(ROOT / "wasp" / "evalfiles" / "wasp-py-3.nnue"),
                     "-engine", "cmd=wasp"]) == 2
    assert "option.EvalFile=" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    net = tmp_path / "gone.nnue"  # a resumed run whose net has since gone: one line, data kept
    net.write_bytes((ROOT / "wasp" / "evalfiles" / "wasp-py-3.nnue").read_bytes())
    run = _run(tmp_path / "c", games=1, eval_file=str(net))
    data = open(run.file(DATA_FILE)).read()
    net.unlink()
    assert cli.main(["datagen", "-resume", run.path, "-games", "2", "-quiet"]) == 1
    err = capsys.readouterr().err
    assert "EvalFile not loaded" in err and len(err.strip().splitlines()) == 1
    assert open(run.file(DATA_FILE)).read() == data


def test_mates_are_clamped(small_run):
    scores = [r.score for r in read_records(small_run.path)]
    assert all(abs(s) <= MATE_SCORE for s in scores)


def test_the_runs_bf_conversion_decodes_apart_to_its_positions(tmp_path, small_run):
    from tests.tuner.formats.test_bulletformat import decode_apart, expected

    bf = tmp_path / "run.bf"
    assert cli.main(["data", "convert", small_run.file(DATA_FILE), str(bf), "-quiet"]) == 0
    blob = bf.read_bytes()
    lines = open(small_run.file(DATA_FILE)).read().splitlines()
    assert len(blob) == 32 * len(lines)
    for i, line in enumerate(lines):
        assert decode_apart(blob[32 * i:32 * (i + 1)])[:5] == expected(line), line


def test_the_notebook_plots_a_runs_statistics(small_run, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("matplotlib")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("WASP_DATAGEN_RUN", small_run.path)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.read(ROOT / "notebooks" / "datagen.ipynb", as_version=4)
    assert "WASP_DATAGEN_RUN" in nb.cells[1].source
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 1
    text = "".join(o.get("text", "") for o in outputs)
    assert "5 of 5 games at 200 nodes a move" in text
