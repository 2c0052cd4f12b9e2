"""The Python layer the three NORMA classes share: state, allocation, validation, persistence.

Not public: the classes are ``edgereg/norma.py`` (docs/algorithms/norma.md), the
kernels ``edgereg/_kernels/norma.py``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel, index_faults
from ._kernels.norma import (
    CODE_DEGREE,
    CODE_KERNEL,
    CODE_LOSS,
    CODE_OFFSET,
    CODE_SCHEDULE,
    CODE_SKIP,
    COUNT_ACTIVE,
    COUNT_DROPPED,
    COUNT_NEXT,
    COUNT_SV,
    HYPER_COEF0,
    HYPER_ETA,
    HYPER_GAMMA,
    HYPER_LAMBDA,
    HYPER_NU,
    LAPLACIAN,
    LINEAR,
    N_CODES,
    N_HYPER,
    OK,
    POLYNOMIAL,
    RBF,
    _norma_learn_many,
    _norma_learn_one,
    _norma_predict_many,
    _norma_predict_one,
)
from ._kernels.norma32 import (
    norma32_learn_many,
    norma32_learn_one_wide,
    norma32_predict_many,
    norma32_predict_one,
)
from ._validate import (
    check_float,
    check_int,
)

_KERNELS = {"rbf": RBF, "laplacian": LAPLACIAN, "polynomial": POLYNOMIAL, "linear": LINEAR}
_SCHEDULES = ("constant", "inv_sqrt")
#: NORMA's ``arithmetic`` values.
_ARITHMETICS = ("auto", "float32")



#: The target block of NORMANovelty (no target): one value, never written,
#: read with stride 0. Module-level, not per instance (CPython 3.11 keeps
#: instance attributes in shared-key storage, whose fast attribute loads the
#: hot paths use, only up to 30 names: measured, one more made learn_one 4%
#: slower).
_NO_TARGET = np.zeros(1, dtype=np.float64)
_NO_TARGET32 = np.zeros(1, dtype=np.float32)

class NORMAState(NamedTuple):
    """What a NORMA model has learnt: (d + 1) tau + 3 floats, 6 int64."""

    support_vectors: np.ndarray  # (d, tau) column i = support vector in slot i (transposed)
    coef: np.ndarray  # (tau,) stored a_i; effective alpha_i = scale * a_i
    scalars: np.ndarray  # (3,) [scale s, offset b, rho (margin / epsilon / huber sigma)]
    counts: np.ndarray  # int64 (6,): learnt, skipped, n_sv, next slot, dropped, loss-active


class NORMAWork(NamedTuple):
    """NORMA's scratch: tau floats and tau int64 (no meaning between calls)."""

    row: np.ndarray  # (tau,) kernel row k(x, sv_i)
    exp: np.ndarray  # int64 (tau,) exponent bits of 2^k (viewed as float64)


def _allocate(
    n_features: int, budget: int, rho0: float, dtype: np.dtype
) -> tuple[NORMAState, NORMAWork]:
    C = np.zeros(budget + 3, dtype=dtype)  # the kernels' block: coef, then scalars
    scalars = C[budget:]
    scalars[0] = 1.0
    scalars[2] = rho0
    state = NORMAState(
        support_vectors=np.zeros((n_features, budget), dtype=dtype),
        coef=C[:budget],
        scalars=scalars,
        counts=np.zeros(6, dtype=np.int64),
    )
    work = NORMAWork(
        row=np.zeros(budget, dtype=dtype), exp=np.zeros(budget, dtype=np.int64)
    )
    return state, work




def _float32_hyper(hyper: np.ndarray) -> np.ndarray:
    """The float32-only arithmetic's hyper-parameters: each rounded to float32, normal
    or zero (the kernels read them by their bits, ``dfop32._narrow``). eta, nu and
    gamma must stay normal; lambda and coef0 below float32's smallest normal value
    (1.2e-38) are 0; and 1 - eta lambda, in float32, must stay positive."""
    tiny, big = float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max)
    names = {HYPER_ETA: "learning_rate", HYPER_LAMBDA: "regularization", HYPER_NU: "nu",
             HYPER_GAMMA: "gamma", HYPER_COEF0: "coef0"}
    out = np.zeros_like(hyper)
    for i, name in names.items():
        v = float(hyper[i])
        r = float(np.float32(v)) if abs(v) <= big else math.inf
        if not abs(r) <= big:
            raise ValueError(f"{name} {v!r} is beyond float32's range (3.4e38)")
        if abs(r) < tiny:
            if i in (HYPER_ETA, HYPER_GAMMA) or (i == HYPER_NU and v != 0.0):
                raise ValueError(f"{name} {v!r} is below float32's normal range (1.2e-38)")
            r = 0.0
        out[i] = r
    eta, lam = np.float32(out[HYPER_ETA]), np.float32(out[HYPER_LAMBDA])
    if not np.float32(1.0) - eta * lam > np.float32(0.0):
        raise ValueError(
            "learning_rate * regularization rounds to 1 in float32: the decay factor "
            "1 - eta lambda would not stay positive (arithmetic='float32')")
    return out


# ---------------------------------------------------------------------- models
class _NORMA(OnlineModel):
    """Shared Python layer of the three NORMA variants (not public)."""

    _loss_code: int
    _rho0: float
    budget: int
    kernel: str
    gamma: float
    learning_rate: float
    regularization: float
    learning_rate_schedule: str
    fit_offset: bool
    degree: int
    coef0: float

    #: Whether the model computes in float32 only (``arithmetic="float32"``). A
    #: class attribute, set on the instance only when True: the default model
    #: keeps its instance attributes under CPython's 30 shared keys (above).
    _arith32 = False

    @property
    def arithmetic(self) -> str:
        """The arithmetic: "auto" (float64 scalars) or "float32" (every value in float32)."""
        return "float32" if self._arith32 else "auto"

    def _init_norma(
        self,
        n_features: int,
        budget: int,
        kernel: str,
        gamma: float,
        learning_rate: float,
        regularization: float,
        learning_rate_schedule: str,
        fit_offset: bool,
        dtype: Any,
        on_invalid: str,
        degree: int,
        coef0: float,
        arithmetic: str = "auto",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        if arithmetic not in _ARITHMETICS:
            raise ValueError(f"arithmetic must be one of {_ARITHMETICS}, got {arithmetic!r}")
        if arithmetic == "float32":
            if self.dtype != np.float32:
                raise ValueError("arithmetic='float32' needs dtype='float32'")
            self._arith32 = True
        self.budget = check_int("budget", budget)
        if kernel not in _KERNELS:
            raise ValueError(f"kernel must be one of {tuple(_KERNELS)}, got {kernel!r}")
        self.kernel = kernel
        self.gamma = check_float("gamma", gamma, 0.0, None, low_open=True)
        self.learning_rate = check_float("learning_rate", learning_rate, 0.0, None, low_open=True)
        self.regularization = check_float("regularization", regularization, 0.0, None)
        if self.learning_rate * self.regularization >= 1.0:
            raise ValueError(
                "learning_rate * regularization must be < 1 (NORMA needs eta < 1/lambda so that "
                f"the decay factor 1 - eta lambda stays positive); got {self.learning_rate:g} * "
                f"{self.regularization:g} = {self.learning_rate * self.regularization:g}"
            )
        if learning_rate_schedule not in _SCHEDULES:
            raise ValueError(
                f"learning_rate_schedule must be one of {_SCHEDULES}, "
                f"got {learning_rate_schedule!r}"
            )
        self.learning_rate_schedule = learning_rate_schedule
        if not isinstance(fit_offset, (bool, np.bool_)):
            raise TypeError(f"fit_offset must be a bool, got {fit_offset!r}")
        self.fit_offset = bool(fit_offset)
        self.degree = check_int("degree", degree)
        self.coef0 = check_float("coef0", coef0)

    def _finish_init(self, nu: float | None) -> None:
        # The kernels' hyper-parameters and options, by the names they read them by.
        hyper = np.zeros(N_HYPER, dtype=np.float64)
        hyper[HYPER_ETA] = self.learning_rate
        hyper[HYPER_LAMBDA] = self.regularization
        hyper[HYPER_NU] = 0.0 if nu is None else nu
        hyper[HYPER_GAMMA] = self.gamma
        hyper[HYPER_COEF0] = self.coef0
        if self._arith32:
            hyper[:] = _float32_hyper(hyper)
        codes = np.zeros(N_CODES, dtype=np.int64)
        codes[CODE_KERNEL] = _KERNELS[self.kernel]
        codes[CODE_LOSS] = self._loss_code
        codes[CODE_SCHEDULE] = _SCHEDULES.index(self.learning_rate_schedule)
        codes[CODE_OFFSET] = int(self.fit_offset)
        codes[CODE_SKIP] = int(self._skip)
        codes[CODE_DEGREE] = self.degree
        self._hyper, self._codes = hyper, codes
        self.reset()

    def _allocate(self) -> tuple[NORMAState, NORMAWork]:
        return _allocate(self.n_features, self.budget, self._rho0, self.dtype)

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        """The support-vector count and the next slot index the budget's buffers."""
        counts = state.counts  # type: ignore[attr-defined]
        faults = super()._state_faults(state)
        faults += index_faults("counts", int(counts[COUNT_SV]), 0, self.budget,
                               "the number of support vectors")
        faults += index_faults("counts", int(counts[COUNT_NEXT]), 0, self.budget - 1,
                               "the next support-vector slot")
        if counts[COUNT_DROPPED] < 0 or counts[COUNT_ACTIVE] < 0:
            faults.append(("counts", "holds a negative count"))
        return faults

    def _bind_state(self) -> None:
        s, work = self._state, self._work
        self._sv, self._coef, self._scalars, self._counts = (
            s.support_vectors, s.coef, s.scalars, s.counts
        )
        # The kernels' blocks after the input: sv, C (coef then scalars),
        # counts, the scratch row and exp, hyper, codes.
        self._blocks = (
            s.support_vectors, s.coef.base, s.counts, work.row, work.exp, self._hyper, self._codes
        )

    # ------------------------------------------------------------ attributes
    def _order(self) -> np.ndarray:
        """Slots of the stored terms, oldest first."""
        n = int(self._counts[COUNT_SV])
        if n < self.budget:
            return np.arange(n)
        return np.roll(np.arange(n), -int(self._counts[COUNT_NEXT]))

    @property
    def n_support_(self) -> int:
        """Number of stored support vectors (at most ``budget``)."""
        return int(self._counts[COUNT_SV])

    @property
    def support_vectors_(self) -> np.ndarray:
        """Stored support vectors x_i, shape (``n_support_``, n_features), oldest first (a copy)."""
        return np.ascontiguousarray(self._sv[:, self._order()].T)

    @property
    def dual_coef_(self) -> np.ndarray:
        """Effective coefficients alpha_i = s a_i (float64), oldest first."""
        return float(self._scalars[0]) * self._coef[self._order()].astype(np.float64)

    @property
    def offset_(self) -> float:
        """The offset b of g = f + b (0 unless ``fit_offset``)."""
        return float(self._scalars[1])

    @property
    def n_dropped_(self) -> int:
        """Terms dropped by the budget (truncation) so far."""
        return int(self._counts[COUNT_DROPPED])

    @property
    def n_active_(self) -> int:
        """Learnt steps on which the loss was active (margin errors, flagged points, ...)."""
        return int(self._counts[COUNT_ACTIVE])

    # -------------------------------------------------------------- one-step
    def _score_one(self, x: Any) -> float:
        if self._arith32:
            return norma32_predict_one(self._row(x), *self._blocks)
        return _norma_predict_one(self._row(x), *self._blocks)

    def _learn_score(self, x: Any, y: float, shown_y: Any) -> float:
        xr = self._row(x)
        if self._arith32:
            score, status = norma32_learn_one_wide(xr, y, *self._blocks)
        else:
            score, status = _norma_learn_one(xr, y, *self._blocks)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, shown_y, "sample"))
        return score

    # ----------------------------------------------------------------- block
    def _learn_block(self, X, Y, out):  # type: ignore[override]
        if not self._arith32:
            return _norma_learn_many(X, Y, out, *self._blocks)
        # Targets and scores in float32, as an export's C caller passes them.
        with np.errstate(over="ignore"):  # a target beyond float32 becomes inf: refused
            Y32 = _NO_TARGET32 if Y is _NO_TARGET else Y.astype(np.float32)
        out32 = np.empty(out.shape, np.float32)
        bad = norma32_learn_many(X, Y32, out32, *self._blocks)
        out[:] = out32
        return bad

    def _predict_block(self, X, out):  # type: ignore[override]
        if not self._arith32:
            _norma_predict_many(X, out, *self._blocks)
            return
        out32 = np.empty(out.shape, np.float32)
        norma32_predict_many(X, out32, *self._blocks)
        out[:] = out32

    def _scores(self, X: Any) -> np.ndarray:
        return OnlineModel.predict_many(self, X)

    # ------------------------------------------------------------- analysis
    def truncation_bound(self, max_kernel_diagonal: float, loss_bound: float = 1.0) -> float:
        """Bound on ``|f_full(x) - f_tau(x)|`` from dropping terms (constant schedule).

        (1 - eta lambda)^tau C X^2 / lambda, with C = ``loss_bound`` >= ``|dl/dg|``
        and X^2 = ``max_kernel_diagonal`` >= k(x, x) for every x (1 for "rbf"
        and "laplacian"). Infinite when lambda = 0. See the module notes.
        """
        lam = self.regularization
        if lam == 0.0:
            return math.inf
        decay = 1.0 - self.learning_rate * lam
        return decay**self.budget * loss_bound * max_kernel_diagonal / lam

    @classmethod
    def _common_test_params(cls) -> dict[str, Any]:
        return {"n_features": 4, "budget": 16, "gamma": 0.5, "learning_rate": 0.2}


_PARAMS_DOC = """
    n_features : int
        Input dimension d.
    budget : int, default 200
        tau: the most support vectors kept (ring buffer; the oldest term is
        dropped when it is full).
    kernel : {"rbf", "laplacian", "polynomial", "linear"}
        rbf exp(-gamma ||x - x'||^2), laplacian exp(-gamma ||x - x'||_1),
        polynomial (gamma x.x' + coef0)^degree, linear x.x'.
    gamma : float > 0, default 1.0
        Kernel width / scale (unused by "linear").
    learning_rate : float > 0, default 0.1
        eta (eta_t = eta, or eta / sqrt(t) with ``learning_rate_schedule="inv_sqrt"``).
    regularization : float >= 0, default 0.01
        lambda; ``learning_rate * regularization`` must be < 1.
    learning_rate_schedule : {"constant", "inv_sqrt"}
    fit_offset : bool
        Learn the offset b of g = f + b (b <- b + alpha_t).
    dtype : {"float64", "float32"}
    on_invalid : {"raise", "skip"}
        A sample with NaN/inf (or an unknown label) raises ``ValueError`` with
        the state unchanged, or is skipped and counted in ``n_skipped_``.
    degree : int, default 3
        Degree of the polynomial kernel (keyword-only).
    coef0 : float, default 1.0
        Constant of the polynomial kernel (keyword-only).
    arithmetic : {"auto", "float32"}, default "auto"
        "auto": the stored values in ``dtype``, the step's scalars (eta_t,
        the decay, the global scale's product) in float64. "float32" (with
        ``dtype="float32"``; keyword-only): every value in float32, the scores
        and the targets included, eta_t = eta / sqrt(t) by a float32 square
        root, the hyper-parameters rounded to float32 (learning_rate, gamma
        and nu must then be normal float32 values; regularization and coef0
        below 1.2e-38 are 0) and rows whose coefficient, offset or threshold
        would overflow float32 refused: the arithmetic of an export for a
        single-precision FPU (no soft-double code, no libm), which it
        reproduces bit for bit (docs/design/float32.md, NORMA)."""
