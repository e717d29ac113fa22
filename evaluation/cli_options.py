"""Option parsing shared by the command lines (``hod.benchmarks.*``, ``hod.training.*``,
``hod.apps.*``): the ``--env-kwargs`` JSON object and the ``--out PREFIX`` folder, checked before
any game is played, and the argparse ``type=`` functions of bounded numbers (:func:`int_option`,
:func:`float_option`, :data:`SEED_OPTION`, :data:`GAMES_OPTION`, :func:`players_option`), so
that a bad number ends with argparse's usage error (status 2) naming the legal range."""
from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
from typing import Callable, Optional, Sequence

from hod.core.atomic import atomic_write_many
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game

from .report import OUTPUT_SUFFIXES as OUT_SUFFIXES   # the files of --out PREFIX (save_outputs)
from .schedule import MAX_GAMES, SEATINGS


def int_option(low: int, high: Optional[int] = None, shown: Optional[str] = None) -> Callable[[str], int]:
    """An argparse ``type=``: the integer of the text if it lies in ``low..high`` (no upper
    bound when ``high`` is None); ``shown`` writes the range in the message (e.g. ``"0..2**64-1"``).

    Returns:
        a function ``str -> int`` raising ``argparse.ArgumentTypeError`` (usage error, status 2)
        with ``invalid value '<text>'; legal values: an integer in <low>..<high>`` otherwise.
    """
    legal = (f"an integer in {shown or f'{low}..{high}'}" if high is not None else f"an integer >= {low}")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid value {text!r}; legal values: {legal}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"invalid value {text!r}; legal values: {legal}")
        return value

    parse.__name__ = f"int {low}..{'' if high is None else high}"
    return parse


def float_option(low: float, high: Optional[float] = None, low_open: bool = False,
                 high_open: bool = False) -> Callable[[str], float]:
    """An argparse ``type=``: the finite number of the text if it lies between ``low`` and
    ``high`` (open ends excluded; no upper bound when ``high`` is None). ``nan`` and ``inf`` are
    refused.

    Returns:
        a function ``str -> float`` raising ``argparse.ArgumentTypeError`` naming the range.
    """
    left, right = ("(" if low_open else "["), (")" if high_open or high is None else "]")
    legal = f"a finite number in {left}{low:g}, {'inf' if high is None else f'{high:g}'}{right}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid value {text!r}; legal values: {legal}") from None
        bad = (not math.isfinite(value) or value < low or (low_open and value == low)
               or (high is not None and (value > high or (high_open and value == high))))
        if bad:
            raise argparse.ArgumentTypeError(f"invalid value {text!r}; legal values: {legal}")
        return value

    parse.__name__ = "number"
    return parse


#: ``--seed`` of the commands whose seeds feed ``numpy.random.SeedSequence`` and the games' deals:
#: an integer in 0..2**64-1 (the deals' seed space, :data:`hod.core.deal.SEED_LIMIT`).
SEED_OPTION = int_option(0, 2**64 - 1, "0..2**64-1")
#: ``--games`` of the tournament commands: 1..:data:`hod.evaluation.schedule.MAX_GAMES`.
GAMES_OPTION = int_option(1, MAX_GAMES)


def players_option(text: str) -> int:
    """The argparse ``type=`` of ``--players``: the integer of the text (the game's own table sizes
    are checked once ``--game`` is known, and named there).

    Raises:
        argparse.ArgumentTypeError: (usage error, status 2) not an integer; the message names each
            installed game's table sizes.
    """
    try:
        return int(text)
    except ValueError:
        sizes = ", ".join(f"{g} {list(get_game(g).player_counts)}" for g in game_names())
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; legal values: a table size of --game: "
                                         f"{sizes}") from None


players_option.__name__ = "table size"


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




def prepare_out_prefix(prefix: str, suffixes: Sequence[str] = OUT_SUFFIXES) -> None:
    """Check that ``--out PREFIX`` (files ``PREFIX`` + each of ``suffixes``: ``.md``, ``.json``,
    ``.png`` by default) can be written, so a bad path fails before playing, not after. The
    missing folders of the prefix are made for the check (the system then says whether it can:
    a dangling link, a name too long, no permission) and removed again, so a run refused later
    leaves no folder behind; they are made for good when the files are written
    (:func:`save_outputs`, :func:`hod.core.atomic.atomic_write_many`).

    Raises:
        ConfigError: a prefix without a file name (``out/``, ``out/.``), one of the files an
            existing folder, or a folder that cannot be made or written in (the system's reason
            is named).
    """
    name = os.path.basename(prefix)
    if name in ("", ".", ".."):
        raise ConfigError(f"--out {prefix}: names a folder, not a file prefix; legal: a prefix with a file name, "
                          f"e.g. {os.path.join(prefix, 'result')} (writes result{', '.join(suffixes)})")
    taken = [prefix + s for s in suffixes if os.path.isdir(prefix + s)]
    if taken:
        raise ConfigError(f"--out {prefix}: {', '.join(taken)} is a folder; legal: a prefix whose "
                          f"{', '.join(suffixes)} files are not folders")
    folder = os.path.dirname(os.path.abspath(prefix))
    made = []                                  # the folders this check makes, deepest last
    top = folder
    while not os.path.lexists(top):
        made.insert(0, top)
        top = os.path.dirname(top)
    try:
        for f in made:
            os.mkdir(f)
        # a real write (os.access says yes to root in /proc and on a read-only mount's root-owned folder)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise ConfigError(f"--out {prefix}: cannot write in {folder}: {e.strerror}"
                          f"{f' ({e.filename})' if e.filename else ''}; legal: a path in a writable folder") from e
    finally:
        for f in reversed(made):
            try:
                os.rmdir(f)
            except OSError:
                pass


def fill_defaults(args: argparse.Namespace, defaults: dict) -> None:
    """Set each option named in ``defaults`` that the command line left None (not given) to its
    value there (a list copied): how a ``--quick`` preset fills in only the options the user did
    not give, so that an explicit one wins."""
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, list(value) if isinstance(value, list) else value)


def add_seating_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """Add ``--seating {auto,cyclic,permutations}`` (default ``auto``) to ``parser``: the seat
    orders of a tournament (:func:`hod.evaluation.schedule.resolve_seating`)."""
    parser.add_argument("--seating", choices=("auto",) + tuple(SEATINGS), default="auto", help=help_text)


def save_outputs(result, prefix: Optional[str]) -> Optional[str]:
    """Print ``result`` (a tournament or ladder result: ``to_markdown``, ``output_files``) and, when
    ``prefix`` is given, write ``PREFIX.md``, ``.json`` and ``.png`` and say so. The three are
    rendered first and written together (:func:`hod.core.atomic.atomic_write_many`): a failure
    writes none of them, and the files of an earlier run stay as they were. Returns what a stopped
    command says it kept: where the result went, marked partial (``"kept in PREFIX.md/.json/.png,
    marked partial"`` or ``"reported above, marked partial"``).

    Raises:
        OSError: a file cannot be written, or is a folder (the commands end in one line,
            :mod:`hod.core.commands`); nothing is written.
    """
    print(result.to_markdown())
    if prefix:
        files = result.output_files()   # every file rendered before the first is written
        atomic_write_many([(prefix + suffix, files[suffix]) for suffix in OUT_SUFFIXES])
        print(f"\nwrote {prefix}.md, {prefix}.json, {prefix}.png" + (" (partial)" if result.partial else ""))
        return f"kept in {prefix}.md/.json/.png, marked partial"
    return "reported above, marked partial"
