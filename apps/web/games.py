"""The games of the web app: one :class:`WebGame` (:class:`TapeoGame`, :class:`RobadaGame`) per game in
progress, kept in a :class:`GameStore`.

A :class:`WebGame` drives the terminal play sessions step by step (:class:`hod.apps.play_tapeo.TapeoSession`,
:class:`hod.apps.play_robada.RobadaSession`, with a :class:`hod.apps.play.Transcript` in place of the
terminal), so the rules, the bots, the narration of each computer step and the game record are the
terminal's: the web page only adds the drawing. Its :meth:`WebGame.view` is what the person's seat
may know and nothing else (built from the same public information and own knowledge as the
terminal screens: Tapeo's ``known_hands``, tapeo.txt 'The hand and the bar'; Ronda Robada's R9):
the page's every byte comes from it.

Each game counts the person's decisions (``step``); an action names the step it answers, so a
replayed or stale request is refused (:class:`StaleRequest`) and changes nothing.
"""
from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import Any, Optional, Sequence

from hod.agents.registry import names, player_counts
from hod.agents.strength import strength
from hod.apps.play import GameSession, PlayOptions, Transcript, default_opponent, parse_opponents, player_labels, strength_label
from hod.apps.play_robada import RANK_WORDS, RobadaSession, carta, need_text, points
from hod.apps.play_tapeo import TAPA_NAMES, TapeoSession, scoring_hints, steals
from hod.apps.web.difficulty import LABELS, difficulty_bots
from hod.apps.web.guide import guide
from hod.core.errors import ConfigError, check_seat
from hod.core.deal import SEED_LIMIT
from hod.core.games import get_game

from robada_env.rules.actions import ACTION_NAMES as ROBADA_ACTIONS
from robada_env.rules.cards import NUM_RANKS, SUIT_NAMES
from robada_env.rules.engine import NOBODY, winners
from robada_env.rules.runs import extension_options
from tapeo_env.rules.cards import HAM_SLICES, KIND_NAMES, NUM_KINDS, PEPPER
from tapeo_env.rules.engine import known_hands
from tapeo_env.rules.scoring import ROUND_RULES, churro_points, ham_points, pepper_points, round_breakdown

#: Seeds drawn by the server are below this: 2**53, the integers a JavaScript number (the page's
#: JSON) holds exactly, far too many to try one by one.
JS_SAFE_SEEDS = 2**53
#: Games kept at once; beyond it the least recently used finished game is dropped, else the least
#: recently used one in progress (its page then gets 404).
MAX_GAMES = 256


class GameError(Exception):
    """A request the game refuses; ``status`` is the HTTP status, ``detail`` the JSON body."""

    status = 400

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.detail = {"error": message, **detail}


class UnknownGame(GameError):
    """No game with that id (never made, or dropped): 404."""

    status = 404


class StaleRequest(GameError):
    """The action answers an earlier step than the game's (a replayed or stale request), or the
    game is over: 409, nothing changes."""

    status = 409


class IllegalChoice(GameError):
    """An action that is not legal now, or a malformed one: 422, naming the legal actions."""

    status = 422


def options() -> dict:
    """What the new-game form offers: for each game its title, table sizes, default table size,
    and every registered bot with its strength label and rating per table size (``labels``,
    ``ratings``: keyed by the size as a string, ``"unrated"`` / None where the ladder has not
    measured it there; ``agents/strength.json``) and the table sizes it plays; the default opponent per table size (the shipped PPO opponent where it plays
    that size, :func:`hod.apps.play.default_opponent`); the bot each difficulty deals per table
    size (``difficulty``: :func:`hod.apps.web.difficulty.difficulty_bots`, keyed by the size as a
    string); and the game's blurb, rules panel and scoring legend (:func:`hod.apps.web.guide.guide`)."""
    out = {}
    for game, cls in GAMES.items():
        info = get_game(game)
        sizes = list(range(info.min_players, info.max_players + 1))
        bots = []
        for name in names(game):
            entries = {n: strength(game, name, n) for n in sizes}
            counts = player_counts(game, name)
            bots.append({"name": name, "labels": {str(n): e["label"] if e else "unrated" for n, e in entries.items()},
                         "ratings": {str(n): None if e is None else round(float(e["rating"]), 1)
                                     for n, e in entries.items()},
                         "players": sizes if counts is None else [int(k) for k in counts]})
        out[game] = {"title": cls.session_cls.title, "players": sizes, "default_players": cls.default_players,
                     "bots": bots, "default_opponent": {str(n): default_opponent(game, None, n) for n in sizes},
                     "difficulty": {str(n): difficulty_bots(game, n) for n in sizes}, **guide(game)}
    return out


def difficulty_opponent(game: str, players: int, difficulty: str) -> str:
    """The bot a ``difficulty`` (``"easy"``, ``"medium"``, ``"hard"``) deals for every computer
    seat of a table of ``players`` (:func:`hod.apps.web.difficulty.difficulty_bots`).

    Raises:
        ConfigError: not a difficulty label (the legal ones are named), or no bot of that label
            plays that table size.
    """
    if difficulty not in LABELS:
        raise ConfigError(f"difficulty: legal values: {list(LABELS)}")
    bot = difficulty_bots(game, players)["bots"][difficulty]
    if bot is None:
        raise ConfigError(f"difficulty: no {game} bot of that label plays {players} players; "
                          f"legal values here: {[k for k, v in difficulty_bots(game, players)['bots'].items() if v]}")
    return bot


class WebGame:
    """One game between a person and computer seats, played by requests; each game's subclass
    (:class:`TapeoGame`, :class:`RobadaGame`) says who acts when, applies the person's action and
    draws its table.

    Class attributes:
        game: registry name. session_cls: the game's terminal session class.
        default_players: the table size the new-game form offers first (as the terminal command's).
        action_names: the game's action names (by action id).

    Args:
        game_id: the id in the game's URL.
        players: table size (the game's legal sizes). seat: the person's seat (0..players-1).
        opponents: bot names for the computer seats (None: the default, as the terminal's).
        seed: the deal's seed (None: a fresh one, kept back from the view until the game is over,
            since it fixes every hand).

    Raises:
        ConfigError: unknown game, bad table size, seat, seed or opponent (the message names the
            field and its legal values and repeats no value given: a web request's input is never
            sent back).
    """

    game: str = ""
    session_cls: type = GameSession
    default_players: int = 2
    action_names: Sequence[str] = ()

    def __init__(self, game_id: str, players: int, seat: int = 0,
                 opponents: Optional[Sequence[str]] = None, seed: Optional[int] = None) -> None:
        game = self.game
        self.check_players(players)
        try:
            seat = check_seat(seat, players)
        except ConfigError:
            raise ConfigError(f"seat: not a seat of a table of {players}; legal values: {list(range(players))}") from None
        chosen = seed is not None
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT):
            raise ConfigError("seed: legal values: an int in 0..2**64-1, or null for a fresh one")
        # a fresh seed is drawn from OS entropy over 0..2**53-1, so the deal cannot be found by
        # trying seeds against the first view (2**53 deals), and the page's JavaScript numbers
        # hold it exactly when it is shown at the end
        seed = secrets.randbelow(JS_SAFE_SEEDS) if seed is None else seed
        registered = names(game)
        for i, name in enumerate(opponents or ()):
            if name not in registered:       # checked here: parse_opponents' message repeats the name
                comma = " (one name per item: a name holds no comma)" if "," in name else ""
                raise ConfigError(f"opponents.{i}: not a {game} bot{comma}; registered bots: {registered}")
        notices: list[str] = []
        bots = parse_opponents(game, list(opponents) if opponents else None, players - 1, notices,
                               what="opponents", commas=False)
        others = [(seat + k) % players for k in range(1, players)]
        table = PlayOptions(players=players, seat=seat, seed=seed, opponents=dict(zip(others, bots)),
                            record=None, notices=notices)
        self.id = game_id
        self.log = Transcript()
        self.session = self.session_cls(table, self.log)
        # a seed drawn here stays on the server until the end: it fixes the deal, every hand included
        self.seed_chosen = self.session.announce_seed = chosen
        self.step = 0
        self._ended = False
        self._seen = 0          # transcript lines before the person's last decision
        self._end_lines: Optional[int] = None   # transcript lines before the game-over text
        self.lock = threading.Lock()
        self.session.start()
        self._advance()

    @classmethod
    def check_players(cls, players: object) -> None:
        """Raises ConfigError (naming the legal table sizes) unless ``players`` is an int table
        size of the game."""
        info = get_game(cls.game)
        if isinstance(players, bool) or not isinstance(players, int) or not info.min_players <= players <= info.max_players:
            raise ConfigError(f"players: not a table size of {cls.game}; legal values: "
                              f"{list(range(info.min_players, info.max_players + 1))}")

    # -- playing -------------------------------------------------------------------------------
    @property
    def table(self) -> PlayOptions:
        """The game's table options (:class:`hod.apps.play.PlayOptions`: size, the person's seat,
        the seed, the bot of each computer seat)."""
        return self.session.table

    def over(self) -> bool:
        """True once the game is over."""
        return self.session.over()

    def _to_act(self) -> bool:
        """True when the person's seat must decide now (each game's own)."""
        raise NotImplementedError

    def _apply(self, action: int) -> None:
        """Apply the person's legal ``action`` (each game's own)."""
        raise NotImplementedError

    def _advance(self) -> None:
        """Play the computer seats until the person must decide or the game is over; at the
        end, tell the final scores once."""
        if self.over() and not self._ended:
            self._ended = True
            self._end_lines = len(self.log.lines)   # the final scores: in the view's table, not in recent
            self.session.show_end()

    def play(self, step: object, action: object) -> None:
        """Apply the person's ``action`` answering ``step``, then the computer seats' moves.

        Raises:
            StaleRequest: ``step`` is not the game's current step (a replayed or stale request)
                or the game is over; nothing changes.
            IllegalChoice: ``action`` is not an int legal now (the legal ones are named).
        """
        if isinstance(step, bool) or not isinstance(step, int):
            raise IllegalChoice("step: expected the int step of the view the action answers", step=self.step)
        if self.over():
            raise StaleRequest("the game is over; no action is legal", step=self.step)
        if step != self.step:
            raise StaleRequest(f"the step answered is not the game's current step {self.step} (a replayed or "
                               "stale request); reload the game", step=self.step)
        legal = self.session.legal()
        if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
            raise IllegalChoice(f"action: not legal now; legal actions: {legal}",
                                legal=[{"action": a, "name": self._action_name(a)} for a in legal])
        self._seen = len(self.log.lines)
        self._apply(action)
        self.step += 1
        self._advance()

    def _action_name(self, a: int) -> str:
        return self.action_names[a]

    def record(self) -> dict:
        """The JSON game record of the finished game (the game's record schema), with who played
        each seat (``"human"`` and the bot names).

        Raises:
            StaleRequest: the game is not over yet.
        """
        if not self.over():
            raise StaleRequest("the game is not over; the record is offered at the end", step=self.step)
        return self.session.env.record(players=player_labels(self.table))

    # -- what the page shows -------------------------------------------------------------------
    def view(self) -> dict:
        """Everything the page shows, from what the person's seat may know only: the table, the
        person's legal choices (with what each does), the transcript of every step so far
        (``log``) and of those since the person's last decision (``recent``: their own step and
        every computer step after it; the game-over text, a score table, only in ``log``: the
        final scores are the table's ``result``), and at the end the result. JSON-ready (ints, strings,
        lists)."""
        t = self.table
        seats = []
        for i in range(t.players):
            bot = t.opponents.get(i)
            entry = strength(self.game, bot, t.players) if bot else None
            seats.append({"seat": i, "name": self.session.names[i], "you": i == t.seat, "bot": bot,
                          "label": strength_label(self.game, bot, t.players) if bot else None,
                          "rating": None if entry is None else round(float(entry["rating"]), 1)})
        view = {"id": self.id, "game": self.game, "title": self.session.title, "players": t.players,
                "seat": t.seat,
                "seed": t.seed if self.seed_chosen or self.over() else None, "step": self.step, "over": self.over(), "seats": seats,
                "log": list(self.log.lines), "recent": [x for x in self.log.lines[self._seen:self._end_lines] if x.strip()]}
        view["table"] = self._table()
        view["choices"] = self._choices() if self._to_act() else []
        # what "play again" posts: the same game, table size, seat and bots (a new deal)
        view["settings"] = {"game": self.game, "players": t.players, "seat": t.seat,
                            "opponents": [t.opponents[(t.seat + k) % t.players] for k in range(1, t.players)]}
        return view

    def _table(self) -> dict:
        """The table as the person's seat sees it (each game's own)."""
        raise NotImplementedError

    def _choices(self) -> list[dict]:
        """The person's legal choices, each ``{"action", "name", "label", ...}`` (each game's own)."""
        raise NotImplementedError


class TapeoGame(WebGame):
    """A Tapeo game: every seat picks at once (the computer seats with the person), then all
    picks are revealed together (tapeo.txt 'Each pick')."""

    game = "tapeo"
    session_cls = TapeoSession
    default_players = 4
    action_names = KIND_NAMES

    def __init__(self, *args, **kwargs) -> None:
        self._reveals: list[dict] = []   # the picks revealed by the person's last decision
        super().__init__(*args, **kwargs)

    def _to_act(self) -> bool:
        return not self.over()

    def _apply(self, action: int) -> None:
        s = self.session
        rnd, done = s.state.round, len(s.state.reveals[s.state.round])
        s.play_pick(action)
        self._reveals = [self._reveal(rnd, q, kinds) for q, kinds in enumerate(s.state.reveals[rnd][done:], done)]

    def _choices(self) -> list[dict]:
        s = self.session
        hand = s.state.hand(self.table.seat)
        hints = scoring_hints(s.state.config.rulings)
        return [{"action": a, "name": KIND_NAMES[a], "tapa": TAPA_NAMES[a], "hint": hints[a],
                 "label": f"{TAPA_NAMES[a]}: {hints[a]}", "count": int(hand[a])} for a in s.legal()]

    def _table(self) -> dict:
        """Every bar (face up), the scores and churros, the person's hand and the hands they
        passed on this round (known exactly: :func:`tapeo_env.rules.engine.known_hands`), the
        picks just revealed, each round's scoring by kind, and the final scores (T9, T10)."""
        s, t = self.session.state, self.table
        n, me = t.players, t.seat
        cfg = s.config

        def tapas(counts) -> list[dict]:
            return [{"kind": KIND_NAMES[k], "name": TAPA_NAMES[k], "count": int(counts[k])}
                    for k in range(NUM_KINDS) if counts[k]]

        scores, churros = s.scores_so_far(), s.churros_held()
        table = {"round": min(s.round, cfg.num_rounds - 1) + 1, "rounds": cfg.num_rounds,
                 "pick": s.pick + 1, "picks": cfg.decision_picks, "in_hand": int(s.cards_in_hand),
                 "bars": [{"seat": i, "tapas": tapas(s.bars[i]), "churros": int(churros[i]),
                           "score": int(scores[i])} for i in range(n)]}
        if not self.over():
            table.update(self._bar_standings(s.bars, churros, cfg.rulings))
        if not self.over():
            table["hand"] = tapas(s.hand(me))
            table["known_hands"] = [{"seat": (me + j) % n, "tapas": tapas(h)}
                                    for j, h in enumerate(known_hands(s, me), 1) if h is not None]
        else:
            table["hand"], table["known_hands"] = [], []
        table["reveals"] = self._reveals
        rounds = []
        for r, bars in enumerate(s.round_bars):
            br = round_breakdown(bars, cfg.rulings)
            rounds.append({"round": r + 1, "rules": list(ROUND_RULES),
                           "rows": [{"seat": i, "points": [int(br[k][i]) for k in ROUND_RULES],
                                     "total": int(s.round_scores[r, i])} for i in range(n)]})
        table["scoring"] = rounds
        if self.over():
            rounds_pts = s.scores_so_far()
            table["result"] = {"rows": [{"seat": i, "rounds": int(rounds_pts[i]), "churros": int(s.churros_kept[i]),
                                         "churro_points": int(s.final_scores[i] - rounds_pts[i]),
                                         "final": int(s.final_scores[i])} for i in range(n)],
                               "winners": [int(w) for w in s.winners]}
        return table

    @staticmethod
    def _bar_standings(bars, churros, rulings) -> dict:
        """What each bar would score if the round ended now, and who leads each majority, from
        the rules' scoring functions (:mod:`tapeo_env.rules.scoring`; bars are face up, so all of
        it is public): ``{"bar_points": [{"seat", "points": {rule: int}, "total"}],
        "majorities": {"ham": ..., "pepper": ..., "churros": ...}}``.

        * ham (T2, T3): ``slices`` per seat, ``first`` (the seats taking the most-slices prize)
          and ``second`` (the runner-up prize), each with the points :func:`ham_points` gives;
        * pepper (T5): ``counts``, ``most`` (the seats with the table's most peppers, none when
          nobody has one) and ``hot`` (True when they lose the penalty now);
        * churros (T8, T9; counted at the end of the game): ``counts`` (kept + on this bar),
          ``most`` and ``fewest`` (the seats :func:`churro_points` would reward and punish if the
          game ended now: 2 players, the fewest lose nothing), with their ``points``.
        """
        n = len(bars)
        br = round_breakdown(bars, rulings)
        slices = [int(bars[i] @ HAM_SLICES) for i in range(n)]
        ham = ham_points(slices, rulings)
        top = max(slices)
        first = [i for i in range(n) if slices[i] == top and top > 0]
        second = [i for i in range(n) if ham[i] > 0 and i not in first]
        peppers = [int(bars[i, PEPPER]) for i in range(n)]
        pep = pepper_points(peppers, rulings)
        most_pep = [i for i in range(n) if peppers[i] == max(peppers) and peppers[i] > 0]
        hot = any(int(pep[i]) < rulings.pepper * peppers[i] for i in most_pep)
        counts = [int(c) for c in churros]
        cp = churro_points(counts, rulings)
        return {"bar_points": [{"seat": i, "points": {k: int(br[k][i]) for k in ROUND_RULES},
                                "total": int(sum(br[k][i] for k in ROUND_RULES))} for i in range(n)],
                "majorities": {
                    "ham": {"slices": slices, "first": first, "second": second, "points": [int(x) for x in ham]},
                    "pepper": {"counts": peppers, "most": most_pep, "hot": hot, "points": [int(x) for x in pep]},
                    "churros": {"counts": counts, "most": [i for i in range(n) if cp[i] > 0],
                                "fewest": [i for i in range(n) if cp[i] < 0], "points": [int(x) for x in cp]}}}

    def _reveal(self, rnd: int, q: int, kinds: Sequence[int]) -> dict:
        """One reveal of Tapeo (every seat's tapa of pick ``q`` of round ``rnd``, face up
        together), each stolen tapa marked with its Freeloader (RULINGS T6)."""
        thefts = steals(kinds)
        stolen = {v: th for th, v, loot in thefts if loot is not None}
        return {"round": rnd + 1, "pick": q + 1, "last": q == self.session.state.config.hand_size - 1,
                "tapas": [{"seat": i, "kind": KIND_NAMES[k], "name": TAPA_NAMES[k], "stolen_by": stolen.get(i)}
                          for i, k in enumerate(kinds)],
                "steals": [{"thief": th, "victim": v, "tapa": None if loot is None else TAPA_NAMES[loot]}
                           for th, v, loot in thefts]}



class RobadaGame(WebGame):
    """A Ronda Robada game: seats take turns of several steps; every step of a computer turn is
    played (and told) before the person's next decision."""

    game = "robada"
    session_cls = RobadaSession
    default_players = 2
    action_names = ROBADA_ACTIONS

    def _to_act(self) -> bool:
        return not self.over() and self.session.state.current == self.table.seat

    def _apply(self, action: int) -> None:
        self.session.turn_header(self.table.seat)
        self.session.play_step(self.table.seat, action)

    def _advance(self) -> None:
        s = self.session
        while not self.over() and not self._to_act():
            seat = s.state.current
            s.turn_header(seat)
            s.play_step(seat, s.bot_action(seat, s.observe(seat)))
        super()._advance()

    def _choices(self) -> list[dict]:
        s = self.session
        return [{"action": a, "name": ROBADA_ACTIONS[a], "label": s.describe(a)} for a in s.legal()]

    def _table(self) -> dict:
        """What the person's seat knows (R9): the loose cards, each pile's visible card, size
        and points, how many cards each seat holds, its own hand, the run in progress, the deck
        left, the last runner, and the final scores (R8)."""
        s, t = self.session.state, self.table
        n, me = t.players, t.seat

        def card(c: int) -> dict:
            rank, suit = c % NUM_RANKS, SUIT_NAMES[c // NUM_RANKS]
            return {"key": f"{RANK_WORDS[rank].lower()}-{suit}", "name": carta(c), "rank": RANK_WORDS[rank],
                    "suit": suit, "points": points([c])}

        table = {"deck": len(s.deck), "loose": [card(c) for c in s.loose],
                 "piles": [{"seat": i, "top": card(s.piles[i][-1]) if s.piles[i] else None, "size": len(s.piles[i]),
                            "points": int(s.points[i]), "in_hand": len(s.hands[i])} for i in range(n)],
                 "hand": [card(c) for c in s.hands[me]],
                 "to_act": None if self.over() else int(s.current),
                 "last_runner": None if s.last_runner == NOBODY else int(s.last_runner),
                 "run": None}
        if s.run and not self.over():
            table["run"] = {"cards": [card(c) for c in s.run], "points": points(s.run), "need": need_text(s),
                            "piles_taken": [int(x) for x in s.run_taken]}
        if not self.over():
            self._pile_risks(table["piles"])
        if self.over():
            table["result"] = {"rows": [{"seat": i, "cards": len(s.piles[i]), "points": int(s.points[i])}
                                        for i in range(n)], "winners": [int(w) for w in winners(s)]}
        return table


    def _pile_risks(self, piles: list[dict]) -> None:
        """Mark each pile (in place) with ``at_risk``: its visible card's rank has no loose card
        on the table, so a run of another seat that reaches that rank may take the whole pile
        (R3, :func:`robada_env.rules.runs.extension_options`); and, during a run, ``takeable``:
        the run's next step may take it now. Public (R9): loose cards and visible cards."""
        s = self.session.state
        loose = [0] * NUM_RANKS
        for c in s.loose:
            loose[c % NUM_RANKS] += 1
        tops = [p[-1] % NUM_RANKS if p else -1 for p in s.piles]
        n = len(tops)
        for i, pile in enumerate(piles):
            other = (i + 1) % n                       # any other seat: piles of others may always be taken
            _, seats = extension_options(tops[i], loose, tops, other, s.config.may_take_own_pile) if tops[i] >= 0 \
                else (False, [])
            pile["at_risk"] = i in seats
            pile["takeable"] = False
        if s.run and s.run_next >= 0:
            _, seats = extension_options(int(s.run_next), loose, tops, int(s.current), s.config.may_take_own_pile)
            for i in seats:
                piles[i]["takeable"] = True


#: The games the web app offers.
GAMES: dict[str, type[WebGame]] = {g.game: g for g in (TapeoGame, RobadaGame)}


class GameStore:
    """The games, by id (thread-safe); at most ``capacity`` games. Beyond it the least recently
    used finished game is dropped (its record may still be wanted, but nobody plays it), and only
    when none is finished the least recently used game in progress."""

    def __init__(self, capacity: int = MAX_GAMES) -> None:
        self.capacity = capacity
        self._games: OrderedDict[str, WebGame] = OrderedDict()
        self._lock = threading.Lock()

    def new(self, game: str, players: int, seat: int = 0, opponents: Optional[Sequence[str]] = None,
            seed: Optional[int] = None, difficulty: Optional[str] = None) -> WebGame:
        """Deal a new game of ``game`` (other arguments and errors: :class:`WebGame`; an unknown
        ``game`` is a ``ConfigError`` naming the legal ones) and keep it under a fresh id.
        ``difficulty`` (``"easy"``, ``"medium"``, ``"hard"``; not with ``opponents``) deals its bot
        (:func:`difficulty_opponent`) at every computer seat."""
        if game not in GAMES:
            raise ConfigError(f"game: legal values: {sorted(GAMES)}")
        if difficulty is not None:
            if opponents:
                raise ConfigError("difficulty: give either opponents or a difficulty, not both")
            GAMES[game].check_players(players)
            opponents = [difficulty_opponent(game, players, difficulty)]
        g = GAMES[game](secrets.token_urlsafe(9), players, seat, opponents, seed)
        with self._lock:
            self._games[g.id] = g
            while len(self._games) > self.capacity:
                # over() read without the game's lock (held while its bots think): a game that
                # ends meanwhile is taken for one in progress, which only keeps it longer
                finished = next((k for k, x in self._games.items() if x is not g and x.over()), None)
                if finished is not None:
                    del self._games[finished]
                else:
                    self._games.popitem(last=False)
        return g

    def get(self, game_id: str) -> WebGame:
        """The game ``game_id``. Raises :class:`UnknownGame` (404) when there is none."""
        with self._lock:
            g = self._games.get(game_id)
            if g is None:
                raise UnknownGame(f"no such game: unknown id, dropped (at most {self.capacity} games are kept: the "
                                  "finished ones are dropped first, then the least recently used), or the server "
                                  "restarted; start a new one at /")
            self._games.move_to_end(game_id)
            return g

    def __len__(self) -> int:
        return len(self._games)
