"""Measured strength of the registered bots: the results of the strength ladder
(``python -m hod.benchmarks.ladder``, docs/results.md "Strength ladder"), shipped as
``agents/strength.json``, one set of labels per table size.

The file (format version :data:`FORMAT_VERSION`) is::

    {"version": 2, "strengths": {game: {bot label: {"<players>": entry}}}}

an entry being ``{"rating", "sigma", "interval", "label", "games", "players", "date", "command"}``
and, optionally, ``"rating_model"``:
the OpenSkill Plackett-Luce ``mu`` (``rating``) and ``sigma`` after the ladder's games at that table
size, the interval ``[mu - 2 sigma, mu + 2 sigma]``, the difficulty label (``"easy"``,
``"medium"``, ``"hard"``, :data:`LABELS`), the number of games the bot played, the table size the
ladder was played at (equal to the entry's key), when, the command that measured it, and the
rating model in words (``hod.evaluation.stats.RATING_MODEL``, e.g. ``"openskill PlackettLuce, tau
0, averaged over 16 game orders"``; entries written before 2026-12-08 have none). A search
bot measured at several budgets has one entry per budget; the registry name (``"search"``) is the
entry of its default budget, the others are labelled ``<name>_d<determinizations>``
(``"search_d8"``). The entries of one table size come from one ladder run (the labels are
relative to its pool): :func:`record_strengths` replaces a size's entries and keeps the other sizes.
A file of format 1 (``game -> bot -> entry``, no ``"version"``; the 2-player files before labels per
table size) is read as the entries at each entry's ``players``.

Labels follow one rule, in two steps:

1. :func:`label_for`: with ``s = (mu - mu_random) / (mu_best - mu_random)``, the bot's place between
   ``random`` and the best bot of the ladder, ``easy`` for ``s < 1/3``, ``medium`` for
   ``1/3 <= s < 2/3``, ``hard`` for ``s >= 2/3``;
2. :func:`separate_labels`: neighbouring labels must not overlap, read as "the interval of the
   strongest bot of a label (the bot a difficulty deals) lies above the interval of the strongest
   bot of the label below". Where it does not, the data cannot tell that bot from the label above,
   so it is merged into that label (promoted), and the next-strongest is checked, until the labels
   separate (a label may end up empty).
"""
from __future__ import annotations

import json
import math
import numbers
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

from hod.core.atomic import atomic_write_json
from hod.core.errors import ConfigError
from hod.core.games import game_names, get_game

#: The shipped file of measured strengths.
STRENGTH_FILE = Path(__file__).with_name("strength.json")
#: Difficulty labels, weakest first.
LABELS = ("easy", "medium", "hard")
#: Boundaries of :func:`label_for` on the scaled rating s (random 0, best 1).
THRESHOLDS = (1 / 3, 2 / 3)
#: The format :func:`record_strengths` writes (1, the flat 2-player format, is still read).
FORMAT_VERSION = 2
#: Seconds :func:`record_strengths` waits for another process's write of the same file.
LOCK_TIMEOUT_S = 60.0
#: The fields of an entry.
ENTRY_FIELDS = ("rating", "sigma", "interval", "label", "games", "players", "date", "command")
#: Fields an entry may have besides :data:`ENTRY_FIELDS`.
OPTIONAL_FIELDS = ("rating_model",)

__all__ = ["ENTRY_FIELDS", "FORMAT_VERSION", "OPTIONAL_FIELDS", "LABELS", "STRENGTH_FILE", "THRESHOLDS", "label_for", "load_strengths",
           "measured_sizes", "record_strengths", "separate_labels", "strength", "strength_note"]


def label_for(mu: float, mu_random: float, mu_best: float) -> str:
    """The difficulty label of a bot rated ``mu`` in a ladder where ``random`` is rated
    ``mu_random`` and the best bot ``mu_best``: ``s = (mu - mu_random) / (mu_best - mu_random)``;
    ``easy`` if ``s < 1/3``, ``medium`` if ``1/3 <= s < 2/3``, ``hard`` otherwise. When the best bot
    is no better than random every bot is ``easy``. (Step 1 of the rule; :func:`separate_labels`
    is step 2.)"""
    span = mu_best - mu_random
    if not span > 0:
        return LABELS[0]
    s = (mu - mu_random) / span
    if s < THRESHOLDS[0]:
        return LABELS[0]
    if s < THRESHOLDS[1]:
        return LABELS[1]
    return LABELS[2]


def separate_labels(mus: Sequence[float], lows: Sequence[float], highs: Sequence[float],
                    labels: Sequence[str]) -> list[str]:
    """Step 2 of the label rule (module docstring): the labels ``labels`` (one of :data:`LABELS`
    per bot, from :func:`label_for`) with the bots that overlap the label above merged into it.

    For each label from the second strongest down (``medium``, then ``easy``), with the nearest
    non-empty label above it: while the strongest bot of the label (highest ``mu``, the first on
    ties) has ``high >= low`` of the strongest bot of the label above, it takes the label above.

    Args:
        mus, lows, highs: per bot, the rating and its interval ends (floats, one per bot).
        labels: per bot, its label from step 1.

    Returns:
        The labels, a new list in the same order.

    Raises:
        ConfigError: the sequences differ in length, or a label not in :data:`LABELS`.
    """
    n = len(labels)
    if not len(mus) == len(lows) == len(highs) == n:
        raise ConfigError(f"separate_labels: mus, lows, highs and labels differ in length "
                          f"({len(mus)}, {len(lows)}, {len(highs)}, {n}); legal: one of each per bot")
    out = list(labels)
    bad = sorted({x for x in out if x not in LABELS})
    if bad:
        raise ConfigError(f"separate_labels: labels {bad}; legal values: {list(LABELS)}")

    def strongest(label: str) -> Optional[int]:
        members = [i for i in range(n) if out[i] == label]
        return max(members, key=lambda i: (mus[i], -i)) if members else None

    for k in range(len(LABELS) - 2, -1, -1):
        lower = LABELS[k]
        while True:
            b = strongest(lower)
            above = next((lab for lab in LABELS[k + 1:] if strongest(lab) is not None), None)
            if b is None or above is None:
                break
            top = strongest(above)
            if highs[b] < lows[top]:
                break
            out[b] = above
    return out


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_entry(where: str, entry, players: int) -> dict:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected an entry object with {list(ENTRY_FIELDS)}, got {type(entry).__name__}")
    missing = [f for f in ENTRY_FIELDS if f not in entry]
    if missing:
        raise ConfigError(f"{where}: missing fields {missing}; an entry has {list(ENTRY_FIELDS)}")
    for f in ("rating", "sigma"):
        if not _number(entry[f]):
            raise ConfigError(f"{where}: {f!r} is {entry[f]!r}; legal values: a finite number")
    if entry["sigma"] < 0:
        raise ConfigError(f"{where}: 'sigma' is {entry['sigma']!r}; legal values: a number >= 0")
    iv = entry["interval"]
    if not (isinstance(iv, list) and len(iv) == 2 and all(_number(v) for v in iv) and iv[0] <= iv[1]):
        raise ConfigError(f"{where}: 'interval' is {iv!r}; legal values: [low, high], two finite numbers, low <= high")
    if entry["label"] not in LABELS:
        raise ConfigError(f"{where}: 'label' is {entry['label']!r}; legal values: {list(LABELS)}")
    if isinstance(entry["games"], bool) or not isinstance(entry["games"], int) or entry["games"] < 0:
        raise ConfigError(f"{where}: 'games' is {entry['games']!r}; legal values: an integer >= 0")
    if entry["players"] != players or isinstance(entry["players"], bool):
        raise ConfigError(f"{where}: 'players' is {entry['players']!r} in the entry of the {players}-player table; "
                          f"legal value: {players}")
    for f in ("date", "command", "rating_model"):
        if f in entry and not isinstance(entry[f], str):
            raise ConfigError(f"{where}: {f!r} is {entry[f]!r}; legal values: a string")
    return dict(entry)


def _size(where: str, game: str, key) -> int:
    counts = list(get_game(game).player_counts)
    n = int(key) if isinstance(key, str) and key.isdigit() and key.isascii() else key
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n not in counts:
        raise ConfigError(f"{where}: table size {key!r}; legal values for {game!r}: {[str(c) for c in counts]}")
    return n


def _validate(data, where: str) -> dict:
    """``{game: {bot: {players (int): entry}}}`` from a parsed file of format 1 or 2 (module
    docstring). Raises ConfigError naming the place and the legal values."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if "version" in data:
        if data["version"] != FORMAT_VERSION or isinstance(data["version"], bool):
            raise ConfigError(f"{where}: format version {data['version']!r}; legal values: {FORMAT_VERSION} "
                              f"(or format 1, a file without \"version\")")
        extra = sorted(set(data) - {"version", "strengths"})
        if extra or not isinstance(data.get("strengths"), dict):
            raise ConfigError(f"{where}: expected {{\"version\": {FORMAT_VERSION}, \"strengths\": {{game: {{bot: "
                              f"{{players: entry}}}}}}}}, got keys {sorted(data)}")
        body, flat = data["strengths"], False
    else:
        body, flat = data, True
    out: dict = {}
    for game, bots in body.items():
        if game not in game_names():
            raise ConfigError(f"{where}: unknown game {game!r}; legal values: {game_names()}")
        if not isinstance(bots, dict):
            raise ConfigError(f"{where}: {game}: expected an object bot -> table size -> entry")
        out[game] = {}
        for bot, sizes in bots.items():
            if flat:   # format 1: bot -> entry, the size in the entry
                if not isinstance(sizes, dict):
                    raise ConfigError(f"{where}: {game}.{bot}: expected an entry object with {list(ENTRY_FIELDS)}")
                sizes = {str(sizes.get("players")): sizes}
            if not isinstance(sizes, dict):
                raise ConfigError(f"{where}: {game}.{bot}: expected an object table size -> entry")
            out[game][bot] = {}
            for key, entry in sizes.items():
                n = _size(f"{where}: {game}.{bot}", game, key)
                out[game][bot][n] = _check_entry(f"{where}: {game}.{bot}.{n}", entry, n)
    return out


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        return {}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path}: not a JSON strength file ({e})") from None
    return _validate(data, path)


def _copy(data: dict) -> dict:
    return {g: {b: {n: dict(e) for n, e in sizes.items()} for b, sizes in bots.items()} for g, bots in data.items()}


def _check_game(game) -> None:
    if not isinstance(game, str) or game not in game_names():
        raise ConfigError(f"unknown game {game!r}; legal values: {game_names()}")


def load_strengths(path: str | Path = STRENGTH_FILE) -> dict:
    """The whole file as ``{game: {bot: {players: entry}}}``, ``players`` an int (``{}`` when there
    is no file). A copy.

    Raises:
        ConfigError: the file is not a strength file of format 1 or 2 (what is wrong and where,
            and the legal values).
    """
    return _copy(_load(str(path)))


def measured_sizes(game: str, path: str | Path = STRENGTH_FILE) -> list[int]:
    """The table sizes of ``game`` the file has entries for, ascending.

    Raises:
        ConfigError: unknown game (legal values listed); a bad file (:func:`load_strengths`).
    """
    _check_game(game)
    return sorted({n for sizes in _load(str(path)).get(game, {}).values() for n in sizes})


def strength(game: str, name: str, players: int, path: str | Path = STRENGTH_FILE) -> Optional[dict]:
    """The measured strength of bot ``name`` of ``game`` at a table of ``players`` (an entry of the
    module docstring), or None if the ladder has not measured it at that size.

    Raises:
        ConfigError: unknown game, or a table size the game does not have (legal values listed);
            a bad file (:func:`load_strengths`).
    """
    _check_game(game)
    counts = list(get_game(game).player_counts)
    if isinstance(players, bool) or not isinstance(players, numbers.Integral) or players not in counts:
        raise ConfigError(f"players={players!r}: legal values for {game!r}: {counts} (an int)")
    entry = _load(str(path)).get(game, {}).get(name, {}).get(players)
    return dict(entry) if entry else None


def strength_note(game: str, name: str, players: int, path: str | Path = STRENGTH_FILE) -> str:
    """A short note for listings: ``"hard, rating 31.2 +- 1.4"``, or ``"unrated"`` (nothing
    measured at ``players``). Raises as :func:`strength`."""
    e = strength(game, name, players, path)
    if not e:
        return "unrated"
    return f"{e['label']}, rating {e['rating']:.1f} +- {2 * e['sigma']:.1f}"


def dropped_labels(recorded: dict, players: int, labels) -> list:
    """The bots of ``recorded`` (one game's ``{bot: {size: entry}}``, as :func:`load_strengths`
    gives it) labelled at table size ``players`` that ``labels`` leaves out, sorted: the entries
    that recording ``labels`` at that size would drop."""
    keep = set(labels)
    return sorted(b for b, sizes in recorded.items() if players in sizes and b not in keep)


def record_strengths(game: str, players: int, entries: dict, path: str | Path = STRENGTH_FILE,
                     keep_labelled: bool = False) -> dict:
    """Record one ladder run's entries (``{bot label: entry}``, every entry's ``players`` equal to
    ``players``) as the ``players``-player strengths of ``game`` in the file at ``path``: the
    entries of that size are replaced (a bot not in the run loses its entry at that size: labels are
    relative to a run's pool), the other sizes and games are kept as the file holds them when this
    is called (read again, not from this process's cache, so ladders of other sizes run side by side
    keep each other's entries). The read and the write hold ``<path>.lock`` (``filelock``), so two
    ladders that finish at the same moment cannot drop each other's entries. Written atomically, in
    format :data:`FORMAT_VERSION` (a format-1 file is upgraded). With ``keep_labelled``, a file
    that (read under the lock) labels bots at this size that ``entries`` leaves out
    (:func:`dropped_labels`) is refused instead: nothing is written.

    Returns:
        The file's new contents as :func:`load_strengths` gives them.

    Raises:
        ConfigError: unknown game or size, a malformed entry, or a bad existing file (nothing is
            written then); with ``keep_labelled``, entries that would drop labelled bots (they are
            named); another process holding the lock for more than :data:`LOCK_TIMEOUT_S`.
    """
    from filelock import FileLock, Timeout

    _check_game(game)
    n = _size("record_strengths", game, players)
    if not isinstance(entries, dict) or not entries:
        raise ConfigError(f"record_strengths: expected a non-empty object bot -> entry, got {entries!r}")
    checked = {b: _check_entry(f"record_strengths: {game}.{b}.{n}", e, n) for b, e in entries.items()}
    try:
        with FileLock(f"{path}.lock", timeout=LOCK_TIMEOUT_S):
            # the file as it is now, not as this process first read it: another ladder may have
            # recorded another size since (a 2-player ladder that read the file at its start and
            # wrote it back an hour later dropped the 3-6-player entries that four other ladders
            # had recorded meanwhile); the lock keeps a second writer out between read and write
            _load.cache_clear()
            data = _copy(_load(str(path)))
            bots = data.setdefault(game, {})
            dropped = dropped_labels(bots, n, checked) if keep_labelled else []
            if dropped:
                raise ConfigError(f"recording replaces the {n}-player entries of {game!r} in {path}, and these "
                                  f"entries leave out {dropped}, which would lose theirs; nothing was written; "
                                  f"legal: entries that include them, or keep_labelled=False (the ladder's "
                                  f"--replace-pool)")
            for b in list(bots):
                bots[b].pop(n, None)
                if not bots[b]:
                    del bots[b]
            for b, e in checked.items():
                bots.setdefault(b, {})[n] = e
            body = {g: {b: {str(k): sizes[k] for k in sorted(sizes)} for b, sizes in bs.items()}
                    for g, bs in data.items()}
            atomic_write_json(path, {"version": FORMAT_VERSION, "strengths": body})
            _load.cache_clear()
    except Timeout:
        raise ConfigError(f"{path}: another process has held {path}.lock for over {LOCK_TIMEOUT_S:g} s (a ladder "
                          f"recording its entries); nothing was written; legal: try again when it is done") from None
    return load_strengths(path)
