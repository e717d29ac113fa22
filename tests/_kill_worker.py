"""Test helper run as a script: ``python tests/_kill_worker.py <tournament arguments>`` runs the
tournament command with one more Tapeo bot, ``killer``, a random bot that kills its own process
with SIGKILL when it starts its N-th game (``HOD_KILL_AT_GAME=N``) in a worker process (never in
the main process).

The bot is registered at import, at the top of this file: worker processes made by ``spawn`` or
``forkserver`` import the main script again (as ``__mp_main__``), so they know the bot as well
as forked ones, which inherit the registry."""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys

from hod import agents
from hod.agents.base import RandomBot


class KillerBot(RandomBot):
    """Plays like ``random``; SIGKILLs its worker process at the start of its N-th game."""

    def __init__(self, seed=None, **options):
        super().__init__(seed, **options)
        self.games = 0

    def reset(self, seed=None):
        super().reset(seed)
        self.games += 1
        if multiprocessing.parent_process() is not None and self.games == int(os.environ["HOD_KILL_AT_GAME"]):
            os.kill(os.getpid(), signal.SIGKILL)


agents.register("tapeo", "killer", KillerBot)

if __name__ == "__main__":
    from hod.benchmarks.tournament import main

    sys.exit(main(sys.argv[1:]))
