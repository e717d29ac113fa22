"""Ronda Robada observation layout version 2: version 1's 192 values, then the per-action
summaries of robada_env.rules.action_features (hand-worked values from the rules, invariance to
hidden cards, v1 unchanged, batch == single, env == batched engine == policy encoder)."""
import numpy as np
import pytest

from _robada_helpers import position
from robada_env.rules import action_features as af
from robada_env.rules.actions import CONFIRM, DROP, NOOP, START, TAKE, TAP
from robada_env.rules.engine import Config, apply_action, legal_actions, legal_mask, new_game
from robada_env.rules.kernels import rules_array, walk_gain
from robada_env.rules.observation import (ACTION_SUMMARIES, LAYOUT, LAYOUT_V2, LAYOUTS, OBS_SIZE_V2, encode)
from robada_env.rules.runs import walk_run

Q = 1 / 244          # points are / 244 (TOTAL_POINTS)


def summaries(s, seat=None):
    """{summary name: float32 (27,)} of the seat to act (or ``seat``) in state ``s``."""
    seat = s.current if seat is None else seat
    f = af.action_features(encode(s, seat)[None], legal_mask(s, seat)[None], s.config)[0]
    return {name: f[27 * k:27 * (k + 1)] for k, (name, _, _) in enumerate(ACTION_SUMMARIES)}


def test_layout_v2_is_v1_then_27_per_summary():
    assert LAYOUTS == {1: LAYOUT, 2: LAYOUT_V2}
    assert LAYOUT_V2.version == 2 and LAYOUT_V2.game == "robada"
    assert LAYOUT_V2.size == OBS_SIZE_V2 == 192 + 10 * 27 == 462
    assert LAYOUT_V2.pieces[:len(LAYOUT.pieces)] == LAYOUT.pieces          # v1 is a prefix
    assert LAYOUT_V2.offsets["act_legal"] == slice(192, 219)


def test_start_drop_and_replies_hand_worked():
    # 3 players, seat 0 to act, no run. Loose 5 c, 6 o, A b; seat 1's pile Sota c + 7 e (7 on top,
    # 10 + 7 = 17 points), seat 2's Caballo o (11); my pile empty. My hand 5 o, 2 c, Rey b.
    s = position(["5o 2c Rb", "3b", "4b"], loose="5c 6o Ab", piles=[[], ["Sc", "7e"], ["Co"]], n=3)
    f = summaries(s)
    legal = [START + 4, DROP + 1, DROP + 4, DROP + 9]             # start 5; drop 2, 5, Rey (R4)
    assert np.flatnonzero(f["act_legal"]).tolist() == legal
    a = START + 4
    assert f["act_gain"][a] == np.float32(10 * Q)                 # 5 o + 5 c = 2 x 5 points
    assert f["act_steal"][a] == 0
    # the greedy walk after it: tap 6 o (6), no loose 7 -> take seat 1's pile (17), no Sota: 23
    assert f["act_reach"][a] == np.float32(23 * Q)
    assert f["act_continues"][a] == 1                             # a loose 6 is on the table
    assert f["act_score"][a] == np.float32(10 * Q)                # empty pile + the run's 10
    assert f["act_top"][a] == np.float32(0.5)                     # the 5 on top (R5): rank 4 + 1
    # the table left: loose 6, A. Seat 1 starts 6 (12), takes its own 7 (worth 0 to it), needs a
    # Sota: 12; starts A (2), no 2 anywhere: 2. Best 12; my pile (top 5) is not reached.
    assert f["act_reply"][a] == np.float32(12 * Q)
    assert f["act_exposed"][a] == 0
    assert f["act_loose_ranks"][a] == np.float32(0.2)             # 6 and A
    d = DROP + 9                                                  # drop the Rey: loose 5, 6, A, Rey
    assert f["act_gain"][d] == f["act_reach"][d] == f["act_continues"][d] == f["act_score"][d] == 0
    assert f["act_top"][d] == 0                                   # my pile stays empty
    # replies: Rey 24 + tap the closing Ace 1 = 25 (R2); 5: 10 + 6 + own 7 = 16; 6: 12; A: 2
    assert f["act_reply"][d] == np.float32(25 * Q)
    assert f["act_loose_ranks"][d] == np.float32(0.4)
    assert f["act_reply"][DROP + 4] == np.float32(16 * Q)         # loose 5, 5, 6, A: best is 5
    assert f["act_reply"][DROP + 1] == np.float32(16 * Q)         # loose 2 adds A-2 (4), 2 (4)
    for name, v in f.items():                                     # illegal actions: all 0
        assert not np.delete(v, legal).any(), name


def test_mid_run_tap_confirm_and_exposed_pile_hand_worked():
    # 2 players. My pile 2 e + A e (A on top, 3 points), seat 1's Caballo e + 7 b (7 on top, 18).
    # I start 4 o + 4 c (8 points); the run needs a 5 and a loose 5 b is there: tap or confirm.
    s = position(["4o Ro", "Rc"], loose="4c 5b 6e 3b", piles=[["2e", "Ae"], ["Ce", "7b"]])
    apply_action(s, START + 3)
    f = summaries(s)
    assert np.flatnonzero(f["act_legal"]).tolist() == [TAP, CONFIRM]      # R3: a loose 5 is tapped
    assert f["act_gain"][TAP] == np.float32(5 * Q)
    # after the tap: tap 6 e (6), no loose 7 -> seat 1's pile (18), no Sota: 24
    assert f["act_reach"][TAP] == np.float32(24 * Q)
    assert f["act_continues"][TAP] == 1
    assert f["act_score"][TAP] == np.float32((3 + 13) * Q)       # 3 in my pile + 8 + 5
    assert f["act_top"][TAP] == np.float32(0.4)                  # the starting 4 on top
    # table left after tap + confirm: loose 6, 3; my pile shows 4 (16 points). Seat 1: 3 (6),
    # no loose 4 -> my pile (16), no 5: 22, taking my pile; 6 (12) + its own 7 (0): 12.
    assert f["act_reply"][TAP] == np.float32(22 * Q)
    assert f["act_exposed"][TAP] == np.float32(16 * Q)
    assert f["act_loose_ranks"][TAP] == np.float32(0.2)
    # confirm now: my pile 3 + 8 = 11, the 4 on top; loose 5, 6, 3. Seat 1: 3 (6) + my pile (11)
    # + tap 5 (5) + tap 6 (6) + its own 7 (0) = 28, taking my pile; 5: 10 + 6 = 16; 6: 12.
    assert f["act_gain"][CONFIRM] == f["act_reach"][CONFIRM] == f["act_continues"][CONFIRM] == 0
    assert f["act_score"][CONFIRM] == np.float32(11 * Q)
    assert f["act_reply"][CONFIRM] == np.float32(28 * Q)
    assert f["act_exposed"][CONFIRM] == np.float32(11 * Q)
    assert f["act_loose_ranks"][CONFIRM] == np.float32(0.3)


def test_take_and_the_rule_options_hand_worked():
    # 3 players. My pile 3 o + Rey b (Rey on top, 15), seat 1's 5 e + Rey e (Rey, 17), seat 2's A b
    # (1). I start Caballo o + Caballo c (22); the run needs a Rey, none loose: take seat 1's.
    piles = [["3o", "Rb"], ["5e", "Re"], ["Ab"]]
    s = position(["Co 2b", "4e", "4c"], loose="Cc", piles=piles, n=3)
    f = summaries(s)
    a = START + 8
    assert f["act_gain"][a] == np.float32(22 * Q)
    # greedy walk: Rey on my pile (worth 0 to me) and on seat 1's (17): seat 1's; then the closing
    # Ace (R2) on seat 2's pile (1); closed: 18
    assert f["act_reach"][a] == np.float32(18 * Q)
    assert f["act_score"][a] == np.float32((15 + 22) * Q) and f["act_top"][a] == np.float32(0.9)
    assert f["act_reply"][a] == 0 and f["act_loose_ranks"][a] == 0        # nothing loose is left
    # without the closing Ace the run ends at the Rey: 17
    assert summaries(position(["Co 2b", "4e", "4c"], loose="Cc", piles=piles, n=3, closing_ace=False))[
        "act_reach"][a] == np.float32(17 * Q)
    apply_action(s, a)
    f = summaries(s)
    assert np.flatnonzero(f["act_legal"]).tolist() == [TAKE + 0, TAKE + 1, CONFIRM]
    t = TAKE + 1
    assert f["act_gain"][t] == f["act_steal"][t] == np.float32(17 * Q)
    assert f["act_reach"][t] == np.float32(1 * Q)                # then seat 2's closing Ace
    assert f["act_score"][t] == np.float32((15 + 22 + 17) * Q)
    own = TAKE + 0                                               # my own pile: no gain, no steal
    assert f["act_gain"][own] == f["act_steal"][own] == 0
    assert f["act_score"][own] == np.float32((15 + 22) * Q)      # it goes back into my pile (R5)
    assert f["act_reach"][own] == np.float32(1 * Q)
    # only my own pile shows the Rey: it continues the run only with may_take_own_pile (R3)
    piles2 = [["3o", "Rb"], ["5e", "Se"], ["Ab"]]
    for own_ok, cont in ((True, 1), (False, 0)):
        s2 = position(["Co 2b", "4e", "4c"], loose="Cc", piles=piles2, n=3, may_take_own_pile=own_ok)
        f2 = summaries(s2)
        assert f2["act_continues"][a] == cont
        assert f2["act_reach"][a] == np.float32(cont * 1 * Q)    # own Rey (0), then the Ace (1)


def test_seat_not_to_act_has_only_the_noop():
    s = position(["5o 2c Rb", "3b", "4b"], loose="5c 6o Ab", piles=[[], ["Sc", "7e"], ["Co"]], n=3)
    f = summaries(s, seat=1)
    assert np.flatnonzero(f["act_legal"]).tolist() == [NOOP]
    assert sum(v.sum() for k, v in f.items() if k != "act_legal") == 0


def test_walk_gain_is_walk_run():
    """The kernels' walk (numba) and runs.walk_run (Python) take the same steps, random tables."""
    rng = np.random.default_rng(0)
    for trial in range(400):
        n = int(rng.integers(2, 5))
        loose = rng.integers(0, 3, 10) * (rng.random(10) < 0.5)
        tops = np.where(rng.random(n) < 0.7, rng.integers(0, 10, n), -1)
        pts = np.where(tops >= 0, rng.integers(1, 60, n), 0)
        runner = int(rng.integers(n))
        options = {"closing_ace": bool(rng.random() < 0.7), "may_take_own_pile": bool(rng.random() < 0.7)}
        start = int(rng.integers(10))
        loose[start] = max(loose[start], 1)
        values = [0 if k == runner else int(pts[k]) for k in range(n)]
        w = walk_run(start, loose.tolist(), tops.tolist(), runner, values, **options)
        rules = rules_array(Config(**options))
        lo, tp = loose.astype(np.int64), tops.astype(np.int64)
        lo[start] -= 1
        gain, steps, taken, need = walk_gain(int(rules[start]), lo, tp, pts.astype(np.int64), runner, rules)
        want = sum(r_points(r) if k < 0 else values[k] for r, k in w.steps)
        assert (gain, steps, need) == (want, len(w.steps), w.need)
        assert taken == sum(1 << k for _, k in w.steps if k >= 0)
        assert lo.tolist() == w.loose and tp.tolist() == w.tops


def r_points(rank):
    return (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)[rank]


def _random_positions(count, seed, **rules):
    """(state, seat to act) pairs from seeded random play at 2-4 players."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(count):
        s = new_game(Config(num_players=2 + g % 3, **rules), seed=seed * 1000 + g)
        for _ in range(int(rng.integers(0, 60))):
            if s.terminal:
                break
            la = legal_actions(s)
            apply_action(s, la[int(rng.integers(len(la)))])
        out.append(s)
    return out


def test_hidden_cards_do_not_change_the_v2_row():
    from robada_env.env import observation_of
    rng = np.random.default_rng(5)
    changed = 0
    for s in _random_positions(30, 1):
        if s.terminal:
            continue
        me = s.current
        t = s.clone()
        pool = t.deck + [x for i, h in enumerate(t.hands) if i != me for x in h]
        rng.shuffle(pool)
        for i in range(t.n):
            if i != me:
                k = len(t.hands[i])
                t.hands[i], pool = pool[:k], pool[k:]
        t.deck = pool
        a, b = observation_of(s, me, 2)["observation"], observation_of(t, me, 2)["observation"]
        assert a.shape == (462,) and np.array_equal(a, b)
        nxt = (me + 1) % s.n                                # the test can fail: another seat sees it
        changed += not np.array_equal(observation_of(s, nxt, 2)["observation"],
                                      observation_of(t, nxt, 2)["observation"])
    assert changed > 0


def test_batch_equals_single_rows_and_values_in_unit_range():
    states = _random_positions(40, 2)
    obs = np.stack([encode(s, s.current) for s in states])
    masks = np.stack([legal_mask(s, s.current) for s in states])
    batch = af.action_features(obs, masks)
    assert batch.dtype == np.float32 and batch.shape == (40, 270)
    assert 0 <= batch.min() and batch.max() <= 1
    for i in range(40):
        assert np.array_equal(batch[i], af.action_features(obs[i:i + 1], masks[i:i + 1])[0])
        assert np.array_equal(af.encode_v2(obs[i], masks[i])[192:], batch[i])


@pytest.mark.parametrize("form", ["aec", "parallel"])
def test_env_v2_is_v1_plus_the_summaries_and_v1_is_unchanged(form):
    import robada_env
    from robada_env.env import observation_of
    rules = {"closing_ace": False}
    make = robada_env.raw_env if form == "aec" else robada_env.RobadaParallelEnv
    e1, e2 = make(num_players=3, **rules), make(num_players=3, observation_version=2, **rules)
    assert e1.observation_version == 1 and e2.observation_version == 2
    assert e2.observation_space("player_0")["observation"].shape == (462,)
    assert e1.observation_space("player_0")["observation"].shape == (192,)
    rng = np.random.default_rng(0)
    if form == "aec":
        e1.reset(seed=3), e2.reset(seed=3)
        for agent in e2.agent_iter():
            if e2.terminations[agent]:
                e1.step(None), e2.step(None)
                continue
            o1, o2 = e1.observe(agent), e2.observe(agent)
            s = e1.unwrapped.game_state
            assert np.array_equal(o1["observation"], encode(s, e1._seat[agent]))     # v1 as before
            assert np.array_equal(o2["observation"][:192], o1["observation"])
            want = af.action_features(o1["observation"][None], o1["action_mask"][None], Config(3, **rules))[0]
            assert np.array_equal(o2["observation"][192:], want)
            assert np.array_equal(o2["observation"], observation_of(s, e1._seat[agent], 2)["observation"])
            a = int(rng.choice(np.flatnonzero(o1["action_mask"])))
            e1.step(a), e2.step(a)
    else:
        o1, _ = e1.reset(seed=3)
        o2, _ = e2.reset(seed=3)
        while e1.agents:
            for ag in o1:
                assert np.array_equal(o2[ag]["observation"][:192], o1[ag]["observation"])
                want = af.action_features(o1[ag]["observation"][None], o1[ag]["action_mask"][None],
                                          Config(3, **rules))[0]
                assert np.array_equal(o2[ag]["observation"][192:], want)
            acts = {ag: int(rng.choice(np.flatnonzero(o1[ag]["action_mask"]))) for ag in o1}
            o1 = e1.step(acts)[0]
            o2 = e2.step(acts)[0]


@pytest.mark.parametrize("bad", [0, 3, True, "2", 2.0, None])
def test_observation_version_refuses_other_values_naming_1_and_2(bad):
    import robada_env
    from hod.core.errors import ConfigError
    for make in (robada_env.env, robada_env.raw_env, robada_env.parallel_env):
        with pytest.raises(ConfigError, match=r"observation_version.*\[1, 2\]"):
            make(observation_version=bad)


def test_batched_engine_and_the_policy_encoder_give_the_env_v2_rows():
    from hod.agents.encoders import get_encoder
    from robada_env.env import observation_of
    from robada_env.rules.batched import BatchedRobada
    cfg = Config(num_players=4, may_take_own_pile=False)
    seeds = np.arange(6, dtype=np.uint64) + 11
    eng = BatchedRobada(cfg, 6)
    eng.reset(seeds=seeds)
    singles = [new_game(cfg, seed=int(x)) for x in seeds]
    enc = get_encoder("robada_v2", "robada").with_rules(may_take_own_pile=False)
    rng = np.random.default_rng(1)
    for _ in range(40):
        v2 = af.observe_batched(eng)
        assert v2.shape == (6, 1, 462)
        for b, s in enumerate(singles):
            want = observation_of(s, s.current, 2)
            assert np.array_equal(v2[b, 0], want["observation"])
            assert np.array_equal(enc.encode(want["observation"][:192], want["action_mask"]), want["observation"])
        if eng.terminal.any():
            break
        masks = eng.legal_mask()[:, 0]
        acts = np.array([int(rng.choice(np.flatnonzero(m))) for m in masks], np.int64)
        eng.step(acts[:, None])
        for s, a in zip(singles, acts):
            apply_action(s, int(a))


def test_env_page_shows_the_v2_layout_table():
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "robada_env.md").read_text(encoding="utf-8")
    assert LAYOUT_V2.markdown_table() in page


def test_pettingzoo_api_tests_on_the_v2_env():
    import robada_env
    from pettingzoo.test import api_test, parallel_api_test
    api_test(robada_env.env(num_players=3, observation_version=2), num_cycles=30)
    parallel_api_test(robada_env.parallel_env(num_players=2, observation_version=2), num_cycles=30)


def test_the_v2_encoder_names_its_layout():
    from hod.agents.encoders import get_encoder
    enc = get_encoder("robada_v2", "robada")
    assert enc.layout_version == 2 and enc.size(192) == LAYOUT_V2.size == 462
    assert get_encoder("robada_plans").layout_version is None and get_encoder("none").layout_version is None


@pytest.mark.parametrize("name, layout", [("robada_v2_distilled", 1), ("robada_v3_search", 2), ("robada_v4_s32", 2),
                                          ("robada_v5_s32", 2), ("robada_v5_s32_70k", 2)])
def test_the_v2_candidate_network_reads_the_env_v2_observation_and_the_mask_only(name, layout):
    """agents/candidates/robada_v2_distilled.onnx, robada_v3_search.onnx, robada_v4_s32.onnx,
    robada_v5_s32.onnx and robada_v5_s32_70k.onnx (docs/results.md, not registered): onnxruntime
    alone on the env's observation_version=2 vector and mask plays what the project's player of
    the export (OnnxPolicy, encoder robada_v2 on the v1 observation) plays. The v3 export's card
    names layout 2 (the v2 one was exported before exports did)."""
    import json
    from pathlib import Path
    import onnxruntime as ort
    import robada_env
    from hod.agents.onnx_policy import OnnxPolicy
    path = Path(__file__).resolve().parents[2] / "agents" / "candidates" / f"{name}.onnx"
    card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert card["obs_encoder"] == "robada_v2" and card["obs_size"] == 462 and card["obs_layout_version"] == layout
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    bot = OnnxPolicy(path)
    e1, e2 = robada_env.raw_env(num_players=2), robada_env.raw_env(num_players=2, observation_version=2)
    e1.reset(seed=7), e2.reset(seed=7)
    moves = 0
    for agent in e2.agent_iter():
        if e2.terminations[agent]:
            e1.step(None), e2.step(None)
            continue
        o1, o2 = e1.observe(agent), e2.observe(agent)
        action = sess.run(["action"], {"observation": o2["observation"][None],
                                       "action_mask": o2["action_mask"][None].astype(np.int8)})[0][0]
        assert int(action) == bot.act(o1)
        e1.step(int(action)), e2.step(int(action))
        moves += 1
    assert moves > 40


@pytest.mark.parametrize("name", ["robada_v2_distilled", "robada_v3_search", "robada_v4_s32", "robada_v5_s32",
                                  "robada_v5_s32_70k"])
def test_the_v2_candidate_network_reproduces_its_golden_vectors(name):
    """The golden vectors written beside each candidate export (``*.golden.json``: observations
    of the env's v2 layout, masks, the export's actions and logits) come back from the ONNX file
    through the project's player: the same actions, logits within 1e-5 (the browser test's
    tolerance for shipped exports)."""
    from pathlib import Path
    from hod.agents.onnx_policy import OnnxPolicy
    from hod.training.export import golden_path, load_golden
    path = Path(__file__).resolve().parents[2] / "agents" / "candidates" / f"{name}.onnx"
    golden = load_golden(golden_path(path))
    assert golden["model"] == path.name and golden["observation"].shape == (golden["count"], 462)
    assert len({m.tobytes() for m in golden["action_mask"]}) > 3        # more than one kind of position
    action, logits = OnnxPolicy(path).run(golden["observation"], golden["action_mask"])
    assert np.array_equal(action, golden["action"]) and np.abs(logits - golden["logits"]).max() <= 1e-5


def test_an_export_of_the_v2_encoder_names_layout_2_and_is_self_contained():
    """The card of a robada_v2 network names the layout its input is (2, 462 values: the env's
    observation_version=2 vector), the model-card check accepts it (and a checkpoint's 1, the
    layout the training env emitted) and refuses any other version; robada_plans stays layout 1
    plus 135 features, not self-contained."""
    import copy
    import json
    from pathlib import Path
    from hod.agents.model_card import CheckpointError, validate_model_card
    from hod.benchmarks.browser import self_contained
    from hod.training.export import interface, network_layout_version
    path = Path(__file__).resolve().parents[2] / "agents" / "candidates" / "robada_v2_distilled.json"
    card = json.loads(path.read_text(encoding="utf-8"))
    v1 = dict(copy.deepcopy(card), obs_layout_version=1)
    v2 = dict(copy.deepcopy(card), obs_layout_version=2)
    plans = dict(copy.deepcopy(card), obs_encoder="robada_plans", obs_size=192 + 135, obs_layout_version=1)
    assert network_layout_version(v1) == network_layout_version(v2) == 2 and network_layout_version(plans) == 1
    assert interface(v2)["obs_layout"] == {"game": "robada", "version": 2, "size": 462}
    assert interface(v2)["self_contained"] is True and self_contained(v2) == (True, "")
    assert "layout robada v2, 462 floats" in interface(v2)["inputs"][0]["meaning"]
    assert interface(plans)["obs_layout"] == {"game": "robada", "version": 1, "size": 192}
    assert interface(plans)["self_contained"] is False and self_contained(plans)[0] is False
    assert validate_model_card(v2, "v2") is v2 and validate_model_card(v1, "v1") is v1
    with pytest.raises(CheckpointError, match=r"layout version 3 of robada, but this installation has version 1 "
                                              r"\(or 2, the layout of its encoder 'robada_v2'\)"):
        validate_model_card(dict(v2, obs_layout_version=3), "v3")
    with pytest.raises(CheckpointError, match=r"layout version 2 of robada, but this installation has version 1; "):
        validate_model_card(dict(plans, obs_layout_version=2), "plans")
