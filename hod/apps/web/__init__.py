"""Play against the computer in the browser: ``python -m hod.apps.web [--host 127.0.0.1] [--port 8000]``.

A local web server (Starlette, run by uvicorn) whose page lets a person pick the game, the table
size and the opponents (every registered bot with its strength label; the shipped PPO opponents
by default) and play a whole game. The game runs on the server through the terminal play
sessions (:mod:`hod.apps.web.games`); the page draws what the person's seat may know and posts
the chosen action (:mod:`hod.apps.web.app` lists the routes). docs/web.md is the user's page.
"""
from .app import create_app
from .games import GAMES, GameStore, RobadaGame, TapeoGame, WebGame

__all__ = ["GAMES", "GameStore", "RobadaGame", "TapeoGame", "WebGame", "create_app"]
