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

    ``4 D^2 + 7 D m + 11 m^2 + 2 D + 2 m`` values of the dtype plus the
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
    work_DD: np.ndarray  # (3, D, D) M rotated into the eigenbasis; product scratch
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
    Ut = work_DD[2]
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
    congruence(U, M, A, T, Ut)
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
    # E is PSD in exact arithmetic but formed as a difference of large terms;
    # cancellation can leave eigenvalues of order -eps ||Q||, which would push
    # an eigenvalue of S above 1. Clip them at 0 (E is left bit-for-bit as it
    # is when it is already PSD).
    for i in range(m):
        for j in range(m):
            B[i, j] = E[i, j]
    set_identity(V)
    jacobi_eigh(B, V, tol, _MAX_SWEEPS)
    negative = False
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


@kernel
def _mores_learn_one(
    x, y, intercept, W, Om, Om_inv, S, S_inv, M, N, Q, U, lam, counts,
    C, mu, gamma, tau, tol, work_x, work_DD, work_Dm, work_mm, work_m, skip, out,
):
    status = _mores_step(
        x, y, intercept, W, Om, Om_inv, S, S_inv, M, N, Q, U, lam, counts[0],
        C, mu, gamma, tau, tol, work_x, work_DD, work_Dm, work_mm, work_m, out,
    )
    if status == OK:
        counts[0] += 1
    elif skip:
        counts[1] += 1
    return status


# ---------------------------------------------------------- SOMOR and PA-I/II
@kernel
def _somor_step(xin, y, intercept, W, eps, x, r, yhat):
    """W <- W + x r^T max(0, 1 - eps/||r||) / ||x||^2, r = y - W^T x (SPEC 5.1)."""
    ok, xx = _load_and_predict(xin, y, intercept, W, x, yhat)
    if not ok:
        return INVALID
    D = W.shape[0]
    m = W.shape[1]
    rr = 0.0
    for j in range(m):
        r[j] = y[j] - yhat[j]
        rr += r[j] * r[j]
    rn = np.sqrt(rr)
    if rn > eps and xx > 0.0:
        f = (1.0 - eps / rn) / xx
        for k in range(D):
            a = x[k] * f
            Wk = W[k]
            for j in range(m):
                Wk[j] += a * r[j]
    return OK


@kernel
def _pa_step(xin, y, intercept, W, variant, C, eps, x, r, yhat):
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
    if any_step:
        for k in range(D):
            xk = x[k]
            Wk = W[k]
            for j in range(m):
                Wk[j] += xk * r[j]
    return OK


@kernel
def _lin_learn_one(x, y, intercept, W, kind, C, eps, counts, work_x, work_m, skip, out):
    if kind == 0:
        status = _somor_step(x, y, intercept, W, eps, work_x, work_m, out)
    else:
        status = _pa_step(x, y, intercept, W, kind, C, eps, work_x, work_m, out)
    if status == OK:
        counts[0] += 1
    elif skip:
        counts[1] += 1
    return status


@kernel
def _lin_learn_many(X, Y, intercept, W, kind, C, eps, counts, work_x, work_m, skip, out):
    """Block kernel of SOMOR (kind 0), PA-I (kind 1) and PA-II (kind 2)."""
    for t in range(X.shape[0]):
        status = _lin_learn_one(
            X[t], Y[t], intercept, W, kind, C, eps, counts, work_x, work_m, skip, out[t]
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
        self._row_shape = (self.n_features,)
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
    def _row(self, x: Any) -> np.ndarray:
        if type(x) is np.ndarray and x.dtype is self.dtype and x.shape == self._row_shape:
            if x.flags.c_contiguous:
                return x
        return as_row(x, self.n_features, self.dtype)

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

    * W-step: W Omega + C M_t W S = W_{t-1} Omega + C N_t S, solved exactly
      with the eigendecomposition of M_t (warm-started Jacobi) and that of
      K^T S K (Omega^-1 = K K^T), see the module notes;
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
        Weight of the discounted Mahalanobis loss against the change of W.
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
    Fixed memory, with D = d + fit_intercept: 4 D^2 + 7 D m + 11 m^2 + 2 D + 2 m
    values of ``dtype`` plus 16 bytes (d = 21, m = 7, float64: 28.9 KB).
    Cost per sample O(D^3 + m^3): the rotation of M_t into the previous
    eigenbasis (1.5 D^3) and one to three Jacobi sweeps.

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
        self.C = check_float("C", C, 0.0, None, low_open=True)
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
            eigvec=np.eye(D, dtype=dt),
            eigval=np.zeros(D, dtype=dt),
            counts=np.zeros(2, dtype=np.int64),
            work_x=np.zeros(D, dtype=dt),
            work_DD=np.zeros((3, D, D), dtype=dt),
            work_Dm=np.zeros((3, D, m), dtype=dt),
            work_mm=np.zeros((7, m, m), dtype=dt),
            work_m=np.zeros(m, dtype=dt),
        )

    def _bind_state(self) -> None:
        s = self._state
        self._args = (
            s.W, s.Omega, s.Omega_inv, s.S, s.S_inv, s.M, s.N, s.Q, s.eigvec, s.eigval,
            s.counts, self.C, self.decay, self.gamma, self.tau, self._tol,
            s.work_x, s.work_DD, s.work_Dm, s.work_mm, s.work_m, self._skip,
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
        )

    def _bind_state(self) -> None:
        s = self._state
        self._args = (
            s.W, self._kind, self._C, self.epsilon, s.counts, s.work_x, s.work_m, self._skip
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
