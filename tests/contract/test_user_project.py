"""A researcher's own project, with its own ``agents/``, ``training/`` and ``benchmarks/`` folders,
uses our environments, bots, tournament and shipped opponents: nothing of ours may resolve to
those folders (our import names are ``hod.*``, ``tapeo_env`` and ``robada_env``)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

#: The user's modules: importable, and holding none of our names. ``training/registration.py``
#: is what ``import tapeo_env`` used to need from a top-level ``training``.
USER_MODULES = {
    "agents/__init__.py": "WHOSE = 'user agents'\n",
    "training/__init__.py": "WHOSE = 'user training'\n",
    "training/loop.py": "def train():\n    return 'user loop'\n",
    "benchmarks/__init__.py": "WHOSE = 'user benchmarks'\n",
}

SCRIPT = textwrap.dedent("""
    import agents, training, benchmarks
    assert agents.WHOSE == "user agents" and training.WHOSE == "user training", (agents, training)
    assert benchmarks.WHOSE == "user benchmarks"

    import tapeo_env, robada_env
    from hod import agents as hod_agents
    from hod.core.games import game_names, get_game
    from hod.evaluation.tournament import run_tournament

    assert game_names() == ["kuhn", "robada", "tapeo"]
    made = []
    for game in game_names():
        info = get_game(game)
        env = info.module().raw_env(num_players=2, illegal_action="raise")
        env.reset(seed=0)
        obs, *_ = env.last()
        for name in hod_agents.names(game):
            bot = hod_agents.make(game, name, seed=0)
            if not getattr(bot, "needs_belief", False):
                assert obs["action_mask"][bot.act(obs)] == 1
            made.append(f"{game}:{name}")
    assert {"tapeo:ppo", "robada:ppo", "tapeo:expert", "robada:rollout"} <= set(made), made
    res = run_tournament("tapeo", ["ppo", "expert"], num_games=2, seed=0)
    assert res.num_games == 2
    import training.loop
    assert training.loop.train() == "user loop"
    print("ok", len(made))
""")


@pytest.mark.slow
def test_a_user_project_with_its_own_agents_training_benchmarks_folders(tmp_path):
    for rel, text in USER_MODULES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "main.py").write_text(SCRIPT)
    # run from the user's folder, as the user did: their folders come first on sys.path
    r = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok ")
