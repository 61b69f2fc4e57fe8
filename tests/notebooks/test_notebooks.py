"""Each notebook runs top to bottom through nbclient on output made here, and shows its figures.

A tiny tuner run (binary search over a few weights of 200 labelled positions) and a tiny match
(our engine against itself, 4 games at 200 nodes a move, with an SPRT) and a tiny net (3 datagen
games, 8 neurons, 3 epochs) are made once for the module; the notebooks read them through their
environment variables.
"""

import subprocess
import sys

import pytest

from tests.conftest import DATA, ROOT
from tuner.loop.selfplay import wasp_engine

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")
pytest.importorskip("ipykernel")

NOTEBOOKS = ROOT / "notebooks"


@pytest.fixture(scope="module")
def tuner_run(tmp_path_factory):
    from tuner.texel.run import Run, RunConfig

    run_dir = tmp_path_factory.mktemp("tune") / "run"
    config = RunConfig(data=[str(DATA / "tuner_quiet_200.epd")], method="binary",
                       params=["pawn_value", "knight_value", "pst_knight.mg[27]",
                               "pst_knight.mg[28]", "tempo"], threads=1, max_passes=2)
    Run.create(run_dir, config).tune(progress=False, log=lambda *a: None)
    return run_dir


def engine_flags(name) -> list[str]:
    """``-engine`` flags for the tuning loop's engine (`wasp_engine`) on a command line."""
    e = wasp_engine(name)
    return ["-engine", f"cmd={e.cmd}", f"name={e.name}", *(f"arg={a}" for a in e.args),
            *(f"option.{k}={v}" for k, v in e.options.items()), f"startup={e.startup:g}"]


@pytest.fixture(scope="module")
def match_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("match")
    rundir = out / "match"
    cmd = [sys.executable, "-m", "testing.cli", *engine_flags("wasp-a"), *engine_flags("wasp-b"),
           "-each", "nodes=200", "-rounds", "2", "-repeat", "-concurrency", "2",
           "-openings", f"file={DATA / 'uho_sample.epd'}", "order=random", "-srand", "7",
           "-maxmoves", "60", "-resign", "movecount=3", "score=600",
           "-sprt", "elo0=0", "elo1=10", "-rundir", str(rundir), "-progress", "off",
           "-ratinginterval", "0"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return rundir


@pytest.fixture(scope="module")
def spsa_run(tmp_path_factory):
    """40 iterations of 2 pairs of the SPSA fake engine (instant games), then an SPRT."""
    rundir = tmp_path_factory.mktemp("spsa") / "spsa"
    fake = ROOT / "tests" / "testing" / "fake_engines" / "spsa_uci.py"
    cmd = [sys.executable, "-m", "tuner.cli", "spsa", str(DATA / "spsa_knob.txt"),
           "-iterations", "40", "-pairs", "2", "-engine", f"cmd={sys.executable}",
           f"arg={fake}", "-each", "nodes=1", "-resign", "movecount=1", "score=300",
           "-maxmoves", "60", "-openings", f"file={DATA / 'uho_sample.epd'}", "order=random",
           "-srand", "3", "-rundir", str(rundir), "-progress", "off", "-then-sprt", "elo0=0",
           "elo1=50", "pairs=200"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return rundir


@pytest.fixture(scope="module")
def nnue_run(tmp_path_factory):
    """A 3-game datagen run at 200 nodes a move, and a net of 16 neurons trained 3 epochs on it."""
    from tuner.datagen.run import DATA_FILE, DatagenConfig, DatagenRun, generate
    from tuner.nnue.train import Config, Training

    out = tmp_path_factory.mktemp("nnue")
    dg = DatagenRun.create(str(out / "dg"), DatagenConfig(games=3, nodes=200, start_nodes=100,
                                                          seed=5))
    generate(dg, progress=False, log=lambda *a: None)
    config = Config(data=[dg.file(DATA_FILE)], output=str(out / "net.nnue"), hidden=16,
                    epochs=3, batch_size=64, lr=0.01)
    run = Training.create(out / "net.nnue.run", config)
    assert run.train(progress=False)
    run.export()
    return run.dir


@pytest.fixture(scope="module")
def nnue_superbatch_run(nnue_run):
    """Example 4 (king buckets, a factoriser, the pairwise layers) trained 2 superbatches on the
    records of `nnue_run`'s data written as a .bf file."""
    from tuner.nnue import data as D
    from tuner.nnue.train import Config, Training, read_config
    from wasp.nnue.arch import Arch

    out = nnue_run.parent
    D.write_bf(D.load(read_config(nnue_run)[0].data).boards, out / "d.bf")
    layout = [0, 1, 2, 3] + [4] * 28
    arch = Arch("buckets-mirrored", layout, 16, "crelu", 8, (16, 32))
    config = Config(data=[str(out / "d.bf")], output=str(out / "m.nnue"), hidden=16,
                    arch=arch.to_json(), factoriser=True, superbatches=2,
                    batches_per_superbatch=3, batch_size=64, lr=0.01)
    run = Training.create(out / "m.nnue.run", config)
    assert run.train(progress=False)
    run.export()
    return run.dir


def _run(name, env, monkeypatch):
    for k, v in env.items():
        monkeypatch.setenv(k, str(v))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return nb


def _figures(nb):
    return sum(1 for cell in nb.cells if cell.cell_type == "code"
               for out in cell.get("outputs", []) if "image/png" in out.get("data", {}))


def _errors(nb):
    return [out for cell in nb.cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if out.get("output_type") == "error"]


def test_tuning_notebook_plots_e_trajectories_and_piece_square_tables(tuner_run, monkeypatch):
    nb = _run("tuning.ipynb", {"WASP_TUNE_RUN": tuner_run}, monkeypatch)
    assert not _errors(nb)
    assert _figures(nb) == 3  # E per pass, parameter trajectories, PST heat maps


def test_matches_notebook_plots_score_elo_llr_pentanomial_and_times(match_run, monkeypatch):
    nb = _run("matches.ipynb", {"WASP_MATCH_RUN": match_run}, monkeypatch)
    assert not _errors(nb)
    assert _figures(nb) == 3  # score/Elo/LLR, pentanomial, time per move
    text = "".join(out.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for out in c.get("outputs", []))
    assert "4 games: wasp-a vs wasp-b" in text


def test_spsa_notebook_plots_parameter_paths_schedule_and_the_sprt(spsa_run, monkeypatch):
    nb = _run("spsa.ipynb", {"WASP_SPSA_RUN": spsa_run}, monkeypatch)
    assert not _errors(nb)
    assert _figures(nb) == 3  # parameter paths, schedule and scores, LLR
    text = "".join(out.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for out in c.get("outputs", []))
    assert "1 parameters, 40 of 40 iterations of 2 pairs played (160 games)" in text
    assert "pentanomial" in text


def test_engine_notebook_traces_positions_and_shows_search_statistics(monkeypatch):
    nb = _run("engine.ipynb", {"WASP_ENGINE_DEPTH": 4}, monkeypatch)
    assert not _errors(nb)
    assert _figures(nb) == 2  # evaluation terms, search statistics by depth
    text = "".join(out.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for out in c.get("outputs", []))
    assert "Final evaluation" in text


def test_nnue_notebook_plots_losses_output_against_scores_and_weight_maps(nnue_run,
                                                                           monkeypatch):
    nb = _run("nnue.ipynb", {"WASP_NNUE_RUN": nnue_run}, monkeypatch)
    assert not _errors(nb)
    assert _figures(nb) == 4  # losses, output against scores, two sets of heat maps
    text = "".join(out.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for out in c.get("outputs", []))
    assert "(768 -> 16)x2 -> 1, SCReLU on" in text and "3 of 3 epochs" in text
    assert "best validation loss" in text and "correlation" in text
    assert "the engine's output" in text


def test_nnue_notebook_reads_a_superbatch_run_of_example_4_on_records(nnue_superbatch_run,
                                                                      monkeypatch):
    nb = _run("nnue.ipynb", {"WASP_NNUE_RUN": nnue_superbatch_run}, monkeypatch)
    assert not _errors(nb)
    assert _figures(nb) == 4  # losses, output against scores, two neurons' maps
    text = "".join(out.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for out in c.get("outputs", []))
    assert "(768x5hm -> 16)x2 -> pairwise" in text and "2 of 2 superbatches" in text
    assert "at superbatch" in text
    assert "the trainer's float output" in text and "correlation" in text


def test_notebooks_take_their_input_from_the_environment():
    for name, var in (("tuning.ipynb", "WASP_TUNE_RUN"), ("matches.ipynb", "WASP_MATCH_RUN"),
                      ("engine.ipynb", "WASP_ENGINE_DEPTH"), ("spsa.ipynb", "WASP_SPSA_RUN"),
                      ("nnue.ipynb", "WASP_NNUE_RUN")):
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        nbformat.validate(nb)
        assert var in nb.cells[1].source
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
