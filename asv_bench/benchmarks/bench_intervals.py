"""What intervals and missing-input handling cost DFOP, in samples per second.

Targets, read in one asv run against the ``plain`` rows of the same class:
``coverage=0.9`` (the interval made before each row learnt, ``interval=True``)
at most 15% fewer samples/s than plain DFOP at d = 10 and 50;
``missing="reject"`` (the default) is plain DFOP, so its row is the baseline
itself; ``missing="impute"`` on complete rows is what a user pays for
turning imputation on when no value is missing (docs/design/missing-inputs.md).
"""

from __future__ import annotations

from edgereg import DFOP

from .common import linear_stream, samples_per_second

_N = {10: 40_000, 50: 6_000}
_MODES = {
    "plain": ({}, {}),
    "interval": ({"coverage": 0.9}, {"interval": True}),
    "impute": ({"missing": "impute"}, {}),
}


class IntervalLearnMany:
    """learn_many of DFOP(d, 0.01): plain, with prequential intervals, with imputation on."""

    params = ([10, 50], list(_MODES))
    param_names = ["n_features", "mode"]

    def setup(self, d, mode):
        self.X, self.y = linear_stream(_N[d], d)
        made, self.call = _MODES[mode]
        self.model = DFOP(d, 0.01, **made)
        self.model.learn_many(self.X[:10], self.y[:10], **self.call)  # compile

    def track_learn_many(self, d, mode):
        return samples_per_second(
            lambda: self.model.learn_many(self.X, self.y, **self.call), len(self.y),
            reset=self.model.reset,
        )

    track_learn_many.unit = "samples/s"


class IntervalLearnOne:
    """learn_one of DFOP(10, 0.01) from a Python loop, plain or with its interval."""

    params = ([10], ["plain", "interval"])
    param_names = ["n_features", "mode"]

    def setup(self, d, mode):
        X, y = linear_stream(10_000, d)
        self.rows = list(X)
        self.targets = [float(v) for v in y]
        made, self.call = _MODES[mode]
        self.model = DFOP(d, 0.01, **made)
        self.model.learn_one(self.rows[0], self.targets[0], **self.call)

    def _loop(self):
        learn, call = self.model.learn_one, self.call
        for x, y in zip(self.rows, self.targets, strict=True):
            learn(x, y, **call)

    def track_learn_one(self, d, mode):
        return samples_per_second(self._loop, len(self.rows), reset=self.model.reset)

    track_learn_one.unit = "samples/s"
