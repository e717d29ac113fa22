"""Tapeo (``tapeo_v0``): a simultaneous pick-and-pass tapas game for 2-6 players.

| | |
|---|---|
| Import | `from tapeo_env import env, parallel_env, raw_env` |
| Actions | Discrete(10) |
| Parallel API | yes (the natural form: picks are simultaneous) |
| Agents | `player_0` ... `player_{n-1}`, n = `num_players` (2-6) |
| Observation | dict: `observation` float32 (157,), `action_mask` int8 (10,) |

Every pick, each seat secretly picks a tapa from its hand; the picks are revealed together, go to
the pickers' bars, Freeloaders steal what their left neighbour revealed, and every hand is passed
left. The last tapa of each hand is revealed automatically. Three rounds, each dealt from the whole
reshuffled 84-tapa deck; churros are kept across rounds. The rules and rulings are in
`docs/tapeo_rules.md`; this page is also `docs/tapeo_env.md`.

Arguments: ``env(num_players=4, render_mode=None, reward_scheme="points", max_cycles=100,
round_rewards=False)``; the same for ``parallel_env`` and ``raw_env`` (which also take
``illegal_action``: ``"raise"`` by default for ``raw_env`` and ``TapeoParallelEnv``, ``"lose"``
for ``env()`` and ``parallel_env()``). Unknown options raise TypeError; a value outside its legal
set raises ``hod.core.errors.ConfigError`` naming the legal values.

Actions: one per kind of tapa (hams by slice count): 0 tortilla, 1 croqueta, 2 ham1, 3 ham2,
4 ham3, 5 prawns, 6 bread, 7 pepper, 8 freeloader, 9 churro. The mask marks the kinds in hand.

Rewards: at game end, by ``reward_scheme`` (``hod.core.rewards``: ``points``, ``win_loss``,
``margin``). With ``round_rewards=True`` each round's end pays the change of the scheme's value of
the standings (round scores so far, provisional winners by T10 with churros held; after the last
round, the final scores and winners), so the rewards of a game still add up to the final reward.
At the end ``infos[agent]`` holds ``final_score`` and ``win_share``.

Observation layout (seat-relative: own seat first, then the left neighbour, padded to 6 seats):
"""
from .rules.actions import ACTION_NAMES, NUM_ACTIONS, action_name
from .rules.cards import DECK_COMPOSITION, HAND_SIZES, NUM_KINDS
from .rules.engine import (Config, State, apply_actions, apply_picks, is_terminal, legal_actions, legal_mask,
                           legal_masks, new_game, sample_consistent_state, scores, winners)
from .env import DEFAULT_MAX_CYCLES, ENV_NAME, TapeoParallelEnv, env, parallel_env, raw_env
from .rules.game import GAME
from .rules.observation import LAYOUT, OBS_SIZE, OBS_VERSION, encode
from .rules.record import load_record, make_record, replay, save_record



__doc__ = __doc__ + "\n" + LAYOUT.markdown_table() + "\n"



__all__ = [
    "GAME", "env", "raw_env", "parallel_env", "TapeoParallelEnv", "ENV_NAME", "DEFAULT_MAX_CYCLES",
    "LAYOUT", "OBS_SIZE", "OBS_VERSION", "encode", "ACTION_NAMES", "NUM_ACTIONS", "action_name", "NUM_KINDS",
    "Config", "State", "new_game", "apply_actions", "apply_picks", "legal_actions", "legal_mask", "legal_masks",
    "is_terminal", "scores", "winners", "sample_consistent_state",
    "make_record", "replay", "save_record", "load_record", "DECK_COMPOSITION", "HAND_SIZES",
]

# The single-agent Gymnasium view ("tapeo_env/Tapeo-v0"), registered by string entry point: nothing of
# a higher floor is imported here (hod.adapters.registration).
from hod.adapters.registration import register_gym_env as _register_gym_env  # noqa: E402

_register_gym_env(GAME)
