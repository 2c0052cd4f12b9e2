"""Can MORES' step run in float32 only? A NumPy prototype of the step, every value in
one dtype (float32: no float64 anywhere), against the same prototype in float64 and
against the MORES class (float64, and dtype="float32" with its float64 solves).

The step follows ``_kernels/mores.py``: statistics; W-step through the eigenbasis of
K^T S K (Omega^-1 = K K^T, cyclic Jacobi on the m x m matrix) and the m shifted
systems (I + C s_j M) y_j = (RHS G)_j (here by LAPACK's LU of the same dtype instead
of the Householder tridiagonalisation); S-step with E clipped PSD (Jacobi); Omega-step.

    nice -n 10 python asv_bench/mores_float32_feasibility.py [n] [decay]

Prints the relative error ||W - W64||_F / ||W64||_F at checkpoints, and the
prequential mean squared error of each run.
"""

from __future__ import annotations

import sys

import numpy as np


def jacobi(A, V, tol, sweeps=30):
    """Cyclic Jacobi of the symmetric A (in place), rows of V rotated along, in A's dtype."""
    t_ = A.dtype.type
    n = A.shape[0]
    thr = t_(tol) * np.sqrt(np.sum(A * A, dtype=A.dtype))
    if not thr > 0:
        return
    one, two = t_(1), t_(2)
    for _ in range(sweeps):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                if abs(apq) <= thr:
                    continue
                rotated = True
                theta = (A[q, q] - A[p, p]) / (two * apq)
                t = one / (abs(theta) + np.sqrt(one + theta * theta))
                t = -t if theta < 0 else t
                c = one / np.sqrt(one + t * t)
                s = t * c
                J = np.eye(n, dtype=A.dtype)
                J[p, p] = c
                J[q, q] = c
                J[p, q] = s
                J[q, p] = -s
                A[:] = J.T @ A @ J
                A[p, q] = A[q, p] = 0
                V[:] = J.T @ V
        if not rotated:
            break


def step(st, x, y, C, mu, gamma, tau, tol):
    dt = st["W"].dtype
    t_ = dt.type
    C, mu, gamma, tau = t_(C), t_(mu), t_(gamma), t_(tau)
    half = t_(0.5)
    m = y.shape[0]
    I = np.eye(m, dtype=dt)
    W0 = st["W"].copy()
    yhat = W0.T @ x
    st["M"] = mu * st["M"] + np.outer(x, x)
    st["N"] = mu * st["N"] + np.outer(x, y)
    st["Q"] = mu * st["Q"] + np.outer(y, y)
    M, N, Q = st["M"], st["N"], st["Q"]
    # W-step
    K = np.linalg.cholesky(st["Om_inv"]).astype(dt)
    B = K.T @ st["S"] @ K
    B = (B + B.T) * half
    V = np.eye(m, dtype=dt)
    jacobi(B, V, tol)
    s = np.diag(B).copy()
    G = K @ V.T
    R = W0 @ (st["Om"] @ G) + N @ ((C * st["S"]) @ G)
    Y = np.empty_like(R)
    D = M.shape[0]
    ID = np.eye(D, dtype=dt)
    for j in range(m):
        Y[:, j] = np.linalg.solve(ID + (C * s[j]) * M, R[:, j])
    W = Y @ G.T
    st["W"] = W
    # S-step
    E = W.T @ (M @ W - N) - N.T @ W + Q
    E = (E + E.T) * half
    Bv = E.copy()
    V = np.eye(m, dtype=dt)
    jacobi(Bv, V, tol)
    lam = np.diag(Bv)
    if (lam < 0).any():
        E = (V.T * np.maximum(lam, 0)) @ V
    S_inv = (gamma * st["S_inv"] + half * C * E + tau * I) / (gamma + tau)
    st["S_inv"] = S_inv
    st["S"] = np.linalg.inv(S_inv).astype(dt)
    # Omega-step
    Dw = W - W0
    Om_inv = (gamma * st["Om_inv"] + half * (Dw.T @ Dw) + tau * I) / (gamma + tau)
    st["Om_inv"] = Om_inv
    st["Om"] = np.linalg.inv(Om_inv).astype(dt)
    for k, v in st.items():
        assert v.dtype == dt, (k, v.dtype)
    return yhat


def stream(n, d=6, m=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W1 = rng.normal(size=(d + 1, m))
    W2 = rng.normal(size=(d + 1, m))
    Y = np.empty((n, m))
    for t in range(n):
        a = 0.5 * (1 - np.cos(2 * np.pi * t / n))  # slow drift W1 -> W2 -> W1
        Wt = (1 - a) * W1 + a * W2
        if t >= n // 2:  # and an abrupt change half way
            Wt = Wt[:, ::-1]
        Y[t] = np.append(X[t], 1.0) @ Wt
    Y += 0.1 * rng.normal(size=Y.shape) @ np.array([[1, 0.5, 0], [0, 1, 0.5], [0, 0, 1]])[:m, :m]
    return X, Y


def run(dt, X, Y, C, mu, gamma, tau, checkpoints):
    n, d = X.shape
    m = Y.shape[1]
    D = d + 1
    tol = float(64 * np.finfo(dt).eps)
    st = {"W": np.zeros((D, m), dt), "M": np.zeros((D, D), dt), "N": np.zeros((D, m), dt),
          "Q": np.zeros((m, m), dt)}
    for k in ("Om", "Om_inv", "S", "S_inv"):
        st[k] = np.eye(m, dtype=dt)
    Ws, err = {}, 0.0
    for t in range(n):
        x = np.append(X[t], 1.0).astype(dt)
        y = Y[t].astype(dt)
        yhat = step(st, x, y, C, mu, gamma, tau, tol)
        err += float(np.sum((yhat.astype(np.float64) - Y[t]) ** 2))
        if t + 1 in checkpoints:
            Ws[t + 1] = st["W"].astype(np.float64)
    return Ws, err / n


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    mu = float(sys.argv[2]) if len(sys.argv) > 2 else 0.99
    C, gamma, tau = 1.0, 1.0, 100.0
    X, Y = stream(n)
    marks = {1000, 10_000, n // 4, n // 2, n // 2 + 1000, 3 * n // 4, n}
    cps = sorted(c for c in marks if 0 < c <= n)
    import edgereg

    W_cls = {}
    for dtype in ("float64", "float32"):
        model = edgereg.MORES(6, 3, C=C, decay=mu, gamma=gamma, tau=tau, dtype=dtype)
        prev = 0
        W_cls[dtype] = {}
        for cp in cps:
            model.learn_many(X[prev:cp], Y[prev:cp])
            W_cls[dtype][cp] = np.vstack([model.coef_, model.intercept_]).astype(np.float64)
            prev = cp
    W64, mse64 = run(np.float64, X, Y, C, mu, gamma, tau, cps)
    W32, mse32 = run(np.float32, X, Y, C, mu, gamma, tau, cps)

    def rel(A, B):
        return np.linalg.norm(A - B) / np.linalg.norm(B)

    print(f"n={n} d=6 m=3 C={C} decay={mu} gamma={gamma} tau={tau}")
    print(f"prequential MSE: prototype float64 {mse64:.6g}, float32-only {mse32:.6g}")
    print("rows     proto64-vs-MORES64  MORES(dtype=f32)-vs-64  float32-only-vs-64")
    for cp in cps:
        ref = W_cls["float64"][cp]
        print(f"{cp:7d}  {rel(W64[cp], ref):.2e}            {rel(W_cls['float32'][cp], ref):.2e}"
              f"                {rel(W32[cp], ref):.2e}")


if __name__ == "__main__":
    main()
