"""Sparse-DFOP vs DFOP on the paper's sparse state-space stream (docs/algorithms/sparse_dfop.md).

D = 1000, s = 10 non-zeros, w_t jumping every 500 steps; DFOP on the dense
input (d = D = 1000) against Sparse-DFOP with d = 100, both mu = 2e-3.
Reported over time: the prequential squared loss (window mean) and the tracking
error ||w_t - what_t||, where what_t is DFOP's w and, for Sparse-DFOP, the
weights it effectively applies on the support recovered by basis pursuit
every ``--every`` steps (``recover(s, coef="effective")``: the model predicts
psi^T v = (M^T v)^T x). Plus the wall-clock speedup of the learning calls.

    python examples/sparse_dfop_synthetic.py [--n 5000] [--every 250] [--plot out.png]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from edgereg import DFOP, SparseDFOP
from edgereg.streams import sparse_state_space


def run(n: int, every: int, plot: str | None) -> None:
    D, s, d, mu = 1000, 10, 100, 2e-3
    Xc, y, W = sparse_state_space(n, D, sparsity=s, jump_every=500, support="random",
                                  as_csr=True, seed=0)
    Xd = Xc.toarray()
    W = W.toarray()
    dfop = DFOP(D, forgetting=mu)
    sdfop = SparseDFOP(D, d, forgetting=mu, projection="gaussian", seed=0)
    dfop.learn_many(Xd[:2], y[:2])  # compile outside the timings
    sdfop.learn_many(Xc[:2], y[:2])
    dfop.reset()
    sdfop.reset()
    checkpoints = list(range(every, n + 1, every))
    rows = []
    t_dfop = t_sparse = 0.0
    prev = 0
    for t in checkpoints:
        t0 = time.perf_counter()
        p1 = dfop.learn_many(Xd[prev:t], y[prev:t])
        t1 = time.perf_counter()
        p2 = sdfop.learn_many(Xc[prev:t], y[prev:t])
        t2 = time.perf_counter()
        t_dfop += t1 - t0
        t_sparse += t2 - t1
        w_true = W[t - 1]
        w_hat = sdfop.recover(s, coef="effective")
        rows.append((t, np.mean((p1 - y[prev:t]) ** 2), np.mean((p2 - y[prev:t]) ** 2),
                     np.linalg.norm(dfop.coef_ - w_true), np.linalg.norm(w_hat - w_true)))
        prev = t
    print(f"{'t':>6} {'MSE DFOP':>10} {'MSE Sparse':>11} {'|w-w^| DFOP':>12} {'|w-w^| Sparse':>14}")
    for r in rows:
        print(f"{r[0]:6d} {r[1]:10.4f} {r[2]:11.4f} {r[3]:12.4f} {r[4]:14.4f}")
    arr = np.array(rows)
    print(f"\nmean prequential MSE: DFOP {arr[:, 1].mean():.4f}, "
          f"Sparse-DFOP {arr[:, 2].mean():.4f}")
    print(f"learning time: DFOP {t_dfop:.2f} s ({n / t_dfop:,.0f} samples/s), Sparse-DFOP "
          f"{t_sparse:.3f} s ({n / t_sparse:,.0f} samples/s): speedup {t_dfop / t_sparse:.0f}x "
          f"(paper: > 250x)")
    if plot:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib not installed: no plot")
            return
        fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
        ax[0].plot(arr[:, 0], arr[:, 3], label="DFOP (D=1000)")
        ax[0].plot(arr[:, 0], arr[:, 4], label="Sparse-DFOP (d=100)")
        ax[0].set(xlabel="t", ylabel="||w_t - what_t||", title="tracking error")
        ax[1].semilogy(arr[:, 0], arr[:, 1], label="DFOP")
        ax[1].semilogy(arr[:, 0], arr[:, 2], label="Sparse-DFOP")
        ax[1].set(xlabel="t", ylabel="window MSE", title="prequential loss")
        ax[0].legend()
        fig.tight_layout()
        fig.savefig(plot)
        print(f"plot written to {plot}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="stream length (CI: 500)")
    ap.add_argument("--every", type=int, default=250, help="steps between recoveries")
    ap.add_argument("--plot", default=None, help="write the figure to this file")
    a = ap.parse_args()
    run(a.n, min(a.every, a.n), a.plot)


if __name__ == "__main__":
    main()
