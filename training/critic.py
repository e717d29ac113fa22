"""The whole-state critic (config key ``critic_input``): perfect-information training,
imperfect-information execution.

With ``critic_input = "observation"`` (the default) the trainer builds SB3's ``MlpPolicy``: the
actor and the critic are separate MLPs over the same flat observation. With ``critic_input =
"state"`` the learner env (:class:`hod.training.learner_env.LearnerVecEnv`, ``global_state=True``)
appends to every learner row the game's global state (PettingZoo's ``state()``: the declaration's
``state_layout``, seat-absolute, computed for the whole batch by the batched engine's
``global_state()``) and the one-hot seat of the learner of that row (``max_players`` entries, seat
0 first), so a row is::

    [ observation (obs_size, after the encoder) | global state (state_layout.size) | seat one-hot (max_players) ]

and the policy is :class:`StateCriticPolicy`: the same two MLPs, the actor's first layer reading
only the first ``obs_size`` columns (the observation), the critic's reading the whole row. The
actor's parameters (``mlp_extractor.policy_net``, ``action_net``) have the shapes and names of an
observation critic's, so everything that reads the actor (the pool's snapshots, evaluation, the
policy diagnostics, ONNX export, ``init_actor``) reads the observation only and is unchanged;
only the critic's first layer is wider (``obs_size + critic_extra(game)`` inputs). The action
masks are not touched. The critic is used only in training (it computes PPO's advantages), so the
state it sees never reaches play.

Checkpoints record it in the model card (:func:`card_entry`: ``"critic": {"input": "state",
"state_layout", "state_version", "extra"}``; absent for an observation critic, whose cards are
unchanged) and :mod:`hod.training.checkpoint` builds the policy from it (:func:`policy_spec`).
"""
from __future__ import annotations

from typing import Any, Optional

from hod.core.errors import ConfigError
from hod.core.games import GameInfo, get_game

#: Legal values of the config key ``critic_input``.
CRITIC_INPUTS = ("observation", "state")


def _info(game: Any) -> GameInfo:
    return game if isinstance(game, GameInfo) else get_game(game)


def critic_extra(game: Any) -> int:
    """Columns the learner env appends to each row for a state critic: the game's global-state
    size plus its ``max_players`` (the seat one-hot). E.g. Tapeo 153 + 6 = 159, Ronda Robada
    215 + 4 = 219.

    Raises:
        ConfigError: a game that declares no global state (``GameInfo.state_layout`` None).
    """
    info = _info(game)
    if info.state_layout is None:
        raise ConfigError(f"critic_input='state': {info.name!r} declares no global state (state_layout); legal "
                          f"for it: 'observation'")
    return int(info.state_layout.size) + int(info.max_players)


def check_critic_input(value: Any) -> str:
    """``value`` if it is one of :data:`CRITIC_INPUTS`.

    Raises:
        ConfigError: any other value (the legal ones are named).
    """
    if value not in CRITIC_INPUTS:
        raise ConfigError(f"critic_input={value!r}; legal values: {list(CRITIC_INPUTS)}")
    return value


def card_entry(game: Any, critic_input: str, obs_size: int) -> Optional[dict]:
    """The model card's ``"critic"`` entry: None for ``"observation"`` (the card stays as before),
    else ``{"input": "state", "state_layout": its name (``ObsLayout.game``), "state_version": v, "obs_size": obs_size,
    "extra": critic_extra(game)}``."""
    if check_critic_input(critic_input) == "observation":
        return None
    info = _info(game)
    return {"input": "state", "state_layout": info.state_layout.game, "state_version": int(info.state_layout.version),
            "obs_size": int(obs_size), "extra": critic_extra(info)}


def card_extra(card: dict, source: str) -> int:
    """The columns a checkpoint's critic reads beyond the observation: 0 without a ``"critic"``
    entry, else its ``extra``, checked against the installed game's global state (same layout
    name, version and size: a critic trained on another layout cannot be resumed).

    Raises:
        hod.agents.model_card.CheckpointError: a malformed entry or one of another layout.
    """
    from hod.agents.model_card import CheckpointError

    entry = card.get("critic")
    if entry is None:
        return 0
    try:
        want = card_entry(card["game"], "state", int(card["obs_size"]))
    except (ConfigError, KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{source}: the card's critic entry {entry!r} cannot be used: {e}") from None
    if entry != want:
        raise CheckpointError(f"{source}: the card's critic entry {entry!r} differs from this installation's "
                              f"{want!r} (another global-state layout); legal: {want!r}, or no entry (an "
                              f"observation critic)")
    return int(want["extra"])


def _split_extractor_class():
    from stable_baselines3.common.torch_layers import MlpExtractor
    from torch import nn

    class SplitMlpExtractor(MlpExtractor):
        """SB3's ``MlpExtractor`` whose actor reads the first ``actor_width`` features and whose
        critic reads them all (``feature_dim``). Same attributes (``policy_net``, ``value_net``,
        ``latent_dim_pi``, ``latent_dim_vf``) and parameter names as SB3's. Built as SB3's over
        ``actor_width`` features (the same random draws as an observation critic's network);
        :meth:`widen_critic` then gives the critic's first layer its ``feature_dim`` inputs."""

        def __init__(self, actor_width: int, feature_dim: int, net_arch, activation_fn, device) -> None:
            super().__init__(actor_width, net_arch=net_arch, activation_fn=activation_fn, device=device)
            self.actor_width, self.feature_dim = int(actor_width), int(feature_dim)

        def widen_critic(self) -> nn.Linear:
            """Replace the critic's first layer by a fresh ``Linear(feature_dim, width)``; returns it."""
            first = self.value_net[0]
            if not isinstance(first, nn.Linear):   # net_arch is never empty here (the config's schema)
                raise ValueError("a state critic needs at least one hidden layer")
            self.value_net[0] = nn.Linear(self.feature_dim, first.out_features).to(first.weight.device)
            return self.value_net[0]

        def forward_actor(self, features):
            return self.policy_net(features[..., :self.actor_width])

    return SplitMlpExtractor


def _policy_class():
    import numpy as np
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    Split = _split_extractor_class()

    class StateCriticPolicy(MaskableActorCriticPolicy):
        """sb3-contrib's ``MaskableActorCriticPolicy`` (flatten features, separate actor and critic
        MLPs) whose actor reads the first ``actor_width`` columns of the observation (the game's
        observation) and whose critic reads the whole row (observation, global state, seat).

        Initialization: the network is first built and initialized exactly as SB3's ``MlpPolicy``
        over ``actor_width`` inputs (the same torch random draws), then the critic's first layer
        is replaced by a wider one, initialized as SB3 does (orthogonal, gain sqrt(2), bias 0)
        inside ``torch.random.fork_rng`` (the generator is left as it was) and the optimizer is
        built over the parameters. So with the same seed the actor starts with the weights of an
        observation critic's run, and the torch generator (PPO's action sampling) is in the same
        state after construction.

        Args:
            actor_width: the observation's size (after the encoder), int >= 1.
            *args, **kwargs: as ``MaskableActorCriticPolicy``.
        """

        def __init__(self, *args: Any, actor_width: int, **kwargs: Any) -> None:
            self.actor_width = int(actor_width)
            super().__init__(*args, **kwargs)

        def _build_mlp_extractor(self) -> None:
            self.mlp_extractor = Split(self.actor_width, self.features_dim, self.net_arch, self.activation_fn,
                                       self.device)

        def _build(self, lr_schedule) -> None:
            super()._build(lr_schedule)
            with torch.random.fork_rng(devices=[]):
                layer = self.mlp_extractor.widen_critic()
                if self.ortho_init:
                    self.init_weights(layer, gain=np.sqrt(2))
            self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

        def _get_constructor_parameters(self) -> dict:
            return {**super()._get_constructor_parameters(), "actor_width": self.actor_width}

    return StateCriticPolicy


_POLICY = None


def state_critic_policy():
    """The :class:`StateCriticPolicy` class (built once, on first use: it needs torch and SB3)."""
    global _POLICY
    if _POLICY is None:
        _POLICY = _policy_class()
    return _POLICY


def policy_spec(critic_input: str, obs_size: int, policy_kwargs: dict) -> tuple[Any, dict]:
    """``(policy, policy_kwargs)`` for ``MaskablePPO``: ``("MlpPolicy", policy_kwargs)`` for an
    observation critic, ``(StateCriticPolicy, {**policy_kwargs, "actor_width": obs_size})`` for a
    state critic.

    Raises:
        ConfigError: an unknown ``critic_input`` (the legal values are named).
    """
    if check_critic_input(critic_input) == "observation":
        return "MlpPolicy", policy_kwargs
    return state_critic_policy(), {**policy_kwargs, "actor_width": int(obs_size)}
