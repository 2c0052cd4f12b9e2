"""Where the auto bank's learn_many time goes: its members' forgetting factors.

    python docs/design/scripts/bank_cost_by_factor.py [--reps 7]

On asv's stream (``asv_bench/benchmarks/common.py``'s ``linear_stream``:
stationary, x ~ N(0, I), noise 0.1), at d = 10 (20,000 rows) and d = 50
(4,000 rows), best of ``reps`` calls, one process:

1. DFOP's learn_many time a row at each of a range of fixed factors: a
   member's cost is its factor's (the prior refresh covers
   ceil(d mu / 2) coordinates a step once d mu > 2: ``_kernels/prior.py``);
2. ``DFOP(d, "auto")`` (the window of 4 and its scout) and the window
   alone (``DFOPBank(d, scout=0)``), each over DFOP at 0.01;
3. the members' factors after the stream, and the scout's after each
   tenth of it (where the scout stands while the timed call runs).

Timings scatter by 10-30% between processes on the 2-core project
machine: compare figures of one run only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "asv_bench" / "benchmarks")]

from common import linear_stream  # noqa: E402

from edgereg import DFOP, DFOPBank  # noqa: E402

FACTORS = (0.0, 1e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75)


def ns_per_row(model, X, y, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        model.reset()
        t0 = time.perf_counter()
        model.learn_many(X, y)
        best = min(best, time.perf_counter() - t0)
    return best / len(y) * 1e9


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    for d, n in ((10, 20_000), (50, 4_000)):
        X, y = linear_stream(n, d)
        cells = []
        for mu in FACTORS:
            m = DFOP(d, mu)
            m.learn_many(X[:10], y[:10])
            cells.append(f"{mu:g}: {ns_per_row(m, X, y, args.reps):.0f}")
        print(f"d = {d}, DFOP ns a row by factor: " + ", ".join(cells))
        base = DFOP(d, 0.01)
        auto = DFOP(d, "auto")
        window = DFOPBank(d, scout=0)
        for m in (base, auto, window):
            m.learn_many(X[:10], y[:10])
        t_base = ns_per_row(base, X, y, args.reps)
        t_auto = ns_per_row(auto, X, y, args.reps)
        t_window = ns_per_row(window, X, y, args.reps)
        print(f"d = {d}: DFOP 0.01 {t_base:.0f} ns a row; auto {t_auto:.0f} "
              f"({t_auto / t_base:.2f}x); the window alone {t_window:.0f} "
              f"({t_window / t_base:.2f}x)")
        auto.reset()
        scouts = []
        for start in range(0, n, n // 10):
            auto.learn_many(X[start : start + n // 10], y[start : start + n // 10])
            scouts.append(f"{auto.member_forgetting_[-1]:g}")
        print(f"d = {d}: auto's members after the stream: {list(auto.member_forgetting_)}; "
              f"the scout's factor after each tenth of it: {', '.join(scouts)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
