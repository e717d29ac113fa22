"""One game table seen from its learner seats: the core of the training environments.

A :class:`LearnerTable` holds one raw AEC environment, picks per episode the table size, which seats
the learner plays and the opponent of every other seat, and plays the opponents' turns itself.
It stops whenever a learner seat must decide and hands out that seat's observation, action
mask and reward. Opponent search bots (``needs_belief``) are given belief samples of the hidden
cards, as in the tournament.

Rewards. A learner seat's reward for one decision is everything the environment credited to it
after that decision and until its next decision (or the end of the episode), whoever acted in
between. The final reward is read from the environment when the game ends, for every learner
seat, including seats that did not act last (the usual single-agent wrappers lose it). The
AEC contract is used for this: ``_cumulative_rewards[seat]`` holds what the seat received since
it last acted, and is reset when it acts.

Several learner seats per table (``num_learners > 1``) need a simultaneous game (every seat
decides each step, and a seat's observation does not change while the others pick: Tapeo's
secret picks, tapeo.txt "Each pick"): the table then stops at the first learner seat that has
already acted in this step, and the others' observations are read at that moment. The table
checks, when each of those seats is actually asked, that its observation did not change, and
raises if it did.

Nothing here imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from hod.agents.base import Bot
from hod.core.errors import ConfigError

from hod.core.games import check_player_counts, get_game, make_raw_env
from .pool import OpponentSource, resolve_opponents


@dataclass
class TableStep:
    """What a :class:`LearnerTable` returns after the learner seats acted.

    Attributes:
        observations: one ``{"observation", "action_mask"}`` dict per learner seat (the new
            decision; after the end of the game, the seat's final observation).
        rewards: float64 (num_learners,), reward of each learner seat for its last decision.
        done: the episode is over (for every learner seat).
        truncated: the game was cut short (``max_cycles``) rather than finished.
        infos: per learner seat, the environment's ``infos`` at the end of the game (with
            ``final_score`` and ``win_share``) plus ``seat`` and ``num_players``; ``{}`` before.
    """

    observations: list[dict[str, np.ndarray]]
    rewards: np.ndarray
    done: bool
    truncated: bool = False
    infos: list[dict[str, Any]] = field(default_factory=list)


class LearnerTable:
    """One game of ``game`` with ``num_learners`` learner seats and opponents in the others.

    Args:
        game: game name (see :mod:`hod.core.games`).
        num_players: table size, or a list of sizes drawn uniformly per episode.
        num_learners: learner seats per table (``>1`` only for simultaneous games).
        opponents: bot name, list of bot names or an opponent source (:mod:`hod.training.pool`).
        env_options: extra options of ``raw_env`` (``reward_scheme``, ``illegal_action``...).
            ``illegal_action`` defaults to ``"raise"``: a learner action outside the mask raises
            :class:`hod.core.errors.IllegalActionError`.

    Raises:
        ConfigError: unknown game, illegal table size, ``num_learners`` above the smallest table
            or above 1 in a turn-based game; observation/action spaces that differ between sizes.
    """

    def __init__(self, game: str, num_players: int | Sequence[int] = 2, num_learners: int = 1,
                 opponents: Any = "random", env_options: Optional[dict] = None) -> None:
        self.spec = get_game(game)
        self.game = game
        self.player_counts = check_player_counts(game, num_players)
        if not 1 <= num_learners <= min(self.player_counts):
            raise ConfigError(
                f"num_learners={num_learners!r} must be in 1..{min(self.player_counts)} "
                f"(the smallest table of {list(self.player_counts)})"
            )
        if num_learners > 1 and not self.spec.simultaneous:
            raise ConfigError(
                f"{game} is turn-based: several learner seats per table need a simultaneous game; "
                f"use num_learners=1 (legal values: [1])"
            )
        self.num_learners = num_learners
        self.source: OpponentSource = resolve_opponents(game, opponents)
        self.env_options = {"illegal_action": "raise", **(env_options or {})}
        self._envs: dict[int, Any] = {}
        first = self._env(self.player_counts[0])
        a0 = first.possible_agents[0]
        self.observation_space = first.observation_space(a0)["observation"]
        self.action_space = first.action_space(a0)
        for n in self.player_counts[1:]:
            e = self._env(n)
            o, a = e.observation_space(e.possible_agents[0])["observation"], e.action_space(e.possible_agents[0])
            if o.shape != self.observation_space.shape or a.n != self.action_space.n:
                raise ConfigError(f"{game}: observation/action spaces differ between table sizes {self.player_counts}")
        self._bots: dict[tuple[int, str], Bot] = {}
        self.env = None
        self.num_players = 0
        self.learners: list[str] = []
        self.opponent_labels: dict[str, str] = {}

    def _env(self, n: int):
        if n not in self._envs:
            self._envs[n] = make_raw_env(self.game, n, **self.env_options)
        return self._envs[n]

    # ---- episode ----------------------------------------------------------------------------
    def reset(self, rng: np.random.Generator) -> list[dict[str, np.ndarray]]:
        """Start an episode; everything is drawn from ``rng``. Returns the learner seats' observations.

        Draws, in order: the table size, the learner seats, the opponent of each other seat (from
        the opponent source), the deal's seed and the bots' seeds.
        """
        n = int(self.player_counts[int(rng.integers(len(self.player_counts)))])
        self.num_players = n
        self.env = env = self._env(n)
        agents = list(env.possible_agents)
        seats = sorted(int(s) for s in rng.choice(n, size=self.num_learners, replace=False))
        self.learners = [agents[s] for s in seats]
        valid = set(self.source.labels())
        self._bots = {k: b for k, b in self._bots.items() if k[1] in valid}
        self.opponent_labels = {}
        self.bot_of: dict[str, Bot] = {}
        for i, a in enumerate(agents):
            if a in self.learners:
                continue
            label = self.source.sample(rng)
            self.opponent_labels[a] = label
            key = (i, label)
            if key not in self._bots:
                self._bots[key] = self.source.make_bot(label)
            self.bot_of[a] = self._bots[key]
        env.reset(seed=int(rng.integers(2**31 - 1)))
        for a in agents:
            if a in self.bot_of:
                self.bot_of[a].reset(seed=int(rng.integers(2**31 - 1)))
        self._claimed = {a: 0.0 for a in self.learners}   # part of _cumulative_rewards already reported
        self._carry = {a: 0.0 for a in self.learners}     # rewards read before the seat acted, not yet reported
        self._shown: dict[str, np.ndarray] = {}
        self.decisions = 0
        self._play_until_decision({})
        return self._observe()

    def step(self, actions: Sequence[int]) -> TableStep:
        """Play one action per learner seat (in the order of :attr:`learners`), then the
        opponents, until the learner seats must decide again or the game ends. An action that is
        not an int of the action space (``1.0``, ``None``, an array; :func:`hod.core.errors.action_id`)
        is an illegal action, like one outside the mask.

        Raises:
            IllegalActionError: an action outside its mask (with ``illegal_action="raise"``).
            RuntimeError: the game asked a learner seat twice before the others (not simultaneous),
                or an observation handed out earlier changed before the seat was asked.
        """
        if len(actions) != self.num_learners:
            raise ValueError(f"expected {self.num_learners} actions (one per learner seat), got {len(actions)}")
        self.decisions += 1
        # passed as given: the env's one action check (hod.core.errors.action_id) makes an
        # ill-typed action (1.0, None, an array) an illegal action under its illegal_action mode
        over = self._play_until_decision(dict(zip(self.learners, actions)))
        env = self.env
        rewards = np.zeros(self.num_learners)
        for j, a in enumerate(self.learners):
            cum = float(env._cumulative_rewards.get(a, 0.0))
            rewards[j] = self._carry[a] + cum - self._claimed[a]
            self._carry[a] = 0.0
            self._claimed[a] = cum
        if not over:
            return TableStep(self._observe(), rewards, False)
        truncated = any(env.truncations.get(a, False) for a in self.learners) and not any(
            env.terminations.get(a, False) for a in self.learners)
        infos = []
        for a in self.learners:
            info = dict(env.infos.get(a, {}))
            info.update(seat=self.env.possible_agents.index(a), num_players=self.num_players)
            infos.append(info)
        obs = [self._copy(env.observe(a)) for a in self.learners]
        return TableStep(obs, rewards, True, truncated, infos)

    # ---- internals --------------------------------------------------------------------------
    def _over(self) -> bool:
        env = self.env
        if not env.agents:
            return True
        return all(env.terminations[a] or env.truncations[a] for a in self.learners if a in env.terminations)

    def _play_until_decision(self, pending: dict[str, Any]) -> bool:
        """Step opponents and the ``pending`` learner actions until a learner seat must decide.

        Returns True if the episode ended.
        """
        env = self.env
        while True:
            if self._over():
                return True
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            if agent in self._carry:  # a learner seat
                if agent not in pending:
                    break
                shown = self._shown.pop(agent, None)
                if shown is not None and not np.array_equal(shown, env.observe(agent)["observation"]):
                    raise RuntimeError(
                        f"{self.game}: the observation of learner seat {agent} changed while other seats "
                        f"acted; several learner seats per table need a simultaneous game"
                    )
                self._carry[agent] += float(env._cumulative_rewards.get(agent, 0.0)) - self._claimed[agent]
                self._claimed[agent] = 0.0
                env.step(pending.pop(agent))
            else:
                bot = self.bot_of[agent]
                if getattr(bot, "needs_belief", False):
                    env.step(bot.act(env.observe(agent), self._belief(agent)))
                else:
                    env.step(bot.act(env.observe(agent)))
        if pending:
            raise RuntimeError(
                f"{self.game}: learner seat {env.agent_selection} must decide again before "
                f"{sorted(pending)} acted; several learner seats per table need a simultaneous game"
            )
        return False

    def _belief(self, agent: str):
        """``belief(rng) -> state`` for an opponent search bot (``needs_belief``) in seat ``agent``:
        full states consistent with what the seat knows, from the game's
        ``sample_consistent_state(state, seat, rng)``, as the tournament gives them
        (:mod:`hod.evaluation.play`); the seat is carried as ``belief.seat``.

        Raises:
            ConfigError: the game provides no ``sample_consistent_state``.
        """
        sampler = getattr(self.spec.module(), "sample_consistent_state", None)
        if sampler is None:
            raise ConfigError(f"{self.game} provides no sample_consistent_state: its search bots cannot be "
                              f"opponents; legal: bots without needs_belief")
        env, seat = self.env, self.env.possible_agents.index(agent)

        def belief(rng):
            return sampler(env.unwrapped.game_state, seat, rng)

        belief.seat = seat
        return belief

    @staticmethod
    def _copy(o: dict) -> dict[str, np.ndarray]:
        return {"observation": np.array(o["observation"], dtype=np.float32),
                "action_mask": np.array(o["action_mask"], dtype=np.int8)}

    def _observe(self) -> list[dict[str, np.ndarray]]:
        out = []
        sel = self.env.agent_selection
        for a in self.learners:
            o = self._copy(self.env.observe(a))
            if a != sel:
                self._shown[a] = o["observation"]
            out.append(o)
        return out
