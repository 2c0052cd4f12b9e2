"""Study for issue 16: a bank of DFOPs over a log grid of mu, aggregated online.

Run from the repository root (shared datasets beside it)::

    python docs/design/auto_forgetting_study.py            # every stream, ~30 s
    python docs/design/auto_forgetting_study.py 2CDT elec2

It prints, per stream of examples/reproduce_dfop.py's protocol (10
sub-streams, prequential), the best fixed mu of the grid in hindsight, the
prefix rule's mu, and the fixed-share aggregate for each (eta, alpha) tried.
Results and the choice they support: docs/design/auto-forgetting.md.

Members are independent, so each member's prequential predictions over a
sub-stream come from one learn_many (task='regression' on +-1 labels: the same
update as classification, whose prediction is sign(w.x)). The aggregation then
runs over the (T, K) matrix of predictions.
"""
import sys, time
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "examples"))
import reproduce_dfop as R
from edgereg import DFOP
from numba import njit

GRID = np.array([0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1])


def member_predictions(Z, y, task):
    P = np.empty((Z.shape[0], GRID.size))
    for k, mu in enumerate(GRID):
        m = DFOP(Z.shape[1], float(mu), task="regression", p0=R.P0, on_invalid="skip")
        P[:, k] = m.learn_many(Z, y)
    return P


@njit
def fixed_share(P, y, eta, alpha, clip, lossmode):
    """Prequential aggregate: weights before y_t, then exp-update and share."""
    T, K = P.shape
    logw = np.zeros(K)
    out = np.empty(T)
    for t in range(T):
        m = logw.max()
        s = 0.0
        num = 0.0
        for k in range(K):
            p = P[t, k]
            if clip > 0:
                p = min(max(p, -clip), clip)
            wk = np.exp(logw[k] - m)
            s += wk
            num += wk * p
        out[t] = num / s
        # update
        for k in range(K):
            p = P[t, k]
            if clip > 0:
                p = min(max(p, -clip), clip)
            if lossmode == 0:
                l = (p - y[t]) ** 2
            else:
                l = 1.0 if p * y[t] <= 0 else 0.0
            logw[k] -= eta * l
        # fixed share in probability space
        m = logw.max()
        s = 0.0
        for k in range(K):
            s += np.exp(logw[k] - m)
        for k in range(K):
            v = (1 - alpha) * np.exp(logw[k] - m) / s + alpha / K
            logw[k] = np.log(v)
    return out


def evaluate(names, configs, n_sub=10):
    rows = []
    for name in names:
        for label, X, y, task in R.streams_of(name, R.default_root()):
            T = X.shape[0]
            Z = R.prepare(X, T)
            length = (4 * T) // 5
            per_mu = np.zeros(GRID.size)
            per_cfg = np.zeros(len(configs))
            mu_prefix = R.choose_mu(Z, y, task, T)
            prefix_score = 0.0
            for i in range(1, n_sub + 1):
                s = (i * T) // 50
                Zs, ys = Z[s:s + length], y[s:s + length]
                P = member_predictions(Zs, ys, task)
                if task == "classification":
                    for k in range(GRID.size):
                        per_mu[k] += np.mean(np.where(P[:, k] > 0, 1.0, -1.0) == ys)
                    k0 = int(np.flatnonzero(GRID == mu_prefix)[0])
                    prefix_score += np.mean(np.where(P[:, k0] > 0, 1.0, -1.0) == ys)
                    for c, (eta, alpha, clip, lm) in enumerate(configs):
                        agg = fixed_share(P, ys, eta, alpha, clip, lm)
                        per_cfg[c] += np.mean(np.where(agg > 0, 1.0, -1.0) == ys)
                else:
                    for k in range(GRID.size):
                        per_mu[k] += np.mean((P[:, k] - ys) ** 2)
                    k0 = int(np.flatnonzero(GRID == mu_prefix)[0])
                    prefix_score += np.mean((P[:, k0] - ys) ** 2)
                    sc = np.std(ys[:max(T // 50, 2)]) ** 2 + 1e-12
                    for c, (eta, alpha, clip, lm) in enumerate(configs):
                        agg = fixed_share(P, ys, eta / sc, alpha, 0.0, 0)
                        per_cfg[c] += np.mean((agg - ys) ** 2)
            per_mu /= n_sub; per_cfg /= n_sub; prefix_score /= n_sub
            rows.append((label, task, per_mu, prefix_score, per_cfg))
            best = per_mu.max() if task == "classification" else per_mu.min()
            kb = int(np.argmax(per_mu) if task == "classification" else np.argmin(per_mu))
            print(f"{label:14s} best fixed {best:.4f} (mu={GRID[kb]:g}) prefix {prefix_score:.4f} | "
                  + " ".join(f"{v:.4f}" for v in per_cfg), flush=True)
    return rows


def regimes(eta=2.0, alpha=1e-3, seeds=5):
    """The bank on edgereg.streams.drift_regimes against every fixed mu of the grid."""
    from edgereg.streams import drift_regimes

    for task in ("regression", "classification"):
        for noise in (0.1, 0.5):
            res = []
            for seed in range(seeds):
                X, y, _, _ = drift_regimes(task=task, noise=noise, seed=seed)
                P = np.empty((len(y), GRID.size))
                for k, mu in enumerate(GRID):
                    P[:, k] = DFOP(X.shape[1], float(mu), p0=100.0).learn_many(X, y)
                if task == "regression":
                    fixed = [np.mean((P[:, k] - y) ** 2) for k in range(GRID.size)]
                    agg = fixed_share(P, y, eta / np.var(y[:600]), alpha, 0.0, 0)
                    a, b = np.mean((agg - y) ** 2), min(fixed)
                    res.append((a, b, a < b))
                else:
                    fixed = [np.mean(np.where(P[:, k] > 0, 1, -1) == y) for k in range(GRID.size)]
                    agg = fixed_share(P, y, eta, alpha, 1.0, 0)
                    a, b = np.mean(np.where(agg > 0, 1, -1) == y), max(fixed)
                    res.append((a, b, a > b))
            print(f"drift_regimes {task} noise {noise}: beats every fixed mu on "
                  f"{sum(r[2] for r in res)}/{seeds}: "
                  + " ".join(f"{r[0]:.4f}/{r[1]:.4f}" for r in res), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--regimes"]:
        regimes()
        raise SystemExit(0)
    configs = [(eta, alpha, 1.0, 0) for eta in (0.5, 2.0, 8.0) for alpha in (1e-3, 1e-2)]
    print("configs:", configs)
    names = sys.argv[1:] or [n for n in R.ALL]
    t0 = time.time()
    evaluate(names, configs)
    print(f"{time.time()-t0:.0f} s")
