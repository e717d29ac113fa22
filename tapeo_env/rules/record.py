"""JSON game records of Tapeo: written from a finished game, replayed to the identical game.

Schema (``format_version`` 1; kinds are written by name, see :data:`tapeo_env.rules.cards.KIND_NAMES`)::

    {
      "game": "tapeo", "format_version": 1,   # the common header (hod.core.records.record_header)
      "seed": 123 | null,               # engine seed (informative: replay never uses our RNG)
      "players": ["human", "expert", ...] | null,  # optional: who played each seat (labels)
      "env": "tapeo_v0",
      "num_players": 4, "hand_size": 8,
      "deck": {"tortilla": 14, ...},    # deck composition (T1)
      "rounds": [                       # one per round, 3
        {"dealt": [["croqueta", ...], ...],  # per seat, the hand dealt to it, in deal order
         "picks": [["tortilla", ...], ...],  # per decision pick, the tapa each seat picked (seat order)
         "last": ["churro", ...],            # per seat, the last tapa revealed automatically (T7)
         "scores": [12, 7, 9, 3]}            # round points per seat
      ],
      "churros": [3, 1, 2, 4],          # churros kept at the end (T8)
      "final_scores": [40, 22, 31, 19], # round points + end churros (T9)
      "winners": [0]                    # seats sharing the win (T10)
    }

Numbers are checked by type as well as value (a float seat, score or count is a RecordError).
The dealt hands are explicit, so another implementation can replay the game without our random
generator: deal ``dealt``, apply ``picks`` pick by pick (passing hands left), reveal ``last``.
"""
from __future__ import annotations

import os
from typing import Any

from hod.core.errors import ConfigError, IllegalActionError, RecordError
from hod.core.records import (
    check_common,
    check_header,
    load_record as _load,
    record_header,
    record_int,
    record_ints,
    save_record as _save,
)

from .cards import DECK_COMPOSITION, KIND_NAMES, kind_index
from .cards import MAX_PLAYERS, MIN_PLAYERS
from .engine import Config, State, apply_actions, new_game

GAME = "tapeo"
FORMAT_VERSION = 1
#: The ``deck`` field of every record: the deck composition of the rules (T1), by kind name.
DECK = dict(zip(KIND_NAMES, DECK_COMPOSITION))


def make_record(state: State, seed: int | None = None, players: list[str] | None = None) -> dict[str, Any]:
    """The record of a finished game.

    Args:
        state: the finished game.
        seed: the engine seed it was dealt from, if known (informative).
        players: optional label of who played each seat (bot name, model id, ``"human"``).

    Raises:
        RecordError: no game (``state`` None), the game is not over, it was not played with
            the deck of the rules (T1, :data:`DECK`), or ``players`` is not None or a list of
            one str per seat.
    """
    if state is None:
        raise RecordError("no game: a Tapeo record can only be made of a finished game")
    if not state.terminal:
        raise RecordError("a Tapeo record can only be made of a finished game")
    cfg = state.config
    if cfg.deck != DECK_COMPOSITION:
        raise RecordError(f"a Tapeo record holds games played with the deck of the rules (T1) {DECK}; "
                          f"this game's deck is {dict(zip(KIND_NAMES, cfg.deck))}")
    rounds = []
    for r in range(cfg.num_rounds):
        reveals = state.reveals[r]
        rounds.append({
            "dealt": [[KIND_NAMES[k] for k in hand] for hand in state.dealt[r]],
            "picks": [[KIND_NAMES[k] for k in pick] for pick in reveals[:cfg.decision_picks]],
            "last": [KIND_NAMES[k] for k in reveals[-1]],
            "scores": [int(x) for x in state.round_scores[r]],
        })
    return {
        **record_header(GAME, FORMAT_VERSION, seed, players, cfg.num_players),
        "env": "tapeo_v0",
        "num_players": cfg.num_players, "hand_size": cfg.hand_size,
        "deck": dict(DECK),
        "rounds": rounds,
        "churros": [int(x) for x in state.churros_kept],
        "final_scores": [int(x) for x in state.final_scores],
        "winners": list(state.winners),
    }


def replay(record: dict[str, Any]) -> State:
    """Rebuild the game of ``record`` from its dealt hands and picks, and check every score.

    Returns:
        The finished :class:`~tapeo_env.rules.engine.State`.

    Raises:
        RecordError: wrong game/version, missing or malformed fields (numbers must be ints of
            their legal range: a float count or score is refused, never truncated), a bad
            ``seed`` or ``players`` (hod.core.records.check_common), a deck composition other
            than the rules' (T1, :data:`DECK`; the message gives it), an illegal pick, or round
            scores, churros, final scores or winners that differ from the replayed game.
    """
    check_header(record, GAME, FORMAT_VERSION)
    n = record_int("num_players", record.get("num_players"), MIN_PLAYERS, MAX_PLAYERS)
    check_common(record, n)
    if record.get("deck") != DECK:
        raise RecordError(f"deck {record.get('deck')!r} is not the deck of the rules (T1); expected {DECK}")
    try:
        cfg = Config(num_players=n, deck=DECK_COMPOSITION, hand_size=record_int("hand_size", record.get("hand_size"), 1, 20))
        rounds = record["rounds"]
        if not isinstance(rounds, list) or len(rounds) != cfg.num_rounds:
            raise RecordError(f"record must hold {cfg.num_rounds} rounds")
        deals = [[[kind_index(k) for k in hand] for hand in rnd["dealt"]] for rnd in rounds]
        state = new_game(cfg, deals=deals)
        for r, rnd in enumerate(rounds):
            picks = rnd["picks"]
            if len(picks) != cfg.decision_picks:
                raise RecordError(f"round {r + 1}: {len(picks)} picks recorded, {cfg.decision_picks} expected")
            for p, pick in enumerate(picks):
                apply_actions(state, [kind_index(k) for k in pick])
            last = [KIND_NAMES[k] for k in state.reveals[r][-1]]
            if last != rnd["last"]:
                raise RecordError(f"round {r + 1}: last tapas {rnd['last']} recorded, replay reveals {last}")
            if [int(x) for x in state.round_scores[r]] != record_ints(f"round {r + 1} scores", rnd["scores"], n):
                raise RecordError(f"round {r + 1}: scores {rnd['scores']} recorded, replay gives "
                                  f"{state.round_scores[r].tolist()}")
    except RecordError:
        raise
    except (KeyError, TypeError, IndexError) as e:
        raise RecordError(f"malformed Tapeo record: missing or wrong field ({e!r})") from e
    except (ConfigError, IllegalActionError) as e:
        raise RecordError(f"Tapeo record does not replay: {e}") from e
    for key, got in (("churros", state.churros_kept.tolist()), ("final_scores", state.final_scores.tolist()),
                     ("winners", list(state.winners))):
        want = record.get(key)
        if key == "winners":
            record_ints(key, want, hi=n - 1)
        else:
            record_ints(key, want, n)
        if want != got:
            raise RecordError(f"{key} {record.get(key)} recorded, replay gives {got}")
    return state


def save_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Write ``record`` atomically once :func:`replay` accepts it (RecordError otherwise, nothing written)."""
    _save(path, record, replay)


def load_record(path: str | os.PathLike) -> dict[str, Any]:
    """Read a Tapeo record (checks the header only; call :func:`replay` to check the game).

    Raises:
        RecordError: a file over :data:`hod.core.records.MAX_RECORD_BYTES` (refused before it is
            parsed), not UTF-8, unreadable/truncated JSON or JSON nested too deeply to parse,
            another game or format version.
    """
    return _load(path, GAME, FORMAT_VERSION)
