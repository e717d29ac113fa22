"""A tiny reference game used by the training tests ("fake"): not a House Of Decks game.

It follows the environment contract of ``docs/DESIGN.md`` exactly, with none of the real games'
rules, so the training machinery can be tested on hand-computable outcomes:

* ``num_players`` 2..4 seats play ``ROUNDS`` rounds. Each round every seat picks a number in
  ``0..NUM_ACTIONS-1``; pick ``a`` is legal for seat ``i`` in round ``r`` iff
  ``(a + r + i) % 3 != 0`` (so the mask changes and the last action is not always legal).
* ``simultaneous=True``: picks are secret and revealed together when the last seat has picked
  (like Tapeo); ``False``: each pick is applied at once (turn-based, like Ronda Robada).
* A seat's score is the sum of its picks. If ``round_rewards`` is True each seat is also given
  its pick value as a reward when the round resolves (rewards that arrive between a seat's
  decisions); the final reward (``reward_scheme``) is added at the end.
* The winners are the seats with the highest score (shared on a tie).

Observation (float32, 9 entries, same size for every player count): round one-hot (3),
own score / 12, player count one-hot (2, 3, 4), 1 if this seat already picked this round, and
(turn-based mode only) the pick of the seat on the right this round / 4.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from hod_common.errors import IllegalActionError, check_choice, check_int_range
from hod_common.layout import ObsLayout, Piece
from hod_common.rewards import REWARD_SCHEMES, final_rewards, win_shares
from hod_common.wrappers import ILLEGAL_ACTION_MODES, ILLEGAL_REWARD

ROUNDS = 3
NUM_ACTIONS = 5
LAYOUT = ObsLayout("fake", 1, [
    Piece("round", ROUNDS, "one-hot round"),
    Piece("score", 1, "own score", "/ 12"),
    Piece("num_players", 3, "one-hot player count (2, 3, 4)"),
    Piece("picked", 1, "1 if this seat already picked this round"),
    Piece("last_pick", 1, "turn-based mode only: the pick of the seat on the right this round", "/ 4"),
])


def is_legal(action: int, rnd: int, seat: int) -> bool:
    """The fake game's only rule: pick ``a`` is legal for ``seat`` in round ``rnd`` iff (a+rnd+seat)%3 != 0."""
    return (action + rnd + seat) % 3 != 0


class raw_env(AECEnv):
    """AEC env of the fake game. Options as in docs/DESIGN.md plus ``simultaneous`` and ``round_rewards``."""

    metadata = {"name": "fake_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, num_players: int = 2, illegal_action: str = "raise", reward_scheme: str = "points",
                 simultaneous: bool = True, round_rewards: bool = False, render_mode=None):
        super().__init__()
        self.n = check_int_range("num_players", num_players, 2, 4)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        check_choice("reward_scheme", reward_scheme, REWARD_SCHEMES)
        self.illegal_action = illegal_action
        self.reward_scheme = reward_scheme
        self.simultaneous = simultaneous
        self.round_rewards = round_rewards
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.n)]
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (LAYOUT.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
        })
        self._act_space = spaces.Discrete(NUM_ACTIONS)

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.round = 0
        self.scores = np.zeros(self.n, np.int64)
        self.pending: dict[int, int] = {}
        self.agent_selection = self.agents[0]

    def _seat(self, agent: str) -> int:
        return int(agent.split("_")[1])

    def observe(self, agent):
        i = self._seat(agent)
        obs = np.zeros(LAYOUT.size, np.float32)
        if self.round < ROUNDS:
            LAYOUT.view(obs, "round")[self.round] = 1.0
        LAYOUT.view(obs, "score")[0] = self.scores[i] / 12.0
        LAYOUT.view(obs, "num_players")[self.n - 2] = 1.0
        LAYOUT.view(obs, "picked")[0] = float(i in self.pending)
        right = (i - 1) % self.n
        if not self.simultaneous and right in self.pending:
            LAYOUT.view(obs, "last_pick")[0] = self.pending[right] / 4.0
        mask = np.array([is_legal(a, self.round, i) for a in range(NUM_ACTIONS)], np.int8)
        if self.round >= ROUNDS:
            mask[:] = 0
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        i = self._seat(agent)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if action is None or not (0 <= int(action) < NUM_ACTIONS) or not is_legal(int(action), self.round, i):
            legal = [a for a in range(NUM_ACTIONS) if is_legal(a, self.round, i)]
            if self.illegal_action == "raise":
                raise IllegalActionError(agent, action, legal)
            for a in self.agents:
                self.rewards[a] = ILLEGAL_REWARD if a == agent else 0.0
                self.terminations[a] = True
                self.infos[a] = {"illegal_action": agent}
            self._accumulate_rewards()
            return
        action = int(action)
        if self.simultaneous:
            self.pending[i] = action
        else:
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
        if self.round == ROUNDS:
            best = self.scores.max()
            winners = [s for s in range(self.n) if self.scores[s] == best]
            fin = final_rewards(self.scores, winners, self.reward_scheme)
            shares = win_shares(winners, self.n)
            for s, a in enumerate(self.agents):
                self.rewards[a] += float(fin[s])
                self.terminations[a] = True
                self.infos[a] = {"final_score": int(self.scores[s]), "win_share": float(shares[s])}
        self._accumulate_rewards()
        self.agent_selection = self.possible_agents[(i + 1) % self.n]

    def render(self):
        return None

    def close(self):
        pass


def register_fake_game() -> None:
    """Add the fake game to :data:`training.games.GAMES` as ``"fake"`` (2-4 players, simultaneous)."""
    from .games import GAMES, GameSpec

    GAMES["fake"] = GameSpec("fake", "training.fake_env", (2, 3, 4), True, "fake/Fake-v0", "training.fake_env")
