"""Best-response exploitability (hod.training.best_response) and bot options of the training
opponents and evaluation baselines (``heuristic_options``, ``baseline_options``): tiny runs."""
from __future__ import annotations

import json

import pytest

from hod.core.errors import ConfigError
from hod.training import best_response as br
from hod.training import config as C
from hod.training.diagnostics import probe_positions
from hod.training.evaluate import evaluate_policy
from hod.training.evaluate import main as evaluate_main
from hod.training.ppo_bot import PPOBot

#: a tiny learner: 2 tables x 32 steps = rollouts of 64 learner steps
TINY = {"tables": 2, "learner_seats": 1, "n_steps": 32, "batch_size": 64, "n_epochs": 1, "net_arch": [16]}


def test_tiny_best_response_run(tmp_path):
    row = br.best_response("tapeo", "greedy", tmp_path / "greedy", players=2, steps=128, seed=3, evaluations=2,
                           eval_games=6, overrides=TINY, log=None)
    # 128 steps = two rollouts of 2 tables x 32 steps; evaluations every 128 // 2 = 64 steps:
    # at 0 (untrained), 64 and 128
    assert row["steps"] == 128 and row["engine"] == "batched" and row["target"] == "greedy"
    assert [p["steps"] for p in row["curve"]] == [0, 64, 128]
    assert all(p["games"] == 6 for p in row["curve"])          # 6 games: a multiple of 2 players
    assert row["final"] == row["curve"][-1] and row["par"] == 0.5
    for p in row["curve"]:
        lo, hi = p["win_ci"]
        assert 0.0 <= lo <= p["win_rate"] <= hi <= 1.0
        assert round(p["win_rate"] * 6 * 2) == p["win_rate"] * 6 * 2   # ties share a win: multiples of 1/12
    # the learner's network plays only legal actions (its checkpoint, on 300 seeded positions)
    bot = PPOBot(tmp_path / "greedy" / "checkpoints" / "final.zip", game="tapeo", num_players=2)
    obs, masks = probe_positions("tapeo", [2], 300, seed=1)
    acts = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert all(m[a] == 1 for a, m in zip(acts, masks))
    # the pool held the target alone, with every other seat
    card = json.loads((tmp_path / "greedy" / "checkpoints" / "final.json").read_text())
    pool = card["pool"]
    assert pool["heuristics"] == ["greedy"] and pool["probabilities"] == {"latest": 0.0, "past": 0.0, "heuristic": 1.0}
    # outputs: JSON, Markdown table row, PNG of the curves
    paths = br.save_outputs(tmp_path, [row])
    assert json.loads(paths[0].read_text())["rows"][0]["final"] == row["final"]
    md = paths[1].read_text()
    f = row["final"]
    assert "| tapeo | 2 | greedy | 128 | " in md and f"{100 * f['win_rate']:.1f}%" in md
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_best_response_to_a_search_bot_gives_it_beliefs(tmp_path):
    # a search target plays in the single-game tables, which give it belief samples: a search bot
    # asked without them raises ConfigError, so the run finishing means they were given
    row = br.best_response("tapeo", "search", tmp_path, players=2, steps=64, seed=0, evaluations=1, eval_games=2,
                           target_options={"determinizations": 1, "candidates": 2}, overrides=TINY, log=None)
    assert row["engine"] == "single" and row["target_options"] == {"determinizations": 1, "candidates": 2}
    assert [p["steps"] for p in row["curve"]] == [0, 64]
    assert br.target_label(row) == "search (determinizations=1, candidates=2)"


@pytest.mark.parametrize("kwargs, words", [
    ({"target": "nobody"}, ["'nobody'", "'expert'", "'search'"]),
    ({"target": "expert", "players": 7}, ["players", "[2, 3, 4, 5, 6]"]),
    ({"target": "expert", "steps": 0}, ["steps=0", ">= 1"]),
    ({"target": "expert", "evaluations": 0}, ["evaluations=0", ">= 1"]),
    ({"target": "search", "target_options": {"depth": 3}}, ["'depth'", "'determinizations'"]),
    ({"target": "search", "target_options": 4}, ["target_options=4", "a dict"]),
    # named as the caller gave them (it said "baseline_options['random']", the key they fill)
    ({"target": "random", "target_options": {"x": 1}}, ["target_options (--target-options) of 'random': unknown "
                                                        "option(s) ['x'] for tapeo bot 'random'",
                                                        "legal options: ['seed', 'num_players']"]),
    ({"target": "search", "engine": "batched"}, ["search bots", "engine='single'"]),
    ({"target": "expert", "engine": "gpu"}, ["'gpu'", "'single'", "'batched'"]),
])
def test_bad_options_are_refused_naming_legal_values(kwargs, words):
    with pytest.raises(ConfigError) as e:
        br.best_response_config("tapeo", **kwargs)
    for w in words:
        assert w in str(e.value)


def test_command_refuses_bad_options_before_training(tmp_path, capsys):
    # "ranking" is a Tapeo bot only: Ronda Robada's registered names are listed instead
    assert br.main(["--game", "robada", "--target", "ranking", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "'rollout'" in err and "'expert'" in err and "'search'" in err
    assert br.main(["--game", "tapeo", "--target", "greedy", "--target-options", '{"search": {}}',
                    "--out", str(tmp_path)]) == 2
    assert "not targets" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())   # nothing written


# ---- bot options of pool opponents and evaluation baselines -------------------------------------
def test_shipped_tapeo_config_evaluates_against_a_small_search():
    flat = C.flatten(C.load_config("tapeo"))
    assert "search" in flat["baselines"]
    assert flat["baseline_options"]["search"]["determinizations"] < 32   # below the bot's default budget
    C.validate_config("tapeo", C.load_config("tapeo"))


@pytest.mark.parametrize("keys, words", [
    ({"baseline_options": {"search": {"depth": 2}}}, ["baseline_options['search']", "'depth'", "'determinizations'"]),
    ({"baseline_options": {"nobody": {}}}, ["'nobody'", "'ranking'", "'search'"]),
    ({"baseline_options": {"search": {"determinizations": 0}}}, ["determinizations=0", "integers in 1..4096"]),
    ({"heuristic_options": {"expert": {"speed": 1}}}, ["heuristic_options['expert']", "'speed'", "'params'"]),
    ({"heuristics": ["search"], "engine": "batched"}, ["search bots", "engine='single'"]),
])
def test_bot_options_are_checked_by_the_schema(keys, words):
    cfg = C.override_keys(C.load_config("tapeo"), {"heuristics": ["expert"], **keys})
    with pytest.raises(ConfigError) as e:
        C.validate_config("tapeo", cfg)
    for w in words:
        assert w in str(e.value)


def test_evaluation_against_a_search_baseline_with_options():
    rows = evaluate_policy("tapeo", lambda: __import__("hod.agents", fromlist=["make"]).make("tapeo", "greedy", seed=0),
                           ["search", "random"], [2], 2, seed=0,
                           baseline_options={"search": {"determinizations": 1, "candidates": 2}})
    assert [r["baseline"] for r in rows] == ["search", "random"]
    assert rows[0]["baseline_options"] == {"determinizations": 1, "candidates": 2} and "baseline_options" not in rows[1]
    assert all(r["games"] == 2 for r in rows)
    with pytest.raises(ConfigError, match="'determinizations'"):
        evaluate_policy("tapeo", None, ["search"], [2], 2, baseline_options={"search": {"depth": 1}})


def test_evaluate_command_takes_baseline_options(tmp_path, capsys):
    out = tmp_path / "ev"
    assert evaluate_main(["greedy", "--game", "tapeo", "--baselines", "search", "--players", "2", "--games", "2",
                          "--baseline-options", '{"search": {"determinizations": 1, "candidates": 1}}',
                          "--out", str(out), "--no-progress"]) == 0
    rows = json.loads((tmp_path / "ev.json").read_text())["rows"]
    assert rows[0]["baseline_options"] == {"determinizations": 1, "candidates": 1}
    assert evaluate_main(["greedy", "--game", "tapeo", "--baselines", "search", "--players", "2",
                          "--baseline-options", '{"search": {"budget": 1}}']) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "'budget'" in err and "'determinizations'" in err


def test_pool_search_opponent_in_single_tables(tmp_path):
    # a search bot as a training opponent of the single-game tables, with its options
    from hod.training.train import Trainer

    cfg = C.smoke_config("tapeo", heuristics=["search"], heuristic_options={"search": {"determinizations": 1,
                                                                                        "candidates": 2}},
                         p_latest=0.0, p_past=0.0, p_heuristic=1.0, learner_seats=1, total_steps=64)
    t = Trainer("tapeo", cfg, tmp_path, progress=False, log=None)
    assert t.run()["steps"] == 64
    bots = [b for table in t.env.tables for b in table._bots.values()]
    assert bots and all(b.name == "search" and b.determinizations == 1 and b.candidates == 2 for b in bots)


def test_help_shows_a_percent_sign_and_each_default_once():
    from hod.training import train

    text = " ".join(br.build_parser().format_help().split())
    assert "report its win rate against that bot over training, with 95% intervals;" in text and "%%" not in text
    assert "(default: None)" not in text and "(default: True)" not in text and "(default: False)" not in text
    assert "--config CONFIG TOML training config (default: <game package>/training.toml) --out OUT output folder" \
        in text
    assert "--players PLAYERS table size (default: 2)" in text   # a real default is still shown
    text = " ".join(train.build_parser("kuhn", C.load_config("kuhn")).format_help().split())
    assert ("--force start a new run in a folder that holds one: the old run's checkpoints/ and tb/ are deleted "
            "first, so that no checkpoint of it stays beside the new run's --no-progress no progress bar --verbose") in text
    assert "--verbose {0,1,2} verbosity (SB3: 1 prints rollout tables, 2 debug messages) (default: 0)" in text
