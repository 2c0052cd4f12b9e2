"""SOMOR and passive-aggressive regression: MORES' baselines (docs/algorithms/mores.md).

Both predict m outputs at once, yhat = W^T x (x with a constant-1 input when
``fit_intercept``), and keep W alone:

* :class:`SOMOR` - the MORES paper's simple formulation (Omega = S = I, no
  history), a multi-output passive-aggressive step.
* :class:`PARegressor` - passive-aggressive regression (Crammer et al. 2006,
  PA-I / PA-II) applied to each output independently.

Kernels: ``edgereg/_kernels/pa.py`` (float32 arithmetic: ``pa32.py``); the
layer shared with MORES: ``_multi_output.py``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._kernels.pa import _lin_learn_many, _lin_learn_one
from ._kernels.pa32 import lin32_learn_many, lin32_learn_one_wide
from ._multi_output import _MultiOutput
from ._validate import as_scalar, check_float

__all__ = ["SOMOR", "PARegressor", "SOMORState"]


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


class _LinearMultiOutput(_MultiOutput):
    """SOMOR and PA share their state and kernels (``_kind``: 0, 1, 2)."""

    _kind: int
    _C: float
    epsilon: float

    def _init_arithmetic(self, arithmetic: str) -> None:
        """Validate ``arithmetic``; for "float32", C and epsilon rounded to float32
        (normal or zero: the kernels read them by their bits, ``dfop32._narrow``)."""
        self._C32, self._eps32 = self._C, self.epsilon
        if not self._set_arithmetic(arithmetic):
            return
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

    _one_kernel = staticmethod(_lin_learn_one)
    _one_kernel32 = staticmethod(lin32_learn_one_wide)
    _many_kernel = staticmethod(_lin_learn_many)
    _many_kernel32 = staticmethod(lin32_learn_many)

    def _bind_state(self) -> None:
        s, w = self._state, self._work
        self._blocks = (s.W, s.counts, w.scratch, w.bound, w.hyper, w.codes)
        super()._bind_state()

    def learn_one(self, x: Any, y: Any) -> np.ndarray:
        """Predict x with the current W, then learn (x, y); return that prediction.

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); state unchanged.
        """
        return self._learn_vector(x, y)[0]


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
            return float(self._learn_vector(x, yv)[0][0])
        return self._learn_vector(x, y)[0]

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
