"""PPO self-play on Ray RLlib (the ``rllib`` extra): ``python -m hod.training.rllib``.

* :mod:`hod.training.rllib.module`: our action-masking RLModule (public RLlib API only).
* :mod:`hod.training.rllib.envs`: the fast path (batched engine, opponent pool inside a
  next-step-autoreset vector env) and the per-agent path (RLlib's ``PettingZooEnv``).
* :mod:`hod.training.rllib.bridge`: learner state <-> our data-only checkpoints.
* :mod:`hod.training.rllib.train`: the trainer and its command line.

Importing this package does not import Ray; its modules do (install with ``pip install .[rllib]``).
"""
