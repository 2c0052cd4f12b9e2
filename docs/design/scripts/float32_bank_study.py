"""The self-tuning bank's float32-only arithmetic against the default (docs/design/float32.md).

Random walks (d = 5, 100,000 float32 rows, coefficients stepping 0.02 a row, noise 0.3):
the prequential MSE (regression) and accuracy (labels, the score's sign) of
``DFOP(d, "auto", dtype="float32", arithmetic="float32")``, of the default arithmetic
in float32 and of float64, and the learnt forgetting. Then the speed ratio of the two
float32 arithmetics, side by side in this one process (learn_many of 50,000 rows,
learn_one of 20,000; three rounds interleaved).

    python docs/design/scripts/float32_bank_study.py
"""

from __future__ import annotations

import time

import numpy as np

from edgereg import DFOP


def _walk(n=100_000, d=5, seed=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    W = rng.normal(size=d) + np.cumsum(0.02 * rng.normal(size=(n, d)), axis=0)
    return X, np.einsum("nd,nd->n", X, W) + 0.3 * rng.normal(size=n)


def accuracy(X, score):
    d = X.shape[1]
    for task in ("regression", "classification"):
        y = np.where(score >= 0, 1.0, -1.0) if task == "classification" else score
        models = {"float32 only": DFOP(d, "auto", task=task, dtype="float32",
                                       arithmetic="float32"),
                  "float32 default": DFOP(d, "auto", task=task, dtype="float32"),
                  "float64": DFOP(d, "auto", task=task)}
        for name, model in models.items():
            out = model.learn_many(X, y)
            figure = np.mean((out - y) ** 2) if task == "regression" else np.mean(out == y)
            print(f"{task:15s} {name:16s} {'MSE' if task == 'regression' else 'accuracy'} "
                  f"{figure:.6f}  forgetting_ {model.forgetting_:.4f}  skipped "
                  f"{model.n_skipped_}")


def speed(X, y, rounds=3):
    d = X.shape[1]
    makers = {"float32 only": lambda: DFOP(d, "auto", dtype="float32", arithmetic="float32"),
              "float32 default": lambda: DFOP(d, "auto", dtype="float32")}
    for make in makers.values():  # compile
        make().learn_many(X[:100], y[:100])
        make().learn_one(X[0], 1.0)
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in makers}
    for _ in range(rounds):
        for name, make in makers.items():
            model = make()
            start = time.perf_counter()
            model.learn_many(X[:50_000], y[:50_000])
            many = 50_000 / (time.perf_counter() - start)
            model = make()
            start = time.perf_counter()
            for t in range(20_000):
                model.learn_one(X[t], float(y[t]))
            rates[name].append((many, 20_000 / (time.perf_counter() - start)))
    for name, r in rates.items():
        print(f"{name:16s} learn_many rows/s {[round(a) for a, _ in r]}  "
              f"learn_one rows/s {[round(b) for _, b in r]}")
    a, b = (np.array(rates[n]) for n in makers)
    print("float32 only / default, per round: learn_many", np.round(a[:, 0] / b[:, 0], 2),
          "learn_one", np.round(a[:, 1] / b[:, 1], 2))


if __name__ == "__main__":
    X, score = _walk()
    accuracy(X, score)
    speed(X, score)
