"""The Spanish 40-card deck of Ronda Robada (ronda_robada.txt 'Deck', RULINGS R1).

A card is a plain ``int`` in ``0..39``: ``card = 10 * suit + rank`` with
``rank`` in ``0..9`` (A, 2, 3, 4, 5, 6, 7, Sota, Caballo, Rey) and ``suit`` in ``0..3``
(oros, copas, espadas, bastos). Suits never matter for the rules (R1); they are kept so that
records and renders show real cards.
"""
from __future__ import annotations

#: Number of ranks (R1): A, 2..7, Sota, Caballo, Rey.
NUM_RANKS = 10
#: Number of suits (R1).
NUM_SUITS = 4
#: Cards in the deck (R1).
DECK_SIZE = NUM_RANKS * NUM_SUITS
#: Copies of each rank in the deck (one per suit).
COPIES_PER_RANK = NUM_SUITS

#: Rank index of the Ace (the rank that may close a run after the Rey, R2; the run order itself
#: is :mod:`robada_env.rules.runs`).
ACE = 0
#: Rank index of the Sota (Jack).
SOTA = 7
#: Rank index of the Caballo (Knight; "Queen" in the rule text).
CABALLO = 8
#: Rank index of the Rey (King), the highest rank (R2).
REY = 9

#: Short rank names, by rank index.
RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "Sota", "Caballo", "Rey")
#: Suit names, by suit index (display only, R1).
SUIT_NAMES = ("oros", "copas", "espadas", "bastos")
#: Points of each rank (ronda_robada.txt 'End of the game and scoring', RULINGS R1/R8):
#: Ace 1, 2..7 face value, Sota 10, Caballo 11, Rey 12.
RANK_POINTS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
#: Points of each card id (``CARD_POINTS[c] == RANK_POINTS[c % 10]``).
CARD_POINTS = tuple(RANK_POINTS[c % NUM_RANKS] for c in range(DECK_SIZE))
#: All points in the deck: 4 * (1+2+3+4+5+6+7+10+11+12) = 4 * 61 = 244.
TOTAL_POINTS = sum(CARD_POINTS)


def card(rank: int, suit: int) -> int:
    """Card id of ``rank`` (0..9) in ``suit`` (0..3).

    Raises:
        ValueError: rank or suit out of range.
    """
    if not (0 <= rank < NUM_RANKS and 0 <= suit < NUM_SUITS):
        raise ValueError(f"rank must be in 0..9 and suit in 0..3, got rank={rank}, suit={suit}")
    return suit * NUM_RANKS + rank


def rank_of(c: int) -> int:
    """Rank index (0..9) of card id ``c``."""
    return c % NUM_RANKS


def suit_of(c: int) -> int:
    """Suit index (0..3) of card id ``c``."""
    return c // NUM_RANKS


def card_name(c: int) -> str:
    """Readable card name, e.g. ``"Sota of copas"``.

    Raises:
        ValueError: ``c`` is not a card id in 0..39.
    """
    if not 0 <= c < DECK_SIZE:
        raise ValueError(f"card id must be in 0..{DECK_SIZE - 1}, got {c}")
    return f"{RANK_NAMES[c % NUM_RANKS]} of {SUIT_NAMES[c // NUM_RANKS]}"


def parse_card(text: str) -> int:
    """Inverse of :func:`card_name` (``"Rey of oros"`` -> 9). Case-insensitive.

    Raises:
        ValueError: not a card name; the message gives the expected form.
    """
    try:
        r, s = text.strip().split(" of ")
        ranks = [x.lower() for x in RANK_NAMES]
        return card(ranks.index(r.strip().lower()), SUIT_NAMES.index(s.strip().lower()))
    except ValueError:
        raise ValueError(
            f"{text!r} is not a card; expected '<rank> of <suit>' with rank in {list(RANK_NAMES)} "
            f"and suit in {list(SUIT_NAMES)}"
        ) from None

