"""The fixed discrete action space of Ronda Robada (27 actions, independent of suits and of the
order of cards in hand).

=========  =====================================================================================
action     meaning
=========  =====================================================================================
0-9        ``start <rank>``: play a hand card of rank r against a loose card of rank r to start a
           run (ronda_robada.txt 'How to play'); r = 0..9 is A, 2..7, Sota, Caballo, Rey.
10-19      ``drop <rank>``: put a hand card of rank r - 10 on the table as a loose card, ending
           the turn ('If you can't or don't want to play', RULINGS R4).
20         ``tap loose``: extend the run with a loose card of the rank it needs (R3).
21-24      ``take pile +k``: extend the run by taking the whole pile of seat (actor + k) % n,
           k = 0 (own pile), 1 (the seat on the left), 2, 3 (R3). Only when no loose card of the
           needed rank is on the table and that pile's visible card has the needed rank.
25         ``confirm``: end the run; everything gathered goes to the actor's pile, the starting
           card visible on top (R4, R5); the turn passes to the left.
26         ``no-op``: legal only for a seat that is not to act (Parallel form, or the mask that an
           AEC observation gives a seat that is not to act).
=========  =====================================================================================

Which copy of a rank is used when several are available is fixed (the first in hand order, the
first in table order); suits never matter for the rules (R1).
"""
from __future__ import annotations

from .cards import NUM_RANKS, RANK_NAMES

#: First "start a run with rank r" action (START + r).
START = 0
#: First "drop a card of rank r" action (DROP + r).
DROP = START + NUM_RANKS
#: Tap a loose card of the needed rank.
TAP = DROP + NUM_RANKS
#: First "take the pile of seat (actor + k) % n" action (TAKE + k), k = 0..MAX_PLAYERS-1.
TAKE = TAP + 1
#: Seats addressed by TAKE actions (the table's maximum, RULINGS: 2-4 players).
TAKE_SEATS = 4
#: Confirm the run.
CONFIRM = TAKE + TAKE_SEATS
#: Do nothing (only for seats that are not to act).
NOOP = CONFIRM + 1
#: Size of the Discrete action space.
NUM_ACTIONS = NOOP + 1


def action_name(a: int) -> str:
    """Readable name of action ``a`` (used in records and renders), e.g. ``"start Sota"``.

    Raises:
        ValueError: ``a`` outside ``0..NUM_ACTIONS-1``; the message gives the range.
    """
    a = int(a)
    if START <= a < DROP:
        return f"start {RANK_NAMES[a - START]}"
    if DROP <= a < TAP:
        return f"drop {RANK_NAMES[a - DROP]}"
    if a == TAP:
        return "tap loose"
    if TAKE <= a < CONFIRM:
        k = a - TAKE
        return "take pile +0 (own)" if k == 0 else f"take pile +{k}"
    if a == CONFIRM:
        return "confirm"
    if a == NOOP:
        return "no-op"
    raise ValueError(f"action {a} out of range; legal action ids are 0..{NUM_ACTIONS - 1}")


#: Names of all actions, by id.
ACTION_NAMES = tuple(action_name(a) for a in range(NUM_ACTIONS))
