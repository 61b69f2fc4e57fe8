"""`wasp-tune data convert IN OUT`: self-play data between bullet's text (.txt), bulletformat
(.bf), viriformat (.vf) and labelled EPD (.epd), with the filters and the shuffle that belong to
conversion.

Without flags every record is kept, in order. Filters drop positions in check (-no-check), whose
move played is a capture or promotion (-no-capture: needs the move, which a .txt file's side record
and a .vf file keep), with mate scores (-no-mate) or scores beyond a bound (-max-score), before
ply K (-min-ply), and repeats of a position already kept (-dedupe: board, side to move, castling
and en passant). -shuffle writes a uniform random permutation (a bucketed shuffle: records spread
over temporary files at random, each shuffled in memory), the same for the same -seed. Text to
.bf (with the score filters and -shuffle only) goes through a kernel (`tuner.formats.bfkernels`),
millions of lines a second, and so does .vf to .bf with any filter but -dedupe
(`tuner.formats.virikernels`); other paths are Python.
"""

import hashlib
import os
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from wasp.cliargs import ArgumentParser
from wasp.exitcodes import EXIT_INPUT, EXIT_USAGE, fail, file_problem

from .records import MATE_SCORE, Record, fen_ply

FORMATS = (".txt", ".bf", ".vf", ".epd")
BINARY = (".bf", ".vf")
BUCKET_RECORDS = 1 << 21  # records a shuffle bucket holds on average (memory bound)
BYTES_PER_RECORD = {".txt": 70, ".bf": 32, ".vf": 4, ".epd": 80}  # to size the buckets

EXAMPLES = """examples:
  wasp-tune data convert runs/dg/data.txt data.bf -shuffle       # for bullet
  wasp-tune data convert data.bf back.txt                        # positions as the mover sees them
  wasp-tune data convert runs/dg/data.txt tune.epd -no-check -no-capture -no-mate -min-ply 16
  wasp-tune data convert runs/dg/data.txt clean.txt -dedupe -shuffle -seed 7
  wasp-tune data convert runs/dg/data.txt runs/dg/data.vf        # viriformat, game by game
  wasp-tune data convert runs/dg/data.vf data.bf -min-ply 16 -no-check -no-capture -shuffle

Formats by extension: .txt bullet's text ('FEN | score | result', White's view; its side
record X.moves, 'game ply move', is read and written beside it), .bf bulletformat's 32-byte
ChessBoard (side to move's view: no side to move, castling, en passant or move counters, so
.bf -> .txt gives White-to-move positions), .epd labelled EPD ('FEN4 hmvc H; fmvn F; ce S;
c9 "1-0";', ce from the side to move's view; the Texel tuner reads it), .vf viriformat
(Viridithas's games, header and 4 bytes a move, as bullet's ViriBinpackLoader reads them: .txt
with its .moves converts to it and back record for record; its games are renumbered from 0 in
file order; -shuffle cannot write it, as it keeps games whole).

exit codes: 0 ok, 1 a file that cannot be used (the message names it and the record),
2 a bad command line
"""


class KeySet:
    """The 64-bit position keys seen so far, 16 bytes a key (open addressing in a numpy table
    kept at most half full), where a Python set of them takes 70 or more: -dedupe of 100 M
    positions fits in 2 GB."""

    def __init__(self, capacity: int = 1 << 16):
        self.table = np.zeros(max(16, 1 << (capacity - 1).bit_length()), dtype=np.uint64)
        self.size = 0
        self.has_zero = False  # 0 marks an empty slot, so key 0 is kept apart

    def add(self, key: int) -> bool:
        """True if `key` is new (and now kept), False if it was seen before."""
        if key == 0:
            new, self.has_zero = not self.has_zero, True
            return new
        if 2 * (self.size + 1) > len(self.table):
            old = self.table
            self.table = np.zeros(2 * len(old), dtype=np.uint64)
            _rehash(old, self.table)
        new = _insert(self.table, np.uint64(key))
        self.size += new
        return new

    def __len__(self) -> int:
        return self.size + self.has_zero


@njit(cache=True, nogil=True)
def _insert(table, key):
    mask = np.uint64(len(table) - 1)
    i = (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32) & mask
    while table[i] != 0:
        if table[i] == key:
            return False
        i = (i + np.uint64(1)) & mask
    table[i] = key
    return True


@njit(cache=True, nogil=True)
def _rehash(old, table):
    for k in old:
        if k != 0:
            _insert(table, k)


class ConvertError(ValueError):
    """A conversion that cannot be done: one line for the user."""


@dataclass
class Filters:
    no_check: bool = False
    no_capture: bool = False
    no_mate: bool = False
    min_ply: int = 0
    dedupe: bool = False
    max_score: int | None = None  # drop positions with |score| above this

    @property
    def need_board(self) -> bool:
        return self.no_check or self.no_capture


@dataclass
class ConvertStats:
    read: int = 0
    written: int = 0
    dropped: dict = field(default_factory=dict)

    def drop(self, why: str, n: int = 1) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + n

    def __str__(self) -> str:
        text = f"{self.read} records read, {self.written} written"
        if self.dropped:
            text += " (dropped: " + ", ".join(f"{k} {v}" for k, v in self.dropped.items()) + ")"
        return text


def kind(path) -> str:
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in FORMATS:
        raise ConvertError(f"{path}: unknown format {ext or '(no extension)'!r} "
                           f"(use {', '.join(FORMATS)})")
    return ext


def _io(ext):
    """(reader, writer class) of a format, by extension."""
    if ext == ".txt":
        from .bullettext import TextWriter, read_text

        return read_text, TextWriter
    if ext == ".bf":
        from .bulletformat import BfWriter, read_bf

        return read_bf, BfWriter
    if ext == ".vf":
        from .viriformat import ViriWriter, read_viri

        return read_viri, ViriWriter
    from .labelled_epd import EpdWriter, read_epd

    return read_epd, EpdWriter


def read_records(path):
    """The records of a data file in any of the formats, in order."""
    return _io(kind(path))[0](path)


def open_writer(path):
    return _io(kind(path))[1](path)


def _keep(r: Record, f: Filters, seen: KeySet, stats: ConvertStats, src) -> bool:
    if f.no_mate and r.is_mate_score:
        stats.drop("mate score")
        return False
    if f.max_score is not None and abs(r.score) > f.max_score:
        stats.drop("score")
        return False
    if f.min_ply:
        ply = r.ply
        if ply is None:
            if kind(src) == ".bf":
                raise ConvertError(f"{src}: -min-ply needs the ply, which .bf records lack")
            ply = fen_ply(r.fen)
        if ply < f.min_ply:
            stats.drop("ply")
            return False
    if f.need_board:
        import chess

        board = chess.Board(r.fen)
        if f.no_check and board.is_check():
            stats.drop("in check")
            return False
        if f.no_capture:
            if r.move is None:
                raise ConvertError(f"{src}: -no-capture needs the move played, which only a "
                                   f".txt file's side record (X.moves beside X.txt) and a .vf "
                                   f"file keep")
            move = chess.Move.from_uci(r.move)
            if move.promotion or board.is_capture(move):
                stats.drop("capture or promotion")
                return False
    if f.dedupe:
        key = hashlib.blake2b(" ".join(r.fen.split()[:4]).encode(), digest_size=8).digest()
        if not seen.add(int.from_bytes(key, "little")):
            stats.drop("duplicate")
            return False
    return True


def _bucket_line(r: Record) -> str:
    return f"{r.fen}|{r.score}|{r.result}|{r.game}|{r.ply}|{r.move}\n"


def _from_bucket_line(line: str) -> Record:
    fen, score, result, game, ply, move = line.rstrip("\n").split("|")
    return Record(fen, int(score), float(result), None if move == "None" else move,
                  None if ply == "None" else int(ply), None if game == "None" else int(game))


def convert(src, dst, filters: Filters | None = None, shuffle: bool = False, seed: int = 1,
            progress: bool = True) -> ConvertStats:
    """Convert `src` to `dst` (formats by extension), filtering and shuffling when asked."""
    from tqdm import tqdm

    filters = filters or Filters()
    kind(src), kind(dst)
    if os.path.abspath(src) == os.path.abspath(dst):
        raise ConvertError(f"{dst}: the output would overwrite the input")
    if kind(dst) == ".vf":
        _check_games(src, shuffle)
    stats = ConvertStats()
    seen = KeySet()
    bar = tqdm(unit=" rec", unit_scale=True, disable=not progress, desc="convert")

    def kept():
        for r in read_records(src):
            stats.read += 1
            bar.update(1)
            if _keep(r, filters, seen, stats, src):
                yield r

    fast = kind(dst) == ".bf" and not filters.dedupe and (
        kind(src) == ".vf" or kind(src) == ".txt" and not (filters.need_board or filters.min_ply))
    try:
        if fast:
            _to_bf(src, dst, filters, shuffle, seed, stats, bar)
            return stats
        with open_writer(dst) as w:
            if not shuffle:
                for r in kept():
                    w.write(r)
                    stats.written += 1
            else:
                _shuffled(kept(), w, src, seed, stats)
    except BaseException:
        from .bullettext import side_path

        for p in (dst, side_path(dst)):  # no half-written output left behind
            if kind(dst) == ".txt" or p == dst:
                if os.path.exists(p):
                    os.remove(p)
        raise
    finally:
        bar.close()
    return stats


def _shuffled(records, writer, src, seed, stats) -> None:
    """A uniform random permutation: each record to a random bucket file, then each bucket
    shuffled in memory and written, bucket after bucket."""
    rng = np.random.default_rng(seed)
    est = os.path.getsize(src) // BYTES_PER_RECORD[kind(src)]
    n_buckets = max(1, -(-est // BUCKET_RECORDS))
    with tempfile.TemporaryDirectory(prefix="wasp-shuffle-",
                                     dir=os.path.dirname(os.path.abspath(src))) as tmp:
        files = [open(os.path.join(tmp, f"{i}.txt"), "w", encoding="utf-8")
                 for i in range(n_buckets)]
        try:
            batch = []
            for r in records:
                batch.append(r)
                if len(batch) == 4096:
                    _spread(batch, files, rng)
                    batch = []
            _spread(batch, files, rng)
        finally:
            for f in files:
                f.close()
        for i in range(n_buckets):
            with open(os.path.join(tmp, f"{i}.txt"), encoding="utf-8") as f:
                lines = f.readlines()
            for k in rng.permutation(len(lines)):
                writer.write(_from_bucket_line(lines[k]))
                stats.written += 1


def _check_games(src, shuffle) -> None:
    """ConvertError unless `src` keeps games whole with their moves, as a .vf file needs."""
    from .bullettext import side_path

    if shuffle:
        raise ConvertError("-shuffle cannot write .vf: viriformat keeps games whole (shuffle "
                           "when converting to .bf; the trainer shuffles .vf itself)")
    if kind(src) in (".bf", ".epd") or (kind(src) == ".txt" and
                                         not os.path.exists(side_path(src))):
        where = f"its side record {side_path(src)}" if kind(src) == ".txt" else "it"
        raise ConvertError(f"{src}: viriformat keeps the moves played, and {where} has none "
                           f"(a .txt file keeps them in X.moves beside it)")


def _to_bf(src, dst, filters, shuffle, seed, stats, bar) -> None:
    """Text or .vf to .bf by the kernels, a chunk at a time (.vf: every filter in the kernel;
    text: the score filters and -shuffle on the record arrays): the path for files of millions
    of positions."""
    from .bulletformat import DTYPE, encode_text

    def chunks():
        if kind(src) == ".vf":
            from .viriformat import decode_boards

            for batch in decode_boards(src, filters):
                stats.read += batch.read
                bar.update(batch.read)
                if batch.read > len(batch.boards):
                    stats.drop("filter", batch.read - len(batch.boards))
                yield batch.boards.view(DTYPE).reshape(len(batch.boards))
            return
        for recs in encode_text(src):
            stats.read += len(recs)
            bar.update(len(recs))
            scores = np.abs(recs["score"].astype(np.int64))
            for why, cap in (("mate score", MATE_SCORE - 1 if filters.no_mate else None),
                             ("score", filters.max_score)):
                if cap is not None:
                    out = scores > cap
                    if out.any():
                        stats.drop(why, int(out.sum()))
                    recs, scores = recs[~out], scores[~out]
            yield recs

    with open(dst, "wb") as out:
        if not shuffle:
            for recs in chunks():
                out.write(recs.tobytes())
                stats.written += len(recs)
            return
        rng = np.random.default_rng(seed)
        n_buckets = max(1, -(-(os.path.getsize(src) // BYTES_PER_RECORD[kind(src)])
                             // BUCKET_RECORDS))
        with tempfile.TemporaryDirectory(prefix="wasp-shuffle-",
                                         dir=os.path.dirname(os.path.abspath(dst))) as tmp:
            paths = [os.path.join(tmp, f"{i}.bf") for i in range(n_buckets)]
            files = [open(p, "wb") for p in paths]
            try:
                for recs in chunks():
                    which = rng.integers(n_buckets, size=len(recs))
                    for b in range(n_buckets):
                        files[b].write(recs[which == b].tobytes())
            finally:
                for f in files:
                    f.close()
            for p in paths:
                recs = np.fromfile(p, dtype=DTYPE)
                out.write(recs[rng.permutation(len(recs))].tobytes())
                stats.written += len(recs)


def _spread(batch, files, rng) -> None:
    if not batch:
        return
    for r, b in zip(batch, rng.integers(len(files), size=len(batch)), strict=True):
        files[b].write(_bucket_line(r))


def build_parser():
    ap = ArgumentParser(
        prog="wasp-tune data convert", epilog=EXAMPLES,
        description="Convert self-play data between bullet's text (.txt), bulletformat (.bf), "
                    "viriformat (.vf) and labelled EPD (.epd), filtering and shuffling when "
                    "asked.")
    ap.add_argument("input", metavar="IN")
    ap.add_argument("output", metavar="OUT")

    def flag(name, **kw):
        ap.add_argument(f"-{name}", **kw)

    flag("shuffle", action="store_true", help="write the records in a random order")
    flag("seed", type=int, default=1, help="the shuffle's seed (default 1)")
    flag("dedupe", action="store_true", help="keep only the first record of each position")
    flag("no-check", action="store_true", help="drop positions with the side to move in check")
    flag("no-capture", action="store_true",
         help="drop positions whose move played is a capture or a promotion")
    flag("no-mate", action="store_true", help="drop mate scores (|score| >= 32000)")
    flag("max-score", type=int, default=None, metavar="CP",
         help="drop positions with |score| above CP")
    flag("min-ply", type=int, default=0, metavar="K", help="drop positions before ply K")
    flag("quiet", action="store_true", help="no progress bar")
    return ap


def main(argv=None) -> int:
    from .bulletformat import BulletFormatError
    from .bullettext import TextFormatError
    from .labelled_epd import EpdFormatError
    from .viriformat import ViriFormatError

    prog = "wasp-tune data convert"
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        kind(args.input), kind(args.output)
    except ConvertError as e:
        return fail(prog, e, EXIT_USAGE)
    if args.min_ply < 0:
        return fail(prog, "-min-ply must not be negative", EXIT_USAGE)
    if args.max_score is not None and args.max_score < 0:
        return fail(prog, "-max-score must not be negative", EXIT_USAGE)
    problem = file_problem(args.input, text=kind(args.input) not in BINARY, empty_ok=True)
    if problem:
        return fail(prog, problem, EXIT_INPUT)
    filters = Filters(no_check=args.no_check, no_capture=args.no_capture,
                      no_mate=args.no_mate, min_ply=args.min_ply, dedupe=args.dedupe,
                      max_score=args.max_score)
    try:
        stats = convert(args.input, args.output, filters, args.shuffle, args.seed,
                        progress=not args.quiet)
    except (ConvertError, TextFormatError, BulletFormatError, EpdFormatError,
            ViriFormatError) as e:
        return fail(prog, e, EXIT_INPUT)
    except OSError as e:
        return fail(prog, f"{e.filename}: {e.strerror}", EXIT_INPUT)
    print(f"{args.output}: {stats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
