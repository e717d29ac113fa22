"""Shared helpers of the Ronda Robada tests: card shorthand and hand-built positions/decks."""
from robada_env.rules.cards import parse_card
from robada_env.rules.engine import Config, from_position

_SUITS = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
_RANKS = {"A": "A", "S": "Sota", "C": "Caballo", "R": "Rey"}


def c(short: str) -> int:
    """Card id from a shorthand: rank (A, 2..7, S=Sota, C=Caballo, R=Rey) + suit letter
    (o, c, e, b). ``c("Sc")`` is the Sota of copas."""
    rank, suit = short[:-1], short[-1]
    return parse_card(f"{_RANKS.get(rank, rank)} of {_SUITS[suit]}")


def cs(text) -> list[int]:
    """Cards from space-separated shorthands, ``cs("Ao 2o")``, or a list of them."""
    return [c(x) for x in (text.split() if isinstance(text, str) else text)]


def position(hands, loose="", piles=None, n=2, current=0, last_runner=-1, to_deck=True, **rules):
    """A position from shorthand strings; every card not placed goes to the deck (ascending ids)
    when ``to_deck``, else under the cards of the last seat's pile (ascending ids)."""
    hands = [cs(h) for h in hands]
    loose = cs(loose)
    piles = [cs(p) for p in piles] if piles is not None else [[] for _ in range(n)]
    used = set(loose) | {x for h in hands for x in h} | {x for p in piles for x in p}
    rest = [x for x in range(40) if x not in used]
    deck = rest if to_deck else []
    if not to_deck:
        piles[-1] = rest + piles[-1]
    return from_position(Config(num_players=n, **rules), hands, loose, piles, deck, current, last_runner)
