"""Tapeo search bot ``search`` (hod.agents.tapeo_search): belief samples, the batched engine loaded
from single-engine states, exact values of hand-worked endings, options, determinism, and games
through the tournament."""
import numpy as np
import pytest

from hod import agents
from hod.agents.tapeo_search import PLAYOUT_POLICIES, SearchBot, playout_values
from hod.core.errors import ConfigError
from hod.evaluation.tournament import run_tournament
from tapeo_env.rules import engine
from tapeo_env.rules.batched import BatchedTapeo, state_record
from tapeo_env.rules.cards import CROQUETA, FREELOADER, NUM_KINDS, TORTILLA
from tapeo_env.rules.observation import encode


def obs_of(s, seat):
    return {"observation": encode(s, seat), "action_mask": engine.legal_mask(s, seat)}


def random_positions(n, seed, count=6):
    """States of a seeded random game of n players at ``count`` points spread over the game."""
    rng = np.random.default_rng(seed)
    s = engine.new_game(engine.Config(num_players=n), seed=seed)
    out = []
    while not s.terminal:
        if rng.random() < 0.3:
            out.append(s.clone())
        engine.apply_actions(s, [int(rng.choice(engine.legal_actions(s, i))) for i in range(n)])
    return out[:count]


@pytest.mark.parametrize("n", [2, 4, 6])
def test_belief_samples_keep_everything_the_seat_has_seen(n):
    rng = np.random.default_rng(1)
    for s in random_positions(n, seed=10 + n):
        for seat in range(n):
            known = engine.known_hands(s, seat)
            for _ in range(3):
                b = engine.sample_consistent_state(s, seat, rng)
                # the seat's own hand, every bar (= every tapa revealed this round), the kept churros
                # and the finished rounds' scores are the real ones
                assert np.array_equal(b.hand(seat), s.hand(seat))
                assert np.array_equal(b.bars, s.bars) and np.array_equal(b.churros_kept, s.churros_kept)
                assert np.array_equal(b.round_scores, s.round_scores) and (b.round, b.pick) == (s.round, s.pick)
                # the hands the seat held earlier this round are as it saw them (what left them since
                # was revealed face up)
                for j, h in enumerate(known):
                    if h is not None:
                        assert np.array_equal(b.hand((seat + 1 + j) % n), h)
                # the unseen tapas are only moved between the unseen hands and the undealt pile
                assert np.array_equal(b.hands.sum(axis=0) + b.undealt, s.hands.sum(axis=0) + s.undealt)
                assert (b.hands.sum(axis=1) == s.cards_in_hand).all()
                # so the seat's whole observation is the real one
                assert np.array_equal(encode(b, seat), encode(s, seat))


@pytest.mark.parametrize("n", [2, 3, 5])
def test_the_batched_engine_loaded_with_states_plays_as_the_single_engine(n):
    rng = np.random.default_rng(n)
    for s in random_positions(n, seed=n, count=3):
        eng = BatchedTapeo(engine.Config(num_players=n), 2, seed=0)
        eng.load_state(state_record([s, s]))
        ref = s.clone()
        while not ref.terminal:
            for i in range(n):
                assert np.array_equal(eng.observe()[1, i], encode(ref, i))
            picks = [int(rng.choice(engine.legal_actions(ref, i))) for i in range(n)]
            eng.step(np.array([picks, picks]))
            engine.apply_actions(ref, picks)
        assert eng.terminal.all()
        assert eng.scores().tolist() == [engine.scores(ref)] * 2
        assert eng.state.winners[0].tolist() == [i in ref.winners for i in range(n)]


def test_loaded_explicit_deals_deal_the_later_rounds_and_beliefs_drop_them():
    # a game replayed from explicit deals (as a record replay): the batched engine loaded mid-game
    # deals the later rounds from those deals, as the single engine does
    rng = np.random.default_rng(0)
    cfg = engine.Config(num_players=3)
    deals = engine.new_game(cfg, seed=4).dealt          # round 0's hands
    deals = deals + [deals[0][1:] + deals[0][:1], deals[0][2:] + deals[0][:2]]   # 3 rounds
    s = engine.new_game(cfg, deals=deals)
    engine.apply_actions(s, [engine.legal_actions(s, i)[-1] for i in range(3)])
    eng = BatchedTapeo(cfg, 1)
    eng.load_state(state_record([s]))
    while not s.terminal:
        assert np.array_equal(eng.observe()[0, 0], encode(s, 0))
        picks = [int(rng.choice(engine.legal_actions(s, i))) for i in range(3)]
        eng.step(np.array([picks]))
        engine.apply_actions(s, picks)
    assert eng.scores().tolist() == [engine.scores(s)]
    # the seat has not seen the later rounds' hands: a belief sample deals them afresh
    assert engine.sample_consistent_state(engine.new_game(cfg, deals=deals), 0, rng).preset_deals is None


def test_state_record_and_load_state_refuse_another_config_or_count():
    s = engine.new_game(engine.Config(num_players=3), seed=0)
    with pytest.raises(ConfigError, match="Config"):
        state_record([s], engine.Config(num_players=4))
    with pytest.raises(ConfigError, match="hands must be uint8"):
        BatchedTapeo(4, 1).load_state(state_record([s]))          # 3 seats' hands into 4 seats
    with pytest.raises(ConfigError, match="a record of 2 games for 1 games"):
        BatchedTapeo(3, 1).load_state(state_record([s, s]))


def test_playout_values_are_win_share_plus_weighted_margin():
    pts = np.array([[8, 4], [4, 8]])
    won = np.array([[True, False], [False, True]])
    # 8 v 4, seat 0 the only winner: 1 + (8 - 4) / 100 = 1.04; 4 v 8: 0 + (4 - 8) / 100 = -0.04
    assert playout_values(pts, won, 0, 1.0) == pytest.approx([1.04, -0.04])
    # 4 players, seats 0 and 1 share the win (same points and churros, T10): share 1/2, margin
    # 40 - (40 + 10 + 30) / 3 = 40 - 26.67 = 13.33 -> 0.5 + 0.5 * 13.33 / 100 = 0.5667
    v = playout_values(np.array([[40, 40, 10, 30]]), np.array([[True, True, False, False]]), 0, 0.5)
    assert v == pytest.approx([0.5 + 0.5 * (40 - 80 / 3) / 100])
    with pytest.raises(ConfigError):
        playout_values(pts, won, 2, 1.0)


def _ending(mine, theirs):
    """A one-round 2-player game of 2-tapa hands with a deck of exactly those 4 tapas: nothing is
    hidden (the unseen tapas are the other hand), and the first pick is the game's last decision."""
    deck = np.bincount(mine + theirs, minlength=NUM_KINDS)
    cfg = engine.Config(num_players=2, hand_size=2, num_rounds=1, deck=tuple(int(c) for c in deck))
    return engine.new_game(cfg, seed=0, deals=[[mine, theirs]])


@pytest.mark.parametrize("playout", ["ppo", "expert"])
def test_last_pick_values_are_the_hand_worked_endings(playout):
    # I hold tortilla + croqueta, the other seat two tortillas (its pick is forced).
    s = _ending([TORTILLA, CROQUETA], [TORTILLA, TORTILLA])
    bot = SearchBot(seed=0, determinizations=3, playout=playout)
    belief = lambda rng: engine.sample_consistent_state(s, 0, rng)  # noqa: E731
    values = bot.action_values(obs_of(s, 0), belief)
    # tapeo.txt 'Each pick', T7, 'How each tapa scores', T9 (2 players, 0 churros each: all tied
    # for most, +3 each):
    # pick tortilla: I pass the croqueta and get a tortilla, revealed at once: my bar T T = 5,
    # theirs T C = 0 + 1; finals 5 + 3 = 8 v 1 + 3 = 4: win 1 + (8 - 4) / 100 = 1.04.
    assert values[TORTILLA] == pytest.approx(1.04)
    # pick croqueta: I pass the tortilla; my bar C T = 1, theirs T T = 5: 4 v 8 -> 0 - 0.04.
    assert values[CROQUETA] == pytest.approx(-0.04)
    assert bot.act(obs_of(s, 0), belief) == TORTILLA


def test_the_freeloader_ending_is_worked_out_exactly():
    # I hold Freeloader + croqueta, the other seat two tortillas.
    s = _ending([FREELOADER, CROQUETA], [TORTILLA, TORTILLA])
    bot = SearchBot(seed=0, determinizations=2, playout="expert", margin_weight=0.5)
    belief = lambda rng: engine.sample_consistent_state(s, 0, rng)  # noqa: E731
    values = bot.action_values(obs_of(s, 0), belief)
    # Freeloader: it steals the tortilla they reveal (T6); I get their last tortilla (T7): my bar
    # F T T = 5, theirs C = 1; + 3 each (T9): 8 v 4 -> 1 + 0.5 * 4 / 100 = 1.02.
    assert values[FREELOADER] == pytest.approx(1.02)
    # croqueta: I pass the Freeloader; revealed last, it steals my last tortilla (with 2 players
    # left is the other seat both ways, T6): my bar C = 1, theirs T F T = 5: 4 v 8 -> -0.02.
    assert values[CROQUETA] == pytest.approx(-0.02)
    assert bot.act(obs_of(s, 0), belief) == FREELOADER


@pytest.mark.parametrize("options", [dict(determinizations=0), dict(playouts=1.5), dict(candidates=0),
                                     dict(margin_weight=-1.0), dict(playout="mcts")])
def test_bad_options_name_the_legal_values(options):
    with pytest.raises(ConfigError, match="legal values"):
        SearchBot(seed=0, **options)


def test_unknown_options_and_bad_beliefs_are_refused():
    with pytest.raises(ConfigError, match="legal options"):
        SearchBot(seed=0, rollouts=3)
    s = engine.new_game(engine.Config(num_players=4), seed=3)
    bot = SearchBot(seed=0, determinizations=2)
    with pytest.raises(ConfigError, match="belief"):
        bot.act(obs_of(s, 0))
    # a belief of seat 1 at the first pick redeals seat 0's hand: no seat's observation matches
    other = lambda rng: engine.sample_consistent_state(s, 1, rng)  # noqa: E731
    with pytest.raises(ConfigError, match="match no seat"):
        bot.action_values(obs_of(s, 0), other)
    # a belief that names its seat is checked against the observation
    def told(rng):
        return engine.sample_consistent_state(s, 0, rng)
    told.seat = 1
    with pytest.raises(ConfigError, match="match no seat"):
        bot.action_values(obs_of(s, 0), told)
    told.seat = 0
    assert set(bot.action_values(obs_of(s, 0), told)) == set(bot.candidate_actions(obs_of(s, 0)))
    assert set(PLAYOUT_POLICIES) <= set(agents.names("tapeo"))


def test_candidates_are_limited_and_a_single_candidate_needs_no_search():
    s = random_positions(4, seed=5)[0]
    obs = obs_of(s, 2)
    legal = np.flatnonzero(obs["action_mask"]).tolist()
    cands = SearchBot(seed=0).candidate_actions(obs)
    assert sorted(cands) == legal
    assert SearchBot(seed=0, candidates=2).candidate_actions(obs) == cands[:2]
    one = SearchBot(seed=0, candidates=1)
    assert one.act(obs) == cands[0]    # no belief needed


def test_same_seed_same_values_and_picks():
    s = random_positions(3, seed=8)[1]
    belief = lambda rng: engine.sample_consistent_state(s, 1, rng)  # noqa: E731
    a = SearchBot(seed=4, determinizations=4, playouts=2)
    b = SearchBot(seed=4, determinizations=4, playouts=2)
    assert a.action_values(obs_of(s, 1), belief) == b.action_values(obs_of(s, 1), belief)
    a.reset(9)
    b.reset(9)
    assert [a.act(obs_of(s, 1), belief) for _ in range(3)] == [b.act(obs_of(s, 1), belief) for _ in range(3)]


def test_a_seat_matching_one_sample_by_chance_is_not_searched_for():
    # Two seats, all bars empty, seat 1 holds the hand seat 0 is dealt in some samples: seat 1's
    # observation of such a sample is seat 0's real one, but not of every sample.
    s = _ending([TORTILLA, CROQUETA], [TORTILLA, TORTILLA])
    real = obs_of(s, 1)
    samples = [engine.sample_consistent_state(s, 1, np.random.default_rng(k)) for k in range(4)]
    assert all(np.array_equal(encode(b, 1), real["observation"]) for b in samples)
    fake = s.clone()
    fake.hands[0] = s.hands[1]       # seat 0 holds what seat 1 holds: seat 0 looks like seat 1
    assert np.array_equal(encode(fake, 0), real["observation"])
    bot = SearchBot(seed=0)
    assert bot._seat([fake] + samples, real, None) == 1
    assert bot._seat([fake], real, None) == 0      # one sample cannot tell them apart


def test_registered_and_played_in_the_tournament():
    assert isinstance(agents.make("tapeo", "search", seed=0), SearchBot)
    assert agents.needs_belief("tapeo", "search") and not agents.needs_belief("tapeo", "expert")
    res = run_tournament("tapeo", [("search", lambda: SearchBot(determinizations=2)), "expert", "greedy"],
                         num_games=3, seed=0)
    assert [b.games for b in res.bots] == [3, 3, 3]


def test_rows_to_ask_skip_forced_seats_and_ask_equal_rows_once():
    """_rows_to_ask on 5 rows: rows 0 and 3 have one legal kind (picks 1 and 2, not asked); rows 1
    and 4 are equal (asked once: row 4 repeats ask[0] = row 1); row 2 has row 1's mask but one
    observation entry differs by the smallest float32 step (asked: rows are compared bit for bit)."""
    from hod.agents.tapeo_search import _rows_to_ask

    mask = np.array([[0, 1, 0], [1, 0, 1], [1, 0, 1], [0, 0, 1], [1, 0, 1]], np.int8)
    obs = np.zeros((5, 4), np.float32)
    obs[:, 0] = 0.5
    obs[2, 3] = np.nextafter(np.float32(0), np.float32(1))
    out, ask, which = (np.full(5, -7, np.int64) for _ in range(3))
    u = _rows_to_ask(obs, mask, out, ask, which)
    assert u == 2 and ask[:u].tolist() == [1, 2] and which.tolist() == [-1, 0, 1, -1, 0]
    assert out[[0, 3]].tolist() == [1, 2]


def test_sampled_picks_invert_the_softmax_as_numpy_does():
    """_sampled_picks by hand: logits [-1e8, 0, 0] (kind 0 illegal) give cum [0, 1, 2]; the pick is
    the count of cum <= u * 2 * (1 - 1e-12): u = 0 -> 1 (the illegal kind never), u = 0.5 -> 1
    (x just under 1), u = 0.51 -> 2 (x = 1.02); and on 2,000 random masked rows it equals the
    numpy form it replaced (exp(z - max), cumsum, (cum <= x).sum()) row for row; a row with
    ``which`` -1 (a forced seat) is left as it was."""
    from hod.agents.tapeo_search import _sampled_picks

    logits = np.array([[-1e8, 0, 0]], np.float32)
    out = np.full(4, -7, np.int64)
    _sampled_picks(logits, np.array([0, 0, 0, -1]), np.array([0.0, 0.5, 0.51, 0.9]), out)
    assert out.tolist() == [1, 1, 2, -7]          # which = -1: row 3 left as it was
    rng = np.random.default_rng(5)
    mask = rng.random((2000, 10)) < 0.5
    mask[np.arange(2000), rng.integers(0, 10, 2000)] = True
    logits = np.where(mask, rng.normal(0, 3, (2000, 10)), -1e8).astype(np.float32)
    u = rng.random(2000)
    z = logits.astype(np.float64)
    cum = np.cumsum(np.exp(z - z.max(axis=1, keepdims=True)), axis=1)
    want = (cum <= u.reshape(-1, 1) * cum[:, -1:] * (1.0 - 1e-12)).sum(axis=1)
    out = np.full(2000, -7, np.int64)
    _sampled_picks(logits, np.arange(2000, dtype=np.int64), u, out)
    assert np.array_equal(out, want) and mask[np.arange(2000), out].all()


# ---- the same decisions before and after the playouts' speed-ups -------------------------------------
#: The bot with the shipped ``ppo`` in its playouts (``distilled=False``; recorded at 37aa7d5's code).
DECISIONS_FILE = __import__("pathlib").Path(__file__).parents[1].joinpath("data") / "tapeo_search_decisions.json"
#: The registered bot, its playouts on the distilled network (recorded when it became the default).
DISTILLED_DECISIONS_FILE = DECISIONS_FILE.with_name("tapeo_search_decisions_distilled.json")
#: (players, game seed) of the recorded positions: up to 5 positions of each seeded random game.
DECISION_GAMES = ((2, 11), (4, 12), (4, 13), (6, 14))


def _decision_positions():
    """[(players, game seed, index, seat, state)]: the positions of :data:`DECISION_GAMES`, the seat
    deciding cycling over the table, only positions where that seat has more than one legal kind."""
    out = []
    for n, seed in DECISION_GAMES:
        for i, s in enumerate(random_positions(n, seed, count=12)):
            seat = (seed + i) % n
            if len(engine.legal_actions(s, seat)) > 1 and sum(o[0] == n and o[1] == seed for o in out) < 5:
                out.append((n, seed, i, seat, s))
    return out


def _decide(state, seat, bot_seed, **options):
    """The registered ``search`` bot's (its registered budget, ``options`` added) action and values
    at ``state``."""
    bot = agents.make("tapeo", "search", seed=bot_seed, **options)
    belief = lambda rng: engine.sample_consistent_state(state, seat, rng)  # noqa: E731
    belief.seat = seat
    obs = obs_of(state, seat)
    values = bot.action_values(obs, belief)
    bot.reset(bot_seed)
    return int(bot.act(obs, belief)), {str(a): float(v).hex() for a, v in values.items()}


def record_decisions(distilled: bool = True) -> None:
    """Write :data:`DISTILLED_DECISIONS_FILE` (``distilled=False``: :data:`DECISIONS_FILE`) from the
    current code (run once, before a change to the playouts that must keep the decisions, and again
    when a change of the playout policy changes them on purpose: ``python -c "import sys;
    sys.path[:0] = ['tests', 'tests/agents']; import test_tapeo_search as t; t.record_decisions()"``)."""
    from hod.core.atomic import atomic_write_json

    options = {} if distilled else {"distilled": False}
    rows = []
    for k, (n, seed, i, seat, s) in enumerate(_decision_positions()):
        action, values = _decide(s, seat, 1000 + k, **options)
        rows.append({"players": n, "game_seed": seed, "position": i, "seat": seat, "bot_seed": 1000 + k,
                     "action": action, "values": values})
    bot = "tapeo search (registered budget)" + ("" if distilled else ", distilled=False")
    atomic_write_json(DISTILLED_DECISIONS_FILE if distilled else DECISIONS_FILE, {"bot": bot, "positions": rows})


@pytest.mark.parametrize("distilled", [False, True], ids=["ppo_playouts", "distilled_playouts"])
def test_search_makes_the_recorded_decisions(distilled):
    """The ``search`` bot makes exactly the decisions (and values, bit for bit) recorded on 20 fixed
    positions and seeds (tests/data, :func:`record_decisions`): with the shipped ``ppo`` in its
    playouts (``distilled=False``) those of 37aa7d5's code, before the playouts' speed-ups; the
    registered bot (the distilled playout network) those recorded when it became the default."""
    pytest.importorskip("onnxruntime")
    import json

    want = json.loads((DISTILLED_DECISIONS_FILE if distilled else DECISIONS_FILE).read_text())["positions"]
    got = _decision_positions()
    assert len(want) == len(got) == 20
    for w, (n, seed, i, seat, s) in zip(want, got):
        assert (w["players"], w["game_seed"], w["position"], w["seat"]) == (n, seed, i, seat)
        action, values = _decide(s, seat, w["bot_seed"], **({} if distilled else {"distilled": False}))
        assert (action, values) == (w["action"], w["values"]), w


def test_the_distilled_and_the_ppo_playouts_decide_alike_on_the_recorded_positions():
    """The two recorded files are of the same positions, seeds and candidates. The distilled
    network samples a different pick now and then (its softmax is not the teacher's to the bit), so
    a playout may go another way and the values move by Monte Carlo noise: with the round-13
    ``ppo`` and the playout network distilled from it, 12 of the 20 decisions are the same, and
    where they differ the distilled bot's kind was within 0.053 of the ppo bot's best value
    (0.0036 to 0.0528, where the values of one position spread 0.127 on average). The flatter the
    network's softmax, the more a small change of its probabilities changes the sampled playouts:
    with round 11's ``ppo``: 9 of 20, within 0.093; round 9's: 14 of 20, within 0.128; round 5's: 19 of 20, within 0.0084; round 4's:
    18 of 20, within 0.035 and 0.131; the one before it: 13 of 20, all within 0.05."""
    import json

    old = json.loads(DECISIONS_FILE.read_text())["positions"]
    new = json.loads(DISTILLED_DECISIONS_FILE.read_text())["positions"]
    assert [(o["players"], o["game_seed"], o["position"], o["bot_seed"]) for o in old] == \
        [(w["players"], w["game_seed"], w["position"], w["bot_seed"]) for w in new]
    assert all(o["values"].keys() == w["values"].keys() for o, w in zip(old, new))   # same candidates
    assert sum(o["action"] == w["action"] for o, w in zip(old, new)) == 12
    for o, w in zip(old, new):
        v = {k: float.fromhex(x) for k, x in o["values"].items()}
        assert v[str(w["action"])] >= max(v.values()) - 0.053


def test_the_playouts_run_the_distilled_network_unless_told_otherwise():
    """``distilled`` (default True): the playouts of ``playout="ppo"`` run PLAYOUT_NETWORK and the
    candidates are still ranked by the shipped ``ppo``; False plays them with ``ppo``; a
    ``playout_model`` or a per-row playout bot ignores it; a value that is not a bool is refused."""
    pytest.importorskip("onnxruntime")
    from hod.agents.onnx_policy import OnnxPolicy
    from hod.agents.tapeo_search import PLAYOUT_NETWORK

    bot = agents.make("tapeo", "search", seed=0)
    assert bot._playout_net.path == PLAYOUT_NETWORK and bot._policy.path.name == "tapeo_ppo.onnx"
    old = SearchBot(seed=0, distilled=False)
    assert old._playout_net is old._policy and isinstance(old._policy, OnnxPolicy)
    ppo = old._policy.path
    assert SearchBot(seed=0, playout_model=str(ppo))._playout_net.path == ppo
    assert SearchBot(seed=0, playout="expert")._playout_net is not None
    for bad in ("yes", 1):
        with pytest.raises(ConfigError, match=f"distilled={bad!r}: legal values are True and False"):
            SearchBot(seed=0, distilled=bad)


def test_the_playout_network_is_a_checked_export_with_its_card_and_golden_vectors():
    """agents/tapeo_playout.onnx: loaded as every export (sha256 against its card, operators,
    shapes: no pickle), its card names the teacher and the distillation, and onnxruntime gives its
    golden vectors (0 action mismatches, logits within 1e-5). Its size: 157*32 + 32 + 32*32 + 32
    + 32*10 + 10 = 6,442 weights, + 2 numbers of the mask's constants (the 0 it compares with
    and the -1e8 of an illegal kind) = 6,444 stored numbers."""
    pytest.importorskip("onnxruntime")
    import json

    from hod.agents.onnx_policy import OnnxPolicy, check_graph_tensors
    from hod.agents.tapeo_search import PLAYOUT_NETWORK
    from hod.training.export import golden_path, load_golden

    card = json.loads(PLAYOUT_NETWORK.with_suffix(".json").read_text())
    assert card["algorithm"] == "distillation" and card["policy"] == {"net_arch": [32, 32], "activation": "tanh"}
    assert card["training"]["teacher"]["file"] == "tapeo_ppo.onnx" and card["game"] == "tapeo"
    assert card["onnx"]["file"] == PLAYOUT_NETWORK.name and card["onnx"]["interface"]["self_contained"]
    assert check_graph_tensors(PLAYOUT_NETWORK.read_bytes(), "playout") == 6444
    golden = load_golden(golden_path(PLAYOUT_NETWORK))
    assert golden["model"] == PLAYOUT_NETWORK.name and golden["count"] == 32
    net = OnnxPolicy(PLAYOUT_NETWORK, game="tapeo")
    action, logits = net.run(golden["observation"], golden["action_mask"])
    assert np.array_equal(action, golden["action"]) and np.abs(logits - golden["logits"]).max() <= 1e-5
    # the playouts' fast path (no conversions, logits only) gives run's logits bit for bit
    assert np.array_equal(net.logits(golden["observation"], golden["action_mask"]), logits)
    assert all(golden["action_mask"][i, a] == 1 for i, a in enumerate(golden["action"]))


def test_rows_with_choice_skip_forced_seats_only():
    """_rows_with_choice on 4 rows: rows 0 and 2 have one legal kind (picks 1 and 2, not asked),
    rows 1 and 3 two each (asked, even though they are equal: ask = [1, 3])."""
    from hod.agents.tapeo_search import _rows_with_choice

    mask = np.array([[0, 1, 0], [1, 0, 1], [0, 0, 1], [1, 0, 1]], np.int8)
    out, ask, which = (np.full(4, -7, np.int64) for _ in range(3))
    u = _rows_with_choice(mask, out, ask, which)
    assert u == 2 and ask[:u].tolist() == [1, 3] and which.tolist() == [-1, 0, -1, 1]
    assert out[[0, 2]].tolist() == [1, 2]


def test_the_distillation_graph_is_the_export_s_masked_mlp_worked_by_hand():
    """hod.benchmarks.tapeo_playout_distill.graph_bytes on a 3 -> 2 -> 2 tanh MLP: x = [1, 0, 0],
    W1 = [[1, 0, 0], [0, 0, 0]], b1 = 0: h = tanh([1, 0]) = [0.761594, 0]; W2 = I, b2 = [0, 1]:
    logits [0.761594, 1]; the mask [1, 0] sets kind 1 to -1e8 (action 0), [1, 1] keeps both
    (action 1). The graph uses only the export's operators (the loader's check)."""
    pytest.importorskip("onnxruntime")
    import onnx
    import onnxruntime as ort

    from hod.agents.onnx_policy import check_graph_operators
    from hod.benchmarks.tapeo_playout_distill import graph_bytes

    w = [(np.array([[1, 0, 0], [0, 0, 0]], np.float32), np.zeros(2, np.float32)),
         (np.eye(2, dtype=np.float32), np.array([0, 1], np.float32))]
    data = graph_bytes(w, {"game": "test"})
    check_graph_operators(onnx.load_from_string(data), "hand")
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    action, logits = sess.run(["action", "logits"], {"observation": np.array([[1, 0, 0]] * 2, np.float32),
                                                     "action_mask": np.array([[1, 0], [1, 1]], np.int8)})
    assert action.tolist() == [0, 1]
    assert logits[0, 0] == pytest.approx(0.761594, abs=1e-6) and logits[0, 1] == np.float32(-1e8)
    assert logits[1].tolist() == pytest.approx([0.761594, 1.0], abs=1e-6)


def test_distillation_rows_are_the_teacher_s_choices_in_its_own_games():
    """playout_rows on 3 games of 2 players: every row has more than one legal kind, carries the
    teacher's logits of that row, and the rows cover whole games: 3 rounds x (10 - 1) picks with a
    choice at most per seat, so at most 3 x 9 x 2 = 54 rows a game, and game 0's first pick (10
    tapas in hand: more than one kind) is there for both seats."""
    pytest.importorskip("onnxruntime")
    from hod.benchmarks.tapeo_playout_distill import playout_rows

    teacher = agents.make("tapeo", "ppo", seed=0)
    obs, mask, logits, game = playout_rows(teacher, 2, 3, seed=0)
    assert obs.dtype == np.float32 and obs.shape[1] == 157 and mask.shape == logits.shape == (obs.shape[0], 10)
    assert (mask.sum(axis=1) > 1).all()
    assert np.array_equal(teacher.run(obs, mask)[1], logits)
    assert sorted(set(game.tolist())) == [0, 1, 2] and all((game == g).sum() <= 54 for g in range(3))
    first = engine.new_game(engine.Config(num_players=2), seed=1000 * 2)
    assert all(np.array_equal(obs[i], encode(first, i)) for i in range(2))


def test_search_speed_benchmark_smoke_and_refusals(capsys):
    """hod.benchmarks.tapeo_search_speed: 2 positions of a 2-player game, one timed pass (its
    positions are seeded: the same 2 states each run; speed is not asserted), and a usage error."""
    pytest.importorskip("onnxruntime")
    from hod.benchmarks import tapeo_search_speed as bench

    pos = bench.positions(2, 2, seed=3)
    assert len(pos) == 2 and all(len(engine.legal_actions(s, seat)) > 1 for s, seat in pos)
    assert [(s.round, s.pick, seat) for s, seat in pos] == [(s.round, s.pick, seat) for s, seat in bench.positions(2, 2, 3)]
    r = bench.main(["--players", "2", "--positions", "2", "--repeats", "1", "--seed", "3"])
    assert r["decisions"] == 2 and r["decisions_per_s"] > 0 and 0 < r["network_share"] < 1
    assert all(a in engine.legal_actions(s, seat) for a, (s, seat) in zip(r["actions"], pos))
    assert "decisions/s" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        bench.main(["--players", "7"])
    assert e.value.code == 2


def test_the_distillation_command_writes_the_shipped_playout_network_only_when_told(monkeypatch, capsys):
    # Its default --out was the shipped agents/tapeo_playout.onnx: a plain run replaced what the
    # search loads. Now the default is a run folder, and the shipped file needs --overwrite-shipped.
    from hod.benchmarks import tapeo_playout_distill as D

    calls = []
    monkeypatch.setattr(D, "distill", lambda out, *a: calls.append(out))
    with pytest.raises(SystemExit) as e:
        D.main(["--out", str(D.SHIPPED_OUT)])
    assert e.value.code == 2 and calls == []
    assert "is the shipped playout network the search loads; legal: another --out (default " \
           "runs/tapeo_playout.onnx), or --overwrite-shipped to replace it" in capsys.readouterr().err
    D.main([])
    D.main(["--out", str(D.SHIPPED_OUT), "--overwrite-shipped"])
    assert calls == [D.DEFAULT_OUT, D.SHIPPED_OUT] and D.DEFAULT_OUT == D.Path("runs") / "tapeo_playout.onnx"
