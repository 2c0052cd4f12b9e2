"""MORES' kernels: multi-output regression steps (SOMOR's and PA's: ``pa.py``).

docs/algorithms/mores.md. MORES updates the weights W, the output covariance Omega
and the structure S of a multi-output linear model by alternating minimisation
(its W-step solved through a tridiagonalisation of M and shifted tridiagonal
solves, its S- and Omega-steps through Jacobi eigendecompositions); SOMOR and
the passive-aggressive PA-I/II are its cheap linear relatives. The linear
algebra is ``_kernels/eigen.py`` and ``linalg.py``; the derivation and the
numerical care are docs/design/mores.md.
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import eigen as _eigen_module
from . import linalg as _linalg_module
from .eigen import (
    add_rows,
    apply_reflectors,
    jacobi_eigh,
    shifted_tridiagonal_solve,
    tridiagonalize,
)
from .linalg import (
    cholesky,
    multiply_transposed,
    set_identity,
    shifted_cholesky,
    spd_inverse,
)

OK = 0
INVALID = 1

#: Cap on the sweeps of the m x m Jacobi eigenproblems (cold starts need about 6-10).
_MAX_SWEEPS = 30
#: Relative margin (times m^2 tol) by which E must be positive definite for the
#: S-step to skip the eigendecomposition that clips negative eigenvalues.
#: Jacobi's eigenvalues are off by at most the off-diagonal it leaves
#: (< m tol ||E||_F) plus rounding of a few eps ||E||_F, so 100 m^2 tol ||E||_F
#: is at least 50 m times that bound.
_PSD_MARGIN = 100.0
#: Pivot floor of the Cholesky factorisations: S^-1 and Omega^-1 are >= I in
#: exact arithmetic, so a pivot below this can only come from rounding.
_PIVOT_FLOOR = 1e-12

# ------------------------------------------------------------- the blocks
# MORES' kernels take (inputs, A, counts, work, hyper, codes): A is the learnt
# block of the dtype (W, Omega, Omega^-1, S, S^-1, M, N, Q, flat, in this
# order: ``_mores_views``), counts int64 (learnt, skipped), work the scratch
# block of the dtype (``_mores_scratch``). SOMOR's and PA's (``_kernels/pa.py``)
# take (inputs, W, counts, work, bound, hyper, codes) and share the first
# entries of these. Index names of hyper and codes:
HYPER_C, HYPER_DECAY, HYPER_GAMMA, HYPER_TAU, HYPER_TOL = range(5)  # MORES
CODE_INTERCEPT, CODE_SKIP = range(2)  # SOMOR and PA append their kind (pa.py)


@kernel
def _mores_views(A, D, m):
    """W, Omega, Omega^-1, S, S^-1, M, N, Q: views of MORES' learnt block A."""
    Dm = D * m
    mm = m * m
    W = A[:Dm].reshape((D, m))
    o = Dm
    Om = A[o : o + mm].reshape((m, m))
    Om_inv = A[o + mm : o + 2 * mm].reshape((m, m))
    S = A[o + 2 * mm : o + 3 * mm].reshape((m, m))
    S_inv = A[o + 3 * mm : o + 4 * mm].reshape((m, m))
    o += 4 * mm
    M = A[o : o + D * D].reshape((D, D))
    o += D * D
    N = A[o : o + Dm].reshape((D, m))
    Q = A[o + Dm : o + Dm + mm].reshape((m, m))
    return W, Om, Om_inv, S, S_inv, M, N, Q


def mores_learnt_size(D, m):
    """Length of MORES' learnt block: D m + 4 m^2 + D^2 + D m + m^2."""
    return 2 * D * m + 5 * m * m + D * D


@kernel
def _mores_scratch(work, D, m):
    """x, DD, D4, Dm, mm, m2, undo: views of MORES' scratch block (``MORESWork``)."""
    Dm = D * m
    mm = m * m
    x = work[:D]
    o = D
    DD = work[o : o + D * D].reshape((D, D))
    o += D * D
    D4 = work[o : o + 4 * D].reshape((4, D))
    o += 4 * D
    W3 = work[o : o + 3 * Dm].reshape((3, D, m))
    o += 3 * Dm
    M7 = work[o : o + 7 * mm].reshape((7, m, m))
    o += 7 * mm
    m2 = work[o : o + 2 * m].reshape((2, m))
    o += 2 * m
    undo = work[o : o + D * D + Dm + 5 * mm]
    return x, DD, D4, W3, M7, m2, undo


def mores_scratch_size(D, m):
    """Length of MORES' scratch block."""
    return D + D * D + 4 * D + 3 * D * m + 7 * m * m + 2 * m + (D * D + D * m + 5 * m * m)


# --------------------------------------------------------------------- shared
@kernel
def _load_and_predict(xin, y, intercept, W, x, yhat):
    """x <- [xin, 1]; yhat <- W^T x. Returns False when x, y or yhat is not finite.

    Nothing but the scratch ``x`` and the output ``yhat`` is written.
    Returns ``(ok, x^T x)``.
    """
    d = xin.shape[0]
    D = W.shape[0]
    m = W.shape[1]
    xx = 0.0
    for k in range(d):
        v = xin[k]
        x[k] = v
        xx += v * v
    if intercept:
        x[d] = 1.0
        xx += 1.0
    yy = 0.0
    for j in range(m):
        yy += y[j] * y[j]
        yhat[j] = 0.0
    for k in range(D):
        xk = x[k]
        Wk = W[k]
        for j in range(m):
            yhat[j] += xk * Wk[j]
    ok = np.isfinite(xx) and np.isfinite(yy)
    for j in range(m):
        ok = ok and np.isfinite(yhat[j])
    return ok, xx


@kernel
def _mo_predict_one(xin, intercept, W, out):
    d = xin.shape[0]
    m = W.shape[1]
    for j in range(m):
        out[j] = 0.0
    for k in range(d):
        xk = xin[k]
        Wk = W[k]
        for j in range(m):
            out[j] += xk * Wk[j]
    if intercept:  # last, in the order of _load_and_predict (bit-equal predictions)
        for j in range(m):
            out[j] += W[d, j]


@kernel
def _mo_predict_many(X, intercept, W, out):
    for t in range(X.shape[0]):
        _mo_predict_one(X[t], intercept, W, out[t])


# ---------------------------------------------------------------------- MORES
@inline_kernel
def _all_finite(a):
    """Whether every entry of the 1-D array a is finite (in a's own dtype).

    No early exit: the and of every comparison is one vectorised pass (the
    entries are finite on every step but a refused one).
    """
    ok = True
    for i in range(a.shape[0]):
        ok &= np.isfinite(a[i])
    return ok


@kernel
def _certainly_positive_definite(E, rel_margin, L):
    """True when E - rel_margin ||E||_F I has a Cholesky factor (``L`` is scratch).

    Then lambda_min(E) > rel_margin ||E||_F up to the factorisation's backward
    error (about m^2 eps ||E||), so with rel_margin far above the error of a
    Jacobi eigendecomposition (a few m tol ||E||_F) every eigenvalue that
    :func:`jacobi_eigh` would compute is positive. False proves nothing.
    Stops at the first pivot that is not positive. Cost <= m^3 / 6.
    """
    m = E.shape[0]
    frob = 0.0
    for i in range(m):
        for j in range(m):
            frob += E[i, j] * E[i, j]
    shift = rel_margin * np.sqrt(frob)
    if not shift > 0.0:  # E == 0, or not finite
        return False
    return shifted_cholesky(E, shift, L, 0.0, True) == 0


@kernel
def _mores_step(
    xin, y, intercept, A, W, Om, Om_inv, S, S_inv, M, N, Q,
    C, mu, gamma, tau, tol, work_x, work_DD, work_D, work_Dm, work_mm, work_m, undo, yhat,
):
    """One MORES step (docs/algorithms/mores.md): predict, update M, N, Q, then W-, S-, Omega-steps.

    ``yhat`` receives the prequential prediction W_{t-1}^T x. Returns OK, or
    INVALID (with nothing but scratch and ``yhat`` written) when the sample is
    not finite, or when its update is not: a finite x of 1e20 overflows
    x x^T in float32 and the W-step's solve in float64. The
    step is too entangled to bound in advance, so the learnt block A (the
    matrices are its views, ``_mores_views``) past W, D^2 + D m + 5 m^2
    values against the step's D^3 flops, is copied to ``undo`` first, in
    one contiguous pass, and put back when any entry of A comes out
    non-finite (W from the update's own copy of W_{t-1}).
    """
    ok, _ = _load_and_predict(xin, y, intercept, W, work_x, yhat)
    if not ok:
        return INVALID
    Dm = W.shape[0] * W.shape[1]
    for i in range(undo.shape[0]):
        undo[i] = A[Dm + i]
    _mores_update(W, Om, Om_inv, S, S_inv, M, N, Q, C, mu, gamma, tau, tol,
                  work_x, y, work_DD, work_D, work_Dm, work_mm, work_m)
    if _all_finite(A):
        return OK
    W0 = work_Dm[0]  # W_{t-1}, kept by the update
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            W[k, j] = W0[k, j]
    for i in range(undo.shape[0]):
        A[Dm + i] = undo[i]
    return INVALID


@kernel
def _mores_update(W, Om, Om_inv, S, S_inv, M, N, Q, C, mu, gamma, tau, tol,
                  x, y, work_DD, work_D, work_Dm, work_mm, work_m):
    """The update of :func:`_mores_step` on the loaded sample ``x`` (with its constant 1).

    The statistics, then one sweep of the alternating minimisation, in the
    paper's order and names: the W-step (weights, S and Omega fixed), the
    S-step (output structure) and the Omega-step (covariance of the change of
    W). Each step reads the others' results from the learnt views only; the
    W-step keeps W_{t-1} in ``work_Dm[0]`` for the Omega-step (and for
    ``_mores_step``'s undo). Each step takes ``constants`` = (C, gamma, tau,
    tol) and ``work`` = (work_DD, work_D, work_Dm, work_mm, work_m).
    """
    _update_statistics(M, N, Q, x, y, mu)
    # The steps' constants and scratch, each as one argument (tuples: no copy)
    constants = (C, gamma, tau, tol)
    work = (work_DD, work_D, work_Dm, work_mm, work_m)
    _w_step(W, Om, Om_inv, S, M, N, constants, work)
    _s_step(W, S, S_inv, M, N, Q, constants, work)
    _omega_step(W, Om, Om_inv, constants, work)


@inline_kernel
def _update_statistics(M, N, Q, x, y, mu):
    """M = mu M + x x^T, N = mu N + x y^T, Q = mu Q + y y^T.

    x_i x_j == x_j x_i bit for bit keeps M exactly symmetric (and Q).
    """
    D = M.shape[0]
    m = Q.shape[0]
    for i in range(D):
        xi = x[i]
        Mi = M[i]
        for j in range(D):
            Mi[j] = mu * Mi[j] + xi * x[j]
        Ni = N[i]
        for j in range(m):
            Ni[j] = mu * Ni[j] + xi * y[j]
    for i in range(m):
        yi = y[i]
        Qi = Q[i]
        for j in range(m):
            Qi[j] = mu * Qi[j] + yi * y[j]


@inline_kernel
def _s_omega_eigenbasis(Om_inv, S, tol, work_mm, s):
    """S Omega^-1 = G^-T diag(s) G^T, the basis in which the W-step decouples.

    With Omega^-1 = K K^T (Cholesky) and K^T S K = V^T diag(s) V (Jacobi, V's
    rows the eigenvectors), G = K V^T: K, B, V, G are ``work_mm[0:4]``, ``work_mm[4]``
    (E) is scratch; s receives the eigenvalues.
    """
    m = S.shape[0]
    K = work_mm[0]
    B = work_mm[1]
    V = work_mm[2]
    G = work_mm[3]
    E = work_mm[4]
    cholesky(Om_inv, K, _PIVOT_FLOOR)
    for i in range(m):  # E = S K
        Ei = E[i]
        Si = S[i]
        for j in range(m):
            acc = 0.0
            for k in range(m):
                acc += Si[k] * K[k, j]
            Ei[j] = acc
    for i in range(m):  # B = K^T (S K), exactly symmetric
        for j in range(i, m):
            acc = 0.0
            for k in range(m):
                acc += K[k, i] * E[k, j]
            B[i, j] = acc
            B[j, i] = acc
    set_identity(V)
    jacobi_eigh(B, V, tol, _MAX_SWEEPS)
    for j in range(m):
        s[j] = B[j, j]
    multiply_transposed(K, V, G)  # G = K V^T


@inline_kernel
def _w_step(W, Om, Om_inv, S, M, N, constants, work):
    """W-step (S and Omega fixed): W + C M W (S Omega^-1) = RHS Omega^-1 with
    RHS = W_{t-1} Omega + C N S.

    With S Omega^-1 = G^-T diag(s) G^T (``_s_omega_eigenbasis``) and Y = W G^-T
    the columns decouple, (I + C s_j M) y_j = (RHS G)_j, solved for every j at
    once through M = Q T Q^T (Householder, T tridiagonal); then W = Y G^T
    (docs/design/mores.md). W_{t-1} is left in ``work_Dm[0]``.
    """
    D = W.shape[0]
    m = W.shape[1]
    C, _, _, tol = constants
    work_DD, work_D, work_Dm, work_mm, work_m = work
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
    _s_omega_eigenbasis(Om_inv, S, tol, work_mm, s)

    # RHS G = W_{t-1} (Omega G) + N (C S G): two m x m products, then one pass over D
    H1 = B
    H2 = E
    for i in range(m):
        H1i = H1[i]
        H2i = H2[i]
        for j in range(m):
            H1i[j] = 0.0
            H2i[j] = 0.0
        Omi = Om[i]
        Si = S[i]
        for k in range(m):
            a = Omi[k]
            b = C * Si[k]
            Gk = G[k]
            for j in range(m):
                H1i[j] += a * Gk[j]
                H2i[j] += b * Gk[j]
    for k in range(D):  # R2 = W_{t-1} H1 + N H2
        W0k = W0[k]
        Nk = N[k]
        R2k = R2[k]
        for j in range(m):
            R2k[j] = 0.0
        for i in range(m):
            a = W0k[i]
            b = Nk[i]
            H1i = H1[i]
            H2i = H2[i]
            for j in range(m):
                R2k[j] += a * H1i[j] + b * H2i[j]
    # (I + C s_j M)^-1 for all j at once: M = Q T Q^T (Householder, T tridiagonal)
    tridiagonalize(M, A, diag, off, beta, p)
    apply_reflectors(A, beta, R2, t, True)
    for j in range(m):
        t[j] = C * s[j]
    shifted_tridiagonal_solve(diag, off, t, R2, R1)
    apply_reflectors(A, beta, R2, t, False)
    multiply_transposed(R2, G, W)  # W = Y G^T


@inline_kernel
def _s_step(W, S, S_inv, M, N, Q, constants, work):
    """S-step: S^-1 = (gamma S^-1 + C/2 E + tau I) / (gamma + tau), with
    E = W^T M W - W^T N - N^T W + Q = W^T (M W - N) - N^T W + Q, clipped PSD.

    Scratch: ``work_Dm[1]`` (R1) and ``work_mm``.
    """
    D = W.shape[0]
    m = W.shape[1]
    C, gamma, tau, tol = constants
    R1 = work[2][1]
    work_mm = work[3]
    B = work_mm[1]
    V = work_mm[2]
    E = work_mm[4]
    L = work_mm[5]
    Linv = work_mm[6]
    for k in range(D):  # R1 = M W - N
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
    # E is PSD in exact arithmetic but formed as a difference of large terms;
    # cancellation can leave eigenvalues of order -eps ||Q||, which would push
    # an eigenvalue of S above 1. Clip them at 0 (E is left bit-for-bit as it
    # is when it is already PSD). The eigendecomposition is skipped when E is
    # certified positive definite by a margin far above Jacobi's error (then
    # it could find no negative eigenvalue: same E bit for bit, and the usual
    # case).
    negative = False
    if not _certainly_positive_definite(E, _PSD_MARGIN * m * m * tol, L):
        for i in range(m):
            for j in range(m):
                B[i, j] = E[i, j]
        set_identity(V)
        jacobi_eigh(B, V, tol, _MAX_SWEEPS)
        for j in range(m):
            if B[j, j] < 0.0:
                negative = True
    if negative:
        for i in range(m):
            for j in range(i, m):
                acc = 0.0
                for k in range(m):
                    lk = B[k, k]
                    if lk > 0.0:
                        acc += lk * V[k, i] * V[k, j]
                E[i, j] = acc
                E[j, i] = acc
    g = 1.0 / (gamma + tau)
    hc = 0.5 * C
    for i in range(m):
        for j in range(m):
            v = gamma * S_inv[i, j] + hc * E[i, j]
            if i == j:
                v += tau
            S_inv[i, j] = v * g
    spd_inverse(S_inv, S, L, Linv, _PIVOT_FLOOR)


@inline_kernel
def _omega_step(W, Om, Om_inv, constants, work):
    """Omega-step: Omega^-1 = (gamma Omega^-1 + 1/2 Delta^T Delta + tau I) / (gamma + tau),
    Delta = W_t - W_{t-1} (W_{t-1} in ``work_Dm[0]``, as the W-step left it)."""
    D = W.shape[0]
    m = W.shape[1]
    _, gamma, tau, _ = constants
    W0 = work[2][0]
    R1 = work[2][1]
    work_mm = work[3]
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
            acc = 0.0
            for k in range(D):
                acc += R1[k, i] * R1[k, j]
            E[i, j] = acc
            E[j, i] = acc
    g = 1.0 / (gamma + tau)
    for i in range(m):
        for j in range(m):
            v = gamma * Om_inv[i, j] + 0.5 * E[i, j]
            if i == j:
                v += tau
            Om_inv[i, j] = v * g
    spd_inverse(Om_inv, Om, L, Linv, _PIVOT_FLOOR)


@kernel
def _mores_learn_one(x, y, out, A, counts, work, hyper, codes):
    """One MORES step on (x, y): ``_mores_learn_many`` on the one row (views, no copy).

    ``out`` receives the prequential prediction; returns OK, or INVALID when
    the sample was refused and not skipped.
    """
    first_bad = _mores_learn_many(x.reshape((1, x.shape[0])), y.reshape((1, y.shape[0])),
                                  out.reshape((1, out.shape[0])), A, counts, work, hyper, codes)
    return OK if first_bad < 0 else INVALID


@kernel
def _mores_learn_many(X, Y, out, A, counts, work, hyper, codes):
    """Learn a block; ``out[t]`` = prequential prediction of row t.

    Returns -1, or the index of the first invalid row when ``codes[CODE_SKIP]``
    is 0 (rows before it learnt, it and the rows after it untouched).
    """
    intercept = codes[CODE_INTERCEPT] != 0
    skip = codes[CODE_SKIP] != 0
    D = X.shape[1] + int(intercept)
    m = Y.shape[1]
    W, Om, Om_inv, S, S_inv, M, N, Q = _mores_views(A, D, m)
    wx, wDD, wD, wDm, wmm, wm, undo = _mores_scratch(work, D, m)
    C = hyper[HYPER_C]
    mu = hyper[HYPER_DECAY]
    gamma = hyper[HYPER_GAMMA]
    tau = hyper[HYPER_TAU]
    tol = hyper[HYPER_TOL]
    for t in range(X.shape[0]):
        status = _mores_step(
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
def _mores_learn_many_marked(X, Y, out, lev, A, counts, work, hyper, codes):
    """``_mores_learn_many`` that also marks each row for the prediction intervals'
    paired pass (``_kernels/interval.py``): lev[t] = 0 when row t was learnt, NaN
    when it was refused (MORES has no leverage term: its v is 1). The same steps."""
    intercept = codes[CODE_INTERCEPT] != 0
    skip = codes[CODE_SKIP] != 0
    D = X.shape[1] + int(intercept)
    m = Y.shape[1]
    W, Om, Om_inv, S, S_inv, M, N, Q = _mores_views(A, D, m)
    wx, wDD, wD, wDm, wmm, wm, undo = _mores_scratch(work, D, m)
    C = hyper[HYPER_C]
    mu = hyper[HYPER_DECAY]
    gamma = hyper[HYPER_GAMMA]
    tau = hyper[HYPER_TAU]
    tol = hyper[HYPER_TOL]
    for t in range(X.shape[0]):
        status = _mores_step(
            X[t], Y[t], intercept, A, W, Om, Om_inv, S, S_inv, M, N, Q,
            C, mu, gamma, tau, tol, wx, wDD, wD, wDm, wmm, wm, undo, out[t],
        )
        if status == OK:
            counts[0] += 1
            lev[t] = 0.0
        elif skip:
            counts[1] += 1
            lev[t] = np.nan
        else:
            return t
    return -1


# Kernels here call linalg's and eigen's: recompile them when those change (see _jit).
recompile_with(globals(), _linalg_module, _eigen_module)
