"""keep_prior=False at high forgetting: the weights burst (docs/design/dfop.md).

Part 1: max |w_i| of edgereg's DFOP on elec2 (standardised on its first 2%,
plus a bias column) every 5,000 rows, keep_prior True and False, both dtypes.
Part 2: a NumPy prototype of the canonical update with the diagonal cap and
three restoring variants (w <- D^2 w; w <- D P D z with the information vector
z; the reset to the prior that edgereg adopted), on elec2 and on the
collinear stream of tests/test_dfop.py (60,000 rows).

    python docs/design/scripts/dfop_bursting_study.py      # about a minute
"""

import numpy as np

from edgereg import DFOP
from edgereg.datasets import load


def elec2():
    ds = load("elec2")
    X = np.asarray(ds.X, dtype=np.float64)
    head = X[: max(X.shape[0] // 50, 2)]
    mean, std = head.mean(axis=0), head.std(axis=0)
    std[std <= 1e-8 * np.maximum(1.0, np.abs(mean))] = 1.0
    return np.hstack([(X - mean) / std, np.ones((X.shape[0], 1))]), ds.y


def collinear(n=60_000, d=6, seed=7):
    """tests/test_dfop.py's _poorly_exciting_stream, shorter."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = np.cumsum(rng.normal(scale=1e-3, size=(n, d)), axis=0) + rng.normal(size=d)
    seg = n // 10
    for k in range(10):
        rows = slice(k * seg, (k + 1) * seg)
        if k % 3 == 1:
            X[rows, d // 2 :] = 0.0
        elif k % 3 == 2:
            X[rows, 1] = X[rows, 0]
    return X, np.einsum("ij,ij->i", X, W) + 0.1 * rng.normal(size=n)


def prototype(Z, y, mu, variant, p0=100.0, c=10.0):
    """Canonical forgetting RLS, diagonal cap c p0; variant: what happens at a cap."""
    n, d = Z.shape
    lam = 1.0 - mu
    w, P, z = np.zeros(d), p0 * np.eye(d), np.zeros(d)
    pred, wmax = np.empty(n), 0.0
    for t in range(n):
        x = Z[t]
        pred[t] = w @ x
        Px = P @ x
        den = lam + x @ Px
        w = w + Px * (y[t] - pred[t]) / den
        P = (P - np.outer(Px, Px) / den) / lam
        z = lam * z + x * y[t]
        if variant == "reset":  # edgereg's remedy: coordinate i back to the prior
            for i in range(d):
                if P[i, i] > c * p0:
                    rho = 1.0 / p0 - 1.0 / P[i, i]
                    Pi = P[i].copy()
                    den_i = 1.0 + rho * Pi[i]
                    w = w - Pi * (rho * w[i] / den_i)
                    P = P - np.outer(Pi, Pi) * (rho / den_i)
        elif P.diagonal().max() > c * p0:
            s = np.sqrt(np.minimum(1.0, c * p0 / P.diagonal()))
            P = P * np.outer(s, s)
            if variant == "D^2 w":
                w = w * s * s
            elif variant == "DPD z":
                w = P @ z
        wmax = max(wmax, np.abs(w).max())
    return pred, wmax


def main():
    Z, y = elec2()
    print("Part 1: max |w_i| every 5,000 rows, elec2, mu = 0.9 (on_invalid='skip')")
    for keep in (True, False):
        for dtype in ("float64", "float32"):
            m = DFOP(Z.shape[1], 0.9, task="classification", keep_prior=keep, dtype=dtype,
                     on_invalid="skip")
            peaks = []
            for s in range(0, len(y), 5000):
                m.learn_many(Z[s : s + 5000].astype(dtype), y[s : s + 5000])
                peaks.append(np.abs(m.state.w).max())
            print(f"keep_prior={keep!s:5} {dtype}: learnt {m.n_seen_} of {len(y)};",
                  " ".join(f"{v:.1e}" for v in peaks))
    print("\nPart 2: the cap's variants (float64 prototype)")
    Xc, yc = collinear()
    for variant in ("w kept", "D^2 w", "DPD z", "reset"):
        acc, top = [], 0.0
        for mu in (0.1, 0.5, 0.9):
            pred, wmax = prototype(Z, y, mu, variant)
            acc.append(100.0 * np.mean(np.sign(pred) == y))
            top = wmax
        pred, _ = prototype(Xc, yc, 0.01, variant)
        seg = ((pred - yc) ** 2).reshape(10, -1)[:, 1000:].mean(axis=1)
        print(f"{variant:7}: elec2 mu 0.1/0.5/0.9 {acc[0]:.1f} / {acc[1]:.1f} / {acc[2]:.1f},"
              f" max|w| at 0.9 {top:.1e}; collinear stretches (MSE) "
              f"{seg[2]:.3f} / {seg[5]:.3f} / {seg[8]:.3f}")


if __name__ == "__main__":
    main()
