"""Throughput of MORES and its baselines (docs/algorithms/mores.md).

d is the number of inputs *excluding* the intercept (fit_intercept=True, so
the model works with D = d + 1). The paper reports 2,204 updates/s on Barrett
WAM (d = 21, m = 7) in MATLAB.
"""

from __future__ import annotations

import numpy as np

from edgereg import MORES, SOMOR, PARegressor

from .common import samples_per_second

SIZES = [(5, 2), (21, 7), (50, 10)]


def _stream(n: int, d: int, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, m)) / np.sqrt(d)
    return X, X @ W + 0.1 * rng.normal(size=(n, m))


class MORESThroughput:
    """learn_many updates per second of MORES, per (d, m)."""

    params = [SIZES]
    param_names = ["d_m"]
    unit = "samples/s"
    n = 2000

    def setup(self, d_m: tuple[int, int]) -> None:
        d, m = d_m
        self.X, self.Y = _stream(self.n, d, m)
        self.model = MORES(d, m)
        self.model.learn_many(self.X[:50], self.Y[:50])  # compile
        # the timed block starts from a model that has seen a stream (steady state)
        self.model.learn_many(self.X, self.Y)

    def track_learn_many(self, d_m: tuple[int, int]) -> float:
        return samples_per_second(lambda: self.model.learn_many(self.X, self.Y), self.n, 5)

    def track_learn_one(self, d_m: tuple[int, int]) -> float:
        X, Y, model = self.X[:500], self.Y[:500], self.model

        def run() -> None:
            for t in range(500):
                model.learn_one(X[t], Y[t])

        return samples_per_second(run, 500, 3)

    def time_learn_many(self, d_m: tuple[int, int]) -> None:
        self.model.learn_many(self.X, self.Y)

    track_learn_many.unit = "samples/s"  # type: ignore[attr-defined]
    track_learn_one.unit = "samples/s"  # type: ignore[attr-defined]


class BaselineThroughput:
    """learn_many updates per second of SOMOR, PA-I and PA-II."""

    params = [SIZES, ["SOMOR", "PA-I", "PA-II"]]
    param_names = ["d_m", "model"]
    unit = "samples/s"
    n = 20000

    def setup(self, d_m: tuple[int, int], name: str) -> None:
        d, m = d_m
        self.X, self.Y = _stream(self.n, d, m)
        if name == "SOMOR":
            self.model = SOMOR(d, m)
        else:
            self.model = PARegressor(d, m, variant=name[3:])
        self.model.learn_many(self.X[:10], self.Y[:10])

    def track_learn_many(self, d_m: tuple[int, int], name: str) -> float:
        return samples_per_second(lambda: self.model.learn_many(self.X, self.Y), self.n, 5)

    def time_learn_many(self, d_m: tuple[int, int], name: str) -> None:
        self.model.learn_many(self.X, self.Y)

    track_learn_many.unit = "samples/s"  # type: ignore[attr-defined]


class MORESColdStart:
    """Import plus first call, with numba's on-disk cache warm."""

    def setup_cache(self) -> None:
        MORES(21, 7).learn_many(np.zeros((2, 21)), np.zeros((2, 7)))

    def time_import_and_first_learn(self) -> None:
        import subprocess
        import sys

        subprocess.run(
            [sys.executable, "-c",
             "import numpy as np; from edgereg import MORES; "
             "MORES(21, 7).learn_many(np.zeros((2, 21)), np.zeros((2, 7)))"],
            check=True,
        )
