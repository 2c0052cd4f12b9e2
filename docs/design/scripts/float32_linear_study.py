"""The SOMOR / PARegressor measurements of docs/design/float32.md ("float32-only
arithmetic", "SOMOR and PARegressor").

    python docs/design/scripts/float32_linear_study.py [long|scaled]

long: 200,000 rows at d = 6, m = 2, the target's sign flipped at row 100,000: the
weights of a mixed float32 and a float32-only model against a float64 model's on the
same float32-rounded rows (the largest max|W - W64| / max|W64| after each block of
20,000 rows), the largest prediction difference, the last block's mean squared error
and the rows refused. scaled: the same stream with the inputs times 1e-3 and 1e3.
"""

from __future__ import annotations

import sys

import numpy as np

from edgereg import SOMOR, PARegressor

CONFIGS = [("somor", 1.0, 0.01), ("I", 0.1, 0.01), ("II", 0.1, 0.01), ("I", 1.0, 0.0),
           ("II", 1.0, 0.1)]


def _model(kind, C, eps, d, m, **kw):
    if kind == "somor":
        return SOMOR(d, m, epsilon=eps, **kw)
    return PARegressor(d, m, variant=kind, C=C, epsilon=eps, **kw)


def _run(scale: float) -> None:
    rng = np.random.default_rng(11)
    d, m, n = 6, 2, 200_000
    X = (scale * rng.normal(size=(n, d))).astype(np.float32).astype(np.float64)
    A = rng.normal(size=(d, m)) / scale
    Y = X @ A + 0.1 * rng.normal(size=(n, m))
    Y[n // 2:] = X[n // 2:] @ -A + 0.1 * rng.normal(size=(n - n // 2, m))
    print(f"inputs x {scale:g}")
    print("| model | W dev. float32-only / mixed | max pred. diff. float32-only / mixed "
          "| last-block MSE float32-only / mixed / float64 | refused |")
    for kind, C, eps in CONFIGS:
        only = _model(kind, C, eps, d, m, dtype="float32", arithmetic="float32")
        mixed = _model(kind, C, eps, d, m, dtype="float32")
        ref = _model(kind, C, eps, d, m)
        dev, pred = [0.0, 0.0], [0.0, 0.0]
        for start in range(0, n, 20_000):
            rows = slice(start, start + 20_000)
            po, pm = only.learn_many(X[rows], Y[rows]), mixed.learn_many(X[rows], Y[rows])
            pr = ref.learn_many(X[rows], Y[rows])
            R = ref.state.W
            for i, (model, p) in enumerate(((only, po), (mixed, pm))):
                dev[i] = max(dev[i], np.abs(model.state.W - R).max() / np.abs(R).max())
                pred[i] = max(pred[i], np.abs(p - pr).max())
        mse = [float(np.mean((p - Y[-20_000:]) ** 2)) for p in (po, pm, pr)]
        name = "SOMOR" if kind == "somor" else f"PA-{kind} C={C}"
        print(f"| {name} eps={eps} | {dev[0]:.1e} / {dev[1]:.1e} | {pred[0]:.1e} / "
              f"{pred[1]:.1e} | {mse[0]:.6f} / {mse[1]:.6f} / {mse[2]:.6f} | "
              f"{only.n_skipped_} |")


if __name__ == "__main__":
    which = sys.argv[1:] or ["long", "scaled"]
    if "long" in which:
        _run(1.0)
    if "scaled" in which:
        _run(1e-3)
        _run(1e3)
