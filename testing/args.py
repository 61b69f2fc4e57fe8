"""``wasp-match``'s argument language: cutechess-cli/fastchess flags (or a -config JSON file)
read into objects (`read`: a `MatchFlags` holding a `MatchConfig`, or the run to resume and the
session settings given with it; `read_engine`: ``-engine`` items as an `EngineConfig`).

It parses and converts; planning the match (checking the whole config, the run directory, the
seed and the openings) is `testing.plan`'s.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from wasp.cliargs import is_number

from .config import (
    InputError,
    MatchConfig,
    OpeningsConfig,
    PgnOptions,
    SprtConfig,
    UsageError,
    check_engine,
    find_cmd,
    input_file,
)
from .engine import EngineConfig
from .game import DrawAdjudication, ResignAdjudication

__all__ = ["MatchFlags", "compliance_config", "is_flag", "read", "read_engine"]

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
    "-dir",
    "-event",
    "-site",
    "-progress",
    "-tb",
    "-tbpieces",
    "-tbadjudicate",
    "-variant",
}
ALIASES = {"-dir": "-rundir"}  # the name every wasp tool gives a run directory
BOOL_FLAGS = {"-repeat", "-recover", "-ponder", "-tbignore50"}
OPTIONAL_VALUE_FLAGS = {"-use-affinity"}  # a value when the next word is not a flag
FIELDS = {"use-affinity": "affinity", "scale-tc": "scale_tc"}  # MatchConfig's other names
# the flags of MatchConfig.SESSION_FIELDS: the ones -resume takes
RESUME_FLAGS = {
    f[1:] for f in KV_FLAGS | VALUE_FLAGS | BOOL_FLAGS | OPTIONAL_VALUE_FLAGS
    if FIELDS.get(f[1:], f[1:]) in MatchConfig.SESSION_FIELDS
}

# -draw and -resign: their keys and defaults
ADJUDICATIONS = {
    "draw": (DrawAdjudication, {"movenumber": 0, "movecount": 1, "score": 0}),
    "resign": (ResignAdjudication, {"movecount": 1, "score": 1000, "twosided": False}),
}

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
            while i < n and not is_flag(argv[i]):
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
            if i >= n or (is_flag(argv[i]) and flag not in ("-srand",)):
                raise UsageError(f"{flag}: missing value")
            value = argv[i]
            i += 1
            if flag == "-config" and value.startswith("file="):
                value = value[5:]
            if flag == "-pgnout":
                value = _pgnout_items(argv, i - 1)
                while i < n and not is_flag(argv[i]):
                    i += 1
            raw[ALIASES.get(flag, flag)[1:]] = value
        elif flag in OPTIONAL_VALUE_FLAGS:
            value = "true"
            if i < n and not is_flag(argv[i]):
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
    while i < len(argv) and not (is_flag(argv[i]) and not first):
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
    check_keys("-pgnout", v, {"file", "notation", "fi", *PGN_SWITCHES})
    opts = PgnOptions()
    for k in PGN_SWITCHES:
        if k in v:
            setattr(opts, k, to_bool(f"-pgnout: {k}", v[k]))
    if "fi" in v:
        to_bool("-pgnout: fi", v["fi"])
    if "notation" in v:
        opts.notation = str(v["notation"])
    if "file" not in v:
        raise UsageError("-pgnout: file= is required")
    return str(v["file"]), opts


def is_flag(tok: str) -> bool:
    return tok.startswith("-") and "=" not in tok and not is_number(tok)


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


def to_int(where: str, v, lo: int | None = None) -> int:
    try:
        x = int(str(v))
    except ValueError:
        raise UsageError(f"{where}: expected an integer, got {v!r}") from None
    if lo is not None and x < lo:
        raise UsageError(f"{where}: must be at least {lo}, got {x}")
    return x


def to_float(where: str, v, lo: float | None = None, hi: float | None = None) -> float:
    try:
        x = float(str(v))
    except ValueError:
        raise UsageError(f"{where}: expected a number, got {v!r}") from None
    if x != x or (lo is not None and x < lo) or (hi is not None and x > hi):
        raise UsageError(f"{where}: {x} is out of range")
    return x


def to_bool(where: str, v) -> bool:
    s = str(v).lower()
    if s in ("true", "on", "yes", "1"):
        return True
    if s in ("false", "off", "no", "0"):
        return False
    raise UsageError(f"{where}: expected true/false (or on/off), got {v!r}")


def check_keys(where: str, d: dict, allowed: set[str]) -> None:
    bad = sorted(set(d) - allowed)
    if bad:
        raise UsageError(f"{where}: unknown key {bad[0]!r} (known: {', '.join(sorted(allowed))})")


def engine_config(i: int, d: dict, each: dict) -> EngineConfig:
    """Engine #i's ``-engine`` settings over ``-each``'s, as a checked EngineConfig (the command
    looked up in PATH); raises UsageError."""
    merged = {**each, **d}
    merged["options"] = {**each.get("options", {}), **d.get("options", {})}
    merged["args"] = list(each.get("args", [])) + list(d.get("args", []))
    where = f"-engine #{i + 1}"
    check_keys(where, merged, ENGINE_KEYS | {"args", "options", "arg"} - {"arg"})
    cmd = merged.get("cmd")
    if not cmd:
        raise UsageError(f"{where}: cmd= is required")
    cmd = str(cmd)
    where = f"-engine #{i + 1} ({merged.get('name') or cmd})"
    wd = merged.get("dir")
    found = find_cmd(where, cmd, wd)
    try:
        cfg = EngineConfig(
            cmd=found if os.sep not in cmd else cmd,
            name=str(merged.get("name") or os.path.basename(cmd)),
            proto=str(merged.get("proto", "uci")),
            dir=wd,
            args=[str(a) for a in merged["args"]],
            options={str(k): _optval(v) for k, v in merged["options"].items()},
            tc=str(merged["tc"]) if "tc" in merged else None,
        )
    except ValueError as e:  # the time control's text
        raise UsageError(f"{where}: tc: {e}") from None
    if "st" in merged:
        cfg.st = to_float(f"{where}: st", merged["st"])
    for key in ("nodes", "depth", "timemargin"):
        if key in merged:
            setattr(cfg, key, to_int(f"{where}: {key}", merged[key]))
    if "restart" in merged:
        cfg.restart = to_bool(f"{where}: restart", merged["restart"])
    if "startup" in merged:
        cfg.startup = to_float(f"{where}: startup", merged["startup"])
    check_engine(i, cfg)
    return cfg


def read_engine(tokens: list[str], each: list[str] = ()) -> EngineConfig:
    """``-engine KEY=VALUE ...`` items over ``-each`` items as a checked EngineConfig (its
    command looked up, one of tc=, st=, nodes=, depth= needed); raises UsageError."""
    d = _engine_items("-engine", [_kv("-engine", str(t)) for t in tokens])
    return engine_config(0, d, _engine_items("-each", [_kv("-each", str(t)) for t in each]))


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
    found = find_cmd("-compliance", cmd, d.get("dir"))
    proto = str(d.get("proto", "uci"))
    if proto not in ("uci", "xboard"):
        raise UsageError(f"-compliance: proto={proto!r} (expected uci or xboard)")
    cfg = EngineConfig(cmd=found if os.sep not in cmd else cmd, name=d.get("name") or cmd,
                       proto=proto, dir=d.get("dir"), args=list(d.get("args", [])),
                       options={k: _optval(v) for k, v in d.get("options", {}).items()})
    if "startup" in d:
        cfg.startup = to_float("-compliance: startup", d["startup"], lo=0.1)
    return cfg


def _optval(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def build_config(raw: dict, count_engines: bool = True) -> MatchConfig:
    """`parse_args`'s settings (strings, or a -config file's values) as a MatchConfig, each value
    converted and checked as it is read (the whole config is `MatchConfig.validate`'s); raises
    UsageError (InputError for a file)."""
    engines_raw = raw.get("engines") or []
    each = raw.get("each") or {}
    if "each" in raw and not isinstance(each, dict):
        raise UsageError("-each: expected KEY=VALUE settings")
    if count_engines and len(engines_raw) < 2:
        raise UsageError(f"at least two engines are needed (-engine ...), got {len(engines_raw)}")
    engines = [engine_config(i, d, each) for i, d in enumerate(engines_raw)]
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
        cfg.tournament = "roundrobin" if t == "round-robin" else t
    for key in ("rounds", "games", "srand", "maxmoves"):
        if key in raw:
            setattr(cfg, key, to_int(f"-{key}", raw[key]))
    for key, value in session_settings(raw).items():
        setattr(cfg, key, value)
    for key in ("repeat", "recover", "ponder"):
        if key in raw:
            setattr(cfg, key, to_bool(f"-{key}", raw[key]))
    if cfg.repeat and cfg.games == 1:
        cfg.games = 2  # as fastchess: -repeat plays a pair per round
    if "openings" in raw:
        o = raw["openings"]
        check_keys("-openings", o, {"file", "format", "order", "plies", "start", "policy"})
        if "file" not in o:
            raise UsageError("-openings: file= is required")
        input_file("-openings", str(o["file"]))
        cfg.openings = OpeningsConfig(
            file=os.path.abspath(str(o["file"])),
            format=o.get("format"),
            order=str(o.get("order", "sequential")),
            plies=to_int("-openings: plies", o["plies"]) if "plies" in o else None,
            start=to_int("-openings: start", o.get("start", 1)),
            policy=str(o.get("policy", "default")),
        )
    if "variant" in raw:  # issue 20: Chess960 / DFRC
        cfg.variant = _variant(raw["variant"])
    for key, (kind, defaults) in ADJUDICATIONS.items():  # -draw, -resign
        if key in raw:
            d = raw[key]
            check_keys(f"-{key}", d, set(defaults))
            setattr(cfg, key, kind(**{
                k: (to_bool if isinstance(v, bool) else to_int)(f"-{key}: {k}", d.get(k, v))
                for k, v in defaults.items()}))
    cfg.tb = _tablebase(raw)
    if "sprt" in raw:
        d = raw["sprt"]
        check_keys("-sprt", d, {"elo0", "elo1", "alpha", "beta", "model"})
        if "elo0" not in d or "elo1" not in d:
            raise UsageError("-sprt: elo0= and elo1= are required")
        cfg.sprt = SprtConfig(
            elo0=to_float("-sprt: elo0", d["elo0"]),
            elo1=to_float("-sprt: elo1", d["elo1"]),
            alpha=to_float("-sprt: alpha", d.get("alpha", 0.05)),
            beta=to_float("-sprt: beta", d.get("beta", 0.05)),
            model=str(d.get("model", "normalized")),
        )
    if "pgnout" in raw:
        raw = dict(raw)
        raw["pgnout"], cfg.pgn = _pgn_options(raw["pgnout"])
    for key in ("pgnout", "epdout"):
        if key in raw:
            setattr(cfg, key, os.path.abspath(str(raw[key])))
    for key in ("event", "site"):
        if key in raw:
            setattr(cfg, key, str(raw[key]))
    if "scale-tc" in raw:
        cfg.scale_tc = _scale_tc(raw["scale-tc"], engines)
    return cfg


def session_settings(raw: dict) -> dict:
    """The values of the session flags in `raw` (`RESUME_FLAGS`), by MatchConfig field."""
    out: dict = {}
    for key in ("concurrency", "ratinginterval"):
        if key in raw:
            out[key] = to_int(f"-{key}", raw[key])
    if "dask" in raw:
        out["dask"] = str(raw["dask"]).strip()
    if "progress" in raw:
        out["progress"] = to_bool("-progress", raw["progress"])
    if "log" in raw:
        out["log"] = os.path.abspath(str(raw["log"]))
    if "use-affinity" in raw:
        out["affinity"] = _affinity(raw["use-affinity"])
    return out


def _scale_tc(d: dict, engines: list[EngineConfig]) -> dict:
    from dataclasses import asdict

    from .speed import ScaleConfig

    check_keys("-scale-tc", d, {"nps", "nodes", "engine", "maxfactor", "bench"})
    if "nps" not in d:
        raise UsageError("-scale-tc: nps= (the reference machine's bench speed) is required")
    s = ScaleConfig(nps=to_int("-scale-tc: nps", d["nps"], lo=1))
    if "nodes" in d:
        s.nodes = to_int("-scale-tc: nodes", d["nodes"], lo=1)
    if "maxfactor" in d:
        s.maxfactor = to_float("-scale-tc: maxfactor", d["maxfactor"], lo=1.0)
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
    return asdict(s)


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
    return cores


def _tablebase(raw: dict):
    """The -tb settings (`MatchConfig.validate` looks for the tables)."""
    from .tablebase import TablebaseAdjudication, parse_mode

    if "tb" not in raw:
        for key in ("tbpieces", "tbignore50", "tbadjudicate"):
            if key in raw:
                raise UsageError(f"-{key} needs -tb PATHS (the Syzygy tables)")
        return None
    tb = TablebaseAdjudication(paths=str(raw["tb"]))
    if "tbpieces" in raw:
        tb.pieces = to_int("-tbpieces", raw["tbpieces"])
    if "tbignore50" in raw:
        tb.ignore50 = to_bool("-tbignore50", raw["tbignore50"])
    if "tbadjudicate" in raw:
        try:
            tb.adjudicate = parse_mode(raw["tbadjudicate"])
        except ValueError as e:
            raise UsageError(f"-tbadjudicate: {e}") from None
    tb.paths = os.pathsep.join(os.path.abspath(d) for d in tb.paths.split(os.pathsep) if d)
    return tb


def _variant(v) -> str:
    from .variant import VARIANTS

    name = str(v).strip().lower()
    name = {"chess960": "fischerandom", "frc": "fischerandom"}.get(name, name)
    if name not in VARIANTS:
        raise UsageError(f"-variant: {v!r} (expected {' or '.join(VARIANTS)})")
    return name


# keys of a -config file: the flags' names (-config and -resume excepted)
CONFIG_KEYS = (
    {f[1:] for f in KV_FLAGS | VALUE_FLAGS | BOOL_FLAGS | OPTIONAL_VALUE_FLAGS}
    - {"engine", "config", "resume", "dir"}
) | {"engines"}


def load_config_file(path: str) -> dict:
    input_file("-config", path)
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


def merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        if k == "engines":
            out["engines"] = list(base.get("engines", [])) + list(v)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out


@dataclass
class MatchFlags:
    """A ``wasp-match`` command line read into objects, nothing planned yet: the match's
    settings (`config`, not validated; None with ``-resume``), the run directory it names
    (``-rundir``/``-dir``, ``-resume``'s, or None) and, with ``-resume``, the session settings
    it changes (`session`: MatchConfig.SESSION_FIELDS names -> values)."""

    config: MatchConfig | None
    rundir: str | None
    session: dict = field(default_factory=dict)

    @property
    def resume(self) -> bool:
        return self.config is None


def read(argv: list[str], count_engines: bool = True) -> MatchFlags:
    """A command line (``wasp-match``'s flags, a -config file's settings under them) as a
    `MatchFlags`; fewer than two ``-engine`` flags are refused unless `count_engines` is false
    (``wasp-tune spsa`` tunes one engine and counts it itself). Raises UsageError (InputError
    for a file)."""
    raw = parse_args(argv)
    if "resume" in raw:
        rundir = str(raw["resume"])
        others = set(raw) - RESUME_FLAGS - {"resume", "engines"}
        if raw["engines"] or others:
            bad = "-engine" if raw["engines"] else "-" + sorted(others)[0]
            raise UsageError(
                f"-resume: {bad} cannot be given: the run's settings are read from {rundir}"
            )
        return MatchFlags(None, rundir, session_settings(raw))
    raw = with_config_file(raw)
    cfg = build_config(raw, count_engines)
    return MatchFlags(cfg, str(raw["rundir"]) if raw.get("rundir") else None)


def with_config_file(raw: dict) -> dict:
    """`raw` over the settings of its -config file, if it names one."""
    if "config" not in raw:
        return raw
    raw = merge(load_config_file(str(raw["config"])), raw)
    raw.pop("config", None)
    return raw
