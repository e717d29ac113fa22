"""The Tapeo expert's scorer as first written, in Python, one observation at a time: the oracle of
the compiled scorer (:func:`hod.agents.tapeo_expert_kernels.expert_values`), which replaced it in
:class:`hod.agents.tapeo_bots.ExpertBot` once the two agreed bit for bit on every entry of
thousands of rows (tests/agents/test_tapeo_expert_batch.py). The rules are those of
``ExpertBot``'s class docstring (tapeo.txt 'Tips and strategy'); the scoring numbers come from
:mod:`tapeo_env.rules.scoring`.

``ScalarExpert(params, rulings).values(decode(observation), legal)`` is float64 (10,), the value of
each kind (only the entries of ``legal`` are meaningful).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from hod.agents.tapeo_bots import _EPS, ExpertParams, _ham_deltas, _majority_delta, immediate_gains
from tapeo_env.rules.cards import (BREAD, CHURRO, CROQUETA, FREELOADER, HAM_KINDS, HAM_SLICES, NUM_KINDS, PRAWNS,
                                   TORTILLA)
from tapeo_env.rules.observation import ObsView
from tapeo_env.rules.scoring import DEFAULT_RULINGS, Rulings, churro_points, croqueta_points


def _churro_delta(churros, seat: int, rulings: Rulings) -> float:
    """Change of ``seat``'s end-of-game :func:`churro_points` for one more churro."""
    return _majority_delta(churro_points, churros, seat, 1, rulings)


class ScalarExpert:
    """The Python scorer of the Tapeo expert (module docstring)."""

    def __init__(self, params: ExpertParams = ExpertParams(), rulings: Rulings = DEFAULT_RULINGS) -> None:
        self.params = params
        self.rulings = rulings

    def values(self, view: ObsView, legal: np.ndarray) -> np.ndarray:
        """Expected value (points) of each kind for the observer, float64 (NUM_KINDS,); only the
        entries of ``legal`` are meaningful. See the class docstring for the rules."""
        prm, rul = self.params, self.rulings
        n = view.num_players
        ch = view.cards_in_hand
        last = ch <= 2
        present = np.flatnonzero(view.hand)
        steal = view.hand[FREELOADER] and view.known[0]  # rule 7 values the left hand's kinds too
        gains = immediate_gains(view, 0, rul, np.flatnonzero(view.hand + view.known_hands[0]) if steal else present)
        if last:
            gains = self._last_pick_gains(view, gains, present)
        val = gains.copy()
        density = self._density(view)
        more1, expected = self._prospects(density, ch)
        me = view.bars[0]

        if not last:
            # Rule 2: start pairs; bread waiting for prawns.
            if me[TORTILLA] % 2 == 0:
                val[TORTILLA] = (rul.tortilla_pair - prm.pair_cost) * more1[TORTILLA]
            if me[BREAD] >= me[PRAWNS]:
                val[BREAD] = rul.bread_dip * prm.bread_weight * more1[PRAWNS]
            # Rule 3: commit to croquetas.
            c = int(me[CROQUETA])
            x = prm.commit * expected[CROQUETA]
            val[CROQUETA] = _croq_interp(c + 1 + x, rul) - _croq_interp(c + x, rul)
        # Rule 5: ham majority, now and projected.
        if any(view.hand[k] for k in HAM_KINDS):
            slices = view.bars @ HAM_SLICES
            ham_density = float(density @ HAM_SLICES)
            future = ch - 1
            proj = np.rint(slices + future * ham_density * prm.take_rate).astype(np.int64)
            proj_d = _ham_deltas(proj, 0, rul)
            for i, k in enumerate(HAM_KINDS):
                val[k] = prm.ham_now * gains[k] + (1 - prm.ham_now) * proj_d[i]
        # Rule 5: churros.
        if view.hand[CHURRO]:
            val[CHURRO] = self._churro_value(view, density, gains[CHURRO])
        # Rules 6 and 7: the left neighbour.
        deny = prm.deny[n - 2]
        # the left neighbour modelled as greedy, on the kinds it may see now
        lk = np.flatnonzero(view.hand + view.known_hands[0]) if view.known[0] else present
        left = immediate_gains(view, 1, rul, lk)
        if view.hand[FREELOADER]:
            val[FREELOADER] = self._freeloader_value(view, val, left, deny)
        hand = view.hand
        lv = left[present]
        best_all = lv.max()
        for a in legal:
            if hand[a] == 1:
                rest = lv[present != a]
                if rest.size:
                    val[a] += deny * (best_all - rest.max())
        return val

    def _last_pick_gains(self, view: ObsView, gains: np.ndarray, present: np.ndarray) -> np.ndarray:
        """Rule 2 at the last decision: the tapa revealed automatically after it is the one the
        right neighbour leaves of the two-tapa hand it holds now (known: the observer held it).
        The right neighbour is modelled as greedy; the immediate gains are taken against the bar
        plus that tapa (averaged over the right neighbour's tied choices)."""
        n = view.num_players
        if not view.known[n - 2]:
            return gains
        rh = view.known_hands[n - 2]
        kinds = np.flatnonzero(rh)
        rv = immediate_gains(view, n - 1, self.rulings, kinds)[kinds]
        taken = kinds[rv >= rv.max() - _EPS]
        out = np.zeros(NUM_KINDS)
        for k in taken:
            rest = rh.copy()
            rest[k] -= 1
            auto = int(np.argmax(rest))
            bars = view.bars.copy()
            bars[0, auto] += 1
            churros = view.churros.copy()
            churros[0] += auto == CHURRO
            out += immediate_gains(replace(view, bars=bars, churros=churros), 0, self.rulings, present)
        return out / len(taken)

    def _density(self, view: ObsView) -> np.ndarray:
        """Expected share of each kind among the tapas going round (every hand, the observer's
        included): known hands exactly, unseen hands by the unseen counts. float64 (K,)."""
        n, ch = view.num_players, view.cards_in_hand
        total = view.hand.astype(np.float64)
        unknown = n - 1 - int(view.known.sum())
        if view.known.any():
            total = total + view.known_hands[view.known].sum(axis=0)
        us = view.unseen.sum()
        if unknown and us:
            total = total + view.unseen * (unknown * ch / us)
        s = total.sum()
        return total / s if s else total

    def _prospects(self, density: np.ndarray, ch: int) -> tuple[np.ndarray, np.ndarray]:
        """(P(at least one more of each kind reaches the observer and it takes it), expected number
        it takes) over the rest of the round: later picks from hands of ``ch - i`` tapas at
        ``take_rate``, then the automatic last tapa (always taken)."""
        rate = self.params.take_rate
        miss = np.ones(NUM_KINDS)
        exp = np.zeros(NUM_KINDS)
        for i in range(1, ch):
            size = ch - i
            p_in = 1.0 - (1.0 - density) ** size
            q = p_in * rate if size > 1 else density
            miss *= 1.0 - q
            exp += q
        return 1.0 - miss, exp

    def _churro_value(self, view: ObsView, density: np.ndarray, now: float) -> float:
        """Rule 5 for churros: end-of-game churro standing (T9)."""
        prm = self.params
        if view.round >= 2:
            future = view.cards_in_hand - 1
            proj = np.rint(view.churros + future * density[CHURRO] * prm.take_rate).astype(np.int64)
            return 0.5 * now + 0.5 * _churro_delta(proj, 0, self.rulings)
        r = view.round
        return prm.churro_now[r] * now + (1 - prm.churro_now[r]) * prm.churro_base[r]

    def _freeloader_value(self, view: ObsView, val: np.ndarray, left: np.ndarray, deny: float) -> float:
        """Rule 7: value of the tapa the left neighbour is predicted to reveal now."""
        if not view.known[0]:
            return self.params.freeloader_unknown
        lh = view.known_hands[0]
        kinds = np.flatnonzero(lh)
        lv = left[kinds]
        top = kinds[lv >= lv.max() - _EPS]
        stolen = [k for k in top if k != FREELOADER]
        if not stolen or len(stolen) < len(top) / 2:
            return 0.0
        mine = np.array([val[k] if k != FREELOADER else 0.0 for k in stolen])
        theirs = np.array([left[k] for k in stolen])
        return float(np.mean(mine + deny * theirs))


def _croq_interp(x: float, rulings: Rulings) -> float:
    """Croqueta points (:func:`croqueta_points`) linearly interpolated between whole counts."""
    lo = int(np.floor(x))
    a = croqueta_points(lo, rulings)
    b = croqueta_points(lo + 1, rulings)
    return a + (x - lo) * (b - a)


