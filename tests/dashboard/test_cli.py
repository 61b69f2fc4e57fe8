"""`dashboard.cli`: the dashboard plugs `--runs DIR` into `wasp gui` as an installed plugin,
declared in pyproject.toml, and `python -m dashboard` runs `wasp` with it."""

import importlib
from types import SimpleNamespace

import pytest

import dashboard.cli
from tests.conftest import ROOT
from wasp.cli import GUI_PLUGINS
from wasp.exitcodes import InputError


def test_pyproject_declares_the_dashboard_a_wasp_gui_plugin_and_wasp_the_wasp_script():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["wasp"] == "wasp.cli:entry"
    (value,) = project["entry-points"][GUI_PLUGINS].values()
    assert importlib.import_module(value) is dashboard.cli


def test_the_plugin_serves_the_runs_only_when_runs_is_given(tmp_path):
    assert dashboard.cli.server(SimpleNamespace(runs=None)) is None
    make_server = dashboard.cli.server(SimpleNamespace(runs=str(tmp_path)))
    server = make_server("127.0.0.1", 0, False, ())
    try:
        assert server.runs.root == str(tmp_path.resolve())
    finally:
        server.server_close()
    with pytest.raises(InputError, match="is not a directory"):
        dashboard.cli.server(SimpleNamespace(runs=str(tmp_path / "none")))
