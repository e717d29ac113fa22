"""Model cards: every field's type and legal values are checked before the field is used
(hod.agents.model_card.validate_model_card / check_card_fields)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from hod.agents.model_card import MODEL_CARD_FORMAT, CheckpointError, check_card_fields, validate_model_card

REPO = Path(__file__).resolve().parents[2]


def kuhn_card(**changes) -> dict:
    """A valid Kuhn poker card: Kuhn is a 2-player game (GameInfo player_counts (2,)), its
    observation 11 floats (layout version 1), 3 actions, no rule options."""
    card = {"format": MODEL_CARD_FORMAT, "card_version": 1, "game": "kuhn", "player_counts": [2],
            "obs_layout_version": 1, "obs_size": 11, "num_actions": 3, "algorithm": "MaskablePPO",
            "policy": {"net_arch": [8], "activation": "tanh"}, "rules": {}}
    card.update(changes)
    return card


def test_a_valid_card_is_returned_as_it_is():
    card = kuhn_card()
    assert validate_model_card(card, "c", game="kuhn", num_players=2, obs_size=11, num_actions=3) is card


PLAYERS = "c: the card's player_counts {} is not legal for kuhn; legal: a non-empty list of integers, each one of [2]"
POSITIVE = "c: the card's {} {} is not legal; legal: a positive integer"


@pytest.mark.parametrize("key, value, message", [
    # null / a string: a TypeError ("argument of type 'NoneType' is not iterable") before the check
    ("player_counts", None, PLAYERS.format("None")),
    ("player_counts", "2", PLAYERS.format("'2'")),
    ("player_counts", 2, PLAYERS.format("2")),
    # accepted before the check: an empty list, a size Kuhn does not have, a float, a bool
    ("player_counts", [], PLAYERS.format("[]")),
    ("player_counts", [3], PLAYERS.format("[3]")),
    ("player_counts", [2.0], PLAYERS.format("[2.0]")),
    ("player_counts", [True, 2], PLAYERS.format("[True, 2]")),
    ("player_counts", [2, None], PLAYERS.format("[2, None]")),
    # JSON true == 1 and 3.0 == 3 in Python: accepted before the check
    ("card_version", True, "c: model card version True is not supported; this version reads 1 (an integer; "
                           "legal values: [1])"),
    ("card_version", 1.0, "c: model card version 1.0 is not supported; this version reads 1 (an integer; "
                          "legal values: [1])"),
    ("card_version", 2, "c: model card version 2 is not supported; this version reads 1 (an integer; "
                        "legal values: [1])"),
    ("num_actions", 3.0, POSITIVE.format("num_actions", "3.0")),
    ("num_actions", True, POSITIVE.format("num_actions", "True")),
    ("obs_size", 11.0, POSITIVE.format("obs_size", "11.0")),
    ("obs_size", None, POSITIVE.format("obs_size", "None")),
    ("obs_layout_version", True, "c: the card's obs_layout_version True is not legal; legal: an integer (the "
                                 "game's layout version, 1 here)"),
    ("obs_layout_version", 1.0, "c: the card's obs_layout_version 1.0 is not legal; legal: an integer (the "
                                "game's layout version, 1 here)"),
    # Kuhn declares no rule options: Ronda Robada's closing_ace is not one of its
    ("rules", {"closing_ace": False}, "c: the card's rules name ['closing_ace'], not rule option(s) of kuhn; "
                                      "legal options: []"),
    ("rules", None, "c: the card's rules None is not legal; legal: an object whose keys are rule options of kuhn ([])"),
    ("rules", [], "c: the card's rules [] is not legal; legal: an object whose keys are rule options of kuhn ([])"),
    # the installed games (kuhn, robada, tapeo) and any a test declares: GAMES, read at run time
    ("game", None, "c: the card names unknown game None; legal values: GAMES"),
    ("game", ["kuhn"], "c: the card names unknown game ['kuhn']; legal values: GAMES"),
])
def test_a_field_of_the_wrong_type_or_value_is_refused_by_name(key, value, message):
    from hod.core.games import game_names

    assert {"kuhn", "robada", "tapeo"} <= set(game_names())
    message = message.replace("GAMES", str(game_names()))
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        validate_model_card(kuhn_card(**{key: value}), "c", num_players=2)
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):   # without num_players too
        validate_model_card(kuhn_card(**{key: value}), "c")


def test_rules_of_another_game_and_values_of_the_wrong_type_are_refused():
    robada = {"format": MODEL_CARD_FORMAT, "card_version": 1, "game": "robada", "player_counts": [2, 3, 4],
              "obs_layout_version": 1, "obs_size": 192, "num_actions": 27}
    rules = {"closing_ace": True, "may_take_own_pile": False, "leftovers_to_last_runner": True}
    assert check_card_fields(dict(robada, rules=rules), "r") is None   # the three declared options
    assert check_card_fields(dict(robada, rules={"closing_ace": False}), "r") is None
    assert check_card_fields(robada, "r") is None                     # no rules key: the defaults
    # 1 == True but is not one of the option's legal values (True, False), by type
    with pytest.raises(CheckpointError, match=re.escape("r: the card's rules: closing_ace=1 is not allowed for "
                                                        "robada; legal values: [True, False]")):
        check_card_fields(dict(robada, rules={"closing_ace": 1}), "r")
    with pytest.raises(CheckpointError, match=re.escape("r: the card's rules name ['closing_aces'], not rule "
                                                        "option(s) of robada; legal options: ['closing_ace', "
                                                        "'may_take_own_pile', 'leftovers_to_last_runner']")):
        check_card_fields(dict(robada, rules={"closing_aces": True}), "r")


def test_a_repeated_table_size_is_still_legal():
    # a run weighting its 2-player tables writes [2, 2, 3, ...]: the shipped tapeo_ppo_v2 card has it
    tapeo = {"format": MODEL_CARD_FORMAT, "card_version": 1, "game": "tapeo", "player_counts": [2, 2, 3, 4, 5, 6],
             "obs_layout_version": 1, "obs_size": 157, "num_actions": 10, "rules": {}}
    assert validate_model_card(tapeo, "t", num_players=6) is tapeo
    with pytest.raises(CheckpointError, match=re.escape("each one of [2, 3, 4, 5, 6]")):   # Tapeo: 2..6 players
        validate_model_card(dict(tapeo, player_counts=[2, 7]), "t")


def shipped_cards() -> list[Path]:
    folders = [REPO / "agents" / "opponents", REPO / "agents" / "candidates"]
    cards = [p for d in folders for p in sorted(d.glob("*.json")) if not p.name.endswith(".golden.json")]
    return cards + [REPO / "agents" / "tapeo_playout.json"]


def test_every_shipped_card_validates():
    from hod.agents.onnx_policy import OnnxPolicy

    cards = shipped_cards()
    assert len(cards) >= 20   # opponents (10 cards), candidates and the Tapeo playout network
    for path in cards:
        card = json.loads(path.read_text(encoding="utf-8"))
        assert validate_model_card(card, str(path)) is card
        if path.with_suffix(".onnx").is_file():
            OnnxPolicy(path.with_suffix(".onnx"))   # the export and its card load as the registry loads them


def test_a_checkpoint_with_player_counts_null_is_refused_not_a_type_error(tmp_path):
    """What ``train --resume``, ``hod.training.evaluate`` and the export read: a checkpoint whose
    model_card.json says ``player_counts: null`` (a TypeError before the check)."""
    from gymnasium import spaces

    from hod.training.checkpoint import load_checkpoint, new_model, read_checkpoint, save_checkpoint

    card = kuhn_card()
    model = new_model(card, spaces.Box(0.0, 1.0, (11,), np.float32))
    path = save_checkpoint(model, tmp_path / "bad.zip", kuhn_card(player_counts=None), {})
    for load in (read_checkpoint, load_checkpoint):
        with pytest.raises(CheckpointError, match=re.escape(PLAYERS.format("None").replace("c:", f"{path}:", 1))):
            load(path, num_players=2)
