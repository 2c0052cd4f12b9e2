"""float32 against float64, model by model, in one run.

``track_learn_many`` in samples per second for each model at one
representative size, dtype a parameter, so that the float32 / float64 ratio
of every model comes from the same run. DFOP's own sweep over d is
``bench_dfop.LearnMany``; the models built on DFOP's kernels (SparseDFOP,
DFOPBank, Fleet's) compute in float32 with them, the others store float32 and
compute in float64 (docs/design/float32.md has the measured table).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import edgereg

from .common import linear_stream, samples_per_second

#: name -> (factory(dtype), kind, rows)
MODELS = {
    "DFOP d=50": (lambda dt: edgereg.DFOP(50, 0.01, dtype=dt), "regression", 40_000),
    "DFOPBank auto d=50": (lambda dt: edgereg.DFOP(50, "auto", dtype=dt), "regression", 4_000),
    "SparseDFOP D=1e5 d=100": (lambda dt: edgereg.SparseDFOP(100_000, 100, dtype=dt),
                               "sparse", 10_000),
    "NORMA rbf d=10 budget=200": (lambda dt: edgereg.NORMARegressor(10, dtype=dt),
                                  "regression", 20_000),
    "MORES d=21 m=7": (lambda dt: edgereg.MORES(21, 7, dtype=dt), "multioutput", 2_000),
    "SOMOR d=21 m=7": (lambda dt: edgereg.SOMOR(21, 7, dtype=dt), "multioutput", 100_000),
    "SelectiveSampler d=50": (lambda dt: edgereg.SelectiveSampler(50, dtype=dt),
                              "classification", 40_000),
}


def _data(model, kind, n):
    rng = np.random.default_rng(0)
    if kind == "sparse":
        X = sp.random(n, model.n_features, density=10 / model.n_features, format="csr", rng=rng)
        return X, rng.normal(size=n)
    if kind == "multioutput":
        X = rng.normal(size=(n, model.n_features))
        return X, X @ rng.normal(size=(model.n_features, model.n_outputs))
    X, y = linear_stream(n, model.n_features)
    if kind == "classification":
        return X, np.where(y > 0, 1.0, -1.0)
    return X, y


class Float32Models:
    """learn_many of each model in float64 and float32."""

    params = (list(MODELS), ["float64", "float32"])
    param_names = ["model", "dtype"]
    timeout = 300

    def setup(self, name, dtype):
        make, kind, n = MODELS[name]
        self.model = make(dtype)
        X, self.y = _data(self.model, kind, n)
        self.X = X.astype(dtype)
        self.model.learn_many(self.X[:4], self.y[:4])  # compile / load from cache

    def track_learn_many(self, name, dtype):
        return samples_per_second(
            lambda: self.model.learn_many(self.X, self.y), self.y.shape[0], repeat=3,
            reset=self.model.reset,
        )

    track_learn_many.unit = "samples/s"
