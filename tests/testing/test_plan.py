"""A match is planned once (`testing.plan_match`): a MatchConfig or wasp-match's arguments and a
run directory become a MatchPlan, validated, seeded and its openings read exactly once; a stored
run resumes with only the settings `MatchConfig.SESSION_FIELDS` names changed."""

import io
import sys

import pytest

import testing
from testing import args
from testing.config import MatchConfig, OpeningsConfig
from testing.engine import EngineConfig

from .conftest import EPD, FAKE, fake_engine


def two_engines() -> list[EngineConfig]:
    return [EngineConfig(cmd=sys.executable, name=name, args=[FAKE], nodes=1)
            for name in ("a", "b")]


@pytest.fixture
def stored(tmp_path):
    """A run directory holding a finished two-game match."""
    config = MatchConfig(engines=two_engines(), games=2, srand=4, maxmoves=6, progress=False,
                         ratinginterval=0)
    assert testing.run_match(config, tmp_path / "run", out=io.StringIO()).ok
    return str(tmp_path / "run")


def test_planning_validates_seeds_and_reads_the_openings_once(tmp_path, monkeypatch):
    calls = {"validate": 0, "check_openings": 0}

    def counting(name):
        real = getattr(MatchConfig, name)

        def counted(self):
            calls[name] += 1
            return real(self)
        return counted

    for name in calls:
        monkeypatch.setattr(MatchConfig, name, counting(name))
    argv = fake_engine("a") + fake_engine("b") + [
        "-each", "nodes=1", "-openings", f"file={EPD}", "order=random"]
    plan = testing.plan_match(argv, tmp_path / "r")
    assert calls == {"validate": 1, "check_openings": 1}
    assert not plan.resume and plan.rundir == str(tmp_path / "r")
    assert isinstance(plan.config.srand, int)  # drawn: the plan holds the seed it plays


def test_a_config_given_stays_as_given_and_the_plan_holds_its_own(tmp_path):
    config = MatchConfig(engines=two_engines(), openings=OpeningsConfig(EPD))
    plan = testing.plan_match(config, tmp_path / "r")
    assert config.srand is None and plan.config.srand is not None
    assert plan.config is not config and plan.config.engines[0] is not config.engines[0]
    assert repr(plan) == f"MatchPlan({str(tmp_path / 'r')!r}, new, a vs b, srand " \
                         f"{plan.config.srand})"


def test_a_stored_run_resumes_with_only_its_session_settings_changed(stored):
    plan = testing.plan_match(None, stored, session={"concurrency": 3, "progress": True})
    assert plan.resume and plan.rundir == stored
    assert plan.config.concurrency == 3 and plan.config.progress is True
    assert plan.config.srand == 4 and plan.config.games == 2  # what is played: as stored
    with pytest.raises(TypeError, match="'games' is not one of the settings"):
        testing.plan_match(None, stored, session={"games": 4})


def test_the_same_config_resumes_keeping_the_seed_and_another_is_refused(stored):
    again = MatchConfig(engines=two_engines(), games=2, maxmoves=6, concurrency=2,
                        ratinginterval=0)  # no srand: the stored one
    plan = testing.plan_match(again, stored)
    assert plan.resume and plan.config.srand == 4 and plan.config.concurrency == 2
    again.maxmoves = 7
    with pytest.raises(testing.UsageError, match="holds a run with other settings"):
        testing.plan_match(again, stored)


def test_a_new_run_only_refuses_a_directory_holding_one(stored):
    argv = fake_engine("a") + fake_engine("b") + ["-each", "nodes=1", "-rundir", stored]
    with pytest.raises(testing.UsageError, match="already holds a run"):
        testing.plan_match(argv, new=True)


def test_run_match_plays_a_plan_into_its_own_directory(tmp_path):
    plan = testing.plan_match(MatchConfig(engines=two_engines(), games=2, maxmoves=6,
                                          progress=False, ratinginterval=0), tmp_path / "p")
    with pytest.raises(ValueError, match="the plan plays into"):
        testing.run_match(plan, tmp_path / "elsewhere")
    result = testing.run_match(plan, out=io.StringIO())
    assert result.ok and result.games == 2 and result.rundir == plan.rundir


def test_the_flags_of_a_resume_are_the_session_fields_by_their_flag_names():
    assert {args.FIELDS.get(f, f) for f in args.RESUME_FLAGS} == set(MatchConfig.SESSION_FIELDS)
    flags = testing.read_flags(["-resume", "somewhere", "-concurrency", "2",
                                "-use-affinity", "0"])
    assert flags.resume and flags.rundir == "somewhere"
    assert flags.session == {"concurrency": 2, "affinity": [0]}


def test_read_flags_gives_a_config_not_planned():
    flags = testing.read_flags(fake_engine("a") + ["-each", "nodes=5", "-games", "0"],
                               count_engines=False)
    assert not flags.resume and flags.rundir is None and flags.config.srand is None
    assert [e.name for e in flags.config.engines] == ["a"] and flags.config.games == 0
    with pytest.raises(testing.UsageError, match="at least two engines"):
        testing.read_flags(fake_engine("a") + ["-each", "nodes=5"])


def test_read_engine_reads_engine_items_over_each_items():
    e = testing.read_engine([f"cmd={sys.executable}", "name=x", "option.Hash=8", "tc=10+0.1"],
                            ["nodes=7", "option.Threads=1"])
    assert e.name == "x" and e.nodes == 7 and str(e.tc) == "10+0.1"
    assert e.options == {"Threads": "1", "Hash": "8"}
    with pytest.raises(testing.UsageError, match="tc: "):
        testing.read_engine([f"cmd={sys.executable}", "tc=ten"])
