"""Observation encoders: what a policy network reads, computed from a seat's observation dict.

The environments emit each game's observation layout (``<game>_env.LAYOUT``). A
policy may read that vector as it is (encoder ``"none"``) or with features appended that are a
pure function of the observation and the action mask (so they reveal nothing the seat does not
know). The encoder is part of a policy: training records its name in the model card
(``obs_encoder``; a card without the key means ``"none"``) and every player of the policy (the
training env, the opponent pool's snapshots, :class:`hod.agents.onnx_policy.OnnxPolicy`,
:class:`hod.training.ppo_bot.PPOBot`) applies the same one, so the network input is
``concat(observation, features)``, float32 ``(layout size + extra,)``.

=================  ========  =====  ==================================================
name               game      extra  features
=================  ========  =====  ==================================================
``none``           any       0      (the observation as it is)
``robada_plans``   robada    135    :mod:`hod.agents.robada_features` (the expert's plan values per action)
``robada_v2``      robada    270    :mod:`robada_env.rules.action_features` (the rules' per-action
                                    summaries): the input is observation layout ``robada`` v2,
                                    the env's own ``observation_version=2`` vector
=================  ========  =====  ==================================================
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

from hod.core.errors import ConfigError

from robada_env.rules.action_features import SIZE as _V2_SIZE
from robada_env.rules.action_features import action_features

from .robada_features import plan_features_batch
from .rules import check_rules, robada_rules

__all__ = ["Encoder", "ENCODERS", "get_encoder"]


@dataclass(frozen=True)
class Encoder:
    """An observation encoder.

    Attributes:
        name: registry name (recorded in model cards as ``obs_encoder``).
        game: the game it applies to (None: any).
        extra: features appended to the observation.
        batch_fn: ``(observations float32 (M, obs), masks (M, A), **rules) -> float32 (M, extra)``
            (None for the identity).
        rules: the table's rule options the features are computed under (``{}``: the
            published rules); set with :meth:`with_rules`.
        layout_version: when the encoded vector is itself a versioned observation layout of the
            game (``robada_v2``: layout ``robada`` v2, the env's ``observation_version=2``), that
            version; else None (the network input is the observation plus extra features).
    """

    name: str
    game: Optional[str]
    extra: int
    batch_fn: Optional[Callable[..., np.ndarray]] = None
    rules: tuple = ()
    layout_version: Optional[int] = None

    def with_rules(self, **options: Any) -> "Encoder":
        """This encoder computing its features under the table's rule options (e.g.
        ``closing_ace=False`` for ``robada_plans``); an encoder whose features do not depend on
        the rules (``none``) is returned as it is (the caller checks the options for its game).

        Raises:
            ConfigError: an option the encoder's game does not have, or a bad value (the legal
                ones are named; :func:`hod.agents.rules.check_rules`).
        """
        if not options or self.identity or self.game is None:
            return self
        check_rules(self.game, options)
        return replace(self, rules=tuple(sorted(options.items())))

    @property
    def identity(self) -> bool:
        """True for the encoder that appends nothing (``"none"``)."""
        return self.extra == 0

    def encode_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """float32 (M, obs + extra): each observation with its features appended.

        Raises:
            ValueError: shapes the encoder does not accept, a mask allowing nothing, or a vector
                that is not an observation of the encoder's game (from ``batch_fn``).
        """
        obs = np.asarray(observations, np.float32)
        if self.identity:
            return obs
        return np.concatenate([obs, self.batch_fn(obs, action_masks, **dict(self.rules))], axis=1)

    def encode(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """float32 (obs + extra,): one observation with its features appended.

        Raises:
            ValueError: as :meth:`encode_batch`.
        """
        obs = np.asarray(observation, np.float32)
        if self.identity:
            return obs
        return self.encode_batch(obs[None], np.asarray(action_mask)[None])[0]

    def network_input(self, observations: np.ndarray, action_masks: np.ndarray, width: int) -> np.ndarray:
        """The input of a network ``width`` wide that reads through this encoder.

        Args:
            observations: float32 (M, W): the game's observations (W = ``width - extra``; the
                features are appended here) or already encoded ones (W = ``width``, kept as they are).
            action_masks: (M, A), the observations' masks.
            width: the network's input width.

        Returns:
            float32 (M, width).

        Raises:
            ValueError: another W (the legal widths are named), or as :meth:`encode_batch`.
        """
        obs = np.asarray(observations, np.float32)
        w = obs.shape[-1] if obs.ndim == 2 else -1
        if w == width:
            return obs
        if not self.identity and w == width - self.extra:
            return self.encode_batch(obs, action_masks)
        if self.identity:
            raise ValueError(f"expected observation (B, {width}), got {obs.shape}")
        raise ValueError(f"observations {obs.shape} do not fit: legal widths {[width - self.extra, width]} "
                         f"(the game's observation, or with the {self.name!r} encoder's features appended)")

    def size(self, obs_size: int) -> int:
        """Network input width for an observation of ``obs_size`` floats."""
        return int(obs_size) + self.extra


def _robada_plans(obs: np.ndarray, masks: np.ndarray, **rules: Any) -> np.ndarray:
    return plan_features_batch(obs, masks, robada_rules(None, dict(rules)) if rules else None)


def _robada_v2(obs: np.ndarray, masks: np.ndarray, **rules: Any) -> np.ndarray:
    return action_features(obs, masks, robada_rules(None, dict(rules)) if rules else None)


ENCODERS: dict[str, Encoder] = {
    "none": Encoder("none", None, 0),
    "robada_plans": Encoder("robada_plans", "robada", 135, _robada_plans),
    "robada_v2": Encoder("robada_v2", "robada", _V2_SIZE, _robada_v2, layout_version=2),
}


def get_encoder(name: Optional[str], game: Optional[str] = None) -> Encoder:
    """The encoder ``name`` (None means ``"none"``), checked against ``game`` when given.

    Raises:
        ConfigError: unknown name, or an encoder of another game (legal values are named).
    """
    key = "none" if name is None else name
    enc = ENCODERS.get(key) if isinstance(key, str) else None
    if enc is None:
        raise ConfigError(f"unknown obs_encoder {name!r}; legal values: {sorted(ENCODERS)}")
    if game is not None and enc.game not in (None, game):
        legal = sorted(k for k, e in ENCODERS.items() if e.game in (None, game))
        raise ConfigError(f"obs_encoder {name!r} is for {enc.game!r}, not {game!r}; legal values for {game}: {legal}")
    return enc
