"""DFOP(10, "auto").learn_one, the working tree's against COMMIT's, in one process.

    python asv_bench/bank_learn_one.py COMMIT [rounds]

Two loops per package, on asv's ``AutoLearnOne`` data (10,000 rows of
``linear_stream``, rows as a list of arrays and targets as floats): asv's
own loop of ``learn_one`` calls from Python ("py"), and the bank's
learn_one kernel called from a compiled loop ("kernel": no Python per
step). Each round resets the model and times one pass of each, the two
packages in alternating order; printed: samples/s (median and best) and
COMMIT's median time over the tree's, by the wall clock and by the thread's
CPU time ("cpu": the time the process ran, which the other processes of a
loaded machine move much less; asv reads the wall clock, best of 5).
COMMIT's edgereg/ is imported beside the tree's (``same_process.py``).
"""
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.common import linear_stream  # noqa: E402
from same_process import package_at  # noqa: E402

import edgereg  # noqa: E402
import edgereg._kernels.bank  # noqa: E402, F401


def make_loop(kern):
    @njit
    def loop(X, Y, PW, A):
        s = 0.0
        for t in range(X.shape[0]):
            s += kern(X[t], Y[t], PW, A)
        return s
    return loop


def calls(pkg, X, y):
    rows, targets = list(X), [float(v) for v in y]
    model = pkg.DFOP(10, "auto")

    def py():
        model.reset()
        learn = model.learn_one
        for x, t in zip(rows, targets, strict=True):
            learn(x, t)

    loop = make_loop(pkg._kernels.bank._bank_learn_one)
    other = pkg.DFOP(10, "auto")

    def kernel():
        other.reset()
        loop(X, y, other._PW, other._B)

    py()
    kernel()
    return {"py": py, "kernel": kernel}


def main():
    old, sha = package_at(sys.argv[1], Path(tempfile.mkdtemp()))
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    X, y = linear_stream(10_000, 10)
    sides = {"old": calls(old, X, y), "new": calls(edgereg, X, y)}
    wall, cpu = collections.defaultdict(list), collections.defaultdict(list)
    for r in range(rounds):
        for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
            for what, f in sides[side].items():
                c0, t0 = time.thread_time(), time.perf_counter()
                f()
                wall[side, what].append(time.perf_counter() - t0)
                cpu[side, what].append(time.thread_time() - c0)
    n = len(y)
    print(f"tree against {sha[:8]}, {rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    print(f"| loop | clock | {sha[:8]} k/s median (best) | tree k/s median (best) | ratio |")
    print("|---|---|---:|---:|---:|")
    for what in ("py", "kernel"):
        for clock, times in (("wall", wall), ("cpu", cpu)):
            o, t = np.array(times["old", what]), np.array(times["new", what])
            print(f"| {what} | {clock} | {n / np.median(o) / 1e3:.0f} ({n / o.min() / 1e3:.0f}) "
                  f"| {n / np.median(t) / 1e3:.0f} ({n / t.min() / 1e3:.0f}) "
                  f"| {np.median(o) / np.median(t):.3f} |")


if __name__ == "__main__":
    main()
