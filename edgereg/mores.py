"""MORES and its baselines: online multiple-output regression (SPEC.md section 5).

Three models predict m outputs at once, yhat = W^T x with W in R^{D x m}
(D = d + 1 when ``fit_intercept``: a constant-1 input is appended internally):

* :class:`MORES` - the structured model of SPEC.md section 5.1. It keeps the
  discounted statistics
      M_t = mu M_{t-1} + x_t x_t^T,  N_t = mu N_{t-1} + x_t y_t^T,
      Q_t = mu Q_{t-1} + y_t y_t^T
  and after each sample does one sweep of three closed-form sub-steps:
      W-step:     W Omega + C M_t W S = W_{t-1} Omega + C N_t S
      S-step:     S_t^-1     = (gamma S_{t-1}^-1     + tau I + (C/2) E_t(W_t)) / (gamma + tau)
      Omega-step: Omega_t^-1 = (gamma Omega_{t-1}^-1 + tau I + (1/2) D^T D)    / (gamma + tau)
  with E_t(W) = W^T M_t W - W^T N_t - N_t^T W + Q_t and D = W_t - W_{t-1}.
* :class:`SOMOR` - the paper's simple formulation (Omega = S = I, no history),
  a multi-output passive-aggressive step.
* :class:`PARegressor` - passive-aggressive regression (Crammer et al. 2006,
  PA-I / PA-II) applied to each output independently.

Solving the W-step without allocating
-------------------------------------
Multiply the W-step on the right by Omega^-1: W + C M W (S Omega^-1) = B with
B = RHS Omega^-1, RHS = W_{t-1} Omega + C N_t S. Factor Omega^-1 = K K^T
(Cholesky of the stored Omega^-1). Then S Omega^-1 = S K K^T = K^-T (K^T S K) K^T,
and K^T S K is symmetric positive definite: K^T S K = V^T diag(s) V (rows of V
the eigenvectors, s > 0). So S Omega^-1 = P diag(s) P^-1 with P = K^-T V^T
and P^-1 = V K^T = G^T, G = K V^T. Multiplying on the right by P, with
Y = W P, the equation becomes Y + C M Y diag(s) = B P = RHS K K^T K^-T V^T =
RHS G: the m columns decouple into m symmetric positive definite systems

    (I + C s_j M_t) y_j = (RHS G)_j,    j = 1..m,    W = Y G^T,

with no triangular solve by K and no eigendecomposition of M_t. The m systems
share M_t, so it is reduced once to tridiagonal form by Householder
reflections, M_t = Q T Q^T (:func:`edgereg._linalg.tridiagonalize`, about D^3
multiply-adds), and then (I + C s_j M_t)^-1 = Q (I + C s_j T)^-1 Q^T: Q^T and Q
are applied to the D x m right-hand side (D^2 m each) and the m tridiagonal
systems cost O(D m). This is the Hessenberg-Schur method of Golub, Nash & Van
Loan (1979) for Sylvester equations, with a symmetric M_t (Hessenberg =
tridiagonal) and a diagonalisable m x m side. Every I + C s_j T is >= I, so its
LDL^T elimination needs no pivoting (every pivot >= 1); the orthogonal Q keeps
the solve backward stable. Measured against m Cholesky factorisations of
I + C s_j M_t (m D^3 / 6 multiply-adds but short, poorly vectorised loops):
as fast at D = 6, m = 2, 1.1x faster at D = 22, m = 7, 1.7x at D = 51, m = 10.
Nothing is carried between steps but the statistics. The m x m eigenproblem
is solved by the cyclic Jacobi routine of :mod:`edgereg._linalg`.
Cost of the W-step: D^3 + 2 D^2 m + O(D m^2 + m^3).

E_t(W_t) is PSD in exact arithmetic; the kernel clips the negative
eigenvalues that cancellation can produce (eigendecomposition of the m x m
E), so that S stays <= I beyond rounding of the last operation.

S and Omega are stored together with their inverses (the closed forms give
the inverses; the W-step needs S and Omega^-1); inverses are formed through a
Cholesky factor and written exactly symmetric.

Bad input: a sample with NaN/inf in x or y, or whose squared norm overflows,
is detected before anything is written (status INVALID); the classes raise or
skip as ``on_invalid`` says.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import _linalg as _linalg_module
from ._base import OnlineModel
from ._jit import inline_kernel, kernel, recompile_with
from ._linalg import (
    apply_reflectors,
    cholesky,
    jacobi_eigh,
    set_identity,
    shifted_tridiagonal_solve,
    spd_inverse,
    tridiagonalize,
)
from ._validate import as_row, as_scalar, check_float, check_int

__all__ = ["MORES", "SOMOR", "PARegressor", "MORESState", "SOMORState"]

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
#: Largest C accepted by MORES (issue 15; measured on inputs of scale 1e-3..1e3,
#: both dtypes: C = 1e8 refuses none, 1e10 refuses 10 of 500 float32 samples
#: at scale 1e3, 1e12 refuses 425).
MAX_C = 1e8


class MORESState(NamedTuple):
    """Fixed memory of a MORES model (D = d + fit_intercept inputs, m outputs).

    ``3 D^2 + 6 D m + 17 m^2 + 5 D + 2 m`` values of the dtype plus the
    counters (the statistics and learnt matrices, the scratch of the
    sub-steps, and the copy that undoes a step whose result is not finite).
    """

    W: np.ndarray  # (D, m) coefficients, last row the intercept when fitted
    Omega: np.ndarray  # (m, m) structure of the coefficient change
    Omega_inv: np.ndarray  # (m, m)
    S: np.ndarray  # (m, m) structure of the residuals
    S_inv: np.ndarray  # (m, m)
    M: np.ndarray  # (D, D) discounted sum of x x^T
    N: np.ndarray  # (D, m) discounted sum of x y^T
    Q: np.ndarray  # (m, m) discounted sum of y y^T
    counts: np.ndarray  # int64 (2,): samples learnt, samples skipped
    work_x: np.ndarray  # (D,) the sample with its constant-1 input
    work_DD: np.ndarray  # (D, D) Householder vectors of the tridiagonalisation of M
    work_D: np.ndarray  # (4, D) diagonal and off-diagonal of T, the betas, scratch
    work_Dm: np.ndarray  # (3, D, m) W_{t-1}; tridiagonal pivots, M W - N, D; RHS G -> Y
    work_mm: np.ndarray  # (7, m, m) K; K^T S K, Omega G; V; G; S K, C S G, E; L; L^-1
    work_m: np.ndarray  # (2, m) eigenvalues s of K^T S K; C s and scratch
    work_undo: np.ndarray  # (D^2 + D m + 5 m^2,) M, N, Q, S, S^-1, Omega, Omega^-1 before the step


class SOMORState(NamedTuple):
    """Fixed memory of SOMOR / PARegressor: ``D m + D + m`` values, the counters and 16 bytes."""

    W: np.ndarray  # (D, m) coefficients, last row the intercept when fitted
    counts: np.ndarray  # int64 (2,)
    work_x: np.ndarray  # (D,) the sample with its constant-1 input
    work_m: np.ndarray  # (m,) residual
    work_bound: np.ndarray  # float64 (2,): a bound of ||W||_F (NaN: unknown), updates since exact


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


#: How many updates the linear models' bound on ||W||_F may grow by the
#: triangle inequality before it is recomputed exactly (O(D m), amortised).
_BOUND_REFRESH = 256


@kernel
def _frobenius(W):
    """||W||_F without overflow (scaled by max |W_kj|): an exact bound's refresh."""
    big = 0.0
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            a = abs(np.float64(W[k, j]))
            big = a if a > big else big
    if big == 0.0 or not np.isfinite(big):
        return big
    acc = 0.0
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            v = np.float64(W[k, j]) / big
            acc += v * v
    return big * np.sqrt(acc)


@inline_kernel
def _step_fits(W, bound, xx, ss):
    """Whether W + x s^T stays finite in W's dtype; ``bound`` keeps ||W||_F's bound.

    Every entry of the result is at most ||W + x s^T||_F <= B + ||x|| ||s||
    <= B + (||x||^2 + ||s||^2) / 2, B an upper bound of ||W||_F kept in
    ``bound[0]`` (grown by each update, recomputed exactly every
    ``_BOUND_REFRESH`` updates and after a load, where it is NaN). A target
    of 1.7e308, or 3.5e38 in a float32 model, makes the step overflow
    although the sample is finite (issue 15). No square root, no pass over
    W: scanning W for its largest entry in the prediction's pass cost SOMOR
    13% at d = 50, m = 10, the exact growth's two square roots 4%.
    Returns the bound's growth, or -1.0 when the step does not fit.
    """
    if not (bound[0] >= 0.0) or bound[1] >= _BOUND_REFRESH:
        bound[0] = _frobenius(W)
        bound[1] = 0.0
    grow = 0.5 * (xx + ss)
    limit = 3.4028234663852886e38 if W.itemsize == 4 else 1.7976931348623157e308
    # 1 + 2^-20: the rounding of the bound's own arithmetic.
    if not ((bound[0] + grow) * (1.0 + 2.0**-20) < limit):
        return -1.0
    return grow


@inline_kernel
def _grew(bound, grow):
    """After an update that ``_step_fits`` admitted: B <- B + ||x|| ||s||."""
    bound[0] += grow
    bound[1] += 1.0


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
@kernel
def _flat_copy(A, buf, at, into_buffer):
    """buf[at : at + A.size] <- A row by row (``into_buffer``), or back; the next index."""
    for i in range(A.shape[0]):
        Ai = A[i]
        for j in range(A.shape[1]):
            if into_buffer:
                buf[at] = Ai[j]
            else:
                Ai[j] = buf[at]
            at += 1
    return at


@kernel
def _finite(A):
    """Whether every entry of the 2-D array A is finite (in A's own dtype)."""
    for i in range(A.shape[0]):
        Ai = A[i]
        for j in range(A.shape[1]):
            if not np.isfinite(Ai[j]):
                return False
    return True


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
    for j in range(m):
        Lj = L[j]
        d = E[j, j] - shift
        for k in range(j):
            d -= Lj[k] * Lj[k]
        if not d > 0.0:
            return False
        ljj = np.sqrt(d)
        Lj[j] = ljj
        inv = 1.0 / ljj
        for i in range(j + 1, m):
            Li = L[i]
            acc = E[i, j]
            for k in range(j):
                acc -= Li[k] * Lj[k]
            Li[j] = acc * inv
    return True


@kernel
def _mores_step(
    xin, y, intercept, W, Om, Om_inv, S, S_inv, M, N, Q,
    C, mu, gamma, tau, tol, work_x, work_DD, work_D, work_Dm, work_mm, work_m, undo, yhat,
):
    """One MORES step (SPEC 5.1): predict, update M, N, Q, then W-, S-, Omega-steps.

    ``yhat`` receives the prequential prediction W_{t-1}^T x. Returns OK, or
    INVALID (with nothing but scratch and ``yhat`` written) when the sample is
    not finite, or when its update is not: a finite x of 1e20 overflows
    x x^T in float32 and the W-step's solve in float64 (issue 15). The
    step is too entangled to bound in advance, so the learnt matrices are
    copied to ``undo`` first (D^2 + D m + 5 m^2 values against the
    step's D^3 flops) and put back when any of them comes out non-finite.
    """
    ok, _ = _load_and_predict(xin, y, intercept, W, work_x, yhat)
    if not ok:
        return INVALID
    at = 0
    for A in (M, N, Q, S, S_inv, Om, Om_inv):
        at = _flat_copy(A, undo, at, True)
    _mores_update(W, Om, Om_inv, S, S_inv, M, N, Q, C, mu, gamma, tau, tol,
                  work_x, y, work_DD, work_D, work_Dm, work_mm, work_m)
    if (_finite(W) and _finite(M) and _finite(N) and _finite(Q) and _finite(S)
            and _finite(S_inv) and _finite(Om) and _finite(Om_inv)):
        return OK
    W0 = work_Dm[0]  # W_{t-1}, kept by the update
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            W[k, j] = W0[k, j]
    at = 0
    for A in (M, N, Q, S, S_inv, Om, Om_inv):
        at = _flat_copy(A, undo, at, False)
    return INVALID


@kernel
def _mores_update(W, Om, Om_inv, S, S_inv, M, N, Q, C, mu, gamma, tau, tol,
                  x, y, work_DD, work_D, work_Dm, work_mm, work_m):
    """The update of :func:`_mores_step` on the loaded sample ``x`` (with its constant 1)."""
    D = W.shape[0]
    m = W.shape[1]

    # -- statistics; x_i x_j == x_j x_i bit for bit keeps M exactly symmetric
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

    A = work_DD
    W0 = work_Dm[0]
    R1 = work_Dm[1]
    R2 = work_Dm[2]
    K = work_mm[0]
    B = work_mm[1]
    V = work_mm[2]
    G = work_mm[3]
    E = work_mm[4]
    L = work_mm[5]
    Linv = work_mm[6]
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

    # -- S Omega^-1 = G^-T diag(s) G^T with Omega^-1 = K K^T, K^T S K = V^T diag(s) V
    # (V's rows are the eigenvectors), G = K V^T
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
    for i in range(m):  # G = K V^T
        Gi = G[i]
        Ki = K[i]
        for j in range(m):
            Vj = V[j]
            acc = 0.0
            for k in range(m):
                acc += Ki[k] * Vj[k]
            Gi[j] = acc

    # -- W-step: RHS = W_{t-1} Omega + C N S; with Y = W G^-T the columns decouple,
    # (I + C s_j M) y_j = (RHS G)_j; then W = Y G^T.
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
    for k in range(D):  # W = Y G^T
        R2k = R2[k]
        Wk = W[k]
        for j in range(m):
            Gj = G[j]
            acc = 0.0
            for i in range(m):
                acc += R2k[i] * Gj[i]
            Wk[j] = acc

    # -- S-step: E = W^T (M W - N) - N^T W + Q
    for k in range(D):  # R1 = M W - N
        Mk = M[k]
        R1k = R1[k]
        Nk = N[k]
        for j in range(m):
            R1k[j] = -Nk[j]
        # rows of W two at a time, the sum kept in sequential order
        i = 0
        while i + 1 < D:
            a = Mk[i]
            b = Mk[i + 1]
            Wi = W[i]
            Wn = W[i + 1]
            for j in range(m):
                R1k[j] = R1k[j] + a * Wi[j] + b * Wn[j]
            i += 2
        if i < D:
            a = Mk[i]
            Wi = W[i]
            for j in range(m):
                R1k[j] += a * Wi[j]
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

    # -- Omega-step: D = W_t - W_{t-1}
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
    for i in range(m):
        for j in range(m):
            v = gamma * Om_inv[i, j] + 0.5 * E[i, j]
            if i == j:
                v += tau
            Om_inv[i, j] = v * g
    spd_inverse(Om_inv, Om, L, Linv, _PIVOT_FLOOR)


@kernel
def _mores_learn_many(
    X, Y, intercept, W, Om, Om_inv, S, S_inv, M, N, Q, counts,
    C, mu, gamma, tau, tol, work_x, work_DD, work_D, work_Dm, work_mm, work_m, work_undo,
    skip, out,
):
    """Learn a block; ``out[t]`` = prequential prediction of row t.

    Returns -1, or the index of the first invalid row when ``skip`` is False
    (rows before it learnt, it and the rows after it untouched).
    """
    for t in range(X.shape[0]):
        status = _mores_step(
            X[t], Y[t], intercept, W, Om, Om_inv, S, S_inv, M, N, Q,
            C, mu, gamma, tau, tol, work_x, work_DD, work_D, work_Dm, work_mm, work_m, work_undo,
            out[t],
        )
        if status == OK:
            counts[0] += 1
        elif skip:
            counts[1] += 1
        else:
            return t
    return -1


@kernel
def _mores_learn_one(
    x, y, intercept, W, Om, Om_inv, S, S_inv, M, N, Q, counts,
    C, mu, gamma, tau, tol, work_x, work_DD, work_D, work_Dm, work_mm, work_m, work_undo,
    skip, out,
):
    status = _mores_step(
        x, y, intercept, W, Om, Om_inv, S, S_inv, M, N, Q,
        C, mu, gamma, tau, tol, work_x, work_DD, work_D, work_Dm, work_mm, work_m, work_undo, out,
    )
    if status == OK:
        counts[0] += 1
    elif skip:
        counts[1] += 1
    return status


# ---------------------------------------------------------- SOMOR and PA-I/II
@kernel
def _somor_step(xin, y, intercept, W, eps, x, r, yhat, bound):
    """W <- W + x r^T max(0, 1 - eps/||r||) / ||x||^2, r = y - W^T x (SPEC 5.1)."""
    ok, xx = _load_and_predict(xin, y, intercept, W, x, yhat)
    if not ok:
        return INVALID
    D = W.shape[0]
    m = W.shape[1]
    rr = 0.0
    for j in range(m):
        rj = y[j] - yhat[j]
        r[j] = rj
        rr += rj * rj
    rn = np.sqrt(rr)
    if not np.isfinite(rn):
        return INVALID
    if rn > eps and xx > 0.0:
        f = (1.0 - eps / rn) / xx
        if W.itemsize == 4:  # r is stored in float32 too: 3.5e38 -> inf
            for j in range(m):
                if not np.isfinite(r[j]):
                    return INVALID
        grow = _step_fits(W, bound, xx, rr * (f * f))
        if not grow >= 0.0:
            return INVALID
        for k in range(D):
            a = x[k] * f
            Wk = W[k]
            for j in range(m):
                Wk[j] += a * r[j]
        _grew(bound, grow)
    return OK


@kernel
def _pa_step(xin, y, intercept, W, variant, C, eps, x, r, yhat, bound):
    """Passive-aggressive regression per output (Crammer et al. 2006, section 5).

    loss_j = max(0, |y_j - w_j^T x| - eps); step
    tau_j = min(C, loss_j / ||x||^2) (PA-I, variant 1) or
    tau_j = loss_j / (||x||^2 + 1/(2C)) (PA-II, variant 2);
    w_j <- w_j + sign(y_j - w_j^T x) tau_j x.
    """
    ok, xx = _load_and_predict(xin, y, intercept, W, x, yhat)
    if not ok:
        return INVALID
    D = W.shape[0]
    m = W.shape[1]
    any_step = False
    ss = 0.0
    for j in range(m):
        e = y[j] - yhat[j]
        loss = abs(e) - eps
        r[j] = 0.0
        if loss > 0.0 and xx > 0.0:
            if variant == 1:
                step = min(C, loss / xx)
            else:
                step = loss / (xx + 0.5 / C)
            r[j] = step if e > 0.0 else -step
            any_step = True
            ss += step * step
    if not any_step:
        return OK
    if W.itemsize == 4:  # r is stored in float32 too
        for j in range(m):
            if not np.isfinite(r[j]):
                return INVALID
    grow = _step_fits(W, bound, xx, ss)
    if not grow >= 0.0:
        return INVALID
    for k in range(D):
        xk = x[k]
        Wk = W[k]
        for j in range(m):
            Wk[j] += xk * r[j]
    _grew(bound, grow)
    return OK


@kernel
def _lin_learn_one(x, y, intercept, W, kind, C, eps, counts, work_x, work_m, work_bound, skip,
                   out):
    if kind == 0:
        status = _somor_step(x, y, intercept, W, eps, work_x, work_m, out, work_bound)
    else:
        status = _pa_step(x, y, intercept, W, kind, C, eps, work_x, work_m, out, work_bound)
    if status == OK:
        counts[0] += 1
    elif skip:
        counts[1] += 1
    return status


@kernel
def _lin_learn_many(X, Y, intercept, W, kind, C, eps, counts, work_x, work_m, work_bound, skip,
                    out):
    """Block kernel of SOMOR (kind 0), PA-I (kind 1) and PA-II (kind 2)."""
    for t in range(X.shape[0]):
        status = _lin_learn_one(
            X[t], Y[t], intercept, W, kind, C, eps, counts, work_x, work_m, work_bound, skip,
            out[t]
        )
        if status != OK and not skip:
            return t
    return -1


# ---------------------------------------------------------------------- models
class _MultiOutput(OnlineModel):
    """Shared Python layer of the multi-output models (not public)."""

    _task = "multioutput"
    n_outputs: int
    fit_intercept: bool

    def _init_outputs(self, n_outputs: int, fit_intercept: bool) -> None:
        self.n_outputs = check_int("n_outputs", n_outputs)
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be a bool, got {fit_intercept!r}")
        self.fit_intercept = bool(fit_intercept)
        self._D = self.n_features + int(self.fit_intercept)
        self._m = self.n_outputs
        self._y_shape = (self._m,)

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
            if y.flags.c_contiguous:
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
        return np.ascontiguousarray(Y, dtype=np.float64)

    def _output_shape(self, n: int) -> tuple[int, ...]:
        return (n, self._m)

    # ------------------------------------------------------------ prediction
    def predict_one(self, x: Any) -> np.ndarray:
        """Predict the m outputs of one sample, W^T [x, 1] (no learning)."""
        out = np.empty(self._m, dtype=np.float64)
        _mo_predict_one(self._row(x), self.fit_intercept, self._state.W, out)
        return out

    def _predict_block(self, X, out):  # type: ignore[override]
        _mo_predict_many(X, self.fit_intercept, self._state.W, out)

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


class MORES(_MultiOutput):
    r"""Dynamic-structure online multiple-output regression (SPEC.md section 5.1).

    Predicts y in R^m as yhat = W^T x and learns, after each sample, the
    coefficients W together with two m x m structure matrices by one sweep of
    alternating minimisation of

    .. math::

        \tfrac12 \operatorname{tr}((W - W_{t-1}) \Omega (W - W_{t-1})^T)
        + \tfrac{C}{2} \operatorname{tr}(S E_t(W))
        + \gamma [D_{ld}(S, S_{t-1}) + D_{ld}(\Omega, \Omega_{t-1})]
        + \tau [D_{ld}(S, I) + D_{ld}(\Omega, I)],

    E_t(W) = W^T M_t W - W^T N_t - N_t^T W + Q_t, with M_t, N_t, Q_t the
    ``decay``-discounted sums of x x^T, x y^T and y y^T. The sub-steps, in order:

    * W-step: W Omega + C M_t W S = W_{t-1} Omega + C N_t S, solved exactly:
      the eigendecomposition of the m x m K^T S K (Omega^-1 = K K^T) splits
      it into m systems (I + C s_j M_t) y_j = r_j, all solved through one
      tridiagonalisation of M_t, see the module notes;
    * S-step: S_t^-1 = (gamma S_{t-1}^-1 + tau I + (C/2) E_t(W_t)) / (gamma + tau);
    * Omega-step: Omega_t^-1 = (gamma Omega_{t-1}^-1 + tau I + (1/2) D^T D) / (gamma + tau),
      D = W_t - W_{t-1}.

    S and Omega stay symmetric positive definite with eigenvalues in (0, 1].
    This objective is edgereg's reconstruction of the paper's (whose formulas
    are not available); see SPEC.md section 5.1.

    Parameters
    ----------
    n_features : int
        Input dimension d (without the intercept).
    n_outputs : int
        Number of outputs m.
    C : float, default 1.0
        Weight of the discounted Mahalanobis loss against the change of W,
        at most ``MAX_C`` = 1e8 (beyond it the W-step's I + C s M loses
        the identity's digits: float32 samples of size 1e3 are refused from
        C = 1e10 on, most of them at 1e12).
    decay : float, default 0.99
        The paper's forgetting factor mu in [0, 1]: sample i weighs
        mu^(t - i) at time t. 0 keeps the current sample only (0^0 := 1), 1
        forgets nothing. It is 1 minus DFOP's ``forgetting`` (DFOP's
        forgetting 0.01 is decay 0.99).
    gamma : float, default 1.0
        Weight >= 0 of the LogDet divergences to the previous S and Omega.
    tau : float, default 100.0
        Weight > 0 of the LogDet divergences to the identity.
    fit_intercept : bool, default True
        Append a constant-1 input internally (its row of W is ``intercept_``).
    dtype : {"float64", "float32"}
    on_invalid : {"raise", "skip"}
        What a sample with NaN/inf in x or y does: raise ``ValueError`` (state
        unchanged) or be skipped and counted in ``n_skipped_``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_outputs)
    intercept_ : ndarray of shape (n_outputs,)
    output_structure_ : ndarray of shape (n_outputs, n_outputs)
        Omega, the structure of the change of the coefficients.
    residual_structure_ : ndarray of shape (n_outputs, n_outputs)
        S, the structure (precision-like weighting) of the residuals.

    Notes
    -----
    Fixed memory, with D = d + fit_intercept: 3 D^2 + 6 D m + 17 m^2 + 5 D + 2 m
    values of ``dtype`` plus 16 bytes (d = 21, m = 7, float64: 26.7 KB).
    Cost per sample O(D^3 + D^2 m + m^3): one Householder tridiagonalisation
    of M_t (about D^3 multiply-adds), its reflectors applied twice to a D x m
    matrix (2 D^2 m), and two m x m Jacobi eigenproblems.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import MORES
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); Wtrue = rng.normal(size=(3, 2))
    >>> Y = X @ Wtrue + 0.01 * rng.normal(size=(300, 2))
    >>> model = MORES(3, 2, C=10.0)
    >>> _ = model.learn_many(X, Y)
    >>> bool(np.allclose(model.coef_, Wtrue, atol=0.05))
    True
    """

    def __init__(
        self,
        n_features: int,
        n_outputs: int,
        C: float = 1.0,
        decay: float = 0.99,
        *,
        gamma: float = 1.0,
        tau: float = 100.0,
        fit_intercept: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self._init_outputs(n_outputs, fit_intercept)
        self.C = check_float("C", C, 0.0, MAX_C, low_open=True)
        self.decay = check_float("decay", decay, 0.0, 1.0)
        self.gamma = check_float("gamma", gamma, 0.0, None)
        self.tau = check_float("tau", tau, 0.0, None, low_open=True)
        # Threshold of the Jacobi sweeps, relative to ||A||_F: a few ulps of
        # the state's precision (float32 cannot resolve 1e-14).
        self._tol = float(64.0 * np.finfo(self.dtype).eps)
        self.reset()

    def _allocate(self) -> MORESState:
        D, m, dt = self._D, self._m, self.dtype
        eye_m = np.eye(m, dtype=dt)
        return MORESState(
            W=np.zeros((D, m), dtype=dt),
            Omega=eye_m.copy(),
            Omega_inv=eye_m.copy(),
            S=eye_m.copy(),
            S_inv=eye_m.copy(),
            M=np.zeros((D, D), dtype=dt),
            N=np.zeros((D, m), dtype=dt),
            Q=np.zeros((m, m), dtype=dt),
            counts=np.zeros(2, dtype=np.int64),
            work_x=np.zeros(D, dtype=dt),
            work_DD=np.zeros((D, D), dtype=dt),
            work_D=np.zeros((4, D), dtype=dt),
            work_Dm=np.zeros((3, D, m), dtype=dt),
            work_mm=np.zeros((7, m, m), dtype=dt),
            work_m=np.zeros((2, m), dtype=dt),
            work_undo=np.zeros(D * D + D * m + 5 * m * m, dtype=dt),
        )

    def _bind_state(self) -> None:
        s = self._state
        self._args = (
            s.W, s.Omega, s.Omega_inv, s.S, s.S_inv, s.M, s.N, s.Q,
            s.counts, self.C, self.decay, self.gamma, self.tau, self._tol,
            s.work_x, s.work_DD, s.work_D, s.work_Dm, s.work_mm, s.work_m, s.work_undo,
            self._skip,
        )

    @property
    def output_structure_(self) -> np.ndarray:
        """Omega (m x m), the learnt structure of the coefficient change (a copy)."""
        return self._state.Omega.copy()

    @property
    def residual_structure_(self) -> np.ndarray:
        """S (m x m), the learnt structure of the residuals (a copy)."""
        return self._state.S.copy()

    def learn_one(self, x: Any, y: Any) -> np.ndarray:
        """Predict x with the current W, then learn (x, y); return that prediction.

        Parameters
        ----------
        x : array of shape (n_features,)
        y : array of shape (n_outputs,)

        Returns
        -------
        ndarray of shape (n_outputs,)

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); the state is then
            exactly as before the call.
        """
        xr = self._row(x)
        yr = self._target(y)
        out = np.empty(self._m, dtype=np.float64)
        status = _mores_learn_one(xr, yr, self.fit_intercept, *self._args, out)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return out

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        return _mores_learn_many(X, Y, self.fit_intercept, *self._args, out)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4, "n_outputs": 3},
            {"n_features": 3, "n_outputs": 2, "decay": 1.0, "fit_intercept": False, "C": 5.0},
            {"n_features": 5, "n_outputs": 2, "gamma": 0.0, "tau": 10.0, "dtype": "float32"},
        ]


class _LinearMultiOutput(_MultiOutput):
    """SOMOR and PA share their state and kernels (``_kind``: 0, 1, 2)."""

    _kind: int
    _C: float
    epsilon: float

    def _allocate(self) -> SOMORState:
        D, m, dt = self._D, self._m, self.dtype
        return SOMORState(
            W=np.zeros((D, m), dtype=dt),
            counts=np.zeros(2, dtype=np.int64),
            work_x=np.zeros(D, dtype=dt),
            work_m=np.zeros(m, dtype=dt),
            work_bound=np.array([np.nan, 0.0]),
        )

    def _bind_state(self) -> None:
        s = self._state
        self._args = (
            s.W, self._kind, self._C, self.epsilon, s.counts, s.work_x, s.work_m, s.work_bound,
            self._skip,
        )

    def _learn_vector(self, x: Any, y: Any) -> np.ndarray:
        xr = self._row(x)
        yr = self._target(y)
        out = np.empty(self._m, dtype=np.float64)
        status = _lin_learn_one(xr, yr, self.fit_intercept, *self._args, out)
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return out

    def learn_one(self, x: Any, y: Any) -> np.ndarray:
        """Predict x with the current W, then learn (x, y); return that prediction.

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); state unchanged.
        """
        return self._learn_vector(x, y)

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        return _lin_learn_many(X, Y, self.fit_intercept, *self._args, out)


class SOMOR(_LinearMultiOutput):
    r"""Simple online multiple-output regression (SPEC.md section 5.1, "SOMOR").

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

    Notes
    -----
    Fixed memory: D m + D + m values of ``dtype`` plus 16 bytes, D = d + fit_intercept.
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
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self._init_outputs(n_outputs, fit_intercept)
        self.epsilon = check_float("epsilon", epsilon, 0.0, None)
        self._C = 1.0
        self.reset()

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4, "n_outputs": 3},
            {"n_features": 3, "n_outputs": 2, "epsilon": 0.0, "fit_intercept": False},
            {"n_features": 5, "n_outputs": 2, "dtype": "float32"},
        ]


_PA_VARIANTS = {"I": 1, "II": 2}


class PARegressor(_LinearMultiOutput):
    r"""Passive-aggressive regression, PA-I or PA-II (Crammer et al. 2006), per output.

    Each output j has its own weights w_j (column j of W) and its own
    epsilon-insensitive loss l_j = max(0, |y_j - w_j^T x| - epsilon); the step

    .. math::

        w_j \leftarrow w_j + \operatorname{sign}(y_j - w_j^T x)\, \tau_j x, \quad
        \tau_j = \min(C, l_j / \|x\|^2) \ \text{(PA-I)}, \quad
        \tau_j = l_j / (\|x\|^2 + 1/(2C)) \ \text{(PA-II)},

    with x including the constant-1 input when fitting an intercept. The
    paper's PA-I / PA-II baselines of MORES (SPEC.md section 5).

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

    Notes
    -----
    Fixed memory: D m + D + m values of ``dtype`` plus 16 bytes, D = d + fit_intercept.
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
            return float(self._learn_vector(x, yv)[0])
        return self._learn_vector(x, y)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4, "n_outputs": 3},
            {"n_features": 3, "n_outputs": 2, "variant": "II", "C": 0.5, "fit_intercept": False},
            {"n_features": 5, "variant": "II", "dtype": "float32"},
            {"n_features": 4, "variant": "I", "C": 0.1},
        ]


# Kernels here call _linalg's: recompile them when _linalg.py changes (see _jit).
recompile_with(globals(), _linalg_module)
