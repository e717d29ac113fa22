"""A tiny reference game ("fake", not a House Of Decks game) following the environment contract
of ``docs/DESIGN.md`` exactly, with none of the real games' rules, so that the machinery around
the environments (training, the tournament harness) can be tested on outcomes worked out by hand.
The training tests use it as it comes; the tournament tests as a one-pick game
(``rounds=1, num_actions=10, legal=range(10)``) with dealt hands and a seat bonus.

Rules:

* ``reset(seed=s)`` deals each seat a hand value ``hand[seat]`` in ``0..hand_range`` from
  ``numpy.random.default_rng(s)`` (the same deal whoever sits where; all 0 by default).
* ``num_players`` 2..4 seats play ``rounds`` rounds (1..3, default 3). Each round every seat,
  seat 0 first, picks a number in ``0..num_actions-1``. Legal picks: those in ``legal`` if it is
  given, else pick ``a`` is legal for seat ``i`` in round ``r`` iff ``(a + r + i) % 3 != 0`` (so
  the mask changes and the last action is not always legal).
* ``simultaneous=True``: picks are secret and revealed together when the last seat has picked
  (like Tapeo); ``False``: each pick is applied at once (turn-based, like Ronda Robada).
* A seat's score is ``hand[seat]`` + the sum of its picks, + ``seat_bonus`` for seat 0. If
  ``round_rewards`` is True each seat is also given its pick value as a reward when the round
  resolves (rewards that arrive between a seat's decisions); the final reward
  (``reward_scheme``) is added at the end.
* The winners are the seats with the highest score (shared on a tie): ``infos`` hold
  ``final_score`` and ``win_share`` (1/k for k tied winners).

Observation (float32, 9 entries, same size for every player count): round one-hot (3),
own score / the highest possible score, player count one-hot (2, 3, 4), 1 if this seat already
picked this round, and (turn-based mode only) the pick of the seat on the right this round /
(num_actions - 1).
"""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from hod.adapters.env_support import begin_aec_step, final_infos, start_aec_episode
from hod.adapters.wrappers import ILLEGAL_ACTION_MODES, ILLEGAL_REWARD
from hod.agents.registry import register
from hod.core.errors import IllegalActionError, check_choice, check_int_range
from hod.core.games import GameInfo, game_names, register_game
from hod.core.layout import ObsLayout, Piece
from hod.core.rewards import REWARD_SCHEMES, final_rewards

ROUNDS = 3
NUM_ACTIONS = 5
LAYOUT = ObsLayout("fake", 1, [
    Piece("round", ROUNDS, "one-hot round"),
    Piece("score", 1, "own score", "/ highest possible score"),
    Piece("num_players", 3, "one-hot player count (2, 3, 4)"),
    Piece("picked", 1, "1 if this seat already picked this round"),
    Piece("last_pick", 1, "turn-based mode only: the pick of the seat on the right this round", "/ (num_actions - 1)"),
])


def is_legal(action: int, rnd: int, seat: int) -> bool:
    """The fake game's default rule: pick ``a`` is legal for ``seat`` in round ``rnd`` iff (a+rnd+seat)%3 != 0."""
    return (action + rnd + seat) % 3 != 0


class raw_env(AECEnv):
    """AEC env of the fake game. Options as in docs/DESIGN.md plus the rules' options of the
    module docstring (``simultaneous``, ``round_rewards``, ``rounds``, ``num_actions``, ``legal``,
    ``hand_range``, ``seat_bonus``).

    Raises:
        ConfigError: an option outside its legal values (named in the message).
    """

    metadata = {"name": "fake_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, num_players: int = 2, illegal_action: str = "raise", reward_scheme: str = "points",
                 simultaneous: bool = True, round_rewards: bool = False, render_mode=None, rounds: int = ROUNDS,
                 num_actions: int = NUM_ACTIONS, legal: Optional[Iterable[int]] = None, hand_range: int = 0,
                 seat_bonus: int = 0):
        super().__init__()
        self.n = check_int_range("num_players", num_players, 2, 4)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        check_choice("reward_scheme", reward_scheme, REWARD_SCHEMES)
        self.rounds = check_int_range("rounds", rounds, 1, ROUNDS)
        self.num_actions = check_int_range("num_actions", num_actions, 2, 100)
        self.hand_range = check_int_range("hand_range", hand_range, 0, 100)
        self.seat_bonus = check_int_range("seat_bonus", seat_bonus, 0, 100)
        self.legal = None if legal is None else sorted(check_int_range("legal", a, 0, num_actions - 1) for a in legal)
        self.illegal_action = illegal_action
        self.reward_scheme = reward_scheme
        self.simultaneous = simultaneous
        self.round_rewards = round_rewards
        self.render_mode = render_mode
        self._max_score = self.rounds * (self.num_actions - 1) + self.hand_range + self.seat_bonus
        self.possible_agents = [f"player_{i}" for i in range(self.n)]
        self.agents: list[str] = []
        self.hand: Optional[np.ndarray] = None  # dealt by reset()
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (LAYOUT.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
        })
        self._act_space = spaces.Discrete(self.num_actions)

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    @property
    def game_state(self) -> dict:
        """The position: ``{"hand": [int] per seat, "round": int, "scores": [int] per seat,
        "picks": {seat: pick} made this round}``."""
        return {"hand": self.hand.tolist(), "round": self.round, "scores": self.scores.tolist(),
                "picks": dict(self.pending)}

    def reset(self, seed=None, options=None):
        start_aec_episode(self)
        self.hand = np.random.default_rng(seed).integers(0, self.hand_range + 1, size=self.n)
        self.round = 0
        self.scores = self.hand.astype(np.int64)
        self.scores[0] += self.seat_bonus
        self.pending: dict[int, int] = {}
        self.agent_selection = self.agents[0]

    def _seat(self, agent: str) -> int:
        return int(agent.split("_")[1])

    def legal_actions(self, seat: int) -> list[int]:
        """Legal picks of ``seat`` now (none once the game is over)."""
        if self.round >= self.rounds:
            return []
        if self.legal is not None:
            return list(self.legal)
        return [a for a in range(self.num_actions) if is_legal(a, self.round, seat)]

    def observe(self, agent):
        i = self._seat(agent)
        obs = np.zeros(LAYOUT.size, np.float32)
        if self.round < self.rounds:
            LAYOUT.view(obs, "round")[self.round] = 1.0
        LAYOUT.view(obs, "score")[0] = self.scores[i] / self._max_score if self._max_score else 0.0
        LAYOUT.view(obs, "num_players")[self.n - 2] = 1.0
        LAYOUT.view(obs, "picked")[0] = float(i in self.pending)
        right = (i - 1) % self.n
        if not self.simultaneous and right in self.pending:
            LAYOUT.view(obs, "last_pick")[0] = self.pending[right] / (self.num_actions - 1)
        mask = np.zeros(self.num_actions, np.int8)
        mask[self.legal_actions(i)] = 1
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = begin_aec_step(self, action, self.hand is not None)
        if agent is None:
            return
        i = self._seat(agent)
        legal = self.legal_actions(i)
        if action is None or action not in legal:
            if self.illegal_action == "raise":
                raise IllegalActionError(agent, action, legal)
            self._cumulative_rewards[agent] = 0.0
            for a in self.agents:
                self.rewards[a] = ILLEGAL_REWARD if a == agent else 0.0
                self.terminations[a] = True
                self.infos[a] = {"illegal_action": agent}
            self._accumulate_rewards()
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        action = int(action)
        if not self.simultaneous:
            self.scores[i] += action
        self.pending[i] = action
        if i == self.n - 1:  # round resolves
            if self.simultaneous:
                for s, a in self.pending.items():
                    self.scores[s] += a
            if self.round_rewards:
                for s, a in self.pending.items():
                    self.rewards[self.possible_agents[s]] = float(a)
            self.pending = {}
            self.round += 1
        if self.round == self.rounds:
            best = self.scores.max()
            winners = [s for s in range(self.n) if self.scores[s] == best]
            fin = final_rewards(self.scores, winners, self.reward_scheme)
            for s, (a, info) in enumerate(zip(self.agents, final_infos(self.scores, winners))):
                self.rewards[a] += float(fin[s])
                self.terminations[a] = True
                self.infos[a] = info
        self._accumulate_rewards()
        self.agent_selection = self.possible_agents[(i + 1) % self.n]

    def render(self):
        return None

    def close(self):
        pass


def sample_consistent_state(state: dict, seat: int, rng: np.random.Generator) -> dict:
    """Belief sampler of the fake game (for search bots; the hands are the only hidden thing):
    ``{"seat", "own_hand", "picks_so_far"}`` as ``seat`` knows them (``rng`` is not needed)."""
    return {"seat": seat, "own_hand": state["hand"][seat], "picks_so_far": len(state["picks"])}


def register_fake_game() -> None:
    """Declare the fake game as ``"fake"`` (2-4 players, simultaneous; only the ``random`` bot)
    with :func:`hod.core.games.register_game`, and its bot with :func:`hod.agents.registry.register`
    (idempotent)."""

    if "fake" not in game_names():
        register_game(FAKE_GAME)
    register("fake", "random", "hod.agents.base:RandomBot")


#: The fake game's declaration (registered by :func:`register_fake_game`).
FAKE_GAME = GameInfo(
    name="fake", title="Fake", package="hod.training.fake_env", env_name="fake_v0", gym_id="fake/Fake-v0",
    min_players=2, max_players=4, dynamics="simultaneous", num_actions=NUM_ACTIONS,
    action_names=tuple(str(a) for a in range(NUM_ACTIONS)), layout=LAYOUT, max_game_length=ROUNDS * 4,
    default_max_cycles=100,
)
