"""How a run of Ronda Robada goes on, as small pure functions: the one place for these rules.

Rules: shared/rules/ronda_robada.txt ('Card order', 'How to play', 'End of the game and
scoring') and the rulings R2, R3 and R7 of shared/rules/RULINGS.md. The single engine
(:mod:`robada_env.rules.engine`), the batched engine (:mod:`robada_env.rules.batched`, through
tables built from these functions) and the bots (:mod:`hod.agents.robada_bots`, the plan features
and the search bot) all ask these functions, so each rule and each rule option is written once.

The compiled kernels (:mod:`robada_env.rules.kernels`) compile the scalar ones among these same
functions (``next_after_start``, ``next_after_step``, ``can_start``, ``must_tap``,
``pile_takeable``, ``leftovers_receiver``: numba ``njit`` of this source, inlined), so the mask and
the step of both engines and the bots' planner ask one statement of each rule.

Everything works on plain ints and short sequences (or, compiled, array rows), in whatever frame
of seats the caller uses:

* a rank is ``0..9`` (A, 2..7, Sota, Caballo, Rey; :mod:`robada_env.rules.cards`);
* ``loose`` is the count of loose cards per rank, a sequence of 10 ints;
* ``tops`` is the rank of each pile's visible card, one int per seat, ``-1`` for an empty pile;
* ``hand`` is the count of hand cards per rank (10 ints).

The options are those of :class:`robada_env.rules.engine.Config`: ``closing_ace`` (R2),
``may_take_own_pile`` (R3) and ``leftovers_to_last_runner`` (R7).
"""
from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

from .cards import ACE, NUM_RANKS, REY

__all__ = [
    "RUN_CLOSED", "NOBODY", "TAP_STEP", "next_after_start", "next_after_step", "can_start", "startable_ranks",
    "may_take_pile", "must_tap", "pile_takeable", "takeable_piles", "extension_options", "RunWalk", "STEP_BITS", "STEP_MASK", "NEVER", "walk",
    "walk_run",
    "leftovers_receiver",
]

#: The rank a run needs when it can go no further (after the closing Ace, or after the Rey
#: without ``closing_ace``, R2).
RUN_CLOSED = -1
#: No seat (R7: nobody has confirmed a run yet).
NOBODY = -1
#: The seat recorded for a step of :class:`RunWalk` that tapped a loose card (R3).
TAP_STEP = -1


def next_after_start(rank: int, closing_ace: bool = True) -> int:
    """The rank a run needs right after it started with ``rank`` (R2, 'Card order').

    A..Caballo are followed by the next rank (a run started with an Ace needs the 2: the Ace
    closes a run only after the Rey); the Rey by the closing Ace when ``closing_ace``, else by
    nothing.

    Args:
        rank: int 0..9, the rank of the starting pair.
        closing_ace: ``Config.closing_ace`` (R2).

    Returns:
        int rank 0..9, or :data:`RUN_CLOSED`. E.g. ``next_after_start(0) == 1`` (A -> 2),
        ``next_after_start(9) == 0`` (Rey -> closing Ace), ``next_after_start(9, False) == -1``.
    """
    if rank < REY:
        return rank + 1
    return ACE if closing_ace else RUN_CLOSED


def next_after_step(rank: int, closing_ace: bool = True) -> int:
    """The rank a run needs after an extension step gathered ``rank`` (R2).

    Only the Rey is followed by an Ace, so an Ace reached by extension is always the closing Ace
    and nothing follows it, whatever rank the run started with; otherwise as
    :func:`next_after_start`.

    Args:
        rank: int 0..9, the rank just tapped or taken.
        closing_ace: ``Config.closing_ace`` (R2).

    Returns:
        int rank 0..9, or :data:`RUN_CLOSED`. E.g. ``next_after_step(0) == -1`` (closing Ace),
        ``next_after_step(7) == 8`` (Sota -> Caballo).
    """
    if rank == ACE:
        return RUN_CLOSED
    if rank < REY:
        return rank + 1
    return ACE if closing_ace else RUN_CLOSED


def can_start(rank: int, hand: Sequence[int], loose: Sequence[int]) -> bool:
    """Whether a run may start with ``rank``: a hand card and a loose card of that rank
    ('How to play'; a run never starts against a pile's visible card, 'Frequently asked
    questions').

    Args:
        rank: int 0..9.
        hand: (10,) hand cards per rank.
        loose: (10,) loose cards per rank.
    """
    return hand[rank] > 0 and loose[rank] > 0


def startable_ranks(hand_ranks: set, loose_ranks: set) -> list[int]:
    """The ranks a run may start with, ascending: :func:`can_start` for every rank, from the sets
    of ranks present in the hand and among the loose cards (the engine's form: no counts needed).

    Args:
        hand_ranks: ranks 0..9 with at least one card in hand.
        loose_ranks: ranks 0..9 with at least one loose card.
    """
    return sorted(hand_ranks & loose_ranks)


def may_take_pile(seat: int, runner: int, may_take_own_pile: bool = True) -> bool:
    """Whether the pile of ``seat`` may ever be taken by a run of ``runner`` (R3): any seat's
    pile, the runner's own only when ``may_take_own_pile``. (Whether it shows the needed rank,
    and whether a loose card comes first, is :func:`extension_options`.)"""
    return may_take_own_pile or seat != runner


def must_tap(need: int, loose: Sequence[int]) -> bool:
    """Whether the run's next step must tap a loose card (R3: while a loose card of the needed
    rank is on the table, the run can only be extended by tapping it).

    Args:
        need: the rank the run needs, or :data:`RUN_CLOSED` (then False: nothing extends it).
        loose: (10,) loose cards per rank.
    """
    return need >= 0 and loose[need] > 0


def pile_takeable(need: int, top: int, seat: int, runner: int, may_take_own_pile: bool = True) -> bool:
    """Whether the pile of ``seat``, visible rank ``top`` (-1: empty), may extend a run of
    ``runner`` that needs ``need`` when no loose card of that rank is on the table (R3): it
    shows the needed rank, and it is not the runner's own unless ``may_take_own_pile``.

    Args:
        need: the rank the run needs (``RUN_CLOSED``: never).
        top: the pile's visible rank, -1 for an empty pile (never takeable).
        seat, runner: the pile's seat and the runner's, in one frame.
        may_take_own_pile: ``Config.may_take_own_pile`` (R3).
    """
    return need >= 0 and top == need and (may_take_own_pile or seat != runner)


def takeable_piles(need: int, tops: Sequence[int], runner: int = 0,
                   may_take_own_pile: bool = True) -> list[int]:
    """The seats whose pile shows ``need`` and that ``runner`` may take (R3), ascending.

    An empty pile (``tops[k] == -1``) has no visible card and is never takeable. This does not
    look at the loose cards: use :func:`extension_options` for the full step rule.

    Args:
        need: the rank the run needs (``RUN_CLOSED`` gives ``[]``).
        tops: (n,) visible rank per seat, -1 for an empty pile (any frame of seats).
        runner: the runner's seat in the same frame.
        may_take_own_pile: ``Config.may_take_own_pile`` (R3).

    Returns:
        list of seat indices into ``tops``.
    """
    return [k for k, t in enumerate(tops) if pile_takeable(need, t, k, runner, may_take_own_pile)]


def extension_options(need: int, loose: Sequence[int], tops: Sequence[int], runner: int = 0,
                      may_take_own_pile: bool = True) -> tuple[bool, list[int]]:
    """How a run in progress may be extended to the rank it needs (R3).

    If a loose card of ``need`` is on the table, the only extension is to tap one; only when
    there is none may the runner take a pile, any seat's (its own only with
    ``may_take_own_pile``) whose visible card has that rank. Confirming is always possible
    besides (R4) and is not listed.

    Args:
        need: the rank the run needs, or :data:`RUN_CLOSED` (then nothing extends it).
        loose: (10,) loose cards per rank.
        tops: (n,) visible rank per seat, -1 for an empty pile.
        runner: the runner's seat in the frame of ``tops``.
        may_take_own_pile: ``Config.may_take_own_pile``.

    Returns:
        ``(tap, seats)``: ``tap`` is True when the step is a tap (then ``seats`` is ``[]``);
        otherwise ``seats`` lists the takeable piles ascending (possibly none: the run must stop).
    """
    if must_tap(need, loose):
        return True, []
    return False, takeable_piles(need, tops, runner, may_take_own_pile)


class RunWalk(NamedTuple):
    """A run followed to its end by :func:`walk_run`.

    Attributes:
        steps: the extension steps in order, ``(rank, seat)``: ``seat`` is :data:`TAP_STEP`
            for a tapped loose card, else the seat whose whole pile was taken.
        loose: (10,) loose cards per rank after the run (the starting loose card removed).
        tops: (n,) visible ranks after the run, taken piles at -1 (the runner's own pile is not
            changed: the caller knows what the confirm puts on top, R5).
        need: the rank the run would need next when it stopped, or :data:`RUN_CLOSED`.
    """

    steps: list
    loose: list
    tops: list
    need: int


#: Bits per step in the path :func:`walk` returns: step ``i`` is ``(path >> (STEP_BITS * i)) &
#: STEP_MASK``, the taken pile's seat + 1, or 0 for a tap (:data:`TAP_STEP` + 1).
STEP_BITS = 3
STEP_MASK = (1 << STEP_BITS) - 1
#: A pile value :func:`walk` never takes (the walk takes the pile of highest value > -1).
NEVER = -1


def _walk_source(must_tap, pile_takeable):
    """:func:`walk` written over the rule functions it asks (``must_tap``, ``pile_takeable``):
    called with this module's functions it is :func:`walk` (plain Python), and
    :mod:`robada_env.rules.kernels` compiles the same source over their compiled twins (numba
    ``njit`` of this module's functions), so the greedy walk is written once."""

    def walk(need, loose, tops, values, runner, own_value, may_take_own_pile, after_step):
        """Follow a run that needs rank ``need`` to its end, taking every step the rules allow
        (R2, R3): each step taps a loose card of the needed rank when there is one
        (:func:`must_tap`); otherwise it takes the takeable pile (:func:`pile_takeable`) of highest
        ``values[seat]`` (the runner's own pile: ``own_value``; the first in seat order on a tie; a
        pile valued :data:`NEVER` is never taken); with no such pile the run stops. The run needs ``after_step[rank]`` after a step
        that gathered ``rank`` (:func:`next_after_step`).

        Args:
            need: int, the rank needed next (:data:`RUN_CLOSED`: the run is over).
            loose: (10,) int loose cards per rank; the tapped cards are removed (in place).
            tops: (n,) int visible rank per seat, -1 for an empty pile; the taken piles are set to
                -1 (in place).
            values: (n,) int value of taking each seat's pile (>= 0), or :data:`NEVER` (e.g. the
                piles' points).
            runner: the runner's seat in the frame of ``tops``.
            own_value: the value of the runner's own pile (in place of ``values[runner]``).
            may_take_own_pile: ``Config.may_take_own_pile`` (R3).
            after_step: (10,) int, ``next_after_step(rank, closing_ace)`` of each rank (R2).

        Returns:
            ``(path, steps, need)``: the steps packed in an int (:data:`STEP_BITS` per step:
            seat + 1 of a taken pile, 0 for a tap; the ranks follow from ``need`` and
            ``after_step``), their number (at most 10: the ranks after the start up to the
            closing Ace), and the rank the run would need next when it stopped, or :data:`RUN_CLOSED`.
        """
        path = 0
        steps = 0
        while need >= 0:
            if must_tap(need, loose):                    # R3: a loose card of the needed rank first
                loose[need] -= 1
                code = 0
            else:                                        # R3: else the best takeable pile, if any
                best = -1
                best_v = NEVER
                for k in range(len(tops)):
                    if pile_takeable(need, tops[k], k, runner, may_take_own_pile):
                        v = own_value if k == runner else values[k]
                        if v > best_v:
                            best = k
                            best_v = v
                if best < 0:
                    break
                tops[best] = -1
                code = best + 1
            path |= code << (STEP_BITS * steps)
            steps += 1
            need = after_step[need]
        return path, steps, need

    return walk


walk = _walk_source(must_tap, pile_takeable)


def walk_run(start: int, loose: Sequence[int], tops: Sequence[int], runner: int = 0,
             pile_values: Optional[Sequence[Optional[int]]] = None, closing_ace: bool = True,
             may_take_own_pile: bool = True) -> RunWalk:
    """Follow the run that starts with ``start``, taking every step the rules allow (R2, R3):
    :func:`walk` after the start, its steps unpacked.

    Each step taps a loose card of the needed rank when there is one (R3); otherwise it takes
    the takeable pile (:func:`extension_options`) of highest ``pile_values[seat]`` (the first
    one in seat order on a tie; a seat valued ``None`` is never taken); with no such pile the
    run stops. Nothing here chooses to stop early: the caller picks the stopping point from
    ``steps``.

    Args:
        start: rank 0..9 of the starting pair; the caller checks :func:`can_start`.
        loose: (10,) loose cards per rank before the start (the starting loose card included).
        tops: (n,) visible rank per seat, -1 for an empty pile.
        runner: the runner's seat in the frame of ``tops``.
        pile_values: (n,) value of taking each seat's pile (ints >= 0), ``None`` for a pile the
            caller never takes; default: every takeable pile worth 0.
        closing_ace: ``Config.closing_ace`` (R2).
        may_take_own_pile: ``Config.may_take_own_pile`` (R3).

    Returns:
        :class:`RunWalk`.

    Raises:
        ValueError: ``start`` is not a rank, no loose card of that rank is on the table, or a
            pile value is negative.
    """
    if not 0 <= start < NUM_RANKS or loose[start] <= 0:
        raise ValueError(f"a run cannot start with rank {start!r}: it needs a loose card of that rank")
    if pile_values is not None and any(v is not None and v < 0 for v in pile_values):
        raise ValueError(f"pile_values={list(pile_values)!r}: legal values are ints >= 0 and None")
    values = [0] * len(tops) if pile_values is None else [NEVER if v is None else v for v in pile_values]
    lo = list(loose)
    lo[start] -= 1
    tp = list(tops)
    need = next_after_start(start, closing_ace)
    after = _AFTER_STEP[bool(closing_ace)]
    path, count, end = walk(need, lo, tp, values, runner, values[runner], may_take_own_pile, after)
    steps: list = []
    for i in range(count):
        code = (path >> (STEP_BITS * i)) & STEP_MASK
        steps.append((need, code - 1))
        need = after[need]
    return RunWalk(steps, lo, tp, end)


#: ``next_after_step`` of every rank, by ``closing_ace`` (the lookup table :func:`walk` takes).
_AFTER_STEP = {ca: tuple(next_after_step(r, ca) for r in range(NUM_RANKS)) for ca in (True, False)}


def leftovers_receiver(last_runner: int, leftovers_to_last_runner: bool = True) -> int:
    """Who gets the loose cards left at the end of the game (R7, 'End of the game and
    scoring'): the seat that confirmed the last run, or :data:`NOBODY` when nobody ever
    confirmed one or the option ``leftovers_to_last_runner`` is off.

    Args:
        last_runner: seat (any frame) or :data:`NOBODY`.
        leftovers_to_last_runner: ``Config.leftovers_to_last_runner``.
    """
    return last_runner if leftovers_to_last_runner and last_runner >= 0 else NOBODY
