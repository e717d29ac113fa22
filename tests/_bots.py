"""Bots shared by the tests of both games' play commands (tests/apps/test_play_*.py)."""
from hod.agents.base import Bot


class Scripted(Bot):
    """Plays the given actions in order, checking that each is in the action mask."""

    def __init__(self, moves):
        super().__init__(seed=0)
        self.moves = list(moves)

    def act(self, observation, belief=None):
        a = self.moves.pop(0)
        assert observation["action_mask"][a] == 1
        return a
