"""Option parsing shared by the command lines that run tournaments (``hod.benchmarks.tournament``,
``hod.benchmarks.ladder``, ``hod.training.evaluate``): the ``--env-kwargs`` JSON object and the
``--out PREFIX`` folder, checked before any game is played."""
from __future__ import annotations

import argparse
import json
import os

from hod.core.errors import ConfigError

from .schedule import SEATINGS


def parse_json_object(text: str, flag: str, example: str) -> dict:
    """A command-line option whose value is a JSON object (``--env-kwargs``, ``--baseline-options``...).

    Args:
        text: the option's value. flag: the option's name, for the messages. example: a JSON
            object shown in the error messages.

    Raises:
        ConfigError: not valid JSON, or JSON that is not an object (the message shows a legal one).
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{flag} is not valid JSON: {e}; legal: a JSON object such as '{example}'") from e
    if not isinstance(value, dict):
        raise ConfigError(f"{flag} must be a JSON object, got {text}; legal: a JSON object (legal: e.g. '{example}')")
    return value


def parse_env_kwargs(text: str, example: str = '{"reward_scheme": "points"}') -> dict:
    """The ``--env-kwargs`` option: a JSON object of extra ``raw_env`` options
    (:func:`parse_json_object`).

    Raises:
        ConfigError: not valid JSON, or JSON that is not an object (the message shows a legal one).
    """
    return parse_json_object(text, "--env-kwargs", example)


def prepare_out_prefix(prefix: str) -> None:
    """Make the folder of ``--out PREFIX`` (files ``PREFIX.md``, ``.json``, ``.png``) and check it
    can be written, so a bad path fails before playing, not after.

    Raises:
        ConfigError: the folder cannot be created or written (the system's reason is named).
    """
    folder = os.path.dirname(os.path.abspath(prefix))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out {prefix}: cannot create the folder {folder}: {e}; legal: a path in a "
                          f"writable folder") from e
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"--out {prefix}: cannot write in {folder}; legal: a path in a writable folder")


def add_seating_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """Add ``--seating {auto,cyclic,permutations}`` (default ``auto``) to ``parser``: the seat
    orders of a tournament (:func:`hod.evaluation.schedule.resolve_seating`)."""
    parser.add_argument("--seating", choices=("auto",) + tuple(SEATINGS), default="auto", help=help_text)
