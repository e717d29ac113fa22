"""The one PettingZoo adapter (``hod.adapters.game_env``) bound to each game, checked bit for bit
against the two adapters it replaced (``tests/oracles/tapeo_env_v0.py``, ``robada_env_v0.py``,
the package's ``env.py`` files of that time), and each game's binding against the declared
single-game interface (``hod.core.engine.SingleGame``).

The differential tests play seeded games through the old and the new env side by side, in both
forms, with one action sampler: mostly legal actions, some illegal ones (ill-typed or outside
the mask) under ``illegal_action="lose"``, every reward scheme, Tapeo's round rewards, Ronda
Robada's observation version 2 and rule options, and small ``max_cycles`` (truncation). At every
step everything an agent or a library sees must be equal (same types, arrays bit for bit): AEC
``agent_selection``, ``last()``, ``rewards``, ``_cumulative_rewards``, terminations,
truncations, infos, ``state()``; Parallel every returned dict; the game seeds of unseeded resets.
"""
from __future__ import annotations

import numpy as np
import pytest

import robada_env
import tapeo_env
from hod.adapters.game_env import AECGameEnv, ParallelGameEnv
from hod.core.engine import SingleGame
from hod.core.errors import ConfigError, IllegalActionError
from hod.core.games import game_names, get_game
from oracles import robada_env_v0, tapeo_env_v0

OLD = {"tapeo": tapeo_env_v0, "robada": robada_env_v0}
NEW = {"tapeo": tapeo_env, "robada": robada_env}

CASES = [
    ("tapeo", {"num_players": 2}),
    ("tapeo", {"num_players": 4, "reward_scheme": "win_loss", "round_rewards": True}),
    ("tapeo", {"num_players": 6, "reward_scheme": "margin", "round_rewards": True, "max_cycles": 12}),
    ("tapeo", {"num_players": 3, "max_cycles": 5}),
    ("robada", {"num_players": 2}),
    ("robada", {"num_players": 3, "reward_scheme": "win_loss", "observation_version": 2}),
    ("robada", {"num_players": 4, "reward_scheme": "margin", "closing_ace": False, "may_take_own_pile": False,
                "leftovers_to_last_runner": False}),
    ("robada", {"num_players": 2, "max_cycles": 3}),
]
IDS = [f"{g}-{i}" for i, (g, _) in enumerate(CASES)]


def _same(a, b, where: str) -> None:
    """Equal values of the same types, arrays bit for bit (dtype and shape included)."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), where
    elif isinstance(a, dict):
        assert list(a) == list(b), (where, list(a), list(b))
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b or (a != a and b != b), (where, a, b)


def _action(rng: np.random.Generator, mask: np.ndarray, illegal: bool):
    """A legal action from ``mask``, or (``illegal``) one of: a float, an action outside the mask."""
    legal = np.flatnonzero(mask)
    if illegal:
        outside = np.flatnonzero(mask == 0)
        return float(legal[0]) if rng.random() < 0.5 or not outside.size else int(outside[0])
    return int(legal[rng.integers(len(legal))])


def _aec_view(env) -> tuple:
    u = env.unwrapped
    return (env.agent_selection, dict(u.rewards), dict(u._cumulative_rewards), dict(u.terminations),
            dict(u.truncations), {a: dict(i) for a, i in u.infos.items()}, list(env.agents), u.state())


@pytest.mark.parametrize("game,options", CASES, ids=IDS)
def test_aec_env_plays_as_the_old_adapter(game, options):
    old, new = OLD[game].env(**options), NEW[game].env(**options)
    rng_old, rng_new = np.random.default_rng(1), np.random.default_rng(1)
    forfeits = 0
    for g in range(6):
        seed = 100 + g if g % 3 == 0 else None          # seeded, then unseeded resets
        old.reset(seed=seed)
        new.reset(seed=seed)
        assert old.unwrapped.game_seed == new.unwrapped.game_seed
        _same(_aec_view(old), _aec_view(new), "reset")
        for step, (a_old, a_new) in enumerate(zip(old.agent_iter(), new.agent_iter())):
            assert a_old == a_new
            last_old, last_new = old.last(), new.last()
            _same(last_old, last_new, f"game {g} step {step} last()")
            obs, _, term, trunc, _ = last_old
            if term or trunc:
                old.step(None)
                new.step(None)
            else:
                illegal = g % 2 == 1 and step == 7 + g        # one illegal action in some games
                forfeits += illegal
                old.step(_action(rng_old, obs["action_mask"], illegal))
                new.step(_action(rng_new, obs["action_mask"], illegal))
            _same(_aec_view(old), _aec_view(new), f"game {g} step {step}")
        assert not new.agents and not old.agents
    assert forfeits >= 1 or options.get("max_cycles", 1000) < 10


@pytest.mark.parametrize("game,options", CASES, ids=IDS)
def test_parallel_env_plays_as_the_old_adapter(game, options):
    old, new = OLD[game].parallel_env(**options), NEW[game].parallel_env(**options)
    rng_old, rng_new = np.random.default_rng(2), np.random.default_rng(2)
    for g in range(6):
        seed = 200 + g if g % 3 == 0 else None
        out_old, out_new = old.reset(seed=seed), new.reset(seed=seed)
        _same(out_old, out_new, "reset")
        assert old.game_seed == new.game_seed
        step = 0
        while old.agents:
            obs = out_old[0]
            illegal_seat = (g + step) % len(old.agents) if g % 2 == 1 and step == 5 + g else -1
            acts = [{a: _action(rng, obs[a]["action_mask"], i == illegal_seat) for i, a in enumerate(old.agents)}
                    for rng in (rng_old, rng_new)]
            out_old, out_new = old.step(acts[0]), new.step(acts[1])
            _same(out_old, out_new, f"game {g} step {step}")
            _same(old.state(), new.state(), f"game {g} step {step} state()")
            step += 1
        assert not new.agents


@pytest.mark.parametrize("game", ["tapeo", "robada"])
@pytest.mark.parametrize("form", ["raw_env", "parallel_env"])
def test_illegal_actions_raise_the_old_errors_under_raise(game, form):
    """``illegal_action="raise"``: the same exception and message for each kind of bad action,
    and nothing changes (the next legal step goes on as in the old env)."""
    old = getattr(OLD[game], form)(num_players=3, illegal_action="raise")
    new = getattr(NEW[game], form)(num_players=3, illegal_action="raise")
    old.reset(seed=9)
    new.reset(seed=9)
    bad_actions = [99, -1, 1.0, True, "0", np.array(0), None]
    for bad in bad_actions:
        if form == "raw_env":
            calls = [lambda e: e.step(bad)]
        else:
            calls = [lambda e: e.step({a: bad for a in e.agents}),                 # every seat bad
                     lambda e: e.step({a: (bad if i == 1 else _action(np.random.default_rng(0),
                                                                      e.action_mask(a), False))
                                       for i, a in enumerate(e.agents)})]       # seat 1 bad
        if form == "parallel_env" and game == "robada" and bad is None:
            # seat 1 is not to act: None is its "no action" now (test_robada_env.py::
            # test_parallel_agents_not_to_act_may_send_none), an illegal action only in the old env
            calls = calls[:1]
        for call in calls:
            errors = []
            for e in (old, new):
                with pytest.raises((IllegalActionError, ValueError)) as info:
                    call(e)
                errors.append((type(info.value), str(info.value)))
            assert errors[0] == errors[1], bad
    _same(old.game_state.history if game == "robada" else old.game_state.reveals,
          new.game_state.history if game == "robada" else new.game_state.reveals, "nothing changed")


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_the_same_options_are_refused_with_the_same_errors(game):
    bad = [{"num_players": 1}, {"num_players": 9}, {"num_players": None}, {"max_cycles": None},
           {"render_mode": "rgb"}, {"colour": 1}, {"round_rewards": 1}, {"round_rewards": "yes"},
           {"closing_ace": 1}, {"num_players": 2.0}, {"max_cycles": 0, "num_players": 3}]
    for opts in bad:
        for form in ("raw_env", "parallel_env", "env"):
            errors = []
            for mod in (OLD[game], NEW[game]):
                with pytest.raises(Exception) as info:
                    getattr(mod, form)(**opts)
                errors.append((type(info.value), str(info.value)))
            assert errors[0] == errors[1], opts


@pytest.mark.parametrize("bad", [0, 3, True, 2.0, "2", None])
def test_an_env_option_is_checked_as_every_option_is(bad):
    """Every declared env option is checked by ``check_choice`` (Ronda Robada's
    ``observation_version`` said "is out of range" / "must be an integer" before; now the words
    of every other option), naming the legal values."""
    for make in (robada_env.raw_env, robada_env.parallel_env, robada_env.env):
        with pytest.raises(ConfigError) as e:
            make(observation_version=bad)
        # True == 1 and 2.0 == 2 are of the wrong type: the message says which value they equal
        hint = {True: " (equal to 1 but of type bool: give an int)", 2.0: " (equal to 2 but of type float: give an int)"}
        why = hint.get(bad, "") if isinstance(bad, (bool, float)) else ""
        assert str(e.value) == f"observation_version={bad!r} is not allowed{why}; legal values: [1, 2]"


@pytest.mark.parametrize("game", ["tapeo", "robada"])
def test_spaces_metadata_and_defaults_are_the_old_ones(game):
    for form, par in (("raw_env", False), ("parallel_env", True)):
        old, new = getattr(OLD[game], form)(), getattr(NEW[game], form)()
        assert new.possible_agents == old.possible_agents
        assert new.max_cycles == old.max_cycles and new.config == old.config
        a = old.possible_agents[0]
        assert new.observation_space(a) == old.observation_space(a)
        assert new.action_space(a) == old.action_space(a)
        assert new.state_space == old.state_space
        assert new.metadata["name"] == old.metadata["name"] == get_game(game).env_name
        if not par:   # Parallel metadata: the AEC's (Ronda Robada's old Parallel form had no is_parallelizable)
            assert new.metadata == old.metadata


@pytest.mark.parametrize("game", game_names())
def test_every_declared_game_binds_the_single_game_interface(game):
    """Each declared game's package binds the one adapter: ``raw_env`` and the Parallel class are
    its subclasses with the game's declaration, and the binding implements ``SingleGame`` (every
    member present), with one step per declared dynamics."""
    info = get_game(game)
    mod = info.module()
    raw, par = mod.raw_env, type(mod.parallel_env())
    assert issubclass(raw, AECGameEnv) and issubclass(par, ParallelGameEnv)
    assert raw.game is info and par.game is info and raw.rules is par.rules
    env = raw()
    assert isinstance(env._rules, SingleGame)
    want = "_step_simultaneous" if info.simultaneous else "_step_sequential"
    assert raw.step is getattr(AECGameEnv, want)
    assert (raw.rules.noop is None) == info.simultaneous
    names = [o.name for o in raw.rules.options]
    for name in names:   # each env option is an attribute of the env, with its default
        assert getattr(env, name) == next(o.default for o in raw.rules.options if o.name == name)


def test_env_options_keep_the_legal_value_not_the_given_object():
    e = robada_env.raw_env(observation_version=np.int64(2))
    assert type(e.observation_version) is int and e.observation_version == 2
    assert e.observation_space("player_0")["observation"].shape == (462,)
    assert tapeo_env.raw_env(round_rewards=True).round_rewards is True
