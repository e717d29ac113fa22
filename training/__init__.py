"""PPO self-play training (sb3-contrib ``MaskablePPO``), checkpoints and ONNX export.

Modules: :mod:`hod.training.learner_env` (the learner vector env over any game's batched engine),
:mod:`hod.training.table` and :mod:`hod.training.vec_env` (single-game training tables, for search
opponents), :mod:`hod.training.single_agent` (Gymnasium view), :mod:`hod.training.pool` (opponent pool),
:mod:`hod.training.train` (CLI), :mod:`hod.training.checkpoint` / :mod:`hod.agents.model_card` (checkpoints and
model cards), :mod:`hod.training.export` (ONNX). See docs/training.md. Importing this package does
not import torch.
"""
