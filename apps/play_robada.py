"""Play Ronda Robada against the computer from the terminal.

    python -m hod.apps.play_robada --players 2 --opponents expert --seed 7 [--seat 0] [--record out.json]

You hold one seat; the other seats are registered bots (``--opponents``: one name for all, or one
per opponent seat; default the first registered of ppo > expert > greedy > random, not the
strongest: the search bots rate higher). Each of your
decisions shows what your seat may know (RULINGS R9): the loose cards, every pile's visible card
with its size and points, how many cards each opponent holds (never which), the run in progress,
the deck left, the scores and your hand, with the numbered legal choices, each spelled out with the
cards it moves. Every turn, yours and the computer's, is told step by step: the start (which hand
card on which loose card), each loose card tapped or pile taken, then the confirm or the drop.
At the end come the final scores, the winner (R8) and the game record (:mod:`robada_env.rules.record`,
replayable with :func:`robada_env.rules.record.replay`).

Cards use the Spanish names: "As de oros", "7 de copas", "Sota de espadas", "Caballo de bastos",
"Rey de oros"; the greeting and the help (``?``) give the English once (:data:`GLOSSARY`: Sota =
Jack, Caballo = Knight, the rule text's Queen, Rey = King). The rules stay in :mod:`robada_env.rules.engine`: this module drives
:class:`robada_env.env.raw_env` and prints, and tells what a choice does by applying it to a copy
of the position. Exit codes: see :mod:`hod.apps.play` (0 at the end or on end of input /
``quit``, 130 on Ctrl-C, 2 for bad options).
"""
from __future__ import annotations

import sys
from typing import Optional, Sequence, TextIO

from hod.apps.play import Choice, GameSession, play_main

from robada_env.rules.actions import ACTION_NAMES, CONFIRM, DROP, START, TAKE, TAP
from robada_env.rules.cards import ACE, CARD_POINTS, NUM_RANKS, RANK_NAMES, SUIT_NAMES
from robada_env.rules.engine import (MAX_PLAYERS, MIN_PLAYERS, NOBODY, RUN_CLOSED, State, apply_action, legal_actions,
                     sample_consistent_state, winners)
from robada_env.env import raw_env

GAME = "robada"
#: Spanish names of the ranks, by rank index (R1); the Ace is "As".
RANK_WORDS: tuple[str, ...] = ("As",) + RANK_NAMES[1:]


#: The Spanish names in English, said once in the greeting and with the help (``?``). The rule
#: text (ronda_robada.txt) says Jack, Queen (also Knight, in its scoring) and King.
GLOSSARY = ("Ranks in English: As = Ace, Sota = Jack, Caballo = Knight (the Queen of a French deck), "
            "Rey = King.\nSuits: oros = coins, copas = cups, espadas = swords, bastos = clubs.")


def carta(c: int) -> str:
    """Spanish name of card id ``c``: ``"Sota de copas"``, ``"As de oros"``."""
    return f"{RANK_WORDS[c % NUM_RANKS]} de {SUIT_NAMES[c // NUM_RANKS]}"


def cartas(cards: Sequence[int]) -> str:
    """Comma-separated Spanish names; ``"-"`` when empty."""
    return ", ".join(carta(c) for c in cards) if cards else "-"


def points(cards: Sequence[int]) -> int:
    """Card points of ``cards`` (R8: As 1, 2..7 face value, Sota 10, Caballo 11, Rey 12)."""
    return sum(CARD_POINTS[c] for c in cards)


def need_text(s: State) -> str:
    """What the run in progress needs next (RULINGS R2): ``"needs a Caballo"``, ``"needs an As (the
    closing card)"`` after the Rey, or ``"is closed ..."`` after the closing As."""
    if s.run_next == RUN_CLOSED:
        return "is closed (nothing follows the closing As)"
    if s.run_next == ACE:
        return "needs an As (the closing card)"
    return f"needs a {RANK_WORDS[s.run_next]}"


class RobadaSession(GameSession):
    """One game of Ronda Robada between a person at ``table.seat`` and bots at the other seats,
    on :class:`robada_env.env.raw_env`. Arguments and shared parts:
    :class:`hod.apps.play.GameSession`."""

    game = GAME
    title = "Ronda Robada"
    rules_line = "Seat 0 plays first; turns go to the left. 4 loose cards on the table, 3 cards to each."
    glossary = GLOSSARY
    sample_belief = staticmethod(sample_consistent_state)

    def make_env(self, num_players: int) -> raw_env:
        """As :meth:`hod.apps.play.GameSession.make_env`: an unwrapped
        :class:`robada_env.env.raw_env` (AEC, the natural form) of ``num_players`` (2..4) seats,
        ``illegal_action="raise"``."""
        return raw_env(num_players=num_players, illegal_action="raise")

    def loop(self) -> None:
        """Play every decision until the game is over, then show the end."""
        me = self.table.seat
        while not self.over():
            seat = self.state.current
            self.turn_header(seat)
            self.play_step(seat, self.ask_action() if seat == me else self.bot_action(seat, self.observe(seat)))
        self.show_end()

    def over(self) -> bool:
        """True once the game is over (R7: the deck and the hands are out)."""
        return self.state.terminal

    def legal(self) -> list[int]:
        """The legal actions of the seat to act (:func:`robada_env.rules.engine.legal_actions`)."""
        return [int(a) for a in legal_actions(self.state)]

    def observe(self, seat: int) -> dict:
        """The observation dict the env hands ``seat`` (what a bot at ``seat`` sees)."""
        return self.env.observe(self.env.possible_agents[seat])

    def turn_header(self, seat: int) -> None:
        """Say whose turn starts, when ``seat`` is about to begin a turn (no run in progress)."""
        if not self.state.run:
            whose = "Your" if seat == self.table.seat else f"{self.names[seat]}'s"
            self.term.say("", f"--- {whose} turn ---")

    def play_step(self, seat: int, action: int) -> None:
        """Apply ``action`` of ``seat`` (the seat to act; the env raises ``IllegalActionError``
        for an illegal one) and tell it (:meth:`narrate`)."""
        before = self.state.clone()
        self.env.step(action)
        self.term.say(*self.narrate(seat, action, before, self.state))

    def ask_action(self) -> int:
        """Show the person's screen and read a legal action."""
        s = self.state
        self.term.say(self.screen())
        choices = [Choice(a, ACTION_NAMES[a], self.describe(a), self._aliases(a)) for a in legal_actions(s)]
        return self.term.choose("Your choice", choices).action

    @staticmethod
    def _aliases(a: int) -> tuple[str, ...]:
        if START <= a < DROP:
            return (f"start {RANK_WORDS[a - START].lower()}",)
        if DROP <= a < TAP:
            return (f"drop {RANK_WORDS[a - DROP].lower()}",)
        if a == TAP:
            return ("tap",)
        if a == CONFIRM:
            return ("c",)
        return ()

    # -- what the person sees ------------------------------------------------------------------
    def screen(self) -> str:
        """What the person's seat knows now (R9): scores, loose cards, each pile's visible card,
        size and points, the other hands' sizes, the last runner, the run in progress, the deck
        left and its own hand. The reminders of the rules in parentheses are shown during the
        first deal only (the screen depends only on what the seat knows)."""
        s, t, w = self.state, self.table, self.width
        n, me = t.players, t.seat
        first = len(s.deck) == 36 - 3 * n  # still the first deal (R6: 4 loose, then 3 each)
        lines = ["", "Scores: " + ", ".join(f"{self.names[i]} {s.points[i]}" for i in range(n))
                 + f"   | deck: {len(s.deck)} cards left"]
        lines.append(f"Loose cards on the table ({len(s.loose)}): {cartas(s.loose)}")
        lines.append("Piles (only the top card shows; taking it takes the whole pile):" if first else "Piles:")
        for i in range(n):
            p = s.piles[i]
            desc = f"{carta(p[-1])} on top, {len(p)} cards, {s.points[i]} pts" if p else "empty"
            k = len(s.hands[i])
            hand = "" if i == me else f"   | {k} card{'s' if k != 1 else ''} in hand"
            lines.append(f"  {self.names[i]:<{w}}  {desc}{hand}")
        if s.last_runner != NOBODY:
            lines.append(f"Last run confirmed by {self.names[s.last_runner]}"
                         + (" (gets the loose cards left at the end)." if first else "."))
        if s.run:
            if s.run_taken:  # list the start and the piles taken, not every card of the piles
                gathered = (f"{carta(s.run[0])} on {carta(s.run[1])}, ..., piles taken: "
                            + ", ".join(self.names[x] for x in s.run_taken))
            else:
                gathered = cartas(s.run)
            lines.append(f"Your run: {gathered} = {len(s.run)} cards, {points(s.run)} pts; it {need_text(s)}.")
        else:
            lines.append("No run yet this turn: start one (a hand card on a loose card of the same rank) "
                         "or drop a card." if first else "No run yet this turn: start one or drop a card.")
        lines.append(f"Your hand: {cartas(s.hands[me])}")
        return "\n".join(lines)

    def _whose(self, owner: int, actor: int) -> str:
        if owner == actor:
            return "your own" if actor == self.table.seat else "their own"
        return "your" if owner == self.table.seat else f"{self.names[owner]}'s"

    def describe(self, a: int) -> str:
        """What action ``a`` of the seat to act would do, read from a copy of the position after
        it (:func:`robada_env.rules.engine.apply_action` on a clone)."""
        s = self.state
        after = s.clone()
        apply_action(after, a)
        if START <= a < DROP:
            return (f"play your {carta(after.run[0])} on the loose {carta(after.run[1])}; "
                    f"the run then {need_text(after)}")
        if DROP <= a < TAP:
            dropped = [c for c in s.hands[s.current] if c not in after.hands[s.current]]
            return f"put your {cartas(dropped)} on the table as a loose card (ends your turn)"
        if a == TAP:
            return f"tap the loose {carta(after.run[-1])}"
        if TAKE <= a < CONFIRM:
            t = after.run_taken[-1]
            p = s.piles[t]
            return f"take {self._whose(t, s.current)} pile: {len(p)} cards, {points(p)} pts ({carta(p[-1])} on top)"
        return (f"end the run: its {len(s.run)} cards ({points(s.run)} pts) go to your pile, "
                f"{carta(s.run[0])} on top")

    def narrate(self, seat: int, a: int, before: State, after: State) -> list[str]:
        """The step ``a`` of ``seat`` that turned ``before`` into ``after``, in words; plus a new
        deal and the end of the game (leftover loose cards, R7) when it brought them."""
        you = seat == self.table.seat
        who = "You" if you else self.names[seat]

        def v(verb: str) -> str:
            return verb if you else verb + "s"

        if START <= a < DROP:
            line = (f"{who} {v('start')} a run: {carta(after.run[0])} from hand on the loose "
                    f"{carta(after.run[1])}; the run {need_text(after)}.")
        elif DROP <= a < TAP:
            dropped = [c for c in before.hands[seat] if c not in after.hands[seat]]
            line = f"{who} {v('drop')} {cartas(dropped)} on the table as a loose card."
        elif a == TAP:
            line = (f"{who} {v('tap')} the loose {carta(after.run[-1])}: run of {len(after.run)} cards, "
                    f"{points(after.run)} pts; it {need_text(after)}.")
        elif TAKE <= a < CONFIRM:
            t = after.run_taken[-1]
            p = before.piles[t]
            line = (f"{who} {v('take')} {self._whose(t, seat)} pile: {len(p)} cards, {points(p)} pts "
                    f"({carta(p[-1])} on top): run of {len(after.run)} cards, {points(after.run)} pts; "
                    f"it {need_text(after)}.")
        else:
            run = before.run
            line = (f"{who} {v('confirm')} the run: {len(run)} cards ({points(run)} pts) go to "
                    f"{'your' if you else 'their'} pile, {carta(run[0])} on top "
                    f"({len(before.piles[seat]) + len(run)} cards, {before.points[seat] + points(run)} pts).")
        lines = [f"  {line}"]
        if len(after.deck) < len(before.deck):
            lines.append(f"  New deal: 3 cards to each player; {len(after.deck)} cards left in the deck.")
        if after.terminal:
            w = after.last_runner
            if w != NOBODY:
                left = [c for c in after.piles[w] if c not in before.piles[w] and c not in before.run]
                if left:
                    lines.append(f"  The deck is out. The loose cards left ({cartas(left)}, {points(left)} pts) "
                                 f"go to {self.names[w]}, who made the last run.")
            if after.loose:
                lines.append(f"  The loose cards left ({cartas(after.loose)}) go to nobody.")
        return lines

    def show_end(self) -> None:
        """Final scores, the winner (R8) and the record."""
        s, t, w = self.state, self.table, self.width
        lines = ["", "=== Game over ===", f"  {'':<{w}}  pile cards  points"]
        for i in range(t.players):
            lines.append(f"  {self.names[i]:<{w}}  {len(s.piles[i]):>10}  {s.points[i]:>6}")
        ws = winners(s)
        who = " and ".join(self.names[i] for i in ws)
        lines.append(f"Shared win: {who}." if len(ws) > 1 else f"Winner: {who}.")
        lines += self.record_lines()
        self.term.say(*lines)

    def score_so_far(self) -> list[str]:
        """The score of an unfinished game: the points in each pile, and a run not confirmed."""
        s = self.state
        lines = ["Score so far (points in each pile):"]
        lines += [f"  {self.names[i]:<{self.width}}  {s.points[i]}" for i in range(self.table.players)]
        if s.run:
            lines.append(f"  (a run of {len(s.run)} cards, {points(s.run)} pts, was not confirmed)")
        return lines


def main(argv: Optional[Sequence[str]] = None, stdin: Optional[TextIO] = None,
         stdout: Optional[TextIO] = None) -> int:
    """Run the command; returns the exit code (see the module docstring)."""
    return play_main(RobadaSession, "python -m hod.apps.play_robada", "Play Ronda Robada against the computer.",
                     MIN_PLAYERS, MAX_PLAYERS, 2, argv, stdin, stdout)


if __name__ == "__main__":
    sys.exit(main())
