"""Test oracles: the earlier implementations kept as executable specifications.

``tapeo_batched`` (with ``tapeo_batched_scoring`` and ``tapeo_batched_obs``) is Tapeo's batched
numpy engine as it was before the compiled kernels (:mod:`tapeo_env.rules.kernels`) replaced
it in the package; ``tests/games/test_tapeo_batched.py`` plays many seeded games through both and
requires the same states, masks, observations, rewards and scores bit for bit.
``tapeo_scalar`` is Tapeo's single-game engine, scoring and observation encoder as they were
before the scalar API became a view over the same kernels; ``tests/games/test_tapeo_lockstep.py``,
``tests/games/test_tapeo_engine.py`` and ``tests/games/test_tapeo_scoring.py`` require the same states,
masks, observations, scores, winners and belief samples bit for bit (and
``tests/games/test_tapeo_batched.py`` replays the batched engine's games through it).

``robada_batched`` (with ``robada_batched_obs``) is Ronda Robada's batched numpy engine as it was
before the compiled kernels (:mod:`robada_env.rules.kernels`); ``tests/games/test_robada_batched.py``
plays it in lockstep with them. ``robada_scalar`` is Ronda Robada's single-game engine, run rules
and observation encoder as they were before the scalar API became a view over the same kernels;
``tests/games/test_robada_lockstep.py`` requires the same cards, masks, observations, scores, winners,
belief samples and refusals bit for bit. Nothing in the package imports these modules.
"""
