"""A two-node Ray cluster on this machine and the RLlib trainer joined to it, run by
``tests/training/test_rllib.py::test_two_node_cluster_puts_env_runners_on_both_nodes`` in a process of its own.

``python tests/_rllib_cluster.py OUT``: starts a head and a second node (Ray's own multi-node
test helper, ``ray.cluster_utils.Cluster``; 1 CPU each, both at 127.0.0.1), builds
:class:`hod.training.rllib.train.RLlibTrainer` with ``address=`` the head's GCS address (the path
of ``--address HOST:PORT``) and 2 env runners, which 1 CPU per node can only hold one on each
node, asks every env runner for its node id, trains 2 iterations into ``OUT`` and prints one JSON
line: ``head``/``worker`` (node ids), ``alive`` (nodes alive), ``runner_nodes``/``runner_ips``
(per env runner), ``steps``, ``iterations``, ``checkpoint``, ``temp`` (Ray's folder, removed).

The nodes are stopped by their handles (``cluster.shutdown()``), also on SIGTERM (the test's
timeout), never by ``ray stop``. Ray's default temp folder is a fresh one (``RAY_TMPDIR``), so
the cluster's address file (``ray_current_cluster``) and session logs stay out of ``/tmp/ray``
and no other Ray on the machine finds this cluster.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile


def main(out: str) -> int:
    tmp = tempfile.mkdtemp(prefix="hod_ray_")   # short: Ray's socket paths must stay under 107 bytes
    os.makedirs(os.path.join(tmp, "ray"))
    os.environ["RAY_TMPDIR"] = tmp
    # 0: one machine, every node at 127.0.0.1 (nodes started in this process; Ray's CLI would
    # refuse a second `ray start` with 0, docs/rllib.md)
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # run the finally below

    import ray
    from ray.cluster_utils import Cluster

    from hod.training import config as config_mod
    from hod.training.rllib.train import RLlibTrainer

    cluster = None
    try:
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1",
                                                                "include_dashboard": False})
        worker = cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        cluster.wait_for_nodes()
        # one iteration: n_steps * tables * learner_seats per env runner, 2 runners
        cfg = config_mod.smoke_config("tapeo", players=[2], tables=2, learner_seats=2, net_arch=[16],
                                      engine="batched", n_steps=8, batch_size=32, n_epochs=1, total_steps=128,
                                      eval_every=0, checkpoint_every=1_000_000, snapshot_every=1_000_000)
        trainer = RLlibTrainer("tapeo", cfg, out, env_runners=2, address=cluster.address, progress=False, log=None)
        trainer.start()
        group = trainer.algo.env_runner_group
        runner_nodes = group.foreach_env_runner(lambda r: ray.get_runtime_context().get_node_id(),
                                                local_env_runner=False)
        runner_ips = group.foreach_env_runner(lambda r: ray.util.get_node_ip_address(), local_env_runner=False)
        alive = sum(1 for n in ray.nodes() if n["Alive"])
        summary = trainer.run()
        print(json.dumps({"head": cluster.head_node.node_id, "worker": worker.node_id, "alive": alive,
                          "runner_nodes": runner_nodes, "runner_ips": runner_ips, "steps": summary["steps"],
                          "iterations": summary["iterations"], "checkpoint": summary["checkpoint"], "temp": tmp}),
              flush=True)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
