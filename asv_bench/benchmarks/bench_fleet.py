"""Fleet throughput: total samples (over all models) per second, K = 1 .. 10,000.

One ``Fleet.learn_many`` call updates K DFOP models (d = 10) with ``prange``
over models; ``n`` rows per model are chosen so that a call takes ~0.1-1 s.
Compared with ``bench_dfop.LearnMany`` (one DFOP, one call) this shows what
stacking and the parallel loop buy: K = 1 pays the parallel dispatch, large K
spreads models over cores and amortises the per-call cost.
"""

from __future__ import annotations

import numpy as np

from edgereg.fleet import Fleet

from .common import samples_per_second

FORGETTING = 0.01
D = 10
# rows per model: K * n = 2M samples for K >= 100, 1M for one model (0.1-1 s a call)
_N = {1: 1_000_000, 100: 20_000, 10_000: 200}
_TICKS = 200  # learn_one calls per measurement


def fleet_stream(K: int, n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """x ~ N(0, I), y_k = w_k.x + 0.1 noise per model."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(K, n, d))
    W = rng.normal(size=(K, d)) / np.sqrt(d)
    return X, np.einsum("knd,kd->kn", X, W) + 0.1 * rng.normal(size=(K, n))


class FleetLearnMany:
    """Fleet.learn_many: K models, n rows each, one call."""

    params = ([1, 100, 10_000], ["float64", "float32"])
    param_names = ["n_models", "dtype"]
    unit = "samples/s"
    timeout = 300

    def setup(self, K, dtype):
        n = _N[K]
        X, self.y = fleet_stream(K, n, D)
        self.X = X.astype(dtype)
        self.fleet = Fleet(K, D, FORGETTING, dtype=dtype)
        self.fleet.learn_many(self.X[:, :2], self.y[:, :2])  # compile / load from cache

    def time_learn_many(self, K, dtype):
        self.fleet.learn_many(self.X, self.y)

    def track_learn_many(self, K, dtype):
        return samples_per_second(
            lambda: self.fleet.learn_many(self.X, self.y), self.y.size, repeat=3,
            reset=self.fleet.reset,
        )

    track_learn_many.unit = "samples/s"


class FleetLearnOne:
    """Fleet.learn_one: one sample per model per call (a gateway's tick)."""

    params = [100, 10_000]
    param_names = ["n_models"]
    unit = "samples/s"

    def setup(self, K):
        self.X, self.y = fleet_stream(K, _TICKS, D)
        self.fleet = Fleet(K, D, FORGETTING)
        self.fleet.learn_one(self.X[:, 0], self.y[:, 0])

    def _ticks(self):
        for t in range(_TICKS):
            self.fleet.learn_one(self.X[:, t], self.y[:, t])

    def track_learn_one(self, K):
        return samples_per_second(self._ticks, self.y.size, reset=self.fleet.reset)

    track_learn_one.unit = "samples/s"
