"""``python -m hod.apps.web``: start the web app on 127.0.0.1 and print its address."""
from __future__ import annotations

import argparse
import socket
import sys
from typing import Optional, Sequence

from hod.core.commands import long_command


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Parse ``--host`` / ``--port``, bind, print ``Play at http://HOST:PORT/`` and serve until
    Ctrl-C or SIGTERM (a graceful shutdown, exit code 0; :mod:`hod.core.commands`). A port that cannot be bound, or a missing ``web`` extra, ends with exit
    code 2 and the reason."""
    ap = argparse.ArgumentParser(prog="python -m hod.apps.web",
                                 description="Play Tapeo or Ronda Robada against the computer in your browser.")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    args = ap.parse_args(argv)
    if not 0 <= args.port <= 65535:
        ap.error(f"--port {args.port}: legal values 0..65535")
    try:
        import uvicorn

        from .app import create_app
    except ImportError as e:
        print(f"error: {e}; the web app needs the web extra: pip install 'house-of-decks-rl[web]'", file=sys.stderr)
        return 2
    try:
        sock = socket.create_server((args.host, args.port))
    except OSError as e:
        print(f"error: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 2
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    # uvicorn shuts down gracefully on SIGINT and SIGTERM, then raises the signal again under the
    # handlers it found: long_command's, which make SIGTERM (and a SIGINT inherited ignored) a
    # KeyboardInterrupt as Ctrl-C is, rather than a death by signal (before the server starts too)
    with long_command():
        try:
            print(f"House Of Decks: play at http://{shown}:{port}/  (Ctrl-C stops the server)", flush=True)
            server = uvicorn.Server(uvicorn.Config(create_app(), log_level="warning"))
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
