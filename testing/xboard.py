"""The xboard (CECP) driver: `XboardEngine` (features, ``ping`` syncs, ``level``/``st``/``sd``
clocks, edit mode for engines without ``setboard``, Chess960 castling as O-O) and the parser of
``feature`` lines (`parse_features`)."""

from __future__ import annotations

import time

import chess

from .driver import STOP_GRACE, Engine, EngineUnsupported, SearchResult
from .process import EngineCrashed, EngineError, EngineTimeout


class XboardEngine(Engine):
    protocol = "xboard"

    def __init__(self, cfg, logger=None, ponder=False, chess960=False):
        super().__init__(cfg, logger, ponder, chess960)
        self.features: dict[str, str] = {}
        self._board: chess.Board | None = None  # Chess960: the game, to write castling O-O
        self._known: list[str] = []  # moves the engine has been told or made
        self._playing = False  # False: engine in force mode
        self._ping = 0

    def _start(self) -> None:
        p = self._spawn()
        p.send("xboard\nprotover 2\n")
        self._awaiting = "`feature ... done=1` after `protover 2`"
        # Engines that speak protocol 1 never send `done`: give them 2 s.
        deadline = time.perf_counter() + 2.0
        try:
            while True:
                line = p.readline(deadline).decode(errors="replace")
                if line.startswith("feature "):
                    replies = []
                    for key, value in parse_features(line[8:]):
                        if key == "done":
                            if value == "0":
                                deadline = time.perf_counter() + self.cfg.startup
                            elif value == "1":
                                deadline = 0.0
                            continue
                        self.features[key] = value
                        ok = key not in ("san",) or value == "0"
                        replies.append(f"{'accepted' if ok else 'rejected'} {key}\n")
                        if key == "myname":
                            self.id_name = value
                    if replies:
                        p.send("".join(replies))
                    if deadline == 0.0:
                        break
        except EngineTimeout:
            pass
        if self.chess960 and "fischerandom" not in self.features.get("variants", "").split(","):
            raise EngineUnsupported(f"{self.name}: the engine's variants feature does not "
                                    f"list fischerandom: it cannot play -variant fischerandom")
        if self.chess960 and self.features.get("setboard") != "1":
            raise EngineUnsupported(f"{self.name}: the engine has no setboard feature: a "
                                    f"Chess960 position cannot be set up (edit mode has no "
                                    f"960 castling)")
        out = []
        for k, v in self.cfg.options.items():
            out.append(f"option {k}={v}\n")
        if out:
            p.send("".join(out))

    def set_options(self, options: dict[str, str]) -> None:
        if options:
            self.p.send("".join(f"option {k}={v}\n" for k, v in options.items()))
            self._sync()

    def _sync(self) -> None:
        if self.features.get("ping") == "1":
            self._ping += 1
            self.p.send(f"ping {self._ping}\n")
            want = f"pong {self._ping}".encode()
            self._awaiting = f"`pong {self._ping}` after `ping {self._ping}`"
            deadline = time.perf_counter() + self.cfg.startup
            while self.p.readline(deadline).strip() != want:
                pass

    def new_game(self, start_fen, white) -> None:
        cfg = self.cfg
        cmds = ["new", "post", "hard" if self.ponder_enabled else "easy"]
        if self.chess960:
            cmds.insert(1, "variant fischerandom")  # after `new`, before the position
            self._board = chess.Board(start_fen or chess.STARTING_FEN, chess960=True)
            start_fen = start_fen or chess.STARTING_FEN  # always set up: no random array
        if cfg.tc is not None and not cfg.tc.infinite:
            base = cfg.tc.base
            mins, secs = divmod(int(round(base)), 60)
            base_s = f"{mins}:{secs:02d}" if secs else f"{mins}"
            cmds.append(f"level {cfg.tc.moves} {base_s} {cfg.tc.inc:g}")
        elif cfg.st is not None:
            cmds.append(f"st {max(1, int(round(cfg.st)))}")
        if cfg.depth is not None:
            cmds.append(f"sd {cfg.depth}")
        if cfg.nodes is not None:  # CECP: time counted in nodes, N a second; st 1: N a move
            if cfg.tc is None and cfg.st is None:
                cmds.append("st 1")
            cmds.append(f"nps {cfg.nodes}")
        cmds.append("force")
        if start_fen is not None and (start_fen != chess.STARTING_FEN or self.chess960):
            cmds.extend(self._setup(start_fen))
        self.p.send("\n".join(cmds) + "\n")
        self._known = []
        self._playing = False
        self._sync()

    def _setup(self, fen: str) -> list[str]:
        if self.features.get("setboard") == "1":
            return [f"setboard {fen}"]
        # Protocol-1 style `edit` mode (fairymax has no setboard).
        board = chess.Board(fen)
        out = []
        if board.turn == chess.BLACK:
            out.append("a2a3")
        out += ["edit", "#"]
        for color in (chess.WHITE, chess.BLACK):
            if color == chess.BLACK:
                out.append("c")
            for sq, piece in board.piece_map().items():
                if piece.color == color:
                    out.append(piece.symbol().upper() + chess.square_name(sq))
        out.append(".")
        return out

    def _move_cmd(self, move: str) -> str:
        if self._board is not None:  # Chess960: castling goes out as O-O / O-O-O
            mv = chess.Move.from_uci(move)
            if self._board.is_castling(mv):
                move = "O-O" if self._board.is_kingside_castling(mv) else "O-O-O"
            self._board.push(mv)
        return f"usermove {move}" if self.features.get("usermove") == "1" else move

    def _read_move(self, text: str) -> str:
        """Chess960: the engine's move (O-O, e1h1, ...) as king-takes-rook UCI; as sent
        when it is not legal (the game then scores it)."""
        if self._board is None:
            return text
        try:
            mv = self._board.parse_san(text) if text[:1] in "O0" else self._board.parse_uci(text)
        except ValueError:
            return text
        self._board.push(mv)
        return mv.uci()

    def go(self, start_fen, moves, limits) -> SearchResult:
        known = self._known
        if moves[: len(known)] != known:
            raise EngineCrashed(f"{self.name}: position out of sync")
        new = moves[len(known) :]
        cs = 100.0
        own = limits.wtime if limits.white else limits.btime
        opp = limits.btime if limits.white else limits.wtime
        clock = ""
        if own is not None and self.features.get("time", "1") == "1":
            clock = f"time {max(0, int(own * cs))}\notim {max(0, int(opp * cs))}\n"
        if self._playing and new:
            cmd = "".join(self._move_cmd(m) + "\n" for m in new[:-1])
            cmd += clock + self._move_cmd(new[-1]) + "\n"
        else:
            cmd = "".join(self._move_cmd(m) + "\n" for m in new) + clock + "go\n"
        known.extend(new)
        self.p.send(cmd)
        t0 = time.perf_counter()
        self._playing = True
        deadline = t0 + limits.timeout
        last_post = None
        p = self.p
        while True:
            line = p.readline(deadline)
            if line.lstrip()[:1].isdigit():
                last_post = line
                continue
            if line.startswith(b"move "):
                elapsed = p.last_read - t0
                mv = self._read_move(line[5:].strip().decode(errors="replace"))
                res = SearchResult(move=mv, elapsed=elapsed)
                if last_post is not None:
                    tok = last_post.split()
                    try:
                        res.depth = int(tok[0].rstrip(b".&"))
                        if len(tok) > 3 and tok[3].isdigit():
                            res.nodes = int(tok[3])
                            if tok[2].isdigit() and int(tok[2]) > 0:  # centiseconds
                                res.nps = res.nodes * 100 // int(tok[2])
                        if len(tok) > 4:
                            res.pv = b" ".join(tok[4:]).decode(errors="replace")
                        score = int(tok[1])
                        if abs(score) >= 100000:  # xboard convention: 100000 + moves
                            n = max(1, abs(score) - 100000)
                            res.mate = n if score > 0 else -n
                        else:
                            res.score = score
                    except (ValueError, IndexError):
                        pass
                known.append(mv)
                return res
            if line.startswith(b"resign") or (b"resign" in line and b"{" in line):
                return SearchResult(move="", elapsed=p.last_read - t0, resign=True)
            if line.startswith(b"Illegal move") or line.startswith(b"Error"):
                raise EngineCrashed(f"{self.name}: {line.decode(errors='replace')}")

    def stop(self, grace: float = STOP_GRACE) -> bool:
        # "?" asks the engine to move now; any reply shows it is alive.
        try:
            self.p.send("?\n")
            deadline = time.perf_counter() + grace
            while not self.p.readline(deadline).startswith(b"move "):
                pass
            self.p.send("force\n")
            self._playing = False
            return True
        except EngineError:
            return False

    def end_game(self) -> None:
        if self.p is not None:
            try:
                self.p.send("force\n")
            except EngineError:
                self.broken = True
            self._playing = False


def parse_features(text: str):
    """Yield (key, value) pairs of an xboard ``feature`` line."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] == " ":
            i += 1
        j = text.find("=", i)
        if j < 0:
            return
        key = text[i:j].strip()
        j += 1
        if j < n and text[j] == '"':
            k = text.find('"', j + 1)
            k = n if k < 0 else k
            value = text[j + 1 : k]
            i = k + 1
        else:
            k = text.find(" ", j)
            k = n if k < 0 else k
            value = text[j:k]
            i = k
        yield key, value
