"""`wasp.cli`: `wasp gui`'s plugins (entry-point group `wasp.gui`), looked up only for `gui`,
and the console script's entry."""

import pytest

import dashboard.cli
from wasp import cli


def _fake_distribution(folder, entries: str):
    """An installed distribution's metadata in `folder`, declaring `entries` (entry_points.txt)."""
    info = folder / "wasp_gui_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wasp-gui-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text(entries)


def test_the_installed_gui_plugins_are_loaded_and_a_broken_one_is_named(tmp_path, monkeypatch,
                                                                          capsys):
    _fake_distribution(tmp_path, f"[{cli.GUI_PLUGINS}]\nprobe = dashboard.cli\n"
                                 "broken = no_such_module_for_wasp_gui\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert dashboard.cli in cli.gui_plugins()
    err = capsys.readouterr().err
    assert "wasp gui: warning: plugin broken (no_such_module_for_wasp_gui) not loaded" in err


def test_plugins_are_looked_up_only_for_gui(monkeypatch):
    looked = []
    monkeypatch.setattr(cli, "gui_plugins", lambda: looked.append(1) or [])
    for argv in (["perft", "--help"], ["--help"], ["bench", "--help"]):
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 0
    assert looked == []
    with pytest.raises(SystemExit):
        cli.main(["gui", "--help"])
    assert looked == [1]


def test_without_a_plugin_gui_knows_no_runs_flag(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["gui", "--runs", str(tmp_path)], plugins=[])
    assert e.value.code == 2 and "--runs" in capsys.readouterr().err


def test_a_plugins_flags_are_on_gui_and_its_error_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["gui", "--help"], plugins=[dashboard.cli])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "--runs DIR" in out and "wasp gui --runs runs" in out
    missing = tmp_path / "none"
    assert cli.main(["gui", "--runs", str(missing)], plugins=[dashboard.cli]) == 1
    assert capsys.readouterr().err == f"wasp gui: error: --runs {str(missing)!r} is not a " \
                                      f"directory\n"


@pytest.mark.parametrize("argv,says", [
    (["warmup", "--report"], "wasp warmup: error: --report goes with --only GROUP"),
    (["warmup", "--jobs", "0"], "wasp warmup: error: --jobs 0: give 1 or more"),
    (["warmup", "--parent", "1"], "wasp warmup: error: --parent goes with --only GROUP"),
])
def test_warmup_refuses_a_bad_combination_in_one_line(argv, says, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [says]
