"""Tapeo PettingZoo adapters: PettingZoo's own test suite, rewards, infos, hidden information,
bad input, render."""
import numpy as np
import pytest
from _pz_helpers import check_max_cycles, masked, play_random_aec

import tapeo_env
from hod.core.errors import ConfigError, IllegalActionError
from hod.core.rewards import final_rewards
from tapeo_env.rules.cards import CHURRO, CROQUETA, FREELOADER, HAM3, PEPPER, TORTILLA
from tapeo_env.rules.engine import Config, new_game
from tapeo_env.rules.observation import LAYOUT, OBS_SIZE, encode


# PettingZoo's api, seed and render tests: tests/contract/test_env_contract.py (both games alike).


def test_pettingzoo_max_cycles_test():
    def aec(max_cycles):
        e = tapeo_env.env(max_cycles=max_cycles)
        return masked(e, e.unwrapped)

    check_max_cycles(aec, lambda max_cycles: masked(tapeo_env.parallel_env(max_cycles=max_cycles)))


@pytest.mark.parametrize("scheme", ["points", "win_loss", "margin"])
@pytest.mark.parametrize("round_rewards", [False, True])
@pytest.mark.parametrize("n", [2, 4, 5])
def test_every_seat_gets_its_payoff_from_last(scheme, round_rewards, n):
    rng = np.random.default_rng(n)
    env = tapeo_env.env(num_players=n, reward_scheme=scheme, round_rewards=round_rewards)
    for seed in range(3):
        totals, infos = play_random_aec(env, seed, rng)
        s = env.unwrapped.game_state
        payoff = final_rewards(s.final_scores, s.winners, scheme)
        for i, a in enumerate(env.possible_agents):
            assert totals[a] == pytest.approx(payoff[i])
            assert infos[a]["final_score"] == int(s.final_scores[i])
            assert infos[a]["win_share"] == (1 / len(s.winners) if i in s.winners else 0.0)


def test_round_rewards_points_are_round_scores():
    # with "points", round r pays the round's score; the last round also pays the end churros
    env = tapeo_env.parallel_env(num_players=3, round_rewards=True)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(0)
    paid = []
    while env.agents:
        acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        before = env.game_state.round
        obs, rew, *_ = env.step(acts)
        if env.game_state.round != before:
            paid.append([rew[a] for a in env.possible_agents])
    s = env.game_state
    assert paid[0] == s.round_scores[0].tolist() and paid[1] == s.round_scores[1].tolist()
    assert paid[2] == (s.final_scores - s.round_scores[:2].sum(axis=0)).tolist()


def test_parallel_final_rewards_and_infos():
    env = tapeo_env.parallel_env(num_players=4, reward_scheme="win_loss")
    obs, _ = env.reset(seed=11)
    rng = np.random.default_rng(1)
    total = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, rew, term, trunc, infos = env.step(acts)
        for a, r in rew.items():
            total[a] += r
    s = env.game_state
    exp = final_rewards(s.final_scores, s.winners, "win_loss")
    assert [total[a] for a in env.possible_agents] == pytest.approx(exp.tolist())
    assert all(term.values()) and set(infos["player_0"]) == {"final_score", "win_share"}


def test_aec_observations_do_not_change_before_reveal():
    env = tapeo_env.raw_env(num_players=4)
    env.reset(seed=3)
    before = {a: env.observe(a)["observation"].copy() for a in env.possible_agents}
    for a in env.possible_agents[:-1]:  # three seats pick; the fourth has not yet
        env.step(int(np.flatnonzero(env.observe(a)["action_mask"])[0]))
        for b in env.possible_agents:
            assert np.array_equal(env.observe(b)["observation"], before[b])
    assert env.game_state.pick == 0


def test_observation_ignores_hidden_information():
    # Two games that share seat 0's hand and differ in the other hands, the undealt tapas and
    # the generator give seat 0 the same observation at pick 0. After one pick, seat 0 knows the
    # hand it passed left, but not the others.
    cfg = Config(num_players=3)
    base = new_game(cfg, seed=1)
    other = new_game(cfg, seed=2)
    other.hands[0] = base.hands[0]
    # fill the other two hands with different legal contents: swap them
    other.hands[1], other.hands[2] = base.hands[2].copy(), base.hands[1].copy()
    assert not np.array_equal(other.hands[1], base.hands[1])
    assert np.array_equal(encode(base, 0), encode(other, 0))
    # seat 0 and seat 1 still see differently (seat 1 holds another hand)
    assert not np.array_equal(encode(base, 1), encode(other, 1))


def test_observation_layout_of_a_known_position():
    # 2 players, a hand-made deal: seat 0 gets 10 tortillas, seat 1 gets 10 croquetas.
    cfg = Config(num_players=2)
    deals = [[[TORTILLA] * 10, [CROQUETA] * 10]] * 3
    s = new_game(cfg, deals=deals)
    o = encode(s, 0)
    v = lambda name: LAYOUT.view(o, name)
    assert v("num_players").tolist() == [1, 0, 0, 0, 0]  # 2 players
    assert v("round").tolist() == [1, 0, 0] and v("pick")[0] == 0 and v("hand_size")[0] == 1.0  # 10/10
    assert v("hand")[TORTILLA] == pytest.approx(10 / 14)
    assert v("known_flags").sum() == 0  # the opponent's hand has not been seen yet
    # unseen croquetas: 14 in the deck, none placed by seat 0 -> 14/14
    assert v("unseen")[CROQUETA] == 1.0 and v("unseen")[TORTILLA] == pytest.approx(4 / 14)
    tapeo_env.apply_actions(s, [TORTILLA, CROQUETA])
    o = encode(s, 0)
    # seat 0 now holds the croqueta hand (9 left) and knows its old hand went left: 9 tortillas
    assert v("hand")[CROQUETA] == pytest.approx(9 / 14)
    assert LAYOUT.view(o, "known_hands")[TORTILLA] == pytest.approx(9 / 14)
    assert LAYOUT.view(o, "known_flags")[0] == 1.0
    # bars: own first (1 tortilla), then left neighbour (1 croqueta)
    bars = LAYOUT.view(o, "bars").reshape(6, 10)
    assert bars[0, TORTILLA] == pytest.approx(1 / 14) and bars[1, CROQUETA] == pytest.approx(1 / 14)
    # unseen tortillas: 14 - 1 on bar - 9 known = 4 -> 4/14
    assert LAYOUT.view(o, "unseen")[TORTILLA] == pytest.approx(4 / 14)


def test_observation_size_is_independent_of_player_count():
    for n in range(2, 7):
        e = tapeo_env.parallel_env(num_players=n)
        obs, _ = e.reset(seed=0)
        assert obs["player_0"]["observation"].shape == (OBS_SIZE,)
        assert obs["player_0"]["observation"].dtype == np.float32
        assert obs["player_0"]["action_mask"].dtype == np.int8


def test_observations_stay_in_bounds_over_games():
    for n in (2, 6):
        e = tapeo_env.parallel_env(num_players=n)
        rng = np.random.default_rng(n)
        for seed in range(5):
            obs, _ = e.reset(seed=seed)
            while e.agents:
                for a in e.agents:
                    assert e.observation_space(a).contains(obs[a])
                obs, *_ = e.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in e.agents})


@pytest.mark.parametrize("bad", [1, 7, 0, "4", True])
def test_bad_player_count_names_legal_values(bad):
    with pytest.raises(ConfigError, match=r"\[2, 3, 4, 5, 6\]|integer"):
        tapeo_env.env(num_players=bad)


def test_round_rewards_must_be_a_bool():
    # unknown options and the options shared with Ronda Robada: tests/contract/test_env_contract.py
    with pytest.raises(ConfigError) as e:
        tapeo_env.raw_env(round_rewards="yes")
    assert str(e.value) == "round_rewards='yes' is not allowed; legal values: [False, True]"


def test_raw_env_raises_on_illegal_action_and_state_is_unchanged():
    env = tapeo_env.raw_env(num_players=2)
    env.reset(seed=0)
    mask = env.observe("player_0")["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    hands, sel = env.game_state.hands.copy(), env.agent_selection
    with pytest.raises(IllegalActionError, match="legal actions") as ei:
        env.step(bad)
    assert tapeo_env.action_name(int(np.flatnonzero(mask)[0])) in str(ei.value)
    assert np.array_equal(env.game_state.hands, hands) and env.agent_selection == sel
    with pytest.raises(IllegalActionError):
        env.step(None)
    par = tapeo_env.TapeoParallelEnv(num_players=2)
    obs, _ = par.reset(seed=0)
    good = int(np.flatnonzero(obs["player_1"]["action_mask"])[0])
    with pytest.raises(IllegalActionError):
        par.step({"player_0": bad, "player_1": good})
    assert par.game_state.pick == 0 and np.array_equal(par.game_state.hands, hands)
    with pytest.raises(ValueError, match="missing"):
        par.step({"player_0": good})


def test_lose_mode_offender_loses_and_game_ends():
    env = tapeo_env.env(num_players=3)
    env.reset(seed=0)
    mask = env.observe("player_0")["action_mask"]
    env.step(int(np.flatnonzero(mask)[0]))  # player_0 plays legally
    bad = int(np.flatnonzero(env.observe("player_1")["action_mask"] == 0)[0])
    env.step(bad)
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 0.0, "player_1": -1.0, "player_2": 0.0}
    assert env.infos["player_2"]["illegal_action"] == "player_1"
    assert env.infos["player_1"]["win_share"] == 0.0 and env.infos["player_0"]["win_share"] == 0.5
    par = tapeo_env.parallel_env(num_players=2)
    obs, _ = par.reset(seed=0)
    bad0 = int(np.flatnonzero(obs["player_0"]["action_mask"] == 0)[0])
    good1 = int(np.flatnonzero(obs["player_1"]["action_mask"])[0])
    _, rew, term, _, _ = par.step({"player_0": bad0, "player_1": good1})
    assert rew == {"player_0": -1.0, "player_1": 0.0} and all(term.values()) and par.agents == []


def test_render_ansi_shows_bars_and_scores():
    env = tapeo_env.parallel_env(num_players=2, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    env.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in env.agents})
    text = env.render()
    assert "player_0: score 0" in text and "player_1" in text and "bar:" in text


def test_env_docs_page_has_layout_table():
    assert "| indices | piece |" in tapeo_env.__doc__
    assert tapeo_env.raw_env.metadata["name"] == "tapeo_v0"
    assert [tapeo_env.action_name(a) for a in range(10)][HAM3] == "ham3"
    assert tapeo_env.ACTION_NAMES[FREELOADER] == "freeloader" and tapeo_env.ACTION_NAMES[CHURRO] == "churro"
    assert tapeo_env.ACTION_NAMES[PEPPER] == "pepper"


def test_docs_page_carries_the_current_layout_table():
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "tapeo_env.md").read_text()
    assert LAYOUT.markdown_table() in page


def test_demo_prints_rounds_and_winner():
    from hod.apps.show_game import play
    text = play(seed=0, players=3)
    assert text.count("finished") == 3 and "Final scores: player_0" in text and "Winner: player_" in text
    assert play(seed=0, players=3) == text  # seeded


def test_demo_plays_a_search_bot_with_belief_samples():
    # It refused with "needs belief(rng) -> State"; a search bot now gets samples of what its
    # seat cannot see, as in the play apps. 3 rounds at 2 players, every seat the search.
    pytest.importorskip("onnxruntime")   # the search's playout network (the core venv has none)
    from hod.apps.show_game import play
    text = play(seed=1, players=2, bot="search")
    assert text.count("finished") == 3 and ", search bots" in text.splitlines()[0]
    assert play(seed=1, players=2, bot="search") == text   # seeded, samples included


def test_env_speed_benchmark_smoke():
    from hod.benchmarks.env_speed import format_table, run
    rows = run("tapeo", 2, 300)
    assert rows[0][1]["agent_steps"] >= 300 and rows[1][1]["games"] >= 1
    assert "agent-steps/s" in format_table(rows)


def test_encode_refuses_a_seat_outside_the_table():
    s = new_game(Config(num_players=4), seed=0)
    for bad in (4, -1, 9):   # 4 players: seats 0..3 (no wrap-around modulo 4)
        with pytest.raises(ConfigError, match=rf"seat={bad} is out of range; legal values: \[0, 1, 2, 3\]"):
            encode(s, bad)
    out = np.full(OBS_SIZE, 7.0, np.float32)
    with pytest.raises(ValueError, match="must be an integer"):
        encode(s, "0", out)
    assert (out == 7.0).all()    # nothing written
    assert np.array_equal(encode(s, np.int64(3)), encode(s, 3))


def test_observe_before_reset_says_to_reset():
    from hod.core.errors import ResetNeededError

    env = tapeo_env.raw_env(num_players=3)
    with pytest.raises(ResetNeededError, match=r"observe\(\) called before reset\(\): call reset\(\)"):
        env.observe("player_0")
    env.reset(seed=0)
    with pytest.raises(KeyError):
        env.observe("player_3")      # 3 players: player_0..player_2
