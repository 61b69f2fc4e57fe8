"""Evaluation traces of any engine: the text format (version 1), its reader and writer.

A trace holds, for each labelled position, how often each term of a linear tapered evaluation
occurs; `wasp-tune trace` fits the terms' values to the results (docs/traces.md)::

    # wasp-trace 1
    terms 3
    pawn 82 94
    knight 337 281
    bishop_pair 30
    positions
    1.0 0.75 1 1 0 115 | 0:1 2:1

A position line is ``RESULT PHASE MG_SCALE EG_SCALE FIXED EVAL | INDEX:COEF ...``; the model
is ``PHASE * MG_SCALE * sum(COEF * opening) + (1 - PHASE) * EG_SCALE * sum(COEF * endgame) +
FIXED``. The position lines are parsed by a parallel numba kernel; the parsed arrays are kept in
a binary cache beside the trace (``TRACE.cache.npz``, keyed by its size, mtime and a hash of its
ends) for the next run.
"""

import contextlib
import hashlib
import math
import os
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from tuner.texel import LinearSet, linear_scores, weight_layout
from wasp.atomicfile import replacing

MAGIC = "# wasp-trace"
VERSION = 1
CACHE_VERSION = 2
CACHE_SUFFIX = ".cache.npz"

NL, CR, SPACE, TAB, HASH, BAR, COLON = 10, 13, 32, 9, 35, 124, 58
# error codes of the position parser (the kernel cannot build strings)
E_OK, E_RESULT, E_PHASE, E_NUMBER, E_BAR, E_PAIR, E_INDEX, E_FIELDS = range(8)
FIELDS = ("RESULT", "PHASE", "MG_SCALE", "EG_SCALE", "FIXED", "EVAL")
POW10 = np.array([10.0 ** i for i in range(23)])  # exact powers: no pow() a number


class TraceError(ValueError):
    """A trace that cannot be used; the message starts with ``FILE:LINE:``."""


# ---------------------------------------------------------------------------
# The position parser (numba)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _skip_ws(buf, i, end):
    while i < end and (buf[i] == SPACE or buf[i] == TAB):
        i += 1
    return i


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _number(buf, i, end):
    """(value, next index, ok) of a decimal number ([-+]digits[.digits][e[-+]digits]) at i."""
    neg = False
    if i < end and (buf[i] == 45 or buf[i] == 43):
        neg = buf[i] == 45
        i += 1
    m = np.int64(0)  # the first 18 significant digits, exactly
    nd = 0
    seen = False
    e = 0
    while i < end and 48 <= buf[i] <= 57:
        seen = True
        if nd < 18:
            if m or buf[i] != 48:
                nd += 1
            m = m * 10 + (buf[i] - 48)
        else:
            e += 1
        i += 1
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            seen = True
            if nd < 18:
                if m or buf[i] != 48:
                    nd += 1
                m = m * 10 + (buf[i] - 48)
                e -= 1
            i += 1
    if not seen:
        return 0.0, i, False
    if i < end and (buf[i] == 101 or buf[i] == 69):
        i += 1
        eneg = False
        if i < end and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        x = 0
        ed = 0
        while i < end and 48 <= buf[i] <= 57:
            if x < 100000:
                x = x * 10 + (buf[i] - 48)
            ed += 1
            i += 1
        if ed == 0:
            return 0.0, i, False
        e += -x if eneg else x
    v = float(m)
    if e == 0:
        pass
    elif -22 <= e < 0:
        v = v / POW10[-e]
    elif 0 < e <= 22:
        v = v * POW10[e]
    else:
        v = v / 10.0 ** (-e) if e < 0 else v * 10.0 ** e
    return (-v if neg else v), i, True


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _token_end(buf, i, end):
    """Whether a token ends at i: a blank, a line end or the end of the piece."""
    return i >= end or buf[i] == SPACE or buf[i] == TAB or buf[i] == NL or buf[i] == CR


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _line_end(buf, i, end):
    """Whether the line ends at i (a newline, CR newline, or the end of the piece)."""
    if i >= end or buf[i] == NL:
        return True
    return buf[i] == CR and (i + 1 >= end or buf[i + 1] == NL)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _digits(buf, i, end, cap):
    """(value of the first `cap` digits, number of digits, next index) of the digits at i."""
    v = np.int64(0)
    nd = 0
    while i < end:
        d = np.int64(buf[i]) - 48
        if d < 0 or d > 9:
            break
        if nd < cap:
            v = v * 10 + d
        nd += 1
        i += 1
    return v, nd, i


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _fast_number(buf, i, end):
    """`_number`, with a fast path for the common short integer ([-]digits, then a token
    end); anything else is read again by `_number`."""
    s = i
    neg = False
    if i < end and buf[i] == 45:
        neg = True
        i += 1
    v, nd, i = _digits(buf, i, end, 16)
    if 0 < nd <= 15 and _token_end(buf, i, end):
        return (-float(v) if neg else float(v)), i, True
    return _number(buf, s, end)


@njit(cache=True, nogil=True, _nrt=False)
def _result(buf, i, end):
    """(result, next index, ok): 1-0, 0-1, 1/2-1/2 or a number in [0, 1]."""
    if i + 3 <= end and _token_end(buf, i + 3, end):
        if buf[i] == 49 and buf[i + 1] == 45 and buf[i + 2] == 48:
            return 1.0, i + 3, True
        if buf[i] == 48 and buf[i + 1] == 45 and buf[i + 2] == 49:
            return 0.0, i + 3, True
    if i + 7 <= end and _token_end(buf, i + 7, end) and buf[i] == 49 and buf[i + 1] == 47 \
            and buf[i + 2] == 50 and buf[i + 3] == 45 and buf[i + 4] == 49 \
            and buf[i + 5] == 47 and buf[i + 6] == 50:
        return 0.5, i + 7, True
    v, i2, ok = _fast_number(buf, i, end)
    if not ok or not _token_end(buf, i2, end) or v < 0.0 or v > 1.0:
        return 0.0, i2, False
    return v, i2, True


@njit(cache=True, nogil=True, _nrt=False)
def _parse_line(buf, i, end, n_terms, j, k, head, offsets, idx, coef, aux):
    """Parse the position line at i (up to its line end) into head[f][j] (the six numbers),
    idx/coef from k and offsets[j + 1]; returns (error code, next byte after the line's
    content); aux[0] the field or index an error is about."""
    v, i, ok = _result(buf, i, end)
    if not ok:
        return E_RESULT, i
    head[0][j] = v
    for f in range(1, 6):
        i = _skip_ws(buf, i, end)
        if _line_end(buf, i, end) or buf[i] == BAR:
            aux[0] = f
            return E_FIELDS, i
        v, i, ok = _fast_number(buf, i, end)
        if not ok or not _token_end(buf, i, end):
            aux[0] = f
            return E_NUMBER, i
        if f == 1 and (v < 0.0 or v > 1.0):
            return E_PHASE, i
        head[f][j] = v
    i = _skip_ws(buf, i, end)
    if _line_end(buf, i, end) or buf[i] != BAR or not _token_end(buf, i + 1, end):
        return E_BAR, i
    i = _skip_ws(buf, i + 1, end)
    while not _line_end(buf, i, end):
        t, nd, i = _digits(buf, i, end, 10)
        if nd == 0 or i >= end or buf[i] != COLON:
            return E_PAIR, i
        if nd >= 10 or t >= n_terms:
            aux[0] = t if nd < 10 else -1
            return E_INDEX, i
        c, i, ok = _fast_number(buf, i + 1, end)
        if not ok or not _token_end(buf, i, end):
            return E_PAIR, i
        idx[k] = t
        coef[k] = c
        k += 1
        i = _skip_ws(buf, i, end)
    offsets[j + 1] = k
    return E_OK, i


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _after_line(buf, i, end):
    """The start of the next line (past the newline at or after i)."""
    while i < end and buf[i] != NL:
        i += 1
    return i + 1


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _line_bounds(buf, i, end):
    """(content start, content end, next line start) of the line at i."""
    le = i
    while le < end and buf[le] != NL:
        le += 1
    e2 = le
    if e2 > i and buf[e2 - 1] == CR:
        e2 -= 1
    return _skip_ws(buf, i, e2), e2, le + 1


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _zero_bytes(x):
    """How many of the 8 bytes of x are 0 (exact: no borrow between bytes)."""
    low7 = np.uint64(0x7F7F7F7F7F7F7F7F)
    y = ~(((x & low7) + low7) | x | low7)  # the high bit of each zero byte
    return ((y >> np.uint64(7)) * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, parallel=True)
def _count_kernel(buf, words, starts, ends, lines, pairs):
    """Per piece: physical lines and colons, bounds of its position lines and INDEX:COEF
    pairs (8 bytes at a time through `words`, buf seen as uint64; comment and blank lines are
    found by the parser)."""
    nl_bytes = np.uint64(0x0A0A0A0A0A0A0A0A)
    colon_bytes = np.uint64(0x3A3A3A3A3A3A3A3A)
    for p in prange(starts.shape[0]):
        i = starts[p]
        end = ends[p]
        nl = 0
        nc = 0
        while i < end and i % 8:
            nl += np.int64(buf[i] == NL)
            nc += np.int64(buf[i] == COLON)
            i += 1
        a = np.uint64(0)
        c = np.uint64(0)
        for w in range(i // 8, end // 8):
            x = words[w]
            a += _zero_bytes(x ^ nl_bytes)
            c += _zero_bytes(x ^ colon_bytes)
        nl += np.int64(a)
        nc += np.int64(c)
        for y in range(max(i, end // 8 * 8), end):
            nl += np.int64(buf[y] == NL)
            nc += np.int64(buf[y] == COLON)
        if end > starts[p] and buf[end - 1] != NL:
            nl += 1  # a last line without its newline
        lines[p] = nl
        pairs[p] = nc


@njit(cache=True, parallel=True)
def _parse_kernel(buf, starts, ends, pos_base, pair_base, n_terms, results, phase, mg_scale,
                  eg_scale, fixed, evals, offsets, idx, coef, n_pos, n_pairs, err_code,
                  err_line, err_aux):
    """Parse each piece in one pass from its bases (a position's offsets[j + 1] is the global
    end of its pairs); n_pos, n_pairs: what it held (at most the bounds)."""
    for p in prange(starts.shape[0]):
        head = (results, phase, mg_scale, eg_scale, fixed, evals)
        i = starts[p]
        end = ends[p]
        j = pos_base[p]
        k = pair_base[p]
        line = 0
        aux = np.zeros(1, dtype=np.int64)
        while i < end:
            a = _skip_ws(buf, i, end)
            if _line_end(buf, a, end) or buf[a] == HASH:
                i = _after_line(buf, a, end)
            else:
                code, i = _parse_line(buf, a, end, n_terms, j, k, head, offsets, idx, coef,
                                      aux)
                if code != E_OK:
                    err_code[p] = code
                    err_line[p] = line
                    err_aux[p] = aux[0]
                    break
                k = offsets[j + 1]
                j += 1
                i = _after_line(buf, i, end)
            line += 1
        n_pos[p] = j - pos_base[p]
        n_pairs[p] = k - pair_base[p]


@njit(cache=True, nogil=True, _nrt=False)
def _next_line_start(buf, x, end):
    while x < end and buf[x - 1] != NL:
        x += 1
    return x


@njit(cache=True, nogil=True, _nrt=False)
def _position_line(buf, start, end, target):
    """The physical line (0-based, from start) of position line `target`, or -1."""
    i = start
    line = 0
    n = 0
    while i < end:
        a, e2, nxt = _line_bounds(buf, i, end)
        if a < e2 and buf[a] != HASH:
            if n == target:
                return line
            n += 1
        line += 1
        i = nxt
    return -1


# ---------------------------------------------------------------------------
# The trace


@dataclass
class Trace:
    """A parsed trace: its terms (names, start values, tapered or not), the results and the
    engine's evaluations, and the positions as a `tuner.texel.sparse.LinearSet` over the weights
    (a tapered term has an opening and an endgame weight, a one-value term one)."""

    path: str
    names: list
    tapered: np.ndarray  # bool [terms]
    start_mg: np.ndarray  # float64 [terms]
    start_eg: np.ndarray  # float64 [terms] (= start_mg for a one-value term)
    results: np.ndarray  # float64 [n]
    evals: np.ndarray  # float64 [n]
    linear: LinearSet
    header_lines: int  # lines before the first position line

    def __len__(self):
        return len(self.results)

    def __repr__(self):
        return (f"Trace({self.path!r}, {len(self)} positions, {len(self.names)} terms, "
                f"{len(self.linear.idx)} coefficients)")

    @property
    def n_weights(self):
        return self.linear.n_weights

    def labels(self) -> list:
        """Weight names: 'NAME.mg' and 'NAME.eg' of a tapered term, 'NAME' of a one-value one."""
        out = [""] * self.n_weights
        for t, name in enumerate(self.names):
            if self.tapered[t]:
                out[self.linear.mg_of[t]] = f"{name}.mg"
                out[self.linear.eg_of[t]] = f"{name}.eg"
            else:
                out[self.linear.mg_of[t]] = name
        return out

    def start_weights(self) -> np.ndarray:
        """The weight vector of the trace's start values (float64)."""
        W = np.zeros(self.n_weights)
        W[self.linear.mg_of] = self.start_mg
        W[self.linear.eg_of] = self.start_eg
        return W

    def scores(self, W) -> np.ndarray:
        """The model's white-view scores under weights W (float64)."""
        return linear_scores(W, self.linear)

    def line_of(self, j) -> int:
        """The 1-based line number of position j in the trace file."""
        buf = _map(self.path)
        start = _positions_offset(self.path)
        line = _position_line(buf, start, len(buf), int(j))
        return self.header_lines + line + 1

    def terms_text(self, W, as_float=False) -> str:
        """W in the trace's own `terms` form, one line a term (a params.txt)."""
        return format_terms(self.names, self.tapered, W[self.linear.mg_of],
                            W[self.linear.eg_of], as_float)


def _fmt(v, as_float=True) -> str:
    """An integer as one; else rounded to 6 decimals (params files) or, for a trace,
    the shortest decimal that reads back as the same float (`_exact`)."""
    if not as_float:
        return str(int(round(v)))
    v = float(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(round(v, 6))


def _exact(v) -> str:
    v = float(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def format_terms(names, tapered, mg, eg, as_float=False) -> str:
    """Term lines ``NAME OPENING ENDGAME`` / ``NAME VALUE`` (rounded unless as_float)."""
    lines = []
    for t, name in enumerate(names):
        if tapered[t]:
            lines.append(f"{name} {_fmt(mg[t], as_float)} {_fmt(eg[t], as_float)}")
        else:
            lines.append(f"{name} {_fmt(mg[t], as_float)}")
    return "\n".join(lines) + "\n"


def read_terms(path) -> dict:
    """A params file in `terms` form: {name: (opening, endgame)} (a one-value term twice);
    '#' comments and blank lines allowed. TraceError naming the file and line."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            tok = line.split()
            if not tok or tok[0].startswith("#"):
                continue
            name, vals = _term_line(tok, f"{path}:{n}")
            if name in out:
                raise TraceError(f"{path}:{n}: term {name!r} given twice")
            out[name] = (vals[0], vals[-1])
    return out


def _term_line(tok, where):
    if len(tok) not in (2, 3):
        raise TraceError(f"{where}: a term line is 'NAME VALUE' or 'NAME OPENING ENDGAME', "
                         f"got {' '.join(tok)!r}")
    try:
        vals = [float(x) for x in tok[1:]]
    except ValueError:
        raise TraceError(f"{where}: term {tok[0]!r}: values must be numbers, got "
                         f"{' '.join(tok[1:])!r}") from None
    if not all(math.isfinite(v) for v in vals):
        raise TraceError(f"{where}: term {tok[0]!r}: values must be finite")
    return tok[0], vals


# ---------------------------------------------------------------------------
# Reading


def _map(path):
    if os.path.getsize(path) == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.memmap(path, dtype=np.uint8, mode="r")


def _read_header(path):
    """(names, tapered, mg, eg, header_lines, byte offset of the position lines)."""
    names, mg, eg, tapered = [], [], [], []
    n_terms = None
    offset = 0
    seen = set()
    with open(path, "rb") as f:
        first = f.readline()
        offset += len(first)
        head = first.decode("utf-8", "replace").split()
        if len(head) < 2 or " ".join(head[:2]) != MAGIC:
            raise TraceError(f"{path}:1: not a trace: the first line must be "
                             f"'{MAGIC} {VERSION}'")
        if len(head) != 3 or head[2] != str(VERSION):
            raise TraceError(f"{path}:1: trace version {' '.join(head[2:]) or '?'} is not "
                             f"supported (this reader knows version {VERSION})")
        lineno = 1
        for raw in f:
            lineno += 1
            offset += len(raw)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise TraceError(f"{path}:{lineno}: not UTF-8 text") from None
            tok = line.split()
            if not tok or tok[0].startswith("#"):
                continue
            where = f"{path}:{lineno}"
            if n_terms is None:
                if tok[0] != "terms" or len(tok) != 2 or not tok[1].isdigit():
                    raise TraceError(f"{where}: expected 'terms T' (the number of terms), got "
                                     f"{line.strip()[:60]!r}")
                n_terms = int(tok[1])
                continue
            if tok == ["positions"]:
                if len(names) != n_terms:
                    raise TraceError(f"{where}: 'terms {n_terms}' but {len(names)} term "
                                     f"line{'s' if len(names) != 1 else ''} before "
                                     f"'positions'")
                return names, np.array(tapered, bool), np.array(mg), np.array(eg), lineno, \
                    offset
            if len(names) == n_terms:
                raise TraceError(f"{where}: 'terms {n_terms}' but more term lines (expected "
                                 f"'positions' after {n_terms})")
            name, vals = _term_line(tok, where)
            if name in seen:
                raise TraceError(f"{where}: term {name!r} given twice")
            seen.add(name)
            names.append(name)
            tapered.append(len(vals) == 2)
            mg.append(vals[0])
            eg.append(vals[-1])
    what = "'terms T'" if n_terms is None else "'positions'"
    raise TraceError(f"{path}:{lineno}: the file ends before {what}")


def _positions_offset(path):
    return _read_header(path)[5]


def _cache_key(path):
    st = os.stat(path)
    h = hashlib.sha1()
    h.update(f"{CACHE_VERSION}|{st.st_size}|{st.st_mtime_ns}".encode())
    with open(path, "rb") as f:  # the ends guard against a same-size rewrite
        h.update(f.read(1 << 20))
        if st.st_size > 1 << 20:
            f.seek(max(1 << 20, st.st_size - (1 << 20)))
            h.update(f.read())
    return h.hexdigest()


@contextlib.contextmanager
def _small_pages():
    """numpy allocating without asking for transparent huge pages (madvise), for the parsed
    arrays: faulting in huge pages cost five times the system time of small ones on the
    project's virtual machines (10 M lines: 5 s against 1 s)."""
    core = getattr(np, "_core", None) or np.core
    setter = getattr(core.multiarray, "_set_madvise_hugepage", None)
    if setter is None:
        yield
        return
    before = setter(False)
    try:
        yield
    finally:
        setter(before)


def _pieces(buf, start, n_pieces):
    """Byte ranges of about equal size, cut at line starts."""
    end = len(buf)
    cuts = [start]
    for p in range(1, n_pieces):
        x = start + (end - start) * p // n_pieces
        x = max(x, cuts[-1])
        x = int(_next_line_start(buf, max(x, 1), end)) if x < end else end
        cuts.append(x)
    cuts.append(end)
    return np.array(cuts[:-1], dtype=np.int64), np.array(cuts[1:], dtype=np.int64)


def _parse_positions(path, buf, start, n_terms, header_lines):
    """The position lines as (results, phase, mg_scale, eg_scale, fixed, evals, offsets, idx,
    coef): one counting pass for the bounds of each piece, then one parsing pass straight into
    the final arrays (nothing zero-filled; int16 term indices where they fit)."""
    from tuner.texel import set_threads

    threads = set_threads()
    n_pieces = max(1, min(16 * threads, (len(buf) - start) // (1 << 20)))
    starts, ends = _pieces(buf, start, n_pieces)
    P = len(starts)
    lines = np.zeros(P, dtype=np.int64)
    pairs = np.zeros(P, dtype=np.int64)
    _count_kernel(buf, buf[:len(buf) // 8 * 8].view(np.uint64), starts, ends, lines, pairs)
    pos_base = np.concatenate([[0], np.cumsum(lines)]).astype(np.int64)
    pair_base = np.concatenate([[0], np.cumsum(pairs)]).astype(np.int64)
    n, nnz = int(pos_base[-1]), int(pair_base[-1])
    with _small_pages():
        head = [np.empty(n, dtype=np.float64) for _ in FIELDS]
        offsets = np.empty(n + 1, dtype=np.int64)
        idx = np.empty(nnz, dtype=np.int16 if n_terms <= np.iinfo(np.int16).max else np.int32)
        coef = np.empty(nnz, dtype=np.float32)
    offsets[0] = 0
    n_pos, n_pairs, err_code, err_line, err_aux = (np.zeros(P, dtype=np.int64)
                                                   for _ in range(5))
    _parse_kernel(buf, starts, ends, pos_base, pair_base, np.int64(n_terms), *head, offsets,
                  idx, coef, n_pos, n_pairs, err_code, err_line, err_aux)
    bad = np.flatnonzero(err_code)
    if len(bad):
        p = int(bad[0])
        lineno = header_lines + int(lines[:p].sum()) + int(err_line[p]) + 1
        raise TraceError(f"{path}:{lineno}: {_why(int(err_code[p]), int(err_aux[p]), n_terms)}"
                         f": {_line_text(path, lineno)!r}")
    if not (np.array_equal(n_pos, lines) and np.array_equal(n_pairs, pairs)):
        # comment or blank lines (or colons in them): close the gaps between the pieces
        keep = np.concatenate([np.arange(b, b + c) for b, c in zip(pos_base[:-1], n_pos,
                                                                    strict=True)])
        first = np.zeros(n + 1, dtype=bool)
        first[pos_base[:-1]] = True  # a piece's first position starts at its pair base
        begin = np.where(first[:-1], np.repeat(pair_base[:-1], lines), offsets[:-1])
        lens = offsets[1:][keep] - begin[keep]
        head = [h[keep] for h in head]
        offsets = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        keep = np.concatenate([np.arange(b, b + c) for b, c in zip(pair_base[:-1], n_pairs,
                                                                    strict=True)])
        idx, coef = idx[keep], coef[keep]
    if len(offsets) == 1:
        raise TraceError(f"{path}:{header_lines}: no position lines after 'positions'")
    return (*head, offsets, idx, coef)


def _why(code, aux, n_terms):
    if code == E_RESULT:
        return "bad RESULT (1.0, 0.5, 0.0, 1-0, 1/2-1/2, 0-1 or a number in [0, 1])"
    if code == E_PHASE:
        return "PHASE must be in [0, 1] (1 = all opening)"
    if code == E_NUMBER:
        return f"{FIELDS[aux]} is not a number"
    if code == E_FIELDS:
        return (f"{len(FIELDS)} numbers expected before '|' (RESULT PHASE MG_SCALE EG_SCALE "
                f"FIXED EVAL), got {aux}")
    if code == E_BAR:
        return "missing '|' between EVAL and the INDEX:COEF terms"
    if code == E_INDEX:
        shown = str(aux) if aux >= 0 else "too large"
        return f"term index {shown} out of range (the trace has {n_terms} terms: 0..{n_terms - 1})"
    return "bad INDEX:COEF pair (an integer index, ':', a number)"


def _line_text(path, lineno, width=80):
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if n == lineno:
                return raw.decode("utf-8", "replace").strip()[:width]
    return ""


CACHED = (*(f.lower() for f in FIELDS), "offsets", "idx", "coef")


def read_trace(path, use_cache=True) -> Trace:
    """Parse a trace file (through its binary cache when fresh); TraceError naming the file
    and line of the first problem."""
    path = str(path)
    names, tapered, mg, eg, header_lines, start = _read_header(path)
    mg_of, eg_of, n_weights = weight_layout(tapered)
    cache = path + CACHE_SUFFIX
    key = _cache_key(path)
    arrays = None
    if use_cache and os.path.exists(cache):
        try:
            with _small_pages(), np.load(cache) as z:
                if str(z["key"]) == key:
                    arrays = tuple(z[name] for name in CACHED)
        except (OSError, ValueError, KeyError):
            arrays = None  # a broken cache: parse again
    if arrays is None:
        buf = _map(path)
        arrays = _parse_positions(path, buf, start, len(names), header_lines)
        del buf
        if use_cache:
            _write_cache(cache, key, arrays)
    results, phase, mg_scale, eg_scale, fixed, evals, offsets, idx, coef = arrays
    ls = LinearSet(offsets, idx, coef, phase, mg_scale, eg_scale, fixed, mg_of, eg_of,
                   n_weights)
    return Trace(path, names, tapered, mg, eg, results, evals, ls, header_lines)


def _write_cache(cache, key, arrays):
    """Save the parsed arrays beside the trace; a directory we cannot write is no error."""
    try:
        with replacing(cache, ".npz") as tmp:
            np.savez(tmp, key=np.array(key), **dict(zip(CACHED, arrays, strict=True)))
    except OSError:
        try:
            os.remove(tmp)
        except OSError:
            pass


# ---------------------------------------------------------------------------
# The check: do the start values reproduce the engine's evaluation?


@dataclass
class Check:
    """How many positions the model with the start values misses EVAL on by more than
    `tolerance`, and the first of them (index, line, model, eval)."""

    n: int
    bad: int
    first: int = -1
    line: int = 0
    model: float = 0.0
    eval: float = 0.0
    max_fraction: float = 0.001

    @property
    def ok(self):
        return self.bad <= self.max_fraction * self.n

    def message(self, path) -> str:
        if not self.bad:
            return f"check: the start values reproduce EVAL on all {self.n} positions"
        return (f"{path}:{self.line}: the model with the start values gives {self.model:.2f}, "
                f"EVAL is {self.eval:g} ({self.bad} of {self.n} positions, "
                f"{100.0 * self.bad / self.n:.2f} %, differ by more than 1 cp: a term missing "
                f"from the trace, or a wrong start value, phase or scale?)")


def check_trace(trace, tolerance=1.0, max_fraction=0.001) -> Check:
    """Compare the model with the start values to EVAL on every position (1 cp: rounding)."""
    q = trace.scores(trace.start_weights())
    off = np.abs(q - trace.evals) > tolerance + 1e-6
    bad = int(off.sum())
    if not bad:
        return Check(len(trace), 0, max_fraction=max_fraction)
    j = int(np.argmax(off))
    return Check(len(trace), bad, j, trace.line_of(j), float(q[j]), float(trace.evals[j]),
                 max_fraction)


# ---------------------------------------------------------------------------
# Writing


class TraceWriter:
    """Writes a version 1 trace: the terms, then one `position` call a position.

    >>> with TraceWriter("my.trace", [("pawn", 82, 94), ("bishop_pair", 30)]) as w:
    ...     w.position(1.0, {0: 1, 1: 1}, phase=0.75, eval=115)
    """

    def __init__(self, path, terms):
        self.terms = [tuple(t) for t in terms]
        for t in self.terms:
            if len(t) not in (2, 3) or not str(t[0]) or any(c.isspace() for c in str(t[0])):
                raise ValueError(f"a term is (name, value) or (name, opening, endgame) with a "
                                 f"name without spaces, got {t!r}")
        self.n_terms = len(self.terms)
        self.path = str(path)
        self.count = 0
        self._f = open(self.path, "w", encoding="utf-8")
        self._f.write(f"{MAGIC} {VERSION}\nterms {self.n_terms}\n")
        for t in self.terms:
            self._f.write(" ".join([str(t[0])] + [_exact(v) for v in t[1:]]) + "\n")
        self._f.write("positions\n")

    def __repr__(self):
        return f"TraceWriter({self.path!r}, {self.n_terms} terms, {self.count} positions)"

    def position(self, result, coefs, phase=1.0, mg_scale=1.0, eg_scale=1.0, fixed=0.0,
                 eval=0.0):
        """One position: white's result (1, 0.5, 0), the coefficients ({index: coef}, pairs
        or a dense sequence; zeros are left out), phase (1 = all opening), the scales, the
        fixed part and the engine's evaluation (centipawns, white's view)."""
        if not 0.0 <= float(result) <= 1.0:
            raise ValueError(f"result {result!r} is not in [0, 1]")
        if not 0.0 <= float(phase) <= 1.0:
            raise ValueError(f"phase {phase!r} is not in [0, 1]")
        if isinstance(coefs, dict):
            items = coefs.items()
        else:
            arr = list(coefs)
            items = arr if arr and isinstance(arr[0], tuple) else enumerate(arr)
        parts = []
        for i, c in items:
            if c == 0:
                continue
            i = int(i)
            if not 0 <= i < self.n_terms:
                raise ValueError(f"term index {i} out of range (0..{self.n_terms - 1})")
            parts.append(f"{i}:{_exact(c)}")
        self._f.write(f"{_exact(result)} {_exact(phase)} {_exact(mg_scale)} "
                      f"{_exact(eg_scale)} {_exact(fixed)} {_exact(eval)} | "
                      f"{' '.join(parts)}\n")
        self.count += 1

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def write_linear(path, terms, ls, results, evals, progress=False) -> int:
    """Write positions held as a `tuner.texel.sparse.LinearSet` (its layout: `weight_layout` of the
    terms) as a trace: `terms` as `TraceWriter` takes them, results and EVALs per position.
    How an engine with its own batch tracer (Wasp-Py's `tuner.texel.sparse.wasp_linear`) hands its
    positions to `wasp-tune trace`. Returns the number of positions."""
    n = len(ls)
    if len(results) != n or len(evals) != n:
        raise ValueError(f"{n} positions but {len(results)} results and {len(evals)} EVALs")
    it = range(n)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, desc="trace", unit="pos", mininterval=1.0)
    with TraceWriter(path, terms) as w:
        if ls.n_weights != weight_layout([len(t) == 3 for t in w.terms])[2]:
            raise ValueError("the terms do not match the positions' weight layout")
        for j in it:
            lo, hi = ls.offsets[j], ls.offsets[j + 1]
            w.position(results[j], list(zip(ls.idx[lo:hi].tolist(), ls.coef[lo:hi].tolist(),
                                            strict=True)),
                       ls.phase[j], ls.mg_scale[j], ls.eg_scale[j], ls.fixed[j], evals[j])
        return w.count


# ---------------------------------------------------------------------------
# Python engines: a trace from a function of a chess.Board


@dataclass
class BoardTerms:
    """What an evaluation function returns for one board: the term coefficients (white's
    count minus black's: {index: coef} or a dense list), phase (1 = all opening), the scale
    factors and the fixed part (centipawns, white's view)."""

    coefs: object
    phase: float = 1.0
    mg_scale: float = 1.0
    eg_scale: float = 1.0
    fixed: float = 0.0


def labelled_boards(path):
    """(chess.Board, white's result) of each line of an EPD file of labelled positions (the
    result forms `wasp.epd.result_in` reads)."""
    import chess

    from wasp.epd import numbered_lines, parse_line

    for n, line in numbered_lines(path):
        try:
            epd = parse_line(line)
        except ValueError:
            epd = None
        result = None if epd is None else epd.result()
        if result is None:
            raise TraceError(f"{path}:{n}: expected a FEN and a result")
        try:
            board = chess.Board(epd.position + " 0 1")
        except ValueError as e:
            raise TraceError(f"{path}:{n}: {e}") from None
        yield board, result


def write_board_trace(path, terms, positions, features, evaluate=None, progress=False) -> int:
    """Write a trace of `positions` ((board, result) pairs, e.g. `labelled_boards`) where
    `features(board)` gives a `BoardTerms` and `evaluate(board)` the engine's own evaluation
    (centipawns, white's view). Without `evaluate`, EVAL is the model with the terms' values,
    rounded, and the trace check can then find nothing. Returns the number of positions."""
    names_vals = [tuple(t) for t in terms]
    tapered = [len(t) == 3 for t in names_vals]
    mg_of, eg_of, n_weights = weight_layout(tapered)
    W = np.zeros(n_weights)
    for t, tv in enumerate(names_vals):
        W[mg_of[t]] = tv[1]
        W[eg_of[t]] = tv[-1]
    it = positions
    if progress:
        from tqdm import tqdm

        it = tqdm(positions, desc="trace", unit="pos")
    with TraceWriter(path, names_vals) as w:
        for board, result in it:
            bt = features(board)
            coefs = bt.coefs if isinstance(bt.coefs, dict) else dict(enumerate(bt.coefs))
            if evaluate is not None:
                ev = evaluate(board)
            else:
                mg = sum(c * W[mg_of[i]] for i, c in coefs.items())
                eg = sum(c * W[eg_of[i]] for i, c in coefs.items())
                ev = round(bt.phase * bt.mg_scale * mg + (1 - bt.phase) * bt.eg_scale * eg
                           + bt.fixed)
            w.position(result, coefs, bt.phase, bt.mg_scale, bt.eg_scale, bt.fixed, ev)
        return w.count
