"""MORES: online multiple-output regression (docs/algorithms/mores.md).

MORES predicts m outputs at once, yhat = W^T x with W in R^{D x m} (D = d + 1
when ``fit_intercept``: a constant-1 input is appended internally). It keeps
the discounted statistics
    M_t = mu M_{t-1} + x_t x_t^T,  N_t = mu N_{t-1} + x_t y_t^T,
    Q_t = mu Q_{t-1} + y_t y_t^T
and after each sample does one sweep of three closed-form sub-steps:
    W-step:     W Omega + C M_t W S = W_{t-1} Omega + C N_t S
    S-step:     S_t^-1     = (gamma S_{t-1}^-1     + tau I + (C/2) E_t(W_t)) / (gamma + tau)
    Omega-step: Omega_t^-1 = (gamma Omega_{t-1}^-1 + tau I + (1/2) D^T D)    / (gamma + tau)
with E_t(W) = W^T M_t W - W^T N_t - N_t^T W + Q_t and D = W_t - W_{t-1}.

Its baselines, SOMOR and PARegressor, are ``edgereg/pa.py``; the layer the
three share, ``_multi_output.py``. This module holds the class; the kernels
are ``edgereg/_kernels/mores.py`` (float32 arithmetic: ``mores32.py``); how the
W-step is solved without allocating and the numerical care are
docs/design/mores.md.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

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
    _mores_learn_many,
    _mores_learn_many_marked,
    _mores_learn_one,
    _mores_scratch,
    _mores_views,
    mores_learnt_size,
    mores_scratch_size,
)
from ._kernels.mores32 import mores32_learn_many, mores32_learn_one_wide
from ._multi_output import _MultiOutput
from ._validate import check_float

__all__ = ["MORES", "MORESState", "MORESIntervalState"]

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


# ---------------------------------------------------------------------- model
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
        self._hyper = [self.C, self.decay, self.gamma, self.tau, self._tol]
        if not self._set_arithmetic(arithmetic):
            return
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

    _one_kernel = staticmethod(_mores_learn_one)
    _one_kernel32 = staticmethod(mores32_learn_one_wide)
    _many_kernel = staticmethod(_mores_learn_many)
    _many_kernel32 = staticmethod(mores32_learn_many)

    def _bind_state(self) -> None:
        s, w = self._state, self._work
        # The blocks the kernels take: A (every learnt matrix), counts, the scratch.
        self._blocks = (s.W.base, s.counts, w.x.base, w.hyper, w.codes)
        interval = getattr(s, "interval", None)
        self._I = interval
        super()._bind_state()
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
        out, yr, status = self._learn_vector(x, y)
        if self._I is None:
            return out
        # The bands before learning, then the bookkeeping (a refused row: NaN
        # bands, nothing learnt), as ``interval_pass_outputs`` does for a block.
        interval_outputs(yr, out, 0.0 if status == OK else np.nan, 0.0, self._IBS)
        return self._band.copy() if interval else out

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        if self._arith32 or self._I is None:  # (float32 arithmetic has no intervals)
            return super()._learn_block(X, Y, out)
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


#: SOMOR's and PARegressor's names that this module held before ``pa.py``.
_MOVED_TO_PA = ("SOMOR", "PARegressor", "SOMORState", "SOMORWork")


def __getattr__(name: str) -> Any:
    """The names moved to ``pa.py``, from there: a pickle written before the
    move names this module, and loads."""
    if name in _MOVED_TO_PA:
        from . import pa

        return getattr(pa, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
