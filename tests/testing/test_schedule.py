from testing.schedule import encounters, make_schedule


def test_pairs_swap_colours_and_share_openings():
    pairs = make_schedule(2, "roundrobin", rounds=3, games=2, repeat=True)
    assert len(pairs) == 3
    for p in pairs:
        g0, g1 = p.games
        assert (g0.white, g0.black) == (0, 1) and (g1.white, g1.black) == (1, 0)
    assert [p.opening_k for p in pairs] == [0, 1, 2]
    assert [g.number for p in pairs for g in p.games] == list(range(1, 7))


def test_single_games_alternate_colours():
    pairs = make_schedule(2, "roundrobin", rounds=4, games=1, repeat=False)
    assert [p.games[0].white for p in pairs] == [0, 1, 0, 1]


def test_gauntlet_and_roundrobin_encounters():
    assert encounters(4, "gauntlet") == [(0, 1), (0, 2), (0, 3)]
    assert len(encounters(4, "roundrobin")) == 6
    assert len(make_schedule(3, "roundrobin", rounds=2, games=2, repeat=True)) == 6


def test_policy_default_gives_every_pair_its_own_opening():
    pairs = make_schedule(3, "roundrobin", rounds=2, games=4, repeat=True)
    assert [p.opening_k for p in pairs] == list(range(12))


def test_policy_encounter_shifts_when_the_players_change():
    # three engines: blocks (0,1) (0,2) (1,2) per round, two pairs each
    pairs = make_schedule(3, "roundrobin", rounds=2, games=4, repeat=True, policy="encounter")
    assert [p.opening_k for p in pairs] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    # two engines never change partners: one opening for the match, as in cutechess
    pairs = make_schedule(2, "roundrobin", rounds=5, games=2, repeat=True, policy="encounter")
    assert {p.opening_k for p in pairs} == {0}


def test_policy_round_shifts_only_with_a_new_round():
    pairs = make_schedule(3, "gauntlet", rounds=3, games=2, repeat=True, policy="round")
    assert [(p.round, p.opening_k) for p in pairs] == [(0, 0), (0, 0), (1, 1), (1, 1),
                                                        (2, 2), (2, 2)]


def test_unknown_policy_is_refused():
    import pytest

    with pytest.raises(ValueError, match="policy"):
        make_schedule(2, "roundrobin", 1, 2, True, policy="keep")
