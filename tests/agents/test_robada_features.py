"""The ``robada_plans`` observation encoder (hod.agents.robada_features, hod.agents.encoders) and its use
by every player of a policy: hand-worked feature values, agreement with the expert's choice,
the encoded training run (warm start included), the export and the bots that read it."""
from __future__ import annotations

import json

import numpy as np
import pytest

from _robada_helpers import position
from hod.agents.encoders import ENCODERS, get_encoder
from hod.agents.robada_bots import ExpertBot
from hod.agents.robada_features import PER_ACTION, SCALE, SIZE, plan_features, plan_features_batch
from hod.core.errors import ConfigError
from robada_env.rules.actions import CONFIRM, DROP, NUM_ACTIONS, START, TAKE, TAP
from robada_env.rules.cards import SOTA
from robada_env.rules.engine import apply_action, legal_mask, new_game, Config
from robada_env.rules.observation import LAYOUT, encode


def _obs(s):
    return encode(s, s.current), legal_mask(s, s.current)


def _table(f):
    """(5, 27) view: row k = feature k of every action."""
    return f.reshape(PER_ACTION, NUM_ACTIONS)


def _last_turn_position():
    # 2 players, deck empty, seat 1 has no cards left: no reply follows my turn, so each plan's
    # value is its gain (no damage, no follow-up), and the game does not end with it (I keep a card).
    # Me: 5 of oros, Sota of oros. Table: 5, 6, 2 loose. Seat 1's pile: every other card, 7 on top.
    return position(["5o So", ""], loose="5c 6o 2o", piles=[[], ["7o"]], n=2, to_deck=False)


def test_features_of_a_hand_worked_last_turn():
    s = _last_turn_position()
    f = _table(plan_features(*_obs(s)))
    # seat 1's pile: 244 points in the deck - my hand (5 + 10) - loose (5 + 6 + 2) = 216
    assert s.points[1] == 216
    # start 5: 5+5 = 10, tap 6: +6 = 16, the 7 is not loose so take seat 1's pile showing it:
    # +216 x (1 + 1/(n-1)) = +432 (I gain it and its owner loses it) -> 448; then the Sota is
    # neither loose nor on a pile: the run stops. The best stopping point is the last one.
    start5 = START + 4
    assert f[:, start5] == pytest.approx([448 / SCALE, 448 / SCALE, 0.0, 0.0, 1.0])
    # drops gather nothing: value 0 (no reply, no follow-up), and are not the expert's choice
    for a in (DROP + 4, DROP + SOTA):
        assert f[:, a] == pytest.approx([0.0, 0.0, 0.0, 0.0, 0.0])
    # nothing else is legal, so every other column is 0
    legal = {start5, DROP + 4, DROP + SOTA}
    others = [a for a in range(NUM_ACTIONS) if a not in legal]
    assert not f[:, others].any()


def test_features_in_the_middle_of_a_run():
    s = _last_turn_position()
    apply_action(s, START + 4)
    apply_action(s, TAP)
    f = _table(plan_features(*_obs(s)))
    # from here: confirm gains nothing more (0); taking seat 1's pile (+1 seat, TAKE + 1) gains 432
    assert f[:, CONFIRM] == pytest.approx([0.0, 0.0, 0.0, 0.0, 0.0])
    assert f[:, TAKE + 1] == pytest.approx([432 / SCALE, 432 / SCALE, 0.0, 0.0, 1.0])


def test_a_single_legal_action_is_marked_without_planning():
    # me: one Ace, nothing loose of its rank -> only "drop Ace" is legal
    s = position(["Ao", "2o 3o"], loose="4o 5o 6o 7o", n=2)
    obs, mask = _obs(s)
    assert np.flatnonzero(mask).tolist() == [DROP]
    f = _table(plan_features(obs, mask))
    assert f[4, DROP] == 1.0 and f.sum() == 1.0


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_expert_choice_is_marked_and_illegal_actions_are_zero(n):
    rng = np.random.default_rng(n)
    expert = ExpertBot(seed=0)
    checked = 0
    for g in range(6):
        s = new_game(Config(num_players=n), rng=np.random.default_rng(100 * n + g))
        while not s.terminal:
            obs, mask = _obs(s)
            f = _table(plan_features(obs, mask))
            assert not f[:, mask == 0].any()
            a = expert.act({"observation": obs, "action_mask": mask})
            assert f[4, a] == 1.0            # the expert's action is among the marked ones
            if mask.sum() > 1:               # its value is the highest of the legal ones
                assert f[0, a] == pytest.approx(f[0, mask != 0].max())
                checked += 1
            legal = np.flatnonzero(mask)
            apply_action(s, int(rng.choice(legal)))
    assert checked > 50


def test_batch_and_shapes():
    s = _last_turn_position()
    obs, mask = _obs(s)
    batch = plan_features_batch(np.stack([obs, obs]), np.stack([mask, mask]))
    assert batch.shape == (2, SIZE) and batch.dtype == np.float32 and SIZE == 135
    assert np.array_equal(batch[0], plan_features(obs, mask))
    with pytest.raises(ValueError, match=r"\(192,\)"):
        plan_features(obs[:-1], mask)
    with pytest.raises(ValueError, match="allows no action"):
        plan_features(obs, np.zeros(NUM_ACTIONS, np.int8))


def test_encoder_registry():
    enc = get_encoder("robada_plans", "robada")
    s = _last_turn_position()
    obs, mask = _obs(s)
    x = enc.encode(obs, mask)
    assert x.shape == (LAYOUT.size + 135,) and np.array_equal(x[:LAYOUT.size], obs)
    assert np.array_equal(x[LAYOUT.size:], plan_features(obs, mask))
    assert get_encoder(None).identity and enc.size(192) == 327
    with pytest.raises(ConfigError, match="legal values"):
        get_encoder("plans")
    with pytest.raises(ConfigError, match="not 'tapeo'"):
        get_encoder("robada_plans", "tapeo")
    assert set(ENCODERS) == {"none", "robada_plans", "robada_v2"}


@pytest.fixture(scope="module")
def encoded_run(tmp_path_factory):
    """A tiny Ronda Robada run with the encoder and a behaviour-cloning warm start, exported."""
    from hod.training.config import smoke_config
    from hod.training.export import export_onnx
    from hod.training.train import Trainer

    out = tmp_path_factory.mktemp("encoded_run")
    cfg = smoke_config("robada", obs_encoder="robada_plans", bc_teacher="expert", bc_decisions=400,
                       bc_epochs=1, heuristics=["expert"], players=[2, 4], eval_every=256,
                       eval_games=8, baselines=["random"])
    t = Trainer("robada", cfg, out, progress=False, log=None)
    assert t.model.observation_space.shape == (192 + 135,)
    s = t.run()
    onnx_path, model_card_path = export_onnx(s["checkpoint"], out / "export")
    return t, s, onnx_path


def test_encoded_training_records_the_encoder_everywhere(encoded_run):
    t, s, onnx_path = encoded_run
    card = json.loads(t.out.joinpath("checkpoints", "final.json").read_text())
    assert card["obs_encoder"] == "robada_plans" and card["obs_size"] == 327
    assert card["training"]["imitation"]["teacher"] == "expert"
    # the pool's snapshots read the game's observation and encode it themselves
    snap = next(iter(t.pool.past.values()))
    assert snap.encoder.name == "robada_plans" and snap.obs_size == 327
    from hod.training.numpy_policy import NumpyPolicy

    again = NumpyPolicy.from_bytes(snap.to_bytes())
    assert again.encoder.name == "robada_plans"
    onnx_card = json.loads(onnx_path.with_suffix(".json").read_text())
    assert onnx_card["obs_encoder"] == "robada_plans"


def test_every_player_of_the_policy_agrees(encoded_run):
    from hod.agents.onnx_policy import OnnxPolicy
    from hod.training.ppo_bot import PPOBot

    t, s, onnx_path = encoded_run
    onnx_bot = OnnxPolicy(onnx_path, game="robada", num_players=2)
    torch_bot = PPOBot(s["checkpoint"], game="robada")
    snap = t.numpy_policy()
    rng = np.random.default_rng(0)
    seen = 0
    for g in range(3):
        st = new_game(Config(num_players=2), rng=np.random.default_rng(g))
        while not st.terminal:
            obs, mask = _obs(st)
            o = {"observation": obs, "action_mask": mask}
            a = onnx_bot.act(o)
            assert a == torch_bot.act(o) == snap.act(obs, mask)
            assert mask[a]
            seen += 1
            apply_action(st, int(rng.choice(np.flatnonzero(mask))))
    assert seen > 30
    # an observation of the wrong width is refused with the legal widths named
    with pytest.raises(ValueError, match="legal widths"):
        snap.act(np.zeros(100, np.float32), np.ones(NUM_ACTIONS, np.int8))


def test_a_card_with_an_unknown_encoder_is_refused(encoded_run, tmp_path):
    from hod.agents.model_card import CheckpointError, validate_model_card

    t, s, _ = encoded_run
    card = json.loads(t.out.joinpath("checkpoints", "final.json").read_text())
    validate_model_card(card, "card", game="robada", obs_size=192)
    bad = dict(card, obs_encoder="mystery")
    with pytest.raises(CheckpointError, match="legal values"):
        validate_model_card(bad, "card", game="robada")
    with pytest.raises(CheckpointError, match=r"size 327, not 192"):
        validate_model_card(dict(card, obs_encoder="none"), "card", game="robada", obs_size=192)


def test_an_encoded_export_plays_without_torch(encoded_run):
    import subprocess
    import sys

    _, _, onnx_path = encoded_run
    s = _last_turn_position()
    obs, mask = _obs(s)
    code = (
        "import sys, numpy as np\n"
        "from hod.agents.onnx_policy import OnnxPolicy\n"
        f"b = OnnxPolicy({str(onnx_path)!r}, game='robada', seed=0)\n"
        f"obs = np.array({obs.tolist()!r}, np.float32); m = np.array({mask.tolist()!r}, np.int8)\n"
        "a = b.act({'observation': obs, 'action_mask': m})\n"
        "assert m[a], a\n"
        "bad = [k for k in ('torch', 'stable_baselines3', 'sb3_contrib') if k in sys.modules]\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_bad_encoder_names_and_a_resume_with_another_encoder_are_refused(encoded_run, tmp_path):
    from hod.agents.model_card import CheckpointError, validate_model_card
    from hod.training.config import smoke_config
    from hod.training.train import Trainer

    with pytest.raises(ConfigError, match="legal values"):
        get_encoder(["robada_plans"])
    t, s, _ = encoded_run
    card = json.loads(t.out.joinpath("checkpoints", "final.json").read_text())
    with pytest.raises(CheckpointError, match="legal values"):
        validate_model_card(dict(card, obs_encoder=["robada_plans"]), "card", game="robada")
    cfg = smoke_config("robada", obs_encoder="none", heuristics=["random"], players=[2, 4])
    with pytest.raises(CheckpointError, match="keeps its encoder"):
        Trainer("robada", cfg, tmp_path, resume=s["checkpoint"], progress=False, log=None)


def test_onnx_side_card_must_agree_on_the_encoder(encoded_run, tmp_path):
    import shutil

    from hod.agents.onnx_policy import OnnxPolicy
    from hod.agents.model_card import CheckpointError

    _, _, onnx_path = encoded_run
    dst = tmp_path / "m.onnx"
    shutil.copy(onnx_path, dst)
    side = json.loads(onnx_path.with_suffix(".json").read_text())
    side["obs_encoder"] = "none"
    dst.with_suffix(".json").write_text(json.dumps(side))
    with pytest.raises(CheckpointError, match="disagree on 'obs_encoder'"):
        OnnxPolicy(dst)
    # the error for a wrong width names both accepted widths
    bot = OnnxPolicy(onnx_path)
    with pytest.raises(ValueError, match=r"\[192, 327\]"):
        bot.run(np.zeros(191, np.float32), np.ones(NUM_ACTIONS, np.int8))
