"""The Python side of calibrated prediction intervals, shared by the regressors.

A model built with ``coverage=c`` keeps the bookkeeping of
``_kernels/interval.py`` in its learnt state (field ``interval``) and
updates it on every sample it learns; ``predict_interval`` reads it. The
derivation and the measured choices are docs/design/intervals.md.
"""

from __future__ import annotations

from statistics import NormalDist
from typing import Any

import numpy as np

from ._jit import python_function
from ._kernels.interval import (
    IHYPER_COVERAGE,
    IHYPER_ETA,
    IHYPER_NOISE_MU,
    INT_COVERED,
    INT_Q,
    INT_SCORED,
    INT_SUM,
    INT_WEIGHT,
    N_IHYPER,
    N_INTERVAL,
    interval_band,
)
from ._validate import check_float

#: eta of the quantile tracker, on the normalised score (units of sigma):
#: after a change the tracked quantile moves by up to eta (1 - c) per step.
#: Chosen on the synthetic drift stream and the real ones (docs/design/intervals.md).
INTERVAL_RATE = 0.05


def check_coverage(coverage: Any) -> float | None:
    """None (no intervals) or a coverage in (0, 1)."""
    if coverage is None:
        return None
    return check_float("coverage", coverage, 0.0, 1.0, low_open=True, high_open=True)


def interval_blocks(coverage: float, noise_forgetting: float = -1.0) -> tuple[np.ndarray, ...]:
    """(I, ihyper): the learnt bookkeeping (q at the Gaussian quantile) and its constants."""
    I = np.zeros(N_INTERVAL)
    I[INT_Q] = NormalDist().inv_cdf(0.5 + coverage / 2.0)
    ihyper = np.zeros(N_IHYPER)
    ihyper[IHYPER_ETA] = INTERVAL_RATE
    ihyper[IHYPER_NOISE_MU] = noise_forgetting
    ihyper[IHYPER_COVERAGE] = coverage
    return I, ihyper


def interval_faults(I: np.ndarray, field: str = "interval") -> list[tuple[str, str]]:
    """What a loaded bookkeeping must hold: weights, sums and counts that are ones."""
    weight, total, scored, q, covered = (float(I[k]) for k in (
        INT_WEIGHT, INT_SUM, INT_SCORED, INT_Q, INT_COVERED))
    if not (weight >= 0.0 and total >= 0.0 and 0.0 <= covered <= scored <= 2.0**53
            and scored == int(scored) and covered == int(covered) and abs(q) < 1e300):
        return [(field, f"holds weight {weight!r}, sum {total!r}, scored {scored!r}, "
                        f"covered {covered!r}, q {q!r}: not an interval's bookkeeping")]
    return []


class IntervalMixin:
    """predict_interval, predict_interval_many and ``coverage_`` for a model whose
    ``_I`` is its bookkeeping (None without intervals) and which implements
    ``_interval_many(X, out)``."""

    coverage: float | None
    _I: np.ndarray | None = None

    def _check_interval(self, coverage: Any) -> None:
        if self._I is None:
            raise ValueError(
                f"{type(self).__name__} was built without intervals: construct it with "
                f"coverage=0.9 (for example) so that it calibrates them while it learns")
        if coverage is not None and coverage is not True and float(coverage) != self.coverage:
            raise ValueError(
                f"this model calibrates its intervals at coverage={self.coverage}, "
                f"got coverage={coverage!r} (build another model for another coverage)")

    def predict_interval(self, x: Any, coverage: Any = None) -> tuple[float, float, float]:
        r"""(lower, prediction, upper) for one sample, without learning.

        .. math:: \hat y \mp q \sqrt{\hat\sigma^2 v}

        v the model's predictive variance factor, sigma^2 its noise level and
        q the calibrated quantile (docs/design/intervals.md). ``coverage``:
        None or the model's own (a model calibrates one coverage).
        """
        self._check_interval(coverage)
        band = self.predict_interval_many(self._row(x)[None, :])  # type: ignore[attr-defined]
        return float(band[0, 0]), float(band[0, 1]), float(band[0, 2])

    def predict_interval_many(self, X: Any, coverage: Any = None) -> np.ndarray:
        """(n, 3): lower, prediction, upper for each row of X, without learning."""
        self._check_interval(coverage)
        X = self._check_X(X)  # type: ignore[attr-defined]
        out = np.empty((X.shape[0], 3))
        self._interval_many(X, out)
        return out

    def _interval_many(self, X: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    @property
    def coverage_(self) -> float:
        """The long-run prequential coverage so far: the fraction of the intervals made
        before learning a sample that held its target (NaN before the first)."""
        self._check_interval(None)
        I = self._I
        scored = float(I[INT_SCORED])  # type: ignore[index]
        return float(I[INT_COVERED]) / scored if scored else float("nan")  # type: ignore[index]

    @property
    def noise_scale_(self) -> float:
        """sigma, the forgetting-weighted noise level (NaN before the first residual)."""
        self._check_interval(None)
        I = self._I
        w = float(I[INT_WEIGHT])  # type: ignore[index]
        return float(np.sqrt(I[INT_SUM] / w)) if w > 0 else float("nan")  # type: ignore[index]


def band_of(yhat: float, v: float, I: np.ndarray) -> np.ndarray:
    """(lower, yhat, upper) from Python (the kernel's arithmetic)."""
    band = np.empty(3)
    python_function(interval_band)(yhat, v, I, band)
    return band
