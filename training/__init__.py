"""PPO self-play training (sb3-contrib ``MaskablePPO``), checkpoints and ONNX export.

Modules: :mod:`training.single_agent` (Gymnasium view), :mod:`training.table` and
:mod:`training.vec_env` (training envs), :mod:`training.pool` (opponent pool),
:mod:`training.train` (CLI), :mod:`training.checkpoint` / :mod:`training.card` (checkpoints and
model cards), :mod:`training.export` (ONNX). See docs/training.md. Importing this package does
not import torch.
"""
