"""The engine with a net: EvalFile tells a net from a parameter file, bad nets give one line,
`wasp eval`/`wasp bench` take --eval-file, and python-chess plays legal games against it."""

import json
import subprocess
import sys

import chess
import chess.engine
import numpy as np
import pytest

from tests.conftest import ROOT
from tests.wasp.nnue.test_network import bullet_bytes, numpy_forward, random_floats
from wasp.board import Position
from wasp.engine import Engine
from wasp.nnue import netfile
from wasp.nnue.accumulator import nn_array
from wasp.nnue.evaluate import KPK_WIN, evaluate_position

WASP = [sys.executable, "-m", "wasp.cli"]
EVALFILE = ROOT / "wasp" / "evalfiles" / "wasp-1.02.txt"
SHIPPED_NET = ROOT / "wasp" / "evalfiles" / "wasp-py-3.nnue"


@pytest.fixture(scope="module")
def net_path(tmp_path_factory):
    """A random N = 16 net in bullet's layout (written by the tests' own writer)."""
    path = tmp_path_factory.mktemp("net") / "random16.nnue"
    path.write_bytes(bullet_bytes(*random_floats(16, 42)))
    return path


def test_evalfile_tells_a_net_from_a_parameter_file(net_path):
    engine = Engine()
    message = engine.set_option("EvalFile", str(net_path))
    assert isinstance(engine.W, netfile.Net) and engine.W.hidden == 16
    assert "net" in message and "16" in message
    engine.set_option("EvalFile", str(EVALFILE))
    assert isinstance(engine.W, np.ndarray)
    assert netfile.looks_like_net(net_path) and not netfile.looks_like_net(EVALFILE)


def test_the_searcher_evaluates_with_the_net_and_drops_it_for_a_parameter_file(net_path):
    engine = Engine()
    engine.set_option("EvalFile", str(net_path))
    engine.load()
    assert engine.searcher.net_hidden == 16
    engine.set_option("EvalFile", str(EVALFILE))
    assert engine.searcher.net_hidden == 0
    engine.set_option("EvalFile", str(net_path))
    assert engine.searcher.net_hidden == 16
    engine.set_option("EvalFile", "")
    assert engine.searcher.net_hidden == 0


@pytest.mark.parametrize("size", [100, 197440 - 64, 197440 + 64, 10240])
def test_a_net_of_no_valid_size_is_one_clear_error(tmp_path, size):
    path = tmp_path / "bad.nnue"
    path.write_bytes(bytes(range(256)) * (size // 256) + bytes(size % 256))
    with pytest.raises(ValueError, match="EvalFile not loaded: .*bad.nnue: .* bytes is no"):
        Engine().set_option("EvalFile", str(path))


def test_wasp_bench_with_a_bad_net_says_so_in_one_line(tmp_path):
    path = tmp_path / "truncated.nnue"
    path.write_bytes(bullet_bytes(*random_floats(8, 1))[:-128])
    r = subprocess.run([*WASP, "bench", "1", "--eval-file", str(path)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    errors = r.stderr.strip().splitlines()
    assert len(errors) == 1 and "truncated.nnue" in errors[0] and "bytes is no" in errors[0]


def test_uci_setoption_of_a_bad_net_answers_an_info_string(tmp_path):
    path = tmp_path / "bad.nnue"
    path.write_bytes(bytes(range(256)) * 40)
    r = subprocess.run([*WASP], input=f"uci\nsetoption name EvalFile value {path}\nisready\n"
                       "quit\n", capture_output=True, text=True, timeout=600)
    assert "readyok" in r.stdout and "Traceback" not in r.stderr
    assert any(line.startswith("info string error: EvalFile not loaded") and "bad.nnue" in line
               for line in r.stdout.splitlines()), r.stdout


def test_wasp_eval_prints_the_nets_output_and_the_evaluation_the_search_uses(net_path):
    data = net_path.read_bytes()
    for fen in ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3",
                "8/5k2/8/8/8/8/4P3/4K3 w - - 0 1"]:
        r = subprocess.run([*WASP, "eval", fen, "--eval-file", str(net_path)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        nnue = [ln for ln in lines if ln.startswith("NNUE:")]
        assert nnue == [f"NNUE: {numpy_forward(data, fen)} (side to move)"]
        final = lines[lines.index(nnue[0]) + 1]
        net, used = evaluate_position(nn_array(netfile.read(net_path)), Position(fen))
        assert final.startswith(f"Final evaluation: {used} (side to move)")


def test_the_shipped_net_is_what_its_record_says_and_knows_material():
    data = SHIPPED_NET.read_bytes()
    meta = json.loads(SHIPPED_NET.with_name(SHIPPED_NET.name + ".json").read_text())
    assert len(data) == meta["bytes"] == netfile.file_size(meta["hidden"])
    assert meta["command"].startswith("wasp-tune nnue train ") and meta["settings"]["mirror"]
    nn = nn_array(netfile.read(SHIPPED_NET))
    scores = {}
    for name, fen in [
            ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
            ("queen up", "rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3"),
            ("queen down", "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNB1KBNR w KQkq - 0 3")]:
        net, _ = evaluate_position(nn, Position(fen))
        assert net == numpy_forward(data, fen)
        scores[name] = net
    assert abs(scores["start"]) < 150 and scores["queen up"] > 600 and scores["queen down"] < -600


def test_the_engine_plays_the_shipped_net_by_default_and_empty_is_the_hand_written_one():
    from wasp.engine import DEFAULT_NET, OPTIONS, eval_file_path

    assert DEFAULT_NET == SHIPPED_NET.name
    declared = next(o for o in OPTIONS if o.name == "EvalFile")
    assert declared.uci() == f"option name EvalFile type string default {SHIPPED_NET.name}"
    engine = Engine()
    assert isinstance(engine.W, netfile.Net) and engine.W.hidden == 128
    engine.load()
    assert engine.searcher.net_hidden == 128
    assert "hand-written" in engine.set_option("EvalFile", "<empty>")
    assert engine.W is None and engine.searcher.net_hidden == 0
    # a bare name is a file shipped in wasp/evalfiles; a path stays as given
    assert eval_file_path(EVALFILE.name) == str(EVALFILE)
    assert eval_file_path("sub/" + EVALFILE.name) == "sub/" + EVALFILE.name
    engine.set_option("EvalFile", EVALFILE.name)
    assert isinstance(engine.W, np.ndarray) and engine.searcher.net_hidden == 0
    engine.set_option("EvalFile", SHIPPED_NET.name)
    assert engine.searcher.net_hidden == 128


def test_wasp_eval_shows_the_default_net_and_with_an_empty_eval_file_the_trace():
    fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    net = subprocess.run([*WASP, "eval", fen], capture_output=True, text=True, timeout=600)
    assert net.returncode == 0, net.stderr
    assert f"NNUE: {numpy_forward(SHIPPED_NET.read_bytes(), fen)} (side to move)" in net.stdout
    trace = subprocess.run([*WASP, "eval", fen, "--eval-file", ""], capture_output=True,
                           text=True, timeout=600)
    assert trace.returncode == 0, trace.stderr
    assert "NNUE" not in trace.stdout and "Final evaluation" in trace.stdout


def test_kpk_knowledge_and_bare_material_draws_stay_on_top_of_the_net(net_path):
    """KPK positions score as the tablebase says (a win at least KPK_WIN for the side that
    wins, a draw 0), whatever the net says; a bare minor is a draw."""
    import chess.syzygy

    NN = nn_array(netfile.read(net_path))
    rng = np.random.default_rng(3)
    kinds = set()
    with chess.syzygy.open_tablebase(str(ROOT / "tests" / "data" / "syzygy")) as tb:
        while len(kinds) < 3 or rng.random() > 0.02:
            board = chess.Board(None)
            squares = rng.choice(64, 3, replace=False)
            strong = bool(rng.integers(2))
            board.set_piece_at(int(squares[0]), chess.Piece(chess.KING, chess.WHITE))
            board.set_piece_at(int(squares[1]), chess.Piece(chess.KING, chess.BLACK))
            board.set_piece_at(int(squares[2]), chess.Piece(chess.PAWN, strong))
            board.turn = bool(rng.integers(2))
            if chess.square_rank(int(squares[2])) in (0, 7) or not board.is_valid():
                continue
            wdl = tb.probe_wdl(board)
            net, used = evaluate_position(NN, Position(board.fen()))
            if wdl > 0:
                assert used >= KPK_WIN, board.fen()
            elif wdl < 0:
                assert used <= -KPK_WIN, board.fen()
            else:
                assert used == 0, board.fen()
            kinds.add(wdl)
    net, used = evaluate_position(NN, Position("4k3/8/8/8/8/8/8/3NK3 w - - 0 1"))
    assert used == 0


def test_quiet_position_qsearch_with_the_net_is_the_nets_evaluation(net_path):
    """No capture and no check: the quiescence search stands pat on the evaluation, read from
    accumulators the search refreshed and updated itself."""
    engine = Engine()
    engine.set_option("EvalFile", str(net_path))
    engine.load()
    for fen in ["4k3/pppp4/8/8/8/8/4PPPP/4K3 w - - 0 1", "4k3/pppp4/8/8/8/8/4PPPP/4K3 b - - 0 1"]:
        position = Position(fen)
        assert engine.searcher.qsearch(position) == evaluate_position(
            nn_array(netfile.read(net_path)), position)[1]


def test_wasp_bench_runs_with_a_net_and_gives_a_fixed_signature(net_path):
    counts = []
    for _ in range(2):
        r = subprocess.run([*WASP, "bench", "3", "--eval-file", str(net_path)],
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr
        assert "a net, (768 -> 16)x2 -> 1, SCReLU" in r.stdout
        counts.append([ln for ln in r.stdout.splitlines() if ln.startswith("Nodes searched")])
    assert counts[0] == counts[1] and counts[0]


def _play(engine, board, limit, plies):
    while not board.is_game_over() and board.ply() < plies:
        result = engine.play(board, limit)
        assert result.move in board.legal_moves, f"illegal {result.move} in {board.fen()}"
        board.push(result.move)
    return board


def test_python_chess_plays_legal_games_against_the_engine_with_a_net(net_path):
    with chess.engine.SimpleEngine.popen_uci(WASP, timeout=600) as wasp:
        wasp.configure({"EvalFile": str(net_path)})
        for seed in range(2):
            board = chess.Board()
            rng = np.random.default_rng(seed)
            while not board.is_game_over() and board.ply() < 60:
                if board.turn == (seed == 0):
                    move = wasp.play(board, chess.engine.Limit(nodes=400)).move
                    assert move in board.legal_moves, f"illegal {move} in {board.fen()}"
                else:
                    moves = list(board.legal_moves)
                    move = moves[rng.integers(len(moves))]
                board.push(move)
            assert board.ply() > 10


def test_python_chess_plays_a_legal_chess960_game_against_the_engine_with_a_net(net_path):
    with chess.engine.SimpleEngine.popen_uci(WASP, timeout=600) as wasp:
        wasp.configure({"EvalFile": str(net_path)})
        board = chess.Board.from_chess960_pos(417)
        board.chess960 = True
        _play(wasp, board, chess.engine.Limit(nodes=300), 60)
        assert board.ply() > 10


def test_wasp_play_takes_a_net(tmp_path, net_path):
    import pexpect

    child = pexpect.spawn(sys.executable, ["-m", "wasp.cli", "play", "--pgn",
                                           str(tmp_path / "game.pgn"), "--side", "b", "--depth",
                                           "3", "--eval-file", str(net_path)],
                          cwd=str(ROOT), encoding="utf-8", timeout=600)
    child.expect("wasp plays \\S+  \\(depth 3, ")
    child.expect("your move: ")
    child.sendline("q")
    child.expect(pexpect.EOF)


def test_the_browser_boards_engine_takes_a_net(net_path):
    from wasp.gui.game import Game

    game = Game("net", white={"type": "engine", "depth": 3},
                engine_settings=[("EvalFile", str(net_path))])
    try:
        for _ in range(600):
            state = game.state()
            if state["moves"]:
                break
            game.wait_for_change(state["version"], 1.0)
        assert state["moves"] and state["moves"][0]["analysis"]["depth"] == 3
        assert game._engine.searcher.net_hidden == 16
    finally:
        game.close()


def test_the_search_evaluation_of_a_wild_net_stays_clear_of_mate_scores(tmp_path):
    from wasp.nnue.evaluate import EVAL_LIMIT
    from wasp.search import MATE_BOUND

    path = tmp_path / "wild.nnue"
    path.write_bytes(bullet_bytes(np.zeros((768, 16)), np.full(16, 1.98), np.full(32, 1.98), 1.9))
    net, used = evaluate_position(nn_array(netfile.read(path)), Position())
    assert net > EVAL_LIMIT and used == EVAL_LIMIT < MATE_BOUND


# ---- nets after the first: bullet's progression examples 2 to 4, with their NET.json


@pytest.fixture(scope="module")
def progression(tmp_path_factory):
    """Random nets of examples 2, 3 and 4 (N = 32; K = 8; example 3's ten king buckets),
    each with its NET.json, and their "arch" objects."""
    from tests.wasp.nnue.test_network import arch_json, random_net

    directory = tmp_path_factory.mktemp("progression")
    nets = {}
    for step in (2, 3, 4):
        arch = arch_json(step, hidden=32, k=8)
        random_net(directory / f"example{step}.nnue", arch, seed=step)
        nets[step] = (directory / f"example{step}.nnue", arch)
    return nets


def test_evalfile_loads_a_net_of_any_architecture_from_its_net_json(progression):
    from wasp.nnue.arch import QuantisedNet

    engine = Engine()
    for step, (path, arch) in progression.items():
        message = engine.set_option("EvalFile", str(path))
        assert isinstance(engine.W, QuantisedNet) and engine.W.arch.to_json() == arch
        expected = {2: "(768 -> 32)x2 -> 1x8, SCReLU", 3: "(768x10hm -> 32)x2 -> 1x8, SCReLU",
                    4: "(768x10hm -> 32)x2 -> pairwise -> 16x8 -> 32x8 -> 1x8"}[step]
        assert expected in message


def test_a_net_json_whose_arch_does_not_fit_the_file_is_one_clear_error(tmp_path, progression):
    path, arch = progression[3]
    copy = tmp_path / "copy.nnue"
    copy.write_bytes(path.read_bytes())
    (tmp_path / "copy.nnue.json").write_text(json.dumps({"arch": {**arch, "hidden": 64}}))
    with pytest.raises(ValueError, match=r"EvalFile not loaded: .*copy.nnue: \d+ bytes, but "):
        Engine().set_option("EvalFile", str(copy))
    (tmp_path / "copy.nnue.json").write_text(json.dumps({"arch": {**arch, "layers": [8]}}))
    r = subprocess.run([*WASP, "eval", "startpos", "--eval-file", str(copy)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "arch: layers" in r.stderr


def test_wasp_eval_prints_each_architectures_nnue_as_the_numpy_forward_pass(progression):
    from tests.wasp.nnue.test_network import numpy_forward_arch

    fens = ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3",
            "r4rk1/1pp2ppp/p1n5/4P3/8/2P2N2/P4PPP/R1B2RK1 w - - 0 15"]
    for step, (path, arch) in progression.items():
        for fen in fens:
            r = subprocess.run([*WASP, "eval", fen, "--eval-file", str(path)],
                               capture_output=True, text=True, timeout=600)
            assert r.returncode == 0, r.stderr
            nnue = [ln for ln in r.stdout.splitlines() if ln.startswith("NNUE:")]
            value = int(nnue[0].split()[1])
            expected = numpy_forward_arch(path.read_bytes(), arch, fen)
            assert abs(value - expected) <= (1 if step == 4 else 0), (step, fen)


def test_a_foreign_example_3_net_written_apart_evaluates_as_the_numpy_forward_pass(tmp_path):
    """A net in example 3's layout whose bytes and NET.json are made here, by hand: l0w [7680]
    [N] i16, l0b [N], l1w [8][2N] (transposed), l1b [8], zeros to 64 bytes."""
    from tests.wasp.nnue.test_network import numpy_forward_arch, random_fens

    n = 48
    arch = {"inputs": "buckets-mirrored",
            "layout": [0, 0, 1, 1, 2, 2, 3, 3] + [4] * 8 + [5] * 16,
            "hidden": n, "activation": "screlu", "output_buckets": 4, "layers": [],
            "qa": 255, "qb": 64, "scale": 400}
    rng = np.random.default_rng(9)
    data = np.concatenate([rng.integers(-250, 250, 6 * 768 * n), rng.integers(0, 200, n),
                           rng.integers(-127, 127, 4 * 2 * n),
                           rng.integers(-9000, 9000, 4)]).astype("<i2").tobytes()
    data += bytes(-len(data) % 64)
    path = tmp_path / "foreign.nnue"
    path.write_bytes(data)
    (tmp_path / "foreign.nnue.json").write_text(json.dumps({"arch": arch, "by": "someone"}))
    engine = Engine()
    engine.set_option("EvalFile", str(path))
    NN = nn_array(engine.W)
    for fen in random_fens(30, 4):
        assert evaluate_position(NN, Position(fen))[0] == numpy_forward_arch(data, arch, fen)


@pytest.mark.parametrize("step", [3, 4])
def test_python_chess_plays_legal_games_against_the_engine_with_a_bucketed_net(progression,
                                                                                 step):
    path, _ = progression[step]
    with chess.engine.SimpleEngine.popen_uci(WASP, timeout=600) as wasp:
        wasp.configure({"EvalFile": str(path)})
        board = _play(wasp, chess.Board(), chess.engine.Limit(nodes=500), 80)
        assert board.ply() > 20 or board.is_game_over()
        board = chess.Board.from_chess960_pos(step * 100)
        board.chess960 = True
        board = _play(wasp, board, chess.engine.Limit(nodes=300), 60)
        assert board.ply() > 10 or board.is_game_over()
