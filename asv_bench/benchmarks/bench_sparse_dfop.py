"""Sparse-DFOP throughput (docs/algorithms/sparse_dfop.md) against DFOP on the same sparse stream.

Stream: rows with ``nnz`` non-zeros at random columns of R^D (N(0, 1) values),
y linear in x. Sparse-DFOP (d = 100) takes it as CSR; DFOP(n_features=1000)
takes the same rows dense (it has no sparse path), only at D = 1000.

``track_predict_many`` isolates the projection psi = M x (plus a length-d dot
product): for "hashed" at nnz = 100 it is the column generator's speed, the
part of ``track_learn_many`` that is not DFOP's step (target: learn_many >=
50,000 samples/s at D = 10^6, nnz = 100, d = 100).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from edgereg import DFOP, SparseDFOP

from .common import samples_per_second

N = 2000
N_DFOP = 200  # DFOP at D = 1000 runs ~2 k samples/s: a shorter block


def sparse_stream(n: int, D: int, nnz: int, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    """n rows with nnz distinct random columns each (CSR, sorted), y = w.x + noise."""
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.integers(0, D, size=(n, nnz)), axis=1)
    X = sp.csr_matrix((rng.normal(size=n * nnz), cols.ravel(), np.arange(0, n * nnz + 1, nnz)),
                      shape=(n, D))
    X.sum_duplicates()
    w = np.zeros(D)
    support = rng.choice(D, 10, replace=False)
    w[support] = rng.normal(size=10)
    return X, X @ w + 0.1 * rng.normal(size=n)


class SparseDFOPLearnMany:
    params = ([1000, 100_000, 1_000_000], [10, 100], ["hashed", "rademacher", "gaussian"])
    param_names = ["n_features", "nnz", "projection"]
    unit = "samples/s"
    timeout = 300

    def setup(self, D: int, nnz: int, projection: str) -> None:
        if projection == "gaussian" and D > 1000:
            raise NotImplementedError  # stored M: D d 8 bytes, only for small D
        self.X, self.y = sparse_stream(N, D, nnz)
        self.model = SparseDFOP(D, 100, forgetting=2e-3, projection=projection)
        self.model.learn_many(self.X[:10], self.y[:10])  # compile
        self.model.predict_many(self.X[:10])

    def track_learn_many(self, D: int, nnz: int, projection: str) -> float:
        return samples_per_second(lambda: self.model.learn_many(self.X, self.y), N, repeat=3,
                                  reset=self.model.reset)

    def time_learn_many(self, D: int, nnz: int, projection: str) -> None:
        self.model.learn_many(self.X, self.y)

    def track_predict_many(self, D: int, nnz: int, projection: str) -> float:
        return samples_per_second(lambda: self.model.predict_many(self.X), N, repeat=3)

    def track_model_bytes(self, D: int, nnz: int, projection: str) -> float:
        return float(self.model.nbytes())

    track_model_bytes.unit = "bytes"  # type: ignore[attr-defined]


class DFOPDenseSameStream:
    """DFOP on the dense rows of the D = 1000 stream: the paper's baseline."""

    params = ([10, 100],)
    param_names = ["nnz"]
    unit = "samples/s"
    timeout = 300

    def setup(self, nnz: int) -> None:
        X, self.y = sparse_stream(N_DFOP, 1000, nnz)
        self.X = X.toarray()
        self.model = DFOP(1000, forgetting=2e-3)
        self.model.learn_many(self.X[:5], self.y[:5])

    def track_learn_many(self, nnz: int) -> float:
        return samples_per_second(lambda: self.model.learn_many(self.X, self.y), N_DFOP,
                                  repeat=3, reset=self.model.reset)

    def time_learn_many(self, nnz: int) -> None:
        self.model.learn_many(self.X, self.y)
