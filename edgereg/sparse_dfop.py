"""Sparse-DFOP: DFOP on a random projection of sparse inputs (docs/algorithms/sparse_dfop.md).

For high-dimensional sparse inputs x in R^D (bag of words, D up to 10^6) the
learner runs DFOP's update (docs/algorithms/dfop.md) on the compressed input

    psi_t = M x_t,   M in R^{d x D},  M_ij ~ N(0, 1/d) i.i.d.,   d << D,

with parameter v in R^d and prediction psi_t^T v, at O(nnz(x) d + d^2) per
step whatever D is. M is regenerated on demand from a hash of (seed, j)
(``projection="hashed"``, the default; nothing stored), materialised once
(``"gaussian"``, the same matrix, stored) or +-1/sqrt(d) (``"rademacher"``).

This module holds the class; the kernels are ``edgereg/_kernels/sparse.py``;
the generator, its exactness argument and the measured figures are
docs/design/sparse_dfop.md.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ._interval import interval_blocks
from ._kernels.dfop import OK
from ._kernels.hashing import _MASK64
from ._kernels.interval import dfop_predict_interval
from ._kernels.sparse import (
    BLOCK_ROWS,
    HASHED,
    RADEMACHER,
    STORED,
    _correlate,
    _fill_columns,
    _sparse_learn_many_csr,
    _sparse_learn_many_dense,
    _sparse_learn_many_interval_csr,
    _sparse_learn_many_interval_dense,
    _sparse_learn_one_dense,
    _sparse_learn_one_sparse,
    _sparse_predict_many_csr,
    _sparse_predict_many_dense,
    _sparse_predict_one_dense,
    _sparse_predict_one_sparse,
    _sparse_project_many_csr,
    _sparse_project_many_dense,
    _sparse_project_one_dense,
    _sparse_project_one_sparse,
)
from ._validate import (
    _NUMERIC_KINDS,
    as_matrix,
    as_scalar,
    check_int,
    kernel_ready,
    label_sign,
)
from .dfop import DFOP
from .dfop import _allocate as _allocate_dfop

__all__ = ["SparseDFOP", "SparseDFOPState", "SparseDFOPIntervalState"]

_PROJECTIONS = ("gaussian", "hashed", "rademacher")


class SparseDFOPState(NamedTuple):
    """What a SparseDFOP model has learnt (d = n_components, D = n_features)."""

    w: np.ndarray  # (d,) weights v in the compressed space
    P: np.ndarray  # (d, d) DFOP's inverse discounted correlation
    forgotten: np.ndarray  # float64 (1,): DFOP's prior bookkeeping (sum of mu)
    M_T: np.ndarray  # (D, d) for "gaussian" (row j = column j of M), else (0, d)
    counts: np.ndarray  # int64 (4,): learnt, skipped, DFOP's refresh counters


class SparseDFOPIntervalState(NamedTuple):
    """A SparseDFOP with calibrated intervals (``coverage`` set): its state and the
    interval's bookkeeping (``_kernels/interval.py``)."""

    w: np.ndarray
    P: np.ndarray
    forgotten: np.ndarray
    M_T: np.ndarray
    counts: np.ndarray
    interval: np.ndarray  # float64 (6,): noise weight, weighted sum, scored, q, covered, 0


class SparseDFOPWork(NamedTuple):
    """SparseDFOP's workspace: DFOP's (on psi) and the projection's scratch."""

    scratch: np.ndarray  # float64 (3s,): DFOP's scratch (dfop.scratch_size)
    hyper: np.ndarray  # float64: DFOP's constants (index names in _kernels/dfop.py)
    codes: np.ndarray  # int64: DFOP's integer options
    psi: np.ndarray  # (d,) psi = M x
    col: np.ndarray  # (d,) one generated column of M
    psi_block: np.ndarray  # (BLOCK_ROWS, d) psi of a chunk of rows (learn_many)
    hash: np.ndarray  # uint32 (2 d8,), d8 = 8 ceil(d / 8): the two hash words of a column


class SparseDFOPIntervalWork(NamedTuple):
    """SparseDFOPWork and the interval's constants (eta, noise forgetting, coverage)."""

    scratch: np.ndarray
    hyper: np.ndarray
    codes: np.ndarray
    psi: np.ndarray
    col: np.ndarray
    psi_block: np.ndarray
    hash: np.ndarray
    interval_hyper: np.ndarray


# ------------------------------------------------------------------ helpers
def _hash_buffer(d: int) -> np.ndarray:
    """The uint32 scratch of a column's two hash words, each padded to whole 8-lane blocks."""
    return np.zeros(16 * ((d + 7) // 8), dtype=np.uint32)


def _seed_key(seed: int) -> np.uint64:
    """mix64(seed) computed with Python integers (the kernels' first hash)."""
    z = seed & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return np.uint64(z ^ (z >> 31))


class _CSR(NamedTuple):
    """A validated CSR block as the kernels take it (int64 indices, model dtype)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]

    def __getitem__(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.indptr[t], self.indptr[t + 1]
        return (self.indices[a:b], self.data[a:b])


# --------------------------------------------------------------------- model
class SparseDFOP(DFOP):
    r"""DFOP on a random projection psi = M x of sparse inputs (docs/algorithms/sparse_dfop.md).

    Runs the forgetting-factor RLS of :class:`DFOP` on the compressed input
    psi_t = M x_t in R^d (M in R^{d x D}, entries N(0, 1/d) or +-1/sqrt(d)),
    predicting psi_t^T v. A step costs O(nnz(x) d + d^2) time and allocates
    nothing; the memory is O(d^2) whatever D is (except with the stored
    ``"gaussian"`` projection).

    It is a :class:`DFOP` in the compressed space (subclass): same
    ``forgetting``/``task``/``p0``/``keep_prior``/``on_invalid`` semantics and
    defaults, label coding, per-step ``forgetting`` in :meth:`learn_many`, and
    ``coef_`` = v (length d). What differs is the input: x in R^D.

    Parameters
    ----------
    n_features : int
        Input dimension D (may be 10^6 and more).
    n_components : int, default 100
        Compressed dimension d (``n_components <= n_features`` is not required).
    forgetting : float or "auto", default 0.01
        Forgetting factor mu in [0, 1) (lambda = 1 - mu), as in DFOP;
        ``"auto"`` makes the model a :class:`~edgereg.SparseDFOPBank` (a
        DFOPBank on psi, which learns mu).
    task : {"regression", "classification"}
        As in DFOP (labels {-1, +1} or {0, 1}; prediction sign(psi^T v)).
    projection : {"hashed", "gaussian", "rademacher"}, default "hashed"
        How M is obtained (see the module notes): ``"hashed"`` N(0, 1/d) columns
        regenerated from a counter-based hash, nothing stored; ``"gaussian"``
        the same M stored as a (D, d) array in the state; ``"rademacher"``
        +-1/sqrt(d) from hash bits, nothing stored.
    seed : int, default 0
        Seed of M (a non-negative integer; same seed, same M on every machine).
    p0, keep_prior, dtype, on_invalid
        As in :class:`DFOP` (the prior refresh period is computed with d =
        ``n_components``).
    coverage : float in (0, 1), optional
        Calibrate prediction intervals of this coverage while learning
        (regression; default None: none). As :class:`DFOP`'s on psi: the
        interval before learning sample t is

        .. math:: \psi_t^T v \mp q \sqrt{\hat\sigma^2 (\lambda + \psi_t^T P \psi_t) / \lambda}

        (docs/design/intervals.md). :meth:`predict_interval`,
        ``learn_one(..., interval=True)``, ``learn_many(..., interval=True)``,
        ``coverage_``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_components,)
        The compressed weights v.
    n_seen_, n_skipped_ : int

    Notes
    -----
    Inputs: one sample is a dense 1-D array of length D, or the non-zeros of a
    sparse row as a tuple ``(indices, values)`` (any order; duplicates add up),
    or a 1 x D ``scipy.sparse`` matrix; a block is a dense 2-D array or any
    ``scipy.sparse`` matrix (converted to CSR). Non-zeros are visited in
    increasing column index, so every input form gives bit-identical results.

    Memory (float64; the d-sized arrays halve for float32): ``hashed`` and
    ``rademacher``: 8 (d^2 + 35 d + 3 s) + 80 + 64 ceil(d / 8) bytes, s = d
    rounded up to 8 (d = 100: 111.4 KB, for any D; 32 d 8 of it is the chunk
    buffer of :meth:`learn_many`); ``gaussian``: that plus 8 D d bytes (D =
    1000, d = 100: 0.91 MB; D = 10^6: 800 MB).

    Per-step cost of the projection: ``gaussian`` reads nnz columns; ``hashed``
    computes 2 d 32-bit hashes and d ziggurat draws per non-zero, 8 at a time;
    ``rademacher`` d/64 64-bit hashes per non-zero.

    The prediction kernels write psi into the work arrays: do not share one
    model between threads.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import SparseDFOP
    >>> model = SparseDFOP(n_features=1_000_000, n_components=50, forgetting=0.002)
    >>> yhat = model.learn_one((np.array([3, 70_000]), np.array([1.0, 2.0])), 0.5)
    >>> model.nbytes()  # 8 (d^2 + 35 d + 3 s) + 80 + 64 ceil(d / 8) bytes, d = 50, s = 56
    35872
    """

    _auto_bank = "SparseDFOPBank"  # SparseDFOP(..., forgetting="auto")
    #: No ``arithmetic`` option (None, not DFOP's False): a float32 export of the class
    #: is refused (it would not compute in float32 only; ``edgereg.export._model``),
    #: a float32 instance exports as it is.
    _arith32 = None

    def __init__(
        self,
        n_features: int,
        n_components: int = 100,
        forgetting: float = 0.01,
        *,
        task: str = "regression",
        projection: str = "hashed",
        seed: int = 0,
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
        coverage: float | None = None,
    ) -> None:
        self.n_components = check_int("n_components", n_components)
        if projection not in _PROJECTIONS:
            raise ValueError(f"projection must be one of {_PROJECTIONS}, got {projection!r}")
        self.projection = projection
        self.seed = check_int("seed", seed, minimum=0)
        self._kind = {"gaussian": STORED, "hashed": HASHED, "rademacher": RADEMACHER}[projection]
        self._gen_kind = RADEMACHER if projection == "rademacher" else HASHED
        self._key = _seed_key(self.seed)
        self._scale = 1.0 / math.sqrt(self.n_components)
        self._M_cache: np.ndarray | None = None
        super().__init__(
            n_features, forgetting, task=task, p0=p0, keep_prior=keep_prior,
            dtype=dtype, on_invalid=on_invalid, coverage=coverage,
        )

    # ------------------------------------------------------------ state
    def _dfop_dimension(self) -> int:
        """DFOP runs on psi: its refresh period follows d, not D."""
        return self.n_components

    def _allocate(self) -> tuple[SparseDFOPState, SparseDFOPWork]:  # type: ignore[override]
        d = self.n_components
        dfop_state, dfop_work = _allocate_dfop(
            d, self.p0, self.dtype, self.forgetting, self._period, self.keep_prior, self._skip
        )
        M_T, psi, col, psi_block, hbuf = self._projection_arrays()
        state = SparseDFOPState(
            w=dfop_state.w,
            P=dfop_state.P,
            forgotten=dfop_state.forgotten,
            M_T=M_T,
            counts=dfop_state.counts,
        )
        work = SparseDFOPWork(
            scratch=dfop_work.scratch,
            hyper=dfop_work.hyper,
            codes=dfop_work.codes,
            psi=psi,
            col=col,
            psi_block=psi_block,
            hash=hbuf,
        )
        if self.coverage is None:
            return state, work
        _, I, ihyper, _ = interval_blocks(self.coverage)
        return (SparseDFOPIntervalState(*state, interval=I),
                SparseDFOPIntervalWork(*work, interval_hyper=ihyper))

    def _projection_arrays(self) -> tuple[np.ndarray, ...]:
        """M_T (learnt: the stored M, or empty), then the projection's scratch:
        psi, one column, psi of a chunk of rows, the hash words."""
        d, D, dt = self.n_components, self.n_features, self.dtype
        if self._kind == STORED:
            if self._M_cache is None:
                # Generated once per model: reset() copies instead of re-hashing.
                M_T = np.empty((D, d), dtype=dt)
                _fill_columns(np.arange(D, dtype=np.int64), HASHED, self._key, self._scale,
                              np.zeros((0, d), dtype=dt), M_T, _hash_buffer(d))
                self._M_cache = M_T
            M_T = self._M_cache.copy()
        else:
            M_T = np.zeros((0, d), dtype=dt)
        return (M_T, np.zeros(d, dtype=dt), np.zeros(d, dtype=dt),
                np.zeros((BLOCK_ROWS, d), dtype=dt), _hash_buffer(d))

    def _bind_state(self) -> None:
        # DFOP's blocks, not DFOP's learn_one kernel (SparseDFOP projects first).
        self._bind_dfop_blocks()
        work = self._work
        self._M_T, self._hbuf = self._state.M_T, work.hash
        # The projection's description and scratch, as the kernels take it:
        # for one row (psi) and for a block (psi_block).
        head = (self._kind, self._key, self._scale, self._M_T)
        self._projection = (*head, work.psi, work.col, work.hash)
        self._projection_block = (*head, work.psi_block, work.col, work.hash)
        self._dfop_blocks = (self._PW, self._L, work.scratch, work.hyper, work.codes)
        # DFOP's interval blocks and its learn_one with intervals, run on psi.
        self._bind_interval()

    # ------------------------------------------------------------ inputs
    def _sparse_one(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """Validate one sparse row: (indices int64 sorted, values of the model dtype)."""
        if sp.issparse(x):
            if x.shape != (1, self.n_features):
                raise ValueError(
                    f"a sparse sample must have shape (1, {self.n_features}), got {x.shape}"
                )
            csr = self._check_X(x)
            return csr.indices, csr.data
        if len(x) != 2:
            raise ValueError("a sparse sample must be a tuple (indices, values)")
        idx = np.asarray(x[0])
        val = np.asarray(x[1])
        if idx.ndim != 1 or val.ndim != 1 or idx.shape != val.shape:
            raise ValueError(
                "a sparse sample (indices, values) needs two 1-D arrays of the same length, "
                f"got shapes {idx.shape} and {val.shape}"
            )
        if idx.size and idx.dtype.kind not in "iu":
            raise TypeError(f"indices must be integers, got dtype {idx.dtype}")
        if val.dtype.kind not in _NUMERIC_KINDS:
            raise TypeError(f"values must hold real numbers (bool, int or float); got {val.dtype}")
        idx = kernel_ready(np.ascontiguousarray(idx, dtype=np.int64))
        val = kernel_ready(np.ascontiguousarray(val, dtype=self.dtype))
        if idx.size:
            lo, hi = idx.min(), idx.max()
            if lo < 0 or hi >= self.n_features:
                raise ValueError(
                    f"indices must be in [0, {self.n_features}), got values in [{lo}, {hi}]"
                )
            if np.any(idx[1:] < idx[:-1]):
                order = np.argsort(idx, kind="stable")
                idx, val = idx[order], val[order]
        return idx, val

    def _check_X(self, X: Any) -> np.ndarray | _CSR:  # type: ignore[override]
        if not sp.issparse(X):
            return as_matrix(X, self.n_features, self.dtype)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"X must be a 2-D matrix of shape (n_samples, {self.n_features}), "
                f"got shape {X.shape}"
            )
        if X.dtype.kind not in _NUMERIC_KINDS:
            raise TypeError(f"X must hold real numbers (bool, int or float); got dtype {X.dtype}")
        csr = X.tocsr()
        if csr is X:
            csr = X.copy()  # sorting below must not touch the caller's matrix
        indptr = np.asarray(csr.indptr, dtype=np.int64)
        indices = np.asarray(csr.indices, dtype=np.int64)
        n = csr.shape[0]
        if (
            indptr.shape != (n + 1,)
            or indptr[0] != 0
            or indptr[-1] > indices.shape[0]
            or np.any(np.diff(indptr) < 0)
        ):
            raise ValueError("X is not a valid CSR matrix (inconsistent indptr)")
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_features):
            raise ValueError(
                f"X has column indices outside [0, {self.n_features}): "
                f"[{indices.min()}, {indices.max()}]"
            )
        if not csr.has_sorted_indices:
            csr.sort_indices()
            indices = np.asarray(csr.indices, dtype=np.int64)
        return _CSR(
            kernel_ready(np.ascontiguousarray(indptr)),
            kernel_ready(np.ascontiguousarray(indices)),
            kernel_ready(np.ascontiguousarray(csr.data, dtype=self.dtype)),
            (n, self.n_features),
        )

    def _invalid_message(self, x: Any, y: Any, where: str) -> str:  # type: ignore[override]
        if isinstance(x, tuple):  # (indices, values)
            idx, val = np.asarray(x[0]), np.asarray(x[1], dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(val))
            if bad.size:
                shown = ", ".join(f"x[{idx[k]}]={val[k]}" for k in bad[:5])
                return super()._invalid_message(np.array([np.nan]), y, where).replace(
                    "x[0]=nan", shown
                )
            return super()._invalid_message(np.zeros(1), y, where)
        return super()._invalid_message(x, y, where)

    # ------------------------------------------------------------ one-step
    def _kernel_args(self) -> tuple:
        """The projection's description (kind, seed key, scale, M_T)."""
        return self._projection[:4]

    def decision_function_one(self, x: Any) -> float:
        """Raw score psi^T v for one sample."""
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            return _sparse_predict_one_sparse(idx, val, self._projection, self._w)
        return _sparse_predict_one_dense(self._row(x), self._projection, self._w)

    def predict_one(self, x: Any) -> float:
        """Predict one sample: dense row, ``(indices, values)`` or a 1 x D sparse row."""
        score = self.decision_function_one(x)
        if self._classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    def learn_one(self, x: Any, y: Any, interval: Any = False) -> Any:
        """Predict x with the current model, then learn (x, y); return the prediction.

        ``x`` is a dense row of length D, the non-zeros ``(indices, values)``
        of a sparse row, or a 1 x D ``scipy.sparse`` matrix. With
        ``interval=True`` (a model built with ``coverage``), return the
        interval made before learning instead: (lower, prediction, upper).

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); the state is then
            exactly as before the call.
        """
        if interval:
            self._check_interval(interval)
        yv = label_sign(y) if self._classify else (y if type(y) is float else as_scalar(y))
        if self._I is not None:
            return self._learn_one_projected(x, y, yv, interval)
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            shown: Any = (idx, val)
            yhat, status = _sparse_learn_one_sparse(
                idx, val, yv, self._projection, *self._dfop_blocks
            )
        else:
            shown = xr = self._row(x)
            yhat, status = _sparse_learn_one_dense(xr, yv, self._projection, *self._dfop_blocks)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(shown, y, "sample"))
        if self._classify:
            return 1.0 if yhat >= 0.0 else -1.0
        return yhat

    def _project_one(self, x: Any) -> tuple[np.ndarray, Any]:
        """psi = M x into the work's psi (a view: the next projection overwrites it),
        and x as an error message shows it."""
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            _sparse_project_one_sparse(idx, val, self._projection)
            return self._work.psi, (idx, val)
        xr = self._row(x)
        _sparse_project_one_dense(xr, self._projection)
        return self._work.psi, xr

    def _learn_one_projected(self, x: Any, y: Any, yv: float, interval: Any) -> Any:
        """learn_one with intervals: project, then DFOP's learn_one with intervals on psi
        (``_kernels/interval.py``), the same step as learn_many's on psi."""
        psi, shown = self._project_one(x)
        band = self._interval_kernel(psi, yv, self._PW, self._B, self._IB)  # DFOP's band kernel
        if band[0] != band[0] and not self._skip:  # NaN lower bound: refused
            raise ValueError(self._invalid_message(shown, y, "sample"))
        return band if interval else band[1]

    def predict_interval(self, x: Any, coverage: Any = None) -> tuple[float, float, float]:
        r"""(lower, prediction, upper) for one sample (dense, ``(indices, values)`` or a
        1 x D sparse row), without learning; as :meth:`DFOP.predict_interval` on psi."""
        self._check_interval(coverage)
        psi = self._project_one(x)[0]
        band = np.empty((1, 3))
        dfop_predict_interval(psi[None, :], self._PW, self._B, self._IB, band)
        return float(band[0, 0]), float(band[0, 1]), float(band[0, 2])

    def _interval_many(self, X: Any, out: np.ndarray) -> None:
        Psi = np.empty((out.shape[0], self.n_components), dtype=self.dtype)
        if isinstance(X, _CSR):
            _sparse_project_many_csr((X.indptr, X.indices, X.data), self._projection, Psi)
        else:
            _sparse_project_many_dense(X, self._projection, Psi)
        dfop_predict_interval(Psi, self._PW, self._B, self._IB, out)

    # ------------------------------------------------------------ block
    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        MU = self._forgetting_schedule(forgetting, X.shape[0])
        csr = isinstance(X, _CSR)
        if self._I is not None:
            # One pass: the interval before each row from the psi^T P psi of its step.
            self._bands = np.empty((Y.shape[0], 3))
            rest = (MU, out, self._bands, self._projection_block, *self._dfop_blocks, self._IB)
            if csr:
                return _sparse_learn_many_interval_csr((X.indptr, X.indices, X.data), Y, *rest)
            return _sparse_learn_many_interval_dense(X, Y, *rest)
        rest = (MU, out, self._projection_block, *self._dfop_blocks)
        if csr:
            return _sparse_learn_many_csr((X.indptr, X.indices, X.data), Y, *rest)
        return _sparse_learn_many_dense(X, Y, *rest)

    def learn_many(self, X: Any, y: Any, forgetting: Any = None,
                   interval: Any = False) -> np.ndarray:
        """Learn a block in one kernel call; return the prequential predictions.

        Parameters
        ----------
        X : array of shape (n, n_features) or scipy.sparse matrix
            Sparse matrices are converted to CSR (indices checked, sorted on a
            copy when unsorted).
        y : array of shape (n,)
        forgetting : float or array of shape (n,), optional
            Per-step forgetting factors (G-DFOP), as in :meth:`DFOP.learn_many`.
        interval : bool, optional
            Return the intervals made before learning each row, shape (n, 3):
            lower, prediction, upper (a model built with ``coverage``).

        Raises
        ------
        ValueError
            At the first row with NaN/inf (``on_invalid="raise"``): the rows
            before it are learnt, it and the rows after it are not.
        """
        if interval:
            self._check_interval(interval)
        if forgetting is not None and np.ndim(forgetting) == 0:
            n = X.shape[0] if (sp.issparse(X) or np.ndim(X) == 2) else 0
            forgetting = np.full(n, float(forgetting))
        out = self._learn_many_checked(X, y, forgetting=forgetting)
        if interval:
            bands, self._bands = self._bands, None
            return bands
        self._bands = None
        return self._finish(out)

    def _predict_block(self, X, out):  # type: ignore[override]
        if isinstance(X, _CSR):
            _sparse_predict_many_csr((X.indptr, X.indices, X.data), self._projection, self._w, out)
        else:
            _sparse_predict_many_dense(X, self._projection, self._w, out)

    # ------------------------------------------------------------ projection
    def projection_matrix(self, columns: Any = None) -> np.ndarray:
        """Materialise M (shape (d, D)) or the given columns of it (shape (d, k)).

        The values are exactly those the kernels use (in the model dtype).
        For D = 10^6 and d = 100 the whole of M takes 800 MB: ask for columns.
        """
        if columns is None:
            cols = np.arange(self.n_features, dtype=np.int64)
        else:
            cols = np.ascontiguousarray(columns, dtype=np.int64).reshape(-1)
            if cols.size and (cols.min() < 0 or cols.max() >= self.n_features):
                raise ValueError(f"columns must be in [0, {self.n_features})")
        out = np.empty((cols.shape[0], self.n_components), dtype=self.dtype)
        _fill_columns(cols, *self._kernel_args(), out, self._hbuf)
        return out.T

    def recover(
        self, sparsity: int, method: str = "l1", *, coef: str = "lstsq", tol: float = 1e-10
    ) -> np.ndarray:
        """Estimate the uncompressed weights w in R^D from v (docs/algorithms/sparse_dfop.md).

        ``method="l1"``: basis pursuit ``min ||w||_1 s.t. M w = v`` as the linear
        program ``min 1^T (w+ + w-) s.t. [M, -M] [w+; w-] = v, w+- >= 0``
        (``scipy.optimize.linprog``, HiGHS), then the ``sparsity`` entries of
        largest magnitude are kept. ``method="omp"``: orthogonal matching
        pursuit, ``sparsity`` greedy steps picking the column with the largest
        normalised correlation ``|M_j^T r| / ||M_j||`` (computed column by column
        from the hash, M never stored) and re-solving least squares on the
        chosen columns; it stops early when ||r|| <= tol ||v||.

        Both find the support S; ``coef`` says which values go on it:

        * ``"lstsq"`` (default): w_S = argmin ||M_S w_S - v|| (the model
          v = M w; exact when v is the projection of an s-sparse w, and it
          removes the bias the truncation leaves).
        * ``"effective"``: w_S = (M^T v)_S, the weights the model really applies
          to those features (its prediction is psi^T v = (M^T v)^T x). Use it
          for a *learnt* v: the least-squares v of inputs living on S lies in
          span(M_S) with M_S^T v = w_S, so this is exact where "lstsq" is off
          by (M_S^T M_S)^{-1} (a relative error ~ sqrt(s / d)).
        * ``"raw"``: the LP's (or OMP's ``lstsq``) values, truncated.

        Returns
        -------
        ndarray of shape (n_features,), float64
            An s-sparse estimate of w.

        Notes
        -----
        The LP has 2D variables and d equality constraints and needs M
        materialised (8 d D bytes): use it up to D d ~ 10^7; OMP costs
        ``sparsity`` passes over the D columns.
        """
        s = check_int("sparsity", sparsity)
        v = self._w.astype(np.float64)
        D, d = self.n_features, self.n_components
        if coef not in ("lstsq", "effective", "raw"):
            raise ValueError(f"coef must be 'lstsq', 'effective' or 'raw', got {coef!r}")
        if method == "l1":
            if D * d > 20_000_000:
                raise ValueError(
                    f"the l1 linear program needs M materialised ({8 * D * d / 1e6:.0f} MB); "
                    "use method='omp' for this size"
                )
            from scipy.optimize import linprog

            M = self.projection_matrix().astype(np.float64)
            res = linprog(
                np.ones(2 * D), A_eq=np.hstack([M, -M]), b_eq=v, bounds=(0, None),
                method="highs",
            )
            if res.status != 0:
                raise RuntimeError(f"basis pursuit failed: {res.message}")
            w_full = res.x[:D] - res.x[D:]
            support = np.sort(np.argsort(-np.abs(w_full), kind="stable")[:s])
            raw = w_full[support]
        elif method == "omp":
            support, raw = self._omp(v, s, tol)
        else:
            raise ValueError(f"method must be 'l1' or 'omp', got {method!r}")
        w = np.zeros(D)
        Ms = self.projection_matrix(support).astype(np.float64)
        if coef == "lstsq":
            w[support] = np.linalg.lstsq(Ms, v, rcond=None)[0]
        elif coef == "effective":
            w[support] = Ms.T @ v
        elif coef == "raw":
            w[support] = raw
        else:
            raise ValueError(f"coef must be 'lstsq', 'effective' or 'raw', got {coef!r}")
        return w

    def _omp(self, v: np.ndarray, s: int, tol: float) -> tuple[np.ndarray, np.ndarray]:
        D = self.n_features
        r = v.copy()
        corr = np.empty(D)
        norms = np.empty(D)
        col = np.empty(self.n_components)
        chosen: list[int] = []
        coef = np.zeros(0)
        vnorm = float(np.linalg.norm(v))
        # Column norms are fixed: computed with the first correlation pass.
        for _ in range(min(s, self.n_components)):
            if np.linalg.norm(r) <= tol * vnorm:
                break
            _correlate(r, *self._kernel_args(), col, self._hbuf, corr, norms)
            score = np.abs(corr) / norms
            score[chosen] = -1.0
            chosen.append(int(np.argmax(score)))
            Ms = self.projection_matrix(chosen).astype(np.float64)
            coef = np.linalg.lstsq(Ms, v, rcond=None)[0]
            r = v - Ms @ coef
        order = np.argsort(chosen)
        return np.asarray(chosen, dtype=np.int64)[order], coef[order]

    # ------------------------------------------------------------ contracts
    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 12, "n_components": 5},
            {"n_features": 9, "n_components": 4, "forgetting": 0.05, "task": "classification",
             "projection": "gaussian"},
            {"n_features": 10, "n_components": 6, "projection": "rademacher", "seed": 3},
            {"n_features": 11, "n_components": 5, "dtype": "float32", "projection": "gaussian"},
            {"n_features": 12, "n_components": 5, "coverage": 0.9},  # calibrated intervals
        ]
