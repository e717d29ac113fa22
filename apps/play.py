"""Shared pieces of the terminal play commands (``python -m hod.apps.play_tapeo``,
``python -m hod.apps.play_robada``): the command-line options, the choice of computer opponents from
the bot registry, the prompt that reads and validates a person's choice, and the exit handling.

Nothing here knows a game's rules: each game's ``play`` module drives its own environment and
engine, and hands this module the list of legal choices to offer.

Exit codes of both commands (docs/play.md):

* ``0``: the game was played to the end, or the input ended (EOF) or the player typed ``quit``
  mid-game (the score so far is printed; no record is written, a record needs a finished game);
* ``130``: interrupted with Ctrl-C (the score so far is printed), as shells report SIGINT;
* ``2``: bad command-line options (argparse's usage error, naming the legal values).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, TextIO

import numpy as np

from hod.core.deal import game_seed
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game

from hod.agents.onnx_policy import shipped_opponents
from hod.agents.registry import factory, make, names, player_counts
from hod.agents.strength import strength

#: Registered bot names from strongest to weakest; the default opponent is the first one
#: registered. A name ``ppo_<suffix>`` (a shipped variant) ranks with ``ppo``.
STRENGTH_ORDER = ("ppo", "expert", "greedy", "random")
#: Exit code after Ctrl-C (128 + SIGINT, what shells report).
EXIT_INTERRUPTED = 130
#: Words that end the game early, like end of input.
QUIT_WORDS = ("q", "quit", "exit")
#: Words that print the legend of choices again.
HELP_WORDS = ("?", "h", "help")
#: How to install onnxruntime, which the shipped trained opponents (``ppo``) need.
ONNX_INSTALL = "pip install 'house-of-decks-rl[onnx]'"




class Quit(Exception):
    """The person ended the game early: end of input (EOF) or a quit word."""


def strongest(registered: Sequence[str]) -> str:
    """The strongest of ``registered`` bot names by :data:`STRENGTH_ORDER`.

    ``ppo`` beats ``ppo_<suffix>`` variants, which beat ``expert``, then ``greedy``, then
    ``random``; an unknown name ranks last (alphabetical among unknowns).

    Raises:
        ConfigError: ``registered`` is empty.
    """
    if not registered:
        raise ConfigError("no bot is registered for this game")

    def rank(name: str) -> tuple:
        if name in STRENGTH_ORDER:
            return (STRENGTH_ORDER.index(name) * 2, name)
        if name.startswith("ppo_"):
            return (1, name)
        return (2 * len(STRENGTH_ORDER), name)

    return min(registered, key=rank)


def onnx_available() -> bool:
    """True if onnxruntime can be imported (it is the ``onnx`` extra, not a core dependency)."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def needs_onnx(game: str, name: str) -> bool:
    """True if the bot ``name`` of ``game`` needs onnxruntime at its default options: a shipped
    ONNX export (``ppo``, ``ppo_<suffix>``), or a bot whose class says ``needs_onnx = True``
    (Tapeo's ``search``, whose playouts run the shipped network)."""
    return name in shipped_opponents(game) or bool(getattr(factory(game, name), "needs_onnx", False))


def supports(game: str, name: str, num_players: Optional[int]) -> bool:
    """True if bot ``name`` of ``game`` plays tables of ``num_players`` (None: not checked): a bot
    that declares its table sizes (:func:`hod.agents.registry.player_counts`, e.g. a shipped
    ONNX policy from its model card) must list it."""
    counts = player_counts(game, name)
    return num_players is None or counts is None or num_players in counts


def default_opponent(game: str, notices: Optional[list[str]] = None, num_players: Optional[int] = None) -> str:
    """The strongest bot registered for ``game`` (``agents.names(game)``) that this install can
    play at a table of ``num_players`` (None: any size).

    A bot trained for other table sizes (its model card's ``player_counts``, e.g. Ronda
    Robada's ``ppo_v1``, trained for 2 and 4 players, at 3) is skipped for the next strongest,
    and so, on a core install (no onnxruntime), is the shipped ONNX ``ppo``; each skip appends
    a notice to ``notices`` (the missing extra's is :data:`ONNX_INSTALL`)."""
    registered = names(game)
    best = strongest(registered)
    sized = [n for n in registered if supports(game, n, num_players)]
    if best not in sized:
        fallback = strongest(sized)
        if notices is not None:
            notices.append(f"Note: the default opponent {best!r} was trained for {list(player_counts(game, best))} "
                           f"players, not {num_players}; playing {fallback!r} instead.")
        best = fallback
        registered = sized
    if not needs_onnx(game, best) or onnx_available():
        return best
    fallback = strongest([n for n in registered if not needs_onnx(game, n)])
    if notices is not None:
        notices.append(f"Note: the default opponent {best!r} (a trained policy shipped as ONNX) needs onnxruntime, "
                       f"which is not installed; playing {fallback!r} instead. To play {best!r}: {ONNX_INSTALL}")
    return fallback


def parse_opponents(game: str, values: Optional[Sequence[str]], num_opponents: int,
                    notices: Optional[list[str]] = None, what: str = "--opponents", commas: bool = True) -> list[str]:
    """Bot names of the opponent seats, in seat order after the person's seat.

    Args:
        values: ``--opponents`` as given: ``None`` (the default opponent, :func:`default_opponent`, everywhere), one
            name (every opponent), or one name per opponent seat; names may also be separated by
            commas (``expert,random``).
        num_opponents: number of opponent seats (players - 1).
        notices: where :func:`default_opponent` appends its notice when it falls back.
        what: the option's name in messages (``"opponents"`` for the web API's field).
        commas: split names at commas (the command line); False takes each value as one name.

    Returns:
        ``num_opponents`` registered names.

    Raises:
        ConfigError: an unregistered name (the message lists the registered ones), a number of
            names that is neither 1 nor ``num_opponents``, a shipped ONNX bot named while
            onnxruntime is not installed (the message names :data:`ONNX_INSTALL`), or a bot
            trained for other table sizes than ``num_opponents + 1`` (the sizes it supports
            are named).
    """
    n = num_opponents + 1
    if not values:
        return [default_opponent(game, notices, n)] * num_opponents
    split = [v.strip() for value in values for v in value.split(",") if v.strip()] if commas else list(values)
    registered = names(game)
    for name in split:
        if name not in registered:
            raise ConfigError(f"no {game} bot {name!r}; registered bots: {registered}")
        if not supports(game, name, n):
            raise ConfigError(f"{game} bot {name!r} was trained for {list(player_counts(game, name))} players, "
                              f"not {n}; legal table sizes for it: {list(player_counts(game, name))} "
                              f"(or choose another bot: {[b for b in registered if supports(game, b, n)]})")
    onnx = sorted({n for n in split if needs_onnx(game, n)})
    if onnx and not onnx_available():
        playable = [n for n in registered if not needs_onnx(game, n)]
        raise ConfigError(f"{game} bot(s) {onnx} need onnxruntime, which is not installed ({ONNX_INSTALL}); "
                          f"bots playable now: {playable}")
    if len(split) == 1:
        return split * num_opponents
    if len(split) != num_opponents:
        expected = ("1 name (the one opponent seat)" if num_opponents == 1 else
                    f"1 name (every opponent seat) or {num_opponents} (one per opponent seat)")
        raise ConfigError(f"{what} takes {expected}, got {len(split)}: {split}; registered bots: {registered}")
    return split


def strength_label(game: str, name: str, players: int) -> str:
    """The difficulty label of bot ``name`` measured by the strength ladder at a table of
    ``players`` (``"easy"``, ``"medium"``, ``"hard"``; :func:`hod.agents.strength.strength`), or
    ``"unrated"`` where the ladder has not measured it at that size.

    Raises:
        ConfigError: unknown game or table size (legal values listed)."""
    entry = strength(game, name, players)
    return entry["label"] if entry else "unrated"


def labelled_names(game: str, players: int) -> str:
    """The registered bots of ``game`` with their ladder labels at ``players``:
    ``"expert (medium), greedy (easy), ..."``."""
    return ", ".join(f"{n} ({strength_label(game, n, players)})" for n in names(game))


def opponents_line(game: str, table: "PlayOptions") -> str:
    """The line naming each computer seat's bot and its ladder label (and rating) at the table's
    size, printed at the start."""
    parts = []
    n = table.players
    for seat in sorted(table.opponents):
        name = table.opponents[seat]
        entry = strength(game, name, n)
        if entry:
            parts.append(f"player_{seat} {name}: {entry['label']} (rating {entry['rating']:.1f})")
        else:
            parts.append(f"player_{seat} {name}: unrated")
    return (f"Opponents' strength at {n} players (the {n}-player strength ladder, docs/results.md, "
            f"'Strength ladder'): " + "; ".join(parts) + ".")


def bot_seed(seed: int, seat: int) -> int:
    """Seed of the bot at ``seat`` in the game of ``seed`` (numpy ``SeedSequence([seed, seat])``),
    so the same ``--seed`` gives the same opponents' play for the same choices of the person."""
    return int(np.random.SeedSequence([seed, seat]).generate_state(1)[0])


def non_negative_int(text: str) -> int:
    """``--seed``'s type: a decimal integer >= 0 (numpy seeds cannot be negative).

    Raises:
        argparse.ArgumentTypeError: anything else (argparse turns it into its usage error, exit
            code 2, naming the legal values).
    """
    t = text.strip()
    if not re.fullmatch(r"\+?[0-9]+", t):
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; legal values: a non-negative int (0, 1, 2, ...)")
    return int(t)


def build_parser(game: str, prog: str, description: str, min_players: int, max_players: int,
                 default_players: int) -> argparse.ArgumentParser:
    """The options shared by both play commands: ``--players``, ``--opponents``, ``--seed``,
    ``--seat``, ``--record``, ``--no-record``."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("--players", type=int, default=default_players, choices=range(min_players, max_players + 1),
                    metavar=f"{{{min_players}..{max_players}}}",
                    help=f"players at the table, you included (default {default_players})")
    ap.add_argument("--opponents", nargs="+", metavar="BOT",
                    help="registered bot for the computer seats: one name for all of them, or one per "
                         f"opponent seat in seat order (registered now, with the strength ladder's label at "
                         f"{default_players} players: {labelled_names(game, default_players)}; the labels at the "
                         f"table's size are printed at the start; default: the first of ppo > expert > greedy > random "
                         "that plays the table size, not the strongest: the search bots rate higher)")
    ap.add_argument("--seed", type=non_negative_int, default=None,
                    help="seed of the deal and of the bots, a non-negative int (default: a fresh one, printed)")
    ap.add_argument("--seat", type=int, default=0, help="your seat, 0..players-1 (default 0)")
    ap.add_argument("--record", metavar="PATH", default=None,
                    help=f"where to write the game record at the end (default {game}-seed<SEED>-<time>.json)")
    ap.add_argument("--no-record", action="store_true", help="do not write a game record")
    return ap


@dataclass
class PlayOptions:
    """The validated options of one game at the terminal.

    Attributes:
        players: number of seats. seat: the person's seat. seed: the game seed.
        opponents: ``{seat: bot name}`` of every computer seat. record: path of the record, or None.
        notices: lines to print before the game (e.g. the fallback of the default opponent).
    """

    players: int
    seat: int
    seed: int
    opponents: dict[int, str]
    record: Optional[str]
    notices: list[str] = field(default_factory=list)


def parse_table(ap: argparse.ArgumentParser, game: str, argv: Optional[Sequence[str]]) -> PlayOptions:
    """Parse and check the options; a bad value ends with argparse's usage error (exit code 2)
    naming the legal values."""
    args = ap.parse_args(argv)
    n = args.players
    if not 0 <= args.seat < n:
        ap.error(f"--seat {args.seat} is out of range; legal values: {list(range(n))}")
    notices: list[str] = []
    try:
        bots = parse_opponents(game, args.opponents, n - 1, notices)
    except ConfigError as e:
        ap.error(str(e))
    try:
        seed = game_seed(args.seed)   # a fresh one: OS entropy over 0..2**63-1 (too many to try)
    except ConfigError as e:
        ap.error(f"--seed: {e}")
    others = [(args.seat + k) % n for k in range(1, n)]
    record = None
    if not args.no_record:
        record = args.record or f"{game}-seed{seed}-{time.strftime('%Y%m%d-%H%M%S')}.json"
        if os.path.isdir(record):   # the record would be lost at the end of the game
            ap.error(f"--record {record}: is a folder; legal values: the path of a file (new, or to be replaced) "
                     f"in a writable folder, e.g. {os.path.join(record, f'{game}-seed{seed}.json')}")
        folder = os.path.dirname(os.path.abspath(record))
        if not (os.path.isdir(folder) and os.access(folder, os.W_OK)):
            ap.error(f"--record {record}: the folder {folder} does not exist or is not writable")
    return PlayOptions(players=n, seat=args.seat, seed=seed, opponents=dict(zip(others, bots)), record=record,
                       notices=notices)


def make_bots(game: str, table: PlayOptions) -> dict:
    """``{seat: bot}`` for the computer seats, each seeded with :func:`bot_seed`."""
    return {s: make(game, name, seed=bot_seed(table.seed, s)) for s, name in table.opponents.items()}


def seat_names(table: PlayOptions) -> list[str]:
    """Display name of each seat: ``"You"`` for the person, ``"player_2 (expert)"`` for a bot."""
    return ["You" if i == table.seat else f"player_{i} ({table.opponents[i]})" for i in range(table.players)]


def player_labels(table: PlayOptions) -> list[str]:
    """The ``players`` field of the game record: ``"human"`` for the person's seat, the bot's
    registry name (``"expert"``, ``"ppo"``) for each computer seat, in seat order."""
    return ["human" if i == table.seat else table.opponents[i] for i in range(table.players)]


@dataclass(frozen=True)
class Choice:
    """One legal choice offered at a prompt.

    Attributes:
        action: the action id the environment receives.
        name: the action's name (typed by the person, matched case-insensitively).
        label: what the choice does, in the game's words.
        aliases: other words that select it (lower case).
    """

    action: int
    name: str
    label: str = ""
    aliases: tuple[str, ...] = field(default_factory=tuple)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


class Terminal:
    """Reads choices from ``stdin`` and prints to ``stdout`` (both injectable for tests).

    Args:
        stdin, stdout: text streams. echo: write each line read after its prompt (default: when
            ``stdin`` is not a terminal, so a scripted game reads like a played one).
    """

    def __init__(self, stdin: TextIO, stdout: TextIO, echo: Optional[bool] = None) -> None:
        self.stdin = stdin
        self.stdout = stdout
        if echo is None:
            isatty = getattr(stdin, "isatty", None)
            echo = not (callable(isatty) and isatty())
        self.echo = echo
        #: Printed after the legend when the person asks for help (``?``): the game's glossary.
        self.help_extra = ""

    def say(self, *lines: str) -> None:
        """Print ``lines`` (each a line, or several joined by newlines)."""
        for line in lines:
            self.stdout.write(line + "\n")
        self.stdout.flush()

    def legend(self, choices: Sequence[Choice]) -> str:
        """The numbered legend of ``choices``, one per line."""
        width = max(len(c.name) for c in choices)
        return "\n".join(f"  {i:>2}) {c.name:<{width}}  {c.label}".rstrip() for i, c in enumerate(choices, 1))

    def match(self, text: str, choices: Sequence[Choice]) -> Choice | str:
        """The choice ``text`` selects (its number, name or an alias), or an error message."""
        t = _norm(text)
        if not t:
            return "Type the number or the name of a choice."
        if re.fullmatch(r"[+-]?[0-9]+", t):  # ASCII digits only: int() also takes "١", "²" crashes it
            k = int(t)
            if 1 <= k <= len(choices):
                return choices[k - 1]
            return f"{t} is not a choice number; choose 1 to {len(choices)}."
        for c in choices:
            if t == _norm(c.name) or t in c.aliases:
                return c
        return f"{text.strip()!r} is not a legal choice now."

    def choose(self, prompt: str, choices: Sequence[Choice],
               illegal: Optional[Callable[[str], Optional[str]]] = None) -> Choice:
        """Print the legend and read until a legal choice is given; return it.

        Args:
            prompt: the question (e.g. ``"Your pick"``).
            choices: the legal choices (never empty).
            illegal: optional ``illegal(text) -> message or None`` that explains why a known but
                illegal word is refused (e.g. a tapa not in hand).

        Raises:
            Quit: end of input or a quit word.
            KeyboardInterrupt: Ctrl-C (handled by :func:`run`).
        """
        self.say(self.legend(choices))
        while True:
            self.stdout.write(f"{prompt} [1-{len(choices)}, name, ? help, q quit]: ")
            self.stdout.flush()
            line = self.stdin.readline()
            if not line:
                self.say("")
                raise Quit("end of input")
            if self.echo:
                self.say(line.rstrip("\n"))
            t = _norm(line)
            if t in QUIT_WORDS:
                raise Quit("quit")
            if t in HELP_WORDS:
                self.say(self.legend(choices))
                if self.help_extra:
                    self.say(self.help_extra)
                continue
            got = self.match(line, choices)
            if isinstance(got, Choice):
                return got
            why = (illegal(t) if illegal else None) or got
            self.say(f"  ! {why} Legal choices: " + ", ".join(f"{i}={c.name}" for i, c in enumerate(choices, 1)))


class Transcript:
    """An output-only stand-in for :class:`Terminal`: what a session says is kept as a list of
    lines (``lines``) instead of printed, for front ends that drive a session step by step (the
    web app, :mod:`hod.apps.web`) and show the lines themselves. It cannot ask: a session driven
    with it never calls ``choose``."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.help_extra = ""

    def say(self, *lines: str) -> None:
        """Keep ``lines`` (a text of several lines is split at its newlines)."""
        for line in lines:
            self.lines.extend(line.split("\n"))

    def choose(self, prompt: str, choices: Sequence[Choice], illegal=None) -> Choice:
        """Never answers: raises ``RuntimeError`` (a transcript has nobody to ask)."""
        raise RuntimeError("a Transcript cannot ask for a choice; apply the person's action to the session instead")


def run(session, term: Terminal) -> int:
    """Play ``session`` (an object with ``play()`` and ``abandoned(reason)``) and return the exit
    code: 0 at the end or on end of input / quit, :data:`EXIT_INTERRUPTED` on Ctrl-C."""
    try:
        session.play()
    except Quit as e:
        reason = "End of input" if str(e) == "end of input" else "You quit"
        session.abandoned(f"{reason}: the game stops here.")
        return 0
    except KeyboardInterrupt:
        term.say("")
        session.abandoned("Interrupted (Ctrl-C): the game stops here.")
        return EXIT_INTERRUPTED
    return 0


def play_main(session_cls, prog: str, description: str, min_players: int, max_players: int,
              default_players: int, argv: Optional[Sequence[str]] = None, stdin: Optional[TextIO] = None,
              stdout: Optional[TextIO] = None) -> int:
    """The ``main`` of a play command: parse the options (:func:`build_parser`, :func:`parse_table`;
    a bad one exits with code 2), then play a ``session_cls`` (a :class:`GameSession`) on the
    terminal (``stdin``/``stdout``, default the process's) and return the exit code of :func:`run`."""
    ap = build_parser(session_cls.game, prog, description, min_players, max_players, default_players)
    table = parse_table(ap, session_cls.game, argv)
    term = Terminal(stdin or sys.stdin, stdout or sys.stdout)
    return run(session_cls(table, term), term)


def record_line(path: str, game: str, save: Callable[[], None], load_hint: str) -> str:
    """Write the game record with ``save()`` and return the line that says so; a failure to write
    (disk full, folder removed meanwhile) is reported in the returned line, never raised, so the
    final scores are always shown."""
    try:
        save()
    except OSError as e:
        return f"Could not write the game record to {path}: {e}"
    return f"Game record written to {path} (replay: {game}_env.replay({game}_env.{load_hint}(path)))."


class GameSession:
    """What both games' terminal sessions share: the table, the bots, the seat names, dealing
    the game of ``--seed``, asking a bot for its action, writing the record and stopping early.
    Each game's subclass (``TapeoSession``, ``RobadaSession``) sets the class attributes and
    adds :meth:`make_env`, its own ``loop``, screens and ``score_so_far``.

    Class attributes:
        game: registry name of the game (``"tapeo"``); title: its display name.
        rules_line: the greeting's second line (how a round goes).
        glossary: optional lines printed in the greeting and with the help (``?``), e.g. the
            English names of Ronda Robada's Spanish ranks.
        sample_belief: the game's ``sample_consistent_state(state, seat, rng)`` for search bots.
        announce_seed: say the seed in the greeting (default True).

    Args:
        table: the validated options (:class:`PlayOptions`).
        term: the terminal to read from and print to.
        bots: ``{seat: bot}`` (default: built from the registry with :func:`make_bots`).
    """

    game: str = ""
    title: str = ""
    #: Say the seed in the greeting. The seed fixes the deal, so a front end that drew it itself
    #: (the web app) keeps it back until the end: whoever knows it can compute every hand.
    announce_seed: bool = True
    rules_line: str = ""
    glossary: str = ""
    sample_belief: Callable = staticmethod(lambda state, seat, rng: None)

    def __init__(self, table: PlayOptions, term: Terminal, bots: Optional[dict] = None) -> None:
        self.table = table
        self.term = term
        term.help_extra = self.glossary
        self.env = self.make_env(table.players)
        self.bots = bots if bots is not None else make_bots(self.game, table)
        self.names = seat_names(table)
        self.width = max(len(s) for s in self.names)

    def make_env(self, num_players: int):
        """The game's environment (unwrapped, ``illegal_action="raise"``), with ``game_state``
        and ``record()``."""
        raise NotImplementedError

    @property
    def state(self):
        """The engine state of the game in progress (None before :meth:`start`)."""
        return self.env.game_state

    def play(self) -> None:
        """Play the game to the end (raises :class:`Quit` / KeyboardInterrupt when the person
        stops)."""
        self.start()
        self.loop()

    def loop(self) -> None:
        """Play until the game is over, then show the end (each game's own)."""
        raise NotImplementedError

    def start(self) -> None:
        """Deal the game of ``table.seed`` and greet the person."""
        t = self.table
        self.env.reset(seed=t.seed)
        self.term.say(*t.notices)
        seed = f", seed {t.seed}" if self.announce_seed else ""
        self.term.say(f"{self.title}, {t.players} players{seed}. You are player_{t.seat}; "
                      + ", ".join(self.names[i] for i in range(t.players) if i != t.seat) + ".",
                      opponents_line(self.game, t),
                      self.rules_line, *([self.glossary] if self.glossary else []))

    def bot_action(self, seat: int, obs: dict) -> int:
        """The action of the bot at ``seat`` given its observation dict; a search bot
        (``needs_belief``) also gets samples of the hidden state consistent with what ``seat``
        knows now (``sample_belief``)."""
        bot, s = self.bots[seat], self.state
        if getattr(bot, "needs_belief", False):
            return int(bot.act(obs, lambda rng: self.sample_belief(s, seat, rng)))
        return int(bot.act(obs))

    def record_lines(self) -> list[str]:
        """Write the record of the finished game to ``table.record`` (if any) with the game's
        ``record.save_record``, with who played each seat (:func:`player_labels`); the line that
        says so, or why it could not (:func:`record_line`)."""
        path = self.table.record
        if not path:
            return []
        save = get_game(self.game).module().save_record
        players = player_labels(self.table)
        return [record_line(path, self.game, lambda: save(path, self.env.record(players=players)), "load_record")]

    def abandoned(self, why: str) -> None:
        """Print ``why`` and the score so far after the person stopped early (no record: the game
        is not over)."""
        if self.state is None:
            self.term.say(why)
            return
        self.term.say(why, *self.score_so_far(), "No game record is written for an unfinished game.")

    def score_so_far(self) -> list[str]:
        """Lines of the score of an unfinished game (each game's own)."""
        raise NotImplementedError


def play_commands() -> list[str]:
    """The terminal play commands installed, one per game that has a ``hod.apps.play_<game>``
    module (``"python -m hod.apps.play_tapeo"``, ...), in the order of
    :func:`hod.core.games.game_names`."""
    return [f"python -m hod.apps.play_{g}" for g in game_names()
            if importlib.util.find_spec(f"hod.apps.play_{g}") is not None]


if __name__ == "__main__":
    # This module is the shared part of the play commands, not a command itself: `--help` says
    # so, and a plain run is a usage error (exit 2) that names the commands to run.
    _commands = play_commands()
    _parser = argparse.ArgumentParser(
        prog="python -m hod.apps.play",
        description="What the terminal play commands share; not a command itself. Play a game with: "
                    + ", ".join(_commands))
    _parser.parse_args()
    _parser.error("not a command itself; play a game with one of: " + ", ".join(_commands))
