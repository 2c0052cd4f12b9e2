"""NORMA's float32-only arithmetic against the float64 model and the mixed float32 one
(docs/design/float32.md, NORMA).

Accuracy: 150,000 rows, d = 6, budget 100, gamma 0.3, a nonlinear target whose
sign flips at row 75,000 (tests/test_float32_arithmetic_norma.py's stream).
Regression: the largest |g - g64| / max |g64| on 1,000 probes after each block of
10,000 rows; classification (nu = 0.2) and novelty (nu = 0.1): the prequential
error / flagged fraction of each model and the fraction of rows whose label /
flag differs from the float64 model's.

Speed: learn_one and learn_many of NORMARegressor, d = 10, budget 200, inv_sqrt,
the three arithmetics interleaved in one process, median over rounds of each
one's rate relative to the mixed float32 model's in the same round.

    python docs/design/scripts/float32_norma_study.py
"""

from __future__ import annotations

import time

import numpy as np

import edgereg

CLASSES = {"regression": edgereg.NORMARegressor, "classification": edgereg.NORMAClassifier,
           "novelty": edgereg.NORMANovelty}
ARITHMETICS = {"float32-only": {"dtype": "float32", "arithmetic": "float32"},
               "mixed float32": {"dtype": "float32"}, "float64": {}}


def stream(n=150_000, d=6):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    y[n // 2:] = -y[n // 2:]
    probes = rng.normal(size=(1000, d)).astype(np.float32).astype(np.float64)
    return X, y, probes


def regression(params):
    X, y, probes = stream()
    kw = {"budget": 100, "gamma": 0.3, **params}
    models = {k: edgereg.NORMARegressor(6, **kw, **a) for k, a in ARITHMETICS.items()}
    worst = dict.fromkeys(models, 0.0)
    for start in range(0, len(y), 10_000):
        rows = slice(start, start + 10_000)
        for m in models.values():
            m.learn_many(X[rows], y[rows])
        ref = models["float64"].predict_many(probes)
        for k, m in models.items():
            worst[k] = max(worst[k], np.abs(m.predict_many(probes) - ref).max()
                           / np.abs(ref).max())
    refused = models["float32-only"].n_skipped_
    print(f"regression {params}: g deviation float32-only {worst['float32-only']:.2g}, "
          f"mixed {worst['mixed float32']:.2g}; refused {refused}")


def statistical(task, nu):
    X, y, _ = stream()
    labels = np.where(y > 0, 1.0, -1.0)
    out = {}
    for k, a in ARITHMETICS.items():
        m = CLASSES[task](6, budget=100, gamma=0.3, nu=nu, **a)
        out[k] = m.learn_many(X) if task == "novelty" else m.learn_many(X, labels)
    rate = {k: float(np.mean(v != labels) if task == "classification" else np.mean(v))
            for k, v in out.items()}
    apart = {k: float(np.mean(out[k] != out["float64"])) for k in out}
    what = "error" if task == "classification" else "flagged"
    print(f"{task} nu={nu}: {what} " + ", ".join(f"{k} {v:.4f}" for k, v in rate.items())
          + "; differs from float64 on " + ", ".join(
              f"{k} {apart[k]:.3f}" for k in ("float32-only", "mixed float32")))


def speed(rounds=15):
    rng = np.random.default_rng(0)
    d, tau, n = 10, 200, 6000
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    data = {k: X.astype(np.float32) if a else X for k, a in ARITHMETICS.items()}

    def model(k):
        return edgereg.NORMARegressor(d, tau, gamma=0.3, learning_rate_schedule="inv_sqrt",
                                      **ARITHMETICS[k])

    rate = {k: {"learn_one": [], "learn_many": []} for k in ARITHMETICS}
    for k in ARITHMETICS:  # compile
        model(k).learn_many(data[k][:50], y[:50])
        model(k).learn_one(data[k][0], y[0])
    for _ in range(rounds):
        for k, Xk in data.items():
            m = model(k)
            m.learn_many(Xk[:1000], y[:1000])  # the budget full
            t = time.perf_counter()
            m.learn_many(Xk[1000:], y[1000:])
            rate[k]["learn_many"].append((n - 1000) / (time.perf_counter() - t))
            m = model(k)
            m.learn_many(Xk[:1000], y[:1000])
            rows = list(zip(Xk[1000:3000], y[1000:3000].tolist(), strict=True))
            t = time.perf_counter()
            for x, v in rows:
                m.learn_one(x, v)
            rate[k]["learn_one"].append(len(rows) / (time.perf_counter() - t))
    base = rate["mixed float32"]
    for k, r in rate.items():
        print(f"{k:14s} " + "  ".join(
            f"{p} {np.median(v) / 1e3:.0f} k/s ({np.median(np.array(v) / np.array(base[p])):.2f}x)"
            for p, v in r.items()))


if __name__ == "__main__":
    regression({"loss": "epsilon", "epsilon": 0.05, "learning_rate_schedule": "inv_sqrt",
                "learning_rate": 1.0})
    regression({})
    statistical("classification", 0.2)
    statistical("novelty", 0.1)
    speed()
