"""The one PettingZoo adapter bound to a third, tiny game written here (no package, no edit to
``hod.adapters``): a sequential take-away game, so the adapter's generic parts (options, seats,
turns and ``max_cycles``, rewards and infos from ``scores``/``winners``, forfeits, the Parallel
form's ``noop``, PettingZoo's API tests, pickling) are checked on a game that is neither Tapeo nor
Ronda Robada, with values worked out by hand.

The game ("pile"): a pile of ``stones`` (rule option, 5 or 7); the seats take turns, seat 0
first, each taking 1 or 2 stones (2 only while at least 2 are left); whoever takes the last stone
wins alone. A seat's score is the stones it took.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test

from hod.adapters.game_env import AECGameEnv, EnvOption, ParallelGameEnv
from hod.adapters.wrappers import factory_options, wrap_aec
from hod.core.engine import SingleGame
from hod.core.errors import ConfigError, IllegalActionError, UnknownOptionError, action_id, check_int_range
from hod.core.games import GameInfo, RuleOption
from hod.core.layout import ObsLayout, Piece

TAKE1, TAKE2, NOOP = 0, 1, 2
NAMES = ("take 1", "take 2", "no-op")
LAYOUT = ObsLayout("pile", 1, [Piece("stones", 1, "stones left", "/ 7"), Piece("mine", 1, "stones I took", "/ 7")])


@dataclass(frozen=True)
class PileConfig:
    num_players: int = 2
    stones: int = 5

    def __post_init__(self) -> None:
        check_int_range("num_players", self.num_players, 2, 3)
        if self.stones not in (5, 7) or type(self.stones) is not int:
            raise ConfigError(f"stones={self.stones!r} is not allowed; legal values: [5, 7]")


class PileState:
    def __init__(self, config: PileConfig) -> None:
        self.config, self.left, self.current = config, config.stones, 0
        self.taken = [0] * config.num_players
        self.last = -1


GAME = GameInfo(name="pile", title="Pile", package="tests", env_name="pile_v0", gym_id="tests/Pile-v0",
                min_players=2, max_players=3, dynamics="sequential", num_actions=3, action_names=NAMES,
                layout=LAYOUT, max_game_length=7, default_max_cycles=50,
                rule_options=(RuleOption("stones", 5, (5, 7), "this file's docstring"),))


def pile_state(s: PileState) -> np.ndarray:
    return np.array([s.left / 7], np.float32)


def pile_record(s: PileState, seed=None, players=None) -> dict:
    return {"game": "pile", "seed": seed, "taken": list(s.taken)}


class PileRules:
    """The pile game's single-game interface (hod.core.engine.SingleGame)."""

    Config = PileConfig
    default_num_players = 2
    options = (EnvOption("hints", False, (False, True), "unused: shows an env option"),)
    obs_high = 1.0
    state_high = np.ones(1, np.float32)
    noop = NOOP
    turn_ends = (1, 1, 1)
    round_rewards = False
    layout = LAYOUT
    record = staticmethod(pile_record)
    encode_state = staticmethod(pile_state)

    def __init__(self, config: PileConfig, hints: bool = False) -> None:
        self.config, self.hints = config, hints

    def new_game(self, seed: int) -> PileState:
        return PileState(self.config)

    @staticmethod
    def to_act(s: PileState) -> int:
        return s.current

    @staticmethod
    def legal_mask(s: PileState, seat: int) -> np.ndarray:
        if seat != s.current or s.left == 0:
            return np.array([0, 0, 1], np.int8)
        return np.array([1, int(s.left >= 2), 0], np.int8)

    @staticmethod
    def check_action(s: PileState, seat: int, action, agent: str) -> int:
        legal = np.flatnonzero(PileRules.legal_mask(s, seat)).tolist()
        a = action_id(action, 3)
        if a is None or a not in legal:
            raise IllegalActionError(agent, action, legal, NAMES.__getitem__)
        return a

    @staticmethod
    def apply(s: PileState, action: int) -> None:
        k = action + 1
        s.left -= k
        s.taken[s.current] += k
        s.last = s.current
        s.current = (s.current + 1) % s.config.num_players

    @staticmethod
    def observe(s: PileState, seat: int) -> tuple:
        return np.array([s.left / 7, s.taken[seat] / 7], np.float32), PileRules.legal_mask(s, seat)

    @staticmethod
    def observe_all(s: PileState) -> tuple:
        rows = [PileRules.observe(s, i) for i in range(s.config.num_players)]
        return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])

    @staticmethod
    def terminal(s: PileState) -> bool:
        return s.left == 0

    @staticmethod
    def scores(s: PileState) -> list:
        return list(s.taken)

    @staticmethod
    def winners(s: PileState) -> list:
        return [s.last] if s.left == 0 else list(range(s.config.num_players))

    @staticmethod
    def render(s: PileState, agents) -> str:
        return f"{s.left} stones left; {agents[s.current]} to take"


class pile_raw_env(AECGameEnv):
    game, rules = GAME, PileRules


class PileParallelEnv(ParallelGameEnv):
    game, rules = GAME, PileRules


def pile_env(**kw):
    return wrap_aec(pile_raw_env(**factory_options(kw)))


def test_the_binding_is_a_single_game_and_passes_pettingzoo_api_tests():
    assert isinstance(pile_raw_env()._rules, SingleGame)
    assert pile_raw_env.metadata == {"render_modes": ["ansi", "human"], "name": "pile_v0",
                                     "is_parallelizable": False, "render_fps": 1}
    api_test(pile_env(num_players=3), num_cycles=20)
    parallel_api_test(PileParallelEnv(num_players=2, illegal_action="lose"), num_cycles=20)


@pytest.mark.parametrize("scheme,rewards", [("points", [4.0, 1.0]), ("win_loss", [1.0, -1.0]),
                                            ("margin", [3.0, -3.0])])
def test_a_game_worked_by_hand(scheme, rewards):
    """5 stones: player_0 takes 2 (3 left), player_1 takes 1 (2 left), player_0 takes 2 (0 left)
    and wins alone. Scores 4 and 1; points [4, 1]; win_loss [1, -1]; margin [4 - 1, 1 - 4]."""
    env = pile_raw_env(reward_scheme=scheme)
    env.reset(seed=0)
    for agent, action in (("player_0", TAKE2), ("player_1", TAKE1), ("player_0", TAKE2)):
        assert env.agent_selection == agent
        assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
        env.step(action)
    assert list(env.rewards.values()) == rewards and list(env._cumulative_rewards.values()) == rewards
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.infos == {"player_0": {"final_score": 4, "win_share": 1.0},
                         "player_1": {"final_score": 1, "win_share": 0.0}}
    assert env.record() == {"game": "pile", "seed": 0, "taken": [4, 1]}
    par = PileParallelEnv(reward_scheme=scheme)
    par.reset(seed=0)
    out = [par.step({"player_0": TAKE2, "player_1": NOOP}), par.step({"player_1": TAKE1}),
           par.step({"player_0": TAKE2})]
    assert [o[1] for o in out] == [{"player_0": 0.0, "player_1": 0.0}] * 2 + [dict(zip(par.possible_agents, rewards))]
    assert out[-1][4] == env.infos and par.agents == []


def test_max_cycles_counts_turns_of_every_seat():
    """max_cycles=1 at 3 seats: one cycle is 3 turns, so the game (7 stones, every seat taking 1)
    is truncated right after player_2's first turn, 4 stones left, with the pending infos."""
    env = pile_raw_env(num_players=3, stones=7, max_cycles=1)
    env.reset()
    for _ in range(2):
        env.step(TAKE1)
        assert not any(env.truncations.values())
    env.step(TAKE1)
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.game_state.left == 4
    assert env.infos["player_1"] == {"final_score": 0, "win_share": 0.0}


def test_the_parallel_form_takes_only_noop_from_the_seats_not_to_act():
    par = PileParallelEnv()
    par.reset()
    with pytest.raises(IllegalActionError, match=r"illegal action 0 for player_1; legal actions: \[2 \(no-op\)\]"):
        par.step({"player_0": TAKE1, "player_1": TAKE1})
    with pytest.raises(ValueError, match=r"missing \['player_0'\]"):
        par.step({"player_1": NOOP})
    assert par.game_state.left == 5                   # nothing changed
    lose = PileParallelEnv(illegal_action="lose")
    lose.reset()
    _, rew, terms, _, infos = lose.step({"player_0": TAKE1, "player_1": 1.0})   # a float is no no-op
    assert rew == {"player_0": 0.0, "player_1": -1.0} and all(terms.values())
    assert infos["player_0"] == {"illegal_action": "player_1", "final_score": 0, "win_share": 1.0}


def test_options_come_from_the_declaration_and_the_binding():
    with pytest.raises(UnknownOptionError) as e:
        pile_raw_env(colour=1)
    assert str(e.value) == ("unknown option(s) ['colour']; legal options: ['num_players', 'render_mode', "
                            "'reward_scheme', 'illegal_action', 'max_cycles', 'hints', 'stones']")
    with pytest.raises(ConfigError, match=r"stones=6 is not allowed; legal values: \[5, 7\]"):
        pile_raw_env(stones=6)
    with pytest.raises(ConfigError, match=r"hints=1 is not allowed \(equal to True but of type int: give a bool\); "
                                          r"legal values: \[False, True\]"):
        pile_raw_env(hints=1)
    env = pile_raw_env(num_players=3, stones=7, hints=True, render_mode="ansi")
    assert env.hints is True and env.config == PileConfig(3, 7) and env.max_cycles == 50
    env.reset()
    assert env.render() == "7 stones left; player_0 to take"
    assert env.state().tolist() == [1.0]


def test_a_pickled_env_plays_on_the_same():
    env = pile_raw_env(num_players=3, stones=7)
    env.reset()
    env.step(TAKE2)
    twin = pickle.loads(pickle.dumps(env))
    for e in (env, twin):
        e.step(TAKE2)
        e.step(TAKE2)
        e.step(TAKE1)          # player_0 takes the last stone: 7 = 2 + 2 + 2 + 1
    assert env.infos == twin.infos and env.infos["player_0"] == {"final_score": 3, "win_share": 1.0}
