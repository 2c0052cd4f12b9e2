"""Small allocation-free linear algebra for the kernels, written once.

Every routine works in place on caller-owned arrays and allocates nothing, so
it can sit on a kernel's per-step path. They are meant for the small dense
matrices of an online learner (n up to a few dozen), written as plain loops
over C-contiguous rows; there is no blocking or pivoting beyond what the
algorithms need.

Routines
--------
``set_identity(A)``
    A <- I.
``scratch_stride(d)``
    Where the next scratch vector of a 64-byte aligned block starts.
``symv(P, x, out)``, ``symv_rows``, ``symv_registers``, ``symv_by_size``
    out <- P x for a symmetric P, accumulated in float64 (row axpys, or each
    entry in a register for short rows: the same bits).
``multiply_transposed(A, B, out)``
    out <- A B^T.
``cholesky(A, L, floor)``, ``shifted_cholesky(A, shift, L, floor, stop)``
    Lower Cholesky factor A (- shift I) = L L^T; the one body of both.
``upper_cholesky_in_place(U)``, ``invert_upper_in_place(V, acc)``
    A = U^T U in place (right-looking, row axpys), and U^-1 in place.
``spd_inverse(A, out, L, Linv, floor)``
    Inverse of a symmetric positive definite matrix through its Cholesky factor.

MORES's symmetric eigen-decomposition and tridiagonal solves (Jacobi,
Householder, shifted tridiagonal systems) are in ``eigen.py``.

numba's on-disk cache stamps a kernel with its own file only: every kernel
module that calls into this one mixes this file's hash into its stamps
(``_jit.recompile_with``), so an edit here recompiles its callers.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import dtype as _dtype_module
from .dtype import like

__all__ = [
    "set_identity",
    "symv",
    "symv_rows",
    "symv_registers",
    "symv_by_size",
    "multiply_transposed",
    "cholesky",
    "shifted_cholesky",
    "upper_cholesky_in_place",
    "invert_upper_in_place",
    "spd_inverse",
]


@inline_kernel
def scratch_stride(d):
    """Floats from one scratch vector's start to the next: d rounded up to 8.

    In a 64-byte aligned float64 block every vector then starts 64-byte
    aligned. With a stride of d, an accumulator read and written on every
    row of P (DFOP's and SelectiveSampler's fused passes) starts 16 or 48
    bytes into a cache line at d = 10 and 50, and its vector loads and
    stores straddle a line: measured in one process, DFOP's learn_many ran
    at 0.80-0.89x of this layout at d = 10 and 0.87-0.88x at d = 50, and at
    0.6-0.7x whenever the accumulator straddled a 4 KiB page
    (docs/design/scripts/alignment_study.py).
    """
    return (d + 7) // 8 * 8


@kernel
def set_identity(A):
    """A <- I (square A)."""
    n = A.shape[0]
    for i in range(n):
        Ai = A[i]
        for j in range(n):
            Ai[j] = 0.0
        Ai[i] = 1.0


@kernel
def symv(P, x, out):
    """out = P x for symmetric P, as row axpys (vectorises without reassociation).

    In out's dtype: float64 products and sums into a float64 out (also from a
    float32 P), float32 ones into a float32 out (a float32 DFOP's Px).
    Returns min_i P_ii (float64), read while row i is in hand: DFOP's step
    proves its diagonal guard from it (``guards._proven``) instead of a
    strided pass over the diagonal.
    """
    return symv_rows(P, x, out)


@inline_kernel
def symv_rows(P, x, out):
    """``symv``'s body, inlined where a call would cost more than the pass (the
    bank's step at small d: a call passes P, x and out field by field)."""
    d = x.shape[0]
    for j in range(d):
        out[j] = 0.0
    pmin = np.inf
    for i in range(d):
        xi = like(x[i], out)  # np.float64(): numba keeps float() of a float32 in float32
        Pi = P[i]
        for j in range(d):
            out[j] += xi * Pi[j]
        pii = np.float64(Pi[i])
        pmin = pii if pii < pmin else pmin
    return pmin


#: Up to this d, P x is summed in registers (``symv_registers``, measured faster
#: at d = 10 and 16), above it by row axpys (``symv``, faster from d = 24).
REGISTER_SYMV_UP_TO = 16


@kernel
def symv_registers(P, x, out):
    """out = P x as ``symv``, but each out[j] summed in a register, 8 columns at a time.

    ``symv`` adds row after row into out in memory (a load, add and store
    chain per row); here the same products are added in the same order
    (rows ascending, from 0.0) in 8 independent register chains per pass
    over the rows: the same bits. Faster for short rows only (measured:
    d = 10 and 16; slower from d = 24, see ``symv_by_size``).
    """
    d = x.shape[0]
    j0 = 0
    while j0 + 8 <= d:
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        a4 = 0.0
        a5 = 0.0
        a6 = 0.0
        a7 = 0.0
        for i in range(d):
            xi = np.float64(x[i])
            Pi = P[i]
            a0 += xi * Pi[j0]
            a1 += xi * Pi[j0 + 1]
            a2 += xi * Pi[j0 + 2]
            a3 += xi * Pi[j0 + 3]
            a4 += xi * Pi[j0 + 4]
            a5 += xi * Pi[j0 + 5]
            a6 += xi * Pi[j0 + 6]
            a7 += xi * Pi[j0 + 7]
        out[j0] = a0
        out[j0 + 1] = a1
        out[j0 + 2] = a2
        out[j0 + 3] = a3
        out[j0 + 4] = a4
        out[j0 + 5] = a5
        out[j0 + 6] = a6
        out[j0 + 7] = a7
        j0 += 8
    while j0 + 2 <= d:
        a0 = 0.0
        a1 = 0.0
        for i in range(d):
            xi = np.float64(x[i])
            Pi = P[i]
            a0 += xi * Pi[j0]
            a1 += xi * Pi[j0 + 1]
        out[j0] = a0
        out[j0 + 1] = a1
        j0 += 2
    while j0 < d:
        a0 = 0.0
        for i in range(d):
            a0 += np.float64(x[i]) * P[i, j0]
        out[j0] = a0
        j0 += 1


@kernel
def symv_by_size(P, x, out):
    """out = P x: ``symv_registers`` up to d = ``REGISTER_SYMV_UP_TO``, else ``symv``."""
    if x.shape[0] <= REGISTER_SYMV_UP_TO:
        symv_registers(P, x, out)
    else:
        symv(P, x, out)


@inline_kernel
def multiply_transposed(A, B, out):
    """out = A B^T (rows of A against rows of B), each entry summed in order."""
    for i in range(A.shape[0]):
        Ai = A[i]
        outi = out[i]
        for j in range(B.shape[0]):
            Bj = B[j]
            acc = 0.0
            for k in range(A.shape[1]):
                acc += Ai[k] * Bj[k]
            outi[j] = acc


@kernel
def shifted_cholesky(A, shift, L, floor, stop):
    """Lower Cholesky factor L L^T = A - shift I of a symmetric A (lower triangle read).

    A pivot not above ``floor`` (rounding made the matrix indefinite, or it
    is not positive definite) either stops the factorisation at once, when
    ``stop``, returning -1, or is replaced by ``floor`` so that L stays
    finite; returns the number of such replacements (0 for a well-posed A).
    L's strict upper triangle is set to zero.
    """
    n = A.shape[0]
    clamped = 0
    for j in range(n):
        Lj = L[j]
        d = A[j, j] - shift
        for k in range(j):
            d -= Lj[k] * Lj[k]
        if not d > floor:
            if stop:
                return -1
            d = floor
            clamped += 1
        ljj = math.sqrt(d)
        Lj[j] = ljj
        for k in range(j + 1, n):
            Lj[k] = 0.0
        inv = 1.0 / ljj
        for i in range(j + 1, n):
            Li = L[i]
            acc = A[i, j]
            for k in range(j):
                acc -= Li[k] * Lj[k]
            Li[j] = acc * inv
    return clamped


@kernel
def cholesky(A, L, floor):
    """Lower Cholesky factor: A = L L^T for a symmetric positive definite A.

    Only the lower triangle of A is read; L's strict upper triangle is set to
    zero. A pivot below ``floor`` (possible only when rounding made A
    indefinite) is replaced by ``floor`` so the factor stays finite; the
    number of such replacements is returned (0 for a well-posed A).
    """
    return shifted_cholesky(A, 0.0, L, floor, False)


@kernel
def upper_cholesky_in_place(U):
    """U <- the upper factor of A = U^T U, A given in U's upper triangle (>= I).

    Right-looking, by rank-one updates of the trailing rows: every inner loop
    is an axpy on a row segment (vectorised). For a matrix >= I every pivot
    is >= 1, so there is no floor. Accumulates in float64 whatever the dtype.
    """
    d = U.shape[0]
    for k in range(d):
        Uk = U[k]
        ukk = math.sqrt(np.float64(Uk[k]))
        Uk[k] = ukk
        inv = 1.0 / ukk
        for j in range(d - k - 1):
            Uk[k + 1 + j] *= inv
        for ii in range(d - k - 1):
            i = k + 1 + ii  # offsets from range(0, .): numba then vectorises
            uki = np.float64(Uk[i])
            Ui = U[i]
            for j in range(d - i):
                Ui[i + j] -= uki * Uk[i + j]


@kernel
def invert_upper_in_place(V, acc):
    """V <- V^-1 for an upper triangular V, in place (``acc``: d float64 of scratch).

    V_ij = -(1/U_ii) sum_{i<k<=j} U_ik V_kj, rows from the last (those below
    are already inverted); each inner loop an axpy on a row segment.
    """
    d = V.shape[0]
    for r in range(d):
        i = d - 1 - r
        Vi = V[i]
        for j in range(d):
            acc[j] = 0.0
        for kk in range(d - i - 1):
            k = i + 1 + kk
            uik = np.float64(Vi[k])
            Vk = V[k]
            for j in range(d - k):
                acc[k + j] += uik * Vk[k + j]
        vii = 1.0 / np.float64(Vi[i])
        Vi[i] = vii
        for j in range(d - i - 1):
            Vi[i + 1 + j] = -vii * acc[i + 1 + j]


@kernel
def spd_inverse(A, out, L, Linv, floor):
    """out <- A^-1 for a symmetric positive definite A, via A = L L^T.

    A^-1 = L^-T L^-1: L^-1 is formed by forward substitution (lower
    triangular), then out_ij = sum_k Linv_ki Linv_kj for i <= j and mirrored,
    so the inverse is exactly symmetric. ``L`` and ``Linv`` are scratch of
    A's shape (``L`` holds the factor on return). Returns the number of
    clamped pivots of :func:`cholesky`. ``out`` may not alias ``A``.
    Cost: about n^3 multiply-adds.
    """
    n = A.shape[0]
    clamped = cholesky(A, L, floor)
    for i in range(n):
        Li = L[i]
        Xi = Linv[i]
        for j in range(n):
            Xi[j] = 0.0
        Xi[i] = 1.0 / Li[i]
        # row i of L^-1: X_ij = -(sum_{k=j..i-1} L_ik X_kj) / L_ii for j < i
        for k in range(i):
            lik = Li[k]
            Xk = Linv[k]
            for j in range(k + 1):
                Xi[j] -= lik * Xk[j]
        inv = Xi[i]
        for j in range(i):
            Xi[j] *= inv
    for i in range(n):
        Oi = out[i]
        for j in range(i, n):
            Oi[j] = 0.0
        for k in range(i, n):
            Xk = Linv[k]
            xki = Xk[i]
            for j in range(i, k + 1):
                Oi[j] += xki * Xk[j]
        for j in range(i + 1, n):
            out[j, i] = Oi[j]
    return clamped


# symv converts through dtype.like: recompile when dtype.py changes (see _jit).
recompile_with(globals(), _dtype_module)
