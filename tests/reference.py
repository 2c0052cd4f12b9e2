"""Slow, obviously-correct references for every kernel (stumpy's tests/naive.py idea).

Written straight from the equations of docs/algorithms/ with NumPy and SciPy, without
any of the tricks the kernels use. One section per model; tests compare a
kernel with its reference after every step of a stream.
"""

from __future__ import annotations

import math

import numpy as np

# The refresh schedule's one constant, shared rather than copied: it defines
# which refreshes the objective holds, not arithmetic the tests check.
from edgereg._kernels.prior import _WIDTH_SLACK

# ----------------------------------------------------------------------------
# DFOP (docs/algorithms/dfop.md)
# ----------------------------------------------------------------------------


def dfop_closed_form(
    X: np.ndarray,
    y: np.ndarray,
    mu: np.ndarray | float,
    p0: float,
    *,
    keep_prior: bool = False,
    period: int = 1,
) -> np.ndarray:
    """Minimiser of the discounted least squares after every step.

    w_t = argmin_w  Lambda_t / p0 ||w||^2
                    + sum_{i<=t} (prod_{j=i+1..t} lambda_j) [(y_i - w^T x_i)^2 + rho_i w_{k_i}^2]

    with lambda_j = 1 - mu_j and Lambda_t = prod_{j<=t} lambda_j (the prior
    P0 = p0 I discounted like the data). rho_i = 0 unless ``keep_prior``: then
    every ``period`` steps the next ``width`` coordinates (cycling 0, 1, ...,
    d-1; width = ceil(d f / 2) clipped to [1, d], f the sum of mu since the
    previous refresh, an integer raised by rounding alone, within a relative
    ``_WIDTH_SLACK``, counting as that integer) each get rho = d f / p0 /
    width (edgereg.dfop's prior refresh; the term above is then a sum over
    those coordinates). Solved directly for each t from the explicitly
    weighted normal equations.
    Returns W of shape (n, d), row t the solution after learning samples 0..t.
    """
    n, d = X.shape
    mu_arr = np.asarray(mu, dtype=np.float64) * np.ones(n)
    lam = 1.0 - mu_arr
    refreshes: list[list[tuple[int, float]]] = [[] for _ in range(n)]  # (coordinate, rho)
    if keep_prior:
        forgotten, since, k = 0.0, 0, 0
        for t in range(n):
            forgotten += mu_arr[t]
            since += 1
            if since >= period and forgotten > 0.0:
                width = min(d, max(1, math.ceil(d * forgotten / 2.0 * (1.0 - _WIDTH_SLACK))))
                rho = d * forgotten / p0 / width
                refreshes[t] = [((k + i) % d, rho) for i in range(width)]
                forgotten, since, k = 0.0, 0, (k + width) % d
    W = np.empty((n, d))
    for t, (R, b) in enumerate(_dfop_normal_equations(X, y, lam, p0, refreshes)):
        W[t] = np.linalg.solve(R, b)
    return W


def _dfop_normal_equations(X, y, lam, p0, refreshes):
    """(R_t, b_t) after every step t: R_t w_t = b_t, R_t = P_t^{-1}."""
    n, d = X.shape
    for t in range(n):
        # weight of step i's terms at time t: prod_{j=i+1..t} lambda_j
        weights = np.array([np.prod(lam[i + 1 : t + 1]) for i in range(t + 1)])
        R = np.prod(lam[: t + 1]) / p0 * np.eye(d) + (X[: t + 1].T * weights) @ X[: t + 1]
        for i in range(t + 1):
            for coordinate, rho in refreshes[i]:
                R[coordinate, coordinate] += weights[i] * rho
        b = (X[: t + 1].T * weights) @ y[: t + 1]
        yield R, b


def dfop_interval_reference(
    X: np.ndarray, y: np.ndarray, mu: float, p0: float, coverage: float, eta: float,
    q0: float,
) -> tuple[np.ndarray, np.ndarray]:
    """DFOP's prequential intervals from the equations (keep_prior=False, no reset).

    Before step t: w = R^{-1} b and P = R^{-1} of the steps before (P = p0 I
    at first), yhat = w^T x, v = (lambda + x^T P x) / lambda; the noise level
    sigma^2 = S / N with N = sum_i lambda^(t-1-i), S = sum_i lambda^(t-1-i)
    e_i^2 / v_i over the steps before; the interval yhat -+ q sqrt(sigma^2 v)
    (infinite before the first residual); then miss = |e| > q sqrt(sigma^2 v)
    and q <- q + eta (miss - (1 - coverage)). Returns (bands (n, 3), the
    bookkeeping after every step (n, 6): N, S, scored, q, covered, 0 imputed).
    """
    n, d = X.shape
    lam = 1.0 - mu
    lams = np.full(n, lam)
    no_refresh: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    systems = list(_dfop_normal_equations(X, y, lams, p0, no_refresh))
    bands = np.empty((n, 3))
    book = np.zeros((n, 6))
    N = S = scored = covered = 0.0
    q = q0
    for t in range(n):
        if t == 0:
            w, P = np.zeros(d), p0 * np.eye(d)
        else:
            R, b = systems[t - 1]
            w, P = np.linalg.solve(R, b), np.linalg.inv(R)
        x = X[t]
        yhat = w @ x
        v = (lam + x @ P @ x) / lam
        half = np.inf if N == 0 else max(q, 0.0) * np.sqrt(S / N * v)
        bands[t] = yhat - half, yhat, yhat + half
        e = y[t] - yhat
        if N > 0:
            miss = abs(e) > q * np.sqrt(S / N * v)
            q += eta * (float(miss) - (1.0 - coverage))
            scored += 1
            covered += not miss
        N = lam * N + 1.0
        S = lam * S + e * e / v
        book[t, :5] = N, S, scored, q, covered
    return bands, book


def residual_interval_reference(
    yhat: np.ndarray, y: np.ndarray, lam: float, coverage: float, eta: float, q0: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The prequential intervals of a model without a leverage term (v = 1: MORES, per
    output), from the equations, given its predictions yhat.

    Before step t: sigma^2 = S / N, N = sum_i lam^(t-1-i), S = sum_i lam^(t-1-i) e_i^2
    over the steps before; the interval yhat -+ q sigma (infinite before the first
    residual); then miss = |e| > q sigma and q <- q + eta (miss - (1 - coverage)).
    Returns (bands (n, 3), the bookkeeping after every step (n, 6))."""
    n = len(y)
    bands = np.empty((n, 3))
    book = np.zeros((n, 6))
    N = S = scored = covered = 0.0
    q = q0
    for t in range(n):
        half = np.inf if N == 0 else max(q, 0.0) * np.sqrt(S / N)
        bands[t] = yhat[t] - half, yhat[t], yhat[t] + half
        e = y[t] - yhat[t]
        if N > 0:
            miss = abs(e) > q * np.sqrt(S / N)
            q += eta * (float(miss) - (1.0 - coverage))
            scored += 1
            covered += not miss
        N = lam * N + 1.0
        S = lam * S + e * e
        book[t, :5] = N, S, scored, q, covered
    return bands, book


def dfop_canonical_with_reset(
    X: np.ndarray, y: np.ndarray, mu: float, p0: float, cap: float
) -> tuple[np.ndarray, int]:
    """keep_prior=False in information form: R <- lambda R + x x^T, z <- lambda z + x y.

    After each step, for i = 0..d-1 in order: if (R^-1)_ii > cap, coordinate
    i is reset to the prior by the pseudo-observation "w_i = 0" with weight
    rho = 1/p0 - 1/(R^-1)_ii (R_ii += rho, z unchanged), which brings
    (R^-1)_ii back to p0. w = R^-1 z solved directly. Returns W of shape
    (n, d), row t the solution after sample t, and the number of resets.
    """
    n, d = X.shape
    lam = 1.0 - mu
    R = np.eye(d) / p0
    z = np.zeros(d)
    W = np.empty((n, d))
    resets = 0
    for t in range(n):
        R = lam * R + np.outer(X[t], X[t])
        z = lam * z + X[t] * y[t]
        for i in range(d):
            variance = np.linalg.inv(R)[i, i]
            if variance > cap:
                R[i, i] += 1.0 / p0 - 1.0 / variance
                resets += 1
        W[t] = np.linalg.solve(R, z)
    return W, resets


def dfop_float32_step(P: np.ndarray, w: np.ndarray, x: np.ndarray, y: float, lam: float,
                      careful_from: float, float32_arithmetic: bool) -> bool:
    """One G-DFOP step of a float32 model, rounding where the kernel rounds.

    P (d x d) and w are float32 and updated in place; returns whether the step
    was a careful one. Every operation on float32 arrays rounds to float32, as
    the kernel's do: Px = P x summed row by row in float32, w^T x and x^T P x
    in float64, u = Px sqrt(c) rounded to float32, P <- (P - u u^T) / lam in
    float32 (1 / lam rounded once; below d = 25 P <- (P - (Px Px^T) c) / lam,
    c rounded once). Without ``float32_arithmetic``, and when x^T P x >
    careful_from lam, the step is the float64 one instead: Px in float64,
    P <- (P - Px Px^T c) / lam (or with u, from d = 25) in float64, rounded
    once into P. For the bit-level test only: no guards, no refresh (the
    caller's stream needs neither).
    """
    f32, f64 = np.float32, np.float64
    d = x.shape[0]
    careful = True
    if float32_arithmetic:
        Px = np.zeros(d, dtype=f32)
        for i in range(d):
            Px = Px + x[i] * P[i]
        xPx = 0.0
        for j in range(d):
            xPx += f64(x[j]) * f64(Px[j])
        careful = xPx > careful_from * lam
    if careful:
        Px = np.zeros(d)
        for i in range(d):
            Px = Px + f64(x[i]) * P[i].astype(f64)
        xPx = 0.0
        for j in range(d):
            xPx += f64(x[j]) * Px[j]
    yhat = 0.0
    for j in range(d):
        yhat += f64(w[j]) * f64(x[j])
    c = 1.0 / (lam + xPx)
    g = (y - yhat) * c
    w[:] = (w.astype(f64) + Px.astype(f64) * g).astype(f32)
    if careful:
        if d < 25:
            new = (P.astype(f64) - np.outer(Px, Px) * c) * (1.0 / lam)
        else:
            u = Px * math.sqrt(c)
            new = (P.astype(f64) - np.outer(u, u)) * (1.0 / lam)
        P[:] = new.astype(f32)
    elif d < 25:
        P[:] = (P - np.outer(Px, Px) * f32(c)) * f32(1.0 / lam)
    else:
        u = (Px.astype(f64) * math.sqrt(c)).astype(f32)
        invlam = f32(1.0 / lam)
        P[:] = (P - np.outer(u, u)) * invlam
    return careful


def textbook_rls(
    X: np.ndarray, y: np.ndarray, lam: float, p0: float
) -> tuple[np.ndarray, np.ndarray]:
    """The textbook forgetting-RLS update, P <- (P - k (Px)^T) / lambda, as printed.

    Kept as the control of the robustness tests: it loses symmetry in
    rounding and diverges. Returns (predictions, final P).
    """
    n, d = X.shape
    w = np.zeros(d)
    P = p0 * np.eye(d)
    pred = np.empty(n)
    for t in range(n):
        x = X[t]
        pred[t] = w @ x
        Px = P @ x
        k = Px / (lam + x @ Px)
        w = w + k * (y[t] - pred[t])
        P = (P - np.outer(k, Px)) / lam
    return pred, P


# ----------------------------------------------------------------------------
# NORMA (docs/algorithms/norma.md)
# ----------------------------------------------------------------------------


def norma_kernel(kernel: str, a: np.ndarray, b: np.ndarray, gamma: float, degree: int,
                 coef0: float) -> float:
    """k(a, b) written from its definition."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if kernel == "rbf":
        return float(np.exp(-gamma * np.sum((a - b) ** 2)))
    if kernel == "laplacian":
        return float(np.exp(-gamma * np.sum(np.abs(a - b))))
    if kernel == "polynomial":
        return float((gamma * np.dot(a, b) + coef0) ** degree)
    if kernel == "linear":
        return float(np.dot(a, b))
    raise ValueError(kernel)


def norma(
    X: np.ndarray,
    Y: np.ndarray | None,
    *,
    variant: str,
    kernel: str = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 1.0,
    eta: float = 0.1,
    lam: float = 0.01,
    schedule: str = "constant",
    fit_offset: bool = True,
    nu: float | None = None,
    rho0: float = 0.0,
    budget: int | None = None,
) -> dict[str, list]:
    """NORMA written naively from docs/algorithms/norma.md: a Python list of terms.

    ``variant`` is one of "hinge", "hinge_nu", "novelty", "squared",
    "epsilon", "epsilon_nu", "huber", "huber_nu"; ``rho0`` is the initial
    margin / epsilon / sigma. Every alpha_i is multiplied by (1 - eta_t lambda)
    at every step (no scale factor). With ``budget``, the oldest term is
    removed from the expansion when there are more than ``budget`` (the
    truncated model learns from its own predictions); the removed terms are
    kept aside, decaying like the others, to measure the truncation.

    Returns per-step lists: "score" (g(x_t) before the update; f - rho for
    novelty), "coef" (effective alphas after the step, oldest first), "sv",
    "rho", "b", "active", and with a budget "dropped_l1" (sum over removed
    terms of |alpha_i| sqrt(k(x_i, x_i))) and "full_score" (the prediction of
    the expansion with the removed terms put back).
    """
    n = X.shape[0]
    terms: list[list] = []  # [x_i, alpha_i]
    dropped: list[list] = []
    b = 0.0
    rho = rho0
    out: dict[str, list] = {k: [] for k in ("score", "coef", "sv", "rho", "b", "active",
                                            "dropped_l1", "full_score")}

    def k(a, c):
        return norma_kernel(kernel, a, c, gamma, degree, coef0)

    for t in range(n):
        x = np.asarray(X[t], dtype=np.float64)
        y = 0.0 if Y is None else float(Y[t])
        eta_t = eta if schedule == "constant" else eta / np.sqrt(t + 1)
        f = sum(a * k(xi, x) for xi, a in terms)
        g = f + b
        if budget is not None:
            out["full_score"].append(g + sum(a * k(xi, x) for xi, a in dropped))
        alpha = 0.0
        active = False
        if variant in ("hinge", "hinge_nu"):
            active = y * g <= rho
            alpha = eta_t * y if active else 0.0
            if variant == "hinge_nu":
                rho = rho - eta_t * (1 - nu) if active else rho + eta_t * nu
            score = g
        elif variant == "novelty":
            score = f - rho
            active = f < rho
            alpha = eta_t if active else 0.0
            rho = rho - eta_t * (1 - nu) if active else rho + eta_t * nu
        else:
            score = g
            delta = y - g
            if variant == "squared":
                alpha = eta_t * delta
                active = alpha != 0.0
            else:
                active = abs(delta) > rho
                if active:
                    alpha = eta_t * np.sign(delta)
                elif variant.startswith("huber") and rho > 0:
                    alpha = eta_t * delta / rho
                if variant.endswith("_nu"):
                    rho = rho + eta_t * (1 - nu) if active else rho - eta_t * nu
        for term in terms:
            term[1] *= 1.0 - eta_t * lam
        for term in dropped:
            term[1] *= 1.0 - eta_t * lam
        if alpha != 0.0:
            terms.append([x.copy(), alpha])
        if budget is not None and len(terms) > budget:
            dropped.append(terms.pop(0))
        if fit_offset:
            b += alpha
        out["score"].append(score)
        out["coef"].append(np.array([a for _, a in terms]))
        out["sv"].append(np.array([xi for xi, _ in terms]).reshape(len(terms), X.shape[1]))
        out["rho"].append(rho)
        out["b"].append(b)
        out["active"].append(active)
        out["dropped_l1"].append(sum(abs(a) * np.sqrt(k(xi, xi)) for xi, a in dropped))
    return out


# ----------------------------------------------------------------------------
# MORES, SOMOR, PA-I/II (docs/algorithms/mores.md and 5.1)
# ----------------------------------------------------------------------------


def mores_augment(X: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """Append the constant-1 input column when fitting an intercept."""
    X = np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X


def mores_statistics(X: np.ndarray, Y: np.ndarray, mu: float) -> tuple[np.ndarray, ...]:
    """M, N, Q as explicitly weighted sums: sum_i mu^(t-i) x_i x_i^T, ... (0^0 = 1)."""
    t = X.shape[0] - 1
    w = np.array([1.0 if t == i else mu ** (t - i) for i in range(t + 1)])
    M = (X.T * w) @ X
    N = (X.T * w) @ Y
    Q = (Y.T * w) @ Y
    return M, N, Q


def mores_E(W: np.ndarray, M: np.ndarray, N: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """E_t(W) = W^T M W - W^T N - N^T W + Q."""
    return W.T @ M @ W - W.T @ N - N.T @ W + Q


def logdet_divergence(X: np.ndarray, Y: np.ndarray) -> float:
    """Dld(X, Y) = tr(X Y^-1) - log det(X Y^-1) - m."""
    XY = X @ np.linalg.inv(Y)
    return float(np.trace(XY) - np.linalg.slogdet(XY)[1] - X.shape[0])


def mores_objective(W, Om, S, W0, Om0, S0, M, N, Q, C, gamma, tau) -> float:
    """The section 5.1 objective, evaluated literally."""
    I = np.eye(S.shape[0])
    Dw = W - W0
    return float(
        0.5 * np.trace(Dw @ Om @ Dw.T)
        + 0.5 * C * np.trace(S @ mores_E(W, M, N, Q))
        + gamma * (logdet_divergence(S, S0) + logdet_divergence(Om, Om0))
        + tau * (logdet_divergence(S, I) + logdet_divergence(Om, I))
    )


def mores_gradients(W, Om, S, W0, Om0, S0, M, N, Q, C, gamma, tau):
    """Gradients of the section 5.1 objective in W, S and Omega (symmetric M, S, Omega).

    d/dW     = (W - W0) Omega + C (M W S - N S)
    d/dS     = (C/2) E(W) + gamma (S0^-1 - S^-1) + tau (I - S^-1)
    d/dOmega = (1/2) D^T D + gamma (Omega0^-1 - Omega^-1) + tau (I - Omega^-1)
    """
    I = np.eye(S.shape[0])
    Dw = W - W0
    gW = Dw @ Om + C * (M @ W @ S - N @ S)
    Si = np.linalg.inv(S)
    gS = 0.5 * C * mores_E(W, M, N, Q) + gamma * (np.linalg.inv(S0) - Si) + tau * (I - Si)
    Oi = np.linalg.inv(Om)
    gO = 0.5 * Dw.T @ Dw + gamma * (np.linalg.inv(Om0) - Oi) + tau * (I - Oi)
    return gW, gS, gO


def mores_w_step_kron(W0, Om, S, M, N, C) -> np.ndarray:
    """Solve W Omega + C M W S = W0 Omega + C N S in vectorised Kronecker form.

    vec(A W B) = (B^T kron A) vec(W) (column-major vec): the system is
    (Omega kron I + C S kron M) vec(W) = vec(W0 Omega + C N S).
    """
    d, m = W0.shape
    A = np.kron(Om.T, np.eye(d)) + C * np.kron(S.T, M)
    rhs = (W0 @ Om + C * N @ S).reshape(-1, order="F")
    return np.linalg.solve(A, rhs).reshape((d, m), order="F")


def mores_w_step_eigh(W0, Om, S, M, N, C) -> np.ndarray:
    """The W-step by two (generalised) symmetric eigenproblems (SciPy).

    M = U diag(l) U^T; S V = Omega V diag(s) with V^T Omega V = I, so that
    S Omega^-1 = (Omega V) diag(s) V^T. Then Z = U^T RHS V / (1 + C l_i s_j)
    and W = U Z V^T.
    """
    import scipy.linalg

    l, U = scipy.linalg.eigh(M)
    s, V = scipy.linalg.eigh(S, Om)
    Z = U.T @ (W0 @ Om + C * N @ S) @ V / (1.0 + C * np.outer(l, s))
    return U @ Z @ V.T


def mores_reference(X, Y, C=1.0, mu=0.99, gamma=1.0, tau=100.0, fit_intercept=True):
    """Full reference MORES: the states after every step, straight from docs/algorithms/mores.md.

    Returns a list of dicts with keys W, S, Omega, M, N, Q, yhat (the
    prequential prediction of that step). M, N, Q are recomputed as explicit
    weighted sums every step; W by SciPy eigh; S and Omega by np.linalg.inv.
    """
    Xa = mores_augment(X, fit_intercept)
    Y = np.asarray(Y, dtype=np.float64)
    n, D = Xa.shape
    m = Y.shape[1]
    I = np.eye(m)
    W = np.zeros((D, m))
    S = I.copy()
    Om = I.copy()
    out = []
    for t in range(n):
        yhat = W.T @ Xa[t]
        M, N, Q = mores_statistics(Xa[: t + 1], Y[: t + 1], mu)
        W0 = W
        W = mores_w_step_eigh(W0, Om, S, M, N, C)
        S_inv = (gamma * np.linalg.inv(S) + tau * I + 0.5 * C * mores_E(W, M, N, Q)) / (gamma + tau)
        S = np.linalg.inv(S_inv)
        Dw = W - W0
        Om_inv = (gamma * np.linalg.inv(Om) + tau * I + 0.5 * Dw.T @ Dw) / (gamma + tau)
        Om = np.linalg.inv(Om_inv)
        out.append({"W": W, "S": S, "Omega": Om, "M": M, "N": N, "Q": Q, "yhat": yhat})
    return out


def somor_reference(X, Y, epsilon, fit_intercept=True):
    """SOMOR: W_t = argmin 1/2 ||W - W_{t-1}||_F^2 s.t. ||y - W^T x|| <= eps.

    Written as the projection it is: if the constraint holds, W is unchanged;
    else W moves along x r^T until ||r_new|| = eps. Returns (W after each
    step, predictions).
    """
    Xa = mores_augment(X, fit_intercept)
    n, D = Xa.shape
    W = np.zeros((D, Y.shape[1]))
    Ws, preds = [], []
    for t in range(n):
        x = Xa[t]
        yhat = W.T @ x
        r = Y[t] - yhat
        if np.linalg.norm(r) > epsilon:
            # the step alpha x r^T shrinks the residual to (1 - alpha ||x||^2) r
            alpha = (1.0 - epsilon / np.linalg.norm(r)) / (x @ x)
            W = W + alpha * np.outer(x, r)
        Ws.append(W.copy())
        preds.append(yhat)
    return np.array(Ws), np.array(preds)


def pa_reference(X, Y, variant, C, epsilon, fit_intercept=True):
    """PA-I / PA-II regression (Crammer et al. 2006, figure 1 and eq. 8) per output."""
    Xa = mores_augment(X, fit_intercept)
    Y = np.asarray(Y, dtype=np.float64).reshape(Xa.shape[0], -1)
    n, D = Xa.shape
    W = np.zeros((D, Y.shape[1]))
    Ws, preds = [], []
    for t in range(n):
        x = Xa[t]
        yhat = W.T @ x
        for j in range(Y.shape[1]):
            loss = max(0.0, abs(Y[t, j] - yhat[j]) - epsilon)
            if variant == "I":
                step = min(C, loss / (x @ x))
            else:
                step = loss / (x @ x + 1.0 / (2.0 * C))
            W[:, j] += np.sign(Y[t, j] - yhat[j]) * step * x
        Ws.append(W.copy())
        preds.append(yhat)
    return np.array(Ws), np.array(preds)


class MORESFloat32Reference:
    """MORES' float32-only arithmetic, one NumPy float32 scalar operation at a time
    (IEEE single, correctly rounded, like the FPU): the step of docs/design/mores.md
    with every sum in index order, one row at a time.

    Per sample (x with its constant 1 when fitting an intercept): x^T x, y^T y and
    yhat = W^T x must be finite. Then M = mu M + x x^T, N = mu N + x y^T,
    Q = mu Q + y y^T; the W-step: Omega^-1 = K K^T (Cholesky), K^T S K = V^T diag(s) V
    (cyclic Jacobi), G = K V^T, R = W_{t-1} (Omega G) + N (C S G), M = Q_h T Q_h^T
    (Householder, Golub & Van Loan 8.3.1), y_j = Q_h (I + C s_j T)^-1 Q_h^T r_j (LDL^T
    of the tridiagonal without pivoting), W = Y G^T; the S-step with
    E = W^T (M W - N) - N^T W + Q clipped PSD by Jacobi unless E - 100 m^2 tol ||E||_F I
    has a Cholesky factor; the Omega-step with D = W - W_{t-1}; the inverses through
    L^-1 (S^-1 = (gamma S^-1 + C/2 E + tau I) / (gamma + tau), its inverse
    L^-T L^-1, and so for Omega). A step that leaves any value non-finite is undone.
    ``learn(x, y)`` returns (prediction, learnt).
    """

    NAMES = ("W", "Om", "Om_inv", "S", "S_inv", "M", "N", "Q")

    def __init__(self, D, m, C, mu, gamma, tau, tol, intercept):
        f = np.float32
        self.C, self.mu, self.gamma, self.tau, self.tol = f(C), f(mu), f(gamma), f(tau), f(tol)
        self.intercept = intercept
        self.W = np.zeros((D, m), f)
        self.M = np.zeros((D, D), f)
        self.N = np.zeros((D, m), f)
        self.Q = np.zeros((m, m), f)
        self.Om, self.Om_inv, self.S, self.S_inv = (np.eye(m, dtype=f) for _ in range(4))
        self.seen = self.skipped = 0

    # -- the routines, one float32 operation at a time
    @staticmethod
    def _cholesky(A, shift, floor, stop):
        """Lower L with L L^T = A - shift I; a pivot not above floor: None if stop, else floor."""
        f = np.float32
        n = A.shape[0]
        L = np.zeros_like(A)
        for j in range(n):
            d = f(A[j, j] - shift)
            for k in range(j):
                d = f(d - f(L[j, k] * L[j, k]))
            if not d > floor:
                if stop:
                    return None
                d = floor
            L[j, j] = np.sqrt(d)
            inv = f(f(1) / L[j, j])
            for i in range(j + 1, n):
                acc = A[i, j]
                for k in range(j):
                    acc = f(acc - f(L[i, k] * L[j, k]))
                L[i, j] = f(acc * inv)
        return L

    @classmethod
    def _spd_inverse(cls, A, floor):
        """A^-1 = L^-T L^-1 (L^-1 by forward substitution), exactly symmetric."""
        f = np.float32
        n = A.shape[0]
        L = cls._cholesky(A, f(0), floor, False)
        X = np.zeros_like(A)
        for i in range(n):
            X[i, i] = f(f(1) / L[i, i])
            for k in range(i):
                for j in range(k + 1):
                    X[i, j] = f(X[i, j] - f(L[i, k] * X[k, j]))
            for j in range(i):
                X[i, j] = f(X[i, j] * X[i, i])
        out = np.zeros_like(A)
        for i in range(n):
            for j in range(i, n):
                acc = f(0)
                for k in range(j, n):
                    acc = f(acc + f(X[k, i] * X[k, j]))
                out[i, j] = out[j, i] = acc
        return out

    def _jacobi(self, A):
        """Cyclic Jacobi: A diagonalised in place (threshold tol ||A||_F), V's rows rotated."""
        f = np.float32
        n = A.shape[0]
        V = np.eye(n, dtype=f)
        frob = f(0)
        for i in range(n):
            for j in range(n):
                frob = f(frob + f(A[i, j] * A[i, j]))
        frob = np.sqrt(frob)
        thr = f(self.tol * frob)
        if not frob > 0:
            return V
        for _ in range(30):
            rotated = False
            for p in range(n - 1):
                for q in range(p + 1, n):
                    apq = A[p, q]
                    if abs(apq) <= thr:
                        continue
                    rotated = True
                    app, aqq = A[p, p], A[q, q]
                    theta = f(f(aqq - app) / f(f(2) * apq))
                    if abs(theta) > f(1e18):
                        t = f(f(0.5) / theta)
                    else:
                        t = f(f(1) / f(abs(theta) + np.sqrt(f(f(1) + f(theta * theta)))))
                        t = -t if theta < 0 else t
                    c = f(f(1) / np.sqrt(f(f(1) + f(t * t))))
                    s = f(t * c)
                    for k in range(n):
                        if k in (p, q):
                            continue
                        akp, akq = A[p, k], A[q, k]
                        A[p, k] = A[k, p] = f(f(c * akp) - f(s * akq))
                        A[q, k] = A[k, q] = f(f(s * akp) + f(c * akq))
                    A[p, p] = f(app - f(t * apq))
                    A[q, q] = f(aqq + f(t * apq))
                    A[p, q] = A[q, p] = f(0)
                    for k in range(n):
                        vp, vq = V[p, k], V[q, k]
                        V[p, k] = f(f(c * vp) - f(s * vq))
                        V[q, k] = f(f(s * vp) + f(c * vq))
            if not rotated:
                break
        return V

    @staticmethod
    def _tridiagonalize(M):
        """Householder vectors (rows of A), betas, diagonal and off-diagonal of T."""
        f = np.float32
        n = M.shape[0]
        A = np.triu(M).astype(f)
        diag, off, beta, p = (np.zeros(n, f) for _ in range(4))
        for k in range(n - 2):
            diag[k] = A[k, k]
            x0 = A[k, k + 1]
            ss = f(0)
            for i in range(k + 2, n):
                ss = f(ss + f(A[k, i] * A[k, i]))
            if ss == 0:
                beta[k], off[k] = f(0), x0
                continue
            nrm = np.sqrt(f(f(x0 * x0) + ss))
            alpha = -nrm if x0 >= 0 else nrm
            off[k] = alpha
            A[k, k + 1] = f(x0 - alpha)
            b = f(f(1) / f(nrm * f(nrm + abs(x0))))
            beta[k] = b
            v = A[k]
            p[k + 1:] = 0
            for r in range(k + 1, n):  # p = b A22 v, A22 from its upper triangle, row by row
                acc = f(A[r, r] * v[r])
                vr = f(b * v[r])
                for i in range(r + 1, n):
                    acc = f(acc + f(A[r, i] * v[i]))
                    p[i] = f(p[i] + f(vr * A[r, i]))
                p[r] = f(p[r] + f(b * acc))
            pv = f(0)
            for i in range(k + 1, n):
                pv = f(pv + f(p[i] * v[i]))
            h = f(f(f(0.5) * b) * pv)
            for i in range(k + 1, n):
                p[i] = f(p[i] - f(h * v[i]))
            for i in range(k + 1, n):  # A22 -= v w^T + w v^T, upper triangle
                for j in range(i, n):
                    A[i, j] = f(A[i, j] - f(f(v[i] * p[j]) + f(p[i] * v[j])))
        if n >= 2:
            diag[n - 2], off[n - 2] = A[n - 2, n - 2], A[n - 2, n - 1]
        diag[n - 1] = A[n - 1, n - 1]
        return A, beta, diag, off

    @staticmethod
    def _reflect(A, beta, R, transpose):
        """R <- Q^T R (transpose) or Q R, Q = H_0 ... H_{n-3}, H_k = I - beta_k v_k v_k^T."""
        f = np.float32
        n, m = R.shape
        for kk in range(n - 2):
            k = kk if transpose else n - 3 - kk
            if beta[k] == 0:
                continue
            for j in range(m):
                t = f(0)
                for i in range(k + 1, n):
                    t = f(t + f(A[k, i] * R[i, j]))
                t = f(t * beta[k])
                for i in range(k + 1, n):
                    R[i, j] = f(R[i, j] - f(A[k, i] * t))

    @staticmethod
    def _tridiagonal_solve(diag, off, c, R):
        """R[:, j] <- (I + c_j T)^-1 R[:, j]: LDL^T elimination, no pivoting."""
        f = np.float32
        n, m = R.shape
        piv = np.zeros_like(R)
        for j in range(m):
            piv[0, j] = f(f(1) + f(c[j] * diag[0]))
            for i in range(1, n):
                e = f(c[j] * off[i - 1])
                g = f(e / piv[i - 1, j])
                piv[i, j] = f(f(f(1) + f(c[j] * diag[i])) - f(g * e))
                R[i, j] = f(R[i, j] - f(g * R[i - 1, j]))
            R[n - 1, j] = f(R[n - 1, j] / piv[n - 1, j])
            for i in range(n - 2, -1, -1):
                R[i, j] = f(f(R[i, j] - f(f(c[j] * off[i]) * R[i + 1, j])) / piv[i, j])

    @staticmethod
    def _product(A, B):
        """A B, each entry summed in index order from 0."""
        f = np.float32
        out = np.zeros((A.shape[0], B.shape[1]), f)
        for i in range(A.shape[0]):
            for j in range(B.shape[1]):
                acc = f(0)
                for k in range(A.shape[1]):
                    acc = f(acc + f(A[i, k] * B[k, j]))
                out[i, j] = acc
        return out

    # -- the step
    def learn(self, x, y):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            ok, yhat = self._step(np.asarray(x, np.float32),
                                  np.asarray(y, np.float64).astype(np.float32))
        if ok:
            self.seen += 1
        else:
            self.skipped += 1
        return yhat, ok

    def _step(self, x, y):
        f = np.float32
        D, m = self.W.shape
        xa = np.concatenate([x, [f(1)]]).astype(f) if self.intercept else x
        xx = yy = f(0)
        for v in xa:
            xx = f(xx + f(v * v))
        for v in y:
            yy = f(yy + f(v * v))
        yhat = np.zeros(m, f)
        for j in range(m):
            for k in range(D):
                yhat[j] = f(yhat[j] + f(xa[k] * self.W[k, j]))
        if not (np.isfinite(xx) and np.isfinite(yy) and np.isfinite(yhat).all()):
            return False, yhat
        before = {n: getattr(self, n).copy() for n in self.NAMES}
        self._update(xa, y)
        if all(np.isfinite(getattr(self, n)).all() for n in self.NAMES):
            return True, yhat
        for n, v in before.items():
            setattr(self, n, v)
        return False, yhat

    def _update(self, x, y):
        f = np.float32
        C, mu, gamma, tau = self.C, self.mu, self.gamma, self.tau
        D, m = self.W.shape
        floor = f(1e-12)
        for i in range(D):
            for j in range(D):
                self.M[i, j] = f(f(mu * self.M[i, j]) + f(x[i] * x[j]))
            for j in range(m):
                self.N[i, j] = f(f(mu * self.N[i, j]) + f(x[i] * y[j]))
        for i in range(m):
            for j in range(m):
                self.Q[i, j] = f(f(mu * self.Q[i, j]) + f(y[i] * y[j]))
        M, N, Q = self.M, self.N, self.Q
        # W-step
        W0 = self.W.copy()
        K = self._cholesky(self.Om_inv, f(0), floor, False)
        B = self._product(K.T, self._product(self.S, K))
        B = np.triu(B) + np.triu(B, 1).T  # the upper triangle, mirrored
        V = self._jacobi(B)
        s = np.diag(B).copy()
        G = self._product(K, V.T)
        H1 = self._product(self.Om, G)
        CS = (C * self.S).astype(f)
        H2 = self._product(CS, G)
        R = np.zeros((D, m), f)
        for k in range(D):
            for j in range(m):
                acc = f(0)
                for i in range(m):
                    acc = f(acc + f(f(W0[k, i] * H1[i, j]) + f(N[k, i] * H2[i, j])))
                R[k, j] = acc
        A, beta, diag, off = self._tridiagonalize(M)
        self._reflect(A, beta, R, True)
        self._tridiagonal_solve(diag, off, (C * s).astype(f), R)
        self._reflect(A, beta, R, False)
        W = self._product(R, G.T)
        self.W = W
        # S-step: E = W^T (M W - N) - N^T W + Q
        R1 = np.zeros((D, m), f)
        for k in range(D):
            for j in range(m):
                acc = f(-N[k, j])
                for i in range(D):
                    acc = f(acc + f(M[k, i] * W[i, j]))
                R1[k, j] = acc
        E = np.zeros((m, m), f)
        for i in range(m):
            for j in range(i, m):
                acc = Q[i, j]
                for k in range(D):
                    acc = f(acc + f(f(W[k, i] * R1[k, j]) - f(N[k, i] * W[k, j])))
                E[i, j] = E[j, i] = acc
        frob = f(0)
        for v in E.reshape(-1):
            frob = f(frob + f(v * v))
        shift = f(f(f(f(100) * f(m * m)) * self.tol) * np.sqrt(frob))
        certain = shift > 0 and self._cholesky(E, shift, f(0), True) is not None
        if not certain:
            B = E.copy()
            V = self._jacobi(B)
            lam = np.diag(B)
            if (lam < 0).any():
                for i in range(m):
                    for j in range(i, m):
                        acc = f(0)
                        for k in range(m):
                            if lam[k] > 0:
                                acc = f(acc + f(f(lam[k] * V[k, i]) * V[k, j]))
                        E[i, j] = E[j, i] = acc
        g = f(f(1) / f(gamma + tau))
        hc = f(f(0.5) * C)
        for i in range(m):
            for j in range(m):
                v = f(f(gamma * self.S_inv[i, j]) + f(hc * E[i, j]))
                if i == j:
                    v = f(v + tau)
                self.S_inv[i, j] = f(v * g)
        self.S = self._spd_inverse(self.S_inv, floor)
        # Omega-step: D = W - W_{t-1}
        Dw = (W - W0).astype(f)
        for i in range(m):
            for j in range(i, m):
                acc = f(0)
                for k in range(D):
                    acc = f(acc + f(Dw[k, i] * Dw[k, j]))
                E[i, j] = E[j, i] = acc
        for i in range(m):
            for j in range(m):
                v = f(f(gamma * self.Om_inv[i, j]) + f(f(0.5) * E[i, j]))
                if i == j:
                    v = f(v + tau)
                self.Om_inv[i, j] = f(v * g)
        self.Om = self._spd_inverse(self.Om_inv, floor)


# ----------------------------------------------------------------------------
# Selective sampling with switch detection (docs/algorithms/selective.md)
# ----------------------------------------------------------------------------


def selective_reference(
    X: np.ndarray,
    y: np.ndarray,
    *,
    kappa: float = 0.5,
    detect_switch: bool = True,
    delta: float = 0.1,
    window0: int = 50,
    window_max: int = 2000,
    rebuild_every: int = 4,
    normalize: bool = True,
    forced: bool = False,
    switch_test: str = "eprocess",
    test_every: int = 4,
) -> dict[str, np.ndarray]:
    """BBQ with the demo-classifier switch test, straight from docs/algorithms/selective.md.

    ``switch_test="eprocess"``: the e-process test instead (``EProcessReference``
    on the labels of the test rounds, those where |w_t^T x_t| exceeds the
    tracked threshold, in both modes); ``out["score"]`` holds its log
    e-value after each round.

    Keeps A and b (and A_L, b_L of the demo classifier) as explicit matrices
    and solves every linear system directly: no Sherman-Morrison. Makes the
    choices documented in ``edgereg.selective`` (t = rounds since the last
    restart; every label of the L_t rounds before a rebuild is asked for the
    demo window only; the window holds every label used, survives a restart
    and is refitted every rebuild_every * L_t rounds; test before learning;
    the detection round is round 1 of the new epoch). ``forced``: every label
    is used and learnt (learn_many). Returns per-round arrays: margin
    w_t^T x_t, r_t, demo margin h_t^T x_t, r_{L_t}, queried (label used),
    bbq (label asked for and learnt by the estimator; the comparison test's
    switch round is learnt too, whatever asked for it), switched,
    prediction, and Ainv (A^{-1} after the round), w (A^{-1} b after the round).
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    A, b = np.eye(d), np.zeros(d)
    AL, bL = np.eye(d), np.zeros(d)
    window: list[tuple[np.ndarray, float]] = []
    t_epoch, t_rebuilt = 0, 0
    out = {k: np.zeros(n) for k in ("margin", "r", "demo_margin", "r_demo", "prediction")}
    out["queried"] = np.zeros(n, dtype=bool)
    out["switched"] = np.zeros(n, dtype=bool)
    out["bbq"] = np.zeros(n, dtype=bool)
    out["Ainv"] = np.zeros((n, d, d))
    out["w"] = np.zeros((n, d))
    out["score"] = np.full(n, np.nan)
    eprocess = detect_switch and switch_test == "eprocess"
    compare = detect_switch and switch_test == "compare"
    spec = detect_switch and not eprocess and not compare
    ep = EProcessReference(d, max(2048, 64 * d)) if eprocess else None
    cmp = CompareReference(d, 256, candidate=True) if compare else None
    for s in range(n):
        x = X[s].copy()
        if normalize and np.any(x != 0):
            # Scaled down as the kernels do (``_prepare``): ||x||^2 <= 1, so the
            # exact tie at an epoch's start (A = I, r = 1/2 = 4^-1/2) is no query
            # whatever the rounding of the norm and of the solve below.
            x = x / np.linalg.norm(x) * (1.0 - (d + 8) * np.finfo(np.float64).eps)
        t = t_epoch + 1
        At = A + np.outer(x, x)
        r = x @ np.linalg.solve(At, x)
        margin = x @ np.linalg.solve(At, b)
        ALt = AL + np.outer(x, x)
        rL = x @ np.linalg.solve(ALt, x)
        hmargin = x @ np.linalg.solve(ALt, bL)
        bbq = True if forced else bool(r > float(t) ** (-kappa))
        L = min(window0 + int(np.floor(np.sqrt(t))), window_max)
        demo = spec and t - t_rebuilt > (rebuild_every - 1) * L
        test_round = ((ep is not None and abs(margin) > ep.theta)
                      or (cmp is not None and abs(margin) > cmp.theta))
        if (ep is not None or cmp is not None) and not forced:
            demo = test_round
        queried = bbq or demo
        learnt = bbq
        out["margin"][s], out["r"][s] = margin, r
        out["demo_margin"][s], out["r_demo"][s] = hmargin, rL
        out["prediction"][s] = 1.0 if margin >= 0 else -1.0
        out["queried"][s] = queried
        out["bbq"][s] = learnt
        if cmp is not None:
            cmp.track(abs(margin), test_every)
            if queried:
                fc = cmp.candidate_margin(x)
                fs = float(x @ np.linalg.solve(cmp.As, cmp.bs))
                if test_round:
                    lost = float((fs >= 0) != (y[s] > 0))
                    score = cmp.label(lost - float((fc >= 0) != (y[s] > 0)))
                    if score >= -np.log(delta):
                        out["switched"][s] = True
                        # the candidate's weights start a ridge fit towards them,
                        # for the classifier and the shadow
                        A, b = np.eye(d), np.linalg.solve(cmp.Ac, cmp.bc)
                        cmp.As, cmp.bs = np.eye(d), b.copy()
                        t = 1
                        learnt = True  # the new epoch learns the switch round's label
                        cmp.restart()
                cmp.learn_candidate(x, float(y[s]))
                cmp.As, cmp.bs = cmp.As + np.outer(x, x), cmp.bs + y[s] * x
            out["score"][s] = cmp.score()
        if ep is not None:
            ep.track(abs(margin), test_every)
            if test_round:
                m_alt = ep.alternative(x)
                score = ep.label(x, float(y[s]), m_alt)
                ep.learn_alternative(x, float(y[s]))
                if score >= -np.log(delta):
                    out["switched"][s] = True
                    A, b = np.eye(d), np.zeros(d)
                    t = 1
                    ep.restart()
            out["score"][s] = ep.score
        if spec:
            delta_t = delta / (t * (t + 1.0))
            c = np.sqrt(2.0 * np.log(2.0 / delta_t)) + 1.0
            K = c * np.sqrt(r) + r + c * np.sqrt(rL) + rL
            if abs(margin - hmargin) > K:
                out["switched"][s] = True
                A, b = np.eye(d), np.zeros(d)
                t, t_rebuilt = 1, 0
        if learnt:
            A = A + np.outer(x, x)
            b = b + y[s] * x
        if queried:
            if spec:
                window.append((x, float(y[s])))
                window = window[-window_max:]
        t_epoch = t
        if spec:
            L = min(window0 + int(np.floor(np.sqrt(t))), window_max)
            if t - t_rebuilt >= rebuild_every * L:
                recent = window[-L:]
                AL = np.eye(d) + sum((np.outer(xi, xi) for xi, _ in recent), np.zeros((d, d)))
                bL = sum((yi * xi for xi, yi in recent), np.zeros(d))
                t_rebuilt = t
        out["Ainv"][s] = np.linalg.inv(A)
        out["w"][s] = np.linalg.solve(A, b)
    return out


class CompareReference:
    """The comparison test of ``edgereg/_kernels/compare.py``, written out.

    Every instance keeps its list of loss differences; its log e-value is
    log(mean_k exp(bound_k)) + log pi_j, bound_k a lower bound of
    sum_i log(1 + l_k delta_i) summed from the list (``_log_e``).
    ``candidate``: the candidate RLS as explicit A_c, b_c (A_c <- lambda A_c,
    b_c <- lambda b_c while trace(A_c^-1) <= d, then + x x^T, + y x); the
    shadow (A_s, b_s, no forgetting) is kept by ``selective_reference``.
    """

    BETS = np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9])
    # SelectiveSampler's wait: early instances every span / 8 tested rounds,
    # testing "the candidate is better by at most 0.2"
    EARLY_MARGIN, EARLY_PER_SPAN = 0.2, 8

    def __init__(self, d: int, span: int, *, candidate: bool = False,
                 theta: float = 0.01, rate: float = 0.02) -> None:
        # the candidate's forgetting: a memory of 4 d + 8 labels
        lam = 1.0 - 1.0 / (4 * d + 8)
        self.d, self.span, self.lam, self.theta, self.rate = d, span, lam, theta, rate
        self.Ac, self.bc = np.eye(d), np.zeros(d)
        self.As, self.bs = np.eye(d), np.zeros(d)  # the shadow (SelectiveSampler)
        # SelectiveSampler: no ordinary instance before 3 spans of tested
        # rounds, early ones instead, which share the prior mass of
        # instances 1, 2 and 3 equally
        self.wait_spans = 3 if candidate else 0
        self.early_log_prior = np.log(
            sum(np.exp(EProcessReference.log_prior(j)) for j in (1, 2, 3))
            / (3 * self.EARLY_PER_SPAN))
        self.restart()

    def _instance(self, j: int, early: bool) -> dict:
        return {"j": j, "deltas": [], "early": early}

    def restart(self) -> None:
        self.labels = 0
        self.slots: list[dict | None] = [self._instance(1, bool(self.wait_spans)), None]

    def track(self, margin: float, test_every: int) -> None:
        above = 1.0 if margin > self.theta else 0.0
        self.theta = max(self.theta * np.exp(self.rate * (above - 1.0 / test_every)), 1e-12)

    def candidate_margin(self, x: np.ndarray) -> float:
        return float(x @ np.linalg.solve(self.Ac, self.bc))

    def learn_candidate(self, x: np.ndarray, y: float) -> None:
        if np.trace(np.linalg.inv(self.Ac)) <= self.d:
            self.Ac, self.bc = self.lam * self.Ac, self.lam * self.bc
        self.Ac, self.bc = self.Ac + np.outer(x, x), self.bc + y * x

    def _log_e(self, inst: dict) -> float:
        """Each bet's two lower bounds of sum_i log(1 + l delta_i), summed round
        by round (a negative delta: Fan's l d - psi(l) d^2 in both; a positive
        one: l d - l^2 d^2 / 2 in the first, d log(1 + l) in the second), the
        larger of the two per bet, then the log of their mean exponential."""
        lam = self.BETS[:, None]
        dl = np.array(inst["deltas"], dtype=np.float64).reshape(1, -1)
        fan = lam * dl - (-np.log1p(-lam) - lam) * dl * dl
        positive = dl > 0
        quadratic = np.where(positive, lam * dl - lam * lam * dl * dl / 2, fan).sum(axis=1)
        chord = np.where(positive, dl * np.log1p(lam), fan).sum(axis=1)
        a = np.maximum(quadratic, chord)
        prior = (self.early_log_prior if inst["early"]
                 else EProcessReference.log_prior(inst["j"]))
        return float(np.logaddexp.reduce(a) - np.log(len(a)) + prior)

    def score(self) -> float:
        return max((self._log_e(i) for i in self.slots if i is not None), default=-1e300)

    def label(self, delta: float) -> float:
        """One tested round's loss difference; returns the largest instance log e-value."""
        best = -1e300
        m = self.EARLY_MARGIN
        for inst in self.slots:
            if inst is not None:
                inst["deltas"].append((delta - m) / (1 + m) if inst["early"] else delta)
                best = max(best, self._log_e(inst))
        self.labels += 1
        if self.labels < self.wait_spans * self.span:
            every = self.span // self.EARLY_PER_SPAN
            if self.labels % every == 0:
                k = self.labels // every
                self.slots[k % 2] = self._instance(k + 1, True)
        elif self.labels % self.span == 0:
            q = self.labels // self.span
            self.slots[q % 2] = self._instance(q + 1, False)
        return best


def clipped_loss_bound(fc: float, mc: float, lo: float, hi: float) -> float:
    """The largest |(yc - fc)^2 - (yc - mc)^2| over yc in [lo, hi]: the
    difference is linear in yc, so it is reached at lo or at hi."""
    return min(max(abs((lo - fc) ** 2 - (lo - mc) ** 2), abs((hi - fc) ** 2 - (hi - mc) ** 2)),
               (hi - lo) ** 2)


def drift_compare_reference(X: np.ndarray, y: np.ndarray, m: np.ndarray, *, delta: float = 0.1,
                            width: float = 2.0, span: int = 512,
                            burn: int | None = None) -> dict[str, np.ndarray]:
    """DriftAlarm's comparison test written out: the incumbent RLS as explicit
    A = I / p0 + sum x x^T, b = sum y x from the epoch's first nonzero row
    (p0 = 1e6 / ||x||^2), its prediction w^T x before each row, the clipping
    range from the epoch's mean and mean absolute deviation of y, and
    ``CompareReference`` on the normalised clipped squared-loss differences.
    Returns per-row ``score`` and ``alarm``."""
    n, d = X.shape
    burn = 10 * d + 20 if burn is None else burn
    test = CompareReference(d, span)
    out = {"score": np.full(n, np.nan), "alarm": np.zeros(n, dtype=bool)}
    A = b = None
    ys: list[float] = []
    for t in range(n):
        x = X[t].astype(np.float64)
        if A is None:
            nn = float(x @ x)
            if nn == 0.0:
                continue
            A, b = np.eye(d) * nn / 1e6, np.zeros(d)
        f = float(x @ np.linalg.solve(A, b))
        fired = False
        if len(ys) >= burn:
            yy = np.array(ys)
            mean = yy.mean()
            # the kernel's running mean absolute deviation: each |y_k - mean_{k-1}|
            means = np.cumsum(yy) / np.arange(1, len(yy) + 1)
            absdev = np.mean(np.abs(yy[1:] - means[:-1])) if len(yy) > 1 else 0.0
            if absdev > 0:
                lo, hi = mean - width * absdev, mean + width * absdev
                yc = min(max(y[t], lo), hi)
                fc, mc = min(max(f, lo), hi), min(max(m[t], lo), hi)
                li, lc = (yc - fc) ** 2, (yc - mc) ** 2
                bound = clipped_loss_bound(fc, mc, lo, hi)
                dl = float(np.clip((li - lc) / bound, -1.0, 1.0)) if bound > 0 else 0.0
                fired = test.label(dl) >= -np.log(delta)
        ys.append(float(y[t]))
        A, b = A + np.outer(x, x), b + y[t] * x
        if fired:
            out["alarm"][t] = True
            test.restart()
            A = None
            ys = []
        out["score"][t] = test.score()
    return out


class EProcessReference:
    """The change-point e-process of ``edgereg/_kernels/eprocess.py``, written out.

    Every instance keeps its labels; the null's J_n = sum y^2 - b^T A^-1 b
    (A = I + sum x x^T) is solved directly after each label (the kernel
    accumulates e^2 / (1 + r) instead), the null's prediction is
    x^T (A + x x^T)^-1 b, and log E sums every candidate change point's
    path explicitly (the kernel keeps one running log-sum). The alternative
    RLS keeps A_b and b_b: A_b <- lambda A_b + x x^T, b_b <- lambda b_b + y x,
    the discount skipped while trace(A_b^-1) > d.
    """

    def __init__(self, d: int, span: int, *, grid: int = 16, alt_lambda: float = 0.99,
                 clip: bool = True, theta: float = 0.01, rate: float = 0.02) -> None:
        self.d, self.span, self.grid, self.alt_lambda, self.clip = d, span, grid, alt_lambda, clip
        self.theta, self.rate = theta, rate
        self.Ab, self.bb = np.eye(d), np.zeros(d)
        self.restart()

    @staticmethod
    def log_prior(k: float) -> float:
        return float(np.log(np.log(2.0) * (1.0 / np.log(k + 1.0) - 1.0 / np.log(k + 2.0))))

    def restart(self) -> None:
        self.labels = 0
        self.slots: list[dict | None] = [self._instance(1), None]
        self.score = -0.5 + self.log_prior(1)

    def _instance(self, j: int) -> dict:
        return {"j": j, "X": [], "y": [], "la": [], "lb": []}

    def _clip(self, m: float) -> float:
        return min(1.0, max(-1.0, m)) if self.clip else m

    def alternative(self, x: np.ndarray) -> float:
        """The alternative RLS's prediction x^T (A_b + x x^T)^-1 b_b, clipped."""
        return min(1.0, max(-1.0, float(x @ np.linalg.solve(self.Ab + np.outer(x, x), self.bb))))

    def learn_alternative(self, x: np.ndarray, y: float) -> None:
        if np.trace(np.linalg.inv(self.Ab)) <= self.d:
            self.Ab, self.bb = self.alt_lambda * self.Ab, self.alt_lambda * self.bb
        self.Ab, self.bb = self.Ab + np.outer(x, x), self.bb + y * x

    def track(self, margin: float, test_every: int) -> None:
        above = 1.0 if margin > self.theta else 0.0
        self.theta = max(self.theta * np.exp(self.rate * (above - 1.0 / test_every)), 1e-12)

    @staticmethod
    def _J(X: list, y: list, d: int) -> float:
        if not X:
            return 0.0
        Xa, ya = np.array(X), np.array(y)
        A = np.eye(d) + Xa.T @ Xa
        b = Xa.T @ ya
        return float(ya @ ya - b @ np.linalg.solve(A, b))

    def label(self, x: np.ndarray, y: float, m_alt: float) -> float:
        """One labelled example; returns the test's log e-value."""
        best = -np.inf
        for inst in self.slots:
            if inst is None:
                continue
            Xs, ys = inst["X"], inst["y"]
            A = np.eye(self.d) + (np.array(Xs).T @ np.array(Xs) if Xs else 0.0)
            b = np.array(Xs).T @ np.array(ys) if Xs else np.zeros(self.d)
            ma = self._clip(float(x @ np.linalg.solve(A + np.outer(x, x), b)))
            dJ = self._J(Xs + [x], ys + [y], self.d) - self._J(Xs, ys, self.d)
            inst["la"].append(0.5 * (dJ - (y - ma) ** 2))
            inst["lb"].append(0.5 * (dJ - (y - m_alt) ** 2))
            Xs.append(x)
            ys.append(y)
            n = len(ys)
            k = -(-n // self.grid)  # candidates opened: before labels 0, G, 2G, ...
            # Path of candidate s (opened before label c = (s - 1) G): the
            # null's prediction before c, the alternative's from c on.
            cla = np.concatenate([[0.0], np.cumsum(inst["la"])])
            clb = np.concatenate([[0.0], np.cumsum(inst["lb"])])
            s_ = np.arange(1, k + 1, dtype=np.float64)
            c = (np.arange(1, k + 1) - 1) * self.grid
            prior = np.log(np.log(2.0) * (1.0 / np.log(s_ + 1.0) - 1.0 / np.log(s_ + 2.0)))
            paths = prior + cla[c] + (clb[n] - clb[c])
            no_change = np.log(np.log(2.0) / np.log(k + 2.0)) + cla[n]
            log_e = (-0.5 + float(np.logaddexp.reduce(np.append(paths, no_change)))
                     + self.log_prior(inst["j"]))
            best = max(best, log_e)
        self.labels += 1
        if self.labels % self.span == 0:
            q = self.labels // self.span
            self.slots[q % 2] = self._instance(q + 1)
        self.score = best
        return best


# ----------------------------------------------------------------------------
# Sparse-DFOP (docs/algorithms/sparse_dfop.md): the projection, written with Python integers
# ----------------------------------------------------------------------------

_MASK64 = (1 << 64) - 1
_GOLDEN64 = 0x9E3779B97F4A7C15
_FALLBACK_SALT64 = 0xD1B54A32D192ED03


def splitmix64_mix(z: int) -> int:
    """splitmix64's finaliser on a Python int (arithmetic mod 2^64)."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def rademacher_column(seed: int, j: int, d: int) -> np.ndarray:
    """Column j of Sparse-DFOP's Rademacher projection, entry by entry, as documented.

    M_ij = (1 - 2 b) / sqrt(d), b = bit (i mod 64) of mix(key_j + (i // 64 + 1) G),
    key_j = mix(mix(seed) ^ mix(j + G)).
    """
    mix = splitmix64_mix
    key = mix(mix(seed) ^ mix(j + _GOLDEN64))
    scale = 1.0 / math.sqrt(d)
    out = np.empty(d)
    for i in range(d):
        h = mix(key + (i // 64 + 1) * _GOLDEN64)
        out[i] = (1.0 - 2.0 * ((h >> (i % 64)) & 1)) * scale
    return out


_M32 = (1 << 32) - 1
_SECOND_SALT64 = 0x8CB92BA72F3D8DD7


def lowbias32(x: int) -> int:
    """Wellons' lowbias32 finaliser on a Python int (mod 2^32)."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & _M32
    x ^= x >> 15
    x = (x * 0x846CA68B) & _M32
    return x ^ (x >> 16)


def hashed_gaussian_column(
    seed: int, j: int, d: int, zw, inner, zf, r: float, slow: list | None = None
) -> np.ndarray:
    """Column j of Sparse-DFOP's hashed Gaussian projection, entry by entry, as documented.

    Pure Python ints and floats (Python floats are IEEE doubles, and
    ``math.exp``/``math.log`` the libm the kernels call). With
    t = mix(mix(seed) ^ mix(j + G)), key = mix(t), key2 = mix(t ^ S2) and
    (a, c | 1), (a2, c2 | 1) their low and high 32-bit halves, entry i has the
    words h = lowbias32(a + i c), h2 = lowbias32(a2 + i c2); 1024-layer
    ziggurat: layer = h & 1023, sign = bit 10, x = ((h2 >> 1) | 1) W[layer] 2^-31,
    accepted when x < inner[layer]; otherwise the exact slow path with fresh
    uniforms from mix((key ^ salt) + i 2^32 + n G). ``zw``, ``inner``, ``zf``
    and ``r`` are the ziggurat's widths, acceptance bounds, heights and tail
    edge. ``slow`` collects (i, layer) of the entries the fast test rejected.
    """
    mix = splitmix64_mix
    t = mix(seed) ^ mix(int(j) + _GOLDEN64)
    key, key2 = mix(t), mix(t ^ _SECOND_SALT64)
    a, c = key & _M32, (key >> 32) | 1
    a2, c2 = key2 & _M32, (key2 >> 32) | 1

    def uni53(h: int) -> float:
        return ((h >> 11) + 0.5) / 2.0**53

    out = np.empty(d)
    for i in range(d):
        h = lowbias32((a + i * c) & _M32)
        h2 = lowbias32((a2 + i * c2) & _M32)
        layer, negative = h & 1023, (h >> 10) & 1
        x = ((h2 >> 1) | 1) * (zw[layer] * 2.0**-31)  # u = k 2^-31, k odd < 2^31
        if x >= inner[layer]:  # rejected: the wedge, the tail, or a fresh draw
            if slow is not None:
                slow.append((i, layer))
            base, n = (key ^ _FALLBACK_SALT64) + i * 2**32, 0
            while True:
                if layer == 0:
                    if x < r:
                        break
                    while True:
                        n += 1
                        tail = -math.log(uni53(mix(base + n * _GOLDEN64))) / r
                        n += 1
                        e = -math.log(uni53(mix(base + n * _GOLDEN64)))
                        if e + e >= tail * tail:
                            break
                    x = r + tail
                    break
                if x < inner[layer]:
                    break
                n += 1
                y = zf[layer] + uni53(mix(base + n * _GOLDEN64)) * (zf[layer - 1] - zf[layer])
                if y < math.exp(-0.5 * x * x):
                    break
                n += 1
                g = mix(base + n * _GOLDEN64)
                layer, negative = g & 1023, (g >> 10) & 1
                x = uni53(g) * zw[layer]
        out[i] = (-x if negative else x) * (1.0 / math.sqrt(d))
    return out


def sparse_projection(M: np.ndarray, indices: np.ndarray, values: np.ndarray) -> np.ndarray:
    """psi = M x = sum over the non-zeros, in increasing column order, of x_j M[:, j]."""
    order = np.argsort(indices, kind="stable")
    psi = np.zeros(M.shape[0], dtype=M.dtype)
    for k in order:
        psi = psi + values[k] * M[:, indices[k]]
    return psi


def dfop_impute_reference(
    X: np.ndarray, y: np.ndarray, mu: float, p0: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """missing="impute" from the equations, in information form (keep_prior=False).

    R = lambda^t / p0 I + sum_i lambda^(t-i) omega_i xh_i xh_i^T and b likewise
    (R w = b). A row with NaNs at m is completed by the Gaussian conditional
    mean under the second moment M = R / N (N = sum_i lambda^(t-i) over the rows
    learnt): xh_m = M_mo M_oo^-1 x_o, with Cov = M_mm - M_mo M_oo^-1 M_om (the
    Schur complement, not the kernel's P identity); omega = sigma^2 / (sigma^2 +
    w_m^T Cov w_m), sigma^2 = S / N the noise level of the interval reference
    (S of e^2 / v with v = (lambda + xh^T R^-1 xh) / lambda + 1 / omega - 1);
    omega = 1 for a complete row. Returns (predictions w^T xh, R after each
    step (n, d, d), w after each step (n, d)).
    """
    n, d = X.shape
    lam = 1.0 - mu
    R = np.eye(d) / p0
    b = np.zeros(d)
    N = S = 0.0
    pred = np.empty(n)
    Rs = np.empty((n, d, d))
    Ws = np.empty((n, d))
    for t in range(n):
        w = np.linalg.solve(R, b)
        x = X[t].copy()
        m = np.isnan(x)
        omega = 1.0
        if m.any():
            o = ~m
            M = R / N
            Moo_inv = np.linalg.inv(M[np.ix_(o, o)])
            x[m] = M[np.ix_(m, o)] @ Moo_inv @ x[o]
            cov = M[np.ix_(m, m)] - M[np.ix_(m, o)] @ Moo_inv @ M[np.ix_(o, m)]
            quad = w[m] @ cov @ w[m]
            sigma2 = S / N
            omega = sigma2 / (sigma2 + quad)
        pred[t] = w @ x
        v = (lam + x @ np.linalg.solve(R, x)) / lam + 1.0 / omega - 1.0
        e = y[t] - pred[t]
        R = lam * R + omega * np.outer(x, x)
        b = lam * b + omega * x * y[t]
        N = lam * N + 1.0
        S = lam * S + e * e / v
        Rs[t] = R
        Ws[t] = np.linalg.solve(R, b)
    return pred, Rs, Ws


# ----------------------------------------------------------------------------
# DFOP in float32 arithmetic (DFOP(..., dtype="float32", arithmetic="float32"))
# ----------------------------------------------------------------------------


class DFOPFloat32Reference:
    """DFOP's float32-only arithmetic, one NumPy float32 scalar operation at a time.

    Written from docs/design/float32.md ("float32-only arithmetic"): every
    value is a float32 and every operation rounds to float32 (NumPy float32
    scalars: IEEE single, correctly rounded, like the FPU), in the order the
    equations give it. ``learn(x, y, mu)`` returns (prediction, learnt): the
    step's guards (refuse, or update from the prior when P lost definiteness),
    the update

        Px = P x,  c = 1 / (lambda + x^T Px),  s = sqrt(c),  g = (y - w^T x) c
        w <- w + Px g,   u = Px s,   P <- (P - u u^T) (1 / lambda)

    (a careful step, x^T P x > 16 lambda, in double-float32: ``_careful``),
    then keep_prior's refresh every ``period`` steps of ceil(d f / 2)
    coordinates k (rho = d f / p0 / width, f the forgotten sum of mu's):
    w <- w - P_k (rho w_k / (1 + rho P_kk)), P <- P - v v^T, v = P_k
    sqrt(rho / (1 + rho P_kk)); or keep_prior=False's reset of a coordinate
    whose P_ii passed 10 p0.
    """

    f = np.float32
    MAX = np.float32(3.4028234663852886e38)
    LIMIT = np.float32(1e30)

    def __init__(self, d, mu, p0, period, keep_prior=True, skip=True):
        f = self.f
        self.d, self.mu, self.p0 = d, f(mu), f(p0)
        self.period, self.keep_prior, self.skip = period, keep_prior, skip
        self.P = np.zeros((d, d), np.float32)
        for i in range(d):
            self.P[i, i] = self.p0
        self.w = np.zeros(d, np.float32)
        self.forgotten = f(0.0)
        self.seen = self.skipped = self.since = self.next = 0

    def _finite(self, v):
        return bool(np.isfinite(v))

    def _fits(self, big, wbig, s, g):
        u = big * s
        wnew = wbig + big * abs(g)
        return (self._finite(g) and self._finite(u * u) and self._finite(wnew)
                and wnew < self.MAX)

    def step(self, x, y, mu):
        f, d, P, w = self.f, self.d, self.P, self.w
        x = x.astype(np.float32)
        y = f(y)
        lam = f(1.0) - f(mu)
        Px = [f(0.0)] * d
        for i in range(d):  # P x, row by row (the sum's order)
            for j in range(d):
                Px[j] = Px[j] + x[i] * P[i, j]
        yhat = xPx = big = wbig = f(0.0)
        for j in range(d):
            yhat = yhat + w[j] * x[j]
            xPx = xPx + x[j] * Px[j]
            big = max(big, abs(Px[j]))
            wbig = max(wbig, abs(w[j]))
        if not (self._finite(yhat) and abs(y) <= self.LIMIT):
            return yhat, False
        den = lam + xPx
        if not self._finite(den):
            return yhat, False
        prior = not den > 0
        if (not prior and xPx > f(16.0) * lam and big < f(1e30)
                and all(abs(x[j]) < f(1e30) for j in range(d))):
            status = self._careful(x, y, yhat, lam, wbig)
            if status is not None:
                if status and not self.keep_prior:
                    self._reset_unexcited()
                return yhat, status
            prior = True
        if not prior:
            c = f(1.0) / den
            s = np.sqrt(c)
            g = (y - yhat) * c
            if not self._fits(big, wbig, s, g):
                return yhat, False
            pmin = min(P[i, i] for i in range(d))
            if not (pmin > 0 and (big * s) * (big * s) <= pmin):
                slack = f(8.0) * f(d) * f(2.0**-23)
                if any(not P[i, i] > 0 for i in range(d)):
                    prior = True
                elif any(P[i, i] - (Px[i] * s) * (Px[i] * s) < -slack * P[i, i]
                         for i in range(d)):
                    return yhat, False
        if prior:  # P lost definiteness: the update from P = p0 I
            nn = f(0.0)
            for j in range(d):
                nn = nn + x[j] * x[j]
            if not self.p0 * nn <= f(1e7):
                return yhat, False
            Px = [self.p0 * x[j] for j in range(d)]
            xPx = big = f(0.0)
            for j in range(d):
                xPx = xPx + x[j] * Px[j]
                big = max(big, abs(Px[j]))
            den = lam + xPx
            if not (self._finite(den) and den > 0):
                return yhat, False
            c = f(1.0) / den
            s = np.sqrt(c)
            g = (y - yhat) * c
            if not self._fits(big, wbig, s, g):
                return yhat, False
            P[:] = 0
            for i in range(d):
                P[i, i] = self.p0
        invlam = f(1.0) / lam
        u = [Px[j] * s for j in range(d)]
        for j in range(d):
            w[j] = w[j] + Px[j] * g
        for i in range(d):
            for j in range(d):
                P[i, j] = (P[i, j] - u[i] * u[j]) * invlam
        if not self.keep_prior:
            self._reset_unexcited()
        return yhat, True

    # The careful step (x^T P x > 16 lambda) in double-float32: a value is hi + lo,
    # two float32; Dekker's exact product (Veltkamp's split by 4097) and Knuth's
    # exact sum, then the usual double-float sum, product and reciprocal.
    @staticmethod
    def _split(a):
        f = np.float32
        t = f(4097.0) * a
        hi = t - (t - a)
        return hi, a - hi

    def _prod(self, a, b):
        p = a * b
        ah, al = self._split(a)
        bh, bl = self._split(b)
        return p, al * bl - (((p - ah * bh) - al * bh) - ah * bl)

    @staticmethod
    def _sum(a, b):
        s = a + b
        bb = s - a
        return s, (a - (s - bb)) + (b - bb)

    @staticmethod
    def _fast(a, b):
        s = a + b
        return s, b - (s - a)

    def _add2(self, ah, al, bh, bl):
        s, e = self._sum(ah, bh)
        return self._fast(s, e + (al + bl))

    def _mul2(self, ah, al, bh, bl):
        p, e = self._prod(ah, bh)
        return self._fast(p, e + (ah * bl + al * bh))

    def _careful(self, x, y, yhat, lam, wbig):
        """True: applied; False: refused; None: from the prior."""
        f, d, P, w = self.f, self.d, self.P, self.w
        z = f(0.0)
        Ph, Pl = [z] * d, [z] * d
        for i in range(d):
            for j in range(d):
                p, e = self._prod(x[i], P[i, j])
                Ph[j], Pl[j] = self._add2(Ph[j], Pl[j], p, e)
        sh = sl = big = z
        for j in range(d):
            sh, sl = self._add2(sh, sl, *self._mul2(Ph[j], Pl[j], x[j], z))
            big = max(big, abs(Ph[j]))
        dh, dl = self._add2(sh, sl, lam, z)
        if not self._finite(dh):
            return False
        if not dh > 0:
            return None
        q = f(1.0) / dh
        ph, pl = self._mul2(dh, dl, q, z)
        ch, cl = self._fast(q, q * ((f(1.0) - ph) - pl))
        s = np.sqrt(ch)
        g = (y - yhat) * ch
        if not self._fits(big, wbig, s, g):
            return False
        slack = f(8.0) * f(d) * f(2.0**-23)
        if any(not P[i, i] > 0 for i in range(d)):
            return None
        for i in range(d):
            th, tl = self._mul2(*self._mul2(Ph[i], Pl[i], Ph[i], Pl[i]), ch, cl)
            if self._add2(P[i, i], z, -th, -tl)[0] < -slack * P[i, i]:
                return False
        invlam = f(1.0) / lam
        for j in range(d):
            w[j] = w[j] + Ph[j] * g
        for i in range(d):
            for j in range(i, d):
                th, tl = self._mul2(*self._mul2(Ph[i], Pl[i], Ph[j], Pl[j]), ch, cl)
                P[i, j] = P[j, i] = self._add2(P[i, j], z, -th, -tl)[0] * invlam
        return True

    def _refresh(self, k, rho):
        f, d, P, w = self.f, self.d, self.P, self.w
        den = f(1.0) + rho * P[k, k]
        if not den > 0:
            return
        g = rho * w[k] / den
        if not all(abs(w[j]) + abs(P[k, j]) * abs(g) < self.MAX for j in range(d)):
            g = f(0.0)
        s = np.sqrt(rho / den)
        v = [P[k, j] * s for j in range(d)]
        for j in range(d):
            w[j] = w[j] - P[k, j] * g
        for i in range(d):
            for j in range(d):
                P[i, j] = P[i, j] - v[i] * v[j]

    def _reset_unexcited(self):
        f, d, P, w = self.f, self.d, self.P, self.w
        cap = f(10.0) * self.p0
        for i in range(d):
            pii = P[i, i]
            if pii > cap:
                rho = f(1.0) / self.p0 - f(1.0) / pii
                den = f(1.0) + rho * pii
                g = abs(rho * w[i] / den)
                s = np.sqrt(rho / den)
                fits = all(abs(w[j]) + abs(P[i, j]) * g < self.MAX
                           and P[j, j] - (P[i, j] * s) * (P[i, j] * s) > 0 for j in range(d))
                if fits:
                    self._refresh(i, rho)
                else:
                    r = np.sqrt(self.p0 / pii)
                    P[i, :] = P[i, :] * r
                    P[:, i] = P[:, i] * r

    def learn(self, x, y, mu=None):
        f, d = self.f, self.d
        mu = self.mu if mu is None else f(mu)
        yhat, ok = self.step(x, y, mu)
        if not ok:
            self.skipped += 1
            return yhat, False
        self.seen += 1
        if self.keep_prior:
            self.forgotten = self.forgotten + mu
            self.since += 1
            if self.since >= self.period and self.forgotten > 0:
                width = math.ceil(f(d) * self.forgotten / f(2.0) * (f(1.0) - f(1e-3)))
                width = min(d, max(1, width))
                rho = f(d) * self.forgotten / self.p0 / f(width)
                for i in range(width):
                    self._refresh((self.next + i) % d, rho)
                if not all(self.P[i, i] > 0 for i in range(d)):
                    self.P[:] = 0
                    for i in range(d):
                        self.P[i, i] = self.p0
                self.since = 0
                self.next = (self.next + width) % d
                self.forgotten = f(0.0)
        return yhat, True


# ----------------------------------------------------------------------------
# SOMOR and PA in float32 arithmetic (arithmetic="float32")
# ----------------------------------------------------------------------------


class LinearFloat32Reference:
    """SOMOR's and PA-I/II's float32-only arithmetic, one NumPy float32 scalar
    operation at a time (IEEE single, correctly rounded, like the FPU).

    Per sample, x with its constant 1 when fitting an intercept: x^T x, y^T y and
    yhat_j = sum_k x_k W_kj, each summed in index order, must be finite; then
    SOMOR: r = y - yhat, rn = sqrt(r^T r) finite, and when rn > eps and x^T x > 0,
    f = (1 - eps / rn) / x^T x, W_kj += (x_k f) r_j; PA: per output e = y_j - yhat_j,
    l = |e| - eps, tau = min(C, l / x^T x) (PA-I) or l / (x^T x + 0.5 / C) (PA-II),
    W_kj += x_k sign(e) tau. An update is refused when B + g, times
    1 + 2^-21 min(D m + D + m + 1024, 2^24), is not below float32's largest value:
    g = (x^T x + ||s||^2) / 2 (s the step's column), B a bound of ||W||_F grown by
    g after each update, recomputed as max|W| sqrt(sum (W / max|W|)^2) when unknown
    or after 256 updates. ``learn(x, y)`` returns (prediction, learnt).
    """

    def __init__(self, D: int, m: int, kind: int, C: float, eps: float, intercept: bool):
        f = np.float32
        self.W = np.zeros((D, m), np.float32)
        self.kind, self.C, self.eps, self.intercept = kind, f(C), f(eps), intercept
        self.B, self.count = f(np.nan), f(0.0)
        self.seen = self.skipped = 0
        n = min(D * m + D + m + 1024, 1 << 24)
        self.slack = f(f(1.0) + f(f(n) * f(2.0**-21)))

    def _frobenius(self) -> np.float32:
        f = np.float32
        big = f(np.abs(self.W).max()) if self.W.size else f(0.0)
        if big == 0.0 or not np.isfinite(big):
            return big
        acc = f(0.0)
        for v in self.W.reshape(-1):
            q = f(v / big)
            acc = f(acc + f(q * q))
        return f(big * np.sqrt(acc))

    def _fits(self, xx, ss):
        f = np.float32
        if not self.B >= 0.0 or self.count >= 256.0:
            self.B, self.count = self._frobenius(), f(0.0)
        grow = f(f(0.5) * f(xx + ss))
        if not f(f(self.B + grow) * self.slack) < np.finfo(np.float32).max:
            return None
        return grow

    def learn(self, x: np.ndarray, y: np.ndarray):
        with np.errstate(over="ignore", invalid="ignore"):
            ok, yhat = self._step(np.asarray(x, np.float32),
                                  np.asarray(y, np.float64).astype(np.float32))
        if ok:
            self.seen += 1
        else:
            self.skipped += 1
        return yhat, ok

    def _step(self, x, y):
        f = np.float32
        W = self.W
        D, m = W.shape
        xa = np.concatenate([x, [f(1.0)]]).astype(np.float32) if self.intercept else x
        xx = f(0.0)
        for v in xa:
            xx = f(xx + f(v * v))
        yy = f(0.0)
        for v in y:
            yy = f(yy + f(v * v))
        yhat = np.zeros(m, np.float32)
        for j in range(m):
            acc = f(0.0)
            for k in range(D):
                acc = f(acc + f(xa[k] * W[k, j]))
            yhat[j] = acc
        if not (np.isfinite(xx) and np.isfinite(yy) and np.all(np.isfinite(yhat))):
            return False, yhat
        if self.kind == 0:
            r = np.array([f(y[j] - yhat[j]) for j in range(m)], np.float32)
            rr = f(0.0)
            for v in r:
                rr = f(rr + f(v * v))
            rn = f(np.sqrt(rr))
            if not np.isfinite(rn):
                return False, yhat
            if rn > self.eps and xx > 0.0:
                g = f(f(f(1.0) - f(self.eps / rn)) / xx)
                grow = self._fits(xx, f(rr * f(g * g)))
                if grow is None:
                    return False, yhat
                for k in range(D):
                    a = f(xa[k] * g)
                    for j in range(m):
                        W[k, j] = f(W[k, j] + f(a * r[j]))
                self.B, self.count = f(self.B + grow), f(self.count + f(1.0))
            return True, yhat
        r = np.zeros(m, np.float32)
        ss = f(0.0)
        stepped = False
        for j in range(m):
            e = f(y[j] - yhat[j])
            loss = f(abs(e) - self.eps)
            if loss > 0.0 and xx > 0.0:
                if self.kind == 1:
                    step = min(self.C, f(loss / xx))
                else:
                    step = f(loss / f(xx + f(f(0.5) / self.C)))
                r[j] = step if e > 0.0 else -step
                stepped = True
                ss = f(ss + f(step * step))
        if not stepped:
            return True, yhat
        grow = self._fits(xx, ss)
        if grow is None:
            return False, yhat
        for k in range(D):
            for j in range(m):
                W[k, j] = f(W[k, j] + f(xa[k] * r[j]))
        self.B, self.count = f(self.B + grow), f(self.count + f(1.0))
        return True, yhat


class NORMAFloat32Reference:
    """NORMA's float32-only arithmetic (``arithmetic="float32"``) written step by step
    with NumPy float32 scalars, slowly, one support vector at a time: the kernel row
    summed feature by feature (two features per pass, as the kernels), exp(u) for
    u <= 0 by its textbook range reduction u = k ln2 + r (k = round(u / ln2),
    Cody-Waite split of ln2), the degree-7 Taylor polynomial of exp(r) and 2^k
    from its exponent bits, the decision value in four partial sums, then the
    update of docs/algorithms/norma.md with every value rounded to float32.

    ``loss``: "hinge", "hinge_nu", "novelty", "squared", "epsilon", "epsilon_nu",
    "huber", "huber_nu"; the hyper-parameters as the model holds them (float32
    values). ``step`` returns (score, learnt)."""

    F = np.float32
    #: float32 Taylor coefficients 1 / k!, k = 0..7.
    T = [np.float32(1.0 / math.factorial(k)) for k in range(8)]

    def __init__(self, d, tau, kernel, loss, eta, lam, nu, gamma, coef0, degree, rho0,
                 schedule, fit_offset):
        F = self.F
        self.sv = np.zeros((d, tau), F)
        self.coef = np.zeros(tau, F)
        self.s, self.b, self.rho = F(1.0), F(0.0), F(rho0)
        self.seen = self.skipped = self.n = self.next = self.dropped = self.active = 0
        self.kernel, self.loss, self.schedule, self.fit_offset = kernel, loss, schedule, fit_offset
        self.eta, self.lam, self.nu = F(eta), F(lam), F(nu)
        self.gamma, self.coef0, self.degree = F(gamma), F(coef0), degree

    def exp(self, u):
        """exp(u) for u <= 0 in float32 (below -87: exp(-87))."""
        F = self.F
        if u != u:
            return u
        t = F(-87.0) if u < F(-87.0) else u
        shifter = F(1.5 * 2.0**23)  # adding it rounds to an integer
        v = t * F(1.4426950408889634) + shifter
        k = v - shifter
        r = (t - k * F(0.693359375)) - k * F(-2.12194440e-4)
        T = self.T
        r2 = r * r
        p = ((T[0] + T[1] * r) + (T[2] + T[3] * r) * r2) \
            + ((T[4] + T[5] * r) + (T[6] + T[7] * r) * r2) * (r2 * r2)
        e = int(np.array([v], F).view(np.int32)[0]) - int(np.array([shifter], F).view(np.int32)[0])
        pow2 = np.array([(e + 127) << 23], np.int32).view(F)[0]
        return p * pow2

    def k(self, x, i):
        """k(x, sv_i) in float32, the features two at a time."""
        F, sv, d = self.F, self.sv, x.shape[0]
        acc = F(0.0)
        for j in range(0, d - 1, 2):
            a, b = x[j], x[j + 1]
            if self.kernel == "rbf":
                da, db = a - sv[j, i], b - sv[j + 1, i]
                acc = (acc + da * da) + db * db
            elif self.kernel == "laplacian":
                acc = (acc + abs(a - sv[j, i])) + abs(b - sv[j + 1, i])
            else:
                acc = (acc + a * sv[j, i]) + b * sv[j + 1, i]
        if d % 2:
            a = x[d - 1]
            if self.kernel == "rbf":
                acc = acc + (a - sv[d - 1, i]) * (a - sv[d - 1, i])
            elif self.kernel == "laplacian":
                acc = acc + abs(a - sv[d - 1, i])
            else:
                acc = acc + a * sv[d - 1, i]
        if self.kernel in ("rbf", "laplacian"):
            return self.exp(-self.gamma * acc)
        if self.kernel == "polynomial":
            base, v = self.gamma * acc + self.coef0, F(1.0)
            for _ in range(self.degree):
                v = v * base
            return v
        return acc

    def decision(self, x):
        F = self.F
        parts = [F(0.0)] * 4
        n4 = self.n - self.n % 4
        for i in range(self.n):
            lane = i % 4 if i < n4 else 0
            parts[lane] = parts[lane] + self.coef[i] * self.k(x, i)
        acc = (parts[0] + parts[1]) + (parts[2] + parts[3])
        return self.s * acc + self.b

    def score(self, x):
        g = self.decision(np.asarray(x, self.F))
        return g - self.rho if self.loss == "novelty" else g

    def step(self, x, y):
        F = self.F
        x = np.asarray(x, F)
        y = F(y)
        g = self.decision(x)
        rho = self.rho
        score = g - rho if self.loss == "novelty" else g
        if not (np.all(np.isfinite(x)) and np.isfinite(g) and np.isfinite(y)):
            self.skipped += 1
            return score, False
        eta = self.eta
        if self.schedule == "inv_sqrt":
            eta = eta / np.sqrt(F(min(self.seen + 1, 2**31 - 1)))  # t capped at int32's max
        nu, loss = self.nu, self.loss
        alpha, active, new_rho = F(0.0), False, rho
        if loss in ("hinge", "hinge_nu", "novelty"):
            active = y * g <= rho if loss != "novelty" else g < rho
            if active:
                alpha = eta * y if loss != "novelty" else eta
            if loss != "hinge":
                new_rho = rho - eta * (F(1.0) - nu) if active else rho + eta * nu
        else:
            delta = y - g
            if loss == "squared":
                alpha = eta * delta
                active = alpha != 0
            else:
                active = abs(delta) > rho
                if active:
                    alpha = eta * F(np.sign(delta))
                elif loss.startswith("huber") and rho > 0:
                    alpha = eta * delta / rho
                if loss.endswith("_nu"):
                    new_rho = rho + eta * (F(1.0) - nu) if active else rho - eta * nu
        s = self.s * (F(1.0) - eta * self.lam)
        renorm = s < F(2.0**-64)
        stored = alpha if renorm else alpha / s
        offset = self.b + alpha if self.fit_offset else F(0.0)
        if not (np.isfinite(stored) and np.isfinite(offset) and np.isfinite(new_rho)):
            self.skipped += 1
            return score, False
        if renorm:
            self.coef[: self.n] = self.coef[: self.n] * s
            s = F(1.0)
        if alpha != 0:
            tau = self.coef.shape[0]
            self.sv[:, self.next] = x
            self.coef[self.next] = alpha / s
            self.next = (self.next + 1) % tau
            if self.n < tau:
                self.n += 1
            else:
                self.dropped += 1
        self.s, self.b, self.rho = s, offset, new_rho
        self.seen += 1
        self.active += int(active)
        return score, True
