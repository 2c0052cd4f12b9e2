"""Slow, obviously-correct references for every kernel (stumpy's tests/naive.py idea).

Written straight from the equations of SPEC.md with NumPy and SciPy, without
any of the tricks the kernels use. One section per model; tests compare a
kernel with its reference after every step of a stream.
"""

from __future__ import annotations

import numpy as np

# ----------------------------------------------------------------------------
# DFOP (SPEC section 1)
# ----------------------------------------------------------------------------


def dfop_closed_form(X: np.ndarray, y: np.ndarray, mu: np.ndarray, p0: float) -> np.ndarray:
    """Minimiser of the discounted least squares after every step.

    w_t = argmin_w  Lambda_t / p0 ||w||^2 + sum_{i<=t} (prod_{j=i+1..t} lambda_j) (y_i - w^T x_i)^2

    with lambda_j = 1 - mu_j and Lambda_t = prod_{j<=t} lambda_j (the prior
    P0 = p0 I discounted like the data). Solved directly for each t from the
    explicitly weighted normal equations. Returns W of shape (n, d), row t
    the solution after learning samples 0..t.
    """
    n, d = X.shape
    lam = 1.0 - np.asarray(mu, dtype=np.float64) * np.ones(n)
    W = np.empty((n, d))
    for t in range(n):
        # weight of sample i at time t: prod_{j=i+1..t} lambda_j
        weights = np.array([np.prod(lam[i + 1 : t + 1]) for i in range(t + 1)])
        prior = np.prod(lam[: t + 1]) / p0
        R = prior * np.eye(d) + (X[: t + 1].T * weights) @ X[: t + 1]
        b = (X[: t + 1].T * weights) @ y[: t + 1]
        W[t] = np.linalg.solve(R, b)
    return W


def textbook_rls(X: np.ndarray, y: np.ndarray, lam: float, p0: float) -> tuple[np.ndarray, np.ndarray]:
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
