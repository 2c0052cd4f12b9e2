"""Where a kernel's arrays start in memory, and what it costs (issue 16).

Run from the repository root::

    python docs/design/alignment_study.py

1. DFOP's fused block kernel, its float64 block B (scratch vectors first)
   placed at offsets 0..7 floats from a 64-byte boundary, at d = 10, 50, 200.
2. The same for PW (P and w), offsets 0, 2, 4, 6 floats.
3. A DFOPBank (6 members) against its members run alone as plain DFOPs.

Measured (2-core AMD EPYC Zen 3, AVX2), ns per row, best of 7:
B offset: d = 10, 16-byte aligned 90-92, else 105-106; d = 50, 16-byte
aligned 681-692, else 747-761; d = 200, 32-byte aligned 7,719-7,981, else
10,551-10,781. PW offset at d = 200: 32-byte aligned 8,002-8,008, else
9,469-9,793. NumPy aligns to 16 bytes only, so at d = 200 a DFOP's speed
depends on where malloc put its blocks (large blocks come from mmap and
happened to be 64-byte aligned in these runs). The bank aligns A and each
member's block (``_kernels/bank.py``): at d = 50 it went from 1.18x to
0.98x the time of its members run alone.
"""
import time

import numpy as np

from edgereg import DFOP
from edgereg._base import aligned_zeros
from edgereg._jit import python_function
from edgereg._kernels.dfop import _dfop_learn_many, _packed_views
from edgereg.bank import DEFAULT_GRID

ROWS = {10: 40_000, 50: 6_000, 200: 1_000}


def stream(d, n):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    return X, X @ (rng.normal(size=d) / np.sqrt(d)) + 0.1 * rng.normal(size=n)


def run(model, X, y, B, PW):
    d = X.shape[1]
    model.reset()
    B[:] = model._B
    PW[:] = model._PW
    work, L, hyper, codes = python_function(_packed_views)(B, d)
    out = np.empty(len(y))
    t = time.perf_counter()
    _dfop_learn_many(X, y, hyper[0:1], out, PW, L, work, hyper, codes)
    return time.perf_counter() - t


def offsets(d, which, choices):
    X, y = stream(d, ROWS[d])
    X = X.copy()
    model = DFOP(d, 0.01)
    model.learn_many(X[:10], y[:10])
    best = dict.fromkeys(choices, np.inf)
    for _ in range(7):
        for off in choices:
            rawB = aligned_zeros(model._B.size + 8)
            rawP = aligned_zeros(model._PW.size + 8)
            B = rawB[off if which == "B" else 0:][: model._B.size]
            PW = rawP[off if which == "PW" else 0:][: model._PW.size].reshape(model._PW.shape)
            best[off] = min(best[off], run(model, X, y, B, PW))
    n = len(y)
    print(f"d = {d}, {which} offset (floats) -> ns/row:",
          {o: round(t / n * 1e9) for o, t in best.items()}, flush=True)


def bank_against_members(d):
    X, y = stream(d, ROWS[d])
    bank = DFOP(d, "auto")
    members = [DFOP(d, mu) for mu in DEFAULT_GRID]
    for m in (bank, *members):
        m.learn_many(X[:10], y[:10])
    tb, tm = np.inf, np.inf
    for _ in range(15):
        bank.reset()
        t = time.perf_counter()
        bank.learn_many(X, y)
        tb = min(tb, time.perf_counter() - t)
        total = 0.0
        for m in members:
            m.reset()
            t = time.perf_counter()
            m.learn_many(X, y)
            total += time.perf_counter() - t
        tm = min(tm, total)
    n = len(y)
    print(f"d = {d}: bank {tb / n * 1e9:.0f} ns/row, its members alone {tm / n * 1e9:.0f} "
          f"ns/row ({tb / tm:.3f}x)", flush=True)


if __name__ == "__main__":
    for d in (10, 50, 200):
        offsets(d, "B", range(8))
    for d in (50, 200):
        offsets(d, "PW", (0, 2, 4, 6))
    for d in (10, 50):
        bank_against_members(d)
