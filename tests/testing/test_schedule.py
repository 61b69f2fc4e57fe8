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
