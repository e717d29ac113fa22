"""Decision latency of each shipped ONNX opponent at batch 1, in Python and in a web page.

``python -m hod.benchmarks.decision_latency [--repeats 5] [--passes 20] [--out results/decision_latency]``

For every export in ``agents/opponents/`` (each with its golden file, ``hod.training.export``):

* **Python, graph**: onnxruntime (1 intra-op thread) runs the graph on one golden row at a time
  (the network input already built);
* **Python, bot**: :meth:`hod.agents.onnx_policy.OnnxPolicy.act` on the game's plain observation
  dict, what a game server calls per decision (for Ronda Robada's ``robada_ppo`` this includes
  the 135 ``robada_plans`` features computed by the Python planner);
* **browser, graph**: onnxruntime-web 1.30 (wasm, ``numThreads = 1``, files served from
  127.0.0.1) in headless chromium via Playwright (:class:`hod.benchmarks.browser.BrowserOnnx`), one
  golden row at a time, timed in the page with ``performance.now()`` around the whole loop. An
  export that is not self-contained (its input needs Python-side features) is measured too, on
  the golden network inputs, and marked: it cannot play in a page on its own.

Each figure is the median over ``--repeats`` timed runs of ``--passes`` passes over the golden
rows (after one warm-up pass), in microseconds per decision. The target is <= 1 ms per decision
in the browser. Writes ``OUT.md`` (a Markdown table) and ``OUT.json``.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path
from typing import Optional


from hod.benchmarks.browser import BrowserOnnx, self_contained
from hod.agents.onnx_policy import OPPONENTS_DIR, OnnxPolicy
from hod.core.atomic import atomic_write_many, json_bytes
from hod.core.commands import long_command
from hod.core.errors import ConfigError
from hod.evaluation.cli_options import prepare_out_prefix
from hod.training.export import golden_path, load_golden, sample_positions

PROG = "python -m hod.benchmarks.decision_latency"
#: The files of ``--out PREFIX``: ``PREFIX.md`` and ``PREFIX.json`` (the suffixes appended, so a
#: dotted prefix such as ``run.v2`` keeps its whole name).
OUT_SUFFIXES = (".md", ".json")
#: The target of issue 17: one decision in the browser within 1 ms.
TARGET_US = 1000.0


def _median_us(fn, rows: int, passes: int, repeats: int) -> float:
    """Median over ``repeats`` of the microseconds per call of ``fn(i)`` over ``passes`` passes of
    ``rows`` rows (one warm-up pass first)."""
    for i in range(rows):
        fn(i)
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(passes):
            for i in range(rows):
                fn(i)
        runs.append((time.perf_counter() - t0) / (passes * rows) * 1e6)
    return statistics.median(runs)


def measure(paths: list[Path], passes: int = 20, repeats: int = 5, browser: bool = True) -> list[dict]:
    """One row per export: ``{"model", "game", "self_contained", "python_graph_us", "python_bot_us",
    "browser_graph_us", "graph_decisions_timed"}`` (``browser_graph_us`` None when ``browser`` is False).

    Raises:
        FileNotFoundError: a golden file, onnxruntime-web or chromium is missing.
    """
    rows = []
    for path in paths:
        golden = load_golden(golden_path(path))
        obs, mask = golden["observation"], golden["action_mask"]
        policy = OnnxPolicy(path, threads=1)
        card = policy.model_card
        x = [(obs[i:i + 1], mask[i:i + 1]) for i in range(len(obs))]
        sess = policy.session

        def graph(i: int) -> None:
            sess.run(["action", "logits"], {"observation": x[i][0], "action_mask": x[i][1]})

        plain_obs, plain_mask = sample_positions(card["game"], card["player_counts"], len(obs), golden["seed"])
        dicts = [{"observation": plain_obs[i], "action_mask": plain_mask[i]} for i in range(len(plain_obs))]
        row = {"model": path.stem, "game": card["game"], "self_contained": self_contained(card)[0],
               "graph_decisions_timed": len(obs) * passes * repeats,
               "python_graph_us": _median_us(graph, len(obs), passes, repeats),
               "python_bot_us": _median_us(lambda i: policy.act(dicts[i]), len(dicts), max(1, passes // 4), repeats),
               "browser_graph_us": None}
        rows.append(row)
    if browser:
        with BrowserOnnx({p.stem: p for p in paths}) as page:
            for row, path in zip(rows, paths):
                golden = load_golden(golden_path(path))
                runs = [page.latency(path.stem, golden["observation"], golden["action_mask"], passes) * 1e6
                        for _ in range(repeats)]
                row["browser_graph_us"] = statistics.median(runs)
            version = page.version()
        for row in rows:
            row["onnxruntime_web"] = version
    return rows


def format_markdown(rows: list[dict], header: str) -> str:
    """The table of :func:`measure`'s rows, microseconds per decision at batch 1. The target
    column of an export that is not self-contained says "(graph only)": the page timed its graph
    on inputs computed in Python, not a whole decision."""
    lines = [header, "",
             "| export | game | plays in a page alone | Python graph (us) | Python bot act (us) | browser graph (us) "
             "| browser <= 1 ms |",
             "|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        b = r["browser_graph_us"]
        ok = "-" if b is None else ("yes" if b <= TARGET_US else "no")
        if b is not None and not r["self_contained"]:
            ok += " (graph only)"    # the page times the graph on inputs computed in Python
        alone = "yes" if r["self_contained"] else "no (needs Python features)"
        lines.append(f"| {r['model']} | {r['game']} | {alone} | {r['python_graph_us']:.0f} | {r['python_bot_us']:.0f} "
                     f"| {'-' if b is None else f'{b:.0f}'} | {ok} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> list[dict]:
    """Entry point: measure, print the table, write ``OUT.md`` and ``OUT.json`` (``--out`` with
    the suffixes appended), both or neither (:func:`hod.core.atomic.atomic_write_many`).

    Raises:
        SystemExit: status 2 with one usage error line for ``--passes`` or ``--repeats`` < 1 or an
            ``--out`` that cannot be written (:func:`hod.evaluation.cli_options.prepare_out_prefix`:
            a file where a folder should be, ``OUT.md`` or ``OUT.json`` a folder), before anything
            is measured; 130 (143) with one line on Ctrl-C (SIGTERM) and 74 with one line when a
            file cannot be written (:func:`hod.core.commands.long_command`).
    """
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passes", type=int, default=20, help="passes over the golden rows per timed run (default 20)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per figure; the median is reported (default 5)")
    ap.add_argument("--no-browser", action="store_true", help="Python only (no chromium needed)")
    ap.add_argument("--out", default="results/decision_latency", help="output prefix (default results/decision_latency)")
    args = ap.parse_args(argv)
    if args.passes < 1 or args.repeats < 1:
        ap.error(f"--passes {args.passes}, --repeats {args.repeats}: legal values: integers >= 1")
    try:   # before any measurement: a path that cannot be written fails now, not after the run
        prepare_out_prefix(args.out, OUT_SUFFIXES)
    except ConfigError as e:
        ap.error(str(e))
    paths = sorted(OPPONENTS_DIR.glob("*.onnx"))
    with long_command():
        rows = measure(paths, args.passes, args.repeats, not args.no_browser)
        header = (f"Decision latency at batch 1, median of {args.repeats} runs of {args.passes} passes over each "
                  f"export's golden rows; 1 thread; {platform.processor() or platform.machine()}, "
                  f"{time.strftime('%Y-%m-%d', time.gmtime())}.")
        text = format_markdown(rows, header)
        files = {".md": text.encode("utf-8"), ".json": json_bytes({"header": header, "rows": rows})}
        atomic_write_many([(args.out + suffix, files[suffix]) for suffix in OUT_SUFFIXES])
    print(text)
    return rows


if __name__ == "__main__":
    main()
