"""Kuhn poker (``kuhn_v0``): the three-card poker of H. W. Kuhn (1950) for two players, with
OpenSpiel's conventions; the third game, in one folder (docs/DESIGN.md, "How to add a game").

| | |
|---|---|
| Import | `from kuhn_env import env, parallel_env, raw_env` |
| Actions | Discrete(3): 0 pass (check/fold), 1 bet (bet/call), 2 no-op (the seat not to act) |
| Agents | `player_0`, `player_1` (`player_0` acts first) |
| Observation | dict: `observation` float32 (11,) (OpenSpiel's information-state tensor), `action_mask` int8 (3,) |
| Rewards | at the end: the payoffs (+-1 or +-2) under `reward_scheme="points"` |

Rules: kuhn_env/RULES.md (K1-K5). Bots: ``random`` and ``nash`` (the equilibrium, K5;
:mod:`kuhn_env.bots`), e.g. ``python -m hod.benchmarks.tournament --game kuhn --lineup nash random``.
"""
from .env import DEFAULT_MAX_CYCLES, ENV_NAME, KuhnParallelEnv, env, parallel_env, raw_env
from .rules.batched import BatchedKuhn
from .rules.engine import (ACTION_NAMES, BET, CARD_NAMES, NOOP, NUM_ACTIONS, PASS, Config, State, action_name,
                           apply_action, is_terminal, legal_actions, legal_mask, new_game, sample_consistent_state,
                           scores, winners)
from .rules.game import GAME
from .rules.observation import LAYOUT, OBS_SIZE, OBS_VERSION, decode, encode
from .rules.record import load_record, make_record, replay, save_record

__doc__ = __doc__ + "\n" + LAYOUT.markdown_table() + "\n"

__all__ = [
    "ACTION_NAMES", "BET", "BatchedKuhn", "CARD_NAMES", "Config", "DEFAULT_MAX_CYCLES", "ENV_NAME", "GAME",
    "KuhnParallelEnv", "LAYOUT", "NOOP", "NUM_ACTIONS", "OBS_SIZE", "OBS_VERSION", "PASS", "State", "action_name",
    "apply_action", "decode", "encode", "env", "is_terminal", "legal_actions", "legal_mask", "load_record",
    "make_record", "new_game", "parallel_env", "raw_env", "replay", "sample_consistent_state", "save_record",
    "scores", "winners",
]

# The single-agent Gymnasium view ("kuhn_env/Kuhn-v0"), registered by string entry point: nothing of
# a higher floor is imported here (hod.adapters.registration).
from hod.adapters.registration import register_gym_env as _register_gym_env  # noqa: E402

_register_gym_env(GAME)
