"""DFOP: forgetting-factor recursive least squares (docs/algorithms/dfop.md).

Distribution-free one-pass learning (Zhao & Zhou) minimises, at every step t,
the exponentially discounted squared loss with the prior P0 = p0 I,

    w_t = argmin_w  Lambda_t / p0 ||w||^2
                  + sum_{i<=t} (prod_{j=i+1..t} lambda_j) (y_i - w^T x_i)^2,

lambda_j = 1 - mu_j, mu the *forgetting factor*, Lambda_t = prod lambda_j. It
keeps w (d) and P = R_t^{-1} (d x d) and updates both in O(d^2) per sample::

    yhat = w^T x,  Px = P x,  k = Px / (lambda + x^T Px)
    w   <- w + k (y - yhat),  P <- (P - k Px^T) / lambda

with P exactly symmetric and, by default, the prior's mass given back as it
is forgotten (``keep_prior``), so that P stays bounded on any stream.

This module holds the classes; the kernels are ``edgereg/_kernels/dfop.py``;
the numerical argument and the measured choices are docs/design/dfop.md.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel, aligned_zeros, block_at, index_faults, symmetric_faults
from ._interval import IntervalMixin, check_coverage, interval_blocks, interval_faults
from ._jit import FirstCall, python_function
from ._kernels.dfop import (
    CODE_KEEP_PRIOR,
    CODE_PERIOD,
    CODE_SKIP,
    HYPER_MU,
    HYPER_P0,
    LEARNT_COUNTS,
    LEARNT_FORGOTTEN,
    _dfop_learn_many,
    _dfop_learn_many_impute,
    _dfop_learn_many_interval,
    _dfop_learn_one_packed,
    _dfop_predict_many,
    _dfop_predict_one,
    _packed_views,
    packed_size,
)
from ._kernels.dfop32 import (
    TARGET_LIMIT32,
    dfop32_learn_many,
    dfop32_learn_one_packed,
    dfop32_predict_many,
    dfop32_predict_one,
)
from ._kernels.guards import TARGET_LIMIT
from ._kernels.impute import (
    IMPUTE_REFUSED,
    dfop_impute_learn_one,
    dfop_learn_one_band_impute,
    mw_size,
)
from ._kernels.interval import (
    IB_SIZE,
    INTERVAL_IMPUTED,
    dfop_learn_one_band,
    dfop_predict_interval,
    ib_views,
)
from ._validate import (
    as_row,
    as_scalar,
    as_targets,
    check_float,
    label_sign,
    label_signs,
)

__all__ = ["DFOP", "RLS", "DFOPState"]

#: Largest prior variance accepted (measured: p0 = 1e10 with inputs
#: of norm 2e3 had 16% of samples refused as making P indefinite, 1e8 none).
MAX_P0 = 1e8
_TASKS = ("regression", "classification")
_ARITHMETICS = ("auto", "float32")
#: float32's smallest normal value: a float32-arithmetic forgetting below it is 0.
_FLOAT32_TINY = float(np.finfo(np.float32).tiny)
_ndarray = np.ndarray


class DFOPState(NamedTuple):
    """What a DFOP model has learnt: d^2 + d values of the dtype, 5 of 8 bytes."""

    w: np.ndarray  # (d,) weights
    P: np.ndarray  # (d, d) inverse discounted correlation, exactly symmetric
    forgotten: np.ndarray  # float64 (1,): sum of mu_t since the last prior refresh
    counts: np.ndarray  # int64 (4,): learnt, skipped, steps since refresh, next coordinate


class DFOPWork(NamedTuple):
    """DFOP's workspace: scratch (3s float64, whatever the dtype; no meaning
    between calls) and the kernels' constants, filled from the parameters."""

    scratch: np.ndarray  # float64 (3s,): P x, P_new x_next, v, every s = scratch_stride(d)
    hyper: np.ndarray  # float64 (N_HYPER,): mu, p0 (index names in _kernels/dfop.py)
    codes: np.ndarray  # int64 (N_CODES,): period, keep_prior, skip


class DFOPIntervalState(NamedTuple):
    """A DFOP with calibrated intervals (``coverage`` set): DFOP's state and the
    interval's bookkeeping (``_kernels/interval.py``)."""

    w: np.ndarray
    P: np.ndarray
    forgotten: np.ndarray
    counts: np.ndarray
    interval: np.ndarray  # float64 (6,): noise weight, weighted sum, scored, q, covered, imputed


class DFOPIntervalWork(NamedTuple):
    """DFOPWork and the interval's constants (eta, noise forgetting, coverage)."""

    scratch: np.ndarray
    hyper: np.ndarray
    codes: np.ndarray
    interval_hyper: np.ndarray


def dfop_constants(
    forgetting: float, p0: float, period: int, keep_prior: bool, skip: bool,
    hyper: np.ndarray, codes: np.ndarray,
) -> None:
    """Fill DFOP's entries of ``hyper`` and ``codes`` (the kernels' index names)."""
    hyper[HYPER_MU] = forgetting
    hyper[HYPER_P0] = p0
    codes[CODE_PERIOD] = period
    codes[CODE_KEEP_PRIOR] = keep_prior
    codes[CODE_SKIP] = skip


def _allocate(
    n_features: int,
    p0: float,
    dtype: np.dtype,
    forgetting: float = 0.0,
    period: int = 1,
    keep_prior: bool = True,
    skip: bool = False,
) -> tuple[DFOPState, DFOPWork]:
    """DFOP's state and workspace, views of two blocks (``_kernels/dfop.py``'s header):

    * ``PW`` (d + 1, d) of the dtype: rows 0..d-1 are P, row d is w;
    * ``B`` float64: the workspace's scratch, the learnt block L (forgotten,
      then the 4 counters as int64 bits), hyper and codes (as int64 bits):
      learn_one's one block (``_dfop_learn_one_packed``).
    """
    d = n_features
    # 64-byte aligned (aligned_zeros): at d = 200 the fused pass ran 35% slower
    # with P's rows or the scratch vectors 16- but not 32-byte aligned.
    PW = aligned_zeros((d + 1, d), dtype)
    P = PW[:d]
    P[np.diag_indices(d)] = p0
    # Scratch is a float64 block whatever the dtype: a float32 model in
    # float32 arithmetic (from d = 25, below it while forgetting <= 1 / d)
    # sees it as float32 (its P x, u and pass in float32) and keeps its last
    # third for the float64 P x of a careful step, whose update would
    # otherwise cancel float32-rounded numbers (docs/design/float32.md).
    B = aligned_zeros(python_function(packed_size)(d))
    scratch, L, hyper, codes = python_function(_packed_views)(B, d)
    work = DFOPWork(scratch=scratch, hyper=hyper, codes=codes)
    dfop_constants(forgetting, p0, period, keep_prior, skip, work.hyper, work.codes)
    # One physical block for learnt bookkeeping, scratch and constants, so
    # that learn_one is one 4-argument call; two sets of views, so state and
    # save see the learnt fields only.
    state = DFOPState(
        w=PW[d],
        P=P,
        forgotten=L[LEARNT_FORGOTTEN : LEARNT_FORGOTTEN + 1],
        counts=L[LEARNT_COUNTS : LEARNT_COUNTS + 4].view(np.int64),
    )
    return state, work


def init_dfop_parameters(model: Any, dimension: int, forgetting: float, task: str, p0: float,
                         keep_prior: bool) -> None:
    """Validate and set DFOP's hyper-parameters on ``model`` (DFOP and Fleet alike).

    Sets forgetting, task, p0, keep_prior and the refresh period of DFOP's
    kernels for inputs of ``dimension`` (SparseDFOP's: the compressed one).
    """
    model.forgetting = check_float("forgetting", forgetting, 0.0, 1.0, high_open=True)
    if task not in _TASKS:
        raise ValueError(f"task must be one of {_TASKS}, got {task!r}")
    model.task = task
    model._classify = task == "classification"
    model.p0 = check_float("p0", p0, 0.0, MAX_P0, low_open=True)
    if not isinstance(keep_prior, (bool, np.bool_)):
        raise TypeError(f"keep_prior must be a bool, got {keep_prior!r}")
    model.keep_prior = bool(keep_prior)
    model._period = refresh_period(dimension, model.forgetting)


def init_interval(model: Any, coverage: Any, missing: str = "reject") -> None:
    """Validate and set ``coverage`` and ``missing`` (both for regression)."""
    model.coverage = check_coverage(coverage)
    if model.coverage is not None and model.task != "regression":
        raise ValueError(f"coverage (prediction intervals) is for task='regression', "
                         f"got task={model.task!r}")
    if missing not in ("reject", "impute"):
        raise ValueError(f"missing must be 'reject' or 'impute', got {missing!r}")
    if missing == "impute" and model.task != "regression":
        raise ValueError(f"missing='impute' is for task='regression', got task={model.task!r}")
    model.missing = missing
    model._impute = missing == "impute"
    model._bands = None


def refresh_period(n_features: int, forgetting: float) -> int:
    """Steps between prior refreshes: max(1, floor(2 / (d mu))) (1 when mu = 0).

    With one coordinate per refresh, a coordinate then waits period * d <=
    2 / mu steps; when d mu > 2 the period is 1 and each refresh covers
    ceil(d mu / 2) coordinates instead (``_refresh_width``), so the wait
    stays about 2 / mu and P stays below p0 (1 - l^T) / (T mu l^T) I,
    l = 1 - mu, T the wait (docs/design/dfop.md).
    """
    if forgetting <= 0.0:
        return 1
    # Capped so that it fits the kernels' int64 even for a tiny forgetting.
    return max(1, int(min(2.0 / (n_features * forgetting), 2.0**40)))


class DFOP(IntervalMixin, OnlineModel):
    r"""Distribution-free one-pass learner: forgetting-factor RLS (docs/algorithms/dfop.md).

    Minimises the exponentially discounted squared loss in one pass with
    O(d^2) memory and time per sample, forgetting the past at rate ``forgetting``:

    .. math::

        w_t = \arg\min_w \frac{\Lambda_t}{p_0}\|w\|^2
              + \sum_{i \le t} \Big(\prod_{j=i+1}^{t} \lambda_j\Big) (y_i - w^\top x_i)^2,
        \qquad \lambda_j = 1 - \mu_j,

    updated per sample by the canonical G-DFOP step (module docstring), with P
    kept exactly symmetric and bounded.

    Parameters
    ----------
    n_features : int
        Input dimension d.
    forgetting : float or "auto", default 0.01
        The forgetting factor mu in [0, 1); each step discounts the past by
        lambda = 1 - mu. 1/mu is the forgetting period (older data weighs less
        than 1/e). 0 gives plain recursive least squares (see :class:`RLS`).
        ``learn_many(..., forgetting=array)`` overrides it per step (G-DFOP).
        ``"auto"`` learns it: the model is then a :class:`edgereg.DFOPBank`,
        5 DFOPs combined by weights that follow the best one over time: a
        window of 4 adjacent factors of a lattice from 0 to 0.99 that
        slides towards the best rate, and a scout 3 factors above it that
        the window jumps onto when it leads (about 5 times the memory at
        larger d, 6.5 times at d = 10, and about 6 times the time).
    task : {"regression", "classification"}
        Classification learns the labels as targets in {-1, +1} (labels in
        {0, 1} are accepted and 0 is mapped to -1) and predicts
        sign(w^T x), with sign(0) = +1: predictions are always in {-1, +1}.
        :meth:`decision_function` gives the raw score.
    p0 : float, default 100.0
        Prior P0 = p0 I: the initial variance of every weight (large = weak
        prior; 1e2..1e3 suits standardised inputs). At most ``MAX_P0`` = 1e8:
        beyond it p0 ||x||^2 passes 1 / eps of float64 for inputs of a few
        thousand, and updates lose P's positive definiteness (refused).
    keep_prior : bool, default True
        Give back to the prior the weight the discount takes from it (module
        docstring), which bounds P at every forgetting: P <= p0 (1 - l^T) /
        (T mu l^T) I with l = 1 - mu and T <= about 2 / mu (3.2 p0 at small
        mu, 55 p0 at mu = 0.9; docs/design/dfop.md). False is the canonical
        update of docs/algorithms/dfop.md (for reproduction), whose P winds up under
        poor excitation: a coordinate whose variance passes ``MAX_VARIANCE *
        p0`` (10 p0) is then reset to the prior (P_ii back to p0, its weight
        pulled towards 0), which keeps P bounded and w from bursting.
    dtype : {"float64", "float32"}
        Precision of the stored w and P. float32 halves the memory and
        computes the d^2 part of a step in float32 (faster: 1.5x float64 at
        d = 200, 1.1-1.2x at d = 16-24), except below d = 25 at a forgetting
        above 1 / d, where products are formed in float64 and rounded once
        (docs/design/float32.md). It holds P only while its
        condition number stays below ~1e7: keep p0 * ||x||^2 below ~1e6
        (standardise the inputs). Beyond that a sample whose update would make
        P indefinite is rejected like an invalid one (the state is unchanged).
    arithmetic : {"auto", "float32"}, default "auto"
        How a step computes. ``"auto"``: float64 for a float64 model; a
        float32 model computes its d^2 part in float32 and its O(d) scalars
        in float64, as described under ``dtype``. ``"float32"`` (with
        ``dtype="float32"``): every value in float32, scalars included (a
        step where x^T P x > 16 lambda in double-float32, pairs of float32),

        .. math::

            c = \frac{1}{\lambda + x^\top P x},\quad u = P x \sqrt{c},\quad
            w \leftarrow w + P x\,(y - w^\top x)\,c,\quad
            P \leftarrow (P - u u^\top) / \lambda,

        with forgetting, p0, targets and per-step forgetting factors rounded
        to float32 (a forgetting below 1.2e-38 counts as 0) and targets
        beyond ``TARGET_LIMIT32`` = 1e30 refused: the arithmetic of an export
        for a single-precision FPU (no soft-double code), which this model
        reproduces bit for bit. Not with ``coverage`` or
        ``missing="impute"`` (docs/design/float32.md).
    on_invalid : {"raise", "skip"}
        What a sample with NaN/inf, or a target beyond ``TARGET_LIMIT`` = 1e100
        in magnitude (out of range, as in the banks), does: raise
        ``ValueError`` (state unchanged) or be skipped and counted in
        ``n_skipped_``.
    coverage : float in (0, 1), optional
        Calibrate prediction intervals of this coverage while learning
        (regression; default None: no intervals, and nothing added to a
        step). The interval before learning sample t is

        .. math::

            \hat y_t \mp q_t \hat\sigma_t \sqrt{v_t}, \qquad
            v_t = \frac{\lambda_t + x_t^\top P x_t}{\lambda_t},

        v the variance of the innovation y - w^T x in units of the noise
        variance (DFOP is the Kalman filter with prior covariance P /
        lambda), sigma^2 the forgetting-weighted mean of (y - yhat)^2 / v,
        and q the quantile of abs(y - yhat) / (sigma sqrt(v)) tracked online,
        q <- q + eta (miss - (1 - coverage)) (conformal quantile tracking):
        the long-run fraction of misses is within (max score + eta) /
        (eta T) of 1 - coverage for any sequence, drift or not
        (docs/design/intervals.md). :meth:`predict_interval`,
        ``learn_many(..., interval=True)``, ``coverage_``.
    missing : {"reject", "impute"}, default "reject"
        What a NaN in x does: make the sample invalid (``on_invalid``), or
        (regression) be filled by its conditional expectation given the
        observed inputs under the model's own P (P^-1 is the
        forgetting-weighted second moment of the inputs),

        .. math::

            \hat x_m = -P_{mm}^{-1} P_{mo} x_o,

        the update then made on the completed row with the weight
        omega = sigma^2 / (sigma^2 + w_m^T (N P_mm)^-1 w_m) (the variance the
        imputation adds to the residual; N the data's weight), counted in
        ``n_imputed_``. A row whose every input is NaN, or whose target is
        NaN, is predicted (NaN without any input) and not learnt. Biased
        when the inputs are far from jointly Gaussian around zero (append a
        constant-1 column so that the rule is centred), when values go
        missing because of their value, or while the model has seen few
        rows; not for a feature missing for longer than the forgetting
        period 1 / mu, whose fill then comes from old data
        (docs/design/missing-inputs.md). Costs O(k d + k^3) per row with k
        missing, nothing for a complete row.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights w.
    n_seen_, n_skipped_ : int
        Samples learnt and samples skipped.

    Notes
    -----
    Memory: d^2 + d values of ``dtype`` plus 3s + 5 float64/int64 scratch and
    counters, s = d rounded up to 8 (and 5 float64 constants), fixed at
    construction (d = 10: 1.3 KB in float64; d = 200:
    327 KB in float64, 166 KB in float32).

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import DFOP
    >>> model = DFOP(n_features=2, forgetting=0.01)
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = np.array([2.0, -1.0, 1.0])
    >>> model.learn_many(X, y).round(4)    # prequential: predicted before each update
    array([0.    , 0.    , 0.9901])
    >>> round(model.predict_one([1.0, 1.0]), 4)
    0.9967
    """

    _target_limit = TARGET_LIMIT

    _auto_bank = "DFOPBank"  # DFOP(..., forgetting="auto")

    def __init__(
        self,
        n_features: int,
        forgetting: float = 0.01,
        *,
        task: str = "regression",
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        arithmetic: str = "auto",
        on_invalid: str = "raise",
        coverage: float | None = None,
        missing: str = "reject",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        init_dfop_parameters(self, self._dfop_dimension(), forgetting, task, p0, keep_prior)
        init_interval(self, coverage, missing)
        self._init_arithmetic(arithmetic)
        self.reset()

    def _init_arithmetic(self, arithmetic: str) -> None:
        """Validate ``arithmetic``; for "float32", the float32 constants of the kernels."""
        if arithmetic not in _ARITHMETICS:
            raise ValueError(f"arithmetic must be one of {_ARITHMETICS}, got {arithmetic!r}")
        self.arithmetic = arithmetic
        self._arith32 = arithmetic == "float32"
        if not self._arith32:
            return
        if self.dtype != np.float32:
            raise ValueError("arithmetic='float32' needs dtype='float32'")
        if self.coverage is not None or self._impute:
            raise ValueError("arithmetic='float32' does not support coverage or "
                             "missing='impute' yet")
        mu = float(np.float32(self.forgetting))
        if mu < _FLOAT32_TINY:
            mu = 0.0
        if not mu < 1.0:
            raise ValueError(f"forgetting {self.forgetting!r} rounds to 1 in float32")
        self._mu32, self._p032 = mu, float(np.float32(self.p0))
        self._period = refresh_period(self._dfop_dimension(), mu)
        self._target_limit = float(TARGET_LIMIT32)

    @property
    def _task(self) -> str:  # type: ignore[override]
        return self.task

    def _dfop_dimension(self) -> int:
        """The dimension of the inputs DFOP's kernels see."""
        return self.n_features

    def _allocate(self) -> tuple[DFOPState, DFOPWork]:
        if self._arith32:
            state, work = _allocate(
                self.n_features, self._p032, self.dtype, self._mu32, self._period,
                self.keep_prior, self._skip,
            )
            # The forgotten mass is a float32 in its float64 slot (``_kernels/dfop32.py``).
            return state._replace(forgotten=state.forgotten.view(np.float32)[:1]), work
        state, work = _allocate(
            self.n_features, self.p0, self.dtype, self.forgetting, self._period,
            self.keep_prior, self._skip,
        )
        if self.coverage is None and not self._impute:
            return state, work
        # Imputation weighs a row by the noise level of this bookkeeping (its
        # quantile then tracks the default coverage, unused).
        _, I, ihyper, _ = interval_blocks(self.coverage or 0.9)
        return DFOPIntervalState(*state, interval=I), DFOPIntervalWork(*work, ihyper)

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        """The next refresh coordinate indexes P's rows; P must be exactly symmetric."""
        d = state.w.shape[0]  # type: ignore[attr-defined]
        counts = state.counts  # type: ignore[attr-defined]
        faults = super()._state_faults(state)
        faults += index_faults("counts", int(counts[3]), 0, d - 1, "the next refresh coordinate")
        if not 0.0 <= float(state.forgotten[0]) <= self._period:  # type: ignore[attr-defined]
            faults.append(("forgotten", f"holds {float(state.forgotten[0])!r}, outside "
                                        f"0..{self._period} (a sum of at most period mu < 1)"))
        faults += symmetric_faults("P", state.P)  # type: ignore[attr-defined]
        if isinstance(state, DFOPIntervalState):
            faults += interval_faults(state.interval)
        return faults

    #: learn_one's kernel: (x, y, PW, B) -> the prediction, NaN when refused.
    _packed_kernel = staticmethod(_dfop_learn_one_packed)
    #: learn_one's kernel with intervals: (x, y, PW, B, IB) -> (lower, yhat, upper),
    #: lower NaN when refused.
    _interval_one_kernel = staticmethod(dfop_learn_one_band)

    def _bind_state(self) -> None:
        self._bind_dfop_blocks()
        self._bind_interval()
        # learn_one's kernel: after its first call the compiled entry point
        # (learn_one's checks guarantee its argument types: C-contiguous x of
        # the model's dtype, float64 y, the model's own blocks); it skips the
        # dispatcher's type resolution, about 180 ns of a ~1 us call.
        packed = dfop32_learn_one_packed if self._arith32 else self._packed_kernel
        self._learn_one_kernel = FirstCall(packed, self, "_learn_one_kernel")

    def _bind_interval(self) -> None:
        """The interval's blocks (None without intervals) and learn_one's mode:
        0 regression, 1 classification, 2 regression with intervals."""
        interval = getattr(self._state, "interval", None)
        self._I = interval
        if interval is not None:
            # learn_one's block, of which the bookkeeping, its constants and
            # the band are views (``interval_blocks``).
            self._IB = block_at(interval, IB_SIZE)
            self._band = python_function(ib_views)(self._IB)[2]
            self._interval_kernel = FirstCall(self._interval_one_kernel, self, "_interval_kernel")
            if self._impute:
                d = self.n_features
                self._MW = np.zeros(python_function(mw_size)(d))
                self._xs = np.zeros(d, self.dtype)
                self._impute_kernel = FirstCall(dfop_learn_one_band_impute, self,
                                                "_impute_kernel")
        # learn_one's inline paths with DFOP's own kernels: 3 intervals, 4 imputation;
        # 2: through _learn_one_interval (a bank's own).
        own = interval is not None and type(self)._learn_one_interval is DFOP._learn_one_interval
        self._mode = (4 if self._impute else 3) if own else \
            2 if interval is not None else int(self._classify)

    #: Whether the model computes in float32 only (``arithmetic="float32"``).
    _arith32 = False

    def _bind_dfop_blocks(self) -> None:
        s, work = self._state, self._work
        self._w, self._P = s.w, s.P
        # The blocks the fields are views of (``_allocate``): PW, L, and B
        # (learn_one's one block, of which L and the workspace are views).
        d = s.w.shape[0]
        self._PW = block_at(s.P, (d + 1, d))
        self._B = block_at(work.scratch, python_function(packed_size)(d))
        self._L = python_function(_packed_views)(self._B, s.w.shape[0])[1]
        self._mu = work.hyper[HYPER_MU : HYPER_MU + 1]

    # ------------------------------------------------------------ attributes
    @property
    def coef_(self) -> np.ndarray:
        """Learnt weights w (a copy)."""
        return self._w.copy()

    @property
    def covariance_(self) -> np.ndarray:
        """P, the inverse of the discounted input correlation (a copy)."""
        return self._P.copy()

    # -------------------------------------------------------------- one-step
    def decision_function_one(self, x: Any) -> float:
        """Raw score w^T x for one sample."""
        if self._arith32:
            return float(dfop32_predict_one(self._row(x), self._w))
        return _dfop_predict_one(self._row(x), self._w)

    def predict_one(self, x: Any) -> float:
        """Predict one sample (the sign of the score for classification)."""
        if self._arith32:
            score = float(dfop32_predict_one(self._row(x), self._w))
        else:
            score = _dfop_predict_one(self._row(x), self._w)
        if score != score and self._impute:
            return float(self._impute_predict(self._row(x))[1])
        if self._classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    def learn_one(self, x: Any, y: Any, interval: Any = False) -> Any:
        """Predict x with the current model, then learn (x, y); return the prediction.

        With ``interval=True`` (a model built with ``coverage``), return the
        interval made before learning instead: (lower, prediction, upper).

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); the state is then
            exactly as before the call.
        """
        # The fast path inlines ``_row`` (shape, dtype, contiguity) and makes
        # one 4-argument kernel call.
        if (
            type(x) is _ndarray
            and x.dtype is self.dtype
            and x.shape == self._row_shape
            and x.flags.carray  # C-contiguous, aligned, writeable (_validate.kernel_ready)
        ):
            xr = x
        else:
            xr = as_row(x, self.n_features, self.dtype)
        mode = self._mode
        if mode == 3:
            # Inline (no further method call): with intervals, a call costs what
            # the kernel and the tuple it returns cost.
            if interval and interval is not True:
                self._check_interval(interval)
            yv = y if type(y) is float else as_scalar(y)
            band = self._interval_kernel(xr, yv, self._PW, self._B, self._IB)  # _bind_interval
            if band[0] != band[0] and not self._skip:  # NaN lower bound: refused
                raise ValueError(self._invalid_message(xr, y, "sample"))
            return band if interval else band[1]
        if mode == 4:  # missing="impute": one kernel call, a NaN scan for a complete row
            if interval and (interval is not True or self.coverage is None):
                self._check_interval(interval)
            yv = y if type(y) is float else as_scalar(y)
            out = self._impute_kernel(xr, yv, self._PW, self._B, self._IB, self._MW, self._xs)
            if out[3] != 0.0 and not self._skip:
                raise ValueError(self._invalid_message(xr, y, "sample"))
            return out[:3] if interval else out[1]
        if mode == 2:
            return self._learn_one_interval(xr, y, interval)
        if interval:
            self._check_interval(interval)
        classify = mode == 1
        if classify:
            yv = label_sign(y)  # NaN for an unknown label: the kernel refuses it
        elif type(y) is float:
            yv = y
        else:
            yv = as_scalar(y)
        yhat = self._learn_one_kernel(xr, yv, self._PW, self._B)  # see _bind_state
        if yhat != yhat and not self._skip:  # NaN: rejected, state unchanged
            raise ValueError(self._invalid_message(xr, y, "sample"))
        if classify:
            return 1.0 if yhat >= 0.0 else -1.0
        return yhat

    def _learn_one_interval(self, xr: np.ndarray, y: Any, interval: Any) -> Any:
        """learn_one with the interval's bookkeeping as a method: what learn_one does
        inline with DFOP's own kernels (``_mode`` 3 and 4), for a subclass to override
        (a bank's intervals)."""
        if interval:
            self._check_interval(interval)
        yv = y if type(y) is float else as_scalar(y)
        if self._impute:
            out = self._impute_kernel(xr, yv, self._PW, self._B, self._IB, self._MW, self._xs)
            refused, out = out[3] != 0.0, out[:3]
        else:
            out = self._interval_kernel(xr, yv, self._PW, self._B, self._IB)
            refused = out[0] != out[0]
        if refused and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return out if interval else out[1]

    def _interval_many(self, X: np.ndarray, out: np.ndarray) -> None:
        dfop_predict_interval(X, self._PW, self._B, self._IB, out)
        if self._impute:
            for t in np.flatnonzero(np.isnan(X).any(axis=1)):
                out[t] = self._impute_predict(X[t])

    def _impute_predict(self, x: np.ndarray) -> np.ndarray:
        """The band of a row with NaNs, without learning (the kernel's y = NaN path)."""
        dfop_impute_learn_one(x, np.nan, self._PW, self._B, self._IB, self._MW, self._xs)
        return self._band.copy()

    # ----------------------------------------------------------------- block
    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        if self._classify:
            return label_signs(Y, n)
        return as_targets(Y, n, np.float64)

    def _forgetting_schedule(self, forgetting: Any, n: int) -> np.ndarray:
        """MU for the block kernels: the model's own factor (``None``), or one per row."""
        if forgetting is None:
            return self._mu
        mu = np.ascontiguousarray(forgetting, dtype=np.float64)
        if mu.shape != (n,):
            raise ValueError(
                f"forgetting must be a scalar or an array of shape ({n},), got shape {mu.shape}"
            )
        if not np.all((mu >= 0.0) & (mu < 1.0)):
            raise ValueError("every per-step forgetting factor must be in [0, 1)")
        return mu

    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        work = self._work
        MU = self._forgetting_schedule(forgetting, X.shape[0])
        if self._arith32:
            return self._learn_block32(X, Y, out, MU, forgetting is None)
        if self._impute:
            return self._learn_block_impute(X, Y, out, MU)
        if self._I is None:
            return _dfop_learn_many(
                X, Y, MU, out, self._PW, self._L, work.scratch, work.hyper, work.codes,
            )
        # One pass: the interval before each row from the x^T P x of its step.
        self._bands = np.empty((X.shape[0], 3))
        return _dfop_learn_many_interval(
            X, Y, MU, out, self._bands, self._PW, self._L, work.scratch, work.hyper, work.codes,
            self._IB,
        )

    def _learn_block32(self, X, Y, out, MU, own):  # type: ignore[no-untyped-def]
        """The float32 arithmetic's block: targets, forgetting factors and predictions
        in float32, as an export's C caller passes them (``_kernels/dfop32.py``)."""
        if own:
            MU32 = np.zeros(0, np.float32)  # the model's own mu
        else:
            MU32 = MU.astype(np.float32)
            if not np.all(MU32 < 1.0):
                raise ValueError("every per-step forgetting factor must be below 1 "
                                 "once rounded to float32")
        out32 = np.empty(X.shape[0], np.float32)
        work = self._work
        with np.errstate(over="ignore"):  # a target beyond float32 becomes inf: refused
            Y32 = Y.astype(np.float32)
        bad = dfop32_learn_many(X, Y32, MU32, out32, self._PW, self._L, work.scratch,
                                work.hyper, work.codes)
        out[:] = out32
        return bad

    def _learn_block_impute(self, X, Y, out, MU):  # type: ignore[no-untyped-def]
        """The block kernel with its intervals up to each row with a NaN (in x or y),
        which it leaves to the imputation's kernel, in order: a complete row costs
        the kernel one comparison (``_dfop_learn_many_impute``)."""
        if MU.shape[0] > 1:
            raise ValueError("missing='impute' takes the model's own forgetting: "
                             "learn_many(..., forgetting=...) is not supported with it")
        n = X.shape[0]
        bands = self._bands = np.empty((n, 3))
        work = self._work
        start = 0
        while start < n:
            bad = _dfop_learn_many_impute(
                X[start:], Y[start:], MU, out[start:], bands[start:], self._PW, self._L,
                work.scratch, work.hyper, work.codes, self._IB,
            )
            if bad < 0:
                break
            r = start + bad
            if not (np.isnan(Y[r]) or np.isnan(X[r]).any()):
                return r  # an invalid row (on_invalid="raise")
            status = dfop_impute_learn_one(X[r], Y[r], self._PW, self._B, self._IB, self._MW,
                                           self._xs)
            bands[r] = self._band
            out[r] = self._band[1]
            if status == IMPUTE_REFUSED and not self._skip:
                return r
            start = r + 1
        return -1

    @property
    def n_imputed_(self) -> int:
        """Rows learnt with inputs imputed (``missing="impute"``)."""
        if not self._impute:
            return 0
        return int(self._I[INTERVAL_IMPUTED])  # type: ignore[index]

    def learn_many(self, X: Any, y: Any, forgetting: Any = None,
                   interval: Any = False) -> np.ndarray:
        """Learn a block of samples in one kernel call; return prequential predictions.

        Parameters
        ----------
        X : array of shape (n, n_features)
        y : array of shape (n,)
        forgetting : float or array of shape (n,), optional
            Per-step forgetting factors mu_t in [0, 1) (G-DFOP); default: the
            model's ``forgetting``.
        interval : bool, optional
            Return the intervals made before learning each row, shape (n, 3):
            lower, prediction, upper (a model built with ``coverage``).

        Returns
        -------
        ndarray of shape (n,), or (n, 3) with ``interval``
            Row t is the prediction for X[t] made before learning it (labels in
            {-1, +1} for classification). Identical to calling
            :meth:`learn_one` row by row.
        """
        if interval:
            self._check_interval(interval)
        if forgetting is not None and np.ndim(forgetting) == 0:
            n = np.shape(X)[0] if np.ndim(X) == 2 else 0
            forgetting = np.full(n, float(forgetting))
        out = self._learn_many_checked(X, y, forgetting=forgetting)
        if interval:
            bands, self._bands = self._bands, None
            return bands
        return self._finish(out)

    def _predict_block(self, X, out):  # type: ignore[override]
        if self._arith32:
            dfop32_predict_many(X, self._w, out)
            return
        _dfop_predict_many(X, self._w, out)
        if self._impute:
            for t in np.flatnonzero(np.isnan(X).any(axis=1)):
                out[t] = self._impute_predict(X[t])[1]

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
            {"n_features": 5, "dtype": "float32"},  # float32 arithmetic (mu d <= 1)
            {"n_features": 5, "forgetting": 0.3, "dtype": "float32"},  # float64 arithmetic
            {"n_features": 3, "forgetting": 0.2},  # a prior refresh every step
            {"n_features": 26, "dtype": "float32"},  # float32 arithmetic (FLOAT32_FROM)
            {"n_features": 4, "coverage": 0.9},  # calibrated intervals
            {"n_features": 5, "forgetting": 0.3, "dtype": "float32", "coverage": 0.8},
            {"n_features": 4, "missing": "impute"},  # NaN inputs filled (none in the contracts)
            {"n_features": 5, "forgetting": 0.3, "dtype": "float32", "arithmetic": "float32"},
            {"n_features": 3, "forgetting": 0.05, "dtype": "float32", "arithmetic": "float32",
             "task": "classification", "keep_prior": False},
        ]


class RLS(DFOP):
    """Recursive least squares: :class:`DFOP` with forgetting 0 (docs/algorithms/dfop.md).

    Minimises the undiscounted squared loss plus the prior ||w||^2 / p0; all
    samples weigh the same forever (nothing is forgotten, so the prior needs
    no refresh). Same parameters as DFOP except ``forgetting`` (always 0).

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import RLS
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> model = RLS(3, p0=1e6)
    >>> _ = model.learn_many(X, X @ [1.0, -2.0, 0.5])
    >>> model.coef_.round(6)
    array([ 1. , -2. ,  0.5])
    """

    def __init__(
        self,
        n_features: int,
        *,
        task: str = "regression",
        p0: float = 100.0,
        dtype: Any = "float64",
        arithmetic: str = "auto",
        on_invalid: str = "raise",
        coverage: float | None = None,
        missing: str = "reject",
    ) -> None:
        super().__init__(n_features, 0.0, task=task, p0=p0, dtype=dtype, arithmetic=arithmetic,
                         on_invalid=on_invalid, coverage=coverage, missing=missing)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [{"n_features": 4}, {"n_features": 3, "task": "classification"}]
