"""Labelled position sets from games (`wasp-tune data`): quiet positions, de-duplicated, split
by game, optionally labelled by the Syzygy tables; and opening books of Chess960 and DFRC
starts (`wasp-tune data dfrc`)."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "builder": "BuildConfig DataSet build check_format check_pgn not_pgn summary_text write",
    "frc": "book_numbers dfrc_fen write_book",
})
