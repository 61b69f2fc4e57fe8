"""The tools' data formats, a reader beside each writer: one labelled position (`Record`);
bullet's text with its side record of moves; bulletformat's 32-byte records (their layout,
for kernels that read them); labelled EPD;
and `wasp-tune data convert` between them."""

from .bfkernels import (
    EMPTY,
    KING,
    LOWEST_BIT,
    MAX_PIECES,
    OFF_KSQ,
    OFF_OCC,
    OFF_OPP_KSQ,
    OFF_PCS,
    OFF_RESULT,
    OFF_SCORE,
    RECORD_SIZE,
    THEIRS,
    pack,
)
from .bulletformat import BfWriter, BulletFormatError, encode_text, load_bf, read_bf, save_bf
from .bullettext import TextFormatError, TextWriter, format_line, format_side, read_text, side_path
from .convert import ConvertError, Filters, convert
from .labelled_epd import EpdFormatError, EpdWriter, read_epd
from .records import MATE_SCORE, RESULT_PGN, Record, check_score, fen_ply

__all__ = [
    "EMPTY", "KING", "LOWEST_BIT", "MAX_PIECES", "OFF_KSQ", "OFF_OCC", "OFF_OPP_KSQ", "OFF_PCS",
    "OFF_RESULT", "OFF_SCORE", "RECORD_SIZE", "THEIRS", "pack",
    "MATE_SCORE", "RESULT_PGN", "BfWriter", "BulletFormatError", "ConvertError", "EpdFormatError",
    "EpdWriter", "Filters", "Record", "TextFormatError", "TextWriter", "check_score", "convert",
    "encode_text", "fen_ply", "format_line", "format_side", "load_bf", "read_bf", "read_epd",
    "read_text", "save_bf", "side_path",
]
