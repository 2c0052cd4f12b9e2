"""Where a kernel's arrays start in memory, and what it costs (issue 16).

Run from the repository root::

    python docs/design/scripts/alignment_study.py

1. DFOP's fused block kernel, its float64 block B (scratch vectors first)
   placed at offsets 0..7 floats from a 64-byte boundary, at d = 10, 50, 200.
2. The same for PW (P and w), offsets 0, 2, 4, 6 floats.
3. A DFOPBank (6 members) against its members run alone as plain DFOPs.
4. The block B placed at every 128-byte offset of a 4 KiB page (P right
   before it, as DFOP allocates them), d = 10 and 50: samples/s, the
   slowest, median and fastest placement.

Measured (2-core AMD EPYC Zen 3, AVX2), ns per row, best of 7:
B offset: d = 10, 16-byte aligned 90-92, else 105-106; d = 50, 16-byte
aligned 681-692, else 747-761; d = 200, 32-byte aligned 7,719-7,981, else
10,551-10,781. PW offset at d = 200: 32-byte aligned 8,002-8,008, else
9,469-9,793. NumPy aligns to 16 bytes only, so at d = 200 a DFOP's speed
depends on where malloc put its blocks (large blocks come from mmap and
happened to be 64-byte aligned in these runs). The bank aligns A and each
member's block (``_kernels/bank.py``): at d = 50 it went from 1.18x to
0.98x the time of its members run alone.

4 (2026-11-26, AMD EPYC Zen 4, AVX-512). Until then the scratch vectors
followed each other every d floats, so in a 64-byte aligned B the fused
pass's accumulator (B + 8d bytes) started 16 bytes into a cache line at
d = 10 and 50. Measured at ccb6cdd with the same sweep (20,000 rows,
samples/s; the scratch alone at each offset, L, hyper and codes in arrays
of their own): d = 10, 7.5-8.5 M at every offset; d = 50, 1.4 M, but
0.85-1.0 M wherever the accumulator straddled a page (B at 3,300-3,700 bytes
into it: one allocation in ten). Through the class, in one process
(asv_bench/same_process.py ccb6cdd): 1.12-1.25x at d = 10, 1.13-1.14x at
d = 50. Each vector now starts every ``scratch_stride(d)``
floats (d rounded up to 8), so 64-byte aligned: d = 10, 12.4-13.7 M at
most offsets (about 9.3 M with B in the page's first 256 bytes: not
explained); d = 50, 1.4-1.5 M at every offset.
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


def page_sweep(d):
    X, y = stream(d, 20_000)
    model = DFOP(d, 0.01)
    model.learn_many(X[:10], y[:10])
    nP, nB = model._PW.size, model._B.size
    raw = aligned_zeros(4096 // 8 * 3 + nP + nB)
    skip = -raw.__array_interface__["data"][0] % 4096 // 8  # raw[skip] starts a page
    speeds = []
    for off in range(0, 4096, 128):
        start = skip + off // 8 + 4096 // 8 - nP % (4096 // 8)  # B at `off` into a page
        PW = raw[start : start + nP].reshape(model._PW.shape)
        B = raw[start + nP :][:nB]
        speeds.append(len(y) / min(run(model, X, y, B, PW) for _ in range(3)))
    s = np.array(speeds) / 1e6
    print(f"d = {d}, B at every 128 bytes of a page: {s.min():.2f} / {np.median(s):.2f} / "
          f"{s.max():.2f} M samples/s (slowest / median / fastest)", flush=True)


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
    for d in (10, 50):
        page_sweep(d)
