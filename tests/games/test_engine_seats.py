"""Both engines refuse a seat argument that is not a seat of the table, the same way
(ConfigError naming 0..n-1), and change nothing."""
from __future__ import annotations

import numpy as np
import pytest

import robada_env.rules.engine as re_
import tapeo_env.rules.engine as te
from hod.core.errors import ConfigError


def _games():
    t = te.new_game(te.Config(num_players=2), seed=0)
    r = re_.new_game(re_.Config(num_players=2), seed=0)
    rng = np.random.default_rng(0)
    return [
        ("tapeo", t, [lambda s: te.legal_actions(t, s), lambda s: te.legal_mask(t, s),
                      lambda s: te.check_pick(t, s, 0), lambda s: te.known_hands(t, s),
                      lambda s: te.unseen_counts(t, s), lambda s: te.sample_consistent_state(t, s, rng)]),
        ("robada", r, [lambda s: re_.legal_actions(r, s), lambda s: re_.legal_mask(r, s),
                       lambda s: re_.sample_consistent_state(r, s, rng)]),
    ]


@pytest.mark.parametrize("seat", [2, -1, 1.0, True, "0", None, np.float64(0)], ids=repr)
def test_bad_seat_is_a_config_error_naming_the_seats(seat):
    for game, state, calls in _games():
        for call in calls:
            if game == "robada" and seat is None and call is calls[0]:
                continue   # robada's legal_actions(state, None) means "the seat to act"
            with pytest.raises(ConfigError, match=r"seat=.* legal values: \[0, 1\]"):
                call(seat)


def test_good_seats_still_work():
    t = te.new_game(te.Config(num_players=2), seed=0)
    assert te.legal_actions(t, np.int64(1)) == te.legal_actions(t, 1)
    assert te.legal_actions(t, 0) != [] and te.legal_mask(t, 1).shape == (10,)
    r = re_.new_game(re_.Config(num_players=2), seed=0)
    assert re_.legal_actions(r, r.current) == re_.legal_actions(r) != []
    assert re_.legal_actions(r, 1 - r.current) == []
    assert re_.legal_mask(r, np.int64(1 - r.current)).tolist() == [0] * 26 + [1]
