"""wasp.epd: the one EPD line reader, checked against python-chess's reading of the same lines."""

import chess
import pytest

from tests.conftest import DATA
from wasp.epd import parse_line, read_lines, result_in

FEN4 = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -"


def test_blank_and_comment_lines_are_none_and_short_lines_are_refused():
    assert parse_line("") is None and parse_line("  \r\n") is None
    assert parse_line("# a comment") is None
    with pytest.raises(ValueError, match="not an EPD line"):
        parse_line("8/8/8 w -")


@pytest.mark.parametrize("line", [
    f'{FEN4} bm Bb5; id "Ruy";',
    f'{FEN4} hmvc 3; fmvn 12; c0 "a book line";',
    f'{FEN4} ce -35; acd 12; pm Bb5;',
    f'{FEN4} id "two words; and a semicolon"; bm Bc4;',
])
def test_operations_are_what_python_chess_reads(line):
    board, ops = chess.Board.from_epd(line)
    epd = parse_line(line)
    assert epd.position == FEN4
    mine = epd.operations()
    assert set(mine) == set(ops)
    for code, value in ops.items():
        if isinstance(value, str):
            assert mine[code] == value
        elif isinstance(value, (int, float)):
            assert float(mine[code]) == value
        else:  # moves
            moves = value if isinstance(value, list) else [value]
            assert mine[code].split() == [board.san(m) for m in moves]
    assert epd.fen() == board.fen()


def test_a_missing_semicolon_before_a_known_opcode_and_tabs_are_tolerated():
    epd = parse_line(f'{FEN4} bm Bb5\tid "x"\r\n')
    assert epd.operation_list() == [("bm", "Bb5"), ("id", "x")]
    # a square that spells a comment opcode is a move, not a new operation
    assert parse_line(f"{FEN4} bm c3 d4; id y;").operations()["bm"] == "c3 d4"
    assert parse_line(f'{FEN4} bm d4 c0 "why";').operations() == {"bm": "d4", "c0": "why"}


def test_move_counters_come_from_hmvc_fmvn_then_a_six_field_fen_then_zero_one():
    assert parse_line(f"{FEN4} 4 9").fen() == f"{FEN4} 4 9"
    assert parse_line(f"{FEN4} 4 9 hmvc 2; fmvn 7;").fen() == f"{FEN4} 2 7"
    assert parse_line(f"{FEN4} fmvn 7;").fen() == f"{FEN4} 0 7"
    assert parse_line(f"{FEN4} bm Bb5;").fen() == f"{FEN4} 0 1"


@pytest.mark.parametrize("text, result", [
    ('c9 "1-0";', 1.0), ('ce 12; c9 "1/2-1/2";', 0.5), ("[0.0]", 0.0), ("[0.5]", 0.5),
    ("[1.0]", 1.0), ("0-1", 0.0), ('"1-0";', 1.0), ("[0.7]", None), ("bm e4;", None), ("", None),
])
def test_labelled_results_in_every_form_the_tuners_write(text, result):
    assert result_in(text) == result
    assert parse_line(f"{FEN4} {text}").result() == result


def test_the_counters_of_a_six_field_fen_are_not_taken_for_a_result():
    assert parse_line(f"{FEN4} 0 1").result() is None
    assert parse_line(f"{FEN4} 0 1 [1.0]").result() == 1.0


def test_read_lines_numbers_the_lines_and_names_a_bad_one(tmp_path):
    path = tmp_path / "a.epd"
    path.write_text(f"# head\n{FEN4} c9 \"1-0\";\n\nbad line\n")
    lines = read_lines(path)
    n, epd = next(lines)
    assert n == 2 and epd.result() == 1.0
    with pytest.raises(ValueError, match=r"a\.epd:4: not an EPD line"):
        next(lines)


def test_every_suite_line_python_chess_reads_reads_the_same_here():
    """Lines python-chess refuses (a missing `;` before `id`) are read here too."""
    read = agreed = 0
    for name in ("wac.epd", "bk.epd", "kaufman.epd", "ecmgcp_sample.epd", "uho_sample.epd"):
        for _, epd in read_lines(DATA / name):
            read += 1
            try:
                board, ops = chess.Board.from_epd(f"{epd.position} {epd.rest}".strip())
            except ValueError:
                continue
            assert board.epd() == chess.Board(epd.fen()).epd()
            assert epd.operations().get("id") == ops.get("id")
            agreed += 1
    assert read > 400 and agreed > read / 2
