"""The whole-state critic (``critic_input = "state"``, :mod:`hod.training.critic`): the learner
env's rows (observation | global state | seat one-hot), a planted change of a hidden card that
moves the value and not the policy, the default unchanged, checkpoints, export and refusals."""
import numpy as np
import pytest
import torch

from hod.core.errors import ConfigError
from hod.training import critic as critic_mod
from hod.training.config import smoke_config, validate_config
from hod.training.learner_env import LearnerVecEnv
from tapeo_env.rules import global_state as tgs


def _first_legal(masks):
    return np.array([np.flatnonzero(r)[0] for r in masks])


def test_critic_extra_is_state_size_plus_seats():
    assert critic_mod.critic_extra("tapeo") == 153 + 6       # STATE_SIZE + max_players
    assert critic_mod.critic_extra("robada") == 215 + 4


@pytest.mark.parametrize("game,kw", [("tapeo", dict(num_players=[2, 3], learner_seats=2)),
                                     ("robada", dict(num_players=[2, 4]))])
def test_rows_are_observation_then_global_state_then_the_learner_seat(game, kw):
    plain = LearnerVecEnv(game, num_tables=4, seed=3, **kw)
    env = LearnerVecEnv(game, num_tables=4, seed=3, global_state=True, **kw)
    W, X = plain.observation_space.shape[0], env.state_extra
    assert env.observation_space.shape == (W + X,)
    o_plain, o = plain.reset(), env.reset()
    for t in range(40):
        # the observation part is the plain env's (same games, same draws), bit for bit
        np.testing.assert_array_equal(o[:, :W], o_plain)
        seats = env.learner_seats_now
        at = 0
        for s in env.sizes:
            games = s.engine.global_state()                      # (tables, S)
            for row in range(s.slots.start, s.slots.stop):
                np.testing.assert_array_equal(o[row, W:W + games.shape[1]], games[(row - at) // s.L])
                hot = o[row, W + games.shape[1]:]
                assert hot.sum() == 1 and hot[seats[row]] == 1   # the one-hot of the row's learner seat
            at = s.slots.stop
        assert env.observation_space.contains(o[0])
        a = _first_legal(env.action_masks())
        o_plain, _, d_plain, _ = plain.step(a)
        o, _, d, infos = env.step(a)
        np.testing.assert_array_equal(d, d_plain)
        for k in np.flatnonzero(d):
            assert infos[k]["terminal_observation"].shape == (W + X,)


def test_kuhn_has_no_batched_global_state_and_says_so():
    with pytest.raises(ConfigError, match="critic_input='observation'"):
        LearnerVecEnv("kuhn", num_tables=2, global_state=True)


def _model(game, env, seed=0):
    from sb3_contrib import MaskablePPO

    kwargs = dict(net_arch=dict(pi=[32, 32], vf=[32, 32]))
    W = env.observation_space.shape[0] - env.state_extra
    policy, kwargs = critic_mod.policy_spec("state", W, kwargs)
    return MaskablePPO(policy, env, policy_kwargs=kwargs, seed=seed, n_steps=8, batch_size=16)


def test_a_planted_hidden_card_moves_the_value_not_the_policy():
    # Tapeo, 2 players, the first pick of the game: seat 0 has seen nothing of seat 1's hand.
    # Move one tapa of seat 1's hand into the undealt rest of the deck and one of another kind
    # back: seat 0's observation cannot tell (checked), the global state can.
    env = LearnerVecEnv("tapeo", num_tables=1, num_players=2, learner_seats=1, seed=5, global_state=True)
    obs = env.reset()
    model = _model("tapeo", env)
    e = env.sizes[0].engine
    st = e.state
    hand = st.hands[0, 1]
    k = int(np.flatnonzero(hand)[0])                                   # a kind seat 1 holds
    j = int(np.flatnonzero((st.undealt[0] > 0) & (np.arange(10) != k))[0])   # a kind left undealt
    seen_before = e.observe(seats=[0]).copy()
    st.hands[0, 1, k] -= 1; st.undealt[0, k] += 1
    st.hands[0, 1, j] += 1; st.undealt[0, j] -= 1
    np.testing.assert_array_equal(e.observe(seats=[0]), seen_before)   # hidden from seat 0
    W = env.observation_space.shape[0] - env.state_extra
    planted = obs.copy()
    planted[0, W:W + tgs.STATE_SIZE] = e.global_state()[0]
    assert (planted != obs).sum() == 4     # hands[1][k], hands[1][j], undealt[k], undealt[j]
    pol = model.policy
    with torch.no_grad():
        a, b = torch.as_tensor(obs), torch.as_tensor(planted)
        la = pol.get_distribution(a).distribution.logits
        lb = pol.get_distribution(b).distribution.logits
        va, vb = pol.predict_values(a), pol.predict_values(b)
    assert torch.equal(la, lb)             # the actor reads the observation only
    assert not torch.equal(va, vb)         # the critic reads the state


def _train(tmp_path, game="tapeo", **over):
    from hod.training.train import Trainer

    players = [2, 3] if game == "tapeo" else [2, 4]
    cfg = smoke_config(game, engine="batched", tables=4, players=players, **over)
    t = Trainer(game, cfg, tmp_path / "run", progress=False, log=None)
    return t, t.run()


def test_default_is_the_observation_critic_and_its_card_is_unchanged(tmp_path):
    from hod.training.checkpoint import load_checkpoint

    assert validate_config("tapeo", smoke_config("tapeo")).critic_input == "observation"
    t, summary = _train(tmp_path)
    assert type(t.model.policy).__name__ == "MaskableActorCriticPolicy"
    assert t.env.state_extra == 0 and t.obs_size == 157
    model, card, _ = load_checkpoint(summary["checkpoint"], game="tapeo")
    assert "critic" not in card
    assert model.policy.mlp_extractor.value_net[0].weight.shape == (32, 157)


@pytest.mark.parametrize("game,enc,W", [("tapeo", "none", 157), ("robada", "robada_v2", 192 + 270)])   # v1 + the v2 summaries
def test_state_critic_trains_saves_loads_and_exports_the_actor_only(tmp_path, game, enc, W):
    import onnx

    from hod.training.checkpoint import load_checkpoint
    from hod.training.export import export_onnx

    X = critic_mod.critic_extra(game)
    t, summary = _train(tmp_path, game, critic_input="state", obs_encoder=enc)
    assert type(t.model.policy).__name__ == "StateCriticPolicy"
    assert t.obs_size == W and t.env.observation_space.shape == (W + X,)
    model, card, _ = load_checkpoint(summary["checkpoint"], game=game)
    assert card["obs_size"] == W
    assert card["critic"] == {"input": "state", "state_layout": f"{game}_state", "state_version": 1,
                              "obs_size": W, "extra": X}
    sd = model.policy.state_dict()
    assert sd["mlp_extractor.policy_net.0.weight"].shape == (32, W)          # the actor: the observation
    assert sd["mlp_extractor.value_net.0.weight"].shape == (32, W + X)      # the critic: + state + seat
    for k, v in t.model.policy.state_dict().items():                         # the round trip, bit for bit
        assert torch.equal(v, sd[k]), k
    onnx_path, _ = export_onnx(summary["checkpoint"], tmp_path / "export")
    graph = onnx.load(str(onnx_path)).graph
    inputs = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    assert inputs == {"observation": ["batch", W], "action_mask": ["batch", card["num_actions"]]}
    names = {i.name for i in graph.initializer}
    assert not any("value" in n for n in names)                              # no critic in the export
    w0 = next(np.asarray(onnx.numpy_helper.to_array(i)) for i in graph.initializer if i.name == "body.0.weight")
    np.testing.assert_array_equal(w0, sd["mlp_extractor.policy_net.0.weight"].numpy())


def test_resume_keeps_the_critic(tmp_path):
    from hod.agents.model_card import CheckpointError
    from hod.training.train import Trainer

    _, summary = _train(tmp_path, critic_input="state")
    cfg = smoke_config("tapeo", engine="batched", tables=4, players=[2, 3], total_steps=512)
    with pytest.raises(CheckpointError, match=r"critic_input='state'.*legal: 'state'"):
        Trainer("tapeo", cfg, tmp_path / "run", resume=summary["checkpoint"], progress=False, log=None)
    cfg = smoke_config("tapeo", engine="batched", tables=4, players=[2, 3], total_steps=512, critic_input="state")
    t = Trainer("tapeo", cfg, tmp_path / "run", resume=summary["checkpoint"], progress=False, log=None)
    assert type(t.model.policy).__name__ == "StateCriticPolicy" and t.model.num_timesteps == 256


def test_a_critic_entry_of_another_layout_is_refused():
    from hod.agents.model_card import CheckpointError
    from hod.training.checkpoint import policy_shapes

    card = {"game": "tapeo", "obs_size": 157, "num_actions": 10, "policy": {"net_arch": [8], "activation": "tanh"},
            "critic": {"input": "state", "state_layout": "tapeo_state", "state_version": 1, "obs_size": 157,
                       "extra": 159}}
    assert policy_shapes(card)["mlp_extractor.value_net.0.weight"] == (8, 157 + 159)
    card["critic"]["state_version"] = 0
    with pytest.raises(CheckpointError, match="another global-state layout"):
        policy_shapes(card)


@pytest.mark.parametrize("over,match", [
    (dict(critic_input="whole"), "critic_input='whole'; legal values: 'observation' or 'state'"),
    (dict(critic_input="state", engine="single"), r"needs engine='batched'.*legal here: 'observation'"),
    (dict(critic_input="state", engine="batched", tables=4, players=[2, 3], bc_teacher="greedy"),
     r"bc_teacher='greedy'.*legal: critic_input='observation'"),
])
def test_refusals_name_the_legal_values(over, match):
    with pytest.raises(ConfigError, match=match):
        validate_config("tapeo", smoke_config("tapeo", **over))


def test_kuhn_state_critic_is_refused_by_the_config():
    cfg = smoke_config("kuhn", engine="batched")     # kuhn's training.toml predates the key (default: observation)
    cfg["ppo"]["critic_input"] = "state"
    with pytest.raises(ConfigError, match="legal for 'kuhn': 'observation'"):
        validate_config("kuhn", cfg)


def test_check_critic_input_names_the_legal_values():
    assert critic_mod.check_critic_input("state") == "state"
    with pytest.raises(ConfigError, match=r"legal values: \['observation', 'state'\]"):
        critic_mod.check_critic_input("both")


def test_expert_iteration_refuses_a_state_critic():
    from hod.training.expert_iteration import load_expit_config, validate

    values = load_expit_config("tapeo")
    values["train"] = {"critic_input": "state", "engine": "batched", "players": [2], "tables": 2}
    with pytest.raises(ConfigError, match="critic_input='state'.*legal: 'observation'"):
        validate("tapeo", values)


def test_the_rllib_trainer_refuses_a_state_critic():
    pytest.importorskip("ray.rllib")
    from hod.training.rllib.train import RLlibTrainer

    cfg = smoke_config("tapeo", players=[2], engine="batched", tables=2, critic_input="state")
    with pytest.raises(ConfigError, match="critic_input='state'.*legal: 'observation'"):
        RLlibTrainer("tapeo", cfg, "runs/x", log=None)


def test_the_same_seed_starts_the_same_actor_and_leaves_torch_where_an_observation_critic_does():
    from sb3_contrib import MaskablePPO

    plain = LearnerVecEnv("tapeo", num_tables=2, num_players=2, seed=0)
    env = LearnerVecEnv("tapeo", num_tables=2, num_players=2, seed=0, global_state=True)
    kwargs = dict(net_arch=dict(pi=[32, 32], vf=[32, 32]))
    a = MaskablePPO("MlpPolicy", plain, policy_kwargs=kwargs, seed=7, n_steps=8, batch_size=16)
    draw_a = torch.rand(4)
    policy, kw = critic_mod.policy_spec("state", 157, kwargs)
    b = MaskablePPO(policy, env, policy_kwargs=kw, seed=7, n_steps=8, batch_size=16)
    draw_b = torch.rand(4)
    assert torch.equal(draw_a, draw_b)                         # the generator where MlpPolicy leaves it
    sa, sb = a.policy.state_dict(), b.policy.state_dict()
    for k in sa:
        if k.startswith(("mlp_extractor.policy_net", "action_net")):
            assert torch.equal(sa[k], sb[k]), k                # the same initial actor
    assert sb["mlp_extractor.value_net.0.weight"].shape == (32, 157 + 159)
    assert not sb["mlp_extractor.value_net.0.bias"].any()       # SB3's init: bias 0
    # the optimizer covers every parameter, the widened layer included
    assert sum(p.numel() for g in b.policy.optimizer.param_groups for p in g["params"]) == \
        sum(p.numel() for p in b.policy.parameters())
    assert any(p is b.policy.mlp_extractor.value_net[0].weight
               for g in b.policy.optimizer.param_groups for p in g["params"])
