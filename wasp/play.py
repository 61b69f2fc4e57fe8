"""`wasp play`: a game against the engine in the terminal, moves in SAN.

Type moves as you would write them (`e4`, `Nxe4`, `Rdf8`, `Qh4xe1`, `exd6e.p.`, `e8Q`,
`O-O` or `0-0`); `undo` takes back your last move, `hint` asks the engine, `board`
redraws, `q` resigns. The game is saved as PGN when it ends. The engine is a
`wasp.engine.Engine`, so its options (a book, EvalFile, SearchFile, Hash, any search
parameter) are the UCI engine's.
"""

import datetime
import random
import sys

from wasp.board import IllegalMoveError, Position
from wasp.engine import Engine, score_white
from wasp.fen import STARTING_FEN
from wasp.pgn import pgn_text
from wasp.san import line_to_san, parse_san, to_san
from wasp.types import EMPTY, MAILBOX, PIECE_CHARS, WHITE

HELP = ("moves in SAN (e4, Nf3, exd5, O-O, e8=Q) or UCI (e2e4); "
        "undo, hint, board, help, q (resign)")


def draw_board(position: Position, flipped: bool) -> str:
    """The board as text, from white's side or (flipped) black's."""
    ranks = range(8) if flipped else range(7, -1, -1)
    files = range(7, -1, -1) if flipped else range(8)
    rows = []
    for r in ranks:
        cells = []
        for f in files:
            p = int(position.S.st[MAILBOX + r * 8 + f])
            cells.append("." if p == EMPTY else PIECE_CHARS[p])
        rows.append(f" {r + 1}  " + " ".join(cells))
    rows.append("    " + " ".join("abcdefgh"[f] for f in files))
    return "\n".join(rows)


class TerminalGame:
    """One game; input and output are injectable for tests."""

    def __init__(self, side="w", seconds=5.0, fen=STARTING_FEN, book=None, pgn_path=None,
                 read=input, write=print, rng=None, engine=None, depth=None):
        rng = rng or random.Random()
        if side == "r":
            side = rng.choice("wb")
        self.human = WHITE if side == "w" else 1 - WHITE
        self.seconds = seconds
        self.depth = depth  # a fixed depth instead of the time per move
        self.last_report = ""  # what the engine said about its last move
        self.start_fen = fen
        self.position = Position(fen)
        self.codes: list[int] = []
        self.read, self.write = read, write
        self.engine = engine or Engine()
        if book is not None:
            self.engine.book, self.engine.own_book = book, True
        self.rng = rng
        self.pgn_path = pgn_path or datetime.datetime.now().strftime("wasp-game-%Y%m%d-%H%M%S.pgn")

    def engine_move(self, seconds) -> int:
        """The engine's move in the current position: from the book, else a search (to
        `self.depth`, or for `seconds`); `last_report` says how it was found."""
        engine = self.engine
        engine.set_position(self.start_fen, [self.position.uci(c) for c in self.codes])
        choice = engine.book_move(self.rng)
        self.last_report = "book"
        if choice is None:
            answer = []
            limit = {"depth": self.depth} if self.depth else {"movetime": int(seconds * 1000)}
            engine.go(**limit, use_book=False,
                      on_done=lambda best, ponder, result: answer.append((best, result)))
            engine.wait()
            choice, result = answer[0]
            if result is not None:
                self.last_report = (f"depth {result.depth}, "
                                    f"{score_white(result.score, self.position.turn)}, "
                                    f"{result.nodes} nodes")
        return self.position.parse_uci(choice)

    def show(self):
        self.write(draw_board(self.position, flipped=self.human != WHITE))

    def play(self) -> str:
        colour = "White" if self.human == WHITE else "Black"
        self.write(f"You play {colour}. {HELP}")
        self.show()
        result, reason = "*", "unfinished"
        while True:
            over = self.position.game_over()
            if over:
                result, reason = over
                break
            if self.position.turn == self.human:
                try:
                    text = self.read("your move: ").strip()
                except EOFError:
                    result, reason = ("0-1" if self.human == WHITE else "1-0"), "input closed"
                    break
                if text in ("q", "quit", "resign"):
                    result = "0-1" if self.human == WHITE else "1-0"
                    reason = f"{colour} resigns"
                    break
                if text in ("help", "?"):
                    self.write(HELP)
                    continue
                if text == "board":
                    self.show()
                    continue
                if text == "undo":
                    self.undo()
                    continue
                if text == "hint":
                    code = self.engine_move(min(self.seconds, 1.0))
                    self.write(f"hint: {to_san(self.position, code)}")
                    continue
                try:
                    code = parse_san(self.position, text)
                except IllegalMoveError as e:
                    self.write(f"illegal move: {e}")
                    continue
                self.push(code)
            else:
                code = self.engine_move(self.seconds)
                self.write(f"wasp plays {to_san(self.position, code)}  ({self.last_report})")
                self.push(code)
                self.show()
        self.write(f"Game over: {reason} ({result})")
        self.save(result, reason)
        return result

    def push(self, code):
        self.position.push(code)
        self.codes.append(code)

    def undo(self):
        """Take back the engine's reply and the human's move before it."""
        start_turn = Position(self.start_fen).turn
        movers = [(start_turn + i) % 2 for i in range(len(self.codes))]
        if self.human not in movers:
            self.write("nothing to undo")
            return
        while True:
            self.position.pop()
            self.codes.pop()
            if movers.pop() == self.human:
                break
        self.show()

    def save(self, result, reason):
        human, engine = "You", "Wasp-Py"
        white, black = (human, engine) if self.human == WHITE else (engine, human)
        headers = {"Event": "Wasp-Py terminal game", "Site": "?",
                   "Date": datetime.date.today().strftime("%Y.%m.%d"), "Round": "1",
                   "White": white, "Black": black, "Result": result, "Termination": reason}
        sans = line_to_san(Position(self.start_fen), self.codes)
        try:
            with open(self.pgn_path, "w", encoding="utf-8") as f:
                f.write(pgn_text(self.start_fen, sans, headers))
            self.write(f"game saved to {self.pgn_path}")
        except OSError as e:
            self.write(f"could not save the game: {e}")


def main(args) -> int:
    """`wasp play`: the engine configured from the command line (see `wasp.cli`)."""
    engine = Engine()
    try:
        engine.configure(args.engine_settings)
        game = TerminalGame(args.side, args.time, args.fen or STARTING_FEN, pgn_path=args.pgn,
                            engine=engine, depth=args.depth)
    except ValueError as e:
        print(f"wasp play: error: {e}", file=sys.stderr)
        return 1
    game.play()
    return 0
