"""``wasp-match``: the command line, with cutechess-cli/fastchess flag names.

Every flag is parsed and checked before any game starts; a bad one is named
with the reason and the exit status is 2; a file that cannot be used (-config,
-openings, -resume) is named with the reason and the exit status is 1.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
import time

from .config import MatchConfig, OpeningsConfig, PgnOptions, SprtConfig
from .engine import EngineConfig
from .game import DrawAdjudication, ResignAdjudication
from .schedule import POLICIES
from .timecontrol import TimeControl

USAGE = """\
usage: wasp-match -engine cmd=CMD [name=NAME] [proto=uci|xboard] ... -engine ... [options]
       wasp-match reproduce DIR GAME [--ply N] [--side white|black] [--timeout S]

Plays engine matches (UCI or xboard engines as subprocesses), commits every game
to a SQLite run store, and reports Elo, nElo, pentanomial counts and the SPRT.

Engines:
  -engine KEY=VALUE ...   one engine; keys: cmd= name= (default: the command's name)
                          proto=uci|xboard (default uci) dir= arg= (one per argument)
                          option.NAME=VALUE tc=[moves/]time[+inc] st= nodes= depth=
                          (one of tc, st, nodes, depth is needed) timemargin=MS (default 0)
                          restart=on|off (default off) startup=SECONDS (the time to answer
                          uci/isready or send xboard features; default 15)
  -each KEY=VALUE ...     the same keys, applied to every engine
  -config FILE            engines and settings as JSON (also -config file=FILE): the keys
                          are the flags' names ("concurrency": 2, "openings": {"file": ...},
                          "engines": [{"cmd": ..., "options": {...}}]); unknown keys are refused

Schedule:
  -tournament gauntlet|roundrobin   (default roundrobin)
  -rounds N -games N      games per encounter = rounds x games (default 1 x 1)
  -repeat                 game pairs: each opening twice, colours swapped
  -concurrency N          games played at once (default 1)
  -openings file=F [format=epd|pgn] [order=random|sequential] [plies=N] [start=N]
            [policy=default|encounter|round]
                          (defaults: format from the file name, order sequential, all the
                          PGN moves, start 1; EPD lines starting with # are comments);
                          policy (cutechess's): default a new opening for each game pair
                          (each game without -repeat), encounter a new one when the
                          players change, round one opening per round
  -srand N                seed of the random opening order (default: a random seed)
  -variant standard|fischerandom   fischerandom: Chess960 and DFRC books (X-FEN or
                          Shredder-FEN castling), engines told UCI_Chess960 (xboard:
                          variant fischerandom), castling as king-takes-rook (default standard)
  -event NAME -site NAME  PGN tags (default ?)

Adjudication (default: none):
  -draw movenumber=N movecount=N score=CP     (defaults 0, 1, 0)
  -resign movecount=N score=CP [twosided=true|false]   (defaults 1, 1000, false)
  -maxmoves N
  -tb PATHS               Syzygy tablebase directories (':'-separated): a game reaching a
                          position they hold (50-move counter at 0, no castling) ends with
                          their result
  -tbpieces N             only positions of N pieces or fewer (default, or 0: the largest
                          table's)
  -tbignore50             a win the 50-move rule would draw (cursed) counts as a win
  -tbadjudicate BOTH|WIN_LOSS|DRAW   which results the tables decide (default BOTH)

Statistics:
  -sprt elo0=E0 elo1=E1 [alpha=0.05] [beta=0.05] [model=normalized|logistic]
  -ratinginterval N       print the report every N games (default 10; 0: only at the end)

Output and runs:
  -pgnout FILE [min] [fi]  or  -pgnout file=FILE [nodes=true] [seldepth=true] [nps=true]
          [hashfull=true] [tbhits=true] [pv=true] [timeleft=true] [latency=true] [min=true]
          [notation=san|lan|uci]
                          the games as PGN: each move's comment holds score/depth and time,
                          and the figures switched on (n= sd= nps= hashfull= tbhits= tl=
                          latency= pv="..."); min: the seven tags only, no comments; fi:
                          finished games only (always so: unfinished games are not kept)
  -epdout FILE  -log FILE
  -rundir DIR             run directory (default runs/<timestamp>)
  -resume DIR             go on with the run stored in DIR
  -recover                restart engines that crash or stall and go on
  -ponder                 let engines ponder
  -use-affinity [CORES]   pin each running game's engines to cores of their own (list as
                          0,2,4-7; default every core): the cores are split into one set
                          per concurrent game, handed out when a game starts, returned
                          when it ends (local games only)
  -dask ADDRESS           play game pairs on a Dask distributed scheduler
  -scale-tc nps=N [nodes=N] [engine=NAME|INDEX] [maxfactor=3] [bench=WORDS]
                          with -dask, as fishtest: each worker runs the engine's own
                          bench (`CMD ARGS bench`, default the first engine) and plays
                          with its tc/st scaled by reference nps / worker nps; a worker
                          slower than maxfactor, or whose bench node count differs from
                          nodes=, is refused with the reason
  -progress on|off        live progress line (default: when stderr is a terminal)

Every game's protocol transcript and engine stderr are kept in the run store
(testing.transcript(DIR, GAME), testing.stderr(DIR, GAME)); `wasp-match reproduce DIR
GAME` replays a game against fresh engines and says where they behave differently
(see wasp-match reproduce --help).

Example:
  wasp-match -engine cmd=stockfish name=sf1 -engine cmd=stockfish name=sf2 \\
      -each proto=uci tc=10+0.1 option.Hash=16 -rounds 200 -repeat -concurrency 2 \\
      -openings file=UHO_4060_v2.epd format=epd order=random -srand 42 \\
      -sprt elo0=0 elo1=5 -pgnout games.pgn -recover
  wasp-match -engine cmd=wasp name=wasp -engine cmd=fairymax proto=xboard \\
      -each tc=10+0.1 startup=60 -rounds 10 -repeat
  wasp-match -compliance /usr/games/fairymax proto=xboard

Checks:
  -compliance CMD [proto=uci|xboard] [arg=ARG ...] [option.NAME=VALUE] [startup=S]
                          check the engine's protocol handling step by step (fastchess's
                          --compliance and more): each step PASS/FAIL with the offending
                          line; exit status 0 when all pass, 1 otherwise

Exit codes: 0 done, 1 a file that cannot be used (-config, -openings, -resume) or
an engine that failed, 2 a bad flag or setting, 130 interrupted.
"""


class UsageError(Exception):
    """A bad flag or setting (exit status 2)."""

    code = 2


class InputError(UsageError):
    """A file that cannot be used: missing, a directory, not of its kind (exit status 1)."""

    code = 1


def _input_file(where: str, path: str) -> str:
    """`path` if it is a readable, non-empty file; else InputError naming it."""
    if not os.path.exists(path):
        raise InputError(f"{where}: {path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{where}: {path}: is a directory, not a file")
    try:
        with open(path, "rb") as f:
            head = f.read(1)
    except OSError as e:
        raise InputError(f"{where}: {path}: cannot read: {e.strerror}") from None
    if not head:
        raise InputError(f"{where}: {path}: the file is empty")
    return path


KV_FLAGS = {"-engine", "-each", "-openings", "-draw", "-resign", "-sprt", "-scale-tc"}
VALUE_FLAGS = {
    "-concurrency",
    "-rounds",
    "-games",
    "-tournament",
    "-srand",
    "-maxmoves",
    "-pgnout",
    "-epdout",
    "-ratinginterval",
    "-log",
    "-config",
    "-resume",
    "-dask",
    "-rundir",
    "-event",
    "-site",
    "-progress",
    "-tb",
    "-tbpieces",
    "-tbadjudicate",
    "-variant",
}
BOOL_FLAGS = {"-repeat", "-recover", "-ponder", "-tbignore50"}
OPTIONAL_VALUE_FLAGS = {"-use-affinity"}  # a value when the next word is not a flag
RESUME_OVERRIDES = {"concurrency", "dask", "log", "progress", "ratinginterval", "use-affinity"}

ENGINE_KEYS = {
    "cmd",
    "name",
    "proto",
    "dir",
    "arg",
    "tc",
    "st",
    "nodes",
    "depth",
    "timemargin",
    "restart",
    "startup",
}


def _kv(flag: str, token: str) -> tuple[str, str]:
    if "=" not in token:
        raise UsageError(f"{flag}: expected KEY=VALUE, got {token!r}")
    k, v = token.split("=", 1)
    return k, v


def parse_args(argv: list[str]) -> dict:
    """Command line -> a raw settings dict (strings), in the shape of a -config file."""
    raw: dict = {"engines": []}
    i = 0
    n = len(argv)
    while i < n:
        flag = argv[i]
        if (
            flag.startswith("--")
            and flag[2:]
            and "-" + flag[2:] in (KV_FLAGS | VALUE_FLAGS | BOOL_FLAGS | OPTIONAL_VALUE_FLAGS)
        ):
            flag = flag[1:]  # accept --flag as well as -flag
        i += 1
        if flag in KV_FLAGS:
            items: list[tuple[str, str]] = []
            while i < n and not _is_flag(argv[i]):
                items.append(_kv(flag, argv[i]))
                i += 1
            if flag == "-engine":
                raw["engines"].append(_engine_items(flag, items))
            elif flag == "-each":
                raw.setdefault("each", {}).update(_engine_items(flag, items))
            else:
                key = flag[1:]
                d = raw.setdefault(key, {})
                for k, v in items:
                    d[k] = v
        elif flag in VALUE_FLAGS:
            if i >= n or (_is_flag(argv[i]) and flag not in ("-srand",)):
                raise UsageError(f"{flag}: missing value")
            value = argv[i]
            i += 1
            if flag == "-config" and value.startswith("file="):
                value = value[5:]
            if flag == "-pgnout":
                value = _pgnout_items(argv, i - 1)
                while i < n and not _is_flag(argv[i]):
                    i += 1
            raw[flag[1:]] = value
        elif flag in OPTIONAL_VALUE_FLAGS:
            value = "true"
            if i < n and not _is_flag(argv[i]):
                value = argv[i]
                i += 1
            raw[flag[1:]] = value
        elif flag in BOOL_FLAGS:
            raw[flag[1:]] = "true"
            if flag == "-repeat" and i < n and argv[i].isdigit():
                if argv[i] != "2":
                    raise UsageError("-repeat: only pairs (2 games per opening) are supported")
                i += 1
        else:
            raise UsageError(f"unknown flag {flag!r} (see --help)")
    return raw


PGN_SWITCHES = ("nodes", "seldepth", "nps", "hashfull", "tbhits", "pv", "timeleft", "latency",
                "min")


def _pgnout_items(argv: list[str], i: int) -> dict:
    """``-pgnout FILE [min] [fi]`` (cutechess) or ``-pgnout file=FILE [nodes=true] ...``
    (fastchess) from argv[i:] -> {"file": ..., switch: value}."""
    d: dict = {}
    first = True
    while i < len(argv) and not (_is_flag(argv[i]) and not first):
        tok = argv[i]
        i += 1
        if "=" in tok:
            k, v = tok.split("=", 1)
            d[k] = v
        elif first:
            d["file"] = tok
        elif tok == "min":
            d["min"] = "true"
        elif tok == "fi":
            d["fi"] = "true"  # finished games only: the runner writes no other kind
        else:
            raise UsageError(f"-pgnout: unexpected {tok!r} (expected KEY=VALUE, min or fi)")
        first = False
    return d


def _pgn_options(v) -> tuple[str | None, PgnOptions]:
    """(file, PgnOptions) of a -pgnout value: a file name or a dict of switches."""
    if not isinstance(v, dict):
        return str(v), PgnOptions()
    _check_keys("-pgnout", v, {"file", "notation", "fi", *PGN_SWITCHES})
    opts = PgnOptions()
    for k in PGN_SWITCHES:
        if k in v:
            setattr(opts, k, _bool(f"-pgnout: {k}", v[k]))
    if "fi" in v:
        _bool("-pgnout: fi", v["fi"])
    if "notation" in v:
        opts.notation = str(v["notation"])
        if opts.notation not in ("san", "lan", "uci"):
            raise UsageError(f"-pgnout: notation={opts.notation!r} (expected san, lan or uci)")
    if "file" not in v:
        raise UsageError("-pgnout: file= is required")
    return str(v["file"]), opts


def _is_flag(tok: str) -> bool:
    return tok.startswith("-") and "=" not in tok and not _is_number(tok)


def _is_number(tok: str) -> bool:
    try:
        float(tok)
        return True
    except ValueError:
        return False


def _engine_items(flag: str, items: list[tuple[str, str]]) -> dict:
    d: dict = {}
    for k, v in items:
        if k == "arg":
            d.setdefault("args", []).append(v)
        elif k.startswith("option."):
            if len(k) <= 7:
                raise UsageError(f"{flag}: option name missing in {k}={v}")
            d.setdefault("options", {})[k[7:]] = v
        elif k in ENGINE_KEYS:
            d[k] = v
        else:
            raise UsageError(
                f"{flag}: unknown key {k!r} (known: {', '.join(sorted(ENGINE_KEYS))}, option.NAME)"
            )
    return d


# -- conversion and checks ---------------------------------------------------


def _int(where: str, v, lo: int | None = None) -> int:
    try:
        x = int(str(v))
    except ValueError:
        raise UsageError(f"{where}: expected an integer, got {v!r}") from None
    if lo is not None and x < lo:
        raise UsageError(f"{where}: must be at least {lo}, got {x}")
    return x


def _float(where: str, v, lo: float | None = None, hi: float | None = None) -> float:
    try:
        x = float(str(v))
    except ValueError:
        raise UsageError(f"{where}: expected a number, got {v!r}") from None
    if x != x or (lo is not None and x < lo) or (hi is not None and x > hi):
        raise UsageError(f"{where}: {x} is out of range")
    return x


def _bool(where: str, v) -> bool:
    s = str(v).lower()
    if s in ("true", "on", "yes", "1"):
        return True
    if s in ("false", "off", "no", "0"):
        return False
    raise UsageError(f"{where}: expected true/false (or on/off), got {v!r}")


def _check_keys(where: str, d: dict, allowed: set[str]) -> None:
    bad = sorted(set(d) - allowed)
    if bad:
        raise UsageError(f"{where}: unknown key {bad[0]!r} (known: {', '.join(sorted(allowed))})")


def _engine(i: int, d: dict, each: dict) -> EngineConfig:
    merged = {**each, **d}
    merged["options"] = {**each.get("options", {}), **d.get("options", {})}
    merged["args"] = list(each.get("args", [])) + list(d.get("args", []))
    where = f"-engine #{i + 1}"
    _check_keys(where, merged, ENGINE_KEYS | {"args", "options", "arg"} - {"arg"})
    cmd = merged.get("cmd")
    if not cmd:
        raise UsageError(f"{where}: cmd= is required")
    cmd = str(cmd)
    where = f"-engine #{i + 1} ({merged.get('name') or cmd})"
    wd = merged.get("dir")
    found = _find_cmd(where, cmd, wd)
    proto = str(merged.get("proto", "uci"))
    if proto not in ("uci", "xboard"):
        raise UsageError(f"{where}: proto={proto!r} (expected uci or xboard)")
    cfg = EngineConfig(
        cmd=found if os.sep not in cmd else cmd,
        name=str(merged.get("name") or os.path.basename(cmd)),
        proto=proto,
        dir=wd,
        args=[str(a) for a in merged["args"]],
        options={str(k): _optval(v) for k, v in merged["options"].items()},
    )
    if "tc" in merged:
        try:
            cfg.tc = TimeControl.parse(str(merged["tc"]))
        except ValueError as e:
            raise UsageError(f"{where}: tc: {e}") from None
    if "st" in merged:
        cfg.st = _float(f"{where}: st", merged["st"], lo=0.001)
    if "nodes" in merged:
        cfg.nodes = _int(f"{where}: nodes", merged["nodes"], lo=1)
    if "depth" in merged:
        cfg.depth = _int(f"{where}: depth", merged["depth"], lo=1)
    if cfg.tc is None and cfg.st is None and cfg.nodes is None and cfg.depth is None:
        raise UsageError(f"{where}: no time control (give tc=, st=, nodes= or depth=)")
    if cfg.tc is not None and cfg.st is not None:
        raise UsageError(f"{where}: tc= and st= cannot be combined")
    if "timemargin" in merged:
        cfg.timemargin = _int(f"{where}: timemargin", merged["timemargin"], lo=0)
    if "restart" in merged:
        cfg.restart = _bool(f"{where}: restart", merged["restart"])
    if "startup" in merged:
        cfg.startup = _float(f"{where}: startup", merged["startup"], lo=0.1)
    return cfg


def _find_cmd(where: str, cmd: str, wd: str | None) -> str:
    """The engine's executable (looked up in PATH, then /usr/games); UsageError if none."""
    if wd is not None and not os.path.isdir(wd):
        raise UsageError(f"{where}: dir={wd!r} is not a directory")
    exe = cmd
    if wd and os.sep in cmd and not os.path.isabs(cmd):
        exe = os.path.join(wd, cmd)
    if os.sep in exe:
        found = exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None
    else:  # Debian installs engines in /usr/games, often outside PATH
        found = shutil.which(exe) or shutil.which(exe, path="/usr/games")
    if found is None:
        raise UsageError(f"{where}: engine command {cmd!r} not found or not executable")
    return found


def compliance_config(argv: list[str]) -> EngineConfig:
    """``-compliance CMD [KEY=VALUE ...]`` -> the engine to check (raises UsageError)."""
    if argv and argv[0].startswith("cmd="):
        argv = [argv[0][4:], *argv[1:]]
    if not argv or not argv[0]:
        raise UsageError("-compliance: the engine command is missing "
                         "(-compliance CMD [proto=uci|xboard] [arg=...])")
    cmd = argv[0]
    d = _engine_items("-compliance", [_kv("-compliance", t) for t in argv[1:]])
    allowed = {"proto", "arg", "args", "dir", "options", "startup", "name"}
    bad = sorted(set(d) - allowed)
    if bad:
        raise UsageError(f"-compliance: key {bad[0]!r} does not apply (known: arg, dir, "
                         f"name, option.NAME, proto, startup)")
    found = _find_cmd("-compliance", cmd, d.get("dir"))
    proto = str(d.get("proto", "uci"))
    if proto not in ("uci", "xboard"):
        raise UsageError(f"-compliance: proto={proto!r} (expected uci or xboard)")
    cfg = EngineConfig(cmd=found if os.sep not in cmd else cmd, name=d.get("name") or cmd,
                       proto=proto, dir=d.get("dir"), args=list(d.get("args", [])),
                       options={k: _optval(v) for k, v in d.get("options", {}).items()})
    if "startup" in d:
        cfg.startup = _float("-compliance: startup", d["startup"], lo=0.1)
    return cfg


def _optval(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def build_config(raw: dict) -> MatchConfig:
    """Check every setting and build the run's MatchConfig (raises UsageError)."""
    engines_raw = raw.get("engines") or []
    each = raw.get("each") or {}
    if "each" in raw and not isinstance(each, dict):
        raise UsageError("-each: expected KEY=VALUE settings")
    if len(engines_raw) < 2:
        raise UsageError(f"at least two engines are needed (-engine ...), got {len(engines_raw)}")
    engines = [_engine(i, d, each) for i, d in enumerate(engines_raw)]
    seen: dict[str, int] = {}
    for e in engines:  # names identify engines in the store: make them unique
        if e.name in seen:
            seen[e.name] += 1
            e.name = f"{e.name}-{seen[e.name]}"
        else:
            seen[e.name] = 1
    cfg = MatchConfig(engines=engines)
    if "tournament" in raw:
        t = str(raw["tournament"])
        if t not in ("gauntlet", "roundrobin", "round-robin"):
            raise UsageError(f"-tournament: {t!r} (expected gauntlet or roundrobin)")
        cfg.tournament = "roundrobin" if t == "round-robin" else t
    if "concurrency" in raw:
        cfg.concurrency = _int("-concurrency", raw["concurrency"], lo=1)
    if "rounds" in raw:
        cfg.rounds = _int("-rounds", raw["rounds"], lo=1)
    if "games" in raw:
        cfg.games = _int("-games", raw["games"], lo=1)
    if "repeat" in raw:
        cfg.repeat = _bool("-repeat", raw["repeat"])
    if cfg.repeat and cfg.games == 1:
        cfg.games = 2  # as fastchess: -repeat plays a pair per round
    if "openings" in raw:
        o = raw["openings"]
        _check_keys("-openings", o, {"file", "format", "order", "plies", "start", "policy"})
        if "file" not in o:
            raise UsageError("-openings: file= is required")
        _input_file("-openings", str(o["file"]))
        fmt = o.get("format")
        if fmt is not None and fmt not in ("epd", "pgn"):
            raise UsageError(f"-openings: format={fmt!r} (expected epd or pgn)")
        order = str(o.get("order", "sequential"))
        if order not in ("sequential", "random"):
            raise UsageError(f"-openings: order={order!r} (expected random or sequential)")
        policy = str(o.get("policy", "default"))
        if policy not in POLICIES:
            raise UsageError(
                f"-openings: policy={policy!r} (expected default, encounter or round)")
        cfg.openings = OpeningsConfig(
            file=os.path.abspath(str(o["file"])),
            format=fmt,
            order=order,
            plies=_int("-openings: plies", o["plies"], lo=0) if "plies" in o else None,
            start=_int("-openings: start", o.get("start", 1), lo=1),
            policy=policy,
        )
    if "srand" in raw:
        cfg.srand = _int("-srand", raw["srand"])
    if "variant" in raw:  # issue 20: Chess960 / DFRC
        cfg.variant = _variant(raw["variant"])
    if "draw" in raw:
        d = raw["draw"]
        _check_keys("-draw", d, {"movenumber", "movecount", "score"})
        cfg.draw = DrawAdjudication(
            movenumber=_int("-draw: movenumber", d.get("movenumber", 0), lo=0),
            movecount=_int("-draw: movecount", d.get("movecount", 1), lo=1),
            score=_int("-draw: score", d.get("score", 0), lo=0),
        )
    if "resign" in raw:
        d = raw["resign"]
        _check_keys("-resign", d, {"movecount", "score", "twosided"})
        cfg.resign = ResignAdjudication(
            movecount=_int("-resign: movecount", d.get("movecount", 1), lo=1),
            score=_int("-resign: score", d.get("score", 1000), lo=1),
            twosided=_bool("-resign: twosided", d.get("twosided", "false")),
        )
    if "maxmoves" in raw:
        cfg.maxmoves = _int("-maxmoves", raw["maxmoves"], lo=1)
    cfg.tb = _tablebase(raw)
    if "sprt" in raw:
        d = raw["sprt"]
        _check_keys("-sprt", d, {"elo0", "elo1", "alpha", "beta", "model"})
        if "elo0" not in d or "elo1" not in d:
            raise UsageError("-sprt: elo0= and elo1= are required")
        s = SprtConfig(
            elo0=_float("-sprt: elo0", d["elo0"]),
            elo1=_float("-sprt: elo1", d["elo1"]),
            alpha=_float("-sprt: alpha", d.get("alpha", 0.05), lo=1e-9, hi=0.5),
            beta=_float("-sprt: beta", d.get("beta", 0.05), lo=1e-9, hi=0.5),
            model=str(d.get("model", "normalized")),
        )
        if s.elo0 >= s.elo1:
            raise UsageError(f"-sprt: elo0 ({s.elo0}) must be below elo1 ({s.elo1})")
        if s.model not in ("normalized", "logistic"):
            raise UsageError(f"-sprt: model={s.model!r} (expected normalized or logistic)")
        if len(engines) != 2:
            raise UsageError(f"-sprt needs exactly two engines, got {len(engines)}")
        cfg.sprt = s
    if "pgnout" in raw:
        raw = dict(raw)
        raw["pgnout"], cfg.pgn = _pgn_options(raw["pgnout"])
    for key in ("pgnout", "epdout", "log"):
        if key in raw:
            path = os.path.abspath(str(raw[key]))
            parent = os.path.dirname(path)
            if not os.path.isdir(parent):
                raise UsageError(f"-{key}: directory {parent!r} does not exist")
            setattr(cfg, key, path)
    if "ratinginterval" in raw:
        cfg.ratinginterval = _int("-ratinginterval", raw["ratinginterval"], lo=0)
    for key in ("recover", "ponder"):
        if key in raw:
            setattr(cfg, key, _bool(f"-{key}", raw[key]))
    for key in ("event", "site"):
        if key in raw:
            setattr(cfg, key, str(raw[key]))
    if "dask" in raw:
        cfg.dask = _dask_address(raw["dask"])
    if "progress" in raw:
        cfg.progress = _bool("-progress", raw["progress"])
    if "use-affinity" in raw:
        cfg.affinity = _affinity(raw["use-affinity"])
    _check_affinity(cfg)
    if "scale-tc" in raw:
        cfg.scale_tc = _scale_tc(raw["scale-tc"], engines)
    _check_scale_tc(cfg)
    return cfg


def _scale_tc(d: dict, engines: list[EngineConfig]) -> dict:
    from dataclasses import asdict

    from .speed import ScaleConfig

    _check_keys("-scale-tc", d, {"nps", "nodes", "engine", "maxfactor", "bench"})
    if "nps" not in d:
        raise UsageError("-scale-tc: nps= (the reference machine's bench speed) is required")
    s = ScaleConfig(nps=_int("-scale-tc: nps", d["nps"], lo=1))
    if "nodes" in d:
        s.nodes = _int("-scale-tc: nodes", d["nodes"], lo=1)
    if "maxfactor" in d:
        s.maxfactor = _float("-scale-tc: maxfactor", d["maxfactor"], lo=1.0)
    if "bench" in d:
        s.bench = str(d["bench"]).split()
    if "engine" in d:
        names = [e.name for e in engines]
        v = str(d["engine"])
        if v in names:
            s.engine = names.index(v)
        elif v.isdigit() and 1 <= int(v) <= len(engines):
            s.engine = int(v) - 1
        else:
            raise UsageError(f"-scale-tc: engine={v!r} is not one of {', '.join(names)} "
                             f"(or 1..{len(engines)})")
    if not any(e.tc is not None or e.st is not None for e in engines):
        raise UsageError("-scale-tc: no engine has a clock to scale (tc= or st=)")
    return asdict(s)


def _check_scale_tc(cfg: MatchConfig) -> None:
    if cfg.scale_tc is not None and not cfg.dask:
        raise UsageError("-scale-tc scales each Dask worker's clock by its speed: it needs "
                         "-dask ADDRESS")


def _affinity(v) -> list[int]:
    """-use-affinity's value: true (every core this process may use) or a core list."""
    from .affinity import available_cores, parse_cores

    if isinstance(v, list):
        v = ",".join(str(c) for c in v)
    if str(v).lower() in ("true", "on", "yes", ""):
        return available_cores()
    try:
        cores = parse_cores(str(v))
    except ValueError as e:
        raise UsageError(f"-use-affinity: {e}") from None
    here = available_cores()
    missing = [c for c in cores if c not in here]
    if missing:
        raise UsageError(f"-use-affinity: core {missing[0]} is not present (this machine "
                         f"offers cores {','.join(map(str, here))})")
    return cores


def _check_affinity(cfg: MatchConfig) -> None:
    if cfg.affinity is None:
        return
    if cfg.dask:
        raise UsageError("-use-affinity pins local games: it cannot be combined with -dask")
    from .affinity import slots

    try:
        slots(cfg.affinity, cfg.concurrency)
    except ValueError as e:
        raise UsageError(f"-use-affinity: {e} (-concurrency {cfg.concurrency})") from None


def _tablebase(raw: dict):
    """The -tb settings; the tables are looked for now (a path without any: exit 1)."""
    from .tablebase import TablebaseAdjudication, open_tables, parse_mode

    if "tb" not in raw:
        for key in ("tbpieces", "tbignore50", "tbadjudicate"):
            if key in raw:
                raise UsageError(f"-{key} needs -tb PATHS (the Syzygy tables)")
        return None
    tb = TablebaseAdjudication(paths=str(raw["tb"]))
    if "tbpieces" in raw:
        tb.pieces = _int("-tbpieces", raw["tbpieces"], lo=0)
    if "tbignore50" in raw:
        tb.ignore50 = _bool("-tbignore50", raw["tbignore50"])
    if "tbadjudicate" in raw:
        try:
            tb.adjudicate = parse_mode(raw["tbadjudicate"])
        except ValueError as e:
            raise UsageError(f"-tbadjudicate: {e}") from None
    try:
        tables, _ = open_tables(tb.paths)
    except ValueError as e:
        raise InputError(f"-tb: {e}") from None
    tables.close()
    tb.paths = os.pathsep.join(os.path.abspath(d) for d in tb.paths.split(os.pathsep) if d)
    return tb
def _variant(v) -> str:
    from .variant import VARIANTS

    name = str(v).strip().lower()
    name = {"chess960": "fischerandom", "frc": "fischerandom"}.get(name, name)
    if name not in VARIANTS:
        raise UsageError(f"-variant: {v!r} (expected {' or '.join(VARIANTS)})")
    return name


def _dask_address(v) -> str:
    addr = str(v).strip()
    if not addr:
        raise UsageError("-dask: empty scheduler address")
    return addr


# keys of a -config file: the flags' names (-config and -resume excepted)
CONFIG_KEYS = (
    {f[1:] for f in KV_FLAGS | VALUE_FLAGS | BOOL_FLAGS | OPTIONAL_VALUE_FLAGS}
    - {"engine", "config", "resume"}
) | {"engines"}


def load_config_file(path: str) -> dict:
    _input_file("-config", path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise InputError(f"-config: cannot read {path!r}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"-config: {path}: not a text file (JSON expected)") from None
    except json.JSONDecodeError as e:
        raise InputError(f"-config: {path}:{e.lineno}: not valid JSON: {e.msg}") from None
    if not isinstance(data, dict):
        raise InputError(f"-config: {path}: must hold a JSON object")
    bad = sorted(set(data) - CONFIG_KEYS)
    if bad:
        raise UsageError(
            f"-config: {path}: unknown key {bad[0]!r} (known: {', '.join(sorted(CONFIG_KEYS))})"
        )
    engines = data.get("engines", [])
    if not isinstance(engines, list):
        raise UsageError("-config: 'engines' must be a list")
    out = dict(data)
    out["engines"] = [_json_engine(i, e) for i, e in enumerate(engines)]
    if "each" in data:
        out["each"] = _json_engine(-1, data["each"])
    for key in ("openings", "draw", "resign", "sprt", "scale-tc"):
        if key in out and not isinstance(out[key], dict):
            raise UsageError(f"-config: {key!r} must be an object")
    return out


def _json_engine(i: int, e) -> dict:
    where = "-config: each" if i < 0 else f"-config: engines[{i}]"
    if not isinstance(e, dict):
        raise UsageError(f"{where} must be an object")
    d = dict(e)
    opts = d.get("options", {})
    if isinstance(opts, list):  # [{"name": ..., "value": ...}, ...]
        try:
            opts = {o["name"]: o["value"] for o in opts}
        except (TypeError, KeyError):
            raise UsageError(f"{where}: options must be an object or name/value list") from None
    if not isinstance(opts, dict):
        raise UsageError(f"{where}: options must be an object or name/value list")
    d["options"] = opts
    if "args" in d and isinstance(d["args"], str):
        d["args"] = d["args"].split()
    if "args" in d and not (
        isinstance(d["args"], list) and all(isinstance(a, (str, int, float)) for a in d["args"])
    ):
        raise UsageError(f"{where}: args must be a list of strings (or one string)")
    for k in ("protocol",):
        if k in d:
            d["proto"] = d.pop(k)
    bad = sorted(set(d) - (ENGINE_KEYS | {"args", "options"}))
    if bad:
        raise UsageError(
            f"{where}: unknown key {bad[0]!r} (known: "
            f"{', '.join(sorted(ENGINE_KEYS - {'arg'} | {'args', 'options'}))})"
        )
    return d


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        if k == "engines":
            out["engines"] = list(base.get("engines", [])) + list(v)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out


def default_rundir() -> str:
    base = os.path.join("runs", time.strftime("%Y%m%d-%H%M%S"))
    path, k = base, 1
    while os.path.exists(path):
        k += 1
        path = f"{base}-{k}"
    return path


def prepare(argv: list[str]):
    """(MatchConfig, rundir, resume) from a command line; raises UsageError."""
    return prepare_raw(parse_args(argv))


def prepare_raw(raw: dict, spsa: bool = False):
    """(MatchConfig, rundir, resume) from `parse_args`'s settings (which a caller such as
    `wasp-tune spsa`, `spsa` true, may have edited); raises UsageError."""
    if "resume" in raw:
        rundir = str(raw["resume"])
        others = set(raw) - RESUME_OVERRIDES - {"resume", "engines"}
        if raw["engines"] or others:
            bad = "-engine" if raw["engines"] else "-" + sorted(others)[0]
            raise UsageError(
                f"-resume: {bad} cannot be given: the run's settings are read from {rundir}"
            )
        from .store import DB_NAME, RunStore

        if not os.path.isfile(os.path.join(rundir, DB_NAME)):
            raise InputError(f"-resume: {rundir!r} holds no run ({DB_NAME} missing)")
        store = RunStore(rundir)
        saved = store.get_meta("config")
        tuned = store.get_meta("spsa")
        store.close()
        if tuned is not None and not spsa:
            raise InputError(f"-resume: {rundir!r} holds a wasp-tune spsa run: resume it with "
                             f"wasp-tune spsa -resume {rundir}")
        if saved is None:
            raise InputError(f"-resume: {rundir!r} has no saved settings")
        cfg = MatchConfig.from_dict(saved)
        if "concurrency" in raw:
            cfg.concurrency = _int("-concurrency", raw["concurrency"], lo=1)
        if "ratinginterval" in raw:
            cfg.ratinginterval = _int("-ratinginterval", raw["ratinginterval"], lo=0)
        if "dask" in raw:
            cfg.dask = _dask_address(raw["dask"])
        if "progress" in raw:
            cfg.progress = _bool("-progress", raw["progress"])
        if "log" in raw:
            cfg.log = os.path.abspath(str(raw["log"]))
        if "use-affinity" in raw:
            cfg.affinity = _affinity(raw["use-affinity"])
        _check_affinity(cfg)
        _check_scale_tc(cfg)
        return cfg, rundir, True
    if "config" in raw:
        raw = _merge(load_config_file(str(raw["config"])), {k: v for k, v in raw.items()})
        raw.pop("config", None)
    cfg = build_config(raw)
    if cfg.srand is None:
        cfg.srand = secrets.randbelow(2**31)
    rundir = str(raw.get("rundir") or default_rundir())
    if os.path.exists(os.path.join(rundir, "games.sqlite")):
        raise UsageError(f"-rundir: {rundir!r} already holds a run (use -resume {rundir})")
    # The openings the run will play are read now, so that a bad file, a bad line or a bad
    # start= fails before any game.
    if cfg.openings is not None:
        from .openings import OpeningBook, OpeningSequence
        from .schedule import make_schedule
        from .variant import VariantError

        o = cfg.openings
        try:
            book = OpeningBook(o.file, o.format, o.plies, chess960=cfg.chess960)
        except (ValueError, OSError) as e:
            raise InputError(f"-openings: {e}") from None
        try:
            seq = OpeningSequence(book, o.order, o.start, cfg.srand)
        except ValueError as e:
            raise UsageError(f"-openings: {e}") from None
        used = 1 + max(p.opening_k for p in make_schedule(
            len(cfg.engines), cfg.tournament, cfg.rounds, cfg.games, cfg.repeat, o.policy))
        try:
            for k in range(min(len(book), used)):
                seq[k]
        except VariantError as e:  # the book is fine, the command line lacks -variant
            raise UsageError(f"-openings: {e}") from None
        except ValueError as e:
            raise InputError(f"-openings: {e}") from None
    return cfg, rundir, False


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "-help"):
        print(USAGE)
        return 0
    if argv[0] == "reproduce":
        from .reproduce import main as reproduce_main

        return reproduce_main(argv[1:])
    if argv[0] in ("-compliance", "--compliance"):
        try:
            ecfg = compliance_config(argv[1:])
        except UsageError as e:
            print(f"wasp-match: error: {e}", file=sys.stderr)
            return e.code
        from . import compliance

        return compliance.main(ecfg, sys.stdout, sys.stderr)
    try:
        cfg, rundir, resume = prepare(argv)
    except UsageError as e:
        print(f"wasp-match: error: {e}", file=sys.stderr)
        return e.code
    from .tournament import Runner, stop_on_sigterm

    stop_on_sigterm()
    runner = Runner(cfg, rundir, resume=resume)
    print(f"Run directory: {rundir}", flush=True)
    return runner.run()


if __name__ == "__main__":
    sys.exit(main())
