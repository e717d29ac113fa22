"""What the page tells a player about each game: a one-line blurb for the home page, the rules
panel (our short words for docs/tapeo_rules.md and docs/robada_rules.md, which restate the rule
texts and RULINGS.md), and the legend of what each tapa or card scores.

The numbers come from the rules' own constants (hand sizes, rounds, deal sizes, card points,
:func:`hod.apps.play_tapeo.scoring_hints`), so the panel cannot drift from the engines; the page's
script only draws the text (:func:`guide`, served by ``GET /api/options``).
"""
from __future__ import annotations

from hod.apps.play_robada import GLOSSARY, RANK_WORDS
from hod.apps.play_tapeo import TAPA_NAMES, scoring_hints

from robada_env.rules.cards import RANK_POINTS, TOTAL_POINTS
from robada_env.rules.engine import CARDS_PER_DEAL, LOOSE_AT_START
from tapeo_env.rules.cards import DECK_COMPOSITION, HAND_SIZES, KIND_NAMES
from tapeo_env.rules.engine import NUM_ROUNDS
from tapeo_env.rules.scoring import DEFAULT_RULINGS

__all__ = ["BLURBS", "guide", "legend", "rules"]

#: The home page's one line per game.
BLURBS = {
    "tapeo": "Pick one tapa, pass your hand on: build the best bar of Spanish tapas over three rounds.",
    "robada": "Build runs of Spanish cards from the table and grab your opponents' piles on the way.",
}


def legend(game: str) -> list[dict]:
    """What each tapa (Tapeo) or card rank (Ronda Robada) scores: ``[{"key", "name", "scores"}]``
    (``key``: the tapa's kind name, ``tortilla``..``churro``, or the rank word, ``As``..``Rey``;
    ``scores``: a short text, Ronda Robada's also ``points``, an int). Tapeo: T1-T9 with the
    default rulings (:func:`hod.apps.play_tapeo.scoring_hints`); Ronda Robada: R1 (``RANK_POINTS``).

    Raises:
        KeyError: ``game`` is not ``"tapeo"`` nor ``"robada"``.
    """
    if game == "tapeo":
        hints = scoring_hints(DEFAULT_RULINGS)
        return [{"key": KIND_NAMES[k], "name": TAPA_NAMES[k], "scores": hints[k], "in_deck": DECK_COMPOSITION[k]}
                for k in range(len(KIND_NAMES))]
    if game == "robada":
        return [{"key": RANK_WORDS[r], "name": RANK_WORDS[r], "points": RANK_POINTS[r],
                 "scores": f"{RANK_POINTS[r]} point{'s' if RANK_POINTS[r] != 1 else ''}"} for r in range(len(RANK_WORDS))]
    raise KeyError(game)


def rules(game: str) -> list[dict]:
    """The rules panel of ``game``: ``[{"title", "lines": [str]}]``, in our words (docs/tapeo_rules.md,
    docs/robada_rules.md; the rule texts and RULINGS.md are the authority).

    Raises:
        KeyError: ``game`` is not ``"tapeo"`` nor ``"robada"``.
    """
    r = DEFAULT_RULINGS
    if game == "tapeo":
        hands = ", ".join(f"{v} with {k}" for k, v in HAND_SIZES.items())
        return [
            {"title": "Goal", "lines": [
                f"Finish {NUM_ROUNDS} rounds with the most points. Your left neighbour is the next seat: you "
                "pass your hand to them and your Freeloader steals from them."]},
            {"title": "Each pick", "lines": [
                f"Everyone is dealt a hand ({hands} players). Each pick, everyone chooses one tapa in secret; "
                "all are revealed together and go face up onto their picker's bar; then every hand is passed left.",
                "When each hand is down to one tapa, the last tapas are revealed by themselves."]},
            {"title": "The Freeloader", "lines": [
                "It scores nothing itself: it steals the tapa your left neighbour revealed in the same pick. "
                "If that neighbour also revealed a Freeloader, yours steals nothing (theirs still steals from their left)."]},
            {"title": "Scoring each round", "lines": [
                f"Tortilla: {r.tortilla_pair} per pair. Croquetas: "
                f"{', '.join(str(x) for x in r.croqueta_table[1:])} for 1 to {len(r.croqueta_table) - 1}.",
                f"Ham: the most slices take {r.ham_first}, the runner-up {r.ham_second}; ties split the prize "
                "(rounded down), and a tie for the most leaves no runner-up.",
                f"Garlic prawns: {r.prawn} each, +{r.bread_dip} for each bread that dips one.",
                f"Padrón peppers: {r.pepper} each, but whoever has the most (if {r.hot_pepper_min} or more) "
                f"loses {r.hot_pepper_penalty}.",
                "Bars are cleared after each round, except churros: you keep them to the end."]},
            {"title": "End of the game", "lines": [
                f"Most churros kept: +{r.churro_most}; fewest: -{r.churro_fewest} (with two players nobody "
                "loses). The most points win; a tie goes to whoever kept more churros."]},
        ]
    if game == "robada":
        return [
            {"title": "Goal", "lines": [
                f"When the deck and every hand are empty, the pile worth the most wins (the deck holds {TOTAL_POINTS} points)."]},
            {"title": "Cards", "lines": [
                "Run order: " + ", ".join(RANK_WORDS) + ", then one As may close the run.",
                "Points: " + ", ".join(f"{w} {p}" for w, p in zip(RANK_WORDS, RANK_POINTS)) + ". Suits never score.",
                *GLOSSARY.split("\n")]},
            {"title": "Dealing", "lines": [
                f"{LOOSE_AT_START} cards lie face up as loose cards; everyone gets {CARDS_PER_DEAL}. When all hands "
                f"are empty, everyone gets {CARDS_PER_DEAL} more."]},
            {"title": "Your turn", "lines": [
                "Either drop a hand card as a new loose card, or start a run: a hand card on a loose card of the "
                "same rank.",
                "Then extend the run with the next rank up: if a loose card of that rank is on the table you must "
                "take it; only when none is may you take a whole pile (anyone's, yours too) whose visible card has "
                "that rank.",
                "Confirm whenever you like: everything gathered goes onto your pile, the card from your hand on top."]},
            {"title": "The end", "lines": [
                "Loose cards left at the end go to whoever confirmed the last run. A tie for the most points is a "
                "shared win."]},
        ]
    raise KeyError(game)


def guide(game: str) -> dict:
    """``{"blurb", "rules", "legend"}`` of ``game`` (:data:`BLURBS`, :func:`rules`, :func:`legend`).

    Raises:
        KeyError: unknown game.
    """
    return {"blurb": BLURBS[game], "rules": rules(game), "legend": legend(game)}
