"""The demo's training must end in a policy that reads its observation, not in a fixed list.

A short run of the demo's configuration (:func:`hod.apps.demo.demo_config`: the default Tapeo
config with the demo's warm start and learning rate), with fewer PPO steps, must end with a state
dependence (:func:`hod.training.diagnostics.state_dependence`: the share of decisions on fixed
positions where the policy's choice differs from its own best-fitting fixed ranking) above
:data:`MIN_STATE_DEPENDENCE`. The measures themselves are tested on hand-built policies in
test_policy_diagnostics.py.
"""
import pytest

from hod.apps.demo import demo_config
from hod.training import config as config_mod
from hod.training.train import Trainer

#: PPO steps of the run: 12 rollouts of 4,096. The default config (PPO from a random network)
#: falls from ~0.35 (untrained) to 0.02-0.09 by 24k steps and to 0.00-0.03 by 45k, so a policy that
#: collapses into a list the way the demo's used to has done so by then.
STEPS = 49_152

#: Threshold on the final state dependence. Measured at this budget, seeds 0, 1, 2: the default
#: config 0.004, 0.000, 0.000 (a fixed list), the demo's config 0.361, 0.331, 0.339. A random
#: untrained network measures ~0.36 and the clone of ``expert`` the run starts from ~0.40, so the
#: demo's values mean the policy still reads its observation. 0.15 is far above what a collapsed
#: policy measures (0.00-0.02: a list up to rare near-ties) and well below the demo config's
#: values here, leaving room for other seeds and machines and for PPO's slow drift towards a list
#: (the 300k-step demo still ends at 0.13-0.16, docs/training.md).
MIN_STATE_DEPENDENCE = 0.15


@pytest.mark.slow
def test_the_demo_config_ends_in_state_dependent_play(tmp_path):
    cfg = config_mod.override_keys(demo_config(STEPS, seed=0), {
        "eval_every": 0, "checkpoint_every": 10 * STEPS, "snapshot_every": STEPS // 4})
    trainer = Trainer("tapeo", cfg, tmp_path / "run", progress=False, verbose=0, log=None)
    summary = trainer.run()
    diag = summary["diagnostics"]
    assert summary["steps"] >= STEPS and diag is not None
    assert diag["state_dependence"] > MIN_STATE_DEPENDENCE, (
        f"the policy plays a fixed list: its choice differs from the ranking {diag['ranking_names']} on only "
        f"{100 * diag['state_dependence']:.1f}% of {diag['decisions']} positions "
        f"(saturated tanh units per layer: {diag['saturated']})")
