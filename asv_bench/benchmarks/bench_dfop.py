"""DFOP / RLS throughput in samples per second, with peers measured side by side.

The peers are the ones a user would otherwise pick (shared/notes/peer-throughput.md):
padasip ``FilterRLS`` (O(d^3) per step), river's forgetting
``BayesianLinearRegression(smoothing=...)`` and scikit-learn's
``SGDRegressor.partial_fit``. Each is timed on the same stream, prequentially
(predict then learn), in the same asv run, so the ratios come from one run.
Peers that are not installed are skipped (``NotImplementedError`` in setup).
"""

from __future__ import annotations

import numpy as np

from edgereg import DFOP

from .common import linear_stream, samples_per_second

FORGETTING = 0.01  # lambda = 0.99, as in the peer study

# Enough samples for ~10 ms per block at the expected speed, fewer for large d.
_N = {10: 200_000, 50: 40_000, 200: 4_000}


class LearnMany:
    """DFOP.learn_many: the whole block in one kernel call."""

    params = ([10, 50, 200], ["float64", "float32"])
    param_names = ["n_features", "dtype"]
    unit = "samples/s"

    def setup(self, d, dtype):
        self.X, self.y = linear_stream(_N[d], d)
        self.model = DFOP(d, FORGETTING, dtype=dtype)
        self.X = self.X.astype(dtype)
        self.model.learn_many(self.X[:10], self.y[:10])  # compile

    def time_learn_many(self, d, dtype):
        self.model.learn_many(self.X, self.y)

    def track_learn_many(self, d, dtype):
        return samples_per_second(
            lambda: self.model.learn_many(self.X, self.y), len(self.y), reset=self.model.reset
        )

    track_learn_many.unit = "samples/s"


class LearnOne:
    """DFOP.learn_one from a Python loop: one dispatch per sample."""

    params = [10, 50]
    param_names = ["n_features"]

    def setup(self, d):
        X, y = linear_stream(20_000, d)
        self.rows = list(X)
        self.targets = [float(v) for v in y]
        self.model = DFOP(d, FORGETTING)
        self.model.learn_one(self.rows[0], self.targets[0])

    def _loop(self):
        learn = self.model.learn_one
        for x, y in zip(self.rows, self.targets, strict=True):
            learn(x, y)

    def track_learn_one(self, d):
        return samples_per_second(self._loop, len(self.rows), reset=self.model.reset)

    track_learn_one.unit = "samples/s"


class PredictMany:
    params = [10, 200]
    param_names = ["n_features"]

    def setup(self, d):
        self.X, y = linear_stream(_N[d], d)
        self.model = DFOP(d, FORGETTING)
        self.model.learn_many(self.X[:1000], y[:1000])
        self.model.predict_many(self.X[:10])

    def track_predict_many(self, d):
        return samples_per_second(lambda: self.model.predict_many(self.X), len(self.X))

    track_predict_many.unit = "samples/s"


class Peers:
    """The same prequential loop in the libraries users compare against."""

    params = ([10, 50, 200], ["padasip", "river", "sklearn"])
    param_names = ["n_features", "library"]

    def setup(self, d, library):
        n = {10: 3000, 50: 2000, 200: 300}[d]
        X, y = linear_stream(n, d)
        self.n = n
        if library == "padasip":
            try:
                import padasip
            except ImportError:
                raise NotImplementedError("padasip not installed") from None

            def run():
                f = padasip.filters.FilterRLS(d, mu=1.0 - FORGETTING, eps=0.01, w="zeros")
                for t in range(n):
                    f.predict(X[t])
                    f.adapt(y[t], X[t])

        elif library == "river":
            try:
                from river import linear_model
            except ImportError:
                raise NotImplementedError("river not installed") from None
            dicts = [dict(enumerate(x)) for x in X]  # dict building excluded

            def run():
                m = linear_model.BayesianLinearRegression(smoothing=1.0 - FORGETTING)
                for t in range(n):
                    m.predict_one(dicts[t])
                    m.learn_one(dicts[t], y[t])

        else:
            try:
                from sklearn.linear_model import SGDRegressor
            except ImportError:
                raise NotImplementedError("scikit-learn not installed") from None

            def run():
                m = SGDRegressor()
                m.partial_fit(X[:1], y[:1])
                for t in range(1, n):
                    m.predict(X[t : t + 1])
                    m.partial_fit(X[t : t + 1], y[t : t + 1])

        self.run = run

    def track_peer(self, d, library):
        return samples_per_second(self.run, self.n, repeat=2)

    track_peer.unit = "samples/s"


class ColdStart:
    """Fresh process: import edgereg and make the first learn_one (warm disk cache)."""

    def setup_cache(self):
        import subprocess
        import sys

        # Populate the on-disk cache once, outside the timing.
        subprocess.run([sys.executable, "-c", _COLD], check=True)

    def timeraw_import_and_first_learn_one(self):
        return _COLD


_COLD = """
import numpy as np
from edgereg import DFOP
m = DFOP(10)
m.learn_one(np.ones(10), 1.0)
"""


def _ensure_np():  # keep numpy imported for asv's discovery of module-level names
    return np


# ---------------------------------------------------------------------------
# The peer study's reference kernels, rebuilt here so that the targets
# ("at least the fused figures") are compared on the machine that runs the
# benchmarks: the study measured on a Zen 4 with AVX-512; these run wherever
# asv runs. Benchmark-only code: no validation, no prior refresh, float64.
# ---------------------------------------------------------------------------
from numba import njit  # noqa: E402


@njit(cache=True)
def _reference_rls_straightforward(X, Y, lam, w, P, Px):
    """Study kernel (a): P x by row dot products, then a bit-symmetric update."""
    n, d = X.shape
    for t in range(n):
        x = X[t]
        for i in range(d):
            acc = 0.0
            for j in range(d):
                acc += P[i, j] * x[j]
            Px[i] = acc
        den = lam
        yhat = 0.0
        for j in range(d):
            den += x[j] * Px[j]
            yhat += w[j] * x[j]
        inv = 1.0 / den
        e = Y[t] - yhat
        for j in range(d):
            w[j] += Px[j] * inv * e
        for i in range(d):
            for j in range(d):
                P[i, j] = (P[i, j] - (Px[i] * Px[j]) * inv) / lam


@njit(cache=True)
def _reference_rls_fused(X, Y, lam, w, P, Px, Pxn):
    """Study kernel (a4): the update of row i also builds P_new x_{t+1}."""
    n, d = X.shape
    invlam = 1.0 / lam
    x = X[0]
    for j in range(d):
        Px[j] = 0.0
    for i in range(d):
        for j in range(d):
            Px[j] += x[i] * P[i, j]
    for t in range(n):
        x = X[t]
        den = lam
        yhat = 0.0
        for j in range(d):
            den += x[j] * Px[j]
            yhat += w[j] * x[j]
        inv = 1.0 / den
        g = (Y[t] - yhat) * inv
        for j in range(d):
            w[j] += Px[j] * g
            Pxn[j] = 0.0
        xn = X[t + 1] if t + 1 < n else x
        for i in range(d):
            a = Px[i] * inv
            xi = xn[i]
            Pi = P[i]
            for j in range(d):
                Pi[j] = (Pi[j] - a * Px[j]) * invlam
                Pxn[j] += xi * Pi[j]
        for j in range(d):
            Px[j] = Pxn[j]


class ReferenceKernels:
    """The study's straightforward (a) and fused (a4) numba RLS loops on this machine."""

    params = ([10, 50, 200], ["straightforward", "fused"])
    param_names = ["n_features", "kernel"]

    def setup(self, d, kernel):
        self.X, self.y = linear_stream(_N[d], d)
        self.d = d
        self.kernel = kernel
        self._run()  # compile

    def _run(self):
        d = self.d
        w, P = np.zeros(d), 100.0 * np.eye(d)
        Px, Pxn = np.zeros(d), np.zeros(d)
        if self.kernel == "straightforward":
            _reference_rls_straightforward(self.X, self.y, 1.0 - FORGETTING, w, P, Px)
        else:
            _reference_rls_fused(self.X, self.y, 1.0 - FORGETTING, w, P, Px, Pxn)

    def track_reference(self, d, kernel):
        return samples_per_second(self._run, len(self.y))

    track_reference.unit = "samples/s"
