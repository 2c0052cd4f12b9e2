"""What calibrated intervals cost DFOP: samples/s with and without ``coverage``, in one process.

Interleaved repeats (best of each), learn_many over blocks of 5,000 rows and
learn_one over 2,000 rows, d = 10 and 50, float64, mu = 0.01. Prints the
samples/s and the ratio on / off (docs/design/intervals.md).

    PYTHONPATH=$PWD python docs/design/intervals_speed.py
    PYTHONPATH=$PWD python docs/design/intervals_speed.py --off-only   # for two trees
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from edgereg import DFOP


def rate(model: DFOP, X: np.ndarray, y: np.ndarray, one: bool) -> float:
    if one:
        start = time.perf_counter()
        for t in range(X.shape[0]):
            model.learn_one(X[t], y[t])
    else:
        start = time.perf_counter()
        model.learn_many(X, y)
    return X.shape[0] / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--off-only", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    for d in (10, 50):
        for one in (False, True):
            n = 2_000 if one else 5_000
            X = rng.normal(size=(n, d))
            y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
            kinds = [None] if args.off_only else [None, 0.9]
            best = {k: 0.0 for k in kinds}
            for _ in range(args.repeats):
                for k in kinds:
                    m = DFOP(d, 0.01, coverage=k) if k else DFOP(d, 0.01)
                    m.learn_many(X[:10], y[:10])  # compiled
                    m.learn_one(X[0], y[0])
                    best[k] = max(best[k], rate(m, X, y, one))
            path = "learn_one" if one else "learn_many"
            text = " ".join(f"{'on' if k else 'off'} {v:,.0f}/s" for k, v in best.items())
            ratio = "" if args.off_only else f"  on/off {best[0.9] / best[None]:.3f}"
            print(f"d = {d:3d} {path:10s} {text}{ratio}")


if __name__ == "__main__":
    main()
