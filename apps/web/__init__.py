"""Play against the computer in the browser: ``python -m hod.apps.web [--host 127.0.0.1] [--port 8000]``.

A local web server (Starlette, run by uvicorn) whose page lets a person pick the game, the table
size and a difficulty (easy / medium / hard: the strongest bot of that strength label,
:mod:`hod.apps.web.difficulty`; under "Advanced" their seat, the seed and any registered bot per
seat) and play a whole game, with the rules panel and scoring legend of :mod:`hod.apps.web.guide`. The game runs on the server through the terminal
play sessions (:mod:`hod.apps.web.games`); the page draws what the person's seat may know and
posts the chosen action (:mod:`hod.apps.web.app` lists the routes). docs/web.md is the user's page.

starlette, uvicorn, pydantic and secure (the hardening headers) are the ``web`` extra (``pip
install 'house-of-decks-rl[web]'``); the names below are imported when first used. The server
answers only its own page (its Host names, same-origin POSTs, JSON bodies: docs/web.md, "Only your
page can drive it").
"""
from __future__ import annotations

import importlib

#: Where each public name lives.
_NAMES = {"create_app": "app", "GAMES": "games", "GameStore": "games", "RobadaGame": "games", "TapeoGame": "games",
          "WebGame": "games"}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
