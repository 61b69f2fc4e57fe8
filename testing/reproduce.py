"""``wasp-match reproduce DIR GAME``: replay a stored game's transcript against a fresh
engine and say where its behaviour differs (crash, hang, illegal move, another move).

The engine is started with the run's command and options; the lines the runner sent
are sent again in order, and at every point where the runner waited (``readyok``,
``bestmove``, ``move``, ``pong``) the new answer is compared with the stored one.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

import chess

from wasp.cliargs import ArgumentParser, add_run_dir
from wasp.exitcodes import EXIT_INPUT, EXIT_USAGE, fail

from .config import MatchConfig
from .engine import make_engine
from .enginestats import loser_failure
from .process import EngineCrashed, EngineError, EngineTimeout
from .store import DB_NAME, RunStore

DEFAULT_TIMEOUT = 10.0  # seconds a search may take beyond its own time limit
_XB_MOVE = re.compile(r"^[a-h][1-8][a-h][1-8][qrbn]?$")
DESCRIPTION = """\
Replays game GAME of the run in DIR (its number, the PGN Round tag, or PAIR.G) against
freshly started engines with the run's commands and options: the same positions and
limits as its stored transcript, and reports per engine the first place where the
behaviour differs - a crash, a hang (no answer within the search's own limit plus
--timeout S, default 10), an illegal move, another move at fixed nodes/depth - or that
it replayed identically. --ply N stops after the search of ply N (1 = the first move
from the game's start position, book moves included) and shows both answers.
"""
EPILOG = """\
example:
  wasp-match reproduce runs/20260101-120000 17 --ply 42
  wasp-match reproduce -rundir runs/20260101-120000 17

Flags take one or two dashes; the run directory may be given as -dir DIR (or -rundir DIR).

Exit codes: 0 replayed identically, 1 a failure or a difference found (or DIR/GAME
cannot be used), 2 a bad command line.
"""


@dataclass
class Finding:
    """What one engine's replay found."""

    side: str
    engine: str
    kind: str  # identical | crash | hang | illegal | different | not-reproduced | start
    ply: int | None = None
    text: str = ""
    searches: int = 0
    timed_differences: int = 0
    info: list[str] = field(default_factory=list)  # the replay's lines of the --ply search

    def line(self) -> str:
        where = f" at ply {self.ply}" if self.ply is not None else ""
        head = f"{self.side} {self.engine}: "
        if self.kind == "identical":
            extra = (f"; {self.timed_differences} timed searches chose another move (a timed "
                     "search need not repeat)" if self.timed_differences else "")
            return head + f"replayed identically ({self.searches} searches{extra})"
        return head + f"{self.kind}{where}: {self.text}"


def parse_transcript(text: str) -> list[tuple[str, str]]:
    """[(direction, line)] of a stored transcript (``>`` sent, ``<`` received)."""
    out = []
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        parts = raw.split(" ", 2)
        if len(parts) >= 2 and parts[1] in (">", "<"):
            out.append((parts[1], parts[2] if len(parts) > 2 else ""))
    return out


def _answer(events, k: int, prefix: str, cancel: tuple[str, ...]) -> str | None:
    """The first received line after event k starting with ``prefix``, unless a sent
    line starting with one of ``cancel`` comes first; None when there is none."""
    for d, line in events[k + 1:]:
        if d == "<" and line.startswith(prefix):
            return line
        if d == ">" and line.split(" ", 1)[0] in cancel:
            return None
    return None


def _uci_board(line: str, chess960: bool = False) -> chess.Board:
    tokens = line.split()
    if len(tokens) > 1 and tokens[1] == "fen":
        end = tokens.index("moves") if "moves" in tokens else len(tokens)
        board = chess.Board(" ".join(tokens[2:end]), chess960=chess960)
    else:
        board = chess.Board(chess960=chess960)
        end = tokens.index("moves") if "moves" in tokens else len(tokens)
    for m in tokens[end + 1:]:
        board.push_uci(m)
    return board


def _go_budget(line: str, white: bool) -> tuple[float, bool]:
    """(seconds the search may take by its own limits, whether its move is fixed)."""
    tok = line.split()

    def val(key):
        try:
            return int(tok[tok.index(key) + 1]) / 1000.0
        except (ValueError, IndexError):
            return None

    own = val("wtime" if white else "btime")
    movetime = val("movetime")
    timed = own is not None or movetime is not None or "infinite" in tok
    fixed = not timed and ("nodes" in tok or "depth" in tok)
    return (own or 0.0) + (movetime or 0.0), fixed


class _Replay:
    def __init__(self, eng, side: str, events, start: chess.Board, failure, ply_stop,
                 timeout: float):
        self.eng = eng
        self.p = eng.p
        self.events = events
        self.start = start
        self.failure = failure  # (kind, ply) the game ended with for this engine, or None
        self.ply_stop = ply_stop
        self.timeout = timeout
        self.f = Finding(side, eng.name, "identical")
        self._ponder = ""  # the last `go ponder` line: its limits hold after `ponderhit`

    # -- one search -----------------------------------------------------------
    def _read_answer(self, prefix: bytes, budget: float, keep: list[str]) -> bytes:
        deadline = time.perf_counter() + budget + self.timeout
        while True:
            line = self.p.readline(deadline)
            if line.startswith(prefix):
                return line
            keep.append(line.decode(errors="replace"))
            if prefix == b"move " and (line.startswith(b"Illegal move")
                                       or line.startswith(b"Error")):
                raise EngineCrashed(line.decode(errors="replace"))

    def search(self, board: chess.Board, k: int, prefix: str, cancel, budget: float,
               fixed: bool) -> bool:
        """Wait for the answer to the search sent at event k; False to stop the replay."""
        f = self.f
        ply = len(board.move_stack) + 1
        f.searches += 1
        original = _answer(self.events, k, prefix, cancel)
        orig_move = original.split()[1] if original and len(original.split()) > 1 else None
        failed_here = self.failure is not None and original is None
        if self.failure is not None and self.failure[0] == "illegal" and orig_move is not None:
            failed_here = not _legal(board, orig_move)
        info: list[str] = []
        try:
            line = self._read_answer(prefix.encode(), budget, info)
        except EngineTimeout:
            return self._found("hang", ply, f"no {prefix.strip()} within "
                               f"{budget + self.timeout:g} s", failed_here)
        except EngineCrashed as e:
            code = self.eng.p.proc.poll() if self.eng.p is not None else None
            if self.eng.p is not None and code is None:
                try:
                    code = self.eng.p.proc.wait(1)
                except Exception:  # noqa: BLE001 - the code only decorates the message
                    code = None
            why = f"the engine exited (code {code})" if code is not None else str(e)
            if "Illegal move" in str(e) or str(e).startswith("Error"):
                why = f"the engine refused the game's input: {e}"
            return self._found("crash", ply, why, failed_here)
        move = line.split()[1].decode(errors="replace") if len(line.split()) > 1 else ""
        if orig_move is not None and _legal(board, orig_move):
            orig_move = _uci(board, orig_move)
        if self.ply_stop is not None and ply >= self.ply_stop:
            f.info = info
        if not _legal(board, move):
            return self._found("illegal", ply, f"illegal move {move!r} in {board.fen()}",
                               failed_here)
        move = _uci(board, move)
        if failed_here:
            kind = self.failure[0]
            f.kind, f.ply = "not-reproduced", ply
            f.text = (f"the game had a {kind} here; the replay answered {move}")
            return False
        if orig_move is not None and move != orig_move:
            if fixed:
                f.kind, f.ply = "different", ply
                f.text = f"the game's move {orig_move}, the replay's {move} (fixed search)"
                return False
            f.timed_differences += 1
            if self.eng.protocol == "xboard":  # its board now differs from the game's
                f.kind, f.ply = "different", ply
                f.text = (f"the game's move {orig_move}, the replay's {move} (a timed search: "
                          "the replay cannot go on past it)")
                return False
        if self.ply_stop is not None and ply >= self.ply_stop:
            f.kind, f.ply = "identical" if move == orig_move else "different", ply
            f.text = f"the game's move {orig_move}, the replay's {move}"
            f.info.append(f"ply {ply}: the game's move {orig_move}, the replay's {move}")
            return False
        if self.eng.protocol == "xboard":
            board.push_uci(move)
        return True

    def _found(self, kind: str, ply: int, text: str, failed_here: bool) -> bool:
        f = self.f
        f.kind, f.ply = kind, ply
        if failed_here:
            f.text = text + f" - as in the game ({self.failure[0]})"
        else:
            f.text = text + " - the game went on here"
        return False

    # -- the protocols --------------------------------------------------------
    def _after_handshake(self, hello: str, last: str, past: bool) -> int:
        """The first event to replay: after the handshake that start() has done already (from
        `hello` to `last`, and `last` itself when `past`), when the transcript opens with it."""
        events = self.events
        first = 0
        if events and events[0] == (">", hello):
            while first < len(events) and events[first] != (">", last):
                first += 1
            first += past
        return first

    def _sent(self, first: int):
        """(index, line, command) of each GUI line of the transcript from event `first` on,
        sent to the engine as it is yielded; the replay stops before `quit`."""
        events = self.events
        for k in range(first, len(events)):
            d, line = events[k]
            if d != ">":
                continue
            cmd = line.split(" ", 1)[0]
            if cmd == "quit":
                break
            self.p.send(line + "\n")
            yield k, line, cmd

    def run_uci(self) -> Finding:
        first = self._after_handshake("uci", "isready", past=True)
        board = self.start.copy()
        pondering = False
        for k, line, cmd in self._sent(first):
            if cmd == "position":
                board = _uci_board(line, self.start.chess960)
            elif cmd == "isready":
                try:
                    self._read_answer(b"readyok", self.eng.cfg.startup, [])
                except EngineError:
                    return self._stopped(board, "no readyok after isready")
            elif cmd == "go" and " ponder" in line:
                pondering = True
                self._ponder = line
            elif cmd in ("go", "ponderhit"):
                go = line if cmd == "go" else self._ponder
                budget, fixed = _go_budget(go, board.turn == chess.WHITE)
                pondering = False
                if not self.search(board, k, "bestmove", ("go", "stop", "quit"), budget,
                                   fixed):
                    return self.f
            elif cmd == "stop" and pondering:
                pondering = False
                try:
                    self._read_answer(b"bestmove", 0.0, [])
                except EngineError:
                    return self._stopped(board, "no bestmove after stop")
        return self.f

    def run_xboard(self) -> Finding:
        first = self._after_handshake("xboard", "new", past=False)
        board = self.start.copy()
        force = False
        timed = False
        own = st = 0.0
        editing = False
        for k, line, cmd in self._sent(first):
            if editing:
                editing = line != "."
                continue
            if cmd == "new":
                board, force, timed = self.start.copy(), False, False
                continue
            if cmd == "edit":
                board, editing = self.start.copy(), True
                continue
            if cmd == "setboard":
                board = chess.Board(line[9:], chess960=self.start.chess960)
                continue
            if cmd in ("level", "st"):
                timed = True
                if cmd == "st":
                    st = float(line.split()[1])
            if cmd == "time":
                own = int(line.split()[1]) / 100.0
            if cmd == "force":
                force = True
            elif cmd == "ping":
                try:
                    self._read_answer(f"pong {line.split()[1]}".encode(), self.eng.cfg.startup,
                                      [])
                except EngineError:
                    return self._stopped(board, f"no pong after {line}")
            mv = line[9:] if cmd == "usermove" else line if _XB_MOVE.match(line) else None
            if mv is not None:
                uci = _uci(board, mv)  # O-O / O-O-O under variant fischerandom
                if uci is None:
                    continue  # the a2a3 before `edit` of a black-to-move setup
                board.push_uci(uci)
            if cmd == "go" or (mv is not None and not force):
                force = False
                budget = (own or st) + 1.0 if timed else 0.0
                if not self.search(board, k, "move ", ("force", "new", "?", "quit"),
                                   budget, not timed):
                    return self.f
        return self.f

    def _stopped(self, board, text) -> Finding:
        self.f.kind, self.f.ply, self.f.text = "hang", len(board.move_stack) + 1, text
        return self.f


def _uci(board: chess.Board, move: str | None) -> str | None:
    """The move in UCI notation if it is legal (xboard engines may answer in SAN), else None."""
    if move is None:
        return None
    try:
        m = chess.Move.from_uci(move)
        return move if m in board.legal_moves else None
    except ValueError:
        try:
            return board.parse_san(move).uci()
        except ValueError:
            return None


def _legal(board: chess.Board, move: str) -> bool:
    return _uci(board, move) is not None


def reproduce(rundir: str, game, ply: int | None = None, sides=("white", "black"),
              timeout: float = DEFAULT_TIMEOUT) -> list[Finding]:
    """Replay game ``game`` of the run in ``rundir``; one Finding per engine replayed.
    Raises ValueError / FileNotFoundError for a run or game that cannot be used."""
    if not os.path.isfile(os.path.join(rundir, DB_NAME)):
        raise FileNotFoundError(f"{rundir!r} holds no run ({DB_NAME} missing)")
    store = RunStore(rundir)
    try:
        key = store.game_key(game)
        row = store.game(key)
        texts = store.logs(key, "transcript")
        saved = store.get_meta("config")
    finally:
        store.close()
    if saved is None:
        raise ValueError(f"{rundir!r} has no saved settings")
    last = row["plies"] + len((row.get("opening_moves") or "").split()) + 1  # + the failed one
    if ply is not None and ply > last:
        raise ValueError(f"--ply {ply}: game {game} ends at ply {last}")
    cfg = MatchConfig.from_dict(saved)
    by_name = {e.name: e for e in cfg.engines}
    start = chess.Board(row["opening_fen"] or chess.STARTING_FEN, chess960=cfg.chess960)
    fail = loser_failure(row["termination"], row["result"])
    kinds = {"crashes": "crash", "stalls": "hang", "time_losses": "time loss",
             "illegal_moves": "illegal"}
    out = []
    for side in sides:
        name = row[side]
        ecfg = by_name.get(name)
        if ecfg is None:
            raise ValueError(f"engine {name!r} of game {game} is not in the run's settings")
        text = texts.get(side)
        if not text:
            raise ValueError(f"game {game} has no stored transcript for {side} ({name}): "
                             "a run from before transcripts were kept")
        events = parse_transcript(text.decode(errors="replace"))
        failure = None
        if fail is not None and fail[0] == side:
            failure = (kinds[fail[1]], None)
        eng = make_engine(ecfg, ponder=cfg.ponder, chess960=cfg.chess960)
        try:
            eng.start()
        except EngineError as e:
            out.append(Finding(side, name, "start", None, f"the engine failed to start: {e}"))
            eng.kill()
            continue
        try:
            rp = _Replay(eng, side, events, start, failure, ply, timeout)
            try:
                f = rp.run_uci() if eng.protocol == "uci" else rp.run_xboard()
            except EngineCrashed as e:
                f = rp.f
                f.kind, f.text = "crash", f"the engine closed its input: {e}"
            if f.kind in ("crash", "hang", "illegal") and eng.p is not None:
                eng.p.proc.poll()
                _, err = eng.take_recording()
                if err.strip():
                    tail = err.decode(errors="replace").strip().splitlines()[-3:]
                    f.text += "; its stderr ends: " + " | ".join(tail)
            out.append(f)
        finally:
            eng.kill()
    return out


def _parser():
    p = ArgumentParser(prog="wasp-match reproduce", usage="wasp-match reproduce DIR GAME "
                       "[--ply N] [--side white|black] [--timeout S]",
                       description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("where", nargs="*", metavar="DIR GAME",
                   help="the run directory and the game (its number, or PAIR.G)")
    add_run_dir(p, help="the run directory (instead of the first argument)")
    p.add_argument("--ply", metavar="N", help="stop after the search of ply N")
    p.add_argument("--side", metavar="white|black", help="replay only this side's engine")
    p.add_argument("--timeout", metavar="S", default=str(DEFAULT_TIMEOUT),
                   help="seconds a search may take beyond its own limit (default 10)")
    return p


def _settings(args) -> tuple[str, str, int | None, tuple[str, ...], float]:
    """(DIR, GAME, ply, sides, timeout) of the parsed flags; ValueError saying what is wrong."""
    pos = ([args.dir] if args.dir else []) + list(args.where)
    if len(pos) != 2:
        raise ValueError("expected DIR GAME (see reproduce --help)")
    ply = None
    if args.ply is not None:
        if not (args.ply.isdigit() and int(args.ply) >= 1):
            raise ValueError(f"--ply: expected a ply number >= 1, got {args.ply!r}")
        ply = int(args.ply)
    sides = ("white", "black")
    if args.side is not None:
        if args.side not in sides:
            raise ValueError(f"--side: expected white or black, got {args.side!r}")
        sides = (args.side,)
    try:
        timeout = float(args.timeout)
    except ValueError:
        raise ValueError(f"--timeout: expected seconds, got {args.timeout!r}") from None
    if timeout <= 0:
        raise ValueError(f"--timeout: expected seconds > 0, got {args.timeout!r}")
    parts = pos[1].strip().split(".")
    if len(parts) > 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"GAME {pos[1]!r}: expected a game number (the PGN Round) "
                         "or PAIR.G")
    return pos[0], pos[1], ply, sides, timeout


def main(argv: list[str]) -> int:
    """The ``reproduce`` subcommand; the exit status."""
    prog = "wasp-match reproduce"
    parser = _parser()
    if not argv:
        parser.print_help()
        return 0
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, or a bad flag (its one line is printed)
        return e.code
    try:
        rundir, game, ply, sides, timeout = _settings(args)
    except ValueError as e:
        return fail(prog, e, EXIT_USAGE)
    try:
        findings = reproduce(rundir, game, ply, sides, timeout)
    except (ValueError, FileNotFoundError) as e:
        return fail(prog, e, EXIT_INPUT)
    print(f"Game {game} of {rundir}:")
    for f in findings:
        print(f.line())
        for ln in f.info:
            print(f"  {ln}")
    return 0 if all(f.kind == "identical" for f in findings) else 1
