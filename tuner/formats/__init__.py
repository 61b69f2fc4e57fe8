"""The tools' data formats, a reader beside each writer: one labelled position (`Record`);
bullet's text with its side record of moves; bulletformat's 32-byte records (their layout,
for kernels that read them); viriformat, Viridithas's games (and its kernels' path into
bulletformat's records); labelled EPD; and `wasp-tune data convert` between them."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "bfkernels": ("EMPTY KING LOWEST_BIT MAX_PIECES OFF_KSQ OFF_OCC OFF_OPP_KSQ OFF_PCS "
                 "OFF_RESULT OFF_SCORE RECORD_SIZE THEIRS pack"),
    "bulletformat": "BfWriter BulletFormatError encode_text load_bf read_bf save_bf",
    "bullettext": "TextFormatError TextWriter format_line format_side read_text side_path",
    "convert": "ConvertError Filters convert",
    "labelled_epd": "EpdFormatError EpdWriter read_epd",
    "records": "MATE_SCORE RESULT_PGN Record check_score fen_ply",
    "viriformat": ("Batch ViriFormatError ViriGame ViriWriter count_games decode_boards is_viri "
                   "read_games read_viri"),
})
