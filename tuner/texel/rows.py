"""The packed row: one position as `ROW_WIDTH` uint8, the form every tuner array holds.

Bytes 0..31 hold the 64 squares two to a byte (low nibble the even square, piece codes as in
`wasp.types`, 12 empty), then the side to move (`R_SIDE`), the castling bits (`R_CASTLE`) and the
en-passant square (`R_EP`, `NO_EP` when none). A million positions take 36 MB. Rows are packed from
FENs by `tuner.texel.positions.pack_fen` and set into a `State` by `tuner.texel.kernels`.
"""

ROW_WIDTH = 36
R_SIDE, R_CASTLE, R_EP = 32, 33, 34
NO_EP = 64
