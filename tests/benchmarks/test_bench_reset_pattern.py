"""The speed harnesses' reset pattern: only the first reset of a run is seeded, later games use a
plain ``reset()`` (the same for our envs and the PettingZoo peers). No timing is checked."""
from gymnasium.spaces import Discrete

from hod.benchmarks import env_speed, throughput


class _FakeAEC:
    """Two agents, two decisions per game; records the keyword arguments of every reset."""

    def __init__(self, log):
        self.log = log

    def reset(self, **kwargs):
        self.log.append(kwargs)
        self._left = 2

    def agent_iter(self):
        while self._left > 0:
            yield "a" if self._left % 2 else "b"

    def last(self):
        return {"action_mask": [0, 1, 1]}, 0.0, False, False, {}

    def step(self, action):
        assert action in (1, 2)
        self._left -= 1

    def action_space(self, agent):
        return Discrete(3)


class _FakeParallel:
    """Two agents, one joint step per game (RPS-like: no mask); records every reset's keywords."""

    def __init__(self, log):
        self.log = log
        self.agents = []

    def reset(self, **kwargs):
        self.log.append(kwargs)
        self.agents = ["a", "b"]
        return {a: None for a in self.agents}, {}

    def step(self, actions):
        self.agents = []
        return {}, {}, {}, {}, {}

    def action_space(self, agent):
        return Discrete(3)


def _check(log, seed):
    assert len(log) > 1
    assert log[0] == {"seed": seed}
    assert all(kw == {} for kw in log[1:])   # plain reset()


def test_env_speed_seeds_only_the_first_reset():
    for bench, fake in ((env_speed.bench_aec, _FakeAEC), (env_speed.bench_parallel, _FakeParallel)):
        log = []
        r = bench(lambda: fake(log), 20, seed=7)
        assert r["games"] == len(log) == 10
        _check(log, 7)


def test_throughput_runs_seed_only_their_first_reset():
    for bench, fake in ((env_speed.bench_aec, _FakeAEC), (env_speed.bench_parallel, _FakeParallel)):
        envs = []

        def make():
            envs.append([])
            return fake(envs[-1])
        throughput._steps_bench(bench, make, 0.0, 3)
        assert len(envs) == 4                # the sizing probe, then 3 timed runs
        _check(envs[0], 0)
        for i, log in enumerate(envs[1:]):
            _check(log, i)
