"""Training environments: the single-agent Gymnasium view, the table, the vectorized env, the pool."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

from hod.agents.base import Bot, RandomBot
from hod.core.errors import ConfigError, IllegalActionError
from hod.training.fake_env import register_fake_game
from hod.training.numpy_policy import NumpyPolicy
from hod.training.pool import FixedOpponents, OpponentPool
from hod.adapters.registration import register_envs

#: The Gymnasium ids of the two games (their declarations, tapeo_env.GAME and robada_env.GAME).
ENV_IDS = ("tapeo_env/Tapeo-v0", "robada_env/Robada-v0")
from hod.training.single_agent import SingleAgentEnv
from hod.training.table import LearnerTable
from hod.training.vec_env import make_vec_env

register_fake_game()


class LowestLegal(Bot):
    """Plays the lowest legal action (deterministic, for hand-computed outcomes)."""

    def act(self, observation, belief=None):
        return int(np.flatnonzero(observation["action_mask"])[0])


class LowestSource:
    """Opponent source whose every opponent is :class:`LowestLegal`."""

    def sample(self, rng):
        return "lowest"

    def make_bot(self, label, seed=None):
        return LowestLegal(seed=seed)

    def labels(self):
        return ["lowest"]


def play_random(env, rng):
    """One episode with uniformly random legal learner actions; returns (return, last info, rewards)."""
    env.reset(seed=int(rng.integers(1 << 30)))
    total, rewards, done = 0.0, [], False
    while not done:
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, r, term, trunc, info = env.step(a)
        total += r
        rewards.append(r)
        done = term or trunc
    return total, info, rewards


# ---- Gymnasium registration and check_env ------------------------------------------------------
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_registered_env_passes_check_env(env_id):
    register_envs()
    env = gymnasium.make(env_id, num_players=4 if "Tapeo" in env_id else 2, opponents="random")
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    # the masks are reachable the way sb3-contrib looks for them, through the wrappers
    assert is_masking_supported(env)
    assert np.array_equal(get_action_masks(env), info["action_mask"].astype(bool))
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)


def test_register_envs_is_idempotent():
    register_envs()
    register_envs()
    assert all(i in gymnasium.registry for i in ENV_IDS)


def test_unknown_options_and_names_are_rejected():
    with pytest.raises(ConfigError, match="legal values"):
        SingleAgentEnv("tapeo", num_players=7)
    with pytest.raises(ConfigError, match="legal values"):
        SingleAgentEnv("robada", num_players=5)
    with pytest.raises(ConfigError, match="registered"):
        SingleAgentEnv("tapeo", num_players=2, opponents="grandmaster")
    with pytest.raises(ConfigError, match="legal values"):
        SingleAgentEnv("chess")
    with pytest.raises(ConfigError, match="turn-based"):
        LearnerTable("robada", 2, num_learners=2)


# ---- every seat's return equals the game's payoff ----------------------------------------------
@pytest.mark.parametrize("game,counts,extra", [
    ("tapeo", [2, 3, 4, 5, 6], {}),
    ("tapeo", [2, 4], {"round_rewards": True}),  # rewards paid each round add up to the final one
    ("robada", [2, 3, 4], {}),
])
def test_return_equals_final_score_for_every_seat(game, counts, extra):
    env = SingleAgentEnv(game, counts, "random", reward_scheme="points", illegal_action="raise", **extra)
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(60):
        total, info, _ = play_random(env, rng)
        # points scheme: the learner's return is its final score, whoever acted last
        assert total == info["final_score"]
        seen.add((info["num_players"], info["seat"]))
    # the seat and the table size are drawn per episode
    assert {n for n, _ in seen} == set(counts)
    assert {s for _, s in seen} == set(range(max(counts))) or len({s for _, s in seen}) >= 3


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_win_loss_return_two_players(game):
    # win_loss with 2 seats: winner +1, loser -1, a shared win 0 (hod.core.rewards)
    env = SingleAgentEnv(game, 2, "random", reward_scheme="win_loss", illegal_action="raise")
    rng = np.random.default_rng(11)
    for _ in range(40):
        total, info, _ = play_random(env, rng)
        expected = {1.0: 1.0, 0.0: -1.0, 0.5: 0.0}[info["win_share"]]
        assert total == expected


@pytest.mark.parametrize("seat", [0, 1])
def test_final_reward_reaches_learner_that_did_not_act_last(seat):
    # Fake game, 2 players, round rewards (pick value) plus win_loss at the end. The learner plays
    # its highest legal pick, the opponent its lowest; legal iff (a + round + seat) % 3 != 0.
    # Seat 0 learner: legal {1,2,4},{0,1,3,4},{0,2,3} -> 4,4,3 = 11; opponent seat 1: {0,1,3,4},
    #   {0,2,3},{1,2,4} -> 0,0,1 = 1. Seat 0 acts first, so seat 1 acts last in every round.
    # Seat 1 learner: {0,1,3,4},{0,2,3},{1,2,4} -> 4,3,4 = 11; opponent seat 0: 1,0,0 = 1.
    # Rewards per decision: the round's pick value, the last one plus +1 for the win.
    expected = {0: [4.0, 4.0, 3.0 + 1.0], 1: [4.0, 3.0, 4.0 + 1.0]}[seat]
    env = SingleAgentEnv("fake", 2, LowestSource(), reward_scheme="win_loss", illegal_action="raise",
                         round_rewards=True)
    for s in range(50):
        env.reset(seed=s)
        if env.seat == seat:
            break
    assert env.seat == seat
    rewards, done = [], False
    while not done:
        a = int(np.flatnonzero(env.action_masks())[-1])
        _, r, term, trunc, info = env.step(a)
        rewards.append(r)
        done = term or trunc
    assert rewards == expected
    assert info["final_score"] == 11 and info["win_share"] == 1.0


def test_illegal_learner_action_raises_or_loses():
    env = SingleAgentEnv("tapeo", 3, "random", illegal_action="raise")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    with pytest.raises(IllegalActionError, match="legal actions"):
        env.step(illegal)
    env = SingleAgentEnv("tapeo", 3, "random", illegal_action="lose")
    env.reset(seed=0)
    _, r, term, _, _ = env.step(illegal)
    assert term and r == -1.0  # hod.adapters.wrappers.ILLEGAL_REWARD


def test_same_seed_same_episode():
    a = SingleAgentEnv("robada", [2, 3, 4], ["random"])
    b = SingleAgentEnv("robada", [2, 3, 4], ["random"])
    oa, _ = a.reset(seed=42)
    ob, _ = b.reset(seed=42)
    assert np.array_equal(oa, ob) and a.seat == b.seat
    ra, ia, _ = play_random(a, np.random.default_rng(1))
    rb, ib, _ = play_random(b, np.random.default_rng(1))
    assert ra == rb
    assert (ia["final_score"], ia["seat"], ia["num_players"]) == (ib["final_score"], ib["seat"], ib["num_players"])


# ---- the vectorized env -----------------------------------------------------------------------
@pytest.mark.parametrize("game,counts,learners", [("tapeo", [2, 3, 4, 5, 6], 2), ("tapeo", [4], 4),
                                                  ("robada", [2, 3, 4], 1)])
def test_vec_env_every_slot_gets_its_payoff(game, counts, learners):
    venv = make_vec_env(game, 3, counts, learners, "random", {"reward_scheme": "points"}, seed=0)
    assert venv.num_envs == 3 * learners
    assert is_masking_supported(venv)
    venv.reset()
    rng = np.random.default_rng(0)
    returns = np.zeros(venv.num_envs)
    finished = 0
    while finished < 40:
        masks = get_action_masks(venv)
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, r, dones, infos = venv.step(acts)
        returns += r
        for i in np.flatnonzero(dones):
            assert returns[i] == infos[i]["final_score"] == infos[i]["episode"]["r"]
            assert "terminal_observation" in infos[i]
            returns[i] = 0
            finished += 1
    # both learner seats of a table finish together
    venv.close()


def test_vec_env_two_learners_same_table_hand_computed():
    # Fake game, 2 players, both seats are learners playing their highest legal pick:
    # seat 0: 4,4,3 = 11; seat 1: 4,3,4 = 11 (see the single-agent test): a tie, so with the
    # points scheme each return is 11 and win_share is 1/2 each.
    venv = make_vec_env("fake", 1, 2, 2, "random", {"reward_scheme": "points"}, seed=0)
    venv.reset()
    seats = [venv.tables[0].env.possible_agents.index(a) for a in venv.tables[0].learners]
    assert sorted(seats) == [0, 1]
    total = np.zeros(2)
    for _ in range(3):
        acts = np.array([np.flatnonzero(m)[-1] for m in venv.action_masks()])
        _, r, dones, infos = venv.step(acts)
        total += r
    assert dones.all() and list(total) == [11.0, 11.0]
    assert [i["win_share"] for i in infos] == [0.5, 0.5]


def test_table_refuses_several_learners_when_observations_change():
    # The fake game in turn-based mode shows a pick at once, so the second learner's observation
    # changes after the first acted: the table must notice rather than train on stale data.
    t = LearnerTable("fake", 2, num_learners=2, env_options={"simultaneous": False})
    t.reset(np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="simultaneous"):
        for _ in range(3):
            t.step([int(np.flatnonzero(o["action_mask"])[-1]) for o in t._observe()])


# ---- opponent pool ----------------------------------------------------------------------------
def _policy(seed=0, obs=9, actions=5):
    rng = np.random.default_rng(seed)
    return NumpyPolicy([(rng.normal(size=(4, obs)).astype(np.float32), np.zeros(4, np.float32))],
                       (rng.normal(size=(actions, 4)).astype(np.float32), np.zeros(actions, np.float32)))


def test_pool_sampling_frequencies():
    pool = OpponentPool("fake", heuristics=["random"], max_size=3, p_latest=0.5, p_past=0.3, p_heuristic=0.2)
    rng = np.random.default_rng(0)
    # before any policy: only the heuristic category has members
    assert {pool.sample(rng) for _ in range(50)} == {"heuristic:random"}
    pool.update_latest(_policy(0))
    # latest 0.5 / (0.5 + 0.2) = 5/7, heuristic 2/7 while there is no snapshot
    s = [pool.sample(rng) for _ in range(20000)]
    assert abs(s.count("latest") / 20000 - 5 / 7) < 0.02
    for k in range(4):
        pool.add_snapshot(f"s{k}", _policy(k + 1))
    assert list(pool.past) == ["s1", "s2", "s3"]  # max_size 3: the oldest (s0) was dropped
    s = [pool.sample(rng) for _ in range(20000)]
    # binomial sd <= sqrt(0.25/20000) = 0.0035; tolerance 0.02 is over 5 sd
    assert abs(s.count("latest") / 20000 - 0.5) < 0.02
    assert abs(sum(x.startswith("past:") for x in s) / 20000 - 0.3) < 0.02
    assert abs(s.count("heuristic:random") / 20000 - 0.2) < 0.02
    for name in ("s1", "s2", "s3"):  # past snapshots uniformly: 0.1 each
        assert abs(s.count("past:" + name) / 20000 - 0.1) < 0.02


def test_pool_latest_is_updated_in_place_and_bots_play_legally():
    pool = OpponentPool("fake", heuristics=["random"], deterministic=True)
    pool.update_latest(_policy(0))
    bot = pool.make_bot("latest", seed=0)
    obs = {"observation": np.ones(9, np.float32), "action_mask": np.array([0, 1, 0, 1, 0], np.int8)}
    assert bot.act(obs) in (1, 3)
    new = _policy(7)
    pool.update_latest(new)
    assert np.array_equal(bot.policy.logits(obs["observation"]), new.logits(obs["observation"]))
    assert isinstance(pool.make_bot("heuristic:random"), RandomBot)
    with pytest.raises(KeyError):
        pool.make_bot("past:nothing")


def test_pool_rejects_bad_settings_and_unregistered_heuristics():
    with pytest.raises(ConfigError):
        OpponentPool("tapeo", p_latest=-0.1)
    with pytest.raises(ConfigError):
        OpponentPool("tapeo", p_latest=0, p_past=0, p_heuristic=0)
    with pytest.raises(ConfigError, match=r"no bot 'no-such-bot' for 'tapeo'; registered: \['expert', 'greedy'"):
        OpponentPool("tapeo", heuristics=["random", "no-such-bot"])
    with pytest.raises(ConfigError, match="at least one"):
        OpponentPool("tapeo", heuristics=[])
    with pytest.raises(ConfigError, match="registered"):
        FixedOpponents("tapeo", ["no-such-bot"])


def test_numpy_policy_roundtrip_and_masking():
    pol = _policy(3)
    back = NumpyPolicy.from_bytes(pol.to_bytes())
    x = np.random.default_rng(0).random((5, 9), dtype=np.float32)
    assert np.array_equal(back.logits(x), pol.logits(x))
    mask = np.array([0, 0, 1, 0, 0], np.int8)
    assert all(pol.act(x[i], mask, deterministic=d, rng=np.random.default_rng(i)) == 2
               for i in range(5) for d in (True, False))
    with pytest.raises(ValueError, match="no action"):
        pol.act(x[0], np.zeros(5, np.int8))
    with pytest.raises(ValueError, match="not a numpy policy"):
        NumpyPolicy.from_bytes(b"garbage")
    # a truncated archive (zipfile raises BadZipFile, not a ValueError) gets the documented error too
    data = pol.to_bytes()
    for cut in (len(data) // 2, len(data) - 1):
        with pytest.raises(ValueError, match="not a numpy policy archive"):
            NumpyPolicy.from_bytes(data[:cut])


def test_single_agent_view_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, gymnasium\n"
            "from hod.adapters.registration import register_envs\n"
            "register_envs()\n"
            "env = gymnasium.make('robada_env/Robada-v0', num_players=2)\n"
            "env.reset(seed=0)\n"
            "assert 'torch' not in sys.modules\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_single_game_tables_refuse_an_illegal_action_before_any_table_moves():
    # make_vec_env's single-game tables (engine "single"): an illegal action in the last table
    # used to raise after tables 0 and 1 had stepped.
    env = make_vec_env("tapeo", 3, 2, 1, ["random"], seed=0)
    twin = make_vec_env("tapeo", 3, 2, 1, ["random"], seed=0)
    env.reset()
    twin.reset()
    masks = env.action_masks()
    first = np.array([np.flatnonzero(r)[0] for r in masks])
    bad = first.copy()
    bad[2] = int(np.flatnonzero(~masks[2])[0])
    with pytest.raises(IllegalActionError, match=rf"^illegal action {bad[2]} for env slot 2; legal actions: "):
        env.step(bad)
    for _ in range(4):   # then the same games as a twin that never saw the refused step
        a = np.array([np.flatnonzero(r)[0] for r in env.action_masks()])
        o1, r1, d1, _ = env.step(a)
        o2, r2, d2, _ = twin.step(a)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)


def test_single_game_tables_refuse_an_ill_typed_action_before_any_table_moves():
    # A float is no action (hod.core.errors.action_id), but only the table's env judged it: with
    # a float in the last table, tables 0 and 1 had played their actions when it raised.
    env = make_vec_env("tapeo", 3, 2, 1, ["random"], seed=0)
    twin = make_vec_env("tapeo", 3, 2, 1, ["random"], seed=0)
    env.reset()
    twin.reset()
    first = np.array([np.flatnonzero(r)[0] for r in env.action_masks()])
    mixed = np.array([int(first[0]), int(first[1]), float(first[2])], dtype=object)
    legal = ", ".join(map(str, np.flatnonzero(env.action_masks()[2])))
    with pytest.raises(IllegalActionError, match=rf"^illegal action {float(first[2])!r} for env slot 2; legal "
                                                 rf"actions: \[{legal}\]$"):
        env.step(mixed)
    with pytest.raises(IllegalActionError, match=r"^illegal action True for env slot 0; legal actions: \["):
        env.step(np.ones(3, bool))
    with pytest.raises(ValueError, match=r"^expected 3 actions \(one per env slot\), got 2 \(shape \(2,\)\); legal: "
                                         r"integers of shape \(3,\)$"):
        env.step(first[:2])   # was numpy's "cannot reshape array of size 2 into shape (3,)"
    o1, r1, d1, _ = env.step(first.astype(object))   # Python ints in an object array are actions
    o2, r2, d2, _ = twin.step(first)
    assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)


@pytest.mark.parametrize("change, message", [
    ({"num_tables": 2.5}, r"^num_tables=2\.5 must be an integer; legal values: integers 1\.\.16777216$"),   # TypeError
    ({"num_tables": 0}, r"^num_tables=0 is out of range; legal values: integers 1\.\.16777216$"),
    ({"seed": -1}, r"^seed=-1 is not allowed; legal values: None or an int in 0\.\.2\*\*64-1$"),   # bare ValueError
    ({"seed": 1.5}, r"^seed=1\.5 is not allowed; legal values: None or an int in 0\.\.2\*\*64-1$"),   # TypeError
])
def test_make_vec_env_refuses_a_bad_table_count_or_seed_naming_the_legal_values(change, message):
    kw = {**dict(game="tapeo", num_tables=3, num_players=2, learner_seats=1, opponents=["random"], seed=0), **change}
    with pytest.raises(ConfigError, match=message):
        make_vec_env(**kw)


def test_single_game_tables_refuse_a_bad_seed_before_any_table_deals():
    env = make_vec_env("tapeo", 2, 2, 1, ["random"], seed=0)
    env.reset()
    obs = env.reset()
    env.seed(2**64 - 1)       # SB3 gives slot i the seed + i: 2**64 for slot 1
    with pytest.raises(ConfigError, match=r"^seed=18446744073709551616 is not allowed; legal values: None or an int"):
        env.reset()
    assert env.tables[0].env is not None and np.array_equal(env._obs, obs)


@pytest.mark.parametrize("kw, message", [
    (dict(p_latest=1e308, p_past=1e308, p_heuristic=1e308),
     r"^pool probabilities .*: legal: each a finite number >= 0 \(they are normalised\), not all 0, their sum finite$"),
    (dict(p_latest=float("inf")), r"^pool probabilities \{'latest': inf, .*legal: each a finite number >= 0"),
    (dict(deterministic="no"), r"^deterministic='no'; legal values: \[False, True\]$"),   # truthy: argmax play
])
def test_the_opponent_pool_refuses_bad_probabilities_and_flags(kw, message):
    with pytest.raises(ConfigError, match=message):
        OpponentPool("tapeo", heuristics=["random"], **kw)
    assert OpponentPool("tapeo", heuristics=["random"], pfsp_exponent=np.float32(3)).pfsp_exponent == 3.0
