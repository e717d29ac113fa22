"""Play Tapeo against the computer from the terminal.

    python -m hod.apps.play_tapeo --players 4 --opponents expert --seed 7 [--seat 0] [--record out.json]

You hold one seat; the other seats are registered bots (``--opponents``: one name for all, or one
per opponent seat; default the first registered of ppo > expert > greedy > random, not the
strongest: the search bots rate higher). Each pick
shows what your seat may know (tapeo.txt 'The hand and the bar': every bar is face up; the hands
you held earlier this round and have passed on are known exactly, since every tapa taken from
them since was revealed): the scores of the finished rounds, every bar and the churros kept, your
hand, and the numbered legal picks. Then all the picks of the pick are revealed together, with
each Freeloader's steal spelled out (RULINGS T6); after each round the scoring is broken down by
kind; at the end come the final scores with the churros (T9), the winner (T10) and the game record
(:mod:`tapeo_env.rules.record`, replayable with :func:`tapeo_env.rules.record.replay`).

The rules stay in :mod:`tapeo_env.rules.engine` and :mod:`tapeo_env.rules.scoring`: this module drives
:class:`tapeo_env.env.TapeoParallelEnv` and prints. Exit codes: see :mod:`hod.apps.play`
(0 at the end or on end of input / ``quit``, 130 on Ctrl-C, 2 for bad options).
"""
from __future__ import annotations

import sys
from typing import Optional, Sequence, TextIO

import numpy as np

from hod.apps.play import Choice, GameSession, play_main

from tapeo_env.rules.cards import FREELOADER, HAM_SLICES, KIND_NAMES, PEPPER, MAX_PLAYERS, MIN_PLAYERS, NUM_KINDS
from tapeo_env.rules.engine import FREELOADER_STEALS_FREELOADER, State, known_hands, legal_mask, sample_consistent_state
from tapeo_env.env import TapeoParallelEnv
from tapeo_env.rules.observation import encode
from tapeo_env.rules.scoring import DEFAULT_RULINGS, ROUND_RULES, Rulings, round_breakdown, round_points

GAME = "tapeo"

#: The game's names of the tapas (tapeo.txt 'Deck'), by kind (= action).
TAPA_NAMES: tuple[str, ...] = (
    "tortilla", "croqueta", "ham (1 slice)", "ham (2 slices)", "ham (3 slices)", "garlic prawns",
    "bread", "Padrón pepper", "Freeloader", "churro",
)
#: Extra words a person may type for a kind (lower case), besides its action name.
_ALIASES: tuple[tuple[str, ...], ...] = (
    ("tortillas",), ("croquetas",), ("ham 1", "ham (1 slice)"), ("ham 2", "ham (2 slices)"),
    ("ham 3", "ham (3 slices)"), ("garlic prawns", "prawn"), ("breads",), ("padrón pepper", "padron pepper", "peppers"),
    ("freeloaders",), ("churros",),
)


def scoring_hints(rulings: Rulings = DEFAULT_RULINGS) -> tuple[str, ...]:
    """One-line reminder of how each kind scores (tapeo.txt 'How each tapa scores'), by kind,
    with the numbers of ``rulings``."""
    r = rulings
    croq = "/".join(str(x) for x in r.croqueta_table[1:])
    ham = f"toward the ham majority ({r.ham_first} most, {r.ham_second} runner-up)"
    return (
        f"{r.tortilla_pair} per pair", f"{croq} for 1..{len(r.croqueta_table) - 1}", f"1 slice {ham}",
        f"2 slices {ham}", f"3 slices {ham}", f"{r.prawn} each, +{r.bread_dip} per bread dipping",
        f"+{r.bread_dip} if it dips a garlic prawns", f"{r.pepper} each; the most (if {r.hot_pepper_min}+) loses "
        f"{r.hot_pepper_penalty}", "steals what your left neighbour reveals",
        f"kept; most at the end +{r.churro_most}, fewest -{r.churro_fewest}",
    )


def tapas_text(counts: np.ndarray) -> str:
    """``"tortilla x2, ham (3 slices)"`` for a (NUM_KINDS,) count vector; ``"-"`` if empty."""
    parts = [TAPA_NAMES[k] + (f" x{int(counts[k])}" if counts[k] > 1 else "") for k in range(NUM_KINDS) if counts[k]]
    return ", ".join(parts) if parts else "-"


def steals(kinds: Sequence[int]) -> list[tuple[int, int, Optional[int]]]:
    """The Freeloaders of one reveal (RULINGS T6): ``(thief, victim, kind stolen or None)`` for
    each seat that revealed a Freeloader, where the victim is its left neighbour ``(thief + 1) % n``
    and ``None`` means nothing is stolen (the victim also revealed a Freeloader,
    :data:`tapeo_env.rules.engine.FREELOADER_STEALS_FREELOADER`). For display only: the engine applies
    the steals."""
    n = len(kinds)
    out = []
    for i, kind in enumerate(kinds):
        if kind == FREELOADER:
            victim = (i + 1) % n
            loot = kinds[victim]
            out.append((i, victim, None if loot == FREELOADER and not FREELOADER_STEALS_FREELOADER else loot))
    return out


class TapeoSession(GameSession):
    """One game of Tapeo between a person at ``table.seat`` and bots at the other seats, on
    :class:`tapeo_env.env.TapeoParallelEnv`. Arguments and shared parts:
    :class:`hod.apps.play.GameSession`."""

    game = GAME
    title = "Tapeo"
    rules_line = "Three rounds; each pick everyone picks one tapa at once, then passes the hand left."
    sample_belief = staticmethod(sample_consistent_state)

    def make_env(self, num_players: int) -> TapeoParallelEnv:
        """As :meth:`hod.apps.play.GameSession.make_env`: an unwrapped
        :class:`tapeo_env.env.TapeoParallelEnv` (the natural form: the picks are simultaneous) of
        ``num_players`` (2..6) seats, ``illegal_action="raise"``."""
        return TapeoParallelEnv(num_players=num_players, illegal_action="raise")

    # -- the game loop -------------------------------------------------------------------------
    def loop(self) -> None:
        """Play the picks until the game is over, then show the end."""
        while self.env.agents:
            picks = self.bot_picks()
            self.term.say(self.screen())
            self.play_pick(self.ask_pick(), picks)
        self.show_end()

    def over(self) -> bool:
        """True once the game is over."""
        return not self.env.agents

    def legal(self) -> list[int]:
        """The person's legal picks now: the kinds in their hand (tapeo.txt 'Each pick')."""
        return [int(k) for k in np.flatnonzero(legal_mask(self.state, self.table.seat))]

    def bot_picks(self) -> dict[int, int]:
        """``{seat: kind}``: the pick of every computer seat at the current pick, each made from
        what that seat's observation shows (the bot sees what the env hands seat i)."""
        s = self.state
        return {i: self.bot_action(i, {"observation": encode(s, i), "action_mask": legal_mask(s, i)})
                for i in range(self.table.players) if i != self.table.seat}

    def play_pick(self, mine: int, picks: Optional[dict[int, int]] = None) -> None:
        """Play one pick: the person's ``mine`` and the computer seats' ``picks`` (default:
        :meth:`bot_picks`) revealed together; then tell the reveals (and the automatic last
        tapas, T7) and, when the pick ends the round, its scoring. ``mine`` must be legal
        (:meth:`legal`; the env raises ``IllegalActionError`` otherwise)."""
        picks = self.bot_picks() if picks is None else picks
        agents, s = self.env.possible_agents, self.state
        rnd, done = s.round, len(s.reveals[s.round])
        actions = {agents[i]: a for i, a in picks.items()}
        actions[agents[self.table.seat]] = mine
        self.env.step(actions)
        self.show_reveals(rnd, done)
        if len(self.state.round_bars) > rnd:
            self.show_round(rnd)

    def ask_pick(self) -> int:
        """Read the person's pick (a kind in hand) and return it. The scoring hint of each tapa is
        shown at the first pick of each round (the legend stays short for the other picks)."""
        hand = self.state.hand(self.table.seat)
        first_pick = len(self.state.reveals[self.state.round]) == 0
        hints = scoring_hints(self.state.config.rulings) if first_pick else ("",) * NUM_KINDS
        choices = [Choice(k, KIND_NAMES[k], f"{TAPA_NAMES[k]} x{int(hand[k])}" + (f": {hints[k]}" if hints[k] else ""),
                          _ALIASES[k] + (TAPA_NAMES[k].lower(),))
                   for k in range(NUM_KINDS) if hand[k]]

        def illegal(text: str) -> Optional[str]:
            for k in range(NUM_KINDS):
                if text in (KIND_NAMES[k], TAPA_NAMES[k].lower()) + _ALIASES[k]:
                    return f"You hold no {TAPA_NAMES[k]}."
            return None

        c = self.term.choose("Your pick", choices, illegal)
        self.term.say(f"You pick {TAPA_NAMES[c.action]}.")
        return c.action

    # -- what the person sees ------------------------------------------------------------------
    def screen(self) -> str:
        """What the person's seat knows before it picks: the scores, every bar (face up) with
        the churros, the hands it has seen and its own hand. Built only from public information
        and the seat's own knowledge (:func:`tapeo_env.rules.engine.known_hands`)."""
        s, t, w = self.state, self.table, self.width
        n, me = t.players, t.seat
        cfg = s.config
        scores, churros = s.scores_so_far(), s.churros_held()
        first = s.pick == 0  # the reminders of how a pick works are shown at each round's first pick
        lines = ["", f"=== Round {s.round + 1}/{cfg.num_rounds}, pick {s.pick + 1} of {cfg.decision_picks} "
                     + (f"({s.cards_in_hand} tapas in each hand; the last one is revealed by itself) ==="
                        if first else f"({s.cards_in_hand} tapas in each hand) ===")]
        lines.append("Scores of finished rounds: " + ", ".join(f"{self.names[i]} {int(scores[i])}" for i in range(n)))
        lines.append(f"  {'Bars (face up)':<{w}}  churros | bar this round")
        for i in range(n):
            slices, peppers = int(s.bars[i] @ HAM_SLICES), int(s.bars[i, PEPPER])
            extra = ", ".join(x for x in (f"{slices} ham slice{'s' if slices > 1 else ''}" if slices else "",
                                          f"{peppers} peppers" if peppers > 1 else "") if x)
            lines.append(f"  {self.names[i]:<{w}}  {int(churros[i]):>7} | {tapas_text(s.bars[i])}"
                         + (f"  [{extra}]" if extra else ""))
        left = (me + 1) % n
        if first:
            lines.append(f"You pass your hand to your left, {self.names[left]}; "
                         "your Freeloader steals what they reveal.")
        for j, hand in enumerate(known_hands(s, me), 1):
            if hand is not None:
                lines.append(f"  {self.names[(me + j) % n]} now holds a hand you passed: {tapas_text(hand)}")
        lines.append(f"Your hand ({s.cards_in_hand} tapas), pick one:")
        return "\n".join(lines)

    def show_reveals(self, rnd: int, done: int) -> None:
        """Print every reveal of round ``rnd`` after the first ``done`` (the picks just made,
        and the automatic last tapas, T7), all seats together, with the steals."""
        s, w = self.state, self.width
        for q, kinds in enumerate(s.reveals[rnd][done:], done):
            last = q == s.config.hand_size - 1
            title = "Last tapas, revealed by themselves" if last else f"Pick {q + 1} revealed"
            lines = [f"{title}:"]
            stolen = {v: (th, loot) for th, v, loot in steals(kinds) if loot is not None}
            for i, kind in enumerate(kinds):
                note = f"  (taken by {self._owner(stolen[i][0])} Freeloader)" if i in stolen else ""
                lines.append(f"  {self.names[i]:<{w}}  {TAPA_NAMES[kind]}{note}")
            for th, v, loot in steals(kinds):
                steal = "steal" if th == self.table.seat else "steals"
                victim = "you" if v == self.table.seat else self.names[v]
                if loot is None:
                    lines.append(f"  Freeloader: {self.names[th]} {steal} nothing, "
                                 f"{victim} also revealed a Freeloader.")
                else:
                    lines.append(f"  Freeloader: {self.names[th]} {steal} the {TAPA_NAMES[loot]} {victim} revealed, "
                                 f"onto {self._their(th)} bar.")
            self.term.say(*lines)

    def _owner(self, seat: int) -> str:
        return "your" if seat == self.table.seat else f"{self.names[seat]}'s"

    def _their(self, seat: int) -> str:
        return "your" if seat == self.table.seat else "their"

    def show_round(self, rnd: int) -> None:
        """Print the finished round's bars and its scoring, kind by kind
        (:func:`tapeo_env.rules.scoring.round_breakdown`)."""
        s, n, w = self.state, self.table.players, self.width
        bars = s.round_bars[rnd]
        br = round_breakdown(bars, s.config.rulings)
        total = s.round_scores[:rnd + 1].sum(axis=0)
        lines = ["", f"=== Round {rnd + 1} scoring ==="]
        for i in range(n):
            lines.append(f"  {self.names[i]:<{w}}  bar: {tapas_text(bars[i])}")
        head = "".join(f"{k:>9}" for k in ROUND_RULES)
        lines.append(f"  {'':<{w}}{head}    round  total  churros kept")
        for i in range(n):
            cells = "".join(f"{int(br[k][i]):>9}" for k in ROUND_RULES)
            lines.append(f"  {self.names[i]:<{w}}{cells}  {int(s.round_scores[rnd, i]):>7}  {int(total[i]):>5}"
                         f"  {int(s.churros_kept[i]):>12}")
        lines.append("  (ham: majority of slices; pepper: 2 each, -6 for the most if 3 or more; "
                     "churros count at the end)")
        self.term.say(*lines)

    def show_end(self) -> None:
        """Final scores (rounds + end churros, T9), the winner (T10) and the record."""
        s, n, w = self.state, self.table.players, self.width
        rounds = s.scores_so_far()
        lines = ["", "=== Game over ===", f"  {'':<{w}}   rounds  churros kept  churro points   final"]
        for i in range(n):
            lines.append(f"  {self.names[i]:<{w}}  {int(rounds[i]):>7}  {int(s.churros_kept[i]):>12}"
                         f"  {int(s.final_scores[i] - rounds[i]):>+13}  {int(s.final_scores[i]):>6}")
        lines.append(_winner_line(self.names, s))
        lines += self.record_lines()
        self.term.say(*lines)

    def score_so_far(self) -> list[str]:
        """The score of an unfinished game: finished rounds + what this round's bars would score."""
        s, n = self.state, self.table.players
        rounds, now = s.scores_so_far(), round_points(s.bars, s.config.rulings)
        return ["Score so far (finished rounds + what this round's bars would score now):",
                *(f"  {self.names[i]:<{self.width}}  {int(rounds[i])} + {int(now[i])} = {int(rounds[i] + now[i])}"
                  f"   (churros {int(s.churros_held()[i])})" for i in range(n))]


def _winner_line(names: list[str], s: State) -> str:
    """``Winner: ...`` (T10: most points, then most churros; a remaining tie is shared)."""
    best = np.flatnonzero(s.final_scores == s.final_scores.max())
    who = " and ".join(names[i] for i in s.winners)
    if len(s.winners) > 1:
        return f"Shared win: {who} (tied on points and churros)."
    if len(best) > 1:
        return f"Winner: {who} (tied on points, more churros kept)."
    return f"Winner: {who}."


def main(argv: Optional[Sequence[str]] = None, stdin: Optional[TextIO] = None,
         stdout: Optional[TextIO] = None) -> int:
    """Run the command; returns the exit code (see the module docstring)."""
    return play_main(TapeoSession, "python -m hod.apps.play_tapeo", "Play Tapeo against the computer.",
                     MIN_PLAYERS, MAX_PLAYERS, 4, argv, stdin, stdout)


if __name__ == "__main__":
    sys.exit(main())
