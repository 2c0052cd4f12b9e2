"""DFOP with forgetting="auto" (a DFOPBank) in samples per second.

Targets, read against bench_dfop's DFOP in the same asv run: at most 6x
DFOP's time at d = 10 and 50, learn_one >= 500 k/s at d = 10.
``window4`` is the default bank (a window of 4 members sliding on the
lattice of every rate, and its scout: 5 members; the name is kept for the
benchmark's history); ``grid6`` the fixed 6-member grid 0..0.1 it replaced
(docs/design/auto-forgetting.md).
"""

from __future__ import annotations

from edgereg import DFOP
from edgereg.bank import DEFAULT_GRID

from .common import linear_stream, samples_per_second

_N = {10: 40_000, 50: 6_000}
_GRIDS = {"window4": {}, "grid6": {"forgetting_grid": DEFAULT_GRID}}


class AutoLearnMany:
    """learn_many of DFOP(d, "auto"): every member over the block, then the weights."""

    params = ([10, 50], ["window4", "grid6"])
    param_names = ["n_features", "grid"]

    def setup(self, d, grid):
        self.X, self.y = linear_stream(_N[d], d)
        self.model = DFOP(d, "auto", **_GRIDS[grid])
        self.model.learn_many(self.X[:10], self.y[:10])  # compile

    def track_learn_many(self, d, grid):
        return samples_per_second(
            lambda: self.model.learn_many(self.X, self.y), len(self.y), reset=self.model.reset
        )

    track_learn_many.unit = "samples/s"


class AutoLearnOne:
    """learn_one of DFOP(d, "auto") from a Python loop."""

    params = ([10], ["window4", "grid6"])
    param_names = ["n_features", "grid"]

    def setup(self, d, grid):
        X, y = linear_stream(10_000, d)
        self.rows = list(X)
        self.targets = [float(v) for v in y]
        self.model = DFOP(d, "auto", **_GRIDS[grid])
        self.model.learn_one(self.rows[0], self.targets[0])

    def _loop(self):
        learn = self.model.learn_one
        for x, y in zip(self.rows, self.targets, strict=True):
            learn(x, y)

    def track_learn_one(self, d, grid):
        return samples_per_second(self._loop, len(self.rows), reset=self.model.reset)

    track_learn_one.unit = "samples/s"
