"""Labelled position sets from games (`wasp-tune data`): quiet positions, de-duplicated, split
by game, optionally labelled by the Syzygy tables; and opening books of Chess960 and DFRC
starts (`wasp-tune data dfrc`)."""

from .builder import (
    BuildConfig,
    DataSet,
    build,
    check_format,
    check_pgn,
    not_pgn,
    summary_text,
    write,
)
from .frc import book_numbers, dfrc_fen, write_book

__all__ = [
    "BuildConfig", "DataSet", "book_numbers", "build", "check_format", "check_pgn", "dfrc_fen",
    "not_pgn",
    "summary_text", "write", "write_book",
]
