"""The Python layer of the multi-output models (not public): MORES (``mores.py``),
SOMOR and PARegressor (``pa.py``) predict m outputs at once, yhat = W^T [x, 1].

Outputs and intercept, the targets' checks, the prediction, the calls of
``learn_one``'s and ``learn_many``'s kernels and the ``arithmetic`` argument's
checks are the same for the three; each model's step is in its own module
(its kernels: the class's ``_one_kernel`` ... ``_many_kernel32``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import OnlineModel
from ._kernels.mores import OK, _mo_predict_many, _mo_predict_one
from ._kernels.pa32 import mo32_predict_many, mo32_predict_one
from ._validate import as_row, check_int, kernel_ready

#: The multi-output models' ``arithmetic`` values.
_ARITHMETICS = ("auto", "float32")


class _MultiOutput(OnlineModel):
    """Shared Python layer of the multi-output models (not public)."""

    _task = "multioutput"
    n_outputs: int
    fit_intercept: bool

    #: Whether the model computes in float32 only (``arithmetic="float32"``).
    _arith32 = False

    # The model's kernels (staticmethod: a dispatcher on a class would bind as
    # a method). learn_one's: (x, y, out, *_blocks) -> status; with float32
    # arithmetic (x, y, out, *_blocks, y32, out32), y and out float64 as the
    # default's, y32 and out32 its float32 copies. learn_many's: (X, Y, out,
    # *_blocks) -> the first refused row or -1; with float32 arithmetic Y and
    # out float32.
    _one_kernel: Any
    _one_kernel32: Any
    _many_kernel: Any
    _many_kernel32: Any
    _blocks: tuple[np.ndarray, ...]

    def _init_outputs(self, n_outputs: int, fit_intercept: bool) -> None:
        self.n_outputs = check_int("n_outputs", n_outputs)
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be a bool, got {fit_intercept!r}")
        self.fit_intercept = bool(fit_intercept)
        self._D = self.n_features + int(self.fit_intercept)
        self._m = self.n_outputs
        self._y_shape = (self._m,)

    def _set_arithmetic(self, arithmetic: str) -> bool:
        """Validate and set ``arithmetic``; whether it is "float32" (which needs
        dtype float32). The model then rounds its constants (``_init_arithmetic``)."""
        if arithmetic not in _ARITHMETICS:
            raise ValueError(f"arithmetic must be one of {_ARITHMETICS}, got {arithmetic!r}")
        self.arithmetic = arithmetic
        self._arith32 = arithmetic == "float32"
        if self._arith32 and self.dtype != np.float32:
            raise ValueError("arithmetic='float32' needs dtype='float32'")
        return self._arith32

    def _bind_state(self) -> None:
        if self._arith32:  # learn_one's float32 y and prediction
            self._y32 = np.zeros(self._m, np.float32)
            self._out32 = np.zeros(self._m, np.float32)

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

    # ------------------------------------------------------------ learning
    def _learn_vector(self, x: Any, y: Any) -> tuple[np.ndarray, np.ndarray, int]:
        """learn_one's checks and kernel call: (prediction, y as checked, status).

        The prediction is made before learning; a refused row raises
        ``ValueError`` with ``on_invalid="raise"`` (the state is as before),
        else comes back with a status other than ``OK``.
        """
        xr = self._row(x)
        yr = self._target(y)
        out = np.empty(self._m, dtype=np.float64)
        if self._arith32:
            status = self._one_kernel32(xr, yr, out, *self._blocks, self._y32, self._out32)
        else:
            status = self._one_kernel(xr, yr, out, *self._blocks)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return out, yr, status

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        if not self._arith32:
            return self._many_kernel(X, Y, out, *self._blocks)
        # Targets and predictions in float32, as an export's C caller passes them.
        with np.errstate(over="ignore"):  # a target beyond float32 becomes inf: refused
            Y32 = Y.astype(np.float32)
        out32 = np.empty(out.shape, np.float32)
        bad = self._many_kernel32(X, Y32, out32, *self._blocks)
        out[:] = out32
        return bad

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
