"""DFOP: forgetting-factor recursive least squares (SPEC.md section 1).

Distribution-free one-pass learning (Zhao & Zhou) minimises, at every step t,
the exponentially discounted squared loss with the prior of P0 = p0 I,

    w_t = argmin_w  Lambda_t / p0 ||w||^2
                  + sum_{i<=t} (prod_{j=i+1..t} lambda_j) (y_i - w^T x_i)^2,

with Lambda_t = prod_{j<=t} lambda_j and lambda_j = 1 - mu_j, mu the
*forgetting factor* (forgetting period 1/mu). It keeps w (d) and
P = R_t^{-1}, the inverse of the discounted input correlation (d x d), and
updates both in O(d^2) per sample with the canonical G-DFOP step

    yhat = w^T x                       (prequential prediction)
    Px   = P x
    k    = Px / (lambda_t + x^T Px)
    w   <- w + k (y - yhat)
    P   <- (P - k Px^T) / lambda_t .

Numerical care (the papers are silent; a sensor loop runs for months):

* Exact symmetry. The textbook ``P - k Px^T`` is not symmetric in floating
  point; its skew part is multiplied by 1/lambda every step and the update
  diverges after a few thousand samples. Here the rank-one term is written as
  ``u u^T`` with ``u = Px / sqrt(lambda + x^T Px)``: ``u_i u_j == u_j u_i``
  bit for bit, so P stays *exactly* symmetric forever.
* Bounded wind-up. In input directions a stream stops exciting, P grows like
  lambda^-t until it overflows (or, in float32, loses positive definiteness
  when excitation returns). The diagonal of P is the variance of each weight;
  whenever one exceeds ``max_variance`` the congruence ``P <- D P D`` with
  ``D_ii = min(1, sqrt(max_variance / P_ii))`` brings it back to the cap. A
  congruence keeps P exactly symmetric and positive definite, leaves the
  correlations between weights and every coordinate below the cap untouched,
  and costs O(d) to check per step. It never fires while the inputs keep
  exciting every direction (the closed-form reference is then exact).

Kernels take plain arrays (cheaper to dispatch than the NamedTuple) and never
allocate; a sample with NaN/inf (or one whose update would overflow) is
detected before anything is written and reported with a status.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel
from ._jit import kernel
from ._validate import (
    as_row,
    as_scalar,
    as_targets,
    check_float,
    label_to_sign,
)

__all__ = ["DFOP", "RLS", "DFOPState"]

OK = 0
INVALID = 1


class DFOPState(NamedTuple):
    """Fixed memory of a DFOP model: (d^2 + 3d) floats and two counters."""

    w: np.ndarray  # (d,) weights
    P: np.ndarray  # (d, d) inverse discounted correlation, exactly symmetric
    work_px: np.ndarray  # (d,) scratch: P x, then the scaled gain u
    work_next: np.ndarray  # (d,) scratch: P_new x_next (fused stream kernel)
    counts: np.ndarray  # int64 (2,): samples learnt, samples skipped


def _allocate(n_features: int, p0: float, dtype: np.dtype) -> DFOPState:
    d = n_features
    P = np.zeros((d, d), dtype=dtype)
    P[np.diag_indices(d)] = p0
    return DFOPState(
        w=np.zeros(d, dtype=dtype),
        P=P,
        work_px=np.zeros(d, dtype=dtype),
        work_next=np.zeros(d, dtype=dtype),
        counts=np.zeros(2, dtype=np.int64),
    )


# --------------------------------------------------------------------- kernels
@kernel
def _symv(P, x, out):
    """out = P x for symmetric P, as row axpys (vectorises without reassociation)."""
    d = x.shape[0]
    for j in range(d):
        out[j] = 0.0
    for i in range(d):
        xi = x[i]
        Pi = P[i]
        for j in range(d):
            out[j] += xi * Pi[j]


@kernel
def _clamp_variance(P, max_variance, scale):
    """P <- D P D, D_ii = min(1, sqrt(max_variance / P_ii)); exact symmetry kept."""
    d = P.shape[0]
    for i in range(d):
        pii = P[i, i]
        scale[i] = math.sqrt(max_variance / pii) if pii > max_variance else 1.0
    for i in range(d):
        si = scale[i]
        Pi = P[i]
        for j in range(d):
            Pi[j] = Pi[j] * (si * scale[j])


@kernel
def _dfop_step(x, y, lam, w, P, Px, max_variance):
    """One G-DFOP step on sample (x, y) with discount lam = 1 - mu.

    Returns ``(yhat, status)``: the prequential prediction w^T x made before
    the update, and OK, or INVALID when x, y or the update is not finite (the
    state is then untouched). ``Px`` is scratch. Shared by SparseDFOP.
    """
    d = x.shape[0]
    _symv(P, x, Px)
    yhat = 0.0
    xPx = 0.0
    for j in range(d):
        yhat += w[j] * x[j]
        xPx += x[j] * Px[j]
    den = lam + xPx
    if not (np.isfinite(yhat) and np.isfinite(y) and np.isfinite(den) and den > 0.0):
        return yhat, INVALID
    c = 1.0 / den
    g = (y - yhat) * c
    s = math.sqrt(c)
    for j in range(d):
        w[j] += Px[j] * g
        Px[j] *= s
    invlam = 1.0 / lam
    worst = 0.0
    for i in range(d):
        ui = Px[i]
        Pi = P[i]
        for j in range(d):
            Pi[j] = (Pi[j] - ui * Px[j]) * invlam
        if Pi[i] > worst:
            worst = Pi[i]
    if worst > max_variance:
        _clamp_variance(P, max_variance, Px)
    return yhat, OK


@kernel
def _dfop_learn_one(x, y, lam, w, P, Px, counts, max_variance, skip):
    yhat, status = _dfop_step(x, y, lam, w, P, Px, max_variance)
    if status == OK:
        counts[0] += 1
    elif skip:
        counts[1] += 1
    return yhat, status


@kernel
def _dfop_learn_many(X, Y, mu, mu_stride, w, P, Px, work, counts, max_variance, skip, out):
    """Learn a block; out[t] = prequential prediction of row t.

    ``mu[t * mu_stride]`` is the forgetting factor of step t (stride 0: a
    constant). The loop is fused: while row i of the new P is written, it is
    also accumulated into P_new x_{t+1}, so P is read once per step. Bit-for-bit
    the same arithmetic as ``_dfop_step`` (same summation order).

    Returns -1 when every row was handled, else the index of the first invalid
    row (only when ``skip`` is False); rows before it are learnt, it and the
    rows after it are not.
    """
    n = X.shape[0]
    d = X.shape[1]
    fresh = False  # does Px already hold P @ X[t]?
    for t in range(n):
        x = X[t]
        y = Y[t]
        lam = 1.0 - mu[t * mu_stride]
        if not fresh:
            _symv(P, x, Px)
        yhat = 0.0
        xPx = 0.0
        for j in range(d):
            yhat += w[j] * x[j]
            xPx += x[j] * Px[j]
        out[t] = yhat
        den = lam + xPx
        if not (np.isfinite(yhat) and np.isfinite(y) and np.isfinite(den) and den > 0.0):
            fresh = False
            if skip:
                counts[1] += 1
                continue
            return t
        c = 1.0 / den
        g = (y - yhat) * c
        s = math.sqrt(c)
        for j in range(d):
            w[j] += Px[j] * g
            Px[j] *= s
            work[j] = 0.0
        invlam = 1.0 / lam
        xn = X[t + 1] if t + 1 < n else x
        worst = 0.0
        for i in range(d):
            ui = Px[i]
            xi = xn[i]
            Pi = P[i]
            for j in range(d):
                Pi[j] = (Pi[j] - ui * Px[j]) * invlam
                # Re-read the stored value: in float32 it is the rounded one
                # that _symv would see (keeps learn_one == learn_many exactly).
                work[j] += xi * Pi[j]
            if Pi[i] > worst:
                worst = Pi[i]
        counts[0] += 1
        if worst > max_variance:
            _clamp_variance(P, max_variance, work)
            fresh = False
        else:
            Px, work = work, Px
            fresh = True
    return -1


@kernel
def _dfop_predict_many(X, w, out):
    n = X.shape[0]
    d = X.shape[1]
    for t in range(n):
        acc = 0.0
        x = X[t]
        for j in range(d):
            acc += w[j] * x[j]
        out[t] = acc


@kernel
def _dfop_predict_one(x, w):
    acc = 0.0
    for j in range(x.shape[0]):
        acc += w[j] * x[j]
    return acc


# ---------------------------------------------------------------------- models
_TASKS = ("regression", "classification")


class DFOP(OnlineModel):
    r"""Distribution-free one-pass learner: forgetting-factor RLS (SPEC.md section 1).

    Minimises the exponentially discounted squared loss in one pass with
    O(d^2) memory and time per sample, forgetting the past at rate ``forgetting``.

    Parameters
    ----------
    n_features : int
        Input dimension d.
    forgetting : float, default 0.01
        The forgetting factor mu in [0, 1); each step discounts the past by
        lambda = 1 - mu. 1/mu is the forgetting period (older data weighs less
        than 1/e). 0 gives plain recursive least squares (see :class:`RLS`).
        ``learn_many(..., forgetting=array)`` overrides it per step (G-DFOP).
    task : {"regression", "classification"}
        Classification learns the labels as targets in {-1, +1} (labels in
        {0, 1} are accepted and 0 is mapped to -1) and predicts
        sign(w^T x), with sign(0) = +1: predictions are always in {-1, +1}.
        :meth:`decision_function` gives the raw score.
    p0 : float, default 100.0
        Prior P0 = p0 I: the initial variance of every weight (large = weak
        prior; 1e2..1e3 suits standardised inputs).
    max_variance : float, optional
        Cap on the diagonal of P (anti wind-up, see the module notes). Default
        ``1e4 * p0`` in float64 and ``1e2 * p0`` in float32. It only acts in
        directions the inputs have stopped exciting.
    dtype : {"float64", "float32"}
        Precision of the state. float32 halves the memory.
    on_invalid : {"raise", "skip"}
        What a sample with NaN/inf does: raise ``ValueError`` (state unchanged)
        or be skipped and counted in ``n_skipped_``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights w.
    n_seen_, n_skipped_ : int
        Samples learnt and samples skipped.

    Notes
    -----
    Memory: (d^2 + 3d) values of ``dtype`` plus 16 bytes, fixed at
    construction (d = 10: 1.0 KB in float64; d = 200: 326 KB).

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import DFOP
    >>> model = DFOP(n_features=2, forgetting=0.01)
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = np.array([2.0, -1.0, 1.0])
    >>> model.learn_many(X, y)            # prequential: predictions before each update
    array([ 0.        ,  0.        ,  0.99001008])
    >>> model.predict_one([1.0, 1.0]).round(6)
    1.0
    """

    def __init__(
        self,
        n_features: int,
        forgetting: float = 0.01,
        *,
        task: str = "regression",
        p0: float = 100.0,
        max_variance: float | None = None,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self.forgetting = check_float("forgetting", forgetting, 0.0, 1.0, high_open=True)
        if task not in _TASKS:
            raise ValueError(f"task must be one of {_TASKS}, got {task!r}")
        self.task = task
        self._classify = task == "classification"
        self.p0 = check_float("p0", p0, 0.0, None, low_open=True)
        self.max_variance = (
            None
            if max_variance is None
            else check_float("max_variance", max_variance, 0.0, None, low_open=True)
        )
        default_cap = (1e4 if self.dtype == np.float64 else 1e2) * self.p0
        self._max_variance = default_cap if max_variance is None else self.max_variance
        if self._max_variance < self.p0:
            raise ValueError(f"max_variance ({self._max_variance:g}) must be >= p0 ({self.p0:g})")
        self._lam = 1.0 - self.forgetting
        self._mu = np.array([self.forgetting])
        self.reset()

    @property
    def _task(self) -> str:  # type: ignore[override]
        return self.task

    def _allocate(self) -> DFOPState:
        return _allocate(self.n_features, self.p0, self.dtype)

    def _bind_state(self) -> None:
        s = self._state
        self._w, self._P, self._Px, self._work, self._counts = (
            s.w, s.P, s.work_px, s.work_next, s.counts
        )
        self._row_shape = (self.n_features,)

    # ------------------------------------------------------------ attributes
    @property
    def coef_(self) -> np.ndarray:
        """Learnt weights w (a copy)."""
        return self._w.copy()

    # -------------------------------------------------------------- one-step
    def _row(self, x: Any) -> np.ndarray:
        # Fast path costs three attribute reads; anything else is converted.
        if type(x) is np.ndarray and x.dtype is self.dtype and x.shape == self._row_shape:
            if x.flags.c_contiguous:
                return x
        return as_row(x, self.n_features, self.dtype)

    def decision_function_one(self, x: Any) -> float:
        """Raw score w^T x for one sample."""
        return _dfop_predict_one(self._row(x), self._w)

    def predict_one(self, x: Any) -> float:
        """Predict one sample (the sign of the score for classification)."""
        score = _dfop_predict_one(self._row(x), self._w)
        if self._classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    def learn_one(self, x: Any, y: Any) -> float:
        """Predict x with the current model, then learn (x, y); return the prediction.

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); the state is then
            exactly as before the call.
        """
        xr = self._row(x)
        yv = label_to_sign(y) if self._classify else (y if type(y) is float else as_scalar(y))
        yhat, status = _dfop_learn_one(
            xr, yv, self._lam, self._w, self._P, self._Px, self._counts,
            self._max_variance, self._skip,
        )
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        if self._classify:
            return 1.0 if yhat >= 0.0 else -1.0
        return yhat

    # ----------------------------------------------------------------- block
    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        if self._classify:
            y = np.asarray(Y)
            if y.shape != (n,):
                raise ValueError(f"y must be a 1-D array of shape ({n},), got shape {y.shape}")
            # Unknown labels become NaN so the kernel stops (or skips) at that
            # row like at any other invalid target.
            return np.where(y == 1, 1.0, np.where((y == 0) | (y == -1), -1.0, np.nan))
        return as_targets(Y, n, np.float64)

    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        if forgetting is None:
            mu, stride = self._mu, 0
        else:
            mu = np.ascontiguousarray(forgetting, dtype=np.float64)
            if mu.shape != (X.shape[0],):
                raise ValueError(
                    f"forgetting must be a scalar or an array of shape ({X.shape[0]},), "
                    f"got shape {mu.shape}"
                )
            if not np.all((mu >= 0.0) & (mu < 1.0)):
                raise ValueError("every per-step forgetting factor must be in [0, 1)")
            stride = 1
        return _dfop_learn_many(
            X, Y, mu, stride, self._w, self._P, self._Px, self._work, self._counts,
            self._max_variance, self._skip, out,
        )

    def learn_many(self, X: Any, y: Any, forgetting: Any = None) -> np.ndarray:
        """Learn a block of samples in one kernel call; return prequential predictions.

        Parameters
        ----------
        X : array of shape (n, n_features)
        y : array of shape (n,)
        forgetting : float or array of shape (n,), optional
            Per-step forgetting factors mu_t in [0, 1) (G-DFOP); default: the
            model's ``forgetting``.

        Returns
        -------
        ndarray of shape (n,)
            Row t is the prediction for X[t] made before learning it (labels in
            {-1, +1} for classification). Identical to calling
            :meth:`learn_one` row by row.
        """
        if forgetting is not None and np.ndim(forgetting) == 0:
            forgetting = np.full(np.shape(X)[0] if np.ndim(X) == 2 else 0, float(forgetting))
        out = self._learn_many_checked(X, y, forgetting=forgetting)
        return self._finish(out)

    def _predict_block(self, X, out):  # type: ignore[override]
        _dfop_predict_many(X, self._w, out)

    def predict_many(self, X: Any) -> np.ndarray:
        """Predict a block of samples without learning."""
        return self._finish(super().predict_many(X))

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores w^T x for a block of samples."""
        return super().predict_many(X)

    def _finish(self, scores: np.ndarray) -> np.ndarray:
        if self._classify:
            return np.where(scores >= 0.0, 1.0, -1.0)
        return scores

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4},
            {"n_features": 3, "forgetting": 0.05, "task": "classification"},
            {"n_features": 5, "dtype": "float32"},
        ]


class RLS(DFOP):
    """Recursive least squares: :class:`DFOP` with forgetting 0 (SPEC.md section 1).

    Minimises the undiscounted squared loss plus the prior ||w||^2 / p0; all
    samples weigh the same forever. Same parameters as DFOP except
    ``forgetting`` (always 0).

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import RLS
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = X @ [1.0, -2.0, 0.5]
    >>> _ = RLS(3, p0=1e6).learn_many(X, y)
    """

    def __init__(
        self,
        n_features: int,
        *,
        task: str = "regression",
        p0: float = 100.0,
        max_variance: float | None = None,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        super().__init__(
            n_features, 0.0, task=task, p0=p0, max_variance=max_variance,
            dtype=dtype, on_invalid=on_invalid,
        )

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [{"n_features": 4}, {"n_features": 3, "task": "classification"}]
