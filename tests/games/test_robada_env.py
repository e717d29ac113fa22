"""Ronda Robada PettingZoo adapters: PettingZoo's own test suite, rewards reaching every seat,
final infos, the hand-made full game through both forms, bad input, render."""
import numpy as np
import pytest
from _pz_helpers import play_random_aec

import robada_env
from hod.core.errors import ConfigError, IllegalActionError
from hod.core.rewards import final_rewards
from robada_env.rules.actions import CONFIRM, DROP, NOOP, TAP
from robada_env.rules.engine import Config, new_game, winners
from test_robada_engine import FULL_ACTIONS, FULL_DECK


# ---------------------------------------------------------------- PettingZoo's test suite

# PettingZoo's api, seed and render tests: tests/contract/test_env_contract.py (both games alike).


def _first_legal(obs) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("max_cycles", [1, 3])
def test_max_cycles_counts_cycles_of_one_turn_per_seat_in_both_forms(n, max_cycles):
    # One meaning for both games (PettingZoo's): a cycle = every seat acts once. In Ronda Robada a
    # seat acts by taking a turn (its decisions up to its drop or confirm), so a cycle is n turns
    # and the env truncates right after the turn that completes max_cycles cycles. (PettingZoo's
    # max_cycles_test assumes one decision per agent per cycle, so it does not apply.)
    env = robada_env.raw_env(num_players=n, max_cycles=max_cycles)
    env.reset(seed=0)
    aec_actions, turn_takers = [], []
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            assert trunc and not term and info == {"final_score": 0, "win_share": 0.0}
            env.step(None)
            continue
        a = _first_legal(obs)
        env.step(a)
        aec_actions.append(a)
        if DROP <= a < TAP or a == CONFIRM:
            turn_takers.append(agent)
    assert len(turn_takers) == n * max_cycles
    assert turn_takers == [f"player_{i % n}" for i in range(n * max_cycles)]
    assert DROP <= aec_actions[-1] < TAP or aec_actions[-1] == CONFIRM   # never mid-turn

    par = robada_env.parallel_env(num_players=n, max_cycles=max_cycles)
    obs, _ = par.reset(seed=0)
    par_actions = []
    while par.agents:
        actor = par.possible_agents[par.game_state.current]
        a = _first_legal(obs[actor])
        par_actions.append(a)
        obs, _, terms, truncs, infos = par.step({actor: a})
    assert par_actions == aec_actions
    assert all(truncs.values()) and not any(terms.values())


def test_default_max_cycles_never_truncates_a_real_game():
    # a cycle takes at least one decision, so a default of at least max_game_length decisions
    # is never reached
    assert robada_env.GAME.default_max_cycles >= robada_env.GAME.max_game_length
    assert robada_env.raw_env().max_cycles == robada_env.GAME.default_max_cycles


# ---------------------------------------------------------------- rewards and infos

def _check_mask(mask):
    assert mask.dtype == np.int8 and mask.sum() >= 1 and mask[NOOP] == 0


@pytest.mark.parametrize("scheme", ["points", "win_loss", "margin"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_every_seat_gets_its_payoff_from_last(scheme, n):
    rng = np.random.default_rng(n)
    env = robada_env.env(num_players=n, reward_scheme=scheme)
    for seed in range(3):
        totals, infos = play_random_aec(env, seed, rng, _check_mask)
        s = env.unwrapped.game_state
        w = winners(s)
        payoff = final_rewards(s.points, w, scheme)
        for i, a in enumerate(env.possible_agents):
            assert totals[a] == pytest.approx(payoff[i])
            assert infos[a]["final_score"] == s.points[i]
            assert infos[a]["win_share"] == (1 / len(w) if i in w else 0.0)


@pytest.mark.parametrize("n", [2, 4])
def test_parallel_every_seat_gets_its_payoff(n):
    env = robada_env.parallel_env(num_players=n, reward_scheme="win_loss")
    rng = np.random.default_rng(1)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        total = dict.fromkeys(env.possible_agents, 0.0)
        while env.agents:
            acts = {}
            for a in env.agents:
                m = obs[a]["action_mask"]
                acts[a] = int(rng.choice(np.flatnonzero(m)))
                if a != env.possible_agents[env.game_state.current]:
                    assert m.tolist() == [0] * NOOP + [1]     # seats not to act: only no-op
            obs, rew, term, trunc, infos = env.step(acts)
            for a, r in rew.items():
                total[a] += r
        s = env.game_state
        exp = final_rewards(s.points, winners(s), "win_loss")
        assert [total[a] for a in env.possible_agents] == pytest.approx(exp.tolist())
        assert all(term.values()) and set(infos["player_0"]) == {"final_score", "win_share"}


def _load_full_game(env):
    """Put the hand-made deck of test_robada_engine into a freshly reset env."""
    env.game_state = new_game(Config(num_players=2), deck=FULL_DECK)


@pytest.mark.parametrize("scheme,expected", [
    ("points", [166.0, 78.0]),          # the scores worked out in test_robada_engine
    ("win_loss", [1.0, -1.0]),          # seat 0 wins alone
    ("margin", [88.0, -88.0]),          # 166 - 78 = 88
])
def test_full_game_through_both_forms(scheme, expected):
    aec = robada_env.env(reward_scheme=scheme)
    aec.reset(seed=0)
    _load_full_game(aec.unwrapped)
    actions = iter(FULL_ACTIONS)
    totals = {a: 0.0 for a in aec.possible_agents}
    for agent in aec.agent_iter():
        _, r, term, trunc, info = aec.last()
        totals[agent] += r
        aec.step(None if term or trunc else next(actions))
        if term:
            assert info == {"final_score": 166 if agent == "player_0" else 78,
                            "win_share": 1.0 if agent == "player_0" else 0.0}
    assert [totals[a] for a in aec.possible_agents] == expected

    par = robada_env.parallel_env(reward_scheme=scheme)
    par.reset(seed=0)
    _load_full_game(par)
    totals = {a: 0.0 for a in par.possible_agents}
    for act in FULL_ACTIONS:
        actor = par.possible_agents[par.game_state.current]
        _, rew, term, _, infos = par.step({a: act if a == actor else NOOP for a in par.agents})
        for a, r in rew.items():
            totals[a] += r
    assert par.agents == [] and [totals[a] for a in par.possible_agents] == expected
    assert infos["player_1"] == {"final_score": 78, "win_share": 0.0}


# ---------------------------------------------------------------- bad input

def test_bad_options_name_the_legal_ones():
    for n in (1, 5):
        with pytest.raises(ConfigError, match=r"\[2, 3, 4\]"):
            robada_env.env(num_players=n)
        with pytest.raises(ConfigError, match=r"\[2, 3, 4\]"):
            robada_env.parallel_env(num_players=n)
    # unknown options and the options shared with Tapeo: tests/contract/test_env_contract.py
    with pytest.raises(ConfigError, match="True or False"):
        robada_env.raw_env(closing_ace="yes")


def test_raw_env_illegal_action_raises_and_changes_nothing():
    env = robada_env.raw_env()
    env.reset(seed=4)
    agent = env.agent_selection
    before = env.observe(agent)
    legal = np.flatnonzero(before["action_mask"]).tolist()
    with pytest.raises(IllegalActionError, match=r"player_0.*legal actions: \[.*drop"):
        env.step(CONFIRM)                      # no run in progress: confirm is illegal
    after = env.observe(agent)
    assert env.agent_selection == agent and env.game_state.history == []
    assert np.array_equal(before["observation"], after["observation"])
    assert np.flatnonzero(after["action_mask"]).tolist() == legal


def test_wrapped_env_offender_loses():
    env = robada_env.env(num_players=3)
    env.reset(seed=4)
    env.step(CONFIRM)                          # illegal for player_0
    assert all(env.terminations.values())
    assert env._cumulative_rewards == {"player_0": -1.0, "player_1": 0.0, "player_2": 0.0}
    # nothing is in any pile yet (final_score 0); the two others share the win: 1/2 each
    assert env.infos["player_1"] == {"illegal_action": "player_0", "final_score": 0, "win_share": 0.5}
    assert env.infos["player_0"] == {"illegal_action": "player_0", "final_score": 0, "win_share": 0.0}


def test_parallel_illegal_actions():
    env = robada_env.parallel_env(illegal_action="raise")
    env.reset(seed=4)
    with pytest.raises(IllegalActionError, match=r"player_1.*\[26 \(no-op\)\]"):
        legal = int(np.flatnonzero(env.action_mask("player_0"))[0])
        env.step({"player_0": legal, "player_1": 3})   # player_1 is not to act
    assert env.game_state.history == []
    env = robada_env.parallel_env()
    env.reset(seed=4)
    _, rew, term, _, infos = env.step({"player_0": CONFIRM, "player_1": NOOP})
    assert rew == {"player_0": -1.0, "player_1": 0.0} and all(term.values()) and env.agents == []


def test_parallel_agents_not_to_act_may_send_none():
    # A seat not to act may send the no-op, leave its action out, or send None ("no action", as
    # AEC steps a finished agent with None); under illegal_action="lose" None used to count as
    # an illegal action and end the game with player_1 losing a turn it did not have.
    for mode in ("lose", "raise"):
        env = robada_env.parallel_env(illegal_action=mode)
        env.reset(seed=4)
        legal = int(np.flatnonzero(env.action_mask("player_0"))[0])
        _, rew, term, _, _ = env.step({"player_0": legal, "player_1": None})
        assert not any(term.values()) and rew == {"player_0": 0.0, "player_1": 0.0}
        assert env.agents == ["player_0", "player_1"] and len(env.game_state.history) == 1


# ---------------------------------------------------------------- misc contract

def test_ansi_render_shows_the_table():
    env = robada_env.raw_env(render_mode="ansi")
    env.reset(seed=0)
    env.game_state = new_game(Config(num_players=2), deck=FULL_DECK)
    for a in FULL_ACTIONS[:3]:               # s0 started with the A c and tapped 2 o, 3 o
        env.step(a)
    text = env.render()
    assert "-> player_0: hand [5 of oros, 6 of oros]" in text
    assert "loose cards: [4 of oros]" in text
    assert "run of player_0: started with A of copas, 4 cards gathered [A of oros, 2 of oros, 3 of oros]; needs 4" in text
    assert "scores: player_0 0, player_1 0" in text
    for a in FULL_ACTIONS[3:5]:
        env.step(a)
    assert "pile: visible A of copas, 5 cards, 11 pts" in env.render()
    assert robada_env.raw_env(render_mode="human").render() is None


def test_env_metadata_and_exports():
    env = robada_env.env()
    assert env.metadata["name"] == "robada_v0" == robada_env.ENV_NAME
    assert robada_env.ACTION_NAMES[25] == "confirm" and robada_env.LAYOUT.size == robada_env.OBS_SIZE
    assert "take pile +k" in robada_env.__doc__


def test_observe_before_reset_says_to_reset():
    from hod.core.errors import ResetNeededError

    env = robada_env.raw_env(num_players=2)
    with pytest.raises(ResetNeededError, match=r"observe\(\) called before reset\(\): call reset\(\)"):
        env.observe("player_0")
    env.reset(seed=0)
    with pytest.raises(KeyError):
        env.observe("player_2")      # 2 players: player_0, player_1
