"""SparseDFOPBank: SparseDFOP whose forgetting factor tunes itself (docs/algorithms/sparse_dfop.md).

``SparseDFOP(n_features, n_components, forgetting="auto")`` builds one: the
random projection psi = M x of :class:`~edgereg.SparseDFOP` (docs/algorithms/
sparse_dfop.md), then a :class:`~edgereg.DFOPBank` on psi (``_kernels/sparse.py``'s
``_sparse_bank_`` kernels: the same projections, the bank's kernels).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ._base import block_at
from ._interval import BANK_NOISE_FORGETTING, BankIntervals
from ._kernels.interval import interval_one, interval_pass
from ._kernels.sparse import (
    BLOCK_ROWS,
    _sparse_bank_learn_many_csr,
    _sparse_bank_learn_many_dense,
    _sparse_bank_learn_one_dense,
    _sparse_bank_learn_one_sparse,
    _sparse_bank_predict_many_csr,
    _sparse_bank_predict_many_dense,
    _sparse_bank_predict_one_dense,
    _sparse_bank_predict_one_sparse,
)
from ._validate import as_scalar, label_sign
from .bank import (
    BankModel,
    DFOPBankWork,
    _allocate_banks,
    _check_auto,
    _init_bank_parameters,
)
from .sparse_dfop import _CSR, SparseDFOP

__all__ = ["SparseDFOPBank", "SparseDFOPBankIntervalState"]


class SparseDFOPBankState(NamedTuple):
    """A DFOPBank's learnt state on psi (d = n_components) and the stored M."""

    w: np.ndarray  # (K, d) the members' weights
    P: np.ndarray  # (K, d, d) the members' P
    forgotten: np.ndarray  # float64 (K, 1)
    member_counts: np.ndarray  # int64 (K, 4)
    weights: np.ndarray  # float64 (K,): the fixed-share weights
    scale: np.ndarray  # float64 (3,): the bank's errors' count, mean, variance
    window: np.ndarray  # int64 (1,): the lattice index of member 0's factor
    losses: np.ndarray  # float64 (K,): the members' slow losses
    M_T: np.ndarray  # (D, d) for "gaussian", else (0, d) (SparseDFOP's)
    counts: np.ndarray  # int64 (2,): samples learnt, skipped


class SparseDFOPBankIntervalState(NamedTuple):
    """A SparseDFOPBank with calibrated intervals (``coverage``): its state and the
    interval's bookkeeping (``_kernels/interval.py``)."""

    w: np.ndarray
    P: np.ndarray
    forgotten: np.ndarray
    member_counts: np.ndarray
    weights: np.ndarray
    scale: np.ndarray
    window: np.ndarray
    losses: np.ndarray
    M_T: np.ndarray
    counts: np.ndarray
    interval: np.ndarray  # float64 (6,)


class SparseDFOPBankWork(NamedTuple):
    """The bank's workspace (``DFOPBankWork``) and the projection's scratch (SparseDFOP's)."""

    bank: DFOPBankWork
    psi: np.ndarray
    col: np.ndarray
    psi_block: np.ndarray
    hash: np.ndarray


class SparseDFOPBank(BankIntervals, BankModel, SparseDFOP):
    """SparseDFOP with a self-tuning forgetting factor (a DFOPBank on psi = M x).

    Parameters: SparseDFOP's with ``forgetting="auto"``, plus the bank's
    ``forgetting_grid``, ``learning_rate`` and ``share`` (:class:`DFOPBank`).
    Attributes: ``forgetting_``, ``forgetting_weights_``, ``coef_`` (the
    weighted compressed weights, which ``recover`` reads) and
    ``member_coef_``. Memory: the bank's on d = ``n_components`` plus
    SparseDFOP's projection scratch (``nbytes()``).

    ``coverage``: calibrated intervals as a DFOPBank's (v = 1, the noise level
    forgotten at 0.01, docs/design/intervals.md), from the bank's prequential
    predictions on psi.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import SparseDFOP
    >>> model = SparseDFOP(n_features=1_000_000, n_components=20, forgetting="auto")
    >>> type(model).__name__
    'SparseDFOPBank'
    >>> yhat = model.learn_one((np.array([3, 70_000]), np.array([1.0, 2.0])), 0.5)
    """

    def __init__(
        self,
        n_features: int,
        n_components: int = 100,
        forgetting: str = "auto",
        *,
        task: str = "regression",
        projection: str = "hashed",
        seed: int = 0,
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        forgetting_grid: Any = None,
        members: Any = None,
        learning_rate: float = 2.0,
        share: float = 1e-3,
        scout: Any = None,
        coverage: float | None = None,
    ) -> None:
        _check_auto(forgetting, "SparseDFOPBank")
        _init_bank_parameters(self, forgetting_grid, members, learning_rate, share, scout)
        super().__init__(
            n_features, n_components, 0.0, task=task, projection=projection, seed=seed,
            p0=p0, keep_prior=keep_prior, dtype=dtype, on_invalid=on_invalid,
            coverage=coverage,
        )
        self.forgetting = "auto"

    def _allocate(self) -> tuple[SparseDFOPBankState, SparseDFOPBankWork]:  # type: ignore[override]
        d = self.n_components
        state, work = _allocate_banks(
            1, d, self._lattice, self._K, self.p0, self.dtype, self.keep_prior,
            self._classify, self._skip, self.learning_rate, self.share, self._scout,
        )
        M_T, psi, col, psi_block, hbuf = self._projection_arrays()
        bank = {field: value[0] for field, value in state._asdict().items()}
        return self._with_interval(
            SparseDFOPBankState(**bank, M_T=M_T),
            SparseDFOPBankWork(DFOPBankWork(*(f[0] for f in work)), psi, col, psi_block, hbuf),
        )

    _interval_state = SparseDFOPBankIntervalState

    def _bank_work(self) -> DFOPBankWork:
        return self._work.bank  # type: ignore[no-any-return]

    def nbytes(self) -> int:
        """The bank's two blocks, M_T and the projection's scratch."""
        work = self._work
        scratch = work.psi.nbytes + work.col.nbytes + work.psi_block.nbytes + work.hash.nbytes
        extra = 0 if self._I is None else self._IB.nbytes
        return int(self._PW.nbytes + self._B.nbytes + self._state.M_T.nbytes + scratch + extra)

    def _bind_state(self) -> None:
        s, work = self._state, self._work
        K, d = s.w.shape
        self._PW = block_at(s.P, (K, d + 1, d))
        self._B = work.bank.block
        self._M_T, self._hbuf = s.M_T, work.hash
        head = (self._kind, self._key, self._scale, self._M_T)
        self._projection = (*head, work.psi, work.col, work.hash)
        self._projection_block = (*head, work.psi_block, work.col, work.hash)
        assert work.psi_block.shape[0] == BLOCK_ROWS
        self._bind_interval()

    # ---------------------------------------------------------------- kernels
    def decision_function_one(self, x: Any) -> float:
        """The bank's raw score for one sample (dense, ``(indices, values)`` or sparse)."""
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            return _sparse_bank_predict_one_sparse(idx, val, self._projection, self._PW, self._B)
        return _sparse_bank_predict_one_dense(self._row(x), self._projection, self._PW, self._B)

    def learn_one(self, x: Any, y: Any, interval: Any = False) -> Any:
        """Predict x with the bank, then learn (x, y); return the prediction (with
        ``interval=True``: the interval made before learning, (lower, prediction, upper))."""
        if interval:
            self._check_interval(interval)
        yv = label_sign(y) if self._classify else (y if type(y) is float else as_scalar(y))
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            shown: Any = (idx, val)
            yhat = _sparse_bank_learn_one_sparse(idx, val, yv, self._projection, self._PW,
                                                 self._B)
        else:
            shown = xr = self._row(x)
            yhat = _sparse_bank_learn_one_dense(xr, yv, self._projection, self._PW, self._B)
        if yhat != yhat and not self._skip:  # NaN: refused, state unchanged
            raise ValueError(self._invalid_message(shown, y, "sample"))
        if self._I is not None:
            # A prediction that is not finite (NaN: the row was refused) is not
            # scored, as in learn_many's paired pass.
            interval_one(yv, yhat, 0.0 if np.isfinite(yhat) else np.nan,
                         BANK_NOISE_FORGETTING, self._IB)
            band = self._band
            if interval:
                return float(band[0]), float(band[1]), float(band[2])
            return float(band[1])
        if self._classify:
            return 1.0 if yhat >= 0.0 else -1.0
        return yhat

    def predict_interval(self, x: Any, coverage: Any = None) -> tuple[float, float, float]:
        """(lower, prediction, upper) for one sample (dense, ``(indices, values)`` or a
        1 x D sparse row), without learning."""
        self._check_interval(coverage)
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            X: Any = _CSR(np.array([0, idx.size], dtype=np.int64), idx, val,
                          (1, self.n_features))
        else:
            X = self._row(x)[None, :]
        band = np.empty((1, 3))
        self._interval_many(X, band)
        return float(band[0, 0]), float(band[0, 1]), float(band[0, 2])

    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        rest = (out, self._projection_block, self._PW, self._B)
        if isinstance(X, _CSR):
            bad = _sparse_bank_learn_many_csr((X.indptr, X.indices, X.data), Y, *rest)
        else:
            bad = _sparse_bank_learn_many_dense(X, Y, *rest)
        if self._I is not None:
            # The bank writes NaN for a row it refused: such rows are not scored.
            n = Y.shape[0] if bad < 0 else bad
            lev = np.where(np.isfinite(out), 0.0, np.nan)
            self._bands = np.empty((Y.shape[0], 3))
            interval_pass(Y, self._noise_mu, out, lev, n, self._IB, self._bands)
            self._bands = self._bands[:n]
        return bad

    def _predict_block(self, X, out):  # type: ignore[override]
        if isinstance(X, _CSR):
            _sparse_bank_predict_many_csr((X.indptr, X.indices, X.data), self._projection,
                                          self._PW, self._B, out)
        else:
            _sparse_bank_predict_many_dense(X, self._projection, self._PW, self._B, out)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 50, "n_components": 6},
            {"n_features": 40, "n_components": 5, "task": "classification",
             "projection": "gaussian"},
            {"n_features": 30, "n_components": 4, "dtype": "float32",
             "projection": "rademacher", "forgetting_grid": (0.0, 0.05)},
            {"n_features": 20, "n_components": 5, "coverage": 0.9},
        ]

