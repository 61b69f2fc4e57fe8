"""`wasp-tune data`'s command line: it reads PGN games and names any other file in one line;
`data selfplay` is gone (one self-play data tool, `wasp-tune datagen`), and the labelled EPD it
wrote comes from datagen + `data convert`."""

import chess
import pytest

from tests.conftest import DATA, ROOT
from tuner.cli import main
from tuner.datagen.run import DatagenConfig, DatagenRun, generate, read_records
from tuner.texel.positions import load_epd


@pytest.mark.parametrize("name, why", [
    ("labelled.epd", "holds EPD/FEN lines, not PGN games"),
    ("notes.txt", "no PGN game with moves in it"),
])
def test_a_file_that_is_not_pgn_is_named_in_one_line(tmp_path, capsys, name, why):
    path = tmp_path / name
    if name.endswith(".epd"):
        path.write_bytes((ROOT / "datasets" / "sample" / "valid.epd").read_bytes())
    else:
        path.write_text("just some words\nand more words\n")
    assert main(["data", str(path), "-o", str(tmp_path / "set")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"wasp-tune data: error: {path}: {why}" + err[0].split(why, 1)[1]]
    assert not (tmp_path / "set").exists()


def test_pgn_games_still_build_a_set(tmp_path):
    assert main(["data", str(DATA / "tuner_games_5.pgn"), "-o", str(tmp_path / "set")]) == 0
    assert (tmp_path / "set" / "summary.json").is_file()


def test_data_selfplay_is_gone_and_says_what_to_use_instead(capsys):
    assert main(["data", "selfplay", "-o", "sp", "-games", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "wasp-tune datagen" in err[0] and "data convert" in err[0] and "wasp-match" in err[0]


def test_datagen_then_convert_gives_a_labelled_set_the_tuner_reads(tmp_path):
    run = DatagenRun.create(str(tmp_path / "dg"), DatagenConfig(games=2, nodes=200,
                                                                start_nodes=100, seed=2))
    generate(run, progress=False)
    epd = tmp_path / "set.epd"
    assert main(["data", "convert", run.file("data.txt"), str(epd), "-no-check", "-no-capture",
                 "-dedupe", "-quiet"]) == 0
    kept = {}
    for r in read_records(run.path):
        board = chess.Board(r.fen)
        if not board.is_check() and not board.is_capture(chess.Move.from_uci(r.move)) \
                and len(r.move) == 4:
            kept.setdefault(board.epd(), r.result)  # the first record of each position
    ps = load_epd(str(epd))
    assert len(ps) == len(kept) > 0
    assert sorted(ps.results.tolist()) == sorted(kept.values())
    lines = epd.read_text().splitlines()
    assert all(" ".join(line.split()[:4]) in kept for line in lines)
