"""EPD test suites (wasp.testsuite): tolerant parsing and the suite runner."""

from pathlib import Path

from wasp.testsuite import parse_epd_line, read_suite, run_suite

DATA = Path(__file__).resolve().parents[1] / "data"


def test_suites_parse_completely():
    assert len(read_suite(DATA / "wac.epd")) == 300
    assert len(read_suite(DATA / "bk.epd")) == 24
    kaufman = read_suite(DATA / "kaufman.epd")
    assert len(kaufman) == 25
    assert sum(1 for r in kaufman if r.avoid) == 2
    assert kaufman[1].ident == "position 02" and kaufman[1].best == ["f5d4"]


def test_tab_after_id_and_decorated_san():
    recs = read_suite(DATA / "ecmgcp_sample.epd")
    assert [r.ident for r in recs[-2:]] == ["ECM.1016", "ECM.1344"]
    r = parse_epd_line('r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - '
                       'bm Bb5! Bc4 id "x";\r\n')
    assert r.best == ["f1b5", "f1c4"] and r.ident == "x"
    assert parse_epd_line("# a comment") is None
    assert parse_epd_line("   \r\n") is None


def test_run_suite_prints_results_and_score(capsys):
    assert run_suite(DATA / "bk.epd", depth=1) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 25 and out[-1].startswith("solved ") and out[-1].endswith("/24")


def test_wac_sample_mostly_solved(capsys):
    import tempfile

    lines = [ln for ln in (DATA / "wac.epd").read_text().splitlines() if ln.startswith(("2", "r"))]
    with tempfile.NamedTemporaryFile("w", suffix=".epd", delete=False) as f:
        f.write("\n".join(lines[:10]))
    run_suite(f.name, time_ms=300)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    solved = int(last.split()[1].split("/")[0])
    assert solved >= 6


def test_a_record_with_an_illegal_bm_move_counts_as_an_error(tmp_path, capsys):
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -"
    suite = tmp_path / "two.epd"
    suite.write_text(f'{fen} bm Bb5; id "a";\n{fen} bm Zz9; id "b";\n{fen} am; id "c";\n')
    assert run_suite(suite, depth=1) == 1
    out, err = capsys.readouterr()
    assert out.strip().splitlines()[-1].startswith("solved ")
    assert "/3 (2 bad records" in out
    assert f"{suite}:2: bm move 'Zz9' is not a legal move" in err
    assert f"{suite}:3: no bm or am operation" in err


def test_a_file_without_records_searches_nothing(tmp_path, capsys):
    suite = tmp_path / "fens.epd"
    suite.write_text("# only a comment\n8/8/8/4k3/8/8/2KQ4/8 w - -\n")
    assert run_suite(suite) == 1
    err = capsys.readouterr().err
    assert f"{suite}:2: no bm or am operation" in err and "no EPD records" in err
