"""Registries that point down: the bots register themselves for a game (entry-point group
``hod.bots``, read by ``hod.agents.registry``); the game's declaration names no bot.

Every name the registry gave before (the declarations' ``bots`` and the shipped opponents) still
resolves to the same factory, and a package may add a bot to a game with one entry point.
"""
from __future__ import annotations

import dataclasses
from importlib.metadata import EntryPoint, entry_points

import pytest

import hod.agents as agents
from hod.agents import registry
from hod.agents.base import RandomBot
from hod.core.errors import ConfigError
from hod.core.games import GameInfo, get_game

#: What the declarations' ``bots`` named before (main at 85cf48c), by game.
OLD_DECLARED = {
    "tapeo": {"random": "hod.agents.base:RandomBot", "greedy": "hod.agents.tapeo_bots:GreedyBot",
              "expert": "hod.agents.tapeo_bots:ExpertBot", "ranking": "hod.agents.tapeo_bots:RankingBot",
              "search": "hod.agents.tapeo_search:SearchBot"},
    "robada": {"random": "hod.agents.base:RandomBot", "greedy": "hod.agents.robada_bots:GreedyBot",
               "expert": "hod.agents.robada_bots:ExpertBot", "rollout": "hod.agents.robada_search:RolloutBot",
               "search": "hod.agents.robada_search:SearchBot"},
}
#: Extra bots a test package registers (loaded by the fake entry points below).
EXTRA_BOTS = {"always_random": RandomBot}
NOT_A_MAPPING = [RandomBot]


def test_the_declaration_names_no_bot():
    assert "bots" not in {f.name for f in dataclasses.fields(GameInfo)}
    for game in OLD_DECLARED:
        assert not hasattr(get_game(game), "bots")


@pytest.mark.parametrize("game", sorted(OLD_DECLARED))
def test_every_old_name_resolves_to_the_same_factory(game):
    names = agents.names(game)
    # the declared bots and the shipped opponents (ppo; Tapeo also ppo_v1 to ppo_v6, Ronda Robada ppo_v1)
    shipped = {"tapeo": ["ppo", "ppo_v1", "ppo_v2", "ppo_v3", "ppo_v4", "ppo_v5", "ppo_v6"],
               "robada": ["ppo", "ppo_v1"]}[game]
    assert names == sorted(list(OLD_DECLARED[game]) + shipped)
    for name, spec in OLD_DECLARED[game].items():
        module, _, attr = spec.partition(":")
        want = getattr(__import__(module, fromlist=[attr]), attr)
        assert agents.factory(game, name) is want, name
    ep = entry_points(group=registry.ENTRY_POINT_GROUP, name=game)
    assert [e.value for e in ep] == [f"hod.agents.{game}_bots:BOTS"]


def _fake_entry_points(extra: list[EntryPoint]):
    real = registry.entry_points

    def fake(group, name):
        return list(real(group=group, name=name)) + [e for e in extra if e.group == group and e.name == name]
    return fake


def test_a_package_adds_a_bot_to_a_game_with_one_entry_point(monkeypatch):
    ep = EntryPoint(name="tapeo", value="test_bot_registry:EXTRA_BOTS", group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", _fake_entry_points([ep]))
    registry.installed_bots.cache_clear()
    try:
        assert "always_random" in agents.names("tapeo") and "always_random" not in agents.names("robada")
        bot = agents.make("tapeo", "always_random", seed=3)
        assert isinstance(bot, RandomBot) and (bot.game, bot.name) == ("tapeo", "always_random")
        assert "expert" in agents.names("tapeo")                 # the game's own bots stay
    finally:
        registry.installed_bots.cache_clear()
    monkeypatch.undo()
    assert "always_random" not in agents.names("tapeo")


@pytest.mark.parametrize("value", ["test_bot_registry:NOT_A_MAPPING", "test_bot_registry:MISSING"])
def test_a_bad_entry_point_is_refused_naming_it(monkeypatch, value):
    ep = EntryPoint(name="robada", value=value, group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", _fake_entry_points([ep]))
    registry.installed_bots.cache_clear()
    try:
        with pytest.raises(ConfigError, match="test_bot_registry"):
            agents.names("robada")
    finally:
        registry.installed_bots.cache_clear()


def test_a_run_time_registration_still_replaces_an_installed_bot():
    registry.register("tapeo", "greedy", RandomBot)
    try:
        assert agents.factory("tapeo", "greedy") is RandomBot
    finally:
        del registry._REGISTERED[("tapeo", "greedy")]
    assert agents.factory("tapeo", "greedy").__module__ == "hod.agents.tapeo_bots"


def test_an_unknown_option_of_a_shipped_opponent_lists_only_what_a_caller_may_set():
    # The registry's "ppo" entry binds the export's path and game (functools.partial), and
    # make() refuses them; so the unknown-option message must not offer them as legal.
    with pytest.raises(ConfigError) as e:
        registry.make("robada", "ppo", seed=0, foo=1)
    msg = str(e.value)
    assert msg.startswith("unknown option(s) ['foo'] for robada bot 'ppo'; legal options: [")
    assert "'deterministic'" in msg and "'closing_ace'" in msg
    assert "'path'" not in msg and "'game'" not in msg
    assert isinstance(e.value, TypeError)   # UnknownOptionError, as Python's unexpected keyword
    # the attributes Bot's docstring promises, narrowed as the message is
    assert e.value.unknown == ["foo"] and "deterministic" in e.value.legal and "path" not in e.value.legal


def test_an_unknown_option_of_a_plain_bot_names_the_registry_bot():
    with pytest.raises(ConfigError, match=r"^unknown option\(s\) \['foo'\] for tapeo bot 'expert'; "
                                          r"legal options: \['seed', 'params', 'rulings'\]$"):
        registry.make("tapeo", "expert", seed=0, foo=1)
