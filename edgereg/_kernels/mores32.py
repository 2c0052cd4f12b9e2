"""MORES' float32-only arithmetic (``arithmetic="float32"``).

The step of ``mores.py`` over the same blocks and in the same order, with every
value in float32: the statistics, the W-step's eigenbasis of K^T S K (Cholesky,
cyclic Jacobi), its Householder tridiagonalisation of M and the shifted
tridiagonal solves, the S-step's E (clipped PSD by Jacobi) and the inverses of
S^-1 and Omega^-1. Nothing is formed in float64, so an export for a
single-precision FPU (Cortex-M4F) needs no soft-double helper.

The blocks are ``mores.py``'s (inputs, A, counts, work, hyper, codes), read as follows:

* ``A`` and ``work`` are of the model's dtype (float32), laid out by
  ``mores._mores_views`` and ``mores._mores_scratch``;
* ``hyper`` holds C, decay, gamma, tau and the Jacobi threshold as float64
  values that are float32 values (the class rounds them), read by their bits
  (``dfop32._narrow``: integer operations, no double arithmetic);
* y, the predictions, learn_many's Y and out are float32.

Shared with ``mores.py`` (type-generic, no literal of their own): the block
layout, the statistics' update, the finiteness scan, ``eigen.add_rows``; with
``pa32.py``: the float32 load and prediction. The routines below that are
``eigen.py``'s and ``linalg.py``'s are their float32 twins (same loops, same
order; only the constants are float32, since a float64 literal would widen the
arithmetic). Accuracy against float64: docs/design/float32.md ("MORES").
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from .._jit import inline_kernel, kernel, recompile_with
from . import dfop32 as _dfop32_module
from . import eigen as _eigen_module
from . import mores as _mores_module
from . import pa32 as _pa32_module
from .dfop32 import _narrow
from .eigen import add_rows
from .mores import (
    _MAX_SWEEPS,
    CODE_INTERCEPT,
    CODE_SKIP,
    HYPER_C,
    HYPER_DECAY,
    HYPER_GAMMA,
    HYPER_TAU,
    HYPER_TOL,
    INVALID,
    OK,
    _all_finite,
    _update_statistics,
)
from .pa32 import _load_and_predict32

_ZERO = np.float32(0.0)
_ONE = np.float32(1.0)
_TWO = np.float32(2.0)
_HALF = np.float32(0.5)
#: Above it theta^2 would overflow float32 (sqrt(3.4e38) = 1.8e19); there
#: 1 + theta^2 == theta^2 and t = 1 / (2 theta) to float32's precision.
_THETA_BIG = np.float32(1e18)
#: ``mores._PIVOT_FLOOR`` and ``mores._PSD_MARGIN`` in float32.
_PIVOT_FLOOR32 = np.float32(1e-12)
_PSD_MARGIN32 = np.float32(100.0)


# ------------------------------------------------------------- the blocks' views
@intrinsic
def _view(typingctx, a, shape):
    """The 1-D C-contiguous ``a`` seen as a C-contiguous array of ``shape`` (a tuple
    of ints), sharing its memory: numba's ``reshape`` without its size check, which
    numba compiles as a comparison of an unsigned and a signed integer *in double*
    (two int-to-double conversions and a double compare: soft-double calls on a
    single-precision FPU). Every view below is of a slice of exactly prod(shape)
    entries."""
    if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C"
            and isinstance(shape, types.BaseTuple)
            and all(isinstance(t, types.Integer) for t in shape)):
        return None
    ndim = len(shape)
    ret = types.Array(a.dtype, ndim, "C")

    def codegen(context, builder, signature, args):
        src = make_array(signature.args[0])(context, builder, args[0])
        dims = [context.cast(builder, v, t, types.intp)
                for v, t in zip(cgutils.unpack_tuple(builder, args[1], ndim), shape, strict=True)]
        strides = [src.itemsize] * ndim
        for i in range(ndim - 2, -1, -1):
            strides[i] = builder.mul(strides[i + 1], dims[i + 1])
        out = make_array(ret)(context, builder)
        populate_array(out, data=src.data, shape=dims, strides=strides, itemsize=src.itemsize,
                       meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, ret, out._getvalue())

    return ret(a, shape), codegen


@inline_kernel
def _views32(A, D, m):
    """``mores._mores_views`` through ``_view``: W, Omega, Omega^-1, S, S^-1, M, N, Q
    (the same offsets; ``mores_learnt_size`` checks the total)."""
    Dm = D * m
    mm = m * m
    W = _view(A[:Dm], (D, m))
    o = Dm
    Om = _view(A[o:o + mm], (m, m))
    Om_inv = _view(A[o + mm:o + 2 * mm], (m, m))
    S = _view(A[o + 2 * mm:o + 3 * mm], (m, m))
    S_inv = _view(A[o + 3 * mm:o + 4 * mm], (m, m))
    o += 4 * mm
    M = _view(A[o:o + D * D], (D, D))
    o += D * D
    N = _view(A[o:o + Dm], (D, m))
    Q = _view(A[o + Dm:o + Dm + mm], (m, m))
    return W, Om, Om_inv, S, S_inv, M, N, Q


@inline_kernel
def _scratch32(work, D, m):
    """``mores._mores_scratch`` through ``_view``: x, DD, D4, W3, M7, m2, undo."""
    Dm = D * m
    mm = m * m
    x = work[:D]
    o = D
    DD = _view(work[o:o + D * D], (D, D))
    o += D * D
    D4 = _view(work[o:o + 4 * D], (4, D))
    o += 4 * D
    W3 = _view(work[o:o + 3 * Dm], (3, D, m))
    o += 3 * Dm
    M7 = _view(work[o:o + 7 * mm], (7, m, m))
    o += 7 * mm
    m2 = _view(work[o:o + 2 * m], (2, m))
    o += 2 * m
    undo = work[o:o + D * D + Dm + 5 * mm]
    return x, DD, D4, W3, M7, m2, undo


# ------------------------------------------- eigen.py's and linalg.py's, float32
@kernel
def _set_identity32(A):
    n = A.shape[0]
    for i in range(n):
        Ai = A[i]
        for j in range(n):
            Ai[j] = _ZERO
        Ai[i] = _ONE


@inline_kernel
def _multiply_transposed32(A, B, out):
    """out = A B^T, each entry summed in order (``linalg.multiply_transposed``)."""
    for i in range(A.shape[0]):
        Ai = A[i]
        outi = out[i]
        for j in range(B.shape[0]):
            Bj = B[j]
            acc = _ZERO
            for k in range(A.shape[1]):
                acc += Ai[k] * Bj[k]
            outi[j] = acc


@inline_kernel
def _rotate32(A, Ap, Aq, p, q, c, s, lo, hi):
    for k in range(lo, hi):
        akp = Ap[k]
        akq = Aq[k]
        vp = c * akp - s * akq
        vq = s * akp + c * akq
        Ap[k] = vp
        Aq[k] = vq
        A[k, p] = vp
        A[k, q] = vq


@kernel
def _jacobi_eigh32(A, V, tol, max_sweeps):
    """``eigen.jacobi_eigh`` in float32 (same rotations, same order)."""
    n = A.shape[0]
    frob = _ZERO
    for i in range(n):
        Ai = A[i]
        for j in range(n):
            frob += Ai[j] * Ai[j]
    frob = np.sqrt(frob)
    thr = tol * frob
    if not frob > _ZERO:
        return 0
    sweeps = 0
    for _ in range(max_sweeps):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                if abs(apq) <= thr:
                    continue
                rotated = True
                app = A[p, p]
                aqq = A[q, q]
                theta = (aqq - app) / (_TWO * apq)
                if abs(theta) > _THETA_BIG:
                    t = _HALF / theta
                else:
                    t = _ONE / (abs(theta) + np.sqrt(_ONE + theta * theta))
                    if theta < _ZERO:
                        t = -t
                c = _ONE / np.sqrt(_ONE + t * t)
                s = t * c
                Ap = A[p]
                Aq = A[q]
                _rotate32(A, Ap, Aq, p, q, c, s, 0, p)
                _rotate32(A, Ap, Aq, p, q, c, s, p + 1, q)
                _rotate32(A, Ap, Aq, p, q, c, s, q + 1, n)
                Ap[p] = app - t * apq
                Aq[q] = aqq + t * apq
                Ap[q] = _ZERO
                Aq[p] = _ZERO
                Vp = V[p]
                Vq = V[q]
                for k in range(n):
                    vpk = Vp[k]
                    vqk = Vq[k]
                    Vp[k] = c * vpk - s * vqk
                    Vq[k] = s * vpk + c * vqk
        if not rotated:
            break
        sweeps += 1
    return sweeps


@kernel
def _tridiagonalize32(M, A, diag, off, beta, p):
    """``eigen.tridiagonalize`` in float32 (same reflectors, same order of sums)."""
    n = M.shape[0]
    for i in range(n):
        Mi = M[i]
        Ai = A[i]
        for j in range(i, n):
            Ai[j] = Mi[j]
    for k in range(n - 2):
        Ak = A[k]
        diag[k] = Ak[k]
        x0 = Ak[k + 1]
        ss = _ZERO
        for i in range(k + 2, n):
            ss += Ak[i] * Ak[i]
        if ss == _ZERO:
            beta[k] = _ZERO
            off[k] = x0
            continue
        nrm = np.sqrt(x0 * x0 + ss)
        alpha = -nrm if x0 >= _ZERO else nrm
        off[k] = alpha
        Ak[k + 1] = x0 - alpha
        b = _ONE / (nrm * (nrm + abs(x0)))
        beta[k] = b
        for i in range(k + 1, n):
            p[i] = _ZERO
        l = k + 1
        while l + 1 < n:
            Al = A[l]
            An = A[l + 1]
            vl = b * Ak[l]
            vn = b * Ak[l + 1]
            acc = Al[l] * Ak[l]
            ali = Al[l + 1]
            acc += ali * Ak[l + 1]
            p[l + 1] += vl * ali
            accn = An[l + 1] * Ak[l + 1]
            for i in range(l + 2, n):
                ali = Al[i]
                ani = An[i]
                aki = Ak[i]
                acc += ali * aki
                accn += ani * aki
                p[i] = p[i] + vl * ali + vn * ani
            p[l] += b * acc
            p[l + 1] += b * accn
            l += 2
        if l < n:
            p[l] += b * (A[l, l] * Ak[l])
        pv = _ZERO
        for i in range(k + 1, n):
            pv += p[i] * Ak[i]
        h = _HALF * b * pv
        for i in range(k + 1, n):
            p[i] -= h * Ak[i]
        i = k + 1
        while i + 1 < n:
            vi = Ak[i]
            wi = p[i]
            vn = Ak[i + 1]
            wn = p[i + 1]
            Ai = A[i]
            An = A[i + 1]
            Ai[i] -= vi * wi + wi * vi
            for j in range(i + 1, n):
                pj = p[j]
                akj = Ak[j]
                Ai[j] -= vi * pj + wi * akj
                An[j] -= vn * pj + wn * akj
            i += 2
        if i < n:
            vi = Ak[i]
            wi = p[i]
            A[i, i] -= vi * wi + wi * vi
    if n >= 2:
        diag[n - 2] = A[n - 2, n - 2]
        off[n - 2] = A[n - 2, n - 1]
    diag[n - 1] = A[n - 1, n - 1]


@kernel
def _apply_reflectors32(A, beta, R, t, transpose):
    """``eigen.apply_reflectors`` in float32."""
    n = A.shape[0]
    m = R.shape[1]
    for kk in range(n - 2):
        k = kk if transpose else n - 3 - kk
        b = beta[k]
        if b == _ZERO:
            continue
        Ak = A[k]
        for j in range(m):
            t[j] = _ZERO
        add_rows(t, Ak, R, k + 1, n)
        for j in range(m):
            t[j] *= b
        i = k + 1
        while i + 1 < n:
            vi = Ak[i]
            vn = Ak[i + 1]
            Ri = R[i]
            Rn = R[i + 1]
            for j in range(m):
                tj = t[j]
                Ri[j] -= vi * tj
                Rn[j] -= vn * tj
            i += 2
        if i < n:
            vi = Ak[i]
            Ri = R[i]
            for j in range(m):
                Ri[j] -= vi * t[j]


@kernel
def _shifted_tridiagonal_solve32(diag, off, c, R, piv):
    """``eigen.shifted_tridiagonal_solve`` in float32."""
    n = diag.shape[0]
    m = R.shape[1]
    for j in range(m):
        piv[0, j] = _ONE + c[j] * diag[0]
    for i in range(1, n):
        Ri = R[i]
        Rp = R[i - 1]
        Pi = piv[i]
        Pp = piv[i - 1]
        di = diag[i]
        ei = off[i - 1]
        for j in range(m):
            e = c[j] * ei
            f = e / Pp[j]
            Pi[j] = (_ONE + c[j] * di) - f * e
            Ri[j] -= f * Rp[j]
    Rl = R[n - 1]
    Pl = piv[n - 1]
    for j in range(m):
        Rl[j] /= Pl[j]
    for i in range(n - 2, -1, -1):
        Ri = R[i]
        Rn = R[i + 1]
        Pi = piv[i]
        ei = off[i]
        for j in range(m):
            Ri[j] = (Ri[j] - c[j] * ei * Rn[j]) / Pi[j]


@kernel
def _shifted_cholesky32(A, shift, L, floor, stop):
    """``linalg.shifted_cholesky`` in float32."""
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
        ljj = np.sqrt(d)
        Lj[j] = ljj
        for k in range(j + 1, n):
            Lj[k] = _ZERO
        inv = _ONE / ljj
        for i in range(j + 1, n):
            Li = L[i]
            acc = A[i, j]
            for k in range(j):
                acc -= Li[k] * Lj[k]
            Li[j] = acc * inv
    return clamped


@kernel
def _spd_inverse32(A, out, L, Linv, floor):
    """``linalg.spd_inverse`` in float32 (exactly symmetric result)."""
    n = A.shape[0]
    clamped = _shifted_cholesky32(A, _ZERO, L, floor, False)
    for i in range(n):
        Li = L[i]
        Xi = Linv[i]
        for j in range(n):
            Xi[j] = _ZERO
        Xi[i] = _ONE / Li[i]
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
            Oi[j] = _ZERO
        for k in range(i, n):
            Xk = Linv[k]
            xki = Xk[i]
            for j in range(i, k + 1):
                Oi[j] += xki * Xk[j]
        for j in range(i + 1, n):
            out[j, i] = Oi[j]
    return clamped


# ------------------------------------------------------------- MORES, float32
@kernel
def _certainly_positive_definite32(E, rel_margin, L):
    """``mores._certainly_positive_definite`` in float32."""
    m = E.shape[0]
    frob = _ZERO
    for i in range(m):
        for j in range(m):
            frob += E[i, j] * E[i, j]
    shift = rel_margin * np.sqrt(frob)
    if not shift > _ZERO:
        return False
    return _shifted_cholesky32(E, shift, L, _ZERO, True) == 0


@inline_kernel
def _s_omega_eigenbasis32(Om_inv, S, tol, work_mm, s):
    """``mores._s_omega_eigenbasis`` in float32: G = K V^T, s the eigenvalues."""
    m = S.shape[0]
    K = work_mm[0]
    B = work_mm[1]
    V = work_mm[2]
    G = work_mm[3]
    E = work_mm[4]
    _shifted_cholesky32(Om_inv, _ZERO, K, _PIVOT_FLOOR32, False)
    for i in range(m):
        Ei = E[i]
        Si = S[i]
        for j in range(m):
            acc = _ZERO
            for k in range(m):
                acc += Si[k] * K[k, j]
            Ei[j] = acc
    for i in range(m):
        for j in range(i, m):
            acc = _ZERO
            for k in range(m):
                acc += K[k, i] * E[k, j]
            B[i, j] = acc
            B[j, i] = acc
    _set_identity32(V)
    _jacobi_eigh32(B, V, tol, _MAX_SWEEPS)
    for j in range(m):
        s[j] = B[j, j]
    _multiply_transposed32(K, V, G)


@inline_kernel
def _w_step32(W, Om, Om_inv, S, M, N, C, tol, work_DD, work_D, work_Dm, work_mm, work_m):
    """``mores._w_step`` in float32 (W_{t-1} left in ``work_Dm[0]``)."""
    D = W.shape[0]
    m = W.shape[1]
    A = work_DD
    W0 = work_Dm[0]
    R1 = work_Dm[1]
    R2 = work_Dm[2]
    B = work_mm[1]
    G = work_mm[3]
    E = work_mm[4]
    diag = work_D[0]
    off = work_D[1]
    beta = work_D[2]
    p = work_D[3]
    s = work_m[0]
    t = work_m[1]
    for k in range(D):
        Wk = W[k]
        W0k = W0[k]
        for j in range(m):
            W0k[j] = Wk[j]
    _s_omega_eigenbasis32(Om_inv, S, tol, work_mm, s)
    H1 = B
    H2 = E
    for i in range(m):
        H1i = H1[i]
        H2i = H2[i]
        for j in range(m):
            H1i[j] = _ZERO
            H2i[j] = _ZERO
        Omi = Om[i]
        Si = S[i]
        for k in range(m):
            a = Omi[k]
            b = C * Si[k]
            Gk = G[k]
            for j in range(m):
                H1i[j] += a * Gk[j]
                H2i[j] += b * Gk[j]
    for k in range(D):
        W0k = W0[k]
        Nk = N[k]
        R2k = R2[k]
        for j in range(m):
            R2k[j] = _ZERO
        for i in range(m):
            a = W0k[i]
            b = Nk[i]
            H1i = H1[i]
            H2i = H2[i]
            for j in range(m):
                R2k[j] += a * H1i[j] + b * H2i[j]
    _tridiagonalize32(M, A, diag, off, beta, p)
    _apply_reflectors32(A, beta, R2, t, True)
    for j in range(m):
        t[j] = C * s[j]
    _shifted_tridiagonal_solve32(diag, off, t, R2, R1)
    _apply_reflectors32(A, beta, R2, t, False)
    _multiply_transposed32(R2, G, W)


@inline_kernel
def _s_step32(W, S, S_inv, M, N, Q, C, gamma, tau, tol, work_Dm, work_mm):
    """``mores._s_step`` in float32 (E clipped PSD, S^-1 blended, S inverted)."""
    D = W.shape[0]
    m = W.shape[1]
    R1 = work_Dm[1]
    B = work_mm[1]
    V = work_mm[2]
    E = work_mm[4]
    L = work_mm[5]
    Linv = work_mm[6]
    for k in range(D):
        Mk = M[k]
        R1k = R1[k]
        Nk = N[k]
        for j in range(m):
            R1k[j] = -Nk[j]
        add_rows(R1k, Mk, W, 0, D)
    for i in range(m):
        for j in range(i, m):
            acc = Q[i, j]
            for k in range(D):
                acc += W[k, i] * R1[k, j] - N[k, i] * W[k, j]
            E[i, j] = acc
            E[j, i] = acc
    negative = False
    margin = _PSD_MARGIN32 * np.float32(np.int32(m * m)) * tol
    if not _certainly_positive_definite32(E, margin, L):
        for i in range(m):
            for j in range(m):
                B[i, j] = E[i, j]
        _set_identity32(V)
        _jacobi_eigh32(B, V, tol, _MAX_SWEEPS)
        for j in range(m):
            if B[j, j] < _ZERO:
                negative = True
    if negative:
        for i in range(m):
            for j in range(i, m):
                acc = _ZERO
                for k in range(m):
                    lk = B[k, k]
                    if lk > _ZERO:
                        acc += lk * V[k, i] * V[k, j]
                E[i, j] = acc
                E[j, i] = acc
    g = _ONE / (gamma + tau)
    hc = _HALF * C
    for i in range(m):
        for j in range(m):
            v = gamma * S_inv[i, j] + hc * E[i, j]
            if i == j:
                v += tau
            S_inv[i, j] = v * g
    _spd_inverse32(S_inv, S, L, Linv, _PIVOT_FLOOR32)


@inline_kernel
def _omega_step32(W, Om, Om_inv, gamma, tau, work_Dm, work_mm):
    """``mores._omega_step`` in float32."""
    D = W.shape[0]
    m = W.shape[1]
    W0 = work_Dm[0]
    R1 = work_Dm[1]
    E = work_mm[4]
    L = work_mm[5]
    Linv = work_mm[6]
    for k in range(D):
        Wk = W[k]
        W0k = W0[k]
        R1k = R1[k]
        for j in range(m):
            R1k[j] = Wk[j] - W0k[j]
    for i in range(m):
        for j in range(i, m):
            acc = _ZERO
            for k in range(D):
                acc += R1[k, i] * R1[k, j]
            E[i, j] = acc
            E[j, i] = acc
    g = _ONE / (gamma + tau)
    for i in range(m):
        for j in range(m):
            v = gamma * Om_inv[i, j] + _HALF * E[i, j]
            if i == j:
                v += tau
            Om_inv[i, j] = v * g
    _spd_inverse32(Om_inv, Om, L, Linv, _PIVOT_FLOOR32)


@kernel
def _mores_step32(
    xin, y, intercept, A, W, Om, Om_inv, S, S_inv, M, N, Q,
    C, mu, gamma, tau, tol, work_x, work_DD, work_D, work_Dm, work_mm, work_m, undo, yhat,
):
    """``mores._mores_step`` in float32: refused (INVALID, nothing but scratch and
    ``yhat`` written) when x^T x, y^T y or a prediction is not finite in float32,
    or when the update makes any learnt value non-finite (then undone)."""
    ok, _ = _load_and_predict32(xin, y, intercept, W, work_x, yhat)
    if not ok:
        return INVALID
    Dm = W.shape[0] * W.shape[1]
    for i in range(undo.shape[0]):
        undo[i] = A[Dm + i]
    _update_statistics(M, N, Q, work_x, y, mu)
    _w_step32(W, Om, Om_inv, S, M, N, C, tol, work_DD, work_D, work_Dm, work_mm, work_m)
    _s_step32(W, S, S_inv, M, N, Q, C, gamma, tau, tol, work_Dm, work_mm)
    _omega_step32(W, Om, Om_inv, gamma, tau, work_Dm, work_mm)
    if _all_finite(A):
        return OK
    W0 = work_Dm[0]
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            W[k, j] = W0[k, j]
    for i in range(undo.shape[0]):
        A[Dm + i] = undo[i]
    return INVALID


@kernel
def mores32_learn_many(X, Y, out, A, counts, work, hyper, codes):
    """Learn a block in float32 (float32 X, Y, out); ``out[t]`` = prequential
    prediction of row t. Returns -1, or the first invalid row when not skipping
    (rows before it learnt, it and the rows after it untouched)."""
    intercept = codes[CODE_INTERCEPT] != 0
    skip = codes[CODE_SKIP] != 0
    D = X.shape[1] + int(intercept)
    m = Y.shape[1]
    # The views do not check their slices: blocks shorter than mores.py's layout
    # (``mores_learnt_size``, ``mores_scratch_size``) are refused, nothing read.
    if A.shape[0] < 2 * D * m + 5 * m * m + D * D or \
            work.shape[0] < 5 * D + 2 * D * D + 4 * D * m + 12 * m * m + 2 * m:
        return 0
    W, Om, Om_inv, S, S_inv, M, N, Q = _views32(A, D, m)
    wx, wDD, wD, wDm, wmm, wm, undo = _scratch32(work, D, m)
    C = _narrow(hyper, HYPER_C)
    mu = _narrow(hyper, HYPER_DECAY)
    gamma = _narrow(hyper, HYPER_GAMMA)
    tau = _narrow(hyper, HYPER_TAU)
    tol = _narrow(hyper, HYPER_TOL)
    for t in range(X.shape[0]):
        status = _mores_step32(
            X[t], Y[t], intercept, A, W, Om, Om_inv, S, S_inv, M, N, Q,
            C, mu, gamma, tau, tol, wx, wDD, wD, wDm, wmm, wm, undo, out[t],
        )
        if status == OK:
            counts[0] += 1
        elif skip:
            counts[1] += 1
        else:
            return t
    return -1


@kernel
def mores32_learn_one(x, y, out, A, counts, work, hyper, codes):
    """One float32 step on (x, y) (float32 x, y, out): ``mores32_learn_many`` on
    the one row (views, no copy). Returns OK, or INVALID when refused and not skipped."""
    first_bad = mores32_learn_many(_view(x, (1, x.shape[0])), _view(y, (1, y.shape[0])),
                                   _view(out, (1, out.shape[0])), A, counts, work, hyper, codes)
    return OK if first_bad < 0 else INVALID


@kernel
def mores32_learn_one_wide(x, y, out, A, counts, work, hyper, codes, y32, out32):
    """``mores32_learn_one`` for the class's learn_one: float64 y rounded to float32
    (beyond float32: inf, refused) into ``y32``, the float32 prediction in ``out32``
    widened into the float64 ``out``."""
    for j in range(y.shape[0]):
        y32[j] = np.float32(y[j])
    status = mores32_learn_one(x, y32, out32, A, counts, work, hyper, codes)
    for j in range(out.shape[0]):
        out[j] = out32[j]
    return status


# Kernels here call mores.py's, eigen.py's, pa32.py's and dfop32.py's (see _jit).
recompile_with(globals(), _mores_module, _eigen_module, _pa32_module, _dfop32_module)
