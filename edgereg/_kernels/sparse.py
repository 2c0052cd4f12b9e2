"""Sparse-DFOP's kernels: the random projection psi = M x and its DFOP step.

docs/algorithms/sparse_dfop.md. A step projects psi = sum_{j: x_j != 0} x_j M[:, j] (one
column of M per non-zero, generated from a counter-based hash, or read from
the stored M_T) and hands psi to DFOP's kernels (``_kernels/dfop.py``). The
hashed generator (splitmix64 keys, lowbias32 words, a 1024-layer ziggurat) and
why its 8-lane parts are LLVM intrinsics: docs/design/sparse_dfop.md.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import bank as _bank_kernels
from . import dfop as _dfop_kernels
from . import hashing as _hashing_kernels
from .bank import _bank_learn_many, _bank_learn_one, _bank_predict_one
from .dfop import (
    _dfop_learn_many,
    _dfop_learn_many_interval,
    _dfop_learn_one,
    _dfop_predict_one,
)
from .hashing import (
    _GOLDEN,
    _ONE,
    _ZTAB,
    _column_key,
    _column_keys,
    _gauss8_add,
    _gaussian_column,
    _hash_words,
    _mix64,
    _normal_from_hash,
    _rademacher_column,
    _ziggurat_slow,
    trailing_zeros,  # numba's, or its plain-Python twin with NUMBA_DISABLE_JIT=1
)

# then runs DFOP's fused block kernel on them (one pass over P per step).
BLOCK_ROWS = 32
# Kernel codes: where a column of M comes from.
STORED = 0  # row j of the state's M_T
HASHED = 1  # ziggurat normals from the hash
RADEMACHER = 2  # +-1 from the hash bits

_NO_INDICES = np.zeros(0, dtype=np.int64)  # the indices argument of a dense row


@kernel
def _project(dense, x, indices, start, stop, kind, seed_key, scale, M_T, psi, col, hbuf):
    """psi = M x, one column of M per non-zero, in increasing column order.

    Sparse (``dense`` False): the non-zeros indices[start:stop], x[start:stop].
    Dense: the scan of x[start:stop] (the whole row), zeros skipped and NaN
    kept. Each psi[i] receives ``xj * M_ij`` column after column, so every
    kind and input form gives the sum ``psi[i] += xj * col[i]`` bit for bit.

    Everything per column is inline (intrinsics, loops, and calls with scalar
    arguments only): a call passing arrays costs an NRT incref/decref pair
    (two atomic operations) per array, more than a hashed column itself.

    HASHED: the column's hash words, then ``_gauss8_add`` on 8 lanes at a
    time adds the accepted entries; the rejected ones (0.43%) are fixed up
    afterwards, their masks collected over up to 8 blocks in one 64-bit word
    so that the vector loop has no data-dependent branch. When 8 does not
    divide d (>= 8), the last block is the one ending at d, its lanes already
    added skipped.
    """
    d = psi.shape[0]
    half = hbuf.shape[0] // 2
    full = d // 8
    for i in range(d):
        psi[i] = 0.0
    for k in range(start, stop):
        xj = x[k]
        if dense:
            if xj == 0.0:
                continue
            j = k
        else:
            j = indices[k]
        if kind == STORED:
            for i in range(d):
                psi[i] += xj * M_T[j, i]
            continue
        if kind == RADEMACHER:
            key = _column_key(seed_key, j)
            for q in range((d + 63) // 64):
                h = _mix64(key + np.uint64(q + 1) * _GOLDEN)
                for b in range(min(64, d - 64 * q)):
                    bit = np.float64(np.int64((h >> np.uint64(b)) & _ONE))
                    col[64 * q + b] = (1.0 - 2.0 * bit) * scale
            for i in range(d):
                psi[i] += xj * col[i]
            continue
        key, key2 = _column_keys(seed_key, j)
        _hash_words(key, key2, hbuf)
        if d < 8:
            for i in range(d):
                col[i] = _normal_from_hash(hbuf[i], hbuf[half + i], key, i) * scale
                psi[i] += xj * col[i]
            continue
        pending = 0
        first = 0
        for b in range(full):
            pending |= _gauss8_add(8 * b, 0, hbuf, _ZTAB, scale, xj, psi) << (8 * (b & 7))
            if (b & 7) == 7:
                first = 8 * b - 56
                while pending:
                    i = first + trailing_zeros(pending)
                    pending &= pending - 1
                    col[i] = _ziggurat_slow(key, i, hbuf[i], hbuf[half + i]) * scale
                    psi[i] += xj * col[i]
        first = 8 * (full & ~7)
        if d > 8 * full:
            skip = 8 * full - (d - 8)
            tail = _gauss8_add(d - 8, skip, hbuf, _ZTAB, scale, xj, psi)
            pending |= (tail >> skip) << (8 * full - first)
        while pending:
            i = first + trailing_zeros(pending)
            pending &= pending - 1
            col[i] = _ziggurat_slow(key, i, hbuf[i], hbuf[half + i]) * scale
            psi[i] += xj * col[i]


@kernel
def _project_sparse(indices, values, start, stop, kind, seed_key, scale, M_T, psi, col, hbuf):
    """psi = M x for the non-zeros indices[start:stop], values[start:stop], in order."""
    _project(False, values, indices, start, stop, kind, seed_key, scale, M_T, psi, col, hbuf)


@kernel
def _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf):
    """psi = M x for a dense row: O(D) scan, O(nnz d) work (NaN != 0 is kept)."""
    _project(True, x, _NO_INDICES, 0, x.shape[0], kind, seed_key, scale, M_T, psi, col, hbuf)


@kernel
def _column_into(j, kind, seed_key, scale, M_T, col, hbuf):
    """col = M[:, j]."""
    if kind == STORED:
        for i in range(col.shape[0]):
            col[i] = M_T[j, i]
    elif kind == HASHED:
        _gaussian_column(seed_key, j, scale, col, hbuf)
    else:
        _rademacher_column(seed_key, j, scale, col)


@kernel
def _fill_columns(columns, kind, seed_key, scale, M_T, out, hbuf):
    """out[k] = column columns[k] of M (materialisation for inspection/recover)."""
    for k in range(columns.shape[0]):
        _column_into(columns[k], kind, seed_key, scale, M_T, out[k], hbuf)


@kernel
def _correlate(r, kind, seed_key, scale, M_T, col, hbuf, corr, norms):
    """corr[j] = M[:, j]^T r and norms[j] = ||M[:, j]|| for every column j.

    One column at a time from the hash (OMP's M^T r without storing M).
    """
    d = r.shape[0]
    for j in range(corr.shape[0]):
        _column_into(j, kind, seed_key, scale, M_T, col, hbuf)
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
# step on M x. The arguments: the input (x, y; or X, Y, MU, out), then
# ``projection`` = (kind, seed_key, scale, M_T, psi or psi_block, col, hbuf),
# the projection's description and scratch as one tuple, then DFOP's blocks
# PW, L, work, hyper, codes (``_kernels/dfop.py``'s header). A CSR block is the
# tuple (indptr, indices, data).
@kernel
def _sparse_learn_one_dense(x, y, projection, PW, L, work, hyper, codes):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf)
    return _dfop_learn_one(psi, y, PW, L, work, hyper, codes)


@kernel
def _sparse_learn_one_sparse(indices, values, y, projection, PW, L, work, hyper, codes):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col,
                    hbuf)
    return _dfop_learn_one(psi, y, PW, L, work, hyper, codes)


@inline_kernel
def _project_rows_dense(X, start, m, projection):
    """psi of rows start..start+m-1 of a dense block into psi_block[:m]."""
    kind, seed_key, scale, M_T, psi_block, col, hbuf = projection
    for t in range(m):
        _project_dense(X[start + t], kind, seed_key, scale, M_T, psi_block[t], col, hbuf)


@inline_kernel
def _project_rows_csr(csr, start, m, projection):
    """psi of rows start..start+m-1 of a CSR block (indptr, indices, data) into psi_block[:m]."""
    indptr, indices, data = csr
    kind, seed_key, scale, M_T, psi_block, col, hbuf = projection
    for t in range(m):
        r = start + t
        _project_sparse(indices, data, indptr[r], indptr[r + 1], kind, seed_key, scale, M_T,
                        psi_block[t], col, hbuf)


@inline_kernel
def _learn_chunk(psi_block, m, start, Y, MU, out, PW, L, work, hyper, codes):
    """DFOP's fused block kernel on the m rows projected into psi_block (block rows start..)."""
    mu = MU[start : start + m] if MU.shape[0] > 1 else MU
    bad = _dfop_learn_many(psi_block[:m], Y[start : start + m], mu, out[start : start + m],
                           PW, L, work, hyper, codes)
    return bad if bad < 0 else start + bad


@kernel
def _sparse_learn_many_dense(X, Y, MU, out, projection, PW, L, work, hyper, codes):
    """Learn a dense block; returns -1, or the first invalid row (skip off).

    Chunks of ``psi_block.shape[0]`` rows are projected into ``psi_block`` and
    learnt by DFOP's fused block kernel (bit-identical to its per-row kernel).
    """
    psi_block = projection[4]
    n = X.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        _project_rows_dense(X, start, m, projection)
        bad = _learn_chunk(psi_block, m, start, Y, MU, out, PW, L, work, hyper, codes)
        if bad >= 0:
            return bad
    return -1


@kernel
def _sparse_learn_many_csr(csr, Y, MU, out, projection, PW, L, work, hyper, codes):
    """Learn a CSR block (indptr, indices, data); as ``_sparse_learn_many_dense``."""
    psi_block = projection[4]
    n = Y.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        _project_rows_csr(csr, start, m, projection)
        bad = _learn_chunk(psi_block, m, start, Y, MU, out, PW, L, work, hyper, codes)
        if bad >= 0:
            return bad
    return -1


# The prediction intervals' variants (``_kernels/interval.py``): the same
# chunks learnt by DFOP's block kernel with the intervals in its row loop
# (bands[t] = the interval before learning row t; IB's bookkeeping learnt).
@inline_kernel
def _learn_chunk_interval(psi_block, m, start, Y, MU, out, bands, PW, L, work, hyper, codes,
                          IB):
    mu = MU[start : start + m] if MU.shape[0] > 1 else MU
    bad = _dfop_learn_many_interval(psi_block[:m], Y[start : start + m], mu,
                                    out[start : start + m], bands[start : start + m],
                                    PW, L, work, hyper, codes, IB)
    return bad if bad < 0 else start + bad


@kernel
def _sparse_learn_many_interval_dense(X, Y, MU, out, bands, projection, PW, L, work, hyper,
                                      codes, IB):
    """``_sparse_learn_many_dense`` with the intervals: bands[t] (lower, prediction,
    upper) before learning row t, IB the interval's block (``interval_core.ib_views``)."""
    psi_block = projection[4]
    n = X.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        _project_rows_dense(X, start, m, projection)
        bad = _learn_chunk_interval(psi_block, m, start, Y, MU, out, bands, PW, L, work, hyper,
                                    codes, IB)
        if bad >= 0:
            return bad
    return -1


@kernel
def _sparse_learn_many_interval_csr(csr, Y, MU, out, bands, projection, PW, L, work, hyper,
                                    codes, IB):
    """``_sparse_learn_many_csr`` with the intervals (``_sparse_learn_many_interval_dense``)."""
    psi_block = projection[4]
    n = Y.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        _project_rows_csr(csr, start, m, projection)
        bad = _learn_chunk_interval(psi_block, m, start, Y, MU, out, bands, PW, L, work, hyper,
                                    codes, IB)
        if bad >= 0:
            return bad
    return -1


@kernel
def _sparse_project_one_dense(x, projection):
    """psi = M x into the projection's psi (the intervals' learn_one projects, then
    runs DFOP's learn_one with intervals on psi)."""
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf)


@kernel
def _sparse_project_one_sparse(indices, values, projection):
    """psi = M x of the non-zeros (indices, values) into the projection's psi."""
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col,
                    hbuf)


@kernel
def _sparse_project_many_dense(X, projection, Psi):
    """Psi[t] = M X[t] for every row of a dense block."""
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    for t in range(X.shape[0]):
        _project_dense(X[t], kind, seed_key, scale, M_T, Psi[t], col, hbuf)


@kernel
def _sparse_project_many_csr(csr, projection, Psi):
    """Psi[t] = M x_t for every row of a CSR block (indptr, indices, data)."""
    indptr, indices, data = csr
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    for t in range(Psi.shape[0]):
        _project_sparse(indices, data, indptr[t], indptr[t + 1], kind, seed_key, scale, M_T,
                        Psi[t], col, hbuf)


@kernel
def _sparse_predict_one_dense(x, projection, w):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf)
    return _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_one_sparse(indices, values, projection, w):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col,
                    hbuf)
    return _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_many_dense(X, projection, w, out):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    for t in range(X.shape[0]):
        _project_dense(X[t], kind, seed_key, scale, M_T, psi, col, hbuf)
        out[t] = _dfop_predict_one(psi, w)


@kernel
def _sparse_predict_many_csr(csr, projection, w, out):
    indptr, indices, data = csr
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    for t in range(out.shape[0]):
        _project_sparse(indices, data, indptr[t], indptr[t + 1], kind, seed_key, scale, M_T,
                        psi, col, hbuf)
        out[t] = _dfop_predict_one(psi, w)


# ------------------------------------------ forgetting="auto": a DFOPBank on psi
# The same projections, then the bank's kernels (``_kernels/bank.py``) on psi
# with its blocks PW (K, d + 1, d) and A; a row the bank refuses (psi not
# finite: a NaN or inf in x) reaches no member.
@kernel
def _sparse_bank_learn_one_dense(x, y, projection, PW, A):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf)
    return _bank_learn_one(psi, y, PW, A)


@kernel
def _sparse_bank_learn_one_sparse(indices, values, y, projection, PW, A):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col,
                    hbuf)
    return _bank_learn_one(psi, y, PW, A)


@kernel
def _sparse_bank_learn_many_dense(X, Y, out, projection, PW, A):
    """As ``_sparse_learn_many_dense``, each chunk learnt by ``bank._bank_learn_many``."""
    psi_block = projection[4]
    n = X.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        _project_rows_dense(X, start, m, projection)
        bad = _bank_learn_many(psi_block[:m], Y[start : start + m], out[start : start + m],
                               PW, A)
        if bad >= 0:
            return start + bad
    return -1


@kernel
def _sparse_bank_learn_many_csr(csr, Y, out, projection, PW, A):
    """As ``_sparse_learn_many_csr``, each chunk learnt by ``bank._bank_learn_many``."""
    psi_block = projection[4]
    n = Y.shape[0]
    chunk = psi_block.shape[0]
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        _project_rows_csr(csr, start, m, projection)
        bad = _bank_learn_many(psi_block[:m], Y[start : start + m], out[start : start + m],
                               PW, A)
        if bad >= 0:
            return start + bad
    return -1


@kernel
def _sparse_bank_predict_one_dense(x, projection, PW, A):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_dense(x, kind, seed_key, scale, M_T, psi, col, hbuf)
    return _bank_predict_one(psi, PW, A)


@kernel
def _sparse_bank_predict_one_sparse(indices, values, projection, PW, A):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    _project_sparse(indices, values, 0, indices.shape[0], kind, seed_key, scale, M_T, psi, col,
                    hbuf)
    return _bank_predict_one(psi, PW, A)


@kernel
def _sparse_bank_predict_many_dense(X, projection, PW, A, out):
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    for t in range(X.shape[0]):
        _project_dense(X[t], kind, seed_key, scale, M_T, psi, col, hbuf)
        out[t] = _bank_predict_one(psi, PW, A)


@kernel
def _sparse_bank_predict_many_csr(csr, projection, PW, A, out):
    indptr, indices, data = csr
    kind, seed_key, scale, M_T, psi, col, hbuf = projection
    for t in range(out.shape[0]):
        _project_sparse(indices, data, indptr[t], indptr[t + 1], kind, seed_key, scale, M_T,
                        psi, col, hbuf)
        out[t] = _bank_predict_one(psi, PW, A)


# Kernels here call DFOP's, the bank's and the generator's: recompile them when
# those change (see _jit).
recompile_with(globals(), _dfop_kernels, _bank_kernels, _hashing_kernels)
