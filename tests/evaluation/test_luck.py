"""Luck-corrected evaluation (evaluation/luck.py) and the games' chance hooks
(tapeo_env/rules/chance.py, robada_env/rules/chance.py).

The correction at a chance event is V(after) - mean of V over the event dealt again; its
expectation is 0 for any V. Checked: by hand on a two-deal toy (exact arithmetic in the comment),
exactly 0 for a constant V, 0 within its interval for a random V over many engine games, exact par
for a bot against itself, the hooks against the engines' own deals (differential), and the
tournament's plain output unchanged.
"""
import json
import math
import re

import numpy as np
import pytest

from hod.core.deal import shuffled_one, shuffled_prefix_one
from hod.core.errors import ConfigError
from hod.core.games import get_game, load_object
from hod.evaluation import luck as L
from hod.evaluation import stats as _stats
from hod.evaluation.tournament import run_tournament
from hod.training.fake_env import register_fake_game
from robada_env.rules import chance as rchance
from robada_env.rules import engine as reng
from tapeo_env.rules import chance as tchance
from tapeo_env.rules import engine as teng


# ------------------------------------------------------------------ the estimator by hand


class TwoDeals:
    """A toy chance hook: one event, two equally likely deals "A" and "B"; dealing again
    alternates A, B, A, B... (so K = 2 samples are exactly the expectation)."""

    value_name = "toy"

    def __init__(self):
        self.next = 0

    def count(self, state):
        return 1

    def redeal(self, state, seed):
        self.next += 1
        return "AB"[(self.next - 1) % 2]


#: V written down: deal A is worth (3, -3) points and wins 0.9 / 0.1; deal B (-1, 1) and 0.3 / 0.7.
V_TOY = {"A": np.array([[3.0, -3.0], [0.9, 0.1]]), "B": np.array([[-1.0, 1.0], [0.3, 0.7]])}


def test_correction_by_hand_on_two_deals():
    t = L.LuckTracker(TwoDeals(), V_TOY.__getitem__, samples=2, num_players=2)
    t.start(env_seed=5)
    t.observe("A")   # the actual deal is A
    # E[V] = (V(A) + V(B)) / 2 = ((3 - 1) / 2, (-3 + 1) / 2) = (1, -1) points; ((0.9 + 0.3) / 2,
    # (0.1 + 0.7) / 2) = (0.6, 0.4) win share. luck = V(A) - E[V] = (2, -2) points, (0.3, -0.3).
    np.testing.assert_allclose(t.luck, [[2.0, -2.0], [0.3, -0.3]], rtol=0, atol=1e-12)
    t.observe("A")   # no new event: nothing added
    np.testing.assert_allclose(t.luck, [[2.0, -2.0], [0.3, -0.3]], rtol=0, atol=1e-12)
    # a game that ended 10 : 4 (seat 0 won, share 1) is corrected to 10 - 2 = 8 : 4 + 2 = 6 points and
    # a win share of 1 - 0.3 = 0.7 : 0 + 0.3 = 0.3; margins 6 : -6 -> 2 : -2 (stats.margins of the luck)
    assert (np.array([10.0, 4.0]) - t.luck[0]).tolist() == [8.0, 6.0]
    np.testing.assert_allclose(_stats.margins(t.luck[0][None, :])[0], [4.0, -4.0])


def test_two_events_between_observations_are_refused():
    class Jump(TwoDeals):
        def count(self, state):
            return 2

    t = L.LuckTracker(Jump(), V_TOY.__getitem__, samples=2, num_players=2)
    with pytest.raises(RuntimeError, match="2 chance events"):
        t.observe("A")


def test_a_value_of_the_wrong_shape_is_refused():
    t = L.LuckTracker(TwoDeals(), lambda s: np.zeros(2), samples=2, num_players=2)
    with pytest.raises(ValueError, match=r"legal: \(2, 2\)"):
        t.observe("A")


# ------------------------------------------------------------------ the chance hooks (one deal code)


def test_declarations_name_their_chance_hooks():
    assert load_object(get_game("tapeo").chance_hook) is tchance.HOOK
    assert load_object(get_game("robada").chance_hook) is rchance.HOOK


def _tapeo_round1(seed=3):
    s = teng.new_game(teng.Config(num_players=2), seed=seed)
    while s.round == 0:
        teng.apply_actions(s, [teng.legal_actions(s, i)[0] for i in range(2)])
    return s


def test_tapeo_redeal_is_the_engines_deal_with_another_seed():
    cfg = teng.Config(num_players=2)
    s = teng.new_game(cfg, seed=3)
    assert tchance.chance_count(s) == 1
    again = tchance.redeal(s, 99)
    assert again.dealt == teng.new_game(cfg, seed=99).dealt   # round 0 from seed 99, the engine's own
    assert s.dealt == teng.new_game(cfg, seed=3).dealt          # the state is not changed
    s1 = _tapeo_round1()
    assert tchance.chance_count(s1) == 2
    r1 = tchance.redeal(s1, 99)
    # round 1's deal of seed 99: the first 20 cards of the Fisher-Yates prefix, stream 1, 10 to each seat
    cards = shuffled_prefix_one(list(teng._tables(cfg).deck_list), 99, 1, 20)
    assert r1.dealt[1] == [cards[:10], cards[10:]]
    assert r1.hands.tolist() == [np.bincount(cards[:10], minlength=10).tolist(),
                                 np.bincount(cards[10:], minlength=10).tolist()]
    assert r1.scores_so_far().tolist() == s1.scores_so_far().tolist()     # round 0's points kept
    assert r1.churros_kept.tolist() == s1.churros_kept.tolist()
    teng.apply_actions(s1, [teng.legal_actions(s1, i)[0] for i in range(2)])
    with pytest.raises(ConfigError, match="right after a deal"):
        tchance.redeal(s1, 1)


def test_tapeo_counts_one_event_per_round():
    s = teng.new_game(teng.Config(num_players=3), seed=1)
    counts = [tchance.chance_count(s)]
    while not s.terminal:
        teng.apply_actions(s, [teng.legal_actions(s, i)[-1] for i in range(3)])
        counts.append(tchance.chance_count(s))
    assert sorted(set(counts)) == [1, 2, 3] and counts[-1] == 3


def _robada_redealt(n=2, seed=4):
    s = reng.new_game(reng.Config(num_players=n), seed=seed)
    while rchance.chance_count(s) == 1:
        reng.apply_action(s, reng.legal_actions(s)[-1])
    return s


def test_robada_first_deal_again_is_new_game():
    s = reng.new_game(reng.Config(num_players=3, closing_ace=False), seed=4)
    again = rchance.redeal(s, 17)
    assert again.deck_order == reng.new_game(reng.Config(num_players=3, closing_ace=False), seed=17).deck_order
    assert again.config == s.config


def test_robada_redeal_shuffles_the_hands_and_deck_in_place():
    s = _robada_redealt()
    assert rchance.chance_count(s) == 2
    pool = [c for h in s.hands for c in h] + s.deck          # seat 0's 3, seat 1's 3, then the deck
    perm = shuffled_one(list(range(len(pool))), 17)
    again = rchance.redeal(s, 17)
    new = [pool[p] for p in perm]
    assert again.hands == [new[0:3], new[3:6]] and again.deck == new[6:]
    assert again.piles == s.piles and again.loose == s.loose and again.points == s.points
    assert reng.legal_mask(again, again.current).tolist() == reng.legal_mask(
        reng.from_position(again.config, again.hands, again.loose, again.piles, again.deck, again.current,
                           again.last_runner), again.current).tolist()


@pytest.mark.parametrize("n, deals", [(2, 6), (4, 3)])
def test_robada_counts_the_deals(n, deals):
    s = reng.new_game(reng.Config(num_players=n), seed=2)
    seen = [rchance.chance_count(s)]
    while not s.terminal:
        reng.apply_action(s, reng.legal_actions(s)[0])
        seen.append(rchance.chance_count(s))
    assert sorted(set(seen)) == list(range(1, deals + 1))     # 36 cards, 3 n a deal: 6 deals at 2, 3 at 4


# ------------------------------------------------------------------ unbiased for any V


def _random_value(encode, size, n, seed):
    w = np.random.default_rng(seed).normal(size=(2, n, size))
    return lambda s: w @ encode(s).astype(np.float64)


def _engine_luck(game, value, games, n=2, samples=4):
    """Luck terms (G, 2, n) of random-play engine games (seeds 0..G-1)."""
    eng = teng if game == "tapeo" else reng
    hook = load_object(get_game(game).chance_hook)
    out = []
    rng = np.random.default_rng(0)
    for g in range(games):
        s = eng.new_game(eng.Config(num_players=n), seed=g)
        t = L.LuckTracker(hook, value, samples, n)
        t.start(g)
        t.observe(s)
        while not s.terminal:
            if game == "tapeo":
                eng.apply_actions(s, [int(rng.choice(eng.legal_actions(s, i))) for i in range(n)])
            else:
                eng.apply_action(s, int(rng.choice(eng.legal_actions(s))))
            t.observe(s)
        out.append(t.luck.copy())
    return np.array(out)


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_a_random_value_function_gives_corrections_of_mean_zero(game):
    encode = load_object(get_game(game).state_encoder)
    size = get_game(game).state_layout.size
    luck = _engine_luck(game, _random_value(encode, size, 2, seed=1), games=60)
    assert np.abs(luck).max() > 0.1                       # the random V does see the deals
    for q in range(2):
        for seat in range(2):
            m, lo, hi = _stats.t_interval(luck[:, q, seat])
            assert lo <= 0.0 <= hi, (q, seat, m, lo, hi)


def test_a_constant_value_function_gives_no_correction():
    luck = _engine_luck("robada", lambda s: np.array([[5.0, 5.0], [0.5, 0.5]]), games=5)
    assert luck.tolist() == np.zeros((5, 2, 2)).tolist()   # V(after) - mean V(again) = 5 - 5 = 0


# ------------------------------------------------------------------ through the tournament


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_a_bot_against_itself_is_at_par_corrected(game):
    # the same bot in both slots: par in expectation, so the corrected margin's interval holds 0 and
    # the corrected win rate's holds 1/2; at two seats the slots' corrected margins are opposite
    # (margins of the luck: l0 - l1 and l1 - l0) and their win rates add up to 1
    r = run_tournament(game, ["greedy", "greedy"], 40, seed=3, estimator="both", luck_samples=4)
    c0, c1 = r.bots[0].corrected, r.bots[1].corrected
    assert c0["margin_ci"][0] <= 0.0 <= c0["margin_ci"][1]
    assert c0["win_ci"][0] <= 0.5 <= c0["win_ci"][1]
    assert c0["margin"] == pytest.approx(-c1["margin"], abs=1e-9)
    assert c0["win_rate"] + c1["win_rate"] == pytest.approx(1.0, abs=1e-9)
    assert r.luck["events_per_game"] == (3.0 if game == "tapeo" else 6.0)
    assert r.luck["value"] == f"{game}-heuristic-v1" and r.luck["samples"] == 4


def test_duplicate_deals_cancel_the_margins_luck_of_an_additive_value():
    # with two seats, duplicate deals and the same deal in both seat orders, an additive value
    # (points so far + a value of the cards dealt, the cheap value) sees the same luck for each seat
    # in both orders (Ronda Robada deals the same cards to the same seats whatever was played):
    # a slot's margin luck is +x in one order and -x in the other, so its mean over each deal is 0
    r = run_tournament("robada", ["expert", "greedy"], 8, seed=3, estimator="both", luck_samples=4)
    g = r.games
    for d in range(4):
        lm = [x["luck_points"][0] - x["luck_points"][1] for x in g if x["deal"] == d]
        assert sum(lm) == pytest.approx(0.0, abs=1e-9) and len(lm) == 2
    assert r.bots[0].corrected["var_ratio"]["margin"] == pytest.approx(1.0, abs=1e-9)


def test_plain_runs_keep_their_keys_and_report():
    plain = run_tournament("tapeo", ["greedy", "random"], 4, seed=2)
    both = run_tournament("tapeo", ["greedy", "random"], 4, seed=2, estimator="both", luck_samples=2)
    d = plain.to_dict()
    assert "estimator" not in d and "luck" not in d and "corrected" not in d["bots"][0]
    assert set(d["games"][0]) == {"game", "deal", "env_seed", "seating", "bot_seeds", "points", "win_share", "steps"}
    assert "Luck-corrected" not in plain.to_markdown()
    # the same games: the plain numbers are the same, the corrected ones come beside them
    db = both.to_dict()
    for k in ("win_rate", "win_ci", "points", "margin", "margin_ci"):
        assert db["bots"][0][k] == d["bots"][0][k]
    assert db["estimator"] == "both" and "Luck-corrected" in both.to_markdown()
    # corrected = plain - luck, game by game (points of slot 0 over the 4 games)
    g = db["games"]
    lp = np.array([x["luck_points"][0] for x in g])
    p = np.array([x["points"][0] for x in g], np.float64)
    assert both.bots[0].corrected["points"] == pytest.approx(float((p - lp).mean()), abs=1e-9)


def test_corrected_only_replaces_the_bots_table():
    r = run_tournament("robada", ["greedy", "random"], 2, seed=2, estimator="corrected", luck_samples=2)
    md = r.to_markdown()
    assert "Luck-corrected" in md and "95% CI (Wilson)" not in md


def test_bad_estimators_and_games_without_a_hook_are_refused():
    with pytest.raises(ConfigError, match=r"legal values: \['plain', 'corrected', 'both'\]"):
        run_tournament("tapeo", ["greedy", "random"], 2, estimator="aivat")
    with pytest.raises(ConfigError, match="legal values: an int in 1..4096"):
        run_tournament("tapeo", ["greedy", "random"], 2, estimator="both", luck_samples=0)
    register_fake_game()
    with pytest.raises(ConfigError, match=r"declares no chance hook.*\['robada', 'tapeo'\]"):
        run_tournament("fake", ["random", "random"], 2, estimator="both")


def test_one_or_two_workers_give_the_same_corrected_result():
    a = run_tournament("tapeo", ["greedy", "random"], 4, seed=5, estimator="both", luck_samples=2, workers=1)
    b = run_tournament("tapeo", ["greedy", "random"], 4, seed=5, estimator="both", luck_samples=2, workers=2)
    assert a.to_dict(include_games=True)["games"] == b.to_dict(include_games=True)["games"]
    assert a.bots[0].corrected == b.bots[0].corrected
    assert not math.isnan(a.bots[0].corrected["margin"])


# ------------------------------------------------------------------ the value network's files


def _hand_arrays(d, n=2, hidden=3):
    """Arrays of a network whose last layer is 0: its output is b3 * y_scale + y_mean whatever the state."""
    z = np.zeros
    return {"x_mean": z(d), "x_scale": np.ones(d), "w1": z((d, hidden)), "b1": z(hidden), "w2": z((hidden, hidden)),
            "b2": z(hidden), "w3": z((hidden, 2 * n)), "b3": np.array([1.0, 2.0, 3.0, 4.0]),
            "y_mean": np.full(2 * n, 10.0), "y_scale": np.full(2 * n, 2.0)}


def _card(**over):
    info = get_game("robada")
    return {"format": 1, "name": "robada-2p-test", "game": "robada", "num_players": 2,
            "state_layout": info.state_layout.game, "state_version": info.state_layout.version, **over}


def test_value_network_files_round_trip_without_pickle(tmp_path):
    from hod.evaluation.luck_value import load_value, save_value
    d = get_game("robada").state_layout.size
    save_value(str(tmp_path / "v"), _hand_arrays(d), _card())
    v = load_value(str(tmp_path / "v.npz"), "robada", 2)
    # (b3 * 2 + 10) = (12, 14, 16, 18): points (12, 14), win shares (16, 18), whatever the state
    assert v(reng.new_game(reng.Config(num_players=2), seed=1)).tolist() == [[12.0, 14.0], [16.0, 18.0]]
    assert v.name == "robada-2p-test"
    with pytest.raises(ConfigError, match=r"does not fit this table.*'num_players': 2"):
        load_value(str(tmp_path / "v.npz"), "robada", 3)
    with pytest.raises(ConfigError, match="cannot load the value network"):
        load_value(str(tmp_path / "missing.npz"), "robada", 2)


@pytest.mark.parametrize("card, damage, message", [
    ([1, 2], {}, r"is list \[1, 2\]; legal: a JSON object"),
    (None, {}, "is NoneType None; legal: a JSON object"),
    (_card(), _hand_arrays(3), r"shapes \{'x_mean': \(3,\), 'x_scale': \(3,\), 'w1': \(3, 3\)\}; legal, with D = "),
    (_card(), {"w3": np.zeros((3, 6))}, r"'w3': \(3, 6\).*w3 \(H, 4\)"),
    (_card(), {"b3": np.full(4, np.nan)}, r"arrays \['b3'\] hold nan or inf; legal: finite numbers"),
    (_card(), {"x_scale": 0.0}, "a 0 scale; legal: finite numbers, x_scale not 0"),
])
def test_load_value_refuses_a_damaged_card_or_arrays(card, damage, message, tmp_path, capsys):
    """A card that is not an object, arrays of shapes that do not fit the game's state layout and
    the table (a network of 3 inputs, 3 outputs a player), numbers that are not finite: refused at
    load (and --value exits 2 before playing), not mid-run or as n/a columns."""
    from hod.benchmarks.tournament import main as tournament_main
    from hod.evaluation.luck_value import load_value, save_value
    arrays = _hand_arrays(get_game("robada").state_layout.size)
    arrays.update({k: v * np.ones_like(arrays[k]) if np.ndim(v) == 0 else v for k, v in damage.items()})
    save_value(str(tmp_path / "v"), arrays, _card())
    (tmp_path / "v.json").write_text(json.dumps(card))
    with pytest.raises(ConfigError, match=message):
        load_value(str(tmp_path / "v.npz"), "robada", 2)
    assert tournament_main(["--game", "robada", "--lineup", "random", "random", "--games", "2", "--no-progress",
                            "--value", str(tmp_path / "v.npz")]) == 2
    out = capsys.readouterr()
    assert re.search(message, out.err) and "Played in" not in out.out


def test_self_play_data_has_one_row_per_chance_event():
    from hod.evaluation.luck_value import collect
    x, y, g = collect("robada", 2, "greedy", 2, seed=0)
    # 2 games (one deal, two seat orders) x 6 deals (36 cards, 6 a deal) = 12 rows
    assert x.shape == (12, get_game("robada").state_layout.size) and y.shape == (12, 4)
    assert g.tolist() == [0] * 12
    assert (y[:, 2:].sum(axis=1) == 1.0).all()            # win shares by seat add up to 1
    r = run_tournament("robada", ["greedy", "greedy"], 2, seed=0)
    first = r.games[0]                                     # seat s holds slot seating[s]
    assert y[0, :2].tolist() == [first["points"][first["seating"][s]] for s in range(2)]


def test_commands_refuse_a_value_without_a_correction_and_bad_tables(capsys):
    from hod.benchmarks.tournament import main as tournament_main
    from hod.evaluation.luck_value import main as value_main
    assert tournament_main(["--game", "tapeo", "--lineup", "greedy", "random", "--games", "2", "--estimator",
                            "plain", "--value", "x.npz", "--no-progress"]) == 2
    assert "legal: with --estimator corrected or both" in capsys.readouterr().err
    assert tournament_main(["--game", "tapeo", "--lineup", "greedy", "random", "--games", "2", "--estimator",
                            "plain", "--luck-features", "state", "--no-progress"]) == 2
    assert "--luck-features is part of the luck correction" in capsys.readouterr().err
    assert value_main(["--game", "tapeo", "--players", "9", "--out", "x"]) == 2
    assert "legal values: [2, 3, 4, 5, 6]" in capsys.readouterr().err
    assert value_main(["--game", "robada", "--games", "4", "--epochs", "0", "--out", "x"]) == 2
    assert "--epochs 1..100000" in capsys.readouterr().err


def test_value_command_checks_its_options_before_any_work(tmp_path, capsys):
    """--games must make two deals (one is held out), --out is checked before the self-play and
    the fit, and --players names the table sizes; a refused run writes nothing."""
    from hod.evaluation.luck_value import main as value_main
    out = str(tmp_path / "sub" / "v")
    assert value_main(["--game", "robada", "--games", "2", "--out", out]) == 2
    assert "--games 2; legal values: a multiple of 2 in 2..1000000 that makes at least two deals (one is held " \
           "out), e.g. 4 (the smallest)" in capsys.readouterr().err
    assert value_main(["--game", "tapeo", "--players", "3", "--games", "6", "--out", out]) == 2
    assert "e.g. 9 (the smallest)" in capsys.readouterr().err   # 6 = 3!: one deal in all 6 seat orders
    assert value_main(["--game", "robada", "--games", "4", "--out", "/proc/v"]) == 2
    assert "--out /proc/v: cannot write in /proc" in capsys.readouterr().err
    assert value_main(["--game", "robada", "--games", "4", "--out", str(tmp_path) + "/"]) == 2
    assert "names a folder, not a file prefix; legal: a prefix with a file name" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        value_main(["--game", "robada", "--players", "x", "--out", out])
    assert e.value.code == 2
    assert "--players: invalid value 'x'; legal values: a table size of --game: kuhn [2], robada [2, 3, 4]" in \
        capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    # the smallest legal --games fits and writes its files
    assert value_main(["--game", "robada", "--games", "4", "--bot", "random", "--epochs", "1", "--hidden", "2",
                       "--out", out]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["v.json", "v.npz"]


# ------------------------------------------------------------------ the fitted estimate (cross-fitted control variates)


def _synthetic(useful, g=400, seed=0):
    """y = 5 + x @ (2, -1, 0) + e (useful) or 5 + e, x and e standard normal, two games a deal."""
    rng = np.random.default_rng(seed)
    x, e = rng.normal(size=(g, 3)), rng.normal(size=g)
    y = 5.0 + (x @ np.array([2.0, -1.0, 0.0]) if useful else 0.0) + e
    return y, x, np.arange(g) // 2


def _deal_var(v, deals):
    return float(np.var(_stats.deal_means(v, deals), ddof=1))


def test_a_useful_control_is_fitted_and_cuts_the_variance():
    y, x, deals = _synthetic(True)
    cf = L.crossfit(y, x, deals)
    # each fold's beta is fitted on the other 100 deals: near (2, -1, 0)
    np.testing.assert_allclose(cf["beta"], [[2.0, -1.0, 0.0]] * 2, atol=0.25)
    # deal means of two games: plain variance (4 + 1 + 1) / 2 = 3, corrected about 1 / 2: ratio about 1/6
    ratio = _deal_var(cf["values"], deals) / _deal_var(y, deals)
    assert 0.1 < ratio < 0.25
    assert sorted(set(cf["fold"].tolist())) == [0, 1] and len(cf["fold"]) == 200


def test_a_useless_control_gets_beta_near_0_and_no_narrower_interval():
    y, x, deals = _synthetic(False)
    cf = L.crossfit(y, x, deals)
    assert np.abs(cf["beta"]).max() < 0.1
    # the corrected deal means are the plain ones up to the tiny fitted noise: the interval does not shrink
    ratio = _deal_var(cf["values"], deals) / _deal_var(y, deals)
    assert 0.99 <= ratio < 1.05


def test_the_fitted_estimate_is_unbiased_over_replications():
    # 200 runs of 40 deals: the fitted mean of y = 5 + 2 x1 - x2 + e is 5 in expectation (beta of
    # other deals times controls of mean 0); the mean of the 200 means is 5 within its interval
    means = []
    for r in range(200):
        y, x, deals = _synthetic(True, g=80, seed=100 + r)
        means.append(L.crossfit(y, x, deals)["values"].mean())
    m, lo, hi = _stats.t_interval(means)
    assert lo <= 5.0 <= hi and hi - lo < 0.1


def test_too_few_deals_give_the_plain_values():
    y, x, deals = _synthetic(True, g=14)     # 7 deals < MIN_FIT_DEALS = 8
    cf = L.crossfit(y, x, deals)
    assert cf["values"].tolist() == y.tolist() and not cf["beta"].any() and cf["penalty"] == [None, None]


def test_row_controls_by_hand():
    # 2 games, 1 event, 2 slots; event luck (G, E, 2, n); feature luck (G, m = 2) seat-absolute
    ev = np.arange(8, dtype=np.float64).reshape(2, 1, 2, 2)
    fl = np.array([[10.0, 11.0], [20.0, 21.0]])
    seat_of_slot = np.array([[0, 1], [1, 0]])          # game 1: slot 0 sits at seat 1
    c = L.row_controls(ev, [0], fl, seat_of_slot)
    assert c.tolist() == [[0, 1, 2, 3, 10, 11, 0, 0], [4, 5, 6, 7, 0, 0, 20, 21]]
    assert L.row_controls(ev, [0, 1], fl, seat_of_slot).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]  # groups: no features


def test_fitted_estimates_through_the_tournament():
    # the same bot in both slots, 20 deals: at two seats slot 1's margin is minus slot 0's and its win
    # share 1 minus it, and the fit is linear in the target (same controls, same penalty), so the fitted
    # margins are opposite and the fitted win rates add up to 1 exactly; par is inside the intervals
    r = run_tournament("tapeo", ["greedy", "greedy"], 40, seed=3, estimator="both", luck_samples=4,
                       luck_features="state")
    f0, f1 = r.bots[0].corrected["fitted"], r.bots[1].corrected["fitted"]
    assert f0["margin"] == pytest.approx(-f1["margin"], abs=1e-9)
    assert f0["win_rate"] + f1["win_rate"] == pytest.approx(1.0, abs=1e-9)
    assert f0["margin_ci"][0] <= 0.0 <= f0["margin_ci"][1] and f0["win_ci"][0] <= 0.5 <= f0["win_ci"][1]
    size = get_game("tapeo").state_layout.size
    assert f0["controls"] == 3 * 2 * 2 + 2 * size           # 3 events x (points, win) x 2 slots + 2 seats x state
    assert r.luck["features"] == "state" and "fitted var ratio" in r.to_markdown()
    with pytest.raises(ConfigError, match=r"legal values: \['none', 'state'\]"):
        run_tournament("tapeo", ["greedy", "random"], 2, estimator="both", luck_features="hands")


def test_ladder_plain_output_unchanged_and_corrected_tables_beside_it():
    from hod.evaluation.ladder import run_ladder
    plain = run_ladder("tapeo", players=2, games=4, seed=0, bots=["random", "greedy"])
    both = run_ladder("tapeo", players=2, games=4, seed=0, bots=["random", "greedy"], estimator="both",
                      luck_samples=2)
    dp, db = plain.to_dict(), both.to_dict()
    assert "estimator" not in dp and "luck_tables" not in dp and "Luck-corrected" not in plain.to_markdown()
    for k in ("rows", "matrix", "labels", "tables"):
        assert db[k] == dp[k]                               # the ratings are the plain outcomes' either way
    assert db["estimator"] == "both" and [r["label"] for r in db["luck_tables"][0]["rows"]] == ["random", "greedy"]
    assert "Luck-corrected estimates by table" in both.to_markdown()
    with pytest.raises(ConfigError, match="legal values"):
        run_ladder("tapeo", games=4, bots=["random", "greedy"], estimator="aivat")


def test_training_evaluation_plain_rows_unchanged_and_corrected_beside_them():
    from hod import agents
    from hod.training.evaluate import format_rows, run_evaluation

    def make():
        return agents.make("tapeo", "greedy", seed=0)

    plain = [row for row, _ in run_evaluation("tapeo", make, ["random"], [2], 4, seed=0)]
    both = [row for row, _ in run_evaluation("tapeo", make, ["random"], [2], 4, seed=0, estimator="both",
                                             luck_samples=2)]
    assert "luck" not in plain[0] and set(both[0]) - set(plain[0]) == {"luck"}
    for k in ("win_rate", "win_ci", "points", "games"):
        assert both[0][k] == plain[0][k]
    assert format_rows(both).startswith(format_rows(plain)) and "Luck-corrected" in format_rows(both)


def test_ladder_command_defaults_to_both_and_plain_writes_as_before(tmp_path, capsys):
    import json

    from hod.benchmarks.ladder import main as ladder_main
    for est, prefix in ((["--estimator", "plain"], "p"), ([], "b")):
        assert ladder_main(["--game", "robada", "--games", "2", "--bots", "random", "greedy", "--no-progress",
                            "--luck-samples", "2", "--out", str(tmp_path / prefix), *est]) == 0
    plain = json.loads((tmp_path / "p.json").read_text())
    both = json.loads((tmp_path / "b.json").read_text())
    assert "estimator" not in plain and "luck_tables" not in plain
    assert both["estimator"] == "both" and len(both["luck_tables"]) == 1 and both["rows"] == plain["rows"]
    assert "Luck-corrected" not in (tmp_path / "p.md").read_text()
    assert "Luck-corrected estimates by table" in (tmp_path / "b.md").read_text()


def test_win_rate_intervals_are_clipped_to_a_share_and_the_means_are_not():
    """Four deals with plain win shares 1, 0, 1, 0 and no luck: mean 0.5, sd sqrt(1/3) = 0.5774,
    t_{0.975, 3} = 3.1824, half-width 3.1824 * 0.5774 / 2 = 0.9187, so the raw t interval
    [-0.419, 1.419] is clipped to [0, 1]; the points (the same numbers, not a share) keep theirs.
    A luck of -0.2 on every game moves the corrected mean to 0.7 (past no bound) and its interval
    [-0.219, 1.619] to [0, 1]."""
    w = np.array([1.0, 0.0, 1.0, 0.0])
    deals = np.arange(4)
    zero = np.zeros(4)
    s = L.luck_stats(w, w, w, zero - 0.2, zero, zero, deals)
    assert s["plain_win_ci_t"] == (0.0, 1.0)
    assert s["win_rate"] == pytest.approx(0.7) and s["win_ci"] == (0.0, 1.0)
    lo, hi = s["points_ci"]
    assert lo == pytest.approx(0.5 - 0.9187, abs=1e-4) and hi == pytest.approx(0.5 + 0.9187, abs=1e-4)
