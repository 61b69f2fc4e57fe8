"""Syzygy tables in the engine (wasp.tablebase, SyzygyPath): the root keeps the tables' result,
converts wins within the 50-move rule and reports tablebase scores; python-chess's probe of the
tables copied into tests/data/syzygy is the oracle."""

import io
import random
import shutil

import chess
import chess.engine
import chess.syzygy
import pytest

from tests.conftest import DATA, ROOT
from tests.wasp.test_uci import ENGINE_CMD, _which
from wasp.engine import Engine
from wasp.tablebase import TB_WIN, Tablebases
from wasp.uci import UciEngine
from wasp.xboard import XboardEngine

TABLES = str(DATA / "syzygy")
# the endgames whose tables (and their captures' and promotions') are in tests/data/syzygy;
# KRvKN has only its WDL file there: its root moves are ranked by WDL (no DTZ)
MATERIALS = ("KQvK", "KRvK", "KPvK", "KRvKR", "KQvKQ", "KRvKN")


def random_endgame(material: str, rng: random.Random) -> chess.Board:
    """A legal position of `material` (e.g. "KRvKR"; either side may own the first part) with
    a legal move to play, pieces on random squares."""
    while True:
        board = chess.Board(None)
        strong, weak = material.split("v")
        if rng.random() < 0.5:
            strong, weak = strong.lower(), weak
        else:
            strong, weak = strong, weak.lower()
        squares = rng.sample(range(64), len(strong) + len(weak))
        ok = True
        for symbol, square in zip(strong + weak, squares, strict=True):
            piece = chess.Piece.from_symbol(symbol)
            if piece.piece_type == chess.PAWN and chess.square_rank(square) in (0, 7):
                ok = False
            board.set_piece_at(square, piece)
        board.turn = rng.random() < 0.5
        if ok and board.is_valid() and any(board.legal_moves):
            return board


def sample_positions(tables, wins: int, draws: int, seed: int):
    """(fen, wdl) of `wins` won (WDL 2) and `draws` drawn positions of MATERIALS."""
    rng = random.Random(seed)
    won, drawn = [], []
    while len(won) < wins or len(drawn) < draws:
        board = random_endgame(rng.choice(MATERIALS), rng)
        wdl = tables.probe_wdl(board)
        if wdl == 2 and len(won) < wins:
            won.append((board.fen(), wdl))
        elif wdl == 0 and len(drawn) < draws:
            drawn.append((board.fen(), wdl))
    return won + drawn


def _best(engine: Engine, fen: str, **limits) -> tuple[str, object]:
    engine.set_position(fen)
    done = []
    engine.go(**limits, on_done=lambda best, ponder, result: done.append((best, result)))
    engine.wait()
    return done[0]


def _kept(tables, fen: str, wdl: int, move: str) -> bool:
    board = chess.Board(fen)
    board.push_uci(move)
    if board.is_checkmate():
        return wdl == 2
    return -tables.probe_wdl(board) == wdl


def test_syzygy_path_lists_the_tables_and_refuses_a_path_without_any(tmp_path):
    engine = Engine()
    message = engine.set_option("SyzygyPath", TABLES)
    assert ": 15 table files, up to 4 pieces" in message
    with pytest.raises(ValueError, match="no Syzygy tables"):
        engine.set_option("SyzygyPath", str(tmp_path))
    with pytest.raises(ValueError, match="missing: no such directory"):
        engine.set_option("SyzygyPath", f"{TABLES}:{tmp_path / 'missing'}")
    with pytest.raises(ValueError, match="README.md: not a directory"):
        engine.set_option("SyzygyPath", str(ROOT / "README.md"))
    assert engine.tablebases.paths == TABLES  # unchanged by the refused values
    assert engine.set_option("SyzygyPath", "<empty>") == "SyzygyPath: no tables"
    assert engine.tablebases is None


def test_setting_the_path_opens_no_table_file():
    """SyzygyPath only lists the directory (setoption stays quick); files open on a probe."""
    tables = Tablebases(TABLES)
    assert all(t.data is None for t in tables.tables.wdl.values())
    assert tables.wdl(chess.Board("8/8/8/8/8/3k4/8/R3K3 w - - 0 1")) == 2
    assert tables.tables.wdl["KRvK"].data is not None
    tables.close()


def test_depth_1_keeps_the_tables_result_in_sampled_wins_and_draws():
    """The hidden check's kind: `go depth 1` keeps the win or the draw of unseen positions.
    Without the tables the same search lets some slip (so the check can fail)."""
    with chess.syzygy.open_tablebase(TABLES) as tables:
        sample = sample_positions(tables, wins=80, draws=70, seed=19)
        plain, probing = Engine(), Engine()
        probing.set_option("SyzygyPath", TABLES)
        lost_plain, lost_probing = [], []
        for fen, wdl in sample:
            if not _kept(tables, fen, wdl, _best(plain, fen, depth=1)[0]):
                lost_plain.append(fen)
            move = _best(probing, fen, depth=1)[0]
            if not _kept(tables, fen, wdl, move):
                lost_probing.append((fen, move))
    assert lost_probing == []
    assert lost_plain, "the sample is too easy to tell probing from not probing"


def test_a_won_position_is_converted_within_the_fifty_move_rule():
    """With the 50-move counter at 100 - DTZ (one ply to spare at most), every move played
    still reaches a zeroing move in time: the win is not handed to the 50-move rule."""
    engine = Engine()
    engine.set_option("SyzygyPath", TABLES)
    rng = random.Random(50)
    checked = 0
    with chess.syzygy.open_tablebase(TABLES) as tables:
        while checked < 12:
            board = random_endgame(rng.choice(("KRvK", "KQvK", "KPvK")), rng)
            if tables.probe_wdl(board) != 2:
                continue
            dtz = tables.probe_dtz(board)
            if dtz < 10:
                continue
            board.halfmove_clock = 100 - dtz - 1
            move, _ = _best(engine, board.fen(), depth=1)
            board.push_uci(move)
            if not board.is_checkmate() and board.halfmove_clock:
                assert -tables.probe_dtz(board) + board.halfmove_clock <= 100, board.fen()
            checked += 1


def test_uci_reports_tablebase_scores_and_tbhits():
    out = io.StringIO()
    uci = UciEngine(out=out)
    for line in ("setoption name SyzygyPath value " + TABLES,
                 "position fen 8/8/8/4k3/8/8/8/R3K3 w - - 0 1", "go depth 2"):
        uci.handle(line)
    uci.engine.wait()
    for line in ("position fen 8/8/8/4k3/8/8/8/R3K3 b - - 0 1", "go depth 2"):
        uci.handle(line)
    uci.engine.wait()
    for line in ("position fen 8/8/3k4/8/r7/8/3K4/7R b - - 0 1", "go depth 2"):
        uci.handle(line)
    uci.engine.wait()
    text = out.getvalue()
    infos = [ln for ln in text.splitlines() if ln.startswith("info depth 2 ")]
    assert len(infos) == 3
    assert f"score cp {TB_WIN} " in infos[0] and f"score cp -{TB_WIN} " in infos[1]
    assert "score cp 0 " in infos[2]
    for ln in infos:
        assert int(ln.split(" tbhits ")[1].split()[0]) > 0
    assert "info string SyzygyPath" in text


def test_without_tables_tbhits_is_zero_and_scores_are_the_search_s():
    out = io.StringIO()
    uci = UciEngine(out=out)
    for line in ("position fen 8/8/8/4k3/8/8/8/R3K3 w - - 0 1", "go depth 2"):
        uci.handle(line)
    uci.engine.wait()
    info = [ln for ln in out.getvalue().splitlines() if ln.startswith("info depth 2 ")][-1]
    assert " tbhits 0 " in info and f"cp {TB_WIN} " not in info


def test_probe_limit_and_the_fifty_move_option():
    engine = Engine()
    engine.set_option("SyzygyPath", TABLES)
    engine.set_position("8/8/8/4k3/8/8/8/R3K3 w - - 0 1")
    assert engine.root_probe() is not None
    engine.set_option("SyzygyProbeLimit", "2")
    assert engine.root_probe() is None
    engine.set_option("SyzygyProbeLimit", "0")
    assert engine.root_probe() is None
    with pytest.raises(ValueError):
        engine.set_option("SyzygyProbeLimit", "8")
    engine.set_option("SyzygyProbeLimit", "7")
    engine.set_option("Syzygy50MoveRule", "false")
    assert engine.syzygy_50 is False and engine.root_probe().moves


def test_xboard_egtpath_syzygy_sets_the_tables():
    out = io.StringIO()
    xb = XboardEngine(out=out)
    for line in ("xboard", "protover 2"):
        xb.handle(line)
    assert 'egt="syzygy"' in out.getvalue()
    assert 'option="SyzygyPath -path "' in out.getvalue()
    xb.handle(f"egtpath syzygy {TABLES}")
    assert "telluser SyzygyPath" in out.getvalue()
    assert xb.engine.tablebases is not None
    xb.handle("egtpath gaviota /nowhere")  # other kinds of tables: ignored
    xb.handle("egtpath syzygy /nowhere")
    assert "SyzygyPath not set: /nowhere: no such directory" in out.getvalue()


def _game(white, black, board, max_plies=200):
    while not board.is_game_over(claim_draw=True) and board.ply() < max_plies:
        engine = white if board.turn == chess.WHITE else black
        board.push(engine.play(board, chess.engine.Limit(nodes=2000)).move)
    return board


@pytest.mark.slow
@pytest.mark.engines
def test_full_games_against_stockfish_convert_a_win_and_hold_a_draw():
    """A KRvK win (DTZ 31 plies) is mated in a game against Stockfish,
    and a KRvKR draw is held (no position after our move loses for us)."""
    sf = _which("stockfish")
    if sf is None or shutil.which(ENGINE_CMD[0]) is None:
        pytest.skip("stockfish not installed")
    with chess.engine.SimpleEngine.popen_uci(ENGINE_CMD, timeout=180) as wasp, \
            chess.engine.SimpleEngine.popen_uci(sf) as fish, \
            chess.syzygy.open_tablebase(TABLES) as tables:
        wasp.configure({"SyzygyPath": TABLES})
        fish.configure({"Threads": 1, "Hash": 16})
        won = chess.Board("8/8/8/3k4/8/8/8/1R2K3 w - - 0 1")
        assert tables.probe_wdl(won) == 2 and tables.probe_dtz(won) >= 20
        board = _game(wasp, fish, won)
        assert board.is_checkmate() and board.turn == chess.BLACK, board.fen()
        drawn = chess.Board("8/8/3k4/8/r7/8/3K4/7R b - - 0 1")
        assert tables.probe_wdl(drawn) == 0
        board = chess.Board(drawn.fen())
        while not board.is_game_over(claim_draw=True) and board.ply() < 80:
            if board.turn == chess.BLACK:
                board.push(wasp.play(board, chess.engine.Limit(nodes=2000)).move)
                if not board.is_game_over():
                    assert tables.probe_wdl(board) <= 0, board.fen()
            else:
                board.push(fish.play(board, chess.engine.Limit(nodes=2000)).move)
        assert board.result(claim_draw=True) != "1-0", board.fen()


def test_without_dtz_files_the_root_is_ranked_by_wdl():
    """KRvKN has only its WDL file in tests/data/syzygy: the moves are ranked by WDL, and
    still only the winning ones are kept."""
    engine = Engine()
    engine.set_option("SyzygyPath", TABLES)
    fen = "7R/8/3k4/8/8/6Kn/8/8 w - - 0 1"
    engine.set_position(fen)
    probe = engine.root_probe()
    with chess.syzygy.open_tablebase(TABLES) as tables:
        assert tables.probe_wdl(chess.Board(fen)) == 2
        assert probe is not None and probe.dtz is False and probe.moves
        assert all(_kept(tables, fen, 2, m) for m in probe.moves)
        losing = [m for m in probe.ranks if not _kept(tables, fen, 2, m)]
        assert losing and not set(losing) & set(probe.moves)
    engine.set_position("8/8/8/4k3/8/8/8/R3K3 w - - 0 1")
    assert engine.root_probe().dtz is True


@pytest.mark.engines
@pytest.mark.parametrize("fen", ["8/8/8/8/4K3/8/3k4/6R1 w - - 0 1",
                                 "8/2Q1K3/8/8/8/3k4/8/8 w - - 0 1"])
def test_depth_one_converts_wins_that_a_root_only_repetition_check_drew(fen):
    """At `go depth 1` every winning move looks alike until a repetition makes the ranking go
    by DTZ; counting repetitions of the root only, these games went round in circles to a
    threefold repetition. Any position repeated since the last zeroing move counts."""
    sf = _which("stockfish")
    if sf is None:
        pytest.skip("stockfish not installed")
    with chess.engine.SimpleEngine.popen_uci(ENGINE_CMD, timeout=180) as wasp, \
            chess.engine.SimpleEngine.popen_uci(sf) as fish:
        wasp.configure({"SyzygyPath": TABLES})
        board = chess.Board(fen)
        while not board.is_game_over(claim_draw=True) and board.ply() < 300:
            if board.turn == chess.WHITE:
                board.push(wasp.play(board, chess.engine.Limit(depth=1)).move)
            else:
                board.push(fish.play(board, chess.engine.Limit(nodes=20000)).move)
        assert board.is_checkmate(), (board.result(claim_draw=True), board.fen())


def test_has_repeated_looks_at_every_position_since_the_last_zeroing_move():
    from wasp.board import Position

    pos = Position("8/8/8/8/4K3/8/3k4/6R1 w - - 0 1")
    assert not pos.has_repeated()
    for move in ("g1g2", "d2d1", "g2g1", "d1d2"):  # back where it started: a repetition
        pos.push_uci(move)
    assert pos.has_repeated()
    pos.push_uci("g1g3")  # a new position, but the repetition stays in the history
    assert pos.has_repeated() and not pos.is_repetition(2)
    pos.push_uci("d2c2")
    assert pos.has_repeated()
