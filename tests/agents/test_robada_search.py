"""Ronda Robada search bot ``rollout`` (hod.agents.robada_search): playout scores worked out by hand,
the candidates, the errors, and games through the raw env and the tournament."""
import numpy as np
import pytest

from hod import agents
import robada_env
from _robada_helpers import position
from hod.agents.robada_bots import ExpertBot
from hod.agents.robada_search import RolloutBot, playout_score
from hod.evaluation.tournament import run_tournament
from hod.core.errors import ConfigError
from robada_env.rules import engine
from robada_env.rules.actions import CONFIRM, DROP, START, TAKE, TAP
from robada_env.rules.engine import legal_mask
from robada_env.rules.observation import encode

FIVE = 4  # rank index of the 5 (ranks A, 2, ..., 7, Sota, Caballo, Rey are 0..9)


def legal_actions(s):
    return np.flatnonzero(legal_mask(s, s.current)).tolist()


def obs_of(s, seat=None):
    seat = s.current if seat is None else seat
    return {"observation": encode(s, seat), "action_mask": legal_mask(s, seat)}


def test_playout_score_is_win_share_plus_weighted_margin():
    # 2 players, 120 v 100: I win (1) and my margin is 120 - 100 = 20 -> 1 + 20 / 100 = 1.2
    assert playout_score([120, 100], 0, 1.0) == pytest.approx(1.2)
    # the loser: 0 + (100 - 120) / 100 = -0.2
    assert playout_score([120, 100], 1, 1.0) == pytest.approx(-0.2)
    # 3 players, two share the top score: share 1/2, margin weight 0 -> 0.5
    assert playout_score([50, 50, 30], 0, 0.0) == pytest.approx(0.5)
    # 4 players: 40 against the others' mean (10 + 30 + 20) / 3 = 20 -> 1 + 0.5 * 20 / 100 = 1.1
    assert playout_score([10, 40, 30, 20], 1, 0.5) == pytest.approx(1.1)


def _last_cards():
    # Last two cards of the game (deck empty): I hold 5o, seat 1 holds 7c. Loose: 5c. My pile:
    # Ao (1 point). Seat 1's pile: every other card, 6b on top, so 244 - (5 + 7 + 5 + 1) = 226
    # points (the deck holds 4 x (1 + ... + 7 + 10 + 11 + 12) = 4 x 61 = 244 points). Seat 1 made
    # the last run. Hidden from me: only seat 1's one card, so every belief sample is this state.
    s = position(["5o", "7c"], loose="5c", piles=[["Ao"], ["6b"]], to_deck=False, last_runner=1)
    assert s.deck == [] and s.points == [1, 226]
    return s


def test_action_values_are_the_exact_playouts_when_nothing_is_hidden():
    s = _last_cards()
    bot = RolloutBot(seed=0, determinizations=3, window=1e9)
    belief = lambda rng: robada_env.sample_consistent_state(s, 0, rng)  # noqa: E731
    values = bot.action_values(obs_of(s), belief)
    assert set(values) == {START + FIVE, DROP + FIVE}
    # start 5: 5o + 5c, the run needs a 6: no loose 6, seat 1's pile shows 6b -> the expert takes
    # it (226 points) and confirms: my pile 1 + 10 + 226 = 237. Seat 1 cannot start 7c (no loose
    # 7) and drops it, the game's last card: the leftover 7 goes to me, the last runner (R7):
    # 237 + 7 = 244 against 0. Score: win 1 + (244 - 0) / 100 = 3.44.
    assert values[START + FIVE] == pytest.approx(3.44)
    # drop 5: loose 5c 5o; seat 1 drops 7c; the leftovers 5 + 5 + 7 = 17 go to seat 1 (last
    # runner): 226 + 17 = 243 against my 1. Score: 0 + (1 - 243) / 100 = -2.42.
    assert values[DROP + FIVE] == pytest.approx(-2.42)
    assert bot.act(obs_of(s), belief) == START + FIVE


def test_candidates_are_the_expert_best_within_the_window():
    s = _last_cards()
    # The expert values the start about 500 points above the drop, so a 30-point window keeps only
    # the start: the decision needs no search (and no belief).
    assert RolloutBot(seed=0).candidate_actions(obs_of(s)) == [START + FIVE]
    assert RolloutBot(seed=0).act(obs_of(s)) == START + FIVE
    assert RolloutBot(seed=0, window=1e9).candidate_actions(obs_of(s)) == [START + FIVE, DROP + FIVE]
    assert RolloutBot(seed=0, window=1e9, candidates=1).candidate_actions(obs_of(s)) == [START + FIVE]


def test_a_searched_decision_without_belief_is_refused():
    s = _last_cards()
    with pytest.raises(ConfigError, match="belief"):
        RolloutBot(seed=0, window=1e9).act(obs_of(s))


@pytest.mark.parametrize("options", [dict(determinizations=0), dict(candidates=1.5), dict(window=-1.0),
                                     dict(margin_weight="x"), dict(rollouts=4)])
def test_bad_options_name_the_legal_values(options):
    with pytest.raises(ConfigError, match="legal"):
        RolloutBot(seed=0, **options)


def test_one_candidate_is_a_best_action_of_the_expert():
    # candidates=1: a best-valued action of the expert's planner, with no search, at every decision
    # of a seeded game (on an exact tie it may differ from the one ExpertBot draws).
    env = robada_env.raw_env(num_players=3, illegal_action="raise")
    env.reset(seed=4)
    rollout, expert = RolloutBot(seed=0, candidates=1), ExpertBot(seed=0)
    checked = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = rollout.act(obs)
        if obs["action_mask"].sum() > 1:
            checked += 1
            view = robada_env.rules.observation.decode(obs["observation"])
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            plans = expert.plans(view, legal)
            best = max(expert.evaluate(view, p) for p in plans)
            assert any(p.action == a and p.value >= best - 1e-9 for p in plans)
        env.step(a)
    assert checked > 20


class _CheckedRollout(RolloutBot):
    """A rollout bot that checks every belief sample against its own observation."""

    searched = 0

    def action_values(self, observation, belief, candidates=None):
        rng = np.random.default_rng(0)
        sample = belief(rng)
        seat = sample.current
        # the sample is a state the seat cannot tell from the real one: same observation
        assert np.array_equal(encode(sample, seat), observation["observation"])
        type(self).searched += 1
        return super().action_values(observation, belief, candidates)


def test_registered_and_the_tournament_gives_it_consistent_belief_samples():
    assert isinstance(agents.make("robada", "rollout", seed=0), RolloutBot)
    assert agents.needs_belief("robada", "rollout") and not agents.needs_belief("robada", "expert")
    _CheckedRollout.searched = 0
    result = run_tournament("robada", [("rollout", lambda: _CheckedRollout(determinizations=2)), "expert"],
                            num_games=2, seed=0)
    assert [b.games for b in result.bots] == [2, 2]
    assert _CheckedRollout.searched > 0   # some decisions were searched, each with a checked sample


# -- whole-turn moves (RolloutBot/SearchBot(whole_turn=True); off by default) -----------------------

def test_plan_steps_are_the_whole_turn():
    # _last_cards: I hold 5o; loose 5c; seat 1's pile shows 6b; my pile shows Ao. Start 5 (5o+5c)
    # needs a 6: no loose 6, so the only step is taking seat 1's pile (TAKE + 1); then a 7 is needed:
    # no loose 7 and no pile shows one (mine shows Ao, seat 1's is empty), so the run must stop.
    # Every way to finish the turn: start+confirm, start+take+confirm, or drop the 5.
    s = _last_cards()
    view = robada_env.rules.observation.decode(obs_of(s)["observation"])
    steps = sorted(p.steps for p in ExpertBot(seed=0).plans(view, legal_actions(s)))
    assert steps == sorted([(START + FIVE, CONFIRM), (START + FIVE, TAKE + 1, CONFIRM), (DROP + FIVE,)])
    # mid-run (after the start), the plans start from the next step
    engine.apply_action(s, START + FIVE)
    view = robada_env.rules.observation.decode(obs_of(s)["observation"])
    steps = sorted(p.steps for p in ExpertBot(seed=0).plans(view, legal_actions(s)))
    assert steps == sorted([(CONFIRM,), (TAKE + 1, CONFIRM)])


def test_whole_turn_values_are_exact_playouts_and_the_move_is_played_through():
    s = _last_cards()
    bot = RolloutBot(seed=0, determinizations=3, window=1e9, whole_turn=True)
    belief = lambda rng: robada_env.sample_consistent_state(s, 0, rng)  # noqa: E731
    plans = bot.candidate_plans(obs_of(s))
    assert set(plans) == {(START + FIVE, CONFIRM), (START + FIVE, TAKE + 1, CONFIRM), (DROP + FIVE,)}
    values = bot.plan_values(obs_of(s), belief, plans)
    # start, take seat 1's 226-point pile, confirm: 3.44 (worked out in the test above)
    assert values[(START + FIVE, TAKE + 1, CONFIRM)] == pytest.approx(3.44)
    # start and confirm at once: my pile Ao 5o 5c = 1 + 5 + 5 = 11, seat 1 keeps 226 and can only
    # drop 7c (no loose 7), the game's last card, which goes to me, the last runner (R7): 11 + 7 = 18
    # against 226: 0 + (18 - 226) / 100 = -2.08
    assert values[(START + FIVE, CONFIRM)] == pytest.approx(-2.08)
    assert values[(DROP + FIVE,)] == pytest.approx(-2.42)
    action, per_action = bot.decide(obs_of(s), belief)
    # per first action, its best move's value
    assert action == START + FIVE and per_action == pytest.approx({START + FIVE: 3.44, DROP + FIVE: -2.42})
    # the rest of the chosen move is played without searching again (no belief given)
    engine.apply_action(s, action)
    assert bot.act(obs_of(s)) == TAKE + 1
    engine.apply_action(s, TAKE + 1)
    assert bot.act(obs_of(s)) == CONFIRM


def _started_whole_turn():
    """_last_cards with a whole-turn bot that has just started its move (start 5; the rest of the
    move: take seat 1's pile, confirm)."""
    s = _last_cards()
    bot = RolloutBot(seed=0, determinizations=3, window=1e9, whole_turn=True)
    belief = lambda rng: robada_env.sample_consistent_state(s, 0, rng)  # noqa: E731
    engine.apply_action(s, bot.act(obs_of(s), belief))
    return s, bot, belief


def test_a_reset_drops_the_move_in_progress():
    s, bot, belief = _started_whole_turn()
    bot.reset(1)
    # no move in progress: the bot plans again from here (confirm now or take then confirm), a
    # searched decision, which needs the belief
    with pytest.raises(ConfigError, match="belief"):
        bot.act(obs_of(s))
    assert bot.act(obs_of(s), belief) == TAKE + 1


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_whole_turn_must_be_a_bool(value):
    with pytest.raises(ConfigError, match="whole_turn=.*legal values are True and False"):
        RolloutBot(seed=0, whole_turn=value)


def test_the_same_position_asked_twice_gets_the_same_step():
    s, bot, _ = _started_whole_turn()
    assert bot.act(obs_of(s)) == TAKE + 1
    assert bot.act(obs_of(s)) == TAKE + 1   # not the plan's next step (confirm)
    engine.apply_action(s, TAKE + 1)
    assert bot.act(obs_of(s)) == CONFIRM


def test_a_move_that_no_longer_finishes_the_turn_is_dropped():
    s, bot, _ = _started_whole_turn()
    # pretend the rest of the move were "tap, confirm": no loose 6 to tap, so it is no way to
    # finish this turn; the bot plans again (a searched decision: it needs the belief)
    bot._committed = [TAP, CONFIRM]
    with pytest.raises(ConfigError, match="belief"):
        bot.act(obs_of(s))


def test_speed_benchmark_times_the_modes_it_names(capsys):
    from hod.benchmarks import robada_search_speed as bench
    bots = {name: make(seed=0) for name, make in bench.modes_table()}
    assert [type(b).__name__ for b in bots.values()] == ["RolloutBot", "SearchBot", "SearchBot"]
    assert [b.whole_turn for b in bots.values()] == [False, False, True]
    assert [b.determinizations for b in bots.values()] == [48, 32, 32]      # the registered budgets
    # one tiny run: both search modes are timed over a whole game
    assert bench.main(["--positions", "1", "--determinizations", "1", "--games", "1"]) == 0
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines() if line.startswith("| search, ")]
    per_game = {r[1].strip(): float(r[4]) for r in rows if len(r) == 6}
    assert set(per_game) == {"search, one action", "search, whole turn"}
    assert all(v > 0 for v in per_game.values())


# ---- the same decisions before and after the playouts moved onto the compiled planner --------------
DECISIONS_FILE = __import__("pathlib").Path(__file__).parents[1].joinpath("data") / "robada_search_decisions.json"
#: (players, game seed) of the recorded positions: 4 positions of each seeded expert game.
DECISION_GAMES = ((2, 21), (3, 22), (4, 23))
#: The bots recorded at each position: (registry name, options); the registered budgets.
DECISION_BOTS = (("rollout", {}), ("search", {}), ("search", {"whole_turn": True}))


def _decision_positions():
    """[(players, game seed, decision index, state)]: in each game of :data:`DECISION_GAMES`
    (experts in every seat, seeded), every 4th decision with more than one legal action, 4 of
    them; the seat to act decides."""
    out = []
    for n, seed in DECISION_GAMES:
        config = engine.Config(num_players=n)
        s = engine.new_game(config, seed=seed)
        experts = [ExpertBot(seed=seed + k, rules=config) for k in range(n)]
        i = found = 0
        while not s.terminal and found < 4:
            legal = legal_actions(s)
            if len(legal) > 1:
                if i % 4 == 0:
                    out.append((n, seed, i, s.clone()))
                    found += 1
                i += 1
            engine.apply_action(s, experts[s.current].act(obs_of(s)))
    return out


def _decide(name, options, state, bot_seed):
    """The registered bot's (its registered budget) action and values at ``state``, values as hex."""
    bot = agents.make("robada", name, seed=bot_seed, **options)
    seat = state.current
    action, values = bot.decide(obs_of(state), lambda rng: engine.sample_consistent_state(state, seat, rng))
    return int(action), {str(a): float(v).hex() for a, v in sorted(values.items())}


def record_decisions() -> None:
    """Write :data:`DECISIONS_FILE` from the current code (run once, before a change to the playouts:
    ``python -c "import sys; sys.path[:0] = ['tests', 'tests/agents']; import test_robada_search as t; t.record_decisions()"``)."""
    from hod.core.atomic import atomic_write_json

    rows = []
    for k, (n, seed, i, s) in enumerate(_decision_positions()):
        for name, options in DECISION_BOTS:
            action, values = _decide(name, options, s, 2000 + k)
            rows.append({"players": n, "game_seed": seed, "decision": i, "bot": name, "options": options,
                         "bot_seed": 2000 + k, "action": action, "values": values})
    atomic_write_json(DECISIONS_FILE, {"bots": "robada rollout and search (registered budgets)", "positions": rows})


def test_search_bots_make_the_recorded_decisions():
    """``rollout``, ``search`` and ``search`` with whole-turn moves make exactly the decisions (and
    values, bit for bit) that the code before the compiled playouts made on 12 fixed positions and
    seeds (tests/data, recorded by :func:`record_decisions` at commit 37aa7d5)."""
    import json

    want = json.loads(DECISIONS_FILE.read_text())["positions"]
    got = [(n, seed, i, s, name, options) for k, (n, seed, i, s) in enumerate(_decision_positions())
           for name, options in DECISION_BOTS]
    assert len(want) == len(got) == 36
    assert sum(len(w["values"]) > 1 for w in want) >= 20        # most of them searched several candidates
    for w, (n, seed, i, s, name, options) in zip(want, got):
        assert (w["players"], w["game_seed"], w["decision"], w["bot"], w["options"]) == (n, seed, i, name, options)
        assert _decide(name, options, s, w["bot_seed"]) == (w["action"], w["values"]), w
