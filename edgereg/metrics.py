"""Prequential evaluation metrics, docs/algorithms/streams_and_metrics.md.

Two layers, like the models:

1. Whole-array functions (vectorised NumPy) for a stream that has been run:
   :func:`accuracy`, :func:`mse`, :func:`mae` over the whole stream;
   :func:`prequential_accuracy`, :func:`windowed_accuracy`,
   :func:`fading_accuracy` and :func:`prequential_error` give the metric at
   every step t; :func:`prequential_mean` is the one function under all of
   them; :func:`tracking_error` and :func:`holdout_accuracy`.
2. :class:`RunningMetric` (and the shorthands :class:`RunningAccuracy`,
   :class:`RunningMSE`, :class:`RunningMAE`): the same metrics updated one
   sample at a time in O(1) time and memory (a preallocated ring buffer of
   ``window`` floats for the windowed form), for sensor loops.
   ``RunningMetric.get()`` after the t-th update equals entry t - 1 of the
   corresponding array function (tested step by step).

Labels are compared exactly as given: edgereg classifiers predict in
{-1.0, +1.0}, so pass true labels in that coding too (a stream with {0, 1}
labels: ``np.where(y == 1, 1.0, -1.0)``).

For multiple outputs (arrays of shape (n, m)), the per-sample squared /
absolute error is the mean over the m outputs, so :func:`mse` is the mean over
all entries.

Plain Python floats are used in the running classes: they are called once per
sample from Python, where a jitted call would cost more than the arithmetic.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from scipy.signal import lfilter

__all__ = [
    "RunningAccuracy",
    "RunningMAE",
    "RunningMSE",
    "RunningMetric",
    "accuracy",
    "fading_accuracy",
    "holdout_accuracy",
    "mae",
    "mse",
    "prequential_accuracy",
    "prequential_error",
    "prequential_mean",
    "tracking_error",
    "windowed_accuracy",
]

_KINDS = ("accuracy", "mse", "mae")


# ------------------------------------------------------------------ validation


def _pair(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    yt = np.asarray(y_true)
    yp = np.asarray(y_pred)
    if yt.shape != yp.shape:
        raise ValueError(
            f"y_true and y_pred must have the same shape, got {yt.shape} and {yp.shape}"
        )
    if yt.ndim not in (1, 2):
        raise ValueError(f"y_true must be 1-D (n,) or 2-D (n, m), got shape {yt.shape}")
    return yt, yp


def _check_window(window: Any) -> int:
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)):
        raise ValueError(f"window must be a positive integer, got {window!r}")
    if window < 1:
        raise ValueError(f"window must be a positive integer, got {window}")
    return int(window)


def _check_alpha(alpha: Any) -> float:
    try:
        a = float(alpha)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"alpha must be a number in (0, 1], got {alpha!r}") from exc
    if not 0.0 < a <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
    return a


def _check_kind(kind: str, allowed: tuple[str, ...]) -> str:
    if kind not in allowed:
        raise ValueError(f"kind must be one of {allowed}, got {kind!r}")
    return kind


def _per_sample_error(yt: np.ndarray, yp: np.ndarray, kind: str) -> np.ndarray:
    e = yt.astype(np.float64) - yp.astype(np.float64)
    e = e * e if kind == "mse" else np.abs(e)
    return e.mean(axis=1) if e.ndim == 2 else e


def _correct(y_true: Any, y_pred: Any) -> np.ndarray:
    yt, yp = _pair(y_true, y_pred)
    if yt.ndim != 1:
        raise ValueError(f"accuracy needs 1-D label arrays, got shape {yt.shape}")
    return (yt == yp).astype(np.float64)


# -------------------------------------------------------- whole-stream metrics


def accuracy(y_true: Any, y_pred: Any) -> float:
    """Fraction of exact matches, (1/n) sum_t 1[yhat_t = y_t] (docs/algorithms/).

    Labels are compared as given (edgereg classifiers predict -1.0 / +1.0).
    Returns NaN for empty arrays.
    """
    c = _correct(y_true, y_pred)
    return float(c.mean()) if c.size else math.nan


def mse(y_true: Any, y_pred: Any) -> float:
    """Mean squared error (1/n) sum_t ||y_t - yhat_t||^2 / m over the whole stream.

    For (n, m) arrays the mean runs over all n * m entries. NaN when empty.
    """
    e = _per_sample_error(*_pair(y_true, y_pred), "mse")
    return float(e.mean()) if e.size else math.nan


def mae(y_true: Any, y_pred: Any) -> float:
    """Mean absolute error (1/n) sum_t ``|y_t - yhat_t|`` (mean over outputs too); NaN if empty."""
    e = _per_sample_error(*_pair(y_true, y_pred), "mae")
    return float(e.mean()) if e.size else math.nan


# ----------------------------------------------------------- metric at every t


def _window_sums(v: np.ndarray, window: int) -> np.ndarray:
    """sum_{i = max(0, t-window+1)}^{t} v_i for every t, without a global cumsum.

    A global prefix sum S would give S_t - S_{t-window}, whose rounding error
    grows with t (S_t gets large, the difference stays small). Cumulating
    within blocks of length ``window`` keeps every partial sum of the size of
    one window: the window ending at t in block k is the head of block k up
    to t plus the tail of block k - 1 after t - window.
    """
    n = v.shape[0]
    if window >= n:
        return np.cumsum(v)
    n_blocks = -(-n // window)
    padded = np.zeros(n_blocks * window)
    padded[:n] = v
    C = np.cumsum(padded.reshape(n_blocks, window), axis=1)  # within-block prefix sums
    out = C.copy()
    # Tail of the previous block: its total minus its prefix up to the same offset.
    out[1:] += C[:-1, -1:] - C[:-1]
    return out.reshape(-1)[:n]


def prequential_mean(
    values: Any, *, window: int | None = None, alpha: float | None = None
) -> np.ndarray:
    """Running, sliding-window or fading mean of per-sample scores (docs/algorithms/).

    With s_i the score of sample i (a 0/1 hit, a squared error, ...), entry t
    (0-based) of the result is

    - plain:  (1/(t+1)) sum_{i<=t} s_i;
    - ``window=w``: the mean of the last min(t+1, w) scores;
    - ``alpha=a`` (Gama, Sebastiao & Rodrigues 2013):
      sum_{i<=t} a^{t-i} s_i / sum_{i<=t} a^{t-i}, computed by the recursions
      S_t = a S_{t-1} + s_t, N_t = a N_{t-1} + 1 (``alpha=1`` is the plain mean).

    Parameters
    ----------
    values : array of shape (n,)
    window : int >= 1, optional
    alpha : float in (0, 1], optional
        At most one of ``window`` and ``alpha``.

    Returns
    -------
    ndarray of shape (n,), float64
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    if window is not None and alpha is not None:
        raise ValueError("give at most one of window and alpha")
    n = v.shape[0]
    if window is not None:
        w = _check_window(window)
        counts = np.minimum(np.arange(1, n + 1), w).astype(np.float64)
        return _window_sums(v, w) / counts
    if alpha is not None:
        a = _check_alpha(alpha)
        num = lfilter([1.0], [1.0, -a], v)
        den = lfilter([1.0], [1.0, -a], np.ones(n))
        return num / den
    return np.cumsum(v) / np.arange(1, n + 1)


def prequential_accuracy(y_true: Any, y_pred: Any) -> np.ndarray:
    """Accuracy of the first t+1 predictions, for every t (running mean of hits)."""
    return prequential_mean(_correct(y_true, y_pred))


def windowed_accuracy(y_true: Any, y_pred: Any, window: int) -> np.ndarray:
    """Accuracy over the last min(t+1, ``window``) predictions, for every t."""
    return prequential_mean(_correct(y_true, y_pred), window=_check_window(window))


def fading_accuracy(y_true: Any, y_pred: Any, alpha: float) -> np.ndarray:
    """Fading-factor accuracy sum_i alpha^{t-i} 1[yhat_i = y_i] / sum_i alpha^{t-i}, every t.

    Gama, Sebastiao & Rodrigues (2013); ``alpha`` in (0, 1], 1 gives the
    running mean of :func:`prequential_accuracy`.
    """
    return prequential_mean(_correct(y_true, y_pred), alpha=_check_alpha(alpha))


def prequential_error(
    y_true: Any,
    y_pred: Any,
    kind: Literal["mse", "mae"] = "mse",
    *,
    window: int | None = None,
    alpha: float | None = None,
) -> np.ndarray:
    """Prequential MSE or MAE at every t: running, windowed or fading.

    See :func:`prequential_mean` for the three forms.

    The per-sample score is (y_t - yhat_t)^2 (``"mse"``) or ``|y_t - yhat_t|``
    (``"mae"``), averaged over outputs for (n, m) arrays.
    """
    _check_kind(kind, ("mse", "mae"))
    e = _per_sample_error(*_pair(y_true, y_pred), kind)
    return prequential_mean(e, window=window, alpha=alpha)


def tracking_error(W_true: Any, W_hat: Any) -> np.ndarray:
    """Distance ||w_t - what_t|| between true and estimated parameters at every t.

    Parameters
    ----------
    W_true : array of shape (n, ...) or scipy.sparse matrix of shape (n, d)
        True parameters per step (e.g. the ``W`` of a stream generator). A
        single parameter of shape (d,) (or (d, m)) is a constant target and
        is broadcast over the n steps of ``W_hat``.
    W_hat : array of shape (n, ...)
        Estimates per step (what the model held when it predicted sample t,
        or after learning it: say which when reporting).

    Returns
    -------
    ndarray of shape (n,)
        Euclidean norm (Frobenius for matrix parameters) of each difference.
    """
    if hasattr(W_true, "toarray"):  # scipy.sparse
        W_true = W_true.toarray()
    Wt = np.asarray(W_true, dtype=np.float64)
    Wh = np.asarray(W_hat, dtype=np.float64)
    if Wh.ndim < 1:
        raise ValueError("W_hat must have one row per step")
    if Wt.shape != Wh.shape and Wt.shape != Wh.shape[1:]:
        raise ValueError(
            f"W_true must have the shape of W_hat {Wh.shape} or of one of its rows "
            f"{Wh.shape[1:]}, got {Wt.shape}"
        )
    diff = (Wh - Wt).reshape(Wh.shape[0], -1)
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def holdout_accuracy(model: Any, X_test: Any, y_test: Any) -> float:
    """Accuracy of ``model.predict_many(X_test)`` on a held-out set (no learning).

    Draw ``(X_test, y_test)`` from the current concept of a synthetic stream
    (docs/algorithms/streams_and_metrics.md). Labels are compared as given: pass ``y_test`` in
    {-1, +1} for edgereg classifiers.
    """
    return accuracy(y_test, model.predict_many(X_test))


# ------------------------------------------------------------ running metrics


class RunningMetric:
    """Prequential accuracy / MSE / MAE updated one sample at a time (docs/algorithms/).

    Parameters
    ----------
    kind : {"accuracy", "mse", "mae"}
        Per-sample score: 1[yhat = y], (y - yhat)^2 or ``|y - yhat|`` (for a
        vector y of m outputs the mean over outputs).
    window : int >= 1, optional
        Mean over the last ``window`` samples (a ring buffer of that many
        floats, allocated once). Its running sum is recomputed exactly from
        the buffer (``math.fsum``) each time the buffer wraps, so rounding
        error does not accumulate over a long stream.
    alpha : float in (0, 1], optional
        Fading factor: sum_i alpha^{t-i} s_i / sum_i alpha^{t-i}.

    With neither, the running mean over everything seen. ``get()`` after the
    t-th update equals entry t - 1 of :func:`prequential_mean` on the same
    scores; before any update it is NaN.

    Examples
    --------
    >>> m = RunningMetric("accuracy", window=2)
    >>> for y, yhat in [(1.0, 1.0), (1.0, -1.0), (-1.0, -1.0)]:
    ...     m.update(y, yhat)
    >>> m.get()
    0.5
    """

    __slots__ = ("_kind", "_window", "_alpha", "_buf", "_pos", "_sum", "_den", "_n")

    def __init__(
        self,
        kind: Literal["accuracy", "mse", "mae"] = "accuracy",
        *,
        window: int | None = None,
        alpha: float | None = None,
    ) -> None:
        self._kind = _check_kind(kind, _KINDS)
        if window is not None and alpha is not None:
            raise ValueError("give at most one of window and alpha")
        self._window = None if window is None else _check_window(window)
        self._alpha = None if alpha is None else _check_alpha(alpha)
        self._buf: list[float] = [0.0] * (self._window or 0)
        self.reset()

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def window(self) -> int | None:
        return self._window

    @property
    def alpha(self) -> float | None:
        return self._alpha

    @property
    def n_seen(self) -> int:
        """Number of updates so far."""
        return self._n

    def reset(self) -> None:
        """Forget everything seen (the buffer is reused, not reallocated)."""
        for i in range(len(self._buf)):
            self._buf[i] = 0.0
        self._pos = 0
        self._sum = 0.0
        self._den = 0.0
        self._n = 0

    def _score(self, y_true: Any, y_pred: Any) -> float:
        if self._kind == "accuracy":
            return 1.0 if y_true == y_pred else 0.0
        e = y_true - y_pred
        if isinstance(e, np.ndarray):
            e = e.astype(np.float64, copy=False)
            return float(np.mean(e * e) if self._kind == "mse" else np.mean(np.abs(e)))
        e = float(e)
        return e * e if self._kind == "mse" else abs(e)

    def update(self, y_true: Any, y_pred: Any) -> None:
        """Add one (true, predicted) pair: scalars, or length-m arrays for mse/mae."""
        self.update_score(self._score(y_true, y_pred))

    def update_score(self, score: float) -> None:
        """Add one precomputed per-sample score (a hit 0/1, a squared error, ...)."""
        self._n += 1
        if self._window is not None:
            buf = self._buf
            pos = self._pos
            self._sum += score - buf[pos]
            buf[pos] = score
            pos += 1
            if pos == self._window:
                pos = 0
                self._sum = math.fsum(buf)  # exact: no drift of the running sum
            self._pos = pos
        elif self._alpha is not None:
            self._sum = self._alpha * self._sum + score
            self._den = self._alpha * self._den + 1.0
        else:
            self._sum += score

    def get(self) -> float:
        """The metric over what has been seen (NaN before the first update)."""
        n = self._n
        if n == 0:
            return math.nan
        if self._window is not None:
            return self._sum / (n if n < self._window else self._window)
        if self._alpha is not None:
            return self._sum / self._den
        return self._sum / n

    def __repr__(self) -> str:
        extra = (
            f", window={self._window}" if self._window is not None
            else f", alpha={self._alpha}" if self._alpha is not None else ""
        )
        name = type(self).__name__
        return f"<{name} kind={self._kind!r}{extra}: {self.get():.6g} after {self._n} updates>"


class RunningAccuracy(RunningMetric):
    """``RunningMetric("accuracy", window=..., alpha=...)``."""

    __slots__ = ()

    def __init__(self, *, window: int | None = None, alpha: float | None = None) -> None:
        super().__init__("accuracy", window=window, alpha=alpha)


class RunningMSE(RunningMetric):
    """``RunningMetric("mse", window=..., alpha=...)``."""

    __slots__ = ()

    def __init__(self, *, window: int | None = None, alpha: float | None = None) -> None:
        super().__init__("mse", window=window, alpha=alpha)


class RunningMAE(RunningMetric):
    """``RunningMetric("mae", window=..., alpha=...)``."""

    __slots__ = ()

    def __init__(self, *, window: int | None = None, alpha: float | None = None) -> None:
        super().__init__("mae", window=window, alpha=alpha)
