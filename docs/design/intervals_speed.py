"""What calibrated intervals and imputation cost DFOP: samples/s in one process.

DFOP(d, 0.01), float64: learn_many over 40,000 rows at d = 10 and 6,000 at
d = 50 (asv_bench/benchmarks/bench_intervals.py's blocks), plain, with
``coverage=0.9`` and ``interval=True`` (the interval before each row), and
with ``missing="impute"`` on complete rows; learn_one over 10,000 rows at
d = 10, plain and with its interval. Interleaved repeats, best of each;
prints each mode's ratio to plain (docs/design/intervals.md).

    PYTHONPATH=$PWD python docs/design/intervals_speed.py
    # beside another tree (main) in the same process: a copy of its package
    # renamed, e.g. git archive main edgereg | tar -x -C /tmp/base &&
    # mv /tmp/base/edgereg /tmp/base/edgereg_base
    PYTHONPATH=$PWD python docs/design/intervals_speed.py --base /tmp/base
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import numpy as np

import edgereg

MODES = {"plain": ({}, {}), "interval": ({"coverage": 0.9}, {"interval": True}),
         "impute": ({"missing": "impute"}, {})}


def stream(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d) / np.sqrt(d)
    return X, X @ w + 0.1 * rng.normal(size=n)


def best_times(models: dict, run, repeats: int) -> dict:
    best = {k: np.inf for k in models}
    for _ in range(repeats):
        for k, (m, call) in models.items():  # interleaved: the load hits every mode alike
            m.reset()
            t0 = time.perf_counter()
            run(m, call)
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--base", help="folder holding a package edgereg_base to compare with")
    args = ap.parse_args()
    packages = {"this": edgereg}
    if args.base:
        sys.path.insert(0, args.base)
        packages = {"base": importlib.import_module("edgereg_base"), **packages}
    first = next(iter(packages))
    for d, n in ((10, 40_000), (50, 6_000)):
        X, y = stream(n, d)
        models = {}
        for p, mod in packages.items():
            for k, (made, call) in MODES.items():
                m = mod.DFOP(d, 0.01, **made)
                m.learn_many(X[:10], y[:10], **call)  # compiled
                models[p, k] = (m, call)
        best = best_times(models, lambda m, call, X=X, y=y: m.learn_many(X, y, **call),
                          args.repeats)
        for p in packages:
            print(f"learn_many d = {d:3d} {p:4s} plain {n / best[p, 'plain']:10,.0f}/s "
                  f"({best[first, 'plain'] / best[p, 'plain']:.3f}x {first}'s)  interval "
                  f"{best[p, 'plain'] / best[p, 'interval']:.3f}x  impute "
                  f"{best[p, 'plain'] / best[p, 'impute']:.3f}x")
    d = 10
    X, y = stream(10_000, d)
    rows, targets = list(X), [float(v) for v in y]
    models = {}
    for p, mod in packages.items():
        for k in ("plain", "interval", "impute"):
            made, call = MODES[k]
            m = mod.DFOP(d, 0.01, **made)
            m.learn_one(rows[0], targets[0], **call)
            models[p, k] = (m, call)

    def loop(m, call):
        learn = m.learn_one
        for x, t in zip(rows, targets, strict=True):
            learn(x, t, **call)

    best = best_times(models, loop, args.repeats)
    for p in packages:
        print(f"learn_one  d = {d:3d} {p:4s} plain {10_000 / best[p, 'plain']:10,.0f}/s "
              f"({best[first, 'plain'] / best[p, 'plain']:.3f}x {first}'s)  interval "
              f"{best[p, 'plain'] / best[p, 'interval']:.3f}x  impute "
              f"{best[p, 'plain'] / best[p, 'impute']:.3f}x")


if __name__ == "__main__":
    main()
