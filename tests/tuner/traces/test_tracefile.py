"""tuner.traces.tracefile and `wasp-tune trace`: the format, the check, and planted weights tuned
back."""

import os

import chess
import numpy as np
import pytest

from tests.conftest import DATA
from tests.tuner.traces.helpers import planted_weights, write_synthetic
from tuner.cli import main
from tuner.texel import methods as M
from tuner.traces.run import TraceConfig, TraceRun
from tuner.traces.tracefile import (
    BoardTerms,
    TraceError,
    TraceWriter,
    check_trace,
    labelled_boards,
    read_terms,
    read_trace,
    write_board_trace,
    write_linear,
)

ISSUE_EXAMPLE = """# wasp-trace 1
terms 3
pawn 82 94
knight 337 281
bishop_pair 30
positions
1.0 0.75 1 1 0 115 | 0:1 2:1
"""
HEADER = "# wasp-trace 1\nterms 2\na 1 2\nb 3\npositions\n"


def test_reader_reads_the_issue_example_and_its_model_reproduces_eval(tmp_path):
    path = tmp_path / "x.trace"
    path.write_text(ISSUE_EXAMPLE + "1-0 0.5 1 0.5 10 -219 | 0:2 1:-1.5\n# a comment\n\n"
                    "1/2-1/2 0 1 1 -3 -3 |\n0-1 1e-1 1 1 0 286.6 | 1:1\n")
    tr = read_trace(path, use_cache=False)
    assert tr.names == ["pawn", "knight", "bishop_pair"]
    assert list(tr.tapered) == [True, True, False]
    assert tr.labels() == ["pawn.mg", "pawn.eg", "knight.mg", "knight.eg", "bishop_pair"]
    assert list(tr.results) == [1.0, 1.0, 0.5, 0.0]
    assert list(tr.linear.phase) == [0.75, 0.5, 0.0, 0.1]
    assert list(tr.linear.eg_scale) == [1.0, 0.5, 1.0, 1.0]
    # 0.75 * (82 + 30) + 0.25 * (94 + 30) = 115;  the second: see the docs' model
    q = tr.scores(tr.start_weights())
    assert q == pytest.approx([115.0, -219.125, -3.0, 286.6])
    assert check_trace(tr).bad == 0


def test_reader_uses_its_cache_until_the_trace_changes(tmp_path):
    path = tmp_path / "x.trace"
    path.write_text(ISSUE_EXAMPLE)
    read_trace(path)
    assert os.path.exists(str(path) + ".cache.npz")
    assert read_trace(path).evals[0] == 115.0
    path.write_text(ISSUE_EXAMPLE.replace(" 115 ", " 116 "))
    assert read_trace(path).evals[0] == 116.0


@pytest.mark.parametrize("body, line, words", [
    ("1 1 1 1 0 1 | 0:1\n1 1 1 1 0 1 0:1\n", 7, "missing '|'"),
    ("1 1 1 1 0 1 | 0:1\n# c\n1 1 1 1 0 1 | 2:1\n", 8, "term index 2 out of range"),
    ("1 1 1 1 0 1 | 0:1\nwin 1 1 1 0 1 | 0:1\n", 7, "bad RESULT"),
    ("1.5 1 1 1 0 1 | 0:1\n", 6, "bad RESULT"),
    ("1 1 1 1 0 | 0:1\n", 6, "6 numbers expected"),
    ("1 1 1 1 0 1 | 0:x\n", 6, "bad INDEX:COEF"),
    ("1 2 1 1 0 1 | 0:1\n", 6, "PHASE must be in [0, 1]"),
])
def test_bad_position_lines_are_refused_with_file_and_line(tmp_path, body, line, words):
    path = tmp_path / "bad.trace"
    path.write_text(HEADER + body)
    with pytest.raises(TraceError) as e:
        read_trace(path, use_cache=False)
    assert str(e.value).startswith(f"{path}:{line}: ") and words in str(e.value)


@pytest.mark.parametrize("text, line, words", [
    ("# wasp-trace 1\nterms 3\na 1 2\nb 3\npositions\n1 1 1 1 0 1 | 0:1\n", 5,
     "'terms 3' but 2 term lines"),
    ("# wasp-trace 1\nterms 1\na 1 2\nb 3\npositions\n", 4, "more term lines"),
    ("# wasp-trace 2\nterms 1\n", 1, "version 2 is not supported"),
    ("terms 1\na 1\npositions\n", 1, "not a trace"),
    ("# wasp-trace 1\nterms 1\na x\npositions\n", 3, "values must be numbers"),
])
def test_bad_headers_are_refused_with_file_and_line(tmp_path, text, line, words):
    path = tmp_path / "bad.trace"
    path.write_text(text)
    with pytest.raises(TraceError) as e:
        read_trace(path, use_cache=False)
    assert str(e.value).startswith(f"{path}:{line}: ") and words in str(e.value)


def test_check_finds_a_term_the_trace_left_out(tmp_path):
    good, bad = tmp_path / "good.trace", tmp_path / "bad.trace"
    write_synthetic(good, n=3000, seed=3)
    write_synthetic(bad, n=3000, seed=3, drop_term=7)  # bishop_pair counted in EVAL only
    assert check_trace(read_trace(good)).ok
    c = check_trace(read_trace(bad))
    assert not c.ok and c.bad > 300
    tr = read_trace(bad)
    assert abs(c.model - c.eval) > 1
    assert c.line == tr.header_lines + c.first + 1


def _tune(path, tmp_path, method, valid=None, **kw):
    tr = read_trace(path)
    vt = read_trace(valid) if valid else None
    kw.setdefault("reg", 0.0)  # these tests recover planted weights: no pull toward the start
    run = TraceRun.create(tmp_path / f"run-{method}", TraceConfig(trace=str(path),
                                                                  method=method, **kw))
    return tr, run, run.tune(tr, vt, progress=False, log=lambda *_: None)


@pytest.mark.parametrize("method", [M.ADAM, M.BINARY])
def test_planted_weights_are_tuned_back_with_scale_factors(tmp_path, method):
    """Results set to the planted model's win probability: E is lowest at the planted
    weights; the positions carry draw factors on both phases and endgame-only scales."""
    path = tmp_path / "planted.trace"
    Wp = write_synthetic(path, n=4000, seed=5, drawn=False)
    kw = {"lr": 2.0, "epochs": 200, "max_passes": 30} if method == M.ADAM else {}
    tr, run, W = _tune(path, tmp_path, method, k=1.0, **kw)
    # Adam reaches the optimum; a search one integer weight at a time stops where no single
    # step helps, which along the valley of a term's opening and endgame values (raise one,
    # lower the other) can be a few centipawns short
    tol = 1.0 if method == M.ADAM else 3.0
    assert np.abs(W - Wp).max() <= tol, np.c_[tr.start_weights(), W, Wp]
    if method == M.ADAM:
        assert np.abs(W - Wp).mean() <= 0.1
    # params.txt: the trace's terms form, integers
    terms = read_terms(os.path.join(run.dir, "params.txt"))
    assert terms["pawn"] == (round(W[0]), round(W[1])) and terms["tempo"][0] == round(W[15])


def test_planted_weights_from_drawn_results_within_sampling_noise(tmp_path):
    path = tmp_path / "drawn.trace"
    Wp = write_synthetic(path, n=40000, seed=11, drawn=True)
    tr, run, W = _tune(path, tmp_path, M.ADAM, lr=2.0, epochs=200, max_passes=20)
    # K fitted with start values near the planted ones; 40,000 win/loss results pin a weight
    # to about 5-10 cp (one standard error, more along a term's opening/endgame valley)
    assert abs(run.state.K - 1.0) < 0.1
    assert np.abs(W - Wp).mean() < 8 and np.abs(W - Wp).max() < 25


def test_params_glob_tunes_only_the_chosen_terms(tmp_path):
    path = tmp_path / "planted.trace"
    write_synthetic(path, n=2000, seed=5, drawn=False)
    tr, run, W = _tune(path, tmp_path, M.ADAM, k=1.0, params=["knight", "tempo"],
                       max_passes=2)
    moved = np.flatnonzero(W != tr.start_weights())
    assert set(moved) <= {2, 3, 15} and len(moved) > 0


def test_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path):
    path = tmp_path / "planted.trace"
    write_synthetic(path, n=2000, seed=5)
    tr = read_trace(path)
    whole = TraceRun.create(tmp_path / "whole", TraceConfig(trace=str(path), k=1.0, reg=0.0,
                                                            max_passes=3, epochs=20))
    W1 = whole.tune(tr, progress=False, log=lambda *_: None)
    part = TraceRun.create(tmp_path / "part", TraceConfig(trace=str(path), k=1.0, reg=0.0,
                                                          max_passes=1, epochs=20))
    part.tune(tr, progress=False, log=lambda *_: None)
    part.config.max_passes = 3
    part.write_config()
    again = TraceRun.open(tmp_path / "part")
    W2 = again.tune(tr, progress=False, log=lambda *_: None)
    assert np.array_equal(W1, W2)
    assert (tmp_path / "part" / "params.txt").read_text() == \
        (tmp_path / "whole" / "params.txt").read_text()


def test_validation_keeps_the_values_of_the_lowest_validation_error(tmp_path):
    path, valid = tmp_path / "t.trace", tmp_path / "v.trace"
    write_synthetic(path, n=600, seed=2)  # small: the training set's noise gets fitted
    write_synthetic(valid, n=3000, seed=9)
    tr, run, W = _tune(path, tmp_path, M.ADAM, valid=valid, k=1.0, lr=3.0, epochs=50,
                       max_passes=12, patience=0, valid_every=0)
    import csv

    rows = list(csv.DictReader(open(os.path.join(run.dir, "passes.csv"))))
    ev = [float(r["e_valid"]) for r in rows]
    best = int(np.argmin(ev))
    assert run.state.best.passes == best
    assert np.array_equal(W, np.array(run.state.best.W))


def test_board_api_writes_a_trace_the_check_accepts(tmp_path):
    values = {chess.PAWN: (90, 110), chess.KNIGHT: (310, 290), chess.BISHOP: (320, 300),
              chess.ROOK: (470, 520), chess.QUEEN: (900, 950)}
    terms = [(chess.piece_name(p), *v) for p, v in values.items()] + [("tempo", 10)]

    def features(board):
        c = [len(board.pieces(p, chess.WHITE)) - len(board.pieces(p, chess.BLACK))
             for p in values]
        c.append(1 if board.turn == chess.WHITE else -1)
        phase = min(24, sum(len(board.pieces(p, s)) * w for p, w in
                            ((chess.KNIGHT, 1), (chess.BISHOP, 1), (chess.ROOK, 2),
                             (chess.QUEEN, 4)) for s in chess.COLORS)) / 24
        return BoardTerms(c, phase=phase)

    def evaluate(board):  # the engine's own code path
        bt = features(board)
        mg = sum(c * t[1] for c, t in zip(bt.coefs, terms, strict=True))
        eg = sum(c * t[-1] for c, t in zip(bt.coefs, terms, strict=True))
        return round(bt.phase * mg + (1 - bt.phase) * eg)

    path = tmp_path / "b.trace"
    n = write_board_trace(path, terms, labelled_boards(DATA / "tuner_quiet_200.epd"),
                          features, evaluate)
    tr = read_trace(path)
    assert n == len(tr) == 200 and check_trace(tr).bad == 0


def test_write_linear_round_trips_a_parsed_trace(tmp_path):
    a, b = tmp_path / "a.trace", tmp_path / "b.trace"
    write_synthetic(a, n=500, seed=6)
    tr = read_trace(a)
    terms = [(n, m, e) if tp else (n, m) for n, tp, m, e in
             zip(tr.names, tr.tapered, tr.start_mg, tr.start_eg, strict=True)]
    assert write_linear(b, terms, tr.linear, tr.results, tr.evals) == 500
    tb = read_trace(b)
    assert np.array_equal(tb.linear.idx, tr.linear.idx)
    assert np.array_equal(tb.linear.coef, tr.linear.coef)
    assert np.allclose(tb.linear.phase, tr.linear.phase) and np.array_equal(tb.results,
                                                                          tr.results)
    assert np.allclose(tb.scores(tb.start_weights()), tr.scores(tr.start_weights()))


def test_writer_refuses_bad_input(tmp_path):
    with pytest.raises(ValueError):
        TraceWriter(tmp_path / "w.trace", [("two words", 1)])
    with TraceWriter(tmp_path / "w.trace", [("a", 1)]) as w:
        with pytest.raises(ValueError):
            w.position(1.0, {1: 1})
        with pytest.raises(ValueError):
            w.position(2.0, {0: 1})


def test_cli_tunes_a_small_trace_end_to_end(tmp_path, capsys):
    path, valid = tmp_path / "t.trace", tmp_path / "v.trace"
    write_synthetic(path, n=3000, seed=4)
    write_synthetic(valid, n=1000, seed=8)
    run = tmp_path / "run"
    assert main(["trace", str(path), "-valid-data", str(valid), "-dir", str(run),
                 "-max-passes", "3", "-epochs", "50", "-quiet"]) == 0
    out = capsys.readouterr().out
    assert "check: the start values reproduce EVAL" in out and "moved most" in out
    lines = (run / "params.txt").read_text().splitlines()
    assert len(lines) == 10 and lines[0].split()[0] == "pawn" and len(lines[7].split()) == 2
    assert all(v.lstrip("-").isdigit() for line in lines for v in line.split()[1:])
    passes = (run / "passes.csv").read_text().splitlines()
    assert passes[0].startswith("pass,moved,e_train,e_valid") and len(passes) >= 2
    # a finished run resumes to the same values; -float writes decimals
    assert main(["trace", "-resume", str(run), "-quiet"]) == 0
    assert main(["trace", str(path), "-dir", str(tmp_path / "f"), "-max-passes", "1",
                 "-epochs", "10", "-float", "-quiet"]) == 0
    assert "." in (tmp_path / "f" / "params.txt").read_text()


def test_cli_refuses_a_trace_with_a_term_left_out(tmp_path, capsys):
    path = tmp_path / "drop.trace"
    write_synthetic(path, n=2000, seed=4, drop_term=3)
    assert main(["trace", str(path), "-dir", str(tmp_path / "r"), "-quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"wasp-tune trace: error: {path}:") and "EVAL is" in err
    assert "refused" in err and not (tmp_path / "r").exists()
    assert main(["trace", str(path), "-dir", str(tmp_path / "r"), "-no-check", "-quiet",
                 "-max-passes", "1", "-epochs", "5"]) == 0


def test_cli_errors_exit_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.trace"
    bad.write_text(HEADER + "1 1 1 1 0 1 | 5:1\n")
    assert main(["trace", str(bad), "-dir", str(tmp_path / "r")]) == 1
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert main(["trace", str(tmp_path / "none.trace"), "-dir", str(tmp_path / "r")]) == 1
    assert main(["trace", str(bad)]) == 2
    good = tmp_path / "good.trace"
    write_synthetic(good, n=200, seed=1)
    assert main(["trace", str(good), "-dir", str(tmp_path / "r"), "-params", "nope"]) == 2
    assert main(["trace", "-resume", str(tmp_path / "nothing")]) == 1


def test_planted_helper_layout():
    W, mg_of, eg_of = planted_weights()
    assert len(W) == 18 and mg_of[7] == eg_of[7] == 14
