"""The HTTP side of the runs dashboard: the board's server (`wasp.gui.server`) plus read-only
views of the runs under a directory (`dashboard.runs`).

    GET  /runs                      the dashboard page (runs.html); /static/runs.js, runs.css
    GET  /api/runs                  the runs, newest first, with kind, state and progress
    GET  /api/run?id=RUN            one run's page data (RUN: its path under DIR)
    GET  /api/run/games?id=RUN&engine=&result=&termination=&offset=&limit=
    GET  /api/run/game?id=RUN&game=N    one game, move by move, for the board
"""

from dashboard.runs import RunError, Runs
from wasp.gui.game import RequestError
from wasp.gui.server import BoardServer, Handler, load_static

STATIC_FILES = {  # URL path -> (file in dashboard/static, content type)
    "/runs": ("runs.html", "text/html; charset=utf-8"),
    "/static/runs.js": ("runs.js", "text/javascript; charset=utf-8"),
    "/static/runs.css": ("runs.css", "text/css; charset=utf-8"),
}
ENDPOINTS = ("/api/runs", "/api/run", "/api/run/games", "/api/run/game")


class RunsHandler(Handler):
    """The board's routes, and the dashboard's read-only views."""

    def _api(self, method: str, path: str, query: dict) -> None:
        if path in ENDPOINTS or path.startswith("/api/run/"):
            self._runs(method, path, query)
        else:
            super()._api(method, path, query)

    def _runs(self, method: str, path: str, query: dict) -> None:
        if method not in ("GET", "HEAD"):
            raise RequestError(f"{method} is not allowed on {path}", 405)

        def arg(name):
            values = query.get(name)
            if not values or not values[0]:
                raise RequestError(f"{path} needs ?{name}=...")
            return values[0]

        runs = self.server.runs
        try:
            if path == "/api/runs":
                data = runs.list()
            elif path == "/api/run":
                data = runs.detail(arg("id"))
            elif path == "/api/run/games":
                data = runs.games(arg("id"), query)
            elif path == "/api/run/game":
                data = runs.game(arg("id"), arg("game"))
            else:
                raise RequestError(f"no API endpoint {path!r}", 404)
        except RunError as e:
            raise RequestError(str(e), e.status) from None
        self._json(200, data)


class DashboardServer(BoardServer):
    """The board's server with the dashboard of the runs under `runs_dir` at /runs."""

    handler = RunsHandler
    reach = "board and the runs"

    def __init__(self, host: str = "127.0.0.1", port: int = 8000, verbose: bool = False,
                 engine_settings=(), runs_dir: str = "."):
        runs = Runs(runs_dir)  # RunError when it is not a directory
        super().__init__(host, port, verbose, engine_settings)
        self.static.update(load_static("dashboard", STATIC_FILES))
        self.runs = runs

    def notes(self) -> list[str]:
        return [f"runs under {self.runs.root} at {self.url}runs"]

