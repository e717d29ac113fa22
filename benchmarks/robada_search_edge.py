"""Where the rollout search's edge over the expert is (Ronda Robada, issue 15 section 1).

``python -m hod.benchmarks.robada_search_edge [--players 2] [--deals 60] [--determinizations 24]
[--variants uniform hands deck both inference] [--predictability 40] [--seed 0] [--out PREFIX]``

The rollout bot (:class:`hod.agents.robada_search.RolloutBot`, the same playouts and candidates
for every variant) plays one seat against the expert in the others, on ``--deals`` seeded deals,
each replayed with the bot in every seat (duplicate deals). The variants differ only in what its
determinizations know (measurement tools: they read the true state, so they are never registered
as playable bots):

* ``uniform``: the tournament's belief, other hands and deck reshuffled (``rollout`` itself);
* ``hands``: the opponents' current hands are the true ones, the deck is reshuffled (the bound on
  what inference about hands can give);
* ``deck``: the deck keeps its true order, the opponents' hands are redrawn uniformly from the
  hidden cards, and the cards this moves out of the hands take the deck places freed, in random
  order (at 2 players the true deck order *as a set* would give the opponent's hand away, since
  the hidden cards are its hand plus the deck; this is the nearest separable version);
* ``both``: the true state (no hidden card);
* ``inference``: the belief from the opponents' play (:mod:`hod.agents.robada_inference`, the
  ``search`` bot's, with the playout score of ``rollout``: win share + margin / 100).

``--predictability G``: in ``G`` expert-only games, at every decision of seat 0, the posterior of
each opponent's hand under the exact-expert model: the prior and posterior probability of its
true hand shape (counts per rank), the information gained (log2 of their ratio), and the share
of the prior mass its plays this deal rule out; also the share of the experts' decisions (with
more than one legal action) whose action some hand shape consistent with the table would not
have taken (informative decisions).

Timing: wall-clock per variant; on a shared machine the figures are slower than on a quiet one.
"""
from __future__ import annotations

import argparse
import math
import time
from typing import Callable, Optional, Sequence

import numpy as np

from hod.agents.robada_bots import ExpertBot
from hod.agents.robada_inference import (_COMB, ExpertModel, InferenceBelief, _shapes, current_deal_decisions,
                                         hand_posteriors)
from hod.agents.robada_search import RolloutBot
from hod.core.atomic import atomic_write_json
from hod.core.commands import long_command
from hod.core.deal import SEED_LIMIT
from hod.core.errors import ConfigError
from hod.evaluation.cli_options import SEED_OPTION, int_option, prepare_out_prefix
from hod.evaluation.stats import deal_means, t_interval, wilson_interval
from robada_env.rules import engine
from robada_env.rules.cards import NUM_RANKS
from robada_env.rules.engine import Config, State
from robada_env.rules.observation import encode

PROG = "python -m hod.benchmarks.robada_search_edge"
VARIANTS = ("uniform", "hands", "deck", "both", "inference")
#: ``--predictability``'s game ``g`` deals from seed ``seed * PREDICTABILITY_STRIDE + g``.
PREDICTABILITY_STRIDE = 100_000


def predictability_seed_limit(games: int) -> int:
    """The largest ``--seed`` whose ``--predictability games`` deal seeds
    (``seed * PREDICTABILITY_STRIDE + g``, g < ``games``) all lie in the deals' range
    ``0..2**64-1`` (:data:`hod.core.deal.SEED_LIMIT`)."""
    return (SEED_LIMIT - max(games, 1)) // PREDICTABILITY_STRIDE


def _hidden_pool(s: State, seat: int) -> list:
    return [c for j in range(s.n) if j != seat for c in s.hands[j]] + list(s.deck)


def privileged_belief(variant: str, s: State, seat: int) -> Callable:
    """``belief(rng) -> State`` of one variant (see the module docstring) on the true state ``s``."""
    def uniform(rng):
        return engine.sample_consistent_state(s, seat, rng)

    def hands(rng):
        out = s.clone()
        out.deck_order = None
        out.deck = [s.deck[i] for i in rng.permutation(len(s.deck))]
        out._legal = None
        return out

    def deck(rng):
        out = s.clone()
        out.deck_order = None
        pool = _hidden_pool(s, seat)
        pool = [pool[i] for i in rng.permutation(len(pool))]
        at = 0
        old = {c for j in range(s.n) if j != seat for c in s.hands[j]}
        new = set()
        for j in range(s.n):
            if j != seat:
                out.hands[j] = pool[at:at + len(s.hands[j])]
                new.update(out.hands[j])
                at += len(s.hands[j])
        displaced = [c for c in old if c not in new]
        displaced = [displaced[i] for i in rng.permutation(len(displaced))]
        out.deck = [c if c not in new else displaced.pop() for c in s.deck]
        out._legal = None
        return out

    def both(rng):
        out = s.clone()
        out.deck_order = None
        return out

    return {"uniform": uniform, "hands": hands, "deck": deck, "both": both}[variant]


class _InferenceRollout(RolloutBot):
    """``rollout``'s playouts and score on the ``search`` bot's belief (the ``inference`` variant)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.model = ExpertModel(self.rules, epsilon=0.05)

    def _determinizations(self, observation, belief):
        base = belief(self.rng)
        inference = InferenceBelief(base, base.current, self.model)
        for _ in range(self.determinizations):
            yield inference.draw(self.rng)


def play_variant(variant: str, n: int, deals: int, dets: int, seed: int) -> dict:
    """Win share and margin of the variant's bot against ``n - 1`` experts (duplicate deals)."""
    config = Config(num_players=n)
    seqs = np.random.SeedSequence(seed).spawn(deals)
    share, margin, deal_of = [], [], []
    t0 = time.time()
    for d, ss in enumerate(seqs):
        deal_seed, bot_seed = (int(x) for x in ss.generate_state(2, np.uint64)[:2])
        for seat in range(n):
            cls = _InferenceRollout if variant == "inference" else RolloutBot
            bot = cls(seed=bot_seed % 2**31, determinizations=dets, rules=config)
            experts = [ExpertBot(seed=(bot_seed + k + 1) % 2**31, rules=config) for k in range(n)]
            s = engine.new_game(config, seed=deal_seed)
            while not s.terminal:
                p = s.current
                obs = {"observation": encode(s, p), "action_mask": engine.legal_mask(s, p)}
                if p == seat:
                    b = engine.sample_consistent_state if variant in ("uniform", "inference") else None
                    belief = (lambda rng, st=s: b(st, seat, rng)) if b else privileged_belief(variant, s, seat)
                    a = bot.act(obs, belief)
                else:
                    a = experts[p].act(obs)
                engine.apply_action(s, a)
            pts = s.points
            best = max(pts)
            share.append(1.0 / pts.count(best) if pts[seat] == best else 0.0)
            margin.append(pts[seat] - (sum(pts) - pts[seat]) / (n - 1))
            deal_of.append(d)
    g = len(share)
    lo, hi = wilson_interval(sum(share), g)
    m, mlo, mhi = t_interval(deal_means(np.array(margin), np.array(deal_of)))
    return {"variant": variant, "games": g, "win_rate": sum(share) / g, "win_ci": (lo, hi),
            "margin": m, "margin_ci": (mlo, mhi), "seconds": time.time() - t0}


def predictability(games: int, seed: int, n: int = 2) -> dict:
    """How much the experts' plays reveal of their hands (module docstring, ``--predictability``)."""
    config = Config(num_players=n)
    model = ExpertModel(config)
    rng = np.random.default_rng(seed)
    gain, prior_true, post_true, ruled_out = [], [], [], []
    informative = decisions = 0
    mass: list = []
    done: set = set()
    for g in range(games):
        experts = [ExpertBot(seed=seed * 1000 + g * n + k, rules=config) for k in range(n)]
        s = engine.new_game(config, seed=seed * PREDICTABILITY_STRIDE + g)
        cache: dict = {}
        while not s.terminal:
            p = s.current
            obs = {"observation": encode(s, p), "action_mask": engine.legal_mask(s, p)}
            if p == 0:
                b = engine.sample_consistent_state(s, 0, rng)
                pool = np.array(unseen_counts(s, 0))
                for d in current_deal_decisions(b, 0):
                    if (g, d.index) in done:
                        continue
                    done.add((g, d.index))
                    size = len(s.hands[d.seat])
                    shapes = _shapes(size, pool)
                    probs = np.array([model.probability(d.view_with_hand(d.hand_at(m)),
                                                        d.legal_with_hand(d.hand_at(m)), d.action)
                                      for m in shapes.tolist()])
                    legal_true = d.legal_with_hand(d.hand_at(
                        np.bincount([c % NUM_RANKS for c in s.hands[d.seat]], minlength=NUM_RANKS).tolist()))
                    if len(legal_true) < 2:
                        continue
                    prior = _COMB[pool[None, :], shapes].prod(axis=1)
                    decisions += 1
                    informative += bool((probs == 0).any())
                    mass.append(float((prior * probs).sum() / prior.sum()))
                for post in hand_posteriors(b, 0, model, cache):
                    prior = _COMB[pool[None, :], post.hands].prod(axis=1)
                    prior = prior / prior.sum()
                    w = prior * post.likelihood
                    true = np.bincount([c % NUM_RANKS for c in s.hands[post.seat]], minlength=NUM_RANKS)
                    i = int(np.flatnonzero((post.hands == true).all(axis=1))[0])
                    prior_true.append(prior[i])
                    post_true.append(w[i] / w.sum())
                    gain.append(math.log2(post_true[-1] / prior_true[-1]))
                    ruled_out.append(1.0 - w.sum())
            engine.apply_action(s, experts[p].act(obs))
    return {"games": games, "observer_decisions": len(gain), "prior_p_true": float(np.mean(prior_true)),
            "posterior_p_true": float(np.mean(post_true)), "bits_gained": float(np.mean(gain)),
            "prior_mass_ruled_out": float(np.mean(ruled_out)), "expert_decisions": decisions,
            "informative_share": informative / max(decisions, 1),
            "likelihood_mass": float(np.mean(mass)) if mass else math.nan}


def unseen_counts(s: State, seat: int) -> list:
    """(10,) the cards of each rank ``seat`` has not seen (others' hands and the deck)."""
    cnt = [0] * NUM_RANKS
    for c in _hidden_pool(s, seat):
        cnt[c % NUM_RANKS] += 1
    return cnt


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point: play every ``--variants`` belief (:func:`play_variant`) and print the Markdown
    table (win rate and mean margin with 95% CIs, wall-clock s); with ``--predictability G``, also
    the table of :func:`predictability`; with ``--out PREFIX``, write all of it to ``PREFIX.json``
    (atomically). Returns 0, or 2 with argparse's usage error for a bad option (nothing run): an
    ``--out`` that cannot be written (:func:`hod.evaluation.cli_options.prepare_out_prefix`), a
    ``--seed`` whose ``--predictability`` deal seeds would pass 2**64-1
    (:func:`predictability_seed_limit`). Ctrl-C (SIGTERM): one line, status 130 (143)
    (:func:`hod.core.commands.long_command`)."""
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    ap.add_argument("--deals", type=int_option(1), default=60, help="deals per variant, >= 1 (default 60)")
    ap.add_argument("--determinizations", type=int_option(1), default=24, help=">= 1 (default 24)")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS,
                    help="one or more beliefs to measure (default all); given without a value it was an empty run")
    ap.add_argument("--predictability", type=int_option(0), default=0, metavar="GAMES", help=">= 0 (default 0: none)")
    ap.add_argument("--seed", type=SEED_OPTION, default=0, help="0..2**64-1 (default 0)")
    ap.add_argument("--out", default=None, help="write PREFIX.json")
    args = ap.parse_args(argv)
    if args.predictability and args.seed > predictability_seed_limit(args.predictability):
        ap.error(f"--seed {args.seed} with --predictability {args.predictability}: its deal seeds "
                 f"seed * {PREDICTABILITY_STRIDE} + game pass 2**64-1; legal values: --seed "
                 f"0..{predictability_seed_limit(args.predictability)} with --predictability {args.predictability}")
    if args.out:   # before any game: a path that cannot be written fails now, not after the run
        try:
            prepare_out_prefix(args.out, (".json",))
        except ConfigError as e:
            ap.error(str(e))
    with long_command():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """:func:`main`'s work once the options are checked."""
    rows = []
    print("| belief | games | win rate | 95% CI (Wilson) | mean margin | 95% CI | wall-clock s |")
    print("|---|---:|---:|---|---:|---|---:|")
    for v in args.variants:
        r = play_variant(v, args.players, args.deals, args.determinizations, args.seed)
        rows.append(r)
        print(f"| {v} | {r['games']} | {100 * r['win_rate']:.1f}% | [{100 * r['win_ci'][0]:.1f}%, "
              f"{100 * r['win_ci'][1]:.1f}%] | {r['margin']:.2f} | [{r['margin_ci'][0]:.2f}, "
              f"{r['margin_ci'][1]:.2f}] | {r['seconds']:.0f} |", flush=True)
    out = {"players": args.players, "deals": args.deals, "determinizations": args.determinizations,
           "seed": args.seed, "variants": rows}
    if args.predictability:
        p = predictability(args.predictability, args.seed, args.players)
        out["predictability"] = p
        print("\n| measure | value |\n|---|---:|")
        for k, v in p.items():
            print(f"| {k} | {v:.4g} |" if isinstance(v, float) else f"| {k} | {v} |")
    if args.out:
        atomic_write_json(args.out + ".json", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
