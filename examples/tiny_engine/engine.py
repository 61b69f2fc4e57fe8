"""Tiny: a small UCI chess engine whose linear tapered evaluation is tuned through a trace.

Not Wasp-Py: a short alpha-beta (iterative deepening, captures-only quiescence, MVV-LVA order)
over python-chess, with an evaluation of material, a few piece-square terms (centralisation,
pawn advance) and mobility, each with an opening and an endgame value, a bishop pair and a
tempo term. `features(board)` gives the terms' counts; `evaluate` is the engine's integer
evaluation of them, and `write_trace.py` writes both into a `wasp-tune trace` file.

    python examples/tiny_engine/engine.py [--params FILE]     # speaks UCI on stdin/stdout
    setoption name EvalFile value runs/tiny/params.txt         # load tuned values
"""

import argparse
import os
import sys
import time

import chess

HERE = os.path.dirname(os.path.abspath(__file__))
START_PARAMS = os.path.join(HERE, "start.txt")

PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
CENTRE_PIECES = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
MOBILE_PIECES = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
PHASE_WEIGHT = {chess.KNIGHT: 1, chess.BISHOP: 1, chess.ROOK: 2, chess.QUEEN: 4}
MAX_PHASE = 24

# The terms, in the order of the trace: (name, tapered)
TERMS = ([(chess.piece_name(p), True) for p in PIECES]
         + [(f"{chess.piece_name(p)}_centre", True) for p in CENTRE_PIECES]
         + [("pawn_advance", True)]
         + [(f"{chess.piece_name(p)}_mobility", True) for p in MOBILE_PIECES]
         + [("bishop_pair", False), ("tempo", False)])
INDEX = {name: i for i, (name, _) in enumerate(TERMS)}
MATE = 30000
INF = 32000


def centrality(sq) -> int:
    """-3 in a corner to +3 on the four centre squares."""
    f, r = chess.square_file(sq), chess.square_rank(sq)
    return min(f, 7 - f) + min(r, 7 - r) - 3


def load_params(path):
    """[(opening, endgame)] per term from a file of 'NAME OPENING ENDGAME' / 'NAME VALUE'
    lines (the `wasp-tune trace` params.txt form); every term must be given once."""
    values = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            tok = line.split()
            if not tok or tok[0].startswith("#"):
                continue
            if tok[0] not in INDEX or len(tok) not in (2, 3):
                raise ValueError(f"{path}:{n}: expected a term of Tiny and its value(s): "
                                 f"{line.strip()!r}")
            v = [int(round(float(x))) for x in tok[1:]]
            values[tok[0]] = (v[0], v[-1])
    missing = [name for name, _ in TERMS if name not in values]
    if missing:
        raise ValueError(f"{path}: no value for {', '.join(missing)}")
    return [values[name] for name, _ in TERMS]


def phase_of(board) -> int:
    """0 (bare kings and pawns) .. 24 (all pieces): the opening's share in 24ths."""
    ph = sum(w * len(board.pieces(p, c)) for p, w in PHASE_WEIGHT.items() for c in chess.COLORS)
    return min(MAX_PHASE, ph)


def features(board):
    """The term counts of a board, white's minus black's ({index: count}), and its phase."""
    c = [0] * len(TERMS)
    for colour, sign in ((chess.WHITE, 1), (chess.BLACK, -1)):
        own = board.occupied_co[colour]
        for i, p in enumerate(PIECES):
            c[i] += sign * len(board.pieces(p, colour))
        for p in CENTRE_PIECES:
            c[INDEX[f"{chess.piece_name(p)}_centre"]] += sign * sum(
                centrality(sq) for sq in board.pieces(p, colour))
        adv = INDEX["pawn_advance"]
        for sq in board.pieces(chess.PAWN, colour):
            r = chess.square_rank(sq)
            c[adv] += sign * ((r - 1) if colour == chess.WHITE else (6 - r))
        for p in MOBILE_PIECES:
            mob = INDEX[f"{chess.piece_name(p)}_mobility"]
            for sq in board.pieces(p, colour):
                c[mob] += sign * chess.popcount(board.attacks_mask(sq) & ~own)
        if len(board.pieces(chess.BISHOP, colour)) >= 2:
            c[INDEX["bishop_pair"]] += sign
    c[INDEX["tempo"]] = 1 if board.turn == chess.WHITE else -1
    return {i: v for i, v in enumerate(c) if v}, phase_of(board)


def evaluate(board, params) -> int:
    """White's view, centipawns: (mg * phase + eg * (24 - phase)) // 24 in integers."""
    coefs, ph = features(board)
    mg = sum(v * params[i][0] for i, v in coefs.items())
    eg = sum(v * params[i][1] for i, v in coefs.items())
    return (mg * ph + eg * (MAX_PHASE - ph)) // MAX_PHASE


class Search:
    """Iterative deepening alpha-beta with a captures-only quiescence search."""

    def __init__(self, params):
        self.params = params
        self.nodes = 0
        self.max_nodes = 0
        self.deadline = 0.0
        self.stopped = False

    def _out_of_budget(self):
        if self.max_nodes and self.nodes >= self.max_nodes:
            return True
        return bool(self.deadline) and self.nodes % 256 == 0 and time.time() > self.deadline

    def _static(self, board):
        v = evaluate(board, self.params)
        return v if board.turn == chess.WHITE else -v

    @staticmethod
    def _order(board, moves):
        def key(m):
            if board.is_capture(m):
                victim = board.piece_type_at(m.to_square) or chess.PAWN
                return -(10 * victim - board.piece_type_at(m.from_square))
            return 0 if not m.promotion else -50
        return sorted(moves, key=key)

    def qsearch(self, board, alpha, beta):
        self.nodes += 1
        stand = self._static(board)
        if stand >= beta:
            return stand
        alpha = max(alpha, stand)
        for m in self._order(board, board.generate_legal_captures()):
            board.push(m)
            v = -self.qsearch(board, -beta, -alpha)
            board.pop()
            if v >= beta:
                return v
            alpha = max(alpha, v)
        return alpha

    def negamax(self, board, depth, alpha, beta, ply):
        if self._out_of_budget():
            self.stopped = True
            return 0
        if board.is_checkmate():
            return -MATE + ply
        if board.is_stalemate() or board.is_insufficient_material() or \
                board.can_claim_fifty_moves() or board.is_repetition(2):
            return 0
        if depth <= 0:
            return self.qsearch(board, alpha, beta)
        self.nodes += 1
        best = -INF
        for m in self._order(board, board.legal_moves):
            board.push(m)
            v = -self.negamax(board, depth - 1, -beta, -alpha, ply + 1)
            board.pop()
            if self.stopped:
                return 0
            if v > best:
                best = v
            if v > alpha:
                alpha = v
            if alpha >= beta:
                break
        return best

    def go(self, board, depth=64, nodes=0, movetime=0.0, info=print):
        """The best move found within the limits (a legal move even if stopped at once)."""
        self.nodes, self.max_nodes, self.stopped = 0, nodes, False
        self.deadline = time.time() + movetime if movetime else 0.0
        moves = list(board.legal_moves)
        best = moves[0] if moves else None
        for d in range(1, depth + 1):
            alpha, cur, cur_score = -INF, None, -INF
            ordered = [best] + [m for m in self._order(board, moves) if m != best]
            for m in ordered:
                board.push(m)
                v = -self.negamax(board, d - 1, -INF, -alpha, 1)
                board.pop()
                if self.stopped:
                    break
                if v > cur_score:
                    cur, cur_score, alpha = m, v, max(alpha, v)
            if self.stopped:
                break
            best = cur
            info(f"info depth {d} score cp {cur_score} nodes {self.nodes} pv {best.uci()}")
        return best


def uci_loop(params, inp=sys.stdin, out=sys.stdout):
    def say(text):
        out.write(text + "\n")
        out.flush()

    board = chess.Board()
    search = Search(params)
    for line in inp:
        tok = line.split()
        if not tok:
            continue
        cmd = tok[0]
        if cmd == "uci":
            say("id name Tiny")
            say("id author the Wasp-Py project")
            say("option name EvalFile type string default <start>")
            say("uciok")
        elif cmd == "isready":
            say("readyok")
        elif cmd == "setoption" and len(tok) >= 5 and tok[2] == "EvalFile":
            path = " ".join(tok[4:])
            try:
                search.params = load_params(START_PARAMS if path == "<start>" else path)
            except (OSError, ValueError) as e:
                say(f"info string EvalFile not loaded: {e}")
        elif cmd == "ucinewgame":
            board = chess.Board()
        elif cmd == "position":
            try:
                board = _position(tok)
            except ValueError as e:
                say(f"info string bad position: {e}")
        elif cmd == "go":
            lim = _limits(tok, board.turn)
            m = search.go(board, **lim, info=say)
            say(f"bestmove {m.uci() if m else '0000'}")
        elif cmd == "quit":
            break


def _position(tok):
    if len(tok) >= 2 and tok[1] == "startpos":
        board, rest = chess.Board(), tok[2:]
    elif len(tok) >= 8 and tok[1] == "fen":
        board, rest = chess.Board(" ".join(tok[2:8])), tok[8:]
    else:
        raise ValueError(" ".join(tok))
    if rest and rest[0] == "moves":
        for u in rest[1:]:
            board.push_uci(u)
    return board


def _limits(tok, turn):
    def num(key, default=0):
        try:
            return int(tok[tok.index(key) + 1]) if key in tok else default
        except (ValueError, IndexError):
            return default

    lim = {"depth": num("depth", 64), "nodes": num("nodes")}
    if "movetime" in tok:
        lim["movetime"] = num("movetime") / 1000.0
    elif "wtime" in tok or "btime" in tok:
        left = num("wtime" if turn == chess.WHITE else "btime", 1000)
        inc = num("winc" if turn == chess.WHITE else "binc")
        lim["movetime"] = max(0.01, (left / 30 + inc / 2) / 1000.0)
    if not any(k in tok for k in ("depth", "nodes", "movetime", "wtime", "btime")):
        lim["depth"] = 3
    return lim


def main(argv=None):
    ap = argparse.ArgumentParser(description="Tiny, a small UCI engine (examples/tiny_engine)")
    ap.add_argument("--params", default=START_PARAMS,
                    help="evaluation values in 'NAME OPENING ENDGAME' lines (default start.txt)")
    args = ap.parse_args(argv)
    try:
        params = load_params(args.params)
    except (OSError, ValueError) as e:
        print(f"tiny: error: {e}", file=sys.stderr)
        return 1
    uci_loop(params)
    return 0


if __name__ == "__main__":
    sys.exit(main())
