"""DFOP at high forgetting, the working tree against COMMIT, in one process.

    python asv_bench/dfop_refresh_speed.py COMMIT [rounds]

A refresh at forgetting mu covers ceil(d mu / 2) coordinates of the prior
(``prior._refresh_width``); from d mu > 2 on that is several downdates of P
a step. For d in 10, 50, 100 and mu in 0.1 .. 0.9, and DFOP(d, "auto") at
d = 10 and 50 on asv's stream: learn_many over asv's stream
(``linear_stream``), and learn_one from a Python loop at d = 10, each
round timing one call of each package, in alternating order; the median
of the per-round ratios (COMMIT's time over the tree's: above 1 the tree
is faster) and the tree's ns a row.
"""
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "benchmarks")]
from common import linear_stream  # noqa: E402
from same_process import package_at  # noqa: E402

import edgereg  # noqa: E402

SIZES = {10: 20_000, 50: 3_000, 100: 1_000}


def timed(call):
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def compare(name, make, X, y, rounds, one=False):
    models = [make(p) for p in (OLD, edgereg)]
    for m in models:  # compile
        m.learn_many(X[:4], y[:4])
    rows = list(X)
    targets = [float(t) for t in y]

    def run(m):
        m.reset()
        if one:
            learn = m.learn_one
            for x, t in zip(rows, targets, strict=True):
                learn(x, t)
        else:
            m.learn_many(X, y)

    ratios, new = [], []
    for r in range(rounds):
        order = (0, 1) if r % 2 == 0 else (1, 0)
        t = {i: timed(lambda i=i: run(models[i])) for i in order}
        ratios.append(t[0] / t[1])
        new.append(t[1])
    print(f"{name:<34} {np.median(ratios):6.2f}  {np.median(new) / len(y) * 1e9:9.0f}",
          flush=True)


def main():
    global OLD
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    OLD, sha = package_at(sys.argv[1], Path(tempfile.mkdtemp()) / "package")
    print(f"tree against {sha[:8]}, {rounds} rounds: ratio (above 1: the tree faster), "
          "tree's ns a row")
    for d, n in SIZES.items():
        X, y = linear_stream(n, d)
        for mu in (0.1, 0.25, 0.5, 0.75, 0.9):
            compare(f"DFOP d={d} mu={mu} learn_many", lambda p, d=d, mu=mu: p.DFOP(d, mu),
                    X, y, rounds)
        if d <= 50:
            compare(f"DFOP d={d} auto learn_many", lambda p, d=d: p.DFOP(d, "auto"), X, y,
                    rounds)
    X, y = linear_stream(5_000, 10)
    for mu in (0.5, 0.9):
        compare(f"DFOP d=10 mu={mu} learn_one", lambda p, mu=mu: p.DFOP(10, mu), X, y, rounds,
                one=True)


if __name__ == "__main__":
    main()
