"""The HTTP side of `wasp gui`: the page's three static files and a small JSON API over games.

    GET  /                          the board (index.html); /static/app.js, /static/style.css
    POST /api/games                 new game {fen?, white?, black?} -> state (201)
    GET  /api/games/ID?since=V&wait=S   state; with `since`, wait up to S s for a newer one
    POST /api/games/ID/move         {"move": "e7e8q"} (UCI) -> state
    POST /api/games/ID/undo         -> state
    POST /api/games/ID/settings     {white?, black?, paused?} -> state
    POST /api/games/ID/stop         the thinking engine plays now -> state
    POST /api/games/ID/close        forget the game
    GET  /api/games/ID/pgn          the game as a PGN download

The runs dashboard (`wasp gui --runs DIR`, the top-level `dashboard` package) extends this
server (`Handler`, `BoardServer`) with its own pages and endpoints.

A player is {"type": "human"} or {"type": "engine", "movetime": ms} or {"type": "engine",
"depth": d}. Errors are JSON {"error": "..."} with a 4xx status. Only the files listed in
STATIC_FILES are served, looked up by exact path: nothing else on disk is reachable.
"""

import http.server
import ipaddress
import json
import secrets
import socket
import sys
import threading
import time
from importlib import resources
from urllib.parse import parse_qs, unquote, urlsplit

from wasp.gui.game import Game, RequestError

STATIC_FILES = {  # URL path -> (file in wasp/gui/static, content type)
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/style.css": ("style.css", "text/css; charset=utf-8"),
}
MAX_BODY = 64 * 1024
MAX_GAMES = 16
MAX_WAIT = 30.0  # seconds a long poll may hold a request
IDLE_SECONDS = 3600  # a game nobody asked about for this long is forgotten


def load_static(package: str = "wasp.gui", files=None) -> dict[str, tuple[bytes, str]]:
    """URL path -> (bytes, content type) of `files` (STATIC_FILES) in `package`'s static/."""
    folder = resources.files(package) / "static"
    return {url: ((folder / name).read_bytes(), ctype)
            for url, (name, ctype) in (STATIC_FILES if files is None else files).items()}


class Games:
    """The games the server holds, by id; the oldest idle ones go when there are too many."""

    def __init__(self, engine_settings=()):
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()
        self.engine_settings = list(engine_settings)  # each game's engine options

    def create(self, body: dict) -> Game:
        game = Game(secrets.token_hex(6), body.get("fen") or _start_fen(),
                    body.get("white"), body.get("black"), engine_settings=self.engine_settings)
        with self._lock:
            now = time.monotonic()
            for gid, g in list(self._games.items()):
                if now - g.last_seen > IDLE_SECONDS:
                    self._games.pop(gid).close()
            while len(self._games) >= MAX_GAMES:
                oldest = min(self._games.values(), key=lambda g: g.last_seen)
                self._games.pop(oldest.id).close()
            self._games[game.id] = game
        return game

    def get(self, gid: str) -> Game:
        with self._lock:
            game = self._games.get(gid)
        if game is None:
            raise RequestError(f"no game {gid!r} (the server may have restarted: "
                               "start a new game)", 404)
        return game

    def close(self, gid: str) -> None:
        game = self.get(gid)
        with self._lock:
            self._games.pop(gid, None)
        game.close()

    def close_all(self) -> None:
        with self._lock:
            games, self._games = list(self._games.values()), {}
        for g in games:
            g.close()


def _start_fen() -> str:
    from wasp.fen import STARTING_FEN

    return STARTING_FEN


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


class Handler(http.server.BaseHTTPRequestHandler):
    """Routes requests to the static files and the game API."""

    server_version = "Wasp-Py-board"
    protocol_version = "HTTP/1.1"
    server: "BoardServer"

    # -- plumbing ----------------------------------------------------------------------
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, ctype: str, extra=None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message, "status": status})

    def _read_body(self) -> bytes:
        """The request body, read before anything can fail, so a kept-alive connection
        never sees a left-over body as the next request."""
        length = self.headers.get("Content-Length")
        if length is None:
            if self.headers.get("Transfer-Encoding"):
                self.close_connection = True
                raise RequestError("chunked bodies are not accepted: send Content-Length", 411)
            return b""
        try:
            n = int(length)
        except ValueError:
            self.close_connection = True
            raise RequestError(f"bad Content-Length {length!r}") from None
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            raise RequestError(f"body too large ({n} bytes, at most {MAX_BODY})", 413)
        return self.rfile.read(n)

    def _body(self) -> dict:
        """The body as a JSON object ({} when empty)."""
        raw = self._raw
        if not raw.strip():
            return {}
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise RequestError("send JSON with Content-Type: application/json", 415)
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise RequestError(f"malformed JSON: {e}") from None
        if not isinstance(data, dict):
            raise RequestError("the JSON body must be an object, like {\"move\": \"e2e4\"}")
        return data

    def _host_ok(self) -> bool:
        """When listening on loopback, refuse other Host names (DNS rebinding)."""
        if not _loopback(self.server.host):
            return True
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return _loopback(name)

    def _dispatch(self, method: str) -> None:
        try:
            self._raw = b""
            self._raw = self._read_body()
            if not self._host_ok():
                raise RequestError(f"unexpected Host header {self.headers.get('Host')!r}", 403)
            url = urlsplit(self.path)
            path = url.path
            if path.startswith("/api/"):
                self._api(method, path, parse_qs(url.query))
            elif method in ("GET", "HEAD") and path in self.server.static:
                body, ctype = self.server.static[path]
                self._send(200, body, ctype)
            elif path in self.server.static:
                raise RequestError(f"{method} is not allowed on {path}", 405)
            else:
                raise RequestError(f"not found: {unquote(path)!r} (the board is at /)", 404)
        except RequestError as e:
            self._error(e.status, str(e))
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # a bug: say so, keep serving
            self._error(500, f"internal error: {type(e).__name__}: {e}")
            print(f"wasp gui: {type(e).__name__}: {e}", file=sys.stderr)

    def do_GET(self):  # noqa: N802 (the base class's name)
        self._dispatch("GET")

    def do_HEAD(self):  # noqa: N802
        self._dispatch("HEAD")

    def do_POST(self):  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self):  # noqa: N802
        self._dispatch("PUT")

    def do_DELETE(self):  # noqa: N802
        self._dispatch("DELETE")

    # -- the API -----------------------------------------------------------------------
    def _api(self, method: str, path: str, query: dict) -> None:
        if path == "/api/runs" or path.startswith("/api/run/") or path == "/api/run":
            raise RequestError("no runs directory: start the server with "
                               "'wasp gui --runs DIR'", 404)
        games = self.server.games
        parts = path.split("/")[2:]  # after "/api/"
        if parts == ["games"]:
            if method != "POST":
                raise RequestError("use POST /api/games to start a game", 405)
            game = games.create(self._body())
            self._json(201, game.state())
            return
        if len(parts) < 2 or parts[0] != "games":
            raise RequestError(f"no API endpoint {path!r}", 404)
        game = games.get(parts[1])
        action = parts[2] if len(parts) == 3 else None
        if len(parts) > 3 or (len(parts) == 3 and not action):
            raise RequestError(f"no API endpoint {path!r}", 404)
        if action is None:
            if method not in ("GET", "HEAD"):
                raise RequestError(f"{method} is not allowed on {path}", 405)
            self._poll(game, query)
            return
        if action == "pgn":
            if method not in ("GET", "HEAD"):
                raise RequestError(f"{method} is not allowed on {path}", 405)
            name = f"wasp-{game.created.strftime('%Y%m%d-%H%M%S')}.pgn"
            self._send(200, game.pgn().encode(), "application/x-chess-pgn; charset=utf-8",
                       {"Content-Disposition": f'attachment; filename="{name}"'})
            return
        posts = {"move": self._move, "undo": self._undo, "settings": self._settings,
                 "stop": self._stop, "close": self._close}
        if action not in posts:
            raise RequestError(f"no API endpoint {path!r}", 404)
        if method != "POST":
            raise RequestError(f"use POST on {path}", 405)
        posts[action](game, self._body())

    def _poll(self, game: Game, query: dict) -> None:
        try:
            since = int(query.get("since", ["0"])[0])
            wait = float(query.get("wait", ["0"])[0])
        except ValueError:
            raise RequestError("since must be a whole number and wait a number") from None
        if wait > 0 and since:
            game.wait_for_change(since, min(wait, MAX_WAIT))
        self._json(200, game.state())

    def _move(self, game: Game, body: dict) -> None:
        if "move" not in body:
            raise RequestError("expected {\"move\": \"e2e4\"} (a move in UCI form)")
        game.human_move(body["move"])
        self._json(200, game.state())

    def _undo(self, game: Game, body: dict) -> None:
        game.undo()
        self._json(200, game.state())

    def _settings(self, game: Game, body: dict) -> None:
        unknown = set(body) - {"white", "black", "paused"}
        if unknown:
            raise RequestError(f"unknown settings {sorted(unknown)}: use white, black, paused")
        game.configure(body.get("white"), body.get("black"), body.get("paused"))
        self._json(200, game.state())

    def _stop(self, game: Game, body: dict) -> None:
        game.move_now()
        self._json(200, game.state())

    def _close(self, game: Game, body: dict) -> None:
        self.server.games.close(game.id)
        self._json(200, {"closed": game.id})


class BoardServer(http.server.ThreadingHTTPServer):
    """A threading HTTP server holding the games and the static files."""

    daemon_threads = True
    allow_reuse_address = True
    handler = Handler  # a subclass serves more (the runs dashboard)
    reach = "board"  # what other machines can reach when it listens beyond loopback

    def __init__(self, host: str = "127.0.0.1", port: int = 8000, verbose: bool = False,
                 engine_settings=()):
        if ":" in host.strip("[]"):
            self.address_family = socket.AF_INET6
        super().__init__((host.strip("[]"), port), self.handler)
        self.host = host
        self.verbose = verbose
        self.static = load_static()
        self.games = Games(engine_settings)

    def notes(self) -> list[str]:
        """Lines printed after the board's address when the server starts."""
        return []

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def server_close(self) -> None:
        if hasattr(self, "games"):  # not yet there when binding the port failed
            self.games.close_all()
        super().server_close()


def serve(host: str = "127.0.0.1", port: int = 8000, verbose: bool = False,
          engine_settings=(), make_server=BoardServer) -> int:
    """Serve the board until Ctrl-C; returns the exit code. `engine_settings`: (UCI option
    name, value) pairs every game's engine gets (a book, EvalFile, SearchFile, Hash, ...);
    `make_server(host, port, verbose, engine_settings)`: the server (a `BoardServer`)."""
    from wasp.engine import Engine
    from wasp.warmup import warmup

    print("Wasp-Py board: loading the engine ...", flush=True)
    engine = Engine()
    try:
        for message in engine.configure(engine_settings):  # bad settings: say so now
            print(message, flush=True)
    except ValueError as e:
        print(f"wasp gui: error: {e}", file=sys.stderr)
        return 1
    warmup(kernels=engine.evaluation_group())  # the games' search, then the board's queries
    warmup(kernels="tools")
    try:
        server = make_server(host, port, verbose, engine_settings)
    except OSError as e:
        print(f"wasp gui: cannot listen on {host}:{port}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"Wasp-Py board at {server.url}  (Ctrl-C to stop)", flush=True)
    for line in server.notes():
        print(line, flush=True)
    if not _loopback(host):
        print(f"warning: listening on {host}: other machines can reach this {server.reach}",
              file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopped", flush=True)
    finally:
        server.server_close()
    return 0
