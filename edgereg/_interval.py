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
    IB_SIZE,
    IHYPER_COVERAGE,
    IHYPER_ETA,
    IHYPER_NOISE_MU,
    INTERVAL_COVERED,
    INTERVAL_IMPUTED,
    INTERVAL_Q,
    INTERVAL_SCORED,
    INTERVAL_SUM,
    INTERVAL_WEIGHT,
    ib_views,
    interval_band,
    interval_bands,
    interval_one,
    interval_pass,
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
    """(IB, I, ihyper, band): learn_one's block and its views, the learnt bookkeeping
    (q at the Gaussian quantile), the constants and the band learn_one writes."""
    IB = np.zeros(IB_SIZE)
    I, ihyper, band = python_function(ib_views)(IB)
    I[INTERVAL_Q] = NormalDist().inv_cdf(0.5 + coverage / 2.0)
    ihyper[IHYPER_ETA] = INTERVAL_RATE
    ihyper[IHYPER_NOISE_MU] = noise_forgetting
    ihyper[IHYPER_COVERAGE] = coverage
    return IB, I, ihyper, band


def interval_faults(I: np.ndarray, field: str = "interval") -> list[tuple[str, str]]:
    """What a loaded bookkeeping must hold: weights, sums and counts that are ones."""
    weight, total, scored, q, covered, imputed = (float(I[k]) for k in (
        INTERVAL_WEIGHT, INTERVAL_SUM, INTERVAL_SCORED, INTERVAL_Q, INTERVAL_COVERED,
        INTERVAL_IMPUTED))
    if not (weight >= 0.0 and total >= 0.0 and 0.0 <= covered <= scored <= 2.0**53
            and scored == int(scored) and covered == int(covered) and abs(q) < 1e300
            and 0.0 <= imputed <= 2.0**53 and imputed == int(imputed)):
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
        if self.coverage is None:
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
        scored = float(I[INTERVAL_SCORED])  # type: ignore[index]
        return float(I[INTERVAL_COVERED]) / scored if scored else float("nan")  # type: ignore[index]

    @property
    def noise_scale_(self) -> float:
        """sigma, the forgetting-weighted noise level (NaN before the first residual)."""
        self._check_interval(None)
        I = self._I
        w = float(I[INTERVAL_WEIGHT])  # type: ignore[index]
        return float(np.sqrt(I[INTERVAL_SUM] / w)) if w > 0 else float("nan")  # type: ignore[index]


class OutputsIntervalMixin(IntervalMixin):
    """IntervalMixin for a multi-output model: one interval per output, each with its
    own bookkeeping (``_I`` of shape (m, N_INTERVAL), a row per output)."""

    def predict_interval(self, x: Any, coverage: Any = None) -> np.ndarray:  # type: ignore[override]
        r"""(m, 3): lower, prediction, upper of each output for one sample, without learning.

        .. math:: \hat y_j \mp q_j \hat\sigma_j

        sigma_j the noise level of output j and q_j its calibrated quantile
        (docs/design/intervals.md). ``coverage``: None or the model's own.
        """
        self._check_interval(coverage)
        return self.predict_interval_many(self._row(x)[None, :])[0]  # type: ignore[attr-defined]

    def predict_interval_many(self, X: Any, coverage: Any = None) -> np.ndarray:
        """(n, m, 3): lower, prediction, upper of each output for each row, without learning."""
        self._check_interval(coverage)
        X = self._check_X(X)  # type: ignore[attr-defined]
        out = np.empty((X.shape[0], self._I.shape[0], 3))  # type: ignore[union-attr]
        self._interval_many(X, out)
        return out

    @property
    def coverage_(self) -> np.ndarray:  # type: ignore[override]
        """(m,): each output's long-run prequential coverage (NaN before its first interval)."""
        self._check_interval(None)
        I = self._I
        scored = I[:, INTERVAL_SCORED]  # type: ignore[index]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(scored > 0, I[:, INTERVAL_COVERED] / scored, np.nan)  # type: ignore[index]

    @property
    def noise_scale_(self) -> np.ndarray:  # type: ignore[override]
        """(m,): each output's forgetting-weighted noise level (NaN before its first residual)."""
        self._check_interval(None)
        I = self._I
        w = I[:, INTERVAL_WEIGHT]  # type: ignore[index]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(w > 0, np.sqrt(I[:, INTERVAL_SUM] / w), np.nan)  # type: ignore[index]


#: The noise level of a DFOPBank's intervals is forgotten at this rate (the
#: bank's forgetting changes from step to step; 0.01 is the middle of its
#: grid; the quantile tracker makes up for the rest, docs/design/intervals.md).
BANK_NOISE_FORGETTING = 0.01
#: A bank refuses a sample with a value beyond this (``_kernels/bank.LIMIT``).
_BANK_LIMIT = 1e100


class BankIntervals:
    """Calibrated intervals for a DFOPBank: a paired pass over the bank's
    prequential predictions (v = 1: no leverage term), the bank's kernels untouched."""

    coverage: float | None
    _interval_state: Any
    _I: np.ndarray | None

    def _with_interval(self, state: Any, work: Any) -> tuple[Any, Any]:
        if self.coverage is None:
            return state, work
        I = interval_blocks(self.coverage, BANK_NOISE_FORGETTING)[1]
        return self._interval_state(*state, interval=I), work

    def _bind_interval(self) -> None:
        super()._bind_interval()  # type: ignore[misc]
        if self._I is not None:
            self._noise_mu = np.array([BANK_NOISE_FORGETTING])

    def nbytes(self) -> int:
        extra = 0 if self._I is None else self._IB.nbytes
        return int(super().nbytes() + extra)  # type: ignore[misc]

    def _state_faults(self, state: Any) -> list[tuple[str, str]]:
        faults = super()._state_faults(state)  # type: ignore[misc]
        if hasattr(state, "interval"):
            faults += interval_faults(state.interval)
        return faults

    def _learn_one_interval(self, xr: np.ndarray, y: Any, interval: Any) -> Any:
        if interval:
            self._check_interval(interval)  # type: ignore[attr-defined]
        yv = y if type(y) is float else float(np.asarray(y, dtype=np.float64))
        counts = self._state.counts  # type: ignore[attr-defined]
        seen = counts[0]
        yhat = self._learn_one_kernel(xr, yv, self._PW, self._B)  # type: ignore[attr-defined]
        if yhat != yhat and not self._skip:  # type: ignore[attr-defined]
            raise ValueError(self._invalid_message(xr, y, "sample"))  # type: ignore[attr-defined]
        band = self._band
        h = 0.0 if counts[0] != seen else np.nan
        interval_one(yv, yhat, h, BANK_NOISE_FORGETTING, self._IB)
        if interval:
            return float(band[0]), float(band[1]), float(band[2])
        return float(band[1])

    def _after_block(self, X: np.ndarray, Y: np.ndarray, out: np.ndarray, bad: int) -> int:
        """The interval's paired pass over a block the bank has learnt (up to ``bad``)."""
        if self._I is None:
            return bad
        n = X.shape[0] if bad < 0 else bad
        lev = np.zeros(X.shape[0])
        valid = np.all(np.isfinite(X), axis=1) & (np.abs(Y) <= _BANK_LIMIT)
        if X.dtype == np.float64:  # a float32 input is within the limit once finite
            valid &= np.all(np.abs(X) <= _BANK_LIMIT, axis=1)
        lev[~valid] = np.nan  # rows the bank refused (skipped)
        self._bands = np.empty((X.shape[0], 3))
        interval_pass(Y, self._noise_mu, out, lev, n, self._IB, self._bands)
        self._bands = self._bands[:n]
        return bad

    def learn_many(self, X: Any, y: Any, forgetting: Any = None,
                   interval: Any = False) -> np.ndarray:
        """Learn a block; return the prequential predictions, or with ``interval``
        the intervals made before learning each row, shape (n, 3)."""
        if interval:
            self._check_interval(interval)  # type: ignore[attr-defined]
        out = super().learn_many(X, y, forgetting)  # type: ignore[misc]
        if interval:
            bands, self._bands = self._bands, None
            return bands
        return out

    def _interval_many(self, X: np.ndarray, out: np.ndarray) -> None:
        pred = np.empty(X.shape[0])
        self._predict_block(X, pred)  # type: ignore[attr-defined]
        interval_bands(pred, self._IB, out)


def band_of(yhat: float, v: float, I: np.ndarray) -> np.ndarray:
    """(lower, yhat, upper) from Python (the kernel's arithmetic)."""
    band = np.empty(3)
    python_function(interval_band)(yhat, v, I, band)
    return band
