"""A board in the browser: `wasp gui` serves a page to play and watch the engine on localhost.

The engine runs in the server (`wasp.gui.game`); the page (`static/`) draws the board and
talks to the JSON API in `wasp.gui.server`.
"""

from wasp.gui.server import BoardServer, serve

__all__ = ["BoardServer", "serve"]
