"""Match diagnostics: transcripts and stderr in the run store, richer PGN, engine statistics."""

import io
import sqlite3
import zlib

import chess
import chess.pgn
import pytest

import testing
from testing.cli import main
from testing.engine import EngineConfig, make_engine
from testing.enginestats import EngineTally
from testing.process import Recording
from testing.store import RunStore, decompress

from .conftest import EPD, fake_engine


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


NODES = ["-each", "nodes=100", "-ratinginterval", "0"]


def test_store_holds_each_engines_stderr_and_transcript(capsys, tmp_path):
    bad = fake_engine("bad", "--fail", "crash", "--ply", "6", "--stderr")
    rd = str(tmp_path / "r")
    code, out, err = run(capsys, [*fake_engine("good"), *bad, *NODES, "-rounds", "1",
                                  "-recover", "-rundir", rd])
    assert code == 0, err
    df = testing.results(rd)
    row = df.iloc[0]
    assert row["termination"] == "crash" and row["black"] == "bad"
    err_text = testing.stderr(rd, 1, "black")
    assert "fake: go 1 at ply 2" in err_text
    assert err_text.rstrip().endswith("fake: crashing at ply 6")
    assert testing.stderr(rd, 1, "white") == ""
    tr = testing.transcript(rd, 1)
    sent = [ln.split(" ", 2)[2] for ln in tr["black"].splitlines() if ln.split(" ")[1] == ">"]
    recv = [ln.split(" ", 2)[2] for ln in tr["black"].splitlines() if ln.split(" ")[1] == "<"]
    assert sent[0] == "uci" and "uciok" in recv
    # the last position it was sent is the stored game's moves: it crashed at ply 6
    positions = [s for s in sent if s.startswith("position")]
    assert positions[-1] == "position startpos moves " + " ".join(_moves(rd)[:5])
    assert sent[-1] == "go nodes 100"
    stamps = [float(ln.split(" ")[0]) for ln in tr["black"].splitlines()]
    assert stamps == sorted(stamps) and stamps[0] == 0.0
    assert row["black_stderr_bytes"] == len(err_text.encode())
    assert row["black_transcript_bytes"] == len(tr["black"].encode())
    assert 0 < row["logs_stored_bytes"] < row["black_transcript_bytes"] + row[
        "white_transcript_bytes"] + row["black_stderr_bytes"] + 200
    # the game number, "PAIR.G" and a tuple name the same game
    assert testing.transcript(rd, "0.0") == tr == testing.transcript(rd, (0, 0))
    with pytest.raises(ValueError, match="not in the run store"):
        testing.transcript(rd, 7)


def _moves(rd):
    db = sqlite3.connect(f"{rd}/games.sqlite")
    try:
        return db.execute("SELECT moves FROM games").fetchone()[0].split()
    finally:
        db.close()


def test_logs_are_committed_with_their_game_and_once(tmp_path):
    store = RunStore(str(tmp_path))
    row = {c: 0 for c in ("pair_id", "game_in_pair", "round", "opening_index", "plies",
                          "white_time", "black_time", "time_loss", "start_time", "end_time")}
    row.update(engine1="a", engine2="b", white="a", black="b", opening_fen=None,
               opening_moves="", result="1-0", termination="checkmate", reason="x", moves="",
               final_fen="", pgn="", number=1, move_stats="",
               _logs=[("white", "a", "transcript", "zlib", 3, b"bad blob")] * 2)
    with pytest.raises(sqlite3.IntegrityError):  # the same key twice: nothing is kept
        store.add_game({**row, "_logs": [("white", "a", "transcript", "zlib", 3, b"x"),
                                         ("white", "a", "transcript", "zlib", 3, None)]})
    assert store.count() == 0
    good = [("white", "a", "transcript", "zlib", 3, zlib.compress(b"abc"))]
    assert store.add_game({**row, "_logs": good})
    assert not store.add_game({**row, "_logs": good})
    assert store.logs((0, 0), "transcript") == {"white": b"abc"}
    store.close()


def test_old_store_gains_the_new_columns(tmp_path):
    db = sqlite3.connect(str(tmp_path / "games.sqlite"))
    db.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "CREATE TABLE games (id INTEGER PRIMARY KEY, pair_id INTEGER NOT NULL,"
                     " game_in_pair INTEGER NOT NULL, pgn TEXT NOT NULL);")
    db.close()
    RunStore(str(tmp_path)).close()
    db = sqlite3.connect(str(tmp_path / "games.sqlite"))
    cols = {r[1] for r in db.execute("PRAGMA table_info(games)")}
    db.close()
    assert {"number", "move_stats"} <= cols


def test_recording_splits_chunks_into_stamped_lines():
    r = Recording()
    r.add(10.0, b">", b"position startpos\ngo nodes 5\n")
    r.add(10.5, b"<", b"info depth 1 sc")
    r.add(10.75, b"<", b"ore cp 3\r\nbestmove e2e4\n")
    text, err = r.take()
    assert text.decode().splitlines() == [
        "0.000000 > position startpos", "0.000000 > go nodes 5",
        "0.750000 < info depth 1 score cp 3", "0.750000 < bestmove e2e4"]
    assert err == b"" and r.take() == (b"", b"")


def test_pgnout_switches_write_fastchess_comments(capsys, tmp_path):
    pgn = tmp_path / "g.pgn"
    sf = fake_engine("a")
    code, out, err = run(capsys, [*sf, *fake_engine("b"), "-each", "tc=30+0.1", "-maxmoves",
                                  "10", "-ratinginterval", "0", "-openings", f"file={EPD}",
                                  "-rundir", str(tmp_path / "r"), "-pgnout", f"file={pgn}",
                                  "nodes=true", "timeleft=true", "latency=true", "pv=true",
                                  "notation=uci"])
    assert code == 0, err
    game = chess.pgn.read_game(io.StringIO(pgn.read_text()))
    assert game.headers["Termination"] == "adjudication"
    assert "FEN" in game.headers
    first = game.next()
    c = first.comment
    assert ", n=1" in c and ", tl=" in c and 'pv="' in c
    assert "latency=" in first.next().comment  # the first move has no previous reply
    assert "1. " + first.move.uci() in pgn.read_text().replace("\n", " ")
    # min: the seven tags (and FEN), no comments
    pgn2 = tmp_path / "m.pgn"
    code, out, err = run(capsys, [*sf, *fake_engine("b"), *NODES, "-maxmoves", "5",
                                  "-rundir", str(tmp_path / "r2"), "-pgnout", str(pgn2), "min"])
    assert code == 0, err
    text = pgn2.read_text()
    assert "{" not in text and "[Termination" not in text and "[Result " in text


@pytest.mark.parametrize("bad, msg", [
    (["-pgnout", "file=x.pgn", "nodes=maybe"], "-pgnout: nodes: expected true/false"),
    (["-pgnout", "file=x.pgn", "notation=fen"], "notation='fen'"),
    (["-pgnout", "file=x.pgn", "colour=true"], "unknown key 'colour'"),
    (["-pgnout", "x.pgn", "max"], "unexpected 'max'"),
    (["-pgnout", "nodes=true"], "file= is required"),
])
def test_bad_pgnout_switches_are_refused(capsys, tmp_path, bad, msg):
    code, out, err = run(capsys, [*fake_engine("a"), *fake_engine("b"), *NODES, *bad,
                                  "-rundir", str(tmp_path / "r")])
    assert code == 2 and msg in err


def test_engine_statistics_in_report_and_dataframe(capsys, tmp_path, stockfish):
    rd = str(tmp_path / "r")
    bad = fake_engine("bad", "--fail", "illegal", "--ply", "4")
    code, out, err = run(capsys, ["-engine", f"cmd={stockfish}", "name=sf", "depth=6",
                                  *bad, "nodes=10", "-rounds", "1", "-repeat", "-recover",
                                  "-ratinginterval", "0", "-maxmoves", "8", "-rundir", rd])
    assert code == 0, err
    assert "Engine statistics" in out and "illeg" in out
    st = testing.engine_stats(rd)
    # ply 4 is Black's: the bad engine plays it (illegally) in the game where it is Black
    assert st.loc["bad", "illegal_moves"] == 1 and st.loc["sf", "illegal_moves"] == 0
    assert st.loc["sf", "games"] == 2
    assert 5.5 <= st.loc["sf", "depth"] <= 6  # Stockfish stops at depth 6 (or mates first)
    assert st.loc["sf", "seldepth"] >= 1  # Stockfish's seldepth may be below its depth
    assert st.loc["sf", "nps"] > 0 and st.loc["sf", "time_p95"] >= st.loc["sf", "time_median"]
    df = testing.results(rd)
    sf_white = df[df["white"] == "sf"].iloc[0]
    assert sf_white["white_depth"] <= 6 and sf_white["black_seldepth"] != sf_white[
        "black_seldepth"]  # the fake engine sends no seldepth: NaN


def test_tally_counts_failures_against_the_loser():
    t = EngineTally(["a", "b"])
    t.add({"white": "a", "black": "b", "result": "1-0", "termination": "timeout",
           "move_stats": '{"white":{"depth":[4,6],"seldepth":[8,null],"nodes":[100,300],'
                         '"time":[0.1,0.3],"left":2.5},"black":{"time":[0.2]}}'})
    rows = {r["engine"]: r for r in t.rows()}
    assert rows["b"]["time_losses"] == 1 and rows["a"]["time_losses"] == 0
    assert rows["a"]["depth"] == 5 and rows["a"]["seldepth"] == 8
    assert rows["a"]["nps"] == pytest.approx(1000) and rows["a"]["left"] == 2.5
    assert rows["b"]["time_median"] == pytest.approx(0.2)


def test_moves_that_saw_a_mate_leave_the_depth_means_alone():
    """Stockfish reports `depth 245` once it sees a mate; such moves keep no depth."""
    import json

    from testing.enginestats import move_stats, side_summary
    from testing.game import GameRecord, MoveInfo
    from testing.openings import Opening

    rec = GameRecord("a", "b", Opening(-1))
    for depth, mate in ((10, None), (8, None), (12, None), (245, 3), (245, -2), (245, 1)):
        rec.moves.append(MoveInfo("e2e4", None if mate else 20, mate, depth, 0.1,
                                  seldepth=depth + 4, nodes=1000))
    sides = json.loads(move_stats(rec, True))
    white, black = side_summary(sides["white"]), side_summary(sides["black"])
    assert white["depth"] == 11 and white["seldepth"] == 15  # 10 and 12; the mate left out
    assert black["depth"] == 8 and black["seldepth"] == 12
    assert len(sides["white"]["nodes"]) == 3  # the other figures keep every move


def test_uci_driver_parses_the_full_info_line(stockfish):
    eng = make_engine(EngineConfig(cmd=stockfish, name="sf"))
    eng.start()
    try:
        from testing.driver import Limits
        eng.new_game(None, True)
        res = eng.go(None, [], Limits(depth=8))
        text, err = eng.take_recording()
        assert b"> go depth 8" in text and b"< bestmove " + res.move.encode() in text
        last = [ln for ln in text.decode().splitlines() if " score " in ln][-1]
        assert res.depth == 8 and res.nodes > 0 and res.nps > 0
        for key in ("seldepth", "nodes", "nps", "hashfull", "tbhits"):
            assert f" {key} {getattr(res, key)} " in last
        assert last.endswith(" pv " + res.pv) and res.pv.split()[0] == res.move
    finally:
        eng.quit()


def test_codec_names_are_checked():
    with pytest.raises(ValueError, match="unknown codec"):
        decompress("brotli", b"")
