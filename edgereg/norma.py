"""Budgeted NORMA: online learning with kernels (SPEC.md section 3).

NORMA (Kivinen, Smola & Williamson) is stochastic gradient descent in a
reproducing-kernel Hilbert space on the regularised risk
l(g(x_t), y_t) + (lambda/2) ||f||_H^2, g = f + b:

    f_{t+1} = (1 - eta_t lambda) f_t - eta_t l'(g_t(x_t), y_t) k(x_t, .)

with the expansion f = sum_i alpha_i k(x_i, .) kept in a budget of tau
support vectors (a ring buffer: the oldest term is overwritten), so memory is
fixed and |f_full(x) - f_tau(x)| <= (1 - eta lambda)^tau C X^2 / lambda.

This module holds the classes; the kernels are ``edgereg/_kernels/norma.py``;
the edge implementation and the truncation bound are docs/design/norma.md.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ._base import OnlineModel, index_faults
from ._kernels.norma import (
    _ACTIVE,
    _C_DEGREE,
    _C_KERNEL,
    _C_LOSS,
    _C_OFFSET,
    _C_SCHEDULE,
    _C_SKIP,
    _DROPPED,
    _H_COEF0,
    _H_ETA,
    _H_GAMMA,
    _H_LAMBDA,
    _H_NU,
    _N_CODES,
    _N_HYPER,
    _N_SV,
    _NEXT,
    EPS,
    EPS_NU,
    HINGE,
    HINGE_NU,
    HUBER,
    HUBER_NU,
    LAPLACIAN,
    LINEAR,
    NOVELTY,
    OK,
    POLYNOMIAL,
    RBF,
    SQUARED,
    _norma_learn_many,
    _norma_learn_one,
    _norma_predict_many,
    _norma_predict_one,
)
from ._validate import (
    as_scalar,
    as_targets,
    check_float,
    check_int,
    label_sign,
    label_signs,
)

__all__ = ["NORMAClassifier", "NORMANovelty", "NORMARegressor", "NORMAState"]

_KERNELS = {"rbf": RBF, "laplacian": LAPLACIAN, "polynomial": POLYNOMIAL, "linear": LINEAR}
_SCHEDULES = ("constant", "inv_sqrt")



#: The target block of NORMANovelty (no target): one value, never written,
#: read with stride 0. Module-level, not per instance (CPython 3.11 keeps
#: instance attributes in shared-key storage, whose fast attribute loads the
#: hot paths use, only up to 30 names: measured, one more made learn_one 4%
#: slower).
_NO_TARGET = np.zeros(1, dtype=np.float64)

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
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
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
        hyper = np.zeros(_N_HYPER, dtype=np.float64)
        hyper[_H_ETA] = self.learning_rate
        hyper[_H_LAMBDA] = self.regularization
        hyper[_H_NU] = 0.0 if nu is None else nu
        hyper[_H_GAMMA] = self.gamma
        hyper[_H_COEF0] = self.coef0
        codes = np.zeros(_N_CODES, dtype=np.int64)
        codes[_C_KERNEL] = _KERNELS[self.kernel]
        codes[_C_LOSS] = self._loss_code
        codes[_C_SCHEDULE] = _SCHEDULES.index(self.learning_rate_schedule)
        codes[_C_OFFSET] = int(self.fit_offset)
        codes[_C_SKIP] = int(self._skip)
        codes[_C_DEGREE] = self.degree
        self._hyper, self._codes = hyper, codes
        self.reset()

    def _allocate(self) -> tuple[NORMAState, NORMAWork]:
        return _allocate(self.n_features, self.budget, self._rho0, self.dtype)

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        """The support-vector count and the next slot index the budget's buffers."""
        counts = state.counts  # type: ignore[attr-defined]
        faults = super()._state_faults(state)
        faults += index_faults("counts", int(counts[_N_SV]), 0, self.budget,
                               "the number of support vectors")
        faults += index_faults("counts", int(counts[_NEXT]), 0, self.budget - 1,
                               "the next support-vector slot")
        if counts[_DROPPED] < 0 or counts[_ACTIVE] < 0:
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
        n = int(self._counts[_N_SV])
        if n < self.budget:
            return np.arange(n)
        return np.roll(np.arange(n), -int(self._counts[_NEXT]))

    @property
    def n_support_(self) -> int:
        """Number of stored support vectors (at most ``budget``)."""
        return int(self._counts[_N_SV])

    @property
    def support_vectors_(self) -> np.ndarray:
        """Stored support vectors x_i, shape (n_support_, n_features), oldest first (a copy)."""
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
        return int(self._counts[_DROPPED])

    @property
    def n_active_(self) -> int:
        """Learnt steps on which the loss was active (margin errors, flagged points, ...)."""
        return int(self._counts[_ACTIVE])

    # -------------------------------------------------------------- one-step
    def _score_one(self, x: Any) -> float:
        return _norma_predict_one(self._row(x), *self._blocks)

    def _learn_score(self, x: Any, y: float, shown_y: Any) -> float:
        xr = self._row(x)
        score, status = _norma_learn_one(xr, y, *self._blocks)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, shown_y, "sample"))
        return score

    # ----------------------------------------------------------------- block
    def _learn_block(self, X, Y, out):  # type: ignore[override]
        return _norma_learn_many(X, Y, out, *self._blocks)

    def _predict_block(self, X, out):  # type: ignore[override]
        _norma_predict_many(X, out, *self._blocks)

    def _scores(self, X: Any) -> np.ndarray:
        return OnlineModel.predict_many(self, X)

    # ------------------------------------------------------------- analysis
    def truncation_bound(self, max_kernel_diagonal: float, loss_bound: float = 1.0) -> float:
        """Bound on |f_full(x) - f_tau(x)| from dropping terms (constant schedule).

        (1 - eta lambda)^tau C X^2 / lambda, with C = ``loss_bound`` >= |dl/dg|
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
        Constant of the polynomial kernel (keyword-only)."""


class NORMAClassifier(_NORMA):
    r"""Budgeted NORMA binary classifier, soft margin or nu-trick (SPEC.md section 3).

    Loss max(0, rho - y g(x)) (``margin=rho``), or with ``nu`` the nu-trick
    loss max(0, rho - y g(x)) - nu rho with rho learnt. On a margin error
    (y g(x) <= rho, the kink counted as an error):

        alpha_t = eta_t y_t,   b <- b + eta_t y_t,
        nu-trick:  rho <- rho - eta_t (1 - nu)   (else rho <- rho + eta_t nu),

    and otherwise no term is stored. ``margin=0, regularization=0`` is the
    kernel perceptron. With ``nu``, the fraction of margin errors settles near
    nu on a stationary stream.

    Parameters
    ----------
    {params}
    margin : float >= 0, default 1.0
        rho of the soft-margin loss (keyword-only); with ``nu`` its initial value.
    nu : float in (0, 1], optional
        Use the nu-trick: rho is learnt and about a fraction nu of the samples
        are margin errors (keyword-only).

    Attributes
    ----------
    support_vectors_, dual_coef_, offset_, margin_, n_support_

    Notes
    -----
    Labels in {{-1, +1}} ({{0, 1}} accepted, 0 -> -1); ``predict_one`` returns
    sign(g(x)) in {{-1.0, +1.0}} with sign(0) = +1; ``decision_function`` /
    ``decision_function_one`` give g(x). Memory: (d + 2) tau + 3 values of
    ``dtype`` plus 8 tau + 48 bytes, fixed at construction (d = 10,
    tau = 200: 20.9 KB in float64). Truncation error: see :meth:`truncation_bound` (C = 1).
    """

    _task: ClassVar[str] = "classification"

    def __init__(
        self,
        n_features: int,
        budget: int = 200,
        kernel: str = "rbf",
        gamma: float = 1.0,
        learning_rate: float = 0.1,
        regularization: float = 0.01,
        learning_rate_schedule: str = "constant",
        fit_offset: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        *,
        degree: int = 3,
        coef0: float = 1.0,
        margin: float = 1.0,
        nu: float | None = None,
    ) -> None:
        self._init_norma(
            n_features, budget, kernel, gamma, learning_rate, regularization,
            learning_rate_schedule, fit_offset, dtype, on_invalid, degree, coef0,
        )
        self.margin = check_float("margin", margin, 0.0, None)
        self.nu = None if nu is None else check_float("nu", nu, 0.0, 1.0, low_open=True)
        self._loss_code = HINGE if nu is None else HINGE_NU
        self._rho0 = self.margin
        self._finish_init(self.nu)

    @property
    def margin_(self) -> float:
        """Current rho (fixed ``margin``, or learnt with ``nu``)."""
        return float(self._scalars[2])

    def decision_function_one(self, x: Any) -> float:
        """Raw score g(x) = f(x) + b for one sample."""
        return self._score_one(x)

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores g(x) for a block of samples."""
        return self._scores(X)

    def predict_one(self, x: Any) -> float:
        """Predicted label sign(g(x)) in {-1.0, +1.0} (no learning)."""
        return 1.0 if self._score_one(x) >= 0.0 else -1.0

    def learn_one(self, x: Any, y: Any) -> float:
        """Predict x (label in {-1, +1}), then learn (x, y); return the prediction.

        Raises
        ------
        ValueError
            On NaN/inf in x or a label outside {-1, 0, +1} (``on_invalid="raise"``);
            the state is then exactly as before the call.
        TypeError
            If y is not one real number (an array of labels, a string).
        """
        score = self._learn_score(x, label_sign(y), y)
        return 1.0 if score >= 0.0 else -1.0

    def _invalid_message(self, x: np.ndarray, y: Any, where: str) -> str:
        msg = super()._invalid_message(x, y, where)
        try:
            known = y in (-1, 0, 1)
        except (TypeError, ValueError):
            known = False
        if known or "invalid target" in msg:
            return msg
        return msg.replace(
            f"{where}: ",
            f"{where}: invalid target label y={y!r} (expected -1/+1 or 0/1); ",
        ).replace("; the update would overflow (input too large for the current state); "
                  "scale the inputs", "")

    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        return label_signs(Y, n)

    def learn_many(self, X: Any, y: Any) -> np.ndarray:
        """Learn a block in one kernel call; return the prequential labels in {-1, +1}."""
        return np.where(self._learn_many_checked(X, y) >= 0.0, 1.0, -1.0)

    def predict_many(self, X: Any) -> np.ndarray:
        """Predicted labels for a block (no learning)."""
        return np.where(self._scores(X) >= 0.0, 1.0, -1.0)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        base = cls._common_test_params()
        return [
            base,
            {**base, "nu": 0.3, "kernel": "laplacian", "learning_rate_schedule": "inv_sqrt"},
            {**base, "margin": 0.0, "regularization": 0.0, "kernel": "polynomial", "degree": 2,
             "dtype": "float32"},
        ]


class NORMARegressor(_NORMA):
    r"""Budgeted NORMA regression: squared, epsilon-insensitive or Huber loss (SPEC.md section 3).

    With delta = y - g(x) the new coefficient alpha_t = -eta_t dl/dg is

        squared     alpha_t = eta_t delta
        epsilon     alpha_t = eta_t sign(delta) if |delta| > eps, else 0
        huber       alpha_t = eta_t sign(delta) if |delta| > sigma, else eta_t delta / sigma

    and b <- b + alpha_t. With ``nu`` (loss "epsilon" or "huber") the
    threshold is learnt: eps <- eps + eta_t (1 - nu) when |delta| > eps, else
    eps <- eps - eta_t nu (sigma likewise), so about a fraction nu of the
    residuals fall outside the band. A sigma that reaches 0 makes the inside
    branch meet only delta = 0, whose coefficient is then 0.

    Parameters
    ----------
    {params}
    loss : {{"squared", "epsilon", "huber"}}, default "squared" (keyword-only)
    epsilon : float >= 0, default 0.1
        Width of the insensitive band (initial value with ``nu``).
    huber_sigma : float > 0, default 1.0
        Huber threshold sigma (initial value with ``nu``).
    nu : float in (0, 1], optional
        Learn epsilon / sigma with the nu-trick.

    Attributes
    ----------
    support_vectors_, dual_coef_, offset_, epsilon_ (or huber_sigma_), n_support_

    Notes
    -----
    Memory: (d + 2) tau + 3 values of ``dtype`` plus 8 tau + 48 bytes. Truncation
    error: see :meth:`truncation_bound` (C = 1 for epsilon and Huber; the
    squared loss has no bounded derivative, so no bound holds a priori).
    """

    _task: ClassVar[str] = "regression"
    _LOSSES: ClassVar[tuple[str, ...]] = ("squared", "epsilon", "huber")

    def __init__(
        self,
        n_features: int,
        budget: int = 200,
        kernel: str = "rbf",
        gamma: float = 1.0,
        learning_rate: float = 0.1,
        regularization: float = 0.01,
        learning_rate_schedule: str = "constant",
        fit_offset: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        *,
        degree: int = 3,
        coef0: float = 1.0,
        loss: str = "squared",
        epsilon: float = 0.1,
        huber_sigma: float = 1.0,
        nu: float | None = None,
    ) -> None:
        self._init_norma(
            n_features, budget, kernel, gamma, learning_rate, regularization,
            learning_rate_schedule, fit_offset, dtype, on_invalid, degree, coef0,
        )
        if loss not in self._LOSSES:
            raise ValueError(f"loss must be one of {self._LOSSES}, got {loss!r}")
        self.loss = loss
        self.epsilon = check_float("epsilon", epsilon, 0.0, None)
        self.huber_sigma = check_float("huber_sigma", huber_sigma, 0.0, None, low_open=True)
        self.nu = None if nu is None else check_float("nu", nu, 0.0, 1.0, low_open=True)
        if nu is not None and loss == "squared":
            raise ValueError("nu learns epsilon or huber_sigma: use loss='epsilon' or 'huber'")
        self._loss_code = {
            ("squared", False): SQUARED, ("epsilon", False): EPS, ("epsilon", True): EPS_NU,
            ("huber", False): HUBER, ("huber", True): HUBER_NU,
        }[(loss, nu is not None)]
        self._rho0 = {"squared": 0.0, "epsilon": self.epsilon, "huber": self.huber_sigma}[loss]
        self._finish_init(self.nu)

    @property
    def epsilon_(self) -> float:
        """Current epsilon of the insensitive band (learnt with ``nu``)."""
        return float(self._scalars[2]) if self.loss == "epsilon" else self.epsilon

    @property
    def huber_sigma_(self) -> float:
        """Current Huber threshold sigma (learnt with ``nu``)."""
        return float(self._scalars[2]) if self.loss == "huber" else self.huber_sigma

    def predict_one(self, x: Any) -> float:
        """Predict g(x) = f(x) + b (no learning)."""
        return self._score_one(x)

    def learn_one(self, x: Any, y: Any) -> float:
        """Predict x, then learn (x, y); return the prediction.

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); state unchanged.
        """
        yv = y if type(y) is float else as_scalar(y)
        return self._learn_score(x, yv, y)

    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        return as_targets(Y, n, np.float64)

    def learn_many(self, X: Any, y: Any) -> np.ndarray:
        """Learn a block in one kernel call; return the prequential predictions."""
        return self._learn_many_checked(X, y)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        base = cls._common_test_params()
        return [
            base,
            {**base, "loss": "epsilon", "nu": 0.3, "kernel": "laplacian"},
            {**base, "loss": "huber", "nu": 0.5, "learning_rate_schedule": "inv_sqrt",
             "kernel": "linear", "dtype": "float32"},
            {**base, "loss": "epsilon", "epsilon": 0.2, "kernel": "polynomial", "degree": 2,
             "learning_rate": 0.05},
        ]


class NORMANovelty(_NORMA):
    r"""Budgeted NORMA novelty detection with the nu-trick (SPEC.md section 3).

    Loss max(0, rho - f(x)) - nu rho, no target. On each sample:

        if f(x) < rho:  alpha_t = eta_t,  rho <- rho - eta_t (1 - nu)   (flagged novel)
        else:           alpha_t = 0,      rho <- rho + eta_t nu

    so on a stationary stream about a fraction nu of the points are flagged
    and stored. rho starts at 0.

    Parameters
    ----------
    {params}
        Must stay False here: rho already plays the role of the offset, and a
        learnt b moving with it would make the flagged fraction nu / 2
        instead of nu (SPEC's rules have no offset for novelty).
    nu : float in (0, 1], default 0.1 (keyword-only)

    Attributes
    ----------
    support_vectors_, dual_coef_, margin_ (rho), n_support_

    Notes
    -----
    ``predict_one(x)`` / ``predict_many`` / ``learn_one(x)`` / ``learn_many(X)``
    return the novelty flag: 1.0 when f(x) < rho (novel), 0.0 otherwise.
    ``score_one`` / ``score_many`` give f(x) - rho (negative = novel).
    Memory: (d + 2) tau + 3 values of ``dtype`` plus 8 tau + 48 bytes. Truncation
    error: see :meth:`truncation_bound` (C = 1).
    """

    _task: ClassVar[str] = "novelty"

    def __init__(
        self,
        n_features: int,
        budget: int = 200,
        kernel: str = "rbf",
        gamma: float = 1.0,
        learning_rate: float = 0.1,
        regularization: float = 0.01,
        learning_rate_schedule: str = "constant",
        fit_offset: bool = False,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        *,
        degree: int = 3,
        coef0: float = 1.0,
        nu: float = 0.1,
    ) -> None:
        self._init_norma(
            n_features, budget, kernel, gamma, learning_rate, regularization,
            learning_rate_schedule, fit_offset, dtype, on_invalid, degree, coef0,
        )
        if self.fit_offset:
            raise ValueError(
                "NORMANovelty has no offset: rho is the threshold, and learning b as well "
                "would flag about nu/2 of the points instead of nu; use fit_offset=False"
            )
        self.nu = check_float("nu", nu, 0.0, 1.0, low_open=True)
        self._loss_code = NOVELTY
        self._rho0 = 0.0
        self._finish_init(self.nu)

    @property
    def margin_(self) -> float:
        """Current threshold rho."""
        return float(self._scalars[2])

    def score_one(self, x: Any) -> float:
        """f(x) - rho for one sample (negative: novel)."""
        return self._score_one(x)

    def score_many(self, X: Any) -> np.ndarray:
        """f(x) - rho for a block of samples."""
        return self._scores(X)

    def predict_one(self, x: Any) -> float:
        """Novelty flag: 1.0 if f(x) < rho, else 0.0 (no learning)."""
        return 1.0 if self._score_one(x) < 0.0 else 0.0

    def learn_one(self, x: Any) -> float:  # type: ignore[override]
        """Flag x (1.0 novel / 0.0 normal) with the current model, then learn it.

        Raises
        ------
        ValueError
            On NaN/inf in x (``on_invalid="raise"``); state unchanged.
        """
        return 1.0 if self._learn_score(x, 0.0, None) < 0.0 else 0.0

    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        return _NO_TARGET

    def _invalid_message(self, x: np.ndarray, y: Any, where: str) -> str:
        return super()._invalid_message(x, 0.0, where)  # no target to blame

    def learn_many(self, X: Any) -> np.ndarray:  # type: ignore[override]
        """Learn a block in one kernel call; return the prequential novelty flags."""
        return np.where(self._learn_many_checked(X, None) < 0.0, 1.0, 0.0)

    def predict_many(self, X: Any) -> np.ndarray:
        """Novelty flags for a block (no learning)."""
        return np.where(self._scores(X) < 0.0, 1.0, 0.0)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        base = cls._common_test_params()
        return [
            {**base, "nu": 0.2},
            {**base, "nu": 0.5, "kernel": "laplacian", "learning_rate_schedule": "inv_sqrt",
             "dtype": "float32"},
        ]


for _cls in (NORMAClassifier, NORMARegressor, NORMANovelty):
    _cls.__doc__ = _cls.__doc__.replace("{params}", _PARAMS_DOC.strip("\n").lstrip()).replace(
        "{{", "{").replace("}}", "}")
