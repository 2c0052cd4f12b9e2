"""Budgeted NORMA throughput (docs/algorithms/norma.md).

``learn_many`` over a stream with the ring buffer already full, so every step
pays the whole budget: RBF over the full grid budget x d, the other kernels at
d = 10, budget = 200. Target: >= 1 M samples/s at d = 10, budget 200, RBF.
"""

from __future__ import annotations

import numpy as np

from benchmarks.common import linear_stream, samples_per_second
from edgereg import NORMAClassifier, NORMARegressor

N_SAMPLES = 20_000


def _filled(model, X, y):
    """Learn until the ring buffer is full (squared loss stores every step)."""
    model.learn_many(X[: 2 * model.budget], y[: 2 * model.budget])
    assert model.n_support_ == model.budget
    return model


class NORMARBF:
    params = ([50, 200, 1000], [2, 10, 100])
    param_names = ["budget", "n_features"]
    unit = "samples/s"

    def setup(self, budget: int, n_features: int) -> None:
        X, y = linear_stream(N_SAMPLES + 2 * budget, n_features)
        self.X, self.y = X[2 * budget:], y[2 * budget:]
        # gamma ~ 1/d keeps the kernel values away from 0 and 1 at every d.
        self.model = _filled(
            NORMARegressor(n_features, budget, "rbf", gamma=1.0 / n_features), X, y
        )
        self.model.learn_many(self.X[:10], self.y[:10])  # compiled

    def track_learn_many(self, budget: int, n_features: int) -> float:
        return samples_per_second(lambda: self.model.learn_many(self.X, self.y), len(self.X), 3)

    def time_learn_many(self, budget: int, n_features: int) -> None:
        self.model.learn_many(self.X, self.y)

    def track_predict_many(self, budget: int, n_features: int) -> float:
        return samples_per_second(lambda: self.model.predict_many(self.X), len(self.X), 3)

    track_learn_many.unit = track_predict_many.unit = "samples/s"  # type: ignore[attr-defined]


class NORMAKernels:
    params = (["rbf", "laplacian", "polynomial", "linear"],)
    param_names = ["kernel"]

    def setup(self, kernel: str) -> None:
        d, budget = 10, 200
        X, y = linear_stream(N_SAMPLES + 2 * budget, d)
        self.X, self.y = X[2 * budget:], y[2 * budget:]
        self.model = _filled(
            NORMARegressor(d, budget, kernel, gamma=1.0 / d, degree=2, learning_rate=0.01),
            X, y,
        )
        self.model.learn_many(self.X[:10], self.y[:10])

    def track_learn_many(self, kernel: str) -> float:
        return samples_per_second(lambda: self.model.learn_many(self.X, self.y), len(self.X), 3)

    def time_learn_many(self, kernel: str) -> None:
        self.model.learn_many(self.X, self.y)

    track_learn_many.unit = "samples/s"  # type: ignore[attr-defined]


class NORMAOneSample:
    """Per-sample path (one kernel dispatch per call) at d = 10, budget 200."""

    unit = "samples/s"

    def setup(self) -> None:
        X, y = linear_stream(2_400, 10)
        self.X, self.y = X[400:], np.where(y[400:] >= 0, 1.0, -1.0)
        self.model = NORMAClassifier(10, 200, "rbf", gamma=0.1, margin=10.0)
        self.model.learn_many(X[:400], np.where(y[:400] >= 0, 1.0, -1.0))
        self.model.learn_one(self.X[0], self.y[0])

    def track_learn_one(self) -> float:
        def run() -> None:
            for x, y in zip(self.X, self.y, strict=True):
                self.model.learn_one(x, y)

        return samples_per_second(run, len(self.X), 3)

    track_learn_one.unit = "samples/s"  # type: ignore[attr-defined]
