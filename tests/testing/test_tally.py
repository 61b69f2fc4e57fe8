"""The running counts' reports: undefined statistics in words, never nan."""

from testing.tally import Encounter, rating_table


def test_trinomial_report_of_all_draws_and_of_no_games_has_no_nan():
    enc = Encounter("a", "b", pair_size=1)
    assert enc.report() == "No games yet"
    for game in range(4):
        enc.add(game, 0.5, 1)
    text = enc.report()
    assert "nan" not in text
    assert text.splitlines()[:2] == ["Elo: 0.00 +/- 0.00, nElo: undefined (every game drawn)",
                                     "LOS: undefined, DrawRatio: 100.00 %"]


def test_rating_table_shows_undefined_error_bars_in_words():
    enc = Encounter("ref", "other", pair_size=1)
    for game in range(3):
        enc.add(game, 0.5, 1)
    table = rating_table(["ref", "other"], {(0, 1): enc})
    assert "nan" not in table and "undefined" in table
