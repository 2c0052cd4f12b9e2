"""MORES and its baselines: online multiple-output regression (docs/algorithms/mores.md).

Three models predict m outputs at once, yhat = W^T x with W in R^{D x m}
(D = d + 1 when ``fit_intercept``: a constant-1 input is appended internally):

* :class:`MORES` - the structured model of docs/algorithms/mores.md. It keeps the
  discounted statistics
      M_t = mu M_{t-1} + x_t x_t^T,  N_t = mu N_{t-1} + x_t y_t^T,
      Q_t = mu Q_{t-1} + y_t y_t^T
  and after each sample does one sweep of three closed-form sub-steps:
      W-step:     W Omega + C M_t W S = W_{t-1} Omega + C N_t S
      S-step:     S_t^-1     = (gamma S_{t-1}^-1     + tau I + (C/2) E_t(W_t)) / (gamma + tau)
      Omega-step: Omega_t^-1 = (gamma Omega_{t-1}^-1 + tau I + (1/2) D^T D)    / (gamma + tau)
  with E_t(W) = W^T M_t W - W^T N_t - N_t^T W + Q_t and D = W_t - W_{t-1}.
* :class:`SOMOR` - the paper's simple formulation (Omega = S = I, no history),
  a multi-output passive-aggressive step.
* :class:`PARegressor` - passive-aggressive regression (Crammer et al. 2006,
  PA-I / PA-II) applied to each output independently.

This module holds the classes; the kernels are ``edgereg/_kernels/mores.py``
(SOMOR and PA: ``pa.py``); how the W-step is solved without allocating and the numerical care are
docs/design/mores.md.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel
from ._interval import OutputsIntervalMixin, check_coverage, interval_blocks, interval_faults
from ._jit import python_function
from ._kernels.interval import (
    IB_SIZE,
    N_IHYPER,
    N_INTERVAL,
    interval_bands_outputs,
    interval_outputs,
    interval_pass_outputs,
)
from ._kernels.mores import (
    HYPER_C,
    HYPER_DECAY,
    HYPER_GAMMA,
    HYPER_TAU,
    HYPER_TOL,
    OK,
    _mo_predict_many,
    _mo_predict_one,
    _mores_learn_many,
    _mores_learn_many_marked,
    _mores_learn_one,
    _mores_scratch,
    _mores_views,
    mores_learnt_size,
    mores_scratch_size,
)
from ._kernels.mores32 import mores32_learn_many, mores32_learn_one_wide
from ._kernels.pa import _lin_learn_many, _lin_learn_one
from ._kernels.pa32 import (
    lin32_learn_many,
    lin32_learn_one_wide,
    mo32_predict_many,
    mo32_predict_one,
)
from ._validate import as_row, as_scalar, check_float, check_int, kernel_ready

__all__ = ["MORES", "SOMOR", "PARegressor", "MORESState", "SOMORState", "MORESIntervalState"]

#: Largest C accepted by MORES (measured on inputs of scale 1e-3..1e3,
#: both dtypes: C = 1e8 refuses none, 1e10 refuses 10 of 500 float32 samples
#: at scale 1e3, 1e12 refuses 425).
MAX_C = 1e8


class MORESState(NamedTuple):
    """What a MORES model has learnt (D = d + fit_intercept inputs, m outputs).

    ``D^2 + 2 D m + 5 m^2`` values of the dtype plus the counters; its
    workspace (``MORESWork``) adds ``2 D^2 + 4 D m + 12 m^2 + 5 D + 2 m``
    and the kernels' constants (56 bytes).
    """

    W: np.ndarray  # (D, m) coefficients, last row the intercept when fitted
    Omega: np.ndarray  # (m, m) structure of the coefficient change
    Omega_inv: np.ndarray  # (m, m)
    S: np.ndarray  # (m, m) structure of the residuals
    S_inv: np.ndarray  # (m, m)
    M: np.ndarray  # (D, D) discounted sum of x x^T
    N: np.ndarray  # (D, m) discounted sum of x y^T
    Q: np.ndarray  # (m, m) discounted sum of y y^T
    counts: np.ndarray  # int64 (2,): samples learnt, samples skipped


class MORESIntervalState(NamedTuple):
    """A MORES with calibrated intervals (``coverage`` set): MORES' state and each
    output's interval bookkeeping (``_kernels/interval.py``), a row per output."""

    W: np.ndarray
    Omega: np.ndarray
    Omega_inv: np.ndarray
    S: np.ndarray
    S_inv: np.ndarray
    M: np.ndarray
    N: np.ndarray
    Q: np.ndarray
    counts: np.ndarray
    interval: np.ndarray  # float64 (m, 6): noise weight, weighted sum, scored, q, covered, 0


class MORESWork(NamedTuple):
    """MORES' workspace: the sub-steps' buffers and the copy that undoes a
    non-finite step (views of one scratch block of the dtype, ``scratch``),
    and the kernels' constants."""

    x: np.ndarray  # (D,) the sample with its constant-1 input
    DD: np.ndarray  # (D, D) Householder vectors of the tridiagonalisation of M
    D: np.ndarray  # (4, D) diagonal and off-diagonal of T, the betas, scratch
    Dm: np.ndarray  # (3, D, m) W_{t-1}; tridiagonal pivots, M W - N, D; RHS G -> Y
    mm: np.ndarray  # (7, m, m) K; K^T S K, Omega G; V; G; S K, C S G, E; L; L^-1
    m: np.ndarray  # (2, m) eigenvalues s of K^T S K; C s and scratch
    undo: np.ndarray  # (D^2 + D m + 5 m^2,) M, N, Q, S, S^-1, Omega, Omega^-1 before the step
    hyper: np.ndarray  # float64 (5,): C, decay, gamma, tau, tol (_kernels/mores.py's HYPER_*)
    codes: np.ndarray  # int64 (2,): fit_intercept, skip (CODE_*)


class MORESIntervalWork(NamedTuple):
    """MORESWork and each output's interval constants and band (eta, the noise's
    forgetting, the coverage; lower, prediction, upper), a row per output."""

    x: np.ndarray
    DD: np.ndarray
    D: np.ndarray
    Dm: np.ndarray
    mm: np.ndarray
    m: np.ndarray
    undo: np.ndarray
    hyper: np.ndarray
    codes: np.ndarray
    interval_hyper: np.ndarray  # float64 (m, 6): eta, noise forgetting, coverage; the band


class SOMORState(NamedTuple):
    """What SOMOR / PARegressor have learnt: ``D m`` values and the counters."""

    W: np.ndarray  # (D, m) coefficients, last row the intercept when fitted
    counts: np.ndarray  # int64 (2,)


class SOMORWork(NamedTuple):
    """SOMOR's / PA's workspace: scratch (``D + m`` values), a cached bound (16
    bytes) and the kernels' constants."""

    scratch: np.ndarray  # (D + m,) the sample with its constant-1 input, then the residual
    # float64 (2,): a bound of ||W||_F and the updates since it was exact; a
    # cache of speed only (NaN = unknown: recomputed, as after a load). With
    # arithmetic="float32" the two are float32 in the first 8 bytes.
    bound: np.ndarray
    hyper: np.ndarray  # float64 (2,): C, epsilon
    codes: np.ndarray  # int64 (3,): fit_intercept, skip, kind


#: SOMOR's and PARegressor's ``arithmetic`` values.
_ARITHMETICS = ("auto", "float32")


# ---------------------------------------------------------------------- models
class _MultiOutput(OnlineModel):
    """Shared Python layer of the multi-output models (not public)."""

    _task = "multioutput"
    n_outputs: int
    fit_intercept: bool

    #: Whether the model computes in float32 only (``arithmetic="float32"``).
    _arith32 = False

    def _init_outputs(self, n_outputs: int, fit_intercept: bool) -> None:
        self.n_outputs = check_int("n_outputs", n_outputs)
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be a bool, got {fit_intercept!r}")
        self.fit_intercept = bool(fit_intercept)
        self._D = self.n_features + int(self.fit_intercept)
        self._m = self.n_outputs
        self._y_shape = (self._m,)

    # ------------------------------------------------------------ attributes
    @property
    def coef_(self) -> np.ndarray:
        """Coefficients of the inputs, shape (n_features, n_outputs) (a copy)."""
        return np.array(self._state.W[: self.n_features], copy=True)

    @property
    def intercept_(self) -> np.ndarray:
        """Intercept per output, shape (n_outputs,); zeros without ``fit_intercept``."""
        if self.fit_intercept:
            return np.array(self._state.W[self.n_features], copy=True)
        return np.zeros(self._m, dtype=self.dtype)

    # ------------------------------------------------------------ validation
    def _target(self, y: Any) -> np.ndarray:
        if type(y) is np.ndarray and y.dtype == np.float64 and y.shape == self._y_shape:
            if y.flags.carray:  # C-contiguous, aligned, writeable (_validate.kernel_ready)
                return y
        return as_row(y, self._m, np.dtype(np.float64), what="y")

    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        Y = np.asarray(Y)
        if Y.dtype.kind not in "biuf":
            raise TypeError(f"Y must hold real numbers, got dtype {Y.dtype}")
        if Y.shape != (n, self._m):
            raise ValueError(
                f"Y must be a 2-D array of shape ({n}, {self._m}), got shape {Y.shape}"
            )
        return kernel_ready(np.ascontiguousarray(Y, dtype=np.float64))

    def _output_shape(self, n: int) -> tuple[int, ...]:
        return (n, self._m)

    # ------------------------------------------------------------ prediction
    def predict_one(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Predict the m outputs of one sample, W^T [x, 1] (no learning).

        ``out``: a float64 array of shape (n_outputs,) to write the prediction
        into (and return), so that a loop allocates nothing per call.
        """
        out = self._prediction_out(out)
        if self._arith32:  # summed in float32, as learn_one's prediction
            mo32_predict_one(self._row(x), self.fit_intercept, self._state.W, out)
        else:
            _mo_predict_one(self._row(x), self.fit_intercept, self._state.W, out)
        return out

    def _prediction_out(self, out: np.ndarray | None) -> np.ndarray:
        """predict_one's ``out``: a new array, or the caller's once checked."""
        if out is None:
            return np.empty(self._m, dtype=np.float64)
        if not (type(out) is np.ndarray and out.dtype == np.float64
                and out.shape == self._y_shape and out.flags.c_contiguous
                and out.flags.writeable):
            raise ValueError(f"out must be a writeable C-contiguous float64 array of shape "
                             f"{self._y_shape}")
        return out

    def _predict_block(self, X, out):  # type: ignore[override]
        if self._arith32:
            mo32_predict_many(X, self.fit_intercept, self._state.W, out)
        else:
            _mo_predict_many(X, self.fit_intercept, self._state.W, out)

    def learn_many(self, X: Any, Y: Any) -> np.ndarray:
        """Learn a block in one kernel call; return the prequential predictions.

        Parameters
        ----------
        X : array of shape (n, n_features)
        Y : array of shape (n, n_outputs)

        Returns
        -------
        ndarray of shape (n, n_outputs)
            Row t is the prediction for X[t] made before learning it; identical
            to calling :meth:`learn_one` row by row.

        Raises
        ------
        ValueError
            At the first row with NaN/inf (``on_invalid="raise"``): the rows
            before it are learnt, it and the rows after it are not.
        """
        return self._learn_many_checked(X, Y)


class MORES(OutputsIntervalMixin, _MultiOutput):
    r"""Dynamic-structure online multiple-output regression (docs/algorithms/mores.md).

    Predicts y in R^m as yhat = W^T x and learns, after each sample, the
    coefficients W together with two m x m structure matrices by one sweep of
    alternating minimisation of

    .. math::

        \tfrac12 \operatorname{tr}((W - W_{t-1}) \Omega (W - W_{t-1})^T)
        + \tfrac{C}{2} \operatorname{tr}(S E_t(W))
        + \gamma [D_{ld}(S, S_{t-1}) + D_{ld}(\Omega, \Omega_{t-1})]
        + \tau [D_{ld}(S, I) + D_{ld}(\Omega, I)],

    E_t(W) = W^T M_t W - W^T N_t - N_t^T W + Q_t, with M_t, N_t, Q_t the
    ``decay``-discounted sums of x x^T, x y^T and y y^T. The sub-steps, in order:

    * W-step: W Omega + C M_t W S = W_{t-1} Omega + C N_t S, solved exactly:
      the eigendecomposition of the m x m K^T S K (Omega^-1 = K K^T) splits
      it into m systems (I + C s_j M_t) y_j = r_j, all solved through one
      tridiagonalisation of M_t, see the module notes;
    * S-step: S_t^-1 = (gamma S_{t-1}^-1 + tau I + (C/2) E_t(W_t)) / (gamma + tau);
    * Omega-step: Omega_t^-1 = (gamma Omega_{t-1}^-1 + tau I + (1/2) D^T D) / (gamma + tau),
      D = W_t - W_{t-1}.

    S and Omega stay symmetric positive definite with eigenvalues in (0, 1].
    This objective is edgereg's reconstruction of the paper's (whose formulas
    are not available); see docs/algorithms/mores.md.

    Parameters
    ----------
    n_features : int
        Input dimension d (without the intercept).
    n_outputs : int
        Number of outputs m.
    C : float, default 1.0
        Weight of the discounted Mahalanobis loss against the change of W,
        at most ``MAX_C`` = 1e8 (beyond it the W-step's I + C s M loses
        the identity's digits: float32 samples of size 1e3 are refused from
        C = 1e10 on, most of them at 1e12).
    decay : float, default 0.99
        The paper's forgetting factor mu in [0, 1]: sample i weighs
        mu^(t - i) at time t. 0 keeps the current sample only (0^0 := 1), 1
        forgets nothing. It is 1 minus DFOP's ``forgetting`` (DFOP's
        forgetting 0.01 is decay 0.99).
    gamma : float, default 1.0
        Weight >= 0 of the LogDet divergences to the previous S and Omega.
    tau : float, default 100.0
        Weight > 0 of the LogDet divergences to the identity.
    fit_intercept : bool, default True
        Append a constant-1 input internally (its row of W is ``intercept_``).
    dtype : {"float64", "float32"}
    on_invalid : {"raise", "skip"}
        What a sample with NaN/inf in x or y does: raise ``ValueError`` (state
        unchanged) or be skipped and counted in ``n_skipped_``.
    arithmetic : {"auto", "float32"}, default "auto"
        How a step computes. ``"auto"``: the state in ``dtype``, the sums,
        the eigenproblems and the W-step's solve in float64 whatever the
        dtype. ``"float32"`` (with ``dtype="float32"``, not with
        ``coverage``): every value in float32, the prediction and the targets
        included, the same step (Jacobi, Householder tridiagonalisation, the
        shifted solves, the Cholesky inverses) in the same order, with C,
        decay, gamma and tau rounded to float32 (C and tau must be in
        float32's normal range; a decay or gamma below 1.2e-38 is 0) and rows
        whose ||x||^2, ||y||^2 or prediction overflow float32 refused: the
        arithmetic of an export for a single-precision FPU (no soft-double
        code), which this model reproduces bit for bit
        (docs/design/float32.md, "MORES").
    coverage : float in (0, 1), optional
        Calibrate one prediction interval per output at this coverage while
        learning (default None: none, nothing added to a step). Output j's
        interval before learning sample t is

        .. math:: \hat y_{t,j} \mp q_j \hat\sigma_j

        sigma_j^2 the ``decay``-weighted mean of output j's squared residuals
        and q_j tracked online so that the long-run fraction of misses is
        1 - coverage for any sequence (docs/design/intervals.md; MORES has no
        leverage term x^T P x: its M_t^-1 is never formed).
        :meth:`predict_interval` (shape (n_outputs, 3)),
        ``learn_one(..., interval=True)``, ``learn_many(..., interval=True)``
        (shape (n, n_outputs, 3)), ``coverage_`` (one per output).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_outputs)
    intercept_ : ndarray of shape (n_outputs,)
    output_structure_ : ndarray of shape (n_outputs, n_outputs)
        Omega, the structure of the change of the coefficients.
    residual_structure_ : ndarray of shape (n_outputs, n_outputs)
        S, the structure (precision-like weighting) of the residuals.

    Notes
    -----
    Fixed memory, with D = d + fit_intercept: 3 D^2 + 6 D m + 17 m^2 + 5 D + 2 m
    values of ``dtype`` plus 72 bytes (the counters, the kernels' 7 constants;
    d = 21, m = 7, float64: 26.7 KB).
    Cost per sample O(D^3 + D^2 m + m^3): one Householder tridiagonalisation
    of M_t (about D^3 multiply-adds), its reflectors applied twice to a D x m
    matrix (2 D^2 m), and two m x m Jacobi eigenproblems.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import MORES
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); Wtrue = rng.normal(size=(3, 2))
    >>> Y = X @ Wtrue + 0.01 * rng.normal(size=(300, 2))
    >>> model = MORES(3, 2, C=10.0)
    >>> _ = model.learn_many(X, Y)
    >>> bool(np.allclose(model.coef_, Wtrue, atol=0.05))
    True
    """

    def __init__(
        self,
        n_features: int,
        n_outputs: int,
        C: float = 1.0,
        decay: float = 0.99,
        *,
        gamma: float = 1.0,
        tau: float = 100.0,
        fit_intercept: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        coverage: float | None = None,
        arithmetic: str = "auto",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self._init_outputs(n_outputs, fit_intercept)
        self.coverage = check_coverage(coverage)
        self._bands: np.ndarray | None = None
        self.C = check_float("C", C, 0.0, MAX_C, low_open=True)
        self.decay = check_float("decay", decay, 0.0, 1.0)
        self.gamma = check_float("gamma", gamma, 0.0, None)
        self.tau = check_float("tau", tau, 0.0, None, low_open=True)
        # Threshold of the Jacobi sweeps, relative to ||A||_F: a few ulps of
        # the state's precision (float32 cannot resolve 1e-14).
        self._tol = float(64.0 * np.finfo(self.dtype).eps)
        self._init_arithmetic(arithmetic)
        self.reset()

    def _init_arithmetic(self, arithmetic: str) -> None:
        """Validate ``arithmetic``; for "float32", the constants rounded to float32
        (normal or zero: the kernels read them by their bits, ``dfop32._narrow``)."""
        if arithmetic not in _ARITHMETICS:
            raise ValueError(f"arithmetic must be one of {_ARITHMETICS}, got {arithmetic!r}")
        self.arithmetic = arithmetic
        self._arith32 = arithmetic == "float32"
        self._hyper = [self.C, self.decay, self.gamma, self.tau, self._tol]
        if not self._arith32:
            return
        if self.dtype != np.float32:
            raise ValueError("arithmetic='float32' needs dtype='float32'")
        if self.coverage is not None:
            raise ValueError("arithmetic='float32' does not support coverage")
        tiny, big = float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max)
        if not self.gamma <= big:
            raise ValueError(f"gamma {self.gamma!r} is beyond float32's range")
        if not tiny <= self.tau <= big:
            raise ValueError(f"tau {self.tau!r} is outside float32's normal range")
        if not tiny <= self.C:
            raise ValueError(f"C {self.C!r} is below float32's normal range")

        def narrow(v: float) -> float:
            v = float(np.float32(v))
            return v if v >= tiny else 0.0

        self._hyper = [narrow(v) for v in self._hyper]

    def _allocate(self) -> tuple[MORESState, MORESWork]:
        D, m, dt = self._D, self._m, self.dtype
        A = np.zeros(mores_learnt_size(D, m), dtype=dt)
        W, Om, Om_inv, S, S_inv, M, N, Q = python_function(_mores_views)(A, D, m)
        for eye in (Om, Om_inv, S, S_inv):
            eye[np.diag_indices(m)] = 1.0
        state = MORESState(W, Om, Om_inv, S, S_inv, M, N, Q, np.zeros(2, dtype=np.int64))
        scratch = np.zeros(mores_scratch_size(D, m), dtype=dt)
        hyper = np.zeros(5)
        hyper[[HYPER_C, HYPER_DECAY, HYPER_GAMMA, HYPER_TAU, HYPER_TOL]] = self._hyper
        codes = np.array([self.fit_intercept, self._skip], dtype=np.int64)
        work = MORESWork(*python_function(_mores_scratch)(scratch, D, m), hyper=hyper, codes=codes)
        if self.coverage is None:
            return state, work
        # One block IB per output (bookkeeping, constants, band: ``ib_views``),
        # rows of IBS; the learnt part is a view of its first columns. The
        # noise level is forgotten at MORES' own rate, 1 - decay.
        IBS = np.zeros((m, IB_SIZE))
        for j in range(m):
            IBS[j] = interval_blocks(self.coverage, 1.0 - self.decay)[0]
        state = MORESIntervalState(*state, interval=IBS[:, :N_INTERVAL])
        work = MORESIntervalWork(*work, interval_hyper=IBS[:, N_INTERVAL:])
        return state, work

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        faults = super()._state_faults(state)
        if isinstance(state, MORESIntervalState):
            for j in range(state.interval.shape[0]):
                faults += interval_faults(state.interval[j], f"interval[{j}]")
        return faults

    def _bind_state(self) -> None:
        s, w = self._state, self._work
        # The blocks the kernels take: A (every learnt matrix), counts, the scratch.
        self._blocks = (s.W.base, s.counts, w.x.base, w.hyper, w.codes)
        interval = getattr(s, "interval", None)
        self._I = interval
        if self._arith32:  # learn_one's float32 y and prediction
            self._y32 = np.zeros(self._m, np.float32)
            self._out32 = np.zeros(self._m, np.float32)
        if interval is not None:
            self._IBS = interval.base  # (m, IB_SIZE): output j's block is row j
            self._band = self._IBS[:, N_INTERVAL + N_IHYPER:]  # (m, 3): learn_one's bands
            # The forgetting the interval kernels see: 0 (v = 1; the noise's own
            # forgetting, 1 - decay, is in each block's constants).
            self._no_mu = np.zeros(1)

    @property
    def output_structure_(self) -> np.ndarray:
        """Omega (m x m), the learnt structure of the coefficient change (a copy)."""
        return self._state.Omega.copy()

    @property
    def residual_structure_(self) -> np.ndarray:
        """S (m x m), the learnt structure of the residuals (a copy)."""
        return self._state.S.copy()

    def learn_one(self, x: Any, y: Any, interval: Any = False) -> np.ndarray:
        """Predict x with the current W, then learn (x, y); return that prediction.

        Parameters
        ----------
        x : array of shape (n_features,)
        y : array of shape (n_outputs,)
        interval : bool, optional
            Return each output's interval made before learning instead, shape
            (n_outputs, 3): lower, prediction, upper (a model built with ``coverage``).

        Returns
        -------
        ndarray of shape (n_outputs,), or (n_outputs, 3) with ``interval``

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); the state is then
            exactly as before the call.
        """
        if interval:
            self._check_interval(interval)
        xr = self._row(x)
        yr = self._target(y)
        out = np.empty(self._m, dtype=np.float64)
        if self._arith32:
            status = mores32_learn_one_wide(xr, yr, out, *self._blocks, self._y32, self._out32)
        else:
            status = _mores_learn_one(xr, yr, out, *self._blocks)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        if self._I is None:
            return out
        # The bands before learning, then the bookkeeping (a refused row: NaN
        # bands, nothing learnt), as ``interval_pass_outputs`` does for a block.
        interval_outputs(yr, out, 0.0 if status == OK else np.nan, 0.0, self._IBS)
        return self._band.copy() if interval else out

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        if self._arith32:
            # Targets and predictions in float32, as an export's C caller passes them.
            with np.errstate(over="ignore"):  # a target beyond float32 becomes inf: refused
                Y32 = Y.astype(np.float32)
            out32 = np.empty(out.shape, np.float32)
            bad = mores32_learn_many(X, Y32, out32, *self._blocks)
            out[:] = out32
            return bad
        if self._I is None:
            return _mores_learn_many(X, Y, out, *self._blocks)
        n = X.shape[0]
        lev = np.empty(n)
        bad = _mores_learn_many_marked(X, Y, out, lev, *self._blocks)
        self._bands = np.empty((n, self._m, 3))
        done = n if bad < 0 else bad
        interval_pass_outputs(Y, self._no_mu, out, lev, done, self._IBS, self._bands)
        self._bands = self._bands[:done] if bad >= 0 else self._bands
        return bad

    def learn_many(self, X: Any, Y: Any, interval: Any = False) -> np.ndarray:
        """Learn a block in one kernel call; return the prequential predictions.

        Parameters
        ----------
        X : array of shape (n, n_features)
        Y : array of shape (n, n_outputs)
        interval : bool, optional
            Return each output's interval made before learning each row, shape
            (n, n_outputs, 3): lower, prediction, upper (a model built with ``coverage``).

        Returns
        -------
        ndarray of shape (n, n_outputs), or (n, n_outputs, 3) with ``interval``
            Row t is made before learning X[t]; identical to calling
            :meth:`learn_one` row by row.

        Raises
        ------
        ValueError
            At the first row with NaN/inf (``on_invalid="raise"``): the rows
            before it are learnt (their intervals too), it and the rows after
            it are not.
        """
        if interval:
            self._check_interval(interval)
        out = self._learn_many_checked(X, Y)
        if interval:
            bands, self._bands = self._bands, None
            return bands
        self._bands = None
        return out

    def _interval_many(self, X: np.ndarray, out: np.ndarray) -> None:
        pred = np.empty((X.shape[0], self._m))
        self._predict_block(X, pred)
        interval_bands_outputs(pred, self._IBS, out)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4, "n_outputs": 3},
            {"n_features": 3, "n_outputs": 2, "decay": 1.0, "fit_intercept": False, "C": 5.0},
            {"n_features": 5, "n_outputs": 2, "gamma": 0.0, "tau": 10.0, "dtype": "float32"},
            {"n_features": 3, "n_outputs": 2, "coverage": 0.9},  # calibrated intervals
            {"n_features": 4, "n_outputs": 3, "dtype": "float32", "arithmetic": "float32"},
            {"n_features": 3, "n_outputs": 2, "decay": 1.0, "fit_intercept": False, "C": 5.0,
             "dtype": "float32", "arithmetic": "float32"},
        ]


class _LinearMultiOutput(_MultiOutput):
    """SOMOR and PA share their state and kernels (``_kind``: 0, 1, 2)."""

    _kind: int
    _C: float
    epsilon: float

    def _init_arithmetic(self, arithmetic: str) -> None:
        """Validate ``arithmetic``; for "float32", C and epsilon rounded to float32
        (normal or zero: the kernels read them by their bits, ``dfop32._narrow``)."""
        if arithmetic not in _ARITHMETICS:
            raise ValueError(f"arithmetic must be one of {_ARITHMETICS}, got {arithmetic!r}")
        self.arithmetic = arithmetic
        self._arith32 = arithmetic == "float32"
        self._C32, self._eps32 = self._C, self.epsilon
        if not self._arith32:
            return
        if self.dtype != np.float32:
            raise ValueError("arithmetic='float32' needs dtype='float32'")
        tiny, big = float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max)
        eps = float(np.float32(self.epsilon)) if self.epsilon <= big else np.inf
        C = float(np.float32(self._C)) if self._C <= big else np.inf
        if not eps <= big:
            raise ValueError(f"epsilon {self.epsilon!r} is beyond float32's range")
        if not tiny <= C <= big:
            raise ValueError(f"C {self._C!r} is outside float32's normal range")
        self._C32, self._eps32 = C, (eps if eps >= tiny else 0.0)

    def _allocate(self) -> tuple[SOMORState, SOMORWork]:
        D, m, dt = self._D, self._m, self.dtype
        state = SOMORState(W=np.zeros((D, m), dtype=dt), counts=np.zeros(2, dtype=np.int64))
        bound = np.array([np.nan, 0.0])
        if self._arith32:  # the bound and its count as float32 (``_kernels/pa32.py``)
            bound[:] = 0.0
            bound.view(np.float32)[:2] = (np.nan, 0.0)
        work = SOMORWork(
            scratch=np.zeros(D + m, dtype=dt),
            bound=bound,
            hyper=np.array([self._C32, self._eps32]),
            codes=np.array([self.fit_intercept, self._skip, self._kind], dtype=np.int64),
        )
        return state, work

    def _bind_state(self) -> None:
        s, w = self._state, self._work
        self._blocks = (s.W, s.counts, w.scratch, w.bound, w.hyper, w.codes)
        if self._arith32:  # learn_one's float32 y and prediction
            self._y32 = np.zeros(self._m, np.float32)
            self._out32 = np.zeros(self._m, np.float32)

    def _learn_vector(self, x: Any, y: Any) -> np.ndarray:
        xr = self._row(x)
        yr = self._target(y)
        out = np.empty(self._m, dtype=np.float64)
        if self._arith32:
            status = lin32_learn_one_wide(xr, yr, out, *self._blocks, self._y32, self._out32)
        else:
            status = _lin_learn_one(xr, yr, out, *self._blocks)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return out

    def learn_one(self, x: Any, y: Any) -> np.ndarray:
        """Predict x with the current W, then learn (x, y); return that prediction.

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); state unchanged.
        """
        return self._learn_vector(x, y)

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        if not self._arith32:
            return _lin_learn_many(X, Y, out, *self._blocks)
        # Targets and predictions in float32, as an export's C caller passes them.
        with np.errstate(over="ignore"):  # a target beyond float32 becomes inf: refused
            Y32 = Y.astype(np.float32)
        out32 = np.empty(out.shape, np.float32)
        bad = lin32_learn_many(X, Y32, out32, *self._blocks)
        out[:] = out32
        return bad



class SOMOR(_LinearMultiOutput):
    r"""Simple online multiple-output regression (docs/algorithms/mores.md, "SOMOR").

    The paper's simple formulation (Omega = S = I, no history): a
    multi-output passive-aggressive step

    .. math::

        W_t = \arg\min_W \tfrac12 \|W - W_{t-1}\|_F^2
        \ \text{s.t.}\ \|y_t - W^T x_t\|_2 \le \epsilon,

    in closed form W_t = W_{t-1} + x_t r^T max(0, 1 - epsilon / ||r||) / ||x_t||^2,
    r = y_t - W_{t-1}^T x_t (x_t with its constant-1 input when fitting an
    intercept).

    Parameters
    ----------
    n_features, n_outputs : int
    epsilon : float, default 0.1
        Radius (Euclidean norm over the outputs) of the insensitive zone.
    fit_intercept : bool, default True
    dtype : {"float64", "float32"}
    on_invalid : {"raise", "skip"}
    arithmetic : {"auto", "float32"}, default "auto"
        How a step computes. ``"auto"``: W and the scratch in ``dtype``, the
        scalars (||x||^2, the residual's norm, the step size, the bound that
        keeps W finite) in float64. ``"float32"`` (with ``dtype="float32"``):
        every value in float32, the prediction and the targets included,

        .. math::

            \hat y = W^\top x,\quad r = y - \hat y,\quad
            W \leftarrow W + x\,\Bigl(\frac{1 - \epsilon / \|r\|}{\|x\|^2}\Bigr) r^\top,

        with epsilon rounded to float32 (below 1.2e-38: 0) and rows whose
        ||x||^2, ||y||^2 or ||r||^2 overflow float32 (about 1.8e19) refused:
        the arithmetic of an export for a single-precision FPU (no
        soft-double code), which this model reproduces bit for bit
        (docs/design/float32.md, "float32-only arithmetic").

    Notes
    -----
    Fixed memory: D m + D + m values of ``dtype`` plus 72 bytes (the counters, a cached
    bound, the kernels' 5 constants), D = d + fit_intercept.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import SOMOR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> Y = X @ rng.normal(size=(3, 2))                 # two outputs
    >>> model = SOMOR(3, 2, epsilon=0.01)
    >>> predictions = model.learn_many(X, Y)            # (2000, 2), prequential
    >>> bool(np.linalg.norm(predictions[-100:] - Y[-100:], axis=1).max() < 0.02)
    True
    """

    _kind = 0

    def __init__(
        self,
        n_features: int,
        n_outputs: int,
        epsilon: float = 0.1,
        *,
        fit_intercept: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        arithmetic: str = "auto",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self._init_outputs(n_outputs, fit_intercept)
        self.epsilon = check_float("epsilon", epsilon, 0.0, None)
        self._C = 1.0
        self._init_arithmetic(arithmetic)
        self.reset()

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4, "n_outputs": 3},
            {"n_features": 3, "n_outputs": 2, "epsilon": 0.0, "fit_intercept": False},
            {"n_features": 5, "n_outputs": 2, "dtype": "float32"},
            {"n_features": 4, "n_outputs": 3, "epsilon": 0.01, "dtype": "float32",
             "arithmetic": "float32"},
        ]


_PA_VARIANTS = {"I": 1, "II": 2}


class PARegressor(_LinearMultiOutput):
    r"""Passive-aggressive regression, PA-I or PA-II (Crammer et al. 2006), per output.

    Each output j has its own weights w_j (column j of W) and its own
    epsilon-insensitive loss l_j = max(0, ``|y_j - w_j^T x|`` - epsilon); the step

    .. math::

        w_j \leftarrow w_j + \operatorname{sign}(y_j - w_j^T x)\, \tau_j x, \quad
        \tau_j = \min(C, l_j / \|x\|^2) \ \text{(PA-I)}, \quad
        \tau_j = l_j / (\|x\|^2 + 1/(2C)) \ \text{(PA-II)},

    with x including the constant-1 input when fitting an intercept. The
    paper's PA-I / PA-II baselines of MORES (docs/algorithms/mores.md).

    Parameters
    ----------
    n_features : int
    n_outputs : int or None, default None
        None: a single-output regressor (``learn_one(x, y)`` takes and returns
        a scalar, ``learn_many`` takes y of shape (n,)). An int m: multi-output,
        y of shape (m,) per sample and (n, m) per block, like :class:`MORES`.
    variant : {"I", "II"}, default "I"
    C : float, default 1.0
        Aggressiveness (cap on the step for PA-I, softness for PA-II).
    epsilon : float, default 0.1
        Half-width of the insensitive zone.
    fit_intercept : bool, default True
    dtype : {"float64", "float32"}
    on_invalid : {"raise", "skip"}
    arithmetic : {"auto", "float32"}, default "auto"
        How a step computes. ``"auto"``: W and the scratch in ``dtype``, the
        scalars (||x||^2, the losses, the step sizes, the bound that keeps W
        finite) in float64. ``"float32"`` (with ``dtype="float32"``): every
        value in float32, the predictions and the targets included,

        .. math::

            \hat y_j = w_j^\top x,\quad l_j = \max(0, |y_j - \hat y_j| - \epsilon),\quad
            w_j \leftarrow w_j + \operatorname{sign}(y_j - \hat y_j)\,\tau_j x,

        tau_j as above, with C and epsilon rounded to float32 (C must then be
        in float32's normal range, 1.2e-38 to 3.4e38; an epsilon below
        1.2e-38 is 0) and rows whose ||x||^2 or ||y||^2 overflow float32
        (about 1.8e19) refused: the arithmetic of an export for a
        single-precision FPU (no soft-double code), which this model
        reproduces bit for bit (docs/design/float32.md, "float32-only
        arithmetic").

    Notes
    -----
    Fixed memory: D m + D + m values of ``dtype`` plus 72 bytes (the counters, a cached
    bound, the kernels' 5 constants), D = d + fit_intercept.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import PARegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = X @ [1.0, -2.0, 0.5]
    >>> model = PARegressor(3, variant="II", epsilon=0.01)   # one output
    >>> predictions = model.learn_many(X, y)                # prequential
    >>> bool(np.abs(predictions[-100:] - y[-100:]).max() < 0.02)
    True
    """

    def __init__(
        self,
        n_features: int,
        n_outputs: int | None = None,
        variant: str = "I",
        C: float = 1.0,
        epsilon: float = 0.1,
        *,
        fit_intercept: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        arithmetic: str = "auto",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self._scalar = n_outputs is None
        self._init_outputs(1 if n_outputs is None else n_outputs, fit_intercept)
        self.n_outputs = n_outputs  # type: ignore[assignment]  (None: scalar mode)
        if variant not in _PA_VARIANTS:
            raise ValueError(f"variant must be 'I' or 'II', got {variant!r}")
        self.variant = variant
        self._kind = _PA_VARIANTS[variant]
        self.C = check_float("C", C, 0.0, None, low_open=True)
        self._C = self.C
        self.epsilon = check_float("epsilon", epsilon, 0.0, None)
        self._init_arithmetic(arithmetic)
        self.reset()

    @property
    def _task(self) -> str:  # type: ignore[override]
        return "regression" if self._scalar else "multioutput"

    def _output_shape(self, n: int) -> tuple[int, ...]:
        return (n,) if self._scalar else (n, self._m)

    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        if self._scalar:
            Y = np.asarray(Y)
            if Y.shape != (n,):
                raise ValueError(f"y must be a 1-D array of shape ({n},), got shape {Y.shape}")
            return super()._targets_many(Y.reshape(n, 1), n)
        return super()._targets_many(Y, n)

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        return super()._learn_block(X, Y, out.reshape(X.shape[0], self._m))

    def _predict_block(self, X, out):  # type: ignore[override]
        super()._predict_block(X, out.reshape(X.shape[0], self._m))

    @property
    def coef_(self) -> np.ndarray:
        """Coefficients: (n_features,) in scalar mode, else (n_features, n_outputs)."""
        c = super().coef_
        return c[:, 0].copy() if self._scalar else c

    @property
    def intercept_(self) -> Any:
        """Intercept: a float in scalar mode, else shape (n_outputs,)."""
        b = super().intercept_
        return float(b[0]) if self._scalar else b

    def predict_one(self, x: Any) -> Any:
        """Predict one sample (a float in scalar mode, else shape (n_outputs,))."""
        out = super().predict_one(x)
        return float(out[0]) if self._scalar else out

    def learn_one(self, x: Any, y: Any) -> Any:
        """Predict x, then learn (x, y); return the prediction.

        In scalar mode y is a real number and the prediction a float; else y
        and the prediction have shape (n_outputs,).
        """
        if self._scalar:
            yv = np.array([y if type(y) is float else as_scalar(y)], dtype=np.float64)
            return float(self._learn_vector(x, yv)[0])
        return self._learn_vector(x, y)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4, "n_outputs": 3},
            {"n_features": 3, "n_outputs": 2, "variant": "II", "C": 0.5, "fit_intercept": False},
            {"n_features": 5, "variant": "II", "dtype": "float32"},
            {"n_features": 4, "variant": "I", "C": 0.1},
            {"n_features": 5, "variant": "II", "C": 0.5, "dtype": "float32",
             "arithmetic": "float32"},
            {"n_features": 3, "n_outputs": 2, "variant": "I", "fit_intercept": False,
             "dtype": "float32", "arithmetic": "float32"},
        ]
