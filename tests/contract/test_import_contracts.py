"""The import-linter contracts (``pyproject.toml``, ``[tool.importlinter]``) cover every declared
game without a hand edit going unnoticed: each game of the ``hod.games`` entry points has its
package among ``root_packages`` (else import-linter never reads it), its ``rules`` on the rules
floor and in the "pure" contract, its ``env`` on the adapters floor and forbidden to the bots, and
each bots module of the ``hod.bots`` entry points on the bots floor (``hod.agents``'s own in its
layer; a game package's, e.g. ``kuhn_env.bots``, on the layer right above it, since it builds on
``hod.agents.base``), kept from the adapters. The
forbidden contracts reach every game by wildcards (``*.rules``, ``*.env``, ``*.bots``); the layers
contract cannot (import-linter's layers take no wildcards), so this test is what keeps it whole.
The game's packages must also be in setuptools' ``packages`` (else a wheel leaves them out).
"""
from __future__ import annotations

import copy
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from hod.core.games import ENTRY_POINT_GROUP, get_game

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

LAYERS = "Floors: core <- rules <- adapters <- bots | game adapters <- evaluation <- training <- apps"
BOTS_APART = "Bots and adapters are siblings: bots never reach the PettingZoo/Gymnasium adapters"
PURE = "Rules and core are pure: numpy only, no gymnasium, PettingZoo or learning libraries"


def declared_games() -> dict[str, str]:
    """game -> package, from the installed ``hod.games`` entry points."""
    return {ep.name: get_game(ep.name).package for ep in entry_points(group=ENTRY_POINT_GROUP)}


def bot_modules() -> set[str]:
    """The modules of the installed ``hod.bots`` entry points (``"module:BOTS"``)."""
    return {ep.value.partition(":")[0] for ep in entry_points(group="hod.bots")}


def covered(module: str, expressions) -> bool:
    """Whether ``module`` is one of import-linter's module ``expressions`` or inside one (a
    package covers its submodules; ``*`` stands for one name, ``**`` for one or more)."""
    parts = module.split(".")
    for e in expressions:
        want = e.split(".")
        if "**" in want:
            i = want.index("**")
            if parts[:i] == want[:i] and len(parts) > i:
                return True
            continue
        if len(parts) >= len(want) and all(w in ("*", p) for w, p in zip(want, parts)):
            return True
    return False


def layer_of(contract: dict, module: str):
    """Index of the layer holding ``module`` (or a package above it), or None."""
    for i, layer in enumerate(contract["layers"]):
        if covered(module, [m.strip() for m in layer.split("|")]):
            return i
    return None


def gaps(config: dict, games: dict[str, str], bots: set[str]) -> list[str]:
    """What the import-linter section ``config`` misses of the declared ``games`` (game ->
    package) and ``bots`` modules, one line each (empty: every game covered)."""
    contracts = {c["name"]: c for c in config["contracts"]}
    layers, apart, pure = contracts[LAYERS], contracts[BOTS_APART], contracts[PURE]
    rules_floor = layer_of(layers, "hod.core") - 1
    bots_floor = layer_of(layers, "hod.agents")
    out = []
    for game, pkg in sorted(games.items()):
        if pkg not in config["root_packages"]:
            out.append(f"{game}: root_packages lacks {pkg!r}")
        if layer_of(layers, f"{pkg}.rules") != rules_floor:
            out.append(f"{game}: layer {rules_floor} ({layers['layers'][rules_floor]!r}) lacks '{pkg}.rules'")
        if layer_of(layers, f"{pkg}.env") != bots_floor:
            out.append(f"{game}: layer {bots_floor} ({layers['layers'][bots_floor]!r}) lacks '{pkg}.env'")
        if not covered(f"{pkg}.rules", pure["source_modules"]):
            out.append(f"{game}: contract {PURE!r}: source_modules do not cover '{pkg}.rules'")
        for forbidden in ([pure, f"{pkg}.env"], [apart, f"{pkg}.env"]):
            if not covered(forbidden[1], forbidden[0]["forbidden_modules"]):
                out.append(f"{game}: contract {forbidden[0]['name']!r}: forbidden_modules do not cover {forbidden[1]!r}")
    game_bots_floor = bots_floor - 1          # above hod.agents, below hod.evaluation
    if layer_of(layers, "hod.evaluation") != game_bots_floor - 1:
        out.append("no layer of the games' bots modules between 'hod.evaluation' and 'hod.agents'")
    for mod in sorted(bots):
        if mod.split(".")[0] not in config["root_packages"] and not mod.startswith("hod."):
            out.append(f"bots module {mod}: root_packages lacks {mod.split('.')[0]!r}")
        want = bots_floor if covered(mod, ["hod.agents"]) else game_bots_floor
        if layer_of(layers, mod) != want:
            out.append(f"bots module {mod}: layer {want} ({layers['layers'][want]!r}) lacks {mod!r}")
        if not covered(mod, apart["source_modules"]):
            out.append(f"bots module {mod}: contract {BOTS_APART!r}: source_modules do not cover it")
    return out


def test_every_declared_game_and_bots_module_is_covered_by_the_contracts():
    games = declared_games()
    assert {"tapeo", "robada"} <= set(games)
    missing = gaps(PYPROJECT["tool"]["importlinter"], games, bot_modules())
    assert not missing, "pyproject.toml [tool.importlinter] misses:\n" + "\n".join(missing)


def _set_layer(config: dict, holding: str, value: str) -> None:
    layers = config["contracts"][0]["layers"]
    layers[layer_of(config["contracts"][0], holding)] = value


@pytest.mark.parametrize("edit,want", [
    (lambda c: c["root_packages"].remove("robada_env"), "robada: root_packages lacks 'robada_env'"),
    (lambda c: _set_layer(c, "tapeo_env.rules", "tapeo_env.rules"),
     "robada: layer 6 ('tapeo_env.rules') lacks 'robada_env.rules'"),
    (lambda c: _set_layer(c, "hod.agents", "hod.agents | tapeo_env.env"),
     "robada: layer 4 ('hod.agents | tapeo_env.env') lacks 'robada_env.env'"),
    (lambda c: _set_layer(c, "kuhn_env.bots", "hod.agents.bots"),
     "bots module kuhn_env.bots: layer 3 ('hod.agents.bots') lacks 'kuhn_env.bots'"),
    (lambda c: c["contracts"][2].__setitem__("source_modules", ["hod.core", "tapeo_env.rules"]),
     f"robada: contract {PURE!r}: source_modules do not cover 'robada_env.rules'"),
    (lambda c: c["contracts"][1].__setitem__("forbidden_modules", ["hod.adapters", "tapeo_env.env"]),
     f"robada: contract {BOTS_APART!r}: forbidden_modules do not cover 'robada_env.env'"),
])
def test_a_game_left_out_of_the_contracts_is_reported(edit, want):
    """The check fails on a contract that leaves one game out (each way it can be left out)."""
    config = copy.deepcopy(PYPROJECT["tool"]["importlinter"])
    assert [c["name"] for c in config["contracts"]] == [LAYERS, BOTS_APART, PURE]
    edit(config)
    assert want in gaps(config, declared_games(), bot_modules())


def test_a_bots_module_left_out_is_reported():
    config = PYPROJECT["tool"]["importlinter"]
    got = gaps(config, {}, {"chess_env.bots"})
    assert got == ["bots module chess_env.bots: root_packages lacks 'chess_env'",
                   f"bots module chess_env.bots: layer 3 ({config['contracts'][0]['layers'][3]!r}) lacks 'chess_env.bots'"]
    assert gaps(config, {}, {"hod.agents.chess_bots"}) == []           # hod.agents's own: its layer covers it


def test_every_declared_game_package_is_packaged():
    """Every package folder of a declared game (``__init__.py`` under its folder) is in
    setuptools' ``packages``, so a wheel installs it."""
    packages = set(PYPROJECT["tool"]["setuptools"]["packages"])
    for game, pkg in declared_games().items():
        folder = ROOT / pkg.replace(".", "/")
        subs = {".".join(p.parent.relative_to(ROOT).parts) for p in folder.rglob("__init__.py")
                if "__pycache__" not in p.parts}
        assert pkg in subs, game
        assert subs <= packages, (game, sorted(subs - packages))
