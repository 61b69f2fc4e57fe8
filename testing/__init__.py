"""Match runner for engine testing: games, openings, adjudication, PGN, SPRT and Elo."""
