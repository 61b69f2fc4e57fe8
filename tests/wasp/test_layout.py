"""Offsets declared in order (wasp.layout), and the layouts the kernels index with it."""

import pytest

from wasp import movepick, searchparams
from wasp.layout import Layout


def test_blocks_follow_one_another_in_declaration_order():
    layout = Layout("demo")
    assert layout.add() == 0
    assert layout.add(8, "eight") == 1
    assert layout.add(entry="one") == 9
    assert layout.size == 10 and layout.entries == ["eight", "one"]
    with pytest.raises(ValueError, match="demo: a block of 0 slots"):
        layout.add(0)


def test_technique_switches_index_their_names():
    T = searchparams.TECHNIQUES
    assert len(T) == searchparams.N_TECHNIQUES == 24
    assert (T[searchparams.F_ASPIRATION], T[searchparams.F_NULL_MOVE],
            T[searchparams.F_QS_SEE], T[searchparams.F_MATE_DISTANCE]) == (
        "Aspiration", "NullMove", "QSearchSEE", "MateDistance")
    assert (T[searchparams.F_HIST_LMR], T[searchparams.F_CONT_HIST], T[searchparams.F_IMPROVING],
            T[searchparams.F_CORR_HIST], T[searchparams.F_SINGULAR]) == (
        "HistoryLMR", "ContHistory", "Improving", "CorrHistory", "SingularExt")


def test_search_parameter_constants_index_their_rows():
    P = searchparams.PARAMS
    assert P[searchparams.P_RAZOR_MARGIN_1].name == "RazorMargin1"
    assert P[searchparams.P_IID_R_PV].name == "IidReductionPv"
    assert [p.name for p in P[searchparams.P_SEE:searchparams.P_SEE + 5]] == [
        "SeePawn", "SeeKnight", "SeeBishop", "SeeRook", "SeeQueen"]
    assert searchparams.N_SEARCH_PARAMS == len(P)


def test_search_data_blocks_hold_what_they_are_sized_for():
    M = movepick
    assert M.SD_FLAGS == 0 and M.SD_STOP == searchparams.N_TECHNIQUES
    assert M.SD_PARAMS + searchparams.N_SEARCH_PARAMS == M.SD_KILLERS
    starts = sorted(v for k, v in vars(M).items() if k.startswith("SD_") and k != "SD_SIZE")
    assert len(set(starts)) == len(starts) and starts[-1] < M.SD_SIZE
