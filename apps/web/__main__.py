"""``python -m hod.apps.web``: start the web app on 127.0.0.1 and print its address."""
from __future__ import annotations

import argparse
import socket
import sys
from typing import Optional, Sequence

from hod.core.commands import long_command


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Parse ``--host`` / ``--port`` / ``--allowed-host``, bind, print ``Play at
    http://HOST:PORT/`` and serve until Ctrl-C or SIGTERM (a graceful shutdown, exit code 0;
    :mod:`hod.core.commands`), answering only the ``Host`` names of the address it listens on and
    the ``--allowed-host`` names (:func:`hod.apps.web.app.served_hosts`). A bad option (exit code
    2, one line naming the legal values), a port that cannot be bound or a missing ``web`` extra
    (exit code 2 and the reason) ends it."""
    ap = argparse.ArgumentParser(prog="python -m hod.apps.web",
                                 description="Play Tapeo or Ronda Robada against the computer in your browser.")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    ap.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                    help="another name or address the browser reaches the server by (repeatable; no port; "
                         "*.example.com for every name under a domain). Requests naming any other Host are "
                         "refused (DNS rebinding); the address it listens on and, for a loopback or every "
                         "address, 127.0.0.1, localhost and [::1] are always served")
    args = ap.parse_args(argv)
    if not 0 <= args.port <= 65535:
        ap.error(f"--port {args.port}: legal values 0..65535")
    try:
        import uvicorn

        from .app import create_app, served_hosts
    except ImportError as e:
        print(f"error: {e}; the web app needs the web extra: pip install 'house-of-decks-rl[web]'", file=sys.stderr)
        return 2
    try:
        hosts = served_hosts(args.host, args.allowed_host)
    except ValueError as e:
        ap.error(f"--host/--allowed-host: {e}")
    try:
        sock = socket.create_server((args.host, args.port))
    except OSError as e:
        print(f"error: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 2
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    hosts = list(dict.fromkeys(hosts + served_hosts(host)))     # the bound address too (--host localhost: 127.0.0.1)
    # uvicorn shuts down gracefully on SIGINT and SIGTERM, then raises the signal again under the
    # handlers it found: long_command's, which make SIGTERM (and a SIGINT inherited ignored) a
    # KeyboardInterrupt as Ctrl-C is, rather than a death by signal (before the server starts too)
    with long_command():
        try:
            print(f"House Of Decks: play at http://{shown}:{port}/  (Ctrl-C stops the server)", flush=True)
            server = uvicorn.Server(uvicorn.Config(create_app(allowed_hosts=hosts), log_level="warning"))
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
