"""Budgeted NORMA: online learning with kernels (docs/algorithms/norma.md).

NORMA (Kivinen, Smola & Williamson) is stochastic gradient descent in a
reproducing-kernel Hilbert space on the regularised risk
l(g(x_t), y_t) + (lambda/2) ||f||_H^2, g = f + b:

    f_{t+1} = (1 - eta_t lambda) f_t - eta_t l'(g_t(x_t), y_t) k(x_t, .)

with the expansion f = sum_i alpha_i k(x_i, .) kept in a budget of tau
support vectors (a ring buffer: the oldest term is overwritten), so memory is
fixed and |f_full(x) - f_tau(x)| <= (1 - eta lambda)^tau C X^2 / lambda.

This module holds the classes (their shared layer: ``_norma_base.py``); the
kernels are ``edgereg/_kernels/norma.py``; the edge implementation and the
truncation bound are docs/design/norma.md.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ._kernels.norma import EPS, EPS_NU, HINGE, HINGE_NU, HUBER, HUBER_NU, NOVELTY, SQUARED
from ._norma_base import _NO_TARGET, _NORMA, _PARAMS_DOC, NORMAState
from ._validate import as_scalar, as_targets, check_float, label_sign, label_signs

__all__ = ["NORMAClassifier", "NORMANovelty", "NORMARegressor", "NORMAState"]


class NORMAClassifier(_NORMA):
    r"""Budgeted NORMA binary classifier, soft margin or nu-trick (docs/algorithms/norma.md).

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

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import NORMAClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)        # not linearly separable
    >>> model = NORMAClassifier(2, budget=50, gamma=1.0)
    >>> predictions = model.learn_many(X, y)            # prequential
    >>> model.n_support_                                # the budget is full
    50
    >>> model.predict_one([1.0, 1.0]), model.predict_one([1.0, -1.0])
    (1.0, -1.0)
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
        arithmetic: str = "auto",
    ) -> None:
        self._init_norma(
            n_features, budget, kernel, gamma, learning_rate, regularization,
            learning_rate_schedule, fit_offset, dtype, on_invalid, degree, coef0, arithmetic,
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
            {**base, "nu": 0.3, "learning_rate_schedule": "inv_sqrt", "dtype": "float32",
             "arithmetic": "float32"},
        ]


class NORMARegressor(_NORMA):
    r"""Budgeted NORMA regression, squared, epsilon-insensitive or Huber (docs/algorithms/norma.md).

    With delta = y - g(x) the new coefficient alpha_t = -eta_t dl/dg is::

        squared     alpha_t = eta_t delta
        epsilon     alpha_t = eta_t sign(delta) if |delta| > eps, else 0
        huber       alpha_t = eta_t sign(delta) if |delta| > sigma, else eta_t delta / sigma

    and b <- b + alpha_t. With ``nu`` (loss "epsilon" or "huber") the
    threshold is learnt: eps <- eps + eta_t (1 - nu) when ``|delta| > eps``, else
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

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import NORMARegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(300, 1))
    >>> y = np.sin(X[:, 0])
    >>> model = NORMARegressor(1, budget=100, learning_rate=0.5)
    >>> predictions = model.learn_many(X, y)            # prequential
    >>> round(float(np.mean((predictions[-100:] - y[-100:]) ** 2)), 3)   # mean squared error
    0.013
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
        arithmetic: str = "auto",
    ) -> None:
        self._init_norma(
            n_features, budget, kernel, gamma, learning_rate, regularization,
            learning_rate_schedule, fit_offset, dtype, on_invalid, degree, coef0, arithmetic,
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
            {**base, "loss": "huber", "nu": 0.5, "learning_rate_schedule": "inv_sqrt",
             "dtype": "float32", "arithmetic": "float32"},
        ]


class NORMANovelty(_NORMA):
    r"""Budgeted NORMA novelty detection with the nu-trick (docs/algorithms/norma.md).

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
        instead of nu (docs/algorithms/norma.md).
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

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import NORMANovelty
    >>> rng = np.random.default_rng(0)
    >>> model = NORMANovelty(2, budget=100, nu=0.1)
    >>> flags = model.learn_many(rng.normal(size=(1000, 2)))   # 1.0: novel
    >>> float(flags.mean())                                    # about nu
    0.095
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
        arithmetic: str = "auto",
    ) -> None:
        self._init_norma(
            n_features, budget, kernel, gamma, learning_rate, regularization,
            learning_rate_schedule, fit_offset, dtype, on_invalid, degree, coef0, arithmetic,
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
            {**base, "nu": 0.2, "dtype": "float32", "arithmetic": "float32"},
        ]


for _cls in (NORMAClassifier, NORMARegressor, NORMANovelty):
    _cls.__doc__ = _cls.__doc__.replace("{params}", _PARAMS_DOC.strip("\n").lstrip()).replace(
        "{{", "{").replace("}}", "}")
