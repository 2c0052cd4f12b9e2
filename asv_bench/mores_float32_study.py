"""MORES' float32-only arithmetic against the default float32 and the float64 model.

    nice -n 10 python asv_bench/mores_float32_study.py accuracy [n] [decay]
    nice -n 10 python asv_bench/mores_float32_study.py speed [d] [m]

accuracy: the drifting stream of ``mores_float32_feasibility.py`` (d = 6, m = 3, a slow
drift and an abrupt change half way), learnt in blocks of n / 10 rows; prints
||W - W64||_F / ||W64||_F after each block for dtype="float32" (default arithmetic)
and for arithmetic="float32", and the prequential MSE of the three models.
speed: learn_many of 20,000 float32 rows, both float32 arithmetics interleaved in
one process (7 rounds, fresh models), median time of float32-only / default.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from mores_float32_feasibility import stream

import edgereg


def accuracy(n, decay):
    X, Y = stream(n)
    models = {"64": edgereg.MORES(6, 3, decay=decay),
              "32": edgereg.MORES(6, 3, decay=decay, dtype="float32"),
              "32only": edgereg.MORES(6, 3, decay=decay, dtype="float32",
                                      arithmetic="float32")}
    sq = dict.fromkeys(models, 0.0)
    print(f"n={n} d=6 m=3 decay={decay}")
    print("rows      dtype=float32 (auto)  arithmetic=float32")
    step = n // 10
    for start in range(0, n, step):
        Ws = {}
        for k, mod in models.items():
            P = mod.learn_many(X[start:start + step], Y[start:start + step])
            sq[k] += float(np.sum((P - Y[start:start + step]) ** 2))
            Ws[k] = np.vstack([mod.coef_, mod.intercept_]).astype(np.float64)
        ref = np.linalg.norm(Ws["64"])
        e32 = np.linalg.norm(Ws["32"] - Ws["64"]) / ref
        e = np.linalg.norm(Ws["32only"] - Ws["64"]) / ref
        print(f"{start + step:8d}  {e32:.2e}              {e:.2e}")
    print("prequential MSE:", {k: round(v / (3 * n), 6) for k, v in sq.items()},
          "refused:", {k: int(mod.state.counts[1]) for k, mod in models.items()})


def speed(d, m):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, d)).astype(np.float32)
    Y = X @ rng.normal(size=(d, m)) + 0.1 * rng.normal(size=(20_000, m))
    times = {"auto": [], "float32": []}
    for _ in range(8):
        for arith in times:
            model = edgereg.MORES(d, m, dtype="float32", arithmetic=arith)
            model.learn_many(X[:10], Y[:10])
            t = time.perf_counter()
            model.learn_many(X, Y)
            times[arith].append(time.perf_counter() - t)
    med = {k: float(np.median(v[1:])) for k, v in times.items()}
    ratio = med["float32"] / med["auto"]
    print(f"d={d} m={m}: auto {20_000 / med['auto']:.0f} rows/s, float32-only "
          f"{20_000 / med['float32']:.0f} rows/s, ratio of times {ratio:.2f}")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "accuracy":
        accuracy(int(sys.argv[2]) if len(sys.argv) > 2 else 200_000,
                 float(sys.argv[3]) if len(sys.argv) > 3 else 0.99)
    else:
        speed(int(sys.argv[2]) if len(sys.argv) > 2 else 6,
              int(sys.argv[3]) if len(sys.argv) > 3 else 3)
