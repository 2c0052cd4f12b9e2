"""Sparse-DFOP: DFOP on a random projection of sparse inputs (SPEC.md section 2).

For high-dimensional sparse inputs x in R^D (bag of words, D up to 10^6) the
learner runs the DFOP update of SPEC.md section 1 on the compressed input

    psi_t = M x_t,   M in R^{d x D},  M_ij ~ N(0, 1/d) i.i.d.,   d << D,

with parameter v in R^d and prediction psi_t^T v. The DFOP step itself is
:func:`edgereg.dfop._dfop_step` (imported, not copied); this module only adds
the projection. Because x is sparse,

    psi_t = sum_{j : x_tj != 0} x_tj M[:, j],

so a step costs O(nnz(x) d + d^2), whatever D is: each non-zero adds one column
of M (length d) into a preallocated work array.

Where M lives (the ``projection`` argument):

* ``"hashed"`` (default): column j is regenerated on demand from a
  counter-based hash of (seed, j): entry pair p of column j comes from
  ``h = mix64(key_j + (p + 1) * G)`` (the splitmix64 sequence started at
  ``key_j = mix64(mix64(seed) ^ mix64(j + G))``, ``G`` the 64-bit golden
  ratio), whose two 32-bit halves each give one N(0, 1) value by Marsaglia and
  Tsang's ziggurat (7 bits layer, 1 bit sign, 24 bits uniform; the rare
  rejected draws take fresh uniforms from a second hash stream keyed by
  (key_j, i)). Entries are scaled by 1/sqrt(d). Nothing of M is stored: the
  model memory is the DFOP state of dimension d, and M is bit-identical in
  every run, process and after save/load (integer arithmetic and a table
  computed once at import; the transcendental functions are only used on the
  ~1% slow path and come from the same libm as the fast path).
* ``"gaussian"``: the *same* matrix as ``"hashed"`` for the same seed, but
  materialised once at construction and stored in the state as ``M_T`` of
  shape (D, d) (row j of ``M_T`` is column j of M, so a column is contiguous).
  Memory D d itemsize bytes on top of the DFOP state; a step then reads
  columns instead of hashing (faster for small D, and the state file holds M
  itself for exact reproduction elsewhere).
* ``"rademacher"``: entries +-1/sqrt(d), one hash bit each (64 entries per
  64-bit hash), ``M_ij = (1 - 2 b_ij) / sqrt(d)`` with b_ij bit (i mod 64) of
  ``mix64(key_j + (i // 64 + 1) * G)``. Also satisfies the restricted isometry
  property; the cheapest to generate. Nothing stored.

Memory per projection (float64, d = n_components, D = n_features):
``hashed``/``rademacher``: 8 (d^2 + 6d + 32d) + 40 bytes (d = 100: 110.4 KB, for
any D), of which 32 d 8 bytes (25.6 KB) are ``work_psi_block``, the psi of a
chunk of 32 rows in ``learn_many``; ``gaussian``: that plus 8 D d (D = 1000,
d = 100: 910 KB).

``learn_many`` projects ``BLOCK_ROWS`` (32) rows at a time into
``work_psi_block`` and hands the chunk to DFOP's fused block kernel
``_dfop_learn_many`` (one pass over P per step, which also forms
P_new psi_{t+1}); ``learn_one`` projects into ``work_psi`` and calls DFOP's
per-sample kernel. The two are bit-identical (DFOP guarantees it for its
kernels; the tests check it across chunk boundaries).

``recover`` estimates the uncompressed weights w (length D) from v by basis
pursuit (``min ||w||_1 s.t. M w = v``, a linear program for HiGHS) or
orthogonal matching pursuit, off the per-step path.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from . import dfop as _dfop_module
from ._jit import kernel, recompile_with
from ._validate import (
    _NUMERIC_KINDS,
    as_matrix,
    as_scalar,
    check_int,
    label_to_sign,
)

# DFOP's own kernels: its per-sample step (with the prior refresh) and its
# prediction, so that predict_one(x) == the prediction learn_one returns, bit
# for bit, whatever arithmetic DFOP uses.
from .dfop import (
    DFOP,
    OK,
    _dfop_learn_many,
    _dfop_learn_one,
    _dfop_predict_one,
    refresh_period,
)

__all__ = ["SparseDFOP", "SparseDFOPState"]

_PROJECTIONS = ("gaussian", "hashed", "rademacher")
# learn_many projects this many rows at a time into the state's work_psi_block,
# then runs DFOP's fused block kernel on them (one pass over P per step).
BLOCK_ROWS = 32
# Kernel codes: where a column of M comes from.
STORED = 0  # row j of the state's M_T
HASHED = 1  # ziggurat normals from the hash
RADEMACHER = 2  # +-1 from the hash bits

_MASK64 = (1 << 64) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_FALLBACK_SALT = np.uint64(0xD1B54A32D192ED03)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_S8 = np.uint64(8)
_S7 = np.uint64(7)
_LOW32 = np.uint64(0xFFFFFFFF)
_LOW7 = np.uint64(127)
_ONE = np.uint64(1)


def _ziggurat_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Marsaglia & Tsang's 128-layer ziggurat for N(0, 1), uniforms in (0, 1).

    Layer i has right edge ``zw[i]`` (layer 0: the base strip of width
    v / f(r), which includes the tail beyond r); a magnitude u in (0, 1) gives
    the candidate x = u zw[i], accepted at once when u < zk[i] (x lies inside
    the next smaller layer), and zf[i] = exp(-zw[i]^2 / 2) serves the wedge
    test. Computed with the same formulas as the paper's ``zigset``.
    """
    r = 3.442619855899
    v = 9.91256303526217e-3
    zk = np.zeros(128)
    zw = np.zeros(128)
    zf = np.zeros(128)
    dn = r
    tn = r
    q = v / math.exp(-0.5 * dn * dn)
    zk[0] = dn / q
    zk[1] = 0.0
    zw[0] = q
    zw[127] = dn
    zf[0] = 1.0
    zf[127] = math.exp(-0.5 * dn * dn)
    for i in range(126, 0, -1):
        dn = math.sqrt(-2.0 * math.log(v / dn + math.exp(-0.5 * dn * dn)))
        zk[i + 1] = dn / tn
        tn = dn
        zf[i] = math.exp(-0.5 * dn * dn)
        zw[i] = dn
    return zk, zw, zf


# Small (3 KB) module constants: numba freezes them into the compiled code.
_ZK, _ZW, _ZF = _ziggurat_tables()
_ZR = 3.442619855899


class SparseDFOPState(NamedTuple):
    """Fixed memory of a SparseDFOP model (d = n_components, D = n_features)."""

    w: np.ndarray  # (d,) weights v in the compressed space
    P: np.ndarray  # (d, d) DFOP's inverse discounted correlation
    forgotten: np.ndarray  # float64 (1,): DFOP's prior bookkeeping (sum of mu)
    M_T: np.ndarray  # (D, d) for "gaussian" (row j = column j of M), else (0, d)
    work_psi: np.ndarray  # (d,) scratch: psi = M x
    work_px: np.ndarray  # (d,) scratch of the DFOP step
    work_v: np.ndarray  # (d,) scratch of DFOP's prior refresh
    work_col: np.ndarray  # (d,) scratch: one generated column of M
    counts: np.ndarray  # int64 (4,): learnt, skipped, DFOP's refresh counters
    work_next: np.ndarray  # (d,) scratch of DFOP's fused block kernel (P_new x_{t+1})
    work_psi_block: np.ndarray  # (BLOCK_ROWS, d) scratch: psi of a chunk of rows (learn_many)


# ------------------------------------------------------------------ hashing
@kernel
def _mix64(z):
    """splitmix64's finaliser (Stafford variant 13): a bijection of uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@kernel
def _column_key(seed_key, j):
    return _mix64(seed_key ^ _mix64(np.uint64(j) + _GOLDEN))


@kernel
def _uniform53(h):
    """A uniform in (0, 1) from the top 53 bits of a 64-bit hash."""
    # Through int64: x86 converts signed integers to double in one instruction.
    return (np.float64(np.int64(h >> _S11)) + 0.5) * (1.0 / 9007199254740992.0)


@kernel
def _ziggurat_slow(key, i, u, iz, sign):
    """The rejection branch of the ziggurat (taken ~1.2% of the time).

    Fresh uniforms come from a second counter-based stream keyed by (key, i),
    so the value stays a pure function of (seed, j, i).
    """
    base = _mix64(key ^ _FALLBACK_SALT) + np.uint64(i) * np.uint64(0x100000000)
    k = np.uint64(0)
    while True:
        if iz == 0:  # tail beyond r: Marsaglia's exponential method
            while True:
                k += _ONE
                x = -math.log(_uniform53(_mix64(base + k * _GOLDEN))) / _ZR
                k += _ONE
                yv = -math.log(_uniform53(_mix64(base + k * _GOLDEN)))
                if yv + yv >= x * x:
                    return sign * (_ZR + x)
        x = u * _ZW[iz]
        k += _ONE
        if _ZF[iz] + _uniform53(_mix64(base + k * _GOLDEN)) * (_ZF[iz - 1] - _ZF[iz]) < math.exp(
            -0.5 * x * x
        ):
            return sign * x
        k += _ONE
        h = _mix64(base + k * _GOLDEN)
        iz = np.int64(h & _LOW7)
        sign = 1.0 - 2.0 * np.float64(np.int64((h >> _S7) & _ONE))
        u = (np.float64(np.int64(h >> np.uint64(40))) + 0.5) * (1.0 / 16777216.0)
        if u < _ZK[iz]:
            return sign * u * _ZW[iz]


@kernel
def _normal32(h32, key, i):
    """N(0, 1) from 32 hash bits: bits 0-6 layer, bit 7 sign, bits 8-31 uniform."""
    iz = np.int64(h32 & _LOW7)
    sign = 1.0 - 2.0 * np.float64(np.int64((h32 >> _S7) & _ONE))
    u = (np.float64(np.int64(h32 >> _S8)) + 0.5) * (1.0 / 16777216.0)
    if u < _ZK[iz]:
        return sign * u * _ZW[iz]
    return _ziggurat_slow(key, i, u, iz, sign)


@kernel
def _gaussian_column(seed_key, j, scale, col):
    """col[i] = M_ij, i < d: N(0, 1/d) entries of column j (two per 64-bit hash)."""
    d = col.shape[0]
    key = _column_key(seed_key, j)
    for p in range((d + 1) // 2):
        h = _mix64(key + np.uint64(p + 1) * _GOLDEN)
        i = 2 * p
        col[i] = _normal32(h & _LOW32, key, i) * scale
        if i + 1 < d:
            col[i + 1] = _normal32(h >> _S32, key, i + 1) * scale


@kernel
def _rademacher_column(seed_key, j, scale, col):
    """col[i] = +-scale from bit (i mod 64) of hash i // 64 of column j."""
    d = col.shape[0]
    key = _column_key(seed_key, j)
    for q in range((d + 63) // 64):
        h = _mix64(key + np.uint64(q + 1) * _GOLDEN)
        stop = min(64, d - 64 * q)
        for b in range(stop):
            bit = np.float64(np.int64((h >> np.uint64(b)) & _ONE))
            col[64 * q + b] = (1.0 - 2.0 * bit) * scale


@kernel
def _add_column(j, xj, kind, seed_key, scale, M_T, psi, col):
    """psi += x_j M[:, j], the column read (STORED) or generated into col."""
    d = psi.shape[0]
    if kind == STORED:
        mj = M_T[j]
        for i in range(d):
            psi[i] += xj * mj[i]
        return
    if kind == HASHED:
        _gaussian_column(seed_key, j, scale, col)
    else:
        _rademacher_column(seed_key, j, scale, col)
    for i in range(d):
        psi[i] += xj * col[i]


@kernel
def _project_sparse(indices, values, start, stop, kind, seed_key, scale, M_T, psi, col):
    """psi = M x for the non-zeros indices[start:stop], values[start:stop], in order."""
    for i in range(psi.shape[0]):
        psi[i] = 0.0
    for k in range(start, stop):
        _add_column(indices[k], values[k], kind, seed_key, scale, M_T, psi, col)


@kernel
def _project_dense(x, kind, seed_key, scale, M_T, psi, col):
    """psi = M x for a dense row: O(D) scan, O(nnz d) work (NaN != 0 is kept)."""
    for i in range(psi.shape[0]):
        psi[i] = 0.0
    for j in range(x.shape[0]):
        xj = x[j]
        if xj != 0.0:
            _add_column(j, xj, kind, seed_key, scale, M_T, psi, col)


@kernel
def _fill_columns(columns, kind, seed_key, scale, M_T, out):
    """out[k] = column columns[k] of M (materialisation for inspection/recover)."""
    for k in range(columns.shape[0]):
        j = columns[k]
        row = out[k]
        if kind == STORED:
            for i in range(row.shape[0]):
                row[i] = M_T[j, i]
        elif kind == HASHED:
            _gaussian_column(seed_key, j, scale, row)
        else:
            _rademacher_column(seed_key, j, scale, row)


@kernel
def _correlate(r, kind, seed_key, scale, M_T, col, corr, norms):
    """corr[j] = M[:, j]^T r and norms[j] = ||M[:, j]|| for every column j.

    One column at a time from the hash (OMP's M^T r without storing M).
    """
    d = r.shape[0]
    for j in range(corr.shape[0]):
        if kind == STORED:
            for i in range(d):
                col[i] = M_T[j, i]
        elif kind == HASHED:
            _gaussian_column(seed_key, j, scale, col)
        else:
            _rademacher_column(seed_key, j, scale, col)
        acc = 0.0
        nrm = 0.0
        for i in range(d):
            acc += col[i] * r[i]
            nrm += col[i] * col[i]
        corr[j] = acc
        norms[j] = math.sqrt(nrm)


# ------------------------------------------------------------------ learning
# Every learning kernel projects and then calls DFOP's own kernels on psi
# (step, counters and prior refresh): the per-sample ``_dfop_learn_one`` for
# one row, the fused block kernel ``_dfop_learn_many`` for a chunk of rows
# projected into ``psi_block``. So a SparseDFOP step is by construction a DFOP
# step on M x. ``dfop_args`` below is
# (mu, w, P, Px, v, counts, forgotten, p0, period, keep_prior, skip).
@kernel
def _sparse_learn_one_dense(
    x, y, mu, kind, seed_key, scale, M_T, psi, col,
    w, P, Px, v, counts, forgotten, p0, period, keep_prior, skip,
):
    _project_dense(x, kind, seed_key, scale, M_T, psi, col)
    return _dfop_learn_one(psi, y, mu, w, P, Px, v, counts, forgotten, p0, period,
                           keep_prior, skip)


@kernel
def _sparse_learn_one_sparse(
    indices, values, y, mu, kind, seed_key, scale, M_T, psi, col,
    w, P, Px, v, counts, forgotten, p0, period, keep_prior, skip,
):
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col)
    return _dfop_learn_one(psi, y, mu, w, P, Px, v, counts, forgotten, p0, period,
                           keep_prior, skip)


@kernel
def _sparse_learn_many_dense(
    X, Y, mu, mu_stride, kind, seed_key, scale, M_T, psi_block, col,
    w, P, Px, work, v, counts, forgotten, p0, period, keep_prior, skip, out,
):
    """Learn a dense block; returns -1, or the first invalid row (``skip`` False).

    Chunks of ``psi_block.shape[0]`` rows are projected into ``psi_block`` and
    learnt by DFOP's fused block kernel (bit-identical to its per-row kernel).
    """
    n = X.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        for t in range(m):
            _project_dense(X[start + t], kind, seed_key, scale, M_T, psi_block[t], col)
        bad = _dfop_learn_many(
            psi_block[:m], Y[start : start + m], mu[start * mu_stride :], mu_stride, w, P, Px,
            work, v, counts, forgotten, p0, period, keep_prior, skip, out[start : start + m],
        )
        if bad >= 0:
            return start + bad
    return -1


@kernel
def _sparse_learn_many_csr(
    indptr, indices, data, Y, mu, mu_stride, kind, seed_key, scale, M_T, psi_block, col,
    w, P, Px, work, v, counts, forgotten, p0, period, keep_prior, skip, out,
):
    """Learn a CSR block; returns -1, or the first invalid row (``skip`` False).

    As ``_sparse_learn_many_dense``: chunks projected into ``psi_block``, then
    DFOP's fused block kernel.
    """
    n = Y.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        for t in range(m):
            r = start + t
            _project_sparse(indices, data, indptr[r], indptr[r + 1], kind, seed_key, scale, M_T,
                            psi_block[t], col)
        bad = _dfop_learn_many(
            psi_block[:m], Y[start : start + m], mu[start * mu_stride :], mu_stride, w, P, Px,
            work, v, counts, forgotten, p0, period, keep_prior, skip, out[start : start + m],
        )
        if bad >= 0:
            return start + bad
    return -1


@kernel
def _sparse_predict_one_dense(x, kind, seed_key, scale, M_T, psi, col, w):
    _project_dense(x, kind, seed_key, scale, M_T, psi, col)
    return _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_one_sparse(indices, values, kind, seed_key, scale, M_T, psi, col, w):
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col)
    return _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_many_dense(X, kind, seed_key, scale, M_T, psi, col, w, out):
    for t in range(X.shape[0]):
        _project_dense(X[t], kind, seed_key, scale, M_T, psi, col)
        out[t] = _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_many_csr(indptr, indices, data, kind, seed_key, scale, M_T, psi, col, w,
                             out):
    for t in range(out.shape[0]):
        _project_sparse(indices, data, indptr[t], indptr[t + 1], kind, seed_key, scale, M_T,
                        psi, col)
        out[t] = _dfop_predict_one(psi, w)


# ------------------------------------------------------------------ helpers
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
    r"""DFOP on a random projection psi = M x of sparse inputs (SPEC.md section 2).

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
    forgetting : float, default 0.01
        Forgetting factor mu in [0, 1) (lambda = 1 - mu), as in DFOP.
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
    ``rademacher``: 8 (d^2 + 38 d) + 40 bytes (d = 100: 110.4 KB, for any D;
    32 d of it is the chunk buffer of :meth:`learn_many`); ``gaussian``: that
    plus 8 D d bytes (D = 1000, d = 100: 0.91 MB; D = 10^6: 800 MB).

    Per-step cost of the projection: ``gaussian`` reads nnz columns; ``hashed``
    computes d/2 64-bit hashes and d ziggurat draws per non-zero;
    ``rademacher`` d/64 hashes per non-zero.

    The prediction kernels write psi into the work arrays: do not share one
    model between threads.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import SparseDFOP
    >>> model = SparseDFOP(n_features=1_000_000, n_components=50, forgetting=0.002)
    >>> yhat = model.learn_one((np.array([3, 70_000]), np.array([1.0, 2.0])), 0.5)
    >>> model.nbytes()  # 8 (d^2 + 38 d) + 40 bytes, d = 50
    35240
    """

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
            dtype=dtype, on_invalid=on_invalid,
        )
        # DFOP's refresh period depends on the dimension of its input: d, not D.
        self._period = refresh_period(self.n_components, self.forgetting)

    # ------------------------------------------------------------ state
    def _allocate(self) -> SparseDFOPState:  # type: ignore[override]
        d, D, dt = self.n_components, self.n_features, self.dtype
        P = np.zeros((d, d), dtype=dt)
        P[np.diag_indices(d)] = self.p0
        if self._kind == STORED:
            if self._M_cache is None:
                # Generated once per model: reset() copies instead of re-hashing.
                M_T = np.empty((D, d), dtype=dt)
                _fill_columns(np.arange(D, dtype=np.int64), HASHED, self._key, self._scale,
                              np.zeros((0, d), dtype=dt), M_T)
                self._M_cache = M_T
            M_T = self._M_cache.copy()
        else:
            M_T = np.zeros((0, d), dtype=dt)
        return SparseDFOPState(
            w=np.zeros(d, dtype=dt),
            P=P,
            forgotten=np.zeros(1, dtype=np.float64),
            M_T=M_T,
            work_psi=np.zeros(d, dtype=dt),
            work_px=np.zeros(d, dtype=dt),
            work_v=np.zeros(d, dtype=dt),
            work_col=np.zeros(d, dtype=dt),
            counts=np.zeros(4, dtype=np.int64),
            work_next=np.zeros(d, dtype=dt),
            work_psi_block=np.zeros((BLOCK_ROWS, d), dtype=dt),
        )

    def _bind_state(self) -> None:
        s = self._state
        self._w, self._P, self._M_T = s.w, s.P, s.M_T
        self._psi, self._Px, self._v, self._col = s.work_psi, s.work_px, s.work_v, s.work_col
        self._counts, self._forgotten = s.counts, s.forgotten
        self._work, self._psi_block = s.work_next, s.work_psi_block

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
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        val = np.ascontiguousarray(val, dtype=self.dtype)
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
            np.ascontiguousarray(indptr),
            np.ascontiguousarray(indices),
            np.ascontiguousarray(csr.data, dtype=self.dtype),
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
        """The projection's arguments, then the work arrays psi and col."""
        return (self._kind, self._key, self._scale, self._M_T, self._psi, self._col)

    def _dfop_args(self) -> tuple:
        """Arguments of DFOP's per-sample kernel after (x, y, mu)."""
        return (self._w, self._P, self._Px, self._v, self._counts, self._forgotten, self.p0,
                self._period, self.keep_prior, self._skip)

    def decision_function_one(self, x: Any) -> float:
        """Raw score psi^T v for one sample."""
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            return _sparse_predict_one_sparse(idx, val, *self._kernel_args(), self._w)
        return _sparse_predict_one_dense(self._row(x), *self._kernel_args(), self._w)

    def predict_one(self, x: Any) -> float:
        """Predict one sample: dense row, ``(indices, values)`` or a 1 x D sparse row."""
        score = self.decision_function_one(x)
        if self._classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    def learn_one(self, x: Any, y: Any) -> float:
        """Predict x with the current model, then learn (x, y); return the prediction.

        ``x`` is a dense row of length D, the non-zeros ``(indices, values)``
        of a sparse row, or a 1 x D ``scipy.sparse`` matrix.

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); the state is then
            exactly as before the call.
        """
        yv = label_to_sign(y) if self._classify else (y if type(y) is float else as_scalar(y))
        if type(x) is tuple or sp.issparse(x):
            idx, val = self._sparse_one(x)
            shown: Any = (idx, val)
            yhat, status = _sparse_learn_one_sparse(
                idx, val, yv, self.forgetting, *self._kernel_args(), *self._dfop_args(),
            )
        else:
            shown = xr = self._row(x)
            yhat, status = _sparse_learn_one_dense(
                xr, yv, self.forgetting, *self._kernel_args(), *self._dfop_args(),
            )
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(shown, y, "sample"))
        if self._classify:
            return 1.0 if yhat >= 0.0 else -1.0
        return yhat

    # ------------------------------------------------------------ block
    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        if forgetting is None:
            mu, stride = self._mu, 0
        else:
            mu = np.ascontiguousarray(forgetting, dtype=np.float64)
            if mu.shape != (X.shape[0],):
                raise ValueError(
                    f"forgetting must be a scalar or an array of shape ({X.shape[0]},), "
                    f"got shape {mu.shape}"
                )
            if not np.all((mu >= 0.0) & (mu < 1.0)):
                raise ValueError("every per-step forgetting factor must be in [0, 1)")
            stride = 1
        rest = (
            self._kind, self._key, self._scale, self._M_T, self._psi_block, self._col,
            self._w, self._P, self._Px, self._work, self._v, self._counts, self._forgotten,
            self.p0, self._period, self.keep_prior, self._skip, out,
        )
        if isinstance(X, _CSR):
            return _sparse_learn_many_csr(X.indptr, X.indices, X.data, Y, mu, stride, *rest)
        return _sparse_learn_many_dense(X, Y, mu, stride, *rest)

    def learn_many(self, X: Any, y: Any, forgetting: Any = None) -> np.ndarray:
        """Learn a block in one kernel call; return the prequential predictions.

        Parameters
        ----------
        X : array of shape (n, n_features) or scipy.sparse matrix
            Sparse matrices are converted to CSR (indices checked, sorted on a
            copy when unsorted).
        y : array of shape (n,)
        forgetting : float or array of shape (n,), optional
            Per-step forgetting factors (G-DFOP), as in :meth:`DFOP.learn_many`.

        Raises
        ------
        ValueError
            At the first row with NaN/inf (``on_invalid="raise"``): the rows
            before it are learnt, it and the rows after it are not.
        """
        if forgetting is not None and np.ndim(forgetting) == 0:
            n = X.shape[0] if (sp.issparse(X) or np.ndim(X) == 2) else 0
            forgetting = np.full(n, float(forgetting))
        return self._finish(self._learn_many_checked(X, y, forgetting=forgetting))

    def _predict_block(self, X, out):  # type: ignore[override]
        rest = (*self._kernel_args(), self._w, out)
        if isinstance(X, _CSR):
            _sparse_predict_many_csr(X.indptr, X.indices, X.data, *rest)
        else:
            _sparse_predict_many_dense(X, *rest)

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
        _fill_columns(cols, *self._kernel_args()[:4], out)
        return out.T

    def recover(
        self, sparsity: int, method: str = "l1", *, coef: str = "lstsq", tol: float = 1e-10
    ) -> np.ndarray:
        """Estimate the uncompressed weights w in R^D from v (SPEC.md section 2, RECOVER).

        ``method="l1"``: basis pursuit ``min ||w||_1 s.t. M w = v`` as the linear
        program ``min 1^T (w+ + w-) s.t. [M, -M] [w+; w-] = v, w+- >= 0``
        (``scipy.optimize.linprog``, HiGHS), then the ``sparsity`` entries of
        largest magnitude are kept. ``method="omp"``: orthogonal matching
        pursuit, ``sparsity`` greedy steps picking the column with the largest
        normalised correlation |M_j^T r| / ||M_j|| (computed column by column
        from the hash, M never stored) and re-solving least squares on the
        chosen columns; it stops early when ||r|| <= tol ||v||.

        Both find the support S; ``coef`` says which values go on it:

        * ``"lstsq"`` (default): w_S = argmin ||M_S w_S - v|| (the SPEC's model
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
            _correlate(r, *self._kernel_args()[:4], col, corr, norms)
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
        ]


# Kernels here call DFOP's: recompile them when dfop.py changes (see _jit).
recompile_with(globals(), _dfop_module)
