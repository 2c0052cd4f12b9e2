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
B = (W_{t-1} Omega + C N_t S) Omega^-1. Factor Omega^-1 = K K^T (Cholesky of
the stored Omega^-1). Then S Omega^-1 = S K K^T = K^-T (K^T S K) K^T, and
K^T S K is symmetric positive definite: K^T S K = V diag(s) V^T. So
S Omega^-1 = P diag(s) P^-1 with P = K^-T V, P^-1 = V^T K^T = G^T, G = K V.
With M_t = U diag(l) U^T and Z = U^T W P the equation becomes
Z + C diag(l) Z diag(s) = U^T B P, and B P = RHS K K^T K^-T V = RHS G, hence

    Z_ij = (U^T RHS G)_ij / (1 + C l_i s_j),    W = U Z G^T,

with no triangular solve at all. Both eigenproblems are solved by the cyclic
Jacobi routine of :mod:`edgereg._linalg`. The d x d one is warm-started: the
previous step's eigenvectors U are kept in the state, M_t is rotated into that
basis (U M_t U^T is the previous diagonal plus a rank-one term and a scaling),
and one or two threshold-Jacobi sweeps finish it. The rows of U are
re-orthonormalised (modified Gram-Schmidt) every 64 learnt samples so that
rounding cannot erode the basis over months of updates.

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

from ._base import OnlineModel
from ._jit import kernel
from ._linalg import (
    cholesky,
    congruence,
    jacobi_eigh,
    orthonormalize_rows,
    set_identity,
    spd_inverse,
)
from ._validate import as_row, as_scalar, check_float, check_int

__all__ = ["MORES", "SOMOR", "PARegressor", "MORESState", "SOMORState"]

OK = 0
INVALID = 1

#: The d x d eigenbasis is re-orthonormalised every this many learnt samples.
_REORTHO_PERIOD = 64
#: Cap on Jacobi sweeps (a warm start needs 1-3; a cold start about 6-10).
_MAX_SWEEPS = 30
#: Pivot floor of the Cholesky factorisations: S^-1 and Omega^-1 are >= I in
#: exact arithmetic, so a pivot below this can only come from rounding.
_PIVOT_FLOOR = 1e-12


class MORESState(NamedTuple):
    """Fixed memory of a MORES model (D = d + fit_intercept inputs, m outputs).

    ``3 D^2 + 7 D m + 11 m^2 + 2 D + 2 m`` values of the dtype plus the
    counters (the statistics and learnt matrices, and the scratch of the
    W-step).
    """

    W: np.ndarray  # (D, m) coefficients, last row the intercept when fitted
    Omega: np.ndarray  # (m, m) structure of the coefficient change
    Omega_inv: np.ndarray  # (m, m)
    S: np.ndarray  # (m, m) structure of the residuals
    S_inv: np.ndarray  # (m, m)
    M: np.ndarray  # (D, D) discounted sum of x x^T
    N: np.ndarray  # (D, m) discounted sum of x y^T
    Q: np.ndarray  # (m, m) discounted sum of y y^T
    eigvec: np.ndarray  # (D, D) rows: eigenvectors of M (warm start of the next step)
    eigval: np.ndarray  # (D,) eigenvalues of M, in the order of eigvec's rows
    counts: np.ndarray  # int64 (2,): samples learnt, samples skipped
    work_x: np.ndarray  # (D,) the sample with its constant-1 input
    work_DD: np.ndarray  # (2, D, D) M rotated into the eigenbasis; product scratch
    work_Dm: np.ndarray  # (3, D, m) W_{t-1}; right-hand side; products
    work_mm: np.ndarray  # (7, m, m) K, K^T S K, its eigenvectors, G, E, L, L^-1
    work_m: np.ndarray  # (m,) eigenvalues of K^T S K


class SOMORState(NamedTuple):
    """Fixed memory of SOMOR / PARegressor: ``D m + D + m`` values and the counters."""

    W: np.ndarray  # (D, m) coefficients, last row the intercept when fitted
    counts: np.ndarray  # int64 (2,)
    work_x: np.ndarray  # (D,) the sample with its constant-1 input
    work_m: np.ndarray  # (m,) residual


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
        out[j] = W[d, j] if intercept else 0.0
    for k in range(d):
        xk = xin[k]
        Wk = W[k]
        for j in range(m):
            out[j] += xk * Wk[j]


@kernel
def _mo_predict_many(X, intercept, W, out):
    for t in range(X.shape[0]):
        _mo_predict_one(X[t], intercept, W, out[t])


# ---------------------------------------------------------------------- MORES
@kernel
def _mores_step(
    xin, y, intercept, W, Om, Om_inv, S, S_inv, M, N, Q, U, lam, step,
    C, mu, gamma, tau, tol, work_x, work_DD, work_Dm, work_mm, work_m, yhat,
):
    """One MORES step (SPEC 5.1): predict, update M, N, Q, then W-, S-, Omega-steps.

    ``yhat`` receives the prequential prediction W_{t-1}^T x. Returns OK, or
    INVALID (with nothing but scratch and ``yhat`` written) when the sample is
    not finite. ``step`` is the number of samples learnt so far (drives the
    periodic re-orthonormalisation of the eigenbasis).
    """
    D = W.shape[0]
    m = W.shape[1]
    x = work_x
    ok, xx = _load_and_predict(xin, y, intercept, W, x, yhat)
    if not ok:
        return INVALID

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

    A = work_DD[0]
    T = work_DD[1]
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
    s = work_m

    for k in range(D):
        Wk = W[k]
        W0k = W0[k]
        for j in range(m):
            W0k[j] = Wk[j]

    # -- M_t = U^T diag(l) U (rows of U are the eigenvectors), warm-started
    if step % _REORTHO_PERIOD == _REORTHO_PERIOD - 1:
        orthonormalize_rows(U)
    congruence(U, M, A, T)
    jacobi_eigh(A, U, tol, _MAX_SWEEPS)
    for i in range(D):
        lam[i] = A[i, i]

    # -- S Omega^-1 = G diag(s) G^-1 with Omega^-1 = K K^T, K^T S K = V diag(s) V^T
    # (V's rows are the eigenvectors), G = K [eigenvectors as columns]
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
    for i in range(m):  # G = K V (V's columns are V-rows here)
        Gi = G[i]
        Ki = K[i]
        for j in range(m):
            Vj = V[j]
            acc = 0.0
            for k in range(m):
                acc += Ki[k] * Vj[k]
            Gi[j] = acc

    # -- W-step: RHS = W_{t-1} Omega + C N S; Z = (U RHS G) / (1 + C l_i s_j); W = U^T Z G^T
    for k in range(D):
        W0k = W0[k]
        Nk = N[k]
        R1k = R1[k]
        for j in range(m):
            R1k[j] = 0.0
        for i in range(m):
            a = W0k[i]
            b = C * Nk[i]
            Omi = Om[i]
            Si = S[i]
            for j in range(m):
                R1k[j] += a * Omi[j] + b * Si[j]
    for k in range(D):  # R2 = RHS G
        R1k = R1[k]
        R2k = R2[k]
        for j in range(m):
            R2k[j] = 0.0
        for i in range(m):
            a = R1k[i]
            Gi = G[i]
            for j in range(m):
                R2k[j] += a * Gi[j]
    for i in range(D):  # R1 = (U R2) / (1 + C l_i s_j)
        Ui = U[i]
        R1i = R1[i]
        for j in range(m):
            R1i[j] = 0.0
        for k in range(D):
            u = Ui[k]
            R2k = R2[k]
            for j in range(m):
                R1i[j] += u * R2k[j]
        cl = C * lam[i]
        for j in range(m):
            R1i[j] = R1i[j] / (1.0 + cl * s[j])
    for k in range(D):  # R2 = U^T Z
        R2k = R2[k]
        for j in range(m):
            R2k[j] = 0.0
    for i in range(D):
        Ui = U[i]
        R1i = R1[i]
        for k in range(D):
            u = Ui[k]
            R2k = R2[k]
            for j in range(m):
                R2k[j] += u * R1i[j]
    for k in range(D):  # W = (U^T Z) G^T
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
        for i in range(D):
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
    return OK


@kernel
def _mores_learn_many(
    X, Y, intercept, W, Om, Om_inv, S, S_inv, M, N, Q, U, lam, counts,
    C, mu, gamma, tau, tol, work_x, work_DD, work_Dm, work_mm, work_m, skip, out,
):
    """Learn a block; ``out[t]`` = prequential prediction of row t.

    Returns -1, or the index of the first invalid row when ``skip`` is False
    (rows before it learnt, it and the rows after it untouched).
    """
    for t in range(X.shape[0]):
        status = _mores_step(
            X[t], Y[t], intercept, W, Om, Om_inv, S, S_inv, M, N, Q, U, lam, counts[0],
            C, mu, gamma, tau, tol, work_x, work_DD, work_Dm, work_mm, work_m, out[t],
        )
        if status == OK:
            counts[0] += 1
        elif skip:
            counts[1] += 1
        else:
            return t
    return -1
