"""A bot playing a torch ``MaskablePPO`` training checkpoint (needs the ``train`` extras).

For sharing and for the shipped opponents prefer the ONNX export
(:class:`hod.agents.onnx_policy.OnnxPolicy`, no torch); this bot is for evaluating checkpoints
straight from training and for checking exports against.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import numpy as np

from hod.agents.base import BeliefSampler, Bot, Observation, legal_actions
from hod.agents.encoders import get_encoder
from hod.training.checkpoint import load_checkpoint


class PPOBot(Bot):
    """Plays the policy of a checkpoint written by ``hod.training.train``, always with the action mask.

    Args:
        checkpoint: the ``.zip`` file.
        game: the game it must play (checked against the model card; None: the card's game).
        num_players: a table size the policy must have been trained on (None: not checked).
        deterministic: argmax of the masked distribution (default); False samples from it with
            the bot's generator.
        seed: the bot's seed.
        device: torch device.

    Raises:
        CheckpointError (a ValueError): see :func:`hod.training.checkpoint.load_checkpoint` (other
            game, player count or layout version; truncated or corrupt file; a pickle-based SB3
            archive or a member holding pickled objects, refused without unpickling).
    """

    name = "ppo_torch"

    def __init__(self, checkpoint: str | Path, game: Optional[str] = None, num_players: Optional[int] = None,
                 deterministic: bool = True, seed: Optional[int] = None, device: str = "cpu", **options: Any) -> None:
        super().__init__(seed=seed, **options)

        self.model, self.model_card, _ = load_checkpoint(checkpoint, game=game, num_players=num_players, device=device)
        self.game = self.model_card["game"]
        self.player_counts = tuple(int(k) for k in self.model_card["player_counts"])
        self.deterministic = deterministic
        self.encoder = get_encoder(self.model_card.get("obs_encoder", "none"), self.game)

    def _input(self, observation: Observation) -> np.ndarray:
        """The network input: the observation with the card's encoder features appended."""
        return self.encoder.encode(observation["observation"], observation["action_mask"])

    def probabilities(self, observation: Observation) -> np.ndarray:
        """Masked action probabilities, float64 (num_actions,)."""
        import torch

        obs, _ = self.model.policy.obs_to_tensor(self._input(observation))
        mask = np.asarray(observation["action_mask"]).astype(bool)[None]
        with torch.no_grad():
            dist = self.model.policy.get_distribution(obs, action_masks=mask)
            p = dist.distribution.probs[0].cpu().numpy().astype(np.float64)
        return p / p.sum()

    def act(self, observation: Observation, belief: Optional[BeliefSampler] = None) -> int:
        legal_actions(observation)  # raises on an empty mask
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if self.deterministic:
            action, _ = self.model.predict(self._input(observation),
                                           action_masks=mask, deterministic=True)
            return int(action)
        p = self.probabilities(observation)
        return int(self.rng.choice(p.size, p=p))
