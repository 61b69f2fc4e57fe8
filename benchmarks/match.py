"""Benchmark of the match runner against fastchess and cutechess-cli.

Stockfish against Stockfish, 40 games at tc=1+0.01, concurrency 2, -repeat,
openings UHO_4060_v2.epd in sequential order from a fixed start; the median
of 3 runs. Prints our figures beside the anchor figures measured on these
machines with fastchess and cutechess-cli, and what the run store keeps per game
(its size, and the share of the compressed transcripts and stderr) with the CPU
that recording them costs (replayed through testing.process.Recording and zlib).

    python benchmarks/match.py [--runs 3] [--games 40] [--openings PATH] [--fastchess PATH]

Where fastchess or cutechess-cli is installed (on PATH, or --fastchess / --cutechess PATH),
it plays the same match in alternation with ours, run for run, and its figures from this run
are printed beside ours (wall time, time losses, and the CPU of the runner process itself, read
from /proc while it runs); otherwise the anchors measured earlier stand in.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_OPENINGS = os.path.join(ROOT, "..", "shared", "data", "openings", "UHO_4060_v2.epd")

# Measured on these machines (2 cores), same match settings.
ANCHORS = {
    "fastchess": {"wall_s": 64.6, "time_losses": 0, "cpu_per_game_s": 0.04},
    "cutechess-cli": {"wall_s": 63.6, "time_losses": 0, "cpu_per_game_s": 0.19},
}


def find_engine(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/games")
    if path is None:
        sys.exit(f"{name} not found (apt-get install {name})")
    return path


def one_run(stockfish: str, openings: str, games: int, start: int, rundir: str) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "testing.cli",
        "-engine",
        f"cmd={stockfish}",
        "name=sf1",
        "-engine",
        f"cmd={stockfish}",
        "name=sf2",
        "-each",
        "proto=uci",
        "tc=1+0.01",
        "-concurrency",
        "2",
        "-rounds",
        str(games // 2),
        "-repeat",
        "-openings",
        f"file={openings}",
        "format=epd",
        "order=sequential",
        f"start={start}",
        "-ratinginterval",
        "0",
        "-progress",
        "off",
        "-rundir",
        rundir,
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"run failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    with open(os.path.join(rundir, "summary.json")) as f:
        s = json.load(f)
    s["process_wall_s"] = wall
    s.update(store_figures(rundir))
    return s


def _own_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of process `pid` itself, not its children."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def peer_run(runner: str, stockfish: str, openings: str, games: int, start: int,
             rundir: str) -> dict:
    """The same match under fastchess or cutechess-cli (their flags are the same here): wall
    time, time losses (from its PGN) and the CPU of the runner process itself (sampled from
    /proc every 50 ms; the last sample before it exits)."""
    import chess.pgn

    os.makedirs(rundir, exist_ok=True)
    pgn = os.path.join(rundir, "games.pgn")
    cmd = [runner, "-engine", f"cmd={stockfish}", "name=sf1", "-engine", f"cmd={stockfish}",
           "name=sf2", "-each", "proto=uci", "tc=1+0.01", "-concurrency", "2", "-rounds",
           str(games // 2), "-games", "2", "-repeat", "-openings", f"file={openings}",
           "format=epd", "order=sequential", f"start={start}", "-pgnout",
           pgn if "cutechess" in os.path.basename(runner) else f"file={pgn}",
           "-ratinginterval", "0"]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            cwd=rundir)
    cpu = 0.0
    while proc.poll() is None:
        sample = _own_cpu(proc.pid)
        cpu = sample if sample is not None else cpu
        time.sleep(0.05)
    wall = time.monotonic() - t0
    err = proc.stderr.read()
    if proc.returncode != 0:
        sys.exit(f"{runner} failed ({proc.returncode}):\n{err[-3000:]}")
    n = losses = 0
    with open(pgn) as f:
        while (g := chess.pgn.read_headers(f)) is not None:
            n += 1
            losses += g.get("Termination", "") == "time forfeit"
    return {"wall_s": wall, "time_losses": losses, "cpu_per_game_s": cpu / n if n else None,
            "games": n}


def store_figures(rundir: str) -> dict:
    """Bytes the run store holds per game, and the CPU per game of recording the
    transcripts: their lines fed back through Recording (one chunk a line: more calls
    than the engines' real reads) and compressed as the runner does."""
    import sqlite3

    sys.path.insert(0, ROOT)
    from testing.process import Recording
    from testing.store import compress, decompress

    files = [os.path.join(rundir, n) for n in os.listdir(rundir) if n.startswith("games.sqlite")]
    size = sum(os.path.getsize(f) for f in files)
    db = sqlite3.connect(os.path.join(rundir, "games.sqlite"))
    try:
        games = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        logs = db.execute("SELECT kind, codec, raw_size, data FROM game_logs").fetchall()
    finally:
        db.close()
    cpu = 0.0
    raw = stored = 0
    for kind, codec, n, blob in logs:
        raw += n
        stored += len(blob)
        if kind != "transcript":
            continue
        lines = [ln.split(b" ", 2) for ln in decompress(codec, blob).splitlines()]
        rec = Recording()
        t0 = time.process_time()
        for i, parts in enumerate(lines):
            if len(parts) == 3:
                rec.add(float(i), parts[1], parts[2] + b"\n")
        text, _ = rec.take()
        compress(text)
        cpu += time.process_time() - t0
    return {
        "store_bytes_per_game": size / games if games else None,
        "logs_text_bytes_per_game": raw / games if games else None,
        "logs_stored_bytes_per_game": stored / games if games else None,
        "recording_cpu_per_game_s": cpu / games if games else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--start", type=int, default=1, help="first opening (1-based)")
    ap.add_argument("--openings", default=DEFAULT_OPENINGS)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--fastchess", default=shutil.which("fastchess"),
                    help="a fastchess binary to run beside ours (default: fastchess on PATH)")
    ap.add_argument("--cutechess", default=shutil.which("cutechess-cli"),
                    help="a cutechess-cli binary to run beside ours (default: on PATH)")
    args = ap.parse_args()
    stockfish = find_engine("stockfish")
    openings = os.path.abspath(args.openings)
    if not os.path.isfile(openings):
        sys.exit(f"openings file not found: {openings}")
    runs = []
    peers = {name: path for name, path in (("fastchess", args.fastchess),
                                           ("cutechess-cli", args.cutechess)) if path}
    peer_runs: dict[str, list] = {name: [] for name in peers}
    with tempfile.TemporaryDirectory(prefix="wasp-match-bench-") as tmp:
        for i in range(args.runs):
            for name, path in peers.items():  # alternating: all meet the same machine
                f = peer_run(path, stockfish, openings, args.games, args.start,
                             os.path.join(tmp, f"{name}{i}"))
                peer_runs[name].append(f)
                print(f"{name} run {i + 1}: wall {f['wall_s']:.1f} s, time losses "
                      f"{f['time_losses']}, its own CPU {f['cpu_per_game_s']:.3f} s/game",
                      flush=True)
            s = one_run(stockfish, openings, args.games, args.start, os.path.join(tmp, f"r{i}"))
            runs.append(s)
            print(
                f"run {i + 1}: wall {s['process_wall_s']:.1f} s, "
                f"time losses {s['time_losses_this_session']}, "
                f"runner CPU {s['runner_cpu_per_game_s']:.3f} s/game playing "
                f"({s.get('process_cpu_per_game_s', float('nan')):.3f} with start-up), "
                f"latency median {s['latency_median_ms']:.2f} ms "
                f"p99 {s['latency_p99_ms']:.2f} ms max {s['latency_max_ms']:.2f} ms; store "
                f"{s['store_bytes_per_game'] / 1024:.1f} KB/game",
                flush=True,
            )
    med = {
        "wall_s": statistics.median(r["process_wall_s"] for r in runs),
        "time_losses": statistics.median(r["time_losses_this_session"] for r in runs),
        "cpu_per_game_s": statistics.median(r["runner_cpu_per_game_s"] for r in runs),
        "process_cpu_per_game_s": statistics.median(r["process_cpu_per_game_s"] for r in runs),
        "latency_median_ms": statistics.median(r["latency_median_ms"] for r in runs),
        "latency_p99_ms": statistics.median(r["latency_p99_ms"] for r in runs),
        "store_bytes_per_game": statistics.median(r["store_bytes_per_game"] for r in runs),
        "logs_text_bytes_per_game": statistics.median(r["logs_text_bytes_per_game"]
                                                      for r in runs),
        "logs_stored_bytes_per_game": statistics.median(r["logs_stored_bytes_per_game"]
                                                        for r in runs),
        "recording_cpu_per_game_s": statistics.median(r["recording_cpu_per_game_s"]
                                                      for r in runs),
    }
    print()
    print(
        f"Stockfish vs Stockfish, {args.games} games, tc=1+0.01, concurrency 2, -repeat, "
        f"median of {args.runs} runs"
    )
    anchors = dict(ANCHORS)
    for name, rs in peer_runs.items():  # measured in this run: it replaces the stored anchor
        anchors[name] = {
            "wall_s": statistics.median(r["wall_s"] for r in rs),
            "time_losses": statistics.median(r["time_losses"] for r in rs),
            "cpu_per_game_s": statistics.median(r["cpu_per_game_s"] for r in rs)}
    print(f"{'runner':<24} {'wall s':>8} {'time losses':>12} {'runner CPU s/game':>18}")
    for name, a in anchors.items():
        label = name + (" (this run)" if name in peer_runs else " (anchor)")
        print(f"{label:<24} {a['wall_s']:>8.1f} {a['time_losses']:>12g} "
              f"{a['cpu_per_game_s']:>18.3f}")
    print(
        f"{'wasp-match':<24} {med['wall_s']:>8.1f} {med['time_losses']:>12g} "
        f"{med['cpu_per_game_s']:>18.3f}"
    )
    best = min(a["wall_s"] for a in anchors.values())
    for name in peer_runs:
        print(f"\nwasp-match wall / {name} wall (this run): "
              f"{med['wall_s'] / anchors[name]['wall_s']:.3f}")
    print(
        f"\nwasp-match wall / best anchor: {med['wall_s'] / best:.3f}; per-move latency "
        f"median {med['latency_median_ms']:.2f} ms, p99 {med['latency_p99_ms']:.2f} ms; "
        f"runner CPU with interpreter start-up and imports "
        f"{med['process_cpu_per_game_s']:.3f} s/game (one-off numpy/scipy import for the "
        f"statistics: {statistics.median(r['statistics_import_cpu_s'] for r in runs):.2f} s)"
    )
    print(
        f"run store {med['store_bytes_per_game'] / 1024:.1f} KB/game, of which the engines' "
        f"transcripts and stderr {med['logs_stored_bytes_per_game'] / 1024:.1f} KB "
        f"(zlib; {med['logs_text_bytes_per_game'] / 1024:.1f} KB as text); recording them "
        f"costs {med['recording_cpu_per_game_s'] * 1e3:.1f} ms CPU/game (within the runner "
        f"CPU above)"
    )
    if "fastchess" not in peer_runs:
        print("fastchess was not run here (not installed, or --fastchess ''): its figures "
              "above are the anchors measured earlier on these machines")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"median": med, "runs": runs, "anchors": anchors,
                       "peer_runs": peer_runs}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
