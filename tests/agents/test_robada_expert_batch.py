"""The Ronda Robada expert in batch (ExpertBot.act_batch, the kernel act_rows of
agents/robada_planner_kernels.py): the same actions and the same draws of the bot's generator as
act called row by row, on every decision of seeded games at 2, 3 and 4 players (and under other
rule options); views decoded at once equal to view_array(decode(row)); hand-built positions whose
decision is worked out by hand; refusals that leave the generator as it was; BotPolicy on the batch
path."""
import numpy as np
import pytest

from _robada_helpers import position
from hod.agents.batch_policies import BotPolicy
from hod.agents.robada_bots import ExpertBot, view_array, view_arrays
from hod.core.errors import ConfigError
from robada_env.rules.actions import DROP, START, TAKE, TAP
from robada_env.rules.cards import CABALLO, REY
from robada_env.rules.engine import Config, apply_action, legal_mask, new_game
from robada_env.rules.observation import decode, encode


def _positions(config, seeds):
    """Every decision of seeded games, the expert in the even seats and random play in the odd:
    float32 (G, 192) observations and int8 (G, 27) masks of the seat to act."""
    obs, masks = [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        bot = ExpertBot(seed=seed, rules=config)
        s = new_game(config, seed=seed)
        while not s.terminal:
            o, m = encode(s, s.current), legal_mask(s, s.current)
            obs.append(o)
            masks.append(m)
            a = bot.act({"observation": o, "action_mask": m}) if s.current % 2 == 0 \
                else int(rng.choice(np.flatnonzero(m)))
            apply_action(s, a)
    return np.array(obs, np.float32), np.array(masks, np.int8)


@pytest.mark.parametrize("config", [Config(num_players=2), Config(num_players=3), Config(num_players=4),
                                    Config(num_players=3, closing_ace=False, may_take_own_pile=False,
                                           leftovers_to_last_runner=False)], ids=str)
def test_act_batch_is_act_row_by_row(config):
    obs, masks = _positions(config, range(6))
    views = view_arrays(obs)
    assert all(views[g].tolist() == view_array(decode(obs[g])).tolist() for g in range(len(obs)))
    one, batch = ExpertBot(seed=5, rules=config), ExpertBot(seed=5, rules=config)
    want = [one.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    got = np.concatenate([batch.act_batch(obs[:100], masks[:100]), batch.act_batch(obs[100:], masks[100:])])
    assert got.dtype == np.int64 and got.tolist() == want
    # the generators drew the same numbers (ties happened: the state moved from a fresh one's)
    assert one.rng.bit_generator.state == batch.rng.bit_generator.state
    assert one.rng.bit_generator.state != ExpertBot(seed=5).rng.bit_generator.state
    assert one.rng.integers(1 << 30) == batch.rng.integers(1 << 30)


def test_positions_worked_by_hand():
    # tests/agents/test_robada_bots.py works these out: a pile the run reaches is taken (58-point
    # swing, rule 1); with a big pile the Caballo is started, not the 23-point 5 (rule 3); the
    # Rey, whose other copies are all seen, is dropped (rule 5)
    s1 = position(["6o 2o", "3b"], loose="6c", piles=[["Ac"], ["Rb", "Sb", "7b"]])
    apply_action(s1, START + 5)
    big = ["Ro", "Rc", "Re", "Co", "Ce", "So", "Sc", "Se", "7o", "7e", "2o"]
    s2 = position(["5c Cb 2c", "3b Ab 4b"], loose="4c 5o 6o 7c Cc", piles=[big, []])
    s3 = position(["Ab 6b Rb", "3b 7b 7c"], loose="2c 3c 4c 5c", piles=[["Ro", "Rc", "Re"], []])
    obs = np.array([encode(s, 0) for s in (s1, s2, s3)], np.float32)
    masks = np.array([legal_mask(s, 0) for s in (s1, s2, s3)], np.int8)
    assert ExpertBot(seed=0).act_batch(obs, masks).tolist() == [TAKE + 1, START + CABALLO, DROP + REY]
    # one legal action: played with no plan and no draw
    only = np.zeros((1, 27), np.int8)
    only[0, DROP + REY] = 1
    bot = ExpertBot(seed=0)
    before = bot.rng.bit_generator.state
    assert bot.act_batch(obs[2:], only).tolist() == [DROP + REY] and bot.rng.bit_generator.state == before


def test_refusals_leave_the_generator_as_it_was():
    obs, masks = _positions(Config(num_players=2), [0])
    bot = ExpertBot(seed=1)
    before = bot.rng.bit_generator.state
    for bad_obs, bad_masks, msg in (
            (obs.astype(np.float64), masks, "legal: observations float32"),
            (obs, masks[:, :20], "legal: observations float32"),
            (obs[:3], masks[:2], "the same G"),
            (obs[:2].tolist(), masks[:2], "takes numpy arrays"),
            (obs[:2], np.zeros((2, 27), np.int8), "row 0 of action_masks allows no action"),
            (np.zeros((2, 192), np.float32), masks[:2], "row 0 of observations has no player count set"),
            (np.where(np.arange(192) == 7, np.nan, obs[:2]).astype(np.float32), masks[:2],
             r"row 0 of observations has an entry outside \[0, 1\]")):
        with pytest.raises(ConfigError, match=msg):
            bot.act_batch(bad_obs, bad_masks)
    assert bot.rng.bit_generator.state == before
    assert bot.act_batch(obs[:0], masks[:0]).shape == (0,)
    # a bot told other rules than the table's (no closing Ace) still plays act's actions: its
    # first actions come from the table's mask (a refused one would raise RulesMismatchError)
    told_obs, told_masks = _positions(Config(num_players=2), [4])
    one, batch = ExpertBot(seed=2, closing_ace=False), ExpertBot(seed=2, closing_ace=False)
    assert batch.act_batch(told_obs, told_masks).tolist() == \
        [one.act({"observation": o, "action_mask": m}) for o, m in zip(told_obs, told_masks)]


def test_bot_policy_takes_the_batch_path():
    obs, masks = _positions(Config(num_players=4), [2])
    bot = ExpertBot(seed=3)
    calls = []
    batch = bot.act_batch
    bot.act = lambda *a, **k: pytest.fail("asked row by row")
    bot.act_batch = lambda o, m: calls.append(len(o)) or batch(o, m)
    got = BotPolicy(bot, "robada")(obs, masks)
    assert calls == [len(obs)] and got.shape == (len(obs),)
    assert all(masks[g, got[g]] for g in range(len(obs)))


@pytest.mark.parametrize("method", ["act", "plan_values"])
def test_a_subclass_that_decides_its_own_way_is_asked_row_by_row(method):
    """A subclass overriding how the expert decides (here ``act``, or its planner ``plan_values``)
    is never bypassed by the compiled planner: act_batch asks its own ``act`` for every row."""
    obs, masks = _positions(Config(num_players=2), [4])
    asked = []

    def act(self, observation, belief=None):
        asked.append(1)
        return int(np.flatnonzero(observation["action_mask"])[-1])        # the last legal action

    def plan_values(self, view, legal):
        asked.append(1)
        return [legal[-1]], [0.0]                                         # one plan: the last legal action

    Sub = type("Sub", (ExpertBot,), {method: act if method == "act" else plan_values})
    got = Sub(seed=0).act_batch(obs, masks)
    last = [int(np.flatnonzero(m)[-1]) for m in masks]
    assert got.tolist() == last
    if method == "act":
        assert len(asked) == len(obs)
    else:   # rows with one legal action are played without planning (act_view)
        assert len(asked) == sum(int(m.sum()) > 1 for m in masks)
