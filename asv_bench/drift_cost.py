"""DriftAlarm's cost over DFOP's, for a commit and the working tree, in one process.

    python asv_bench/drift_cost.py COMMIT [rounds]

COMMIT's ``edgereg/`` is imported beside the working tree's (``same_process.
package_at``). Each round times one ``learn_many`` of 20,000 rows of
``benchmarks/common.linear_stream`` by each of four models, DFOP(d, 0.01) and
DriftAlarm(DFOP(d, 0.01)) (the default test) of either tree, in an order that
rotates round by round, so the machine's drifts fall on all four. Printed per
d: the best time per row of each (as asv's ``samples_per_second``) and the
ratios DriftAlarm / DFOP of each tree from those (the target: at most 2.5 at
d = 10 and 50), then the median of the per-round ratios and their quartiles:
on this shared machine a call of a few milliseconds is often descheduled, so
the per-round ratios scatter (both ways) and the best times are the figure.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.common import linear_stream  # noqa: E402
from same_process import package_at  # noqa: E402

import edgereg  # noqa: E402

N = 20_000


def main() -> None:
    commit = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    with tempfile.TemporaryDirectory() as tmp:
        old, sha = package_at(commit, Path(tmp))
        print(f"| d | DFOP {sha[:8]} (ns/row) | DriftAlarm {sha[:8]} | DFOP tree | DriftAlarm tree "
              f"| ratio {sha[:8]} | ratio tree | per-round ratio {sha[:8]}, median (quartiles) "
              "| per-round ratio tree |")
        print("|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for d in (10, 50):
            X, y = linear_stream(N, d, seed=0)
            models = [pkg.DFOP(d, 0.01) if k == 0 else pkg.DriftAlarm(pkg.DFOP(d, 0.01))
                      for pkg in (old, edgereg) for k in (0, 1)]
            for m in models:
                m.learn_many(X[:10], y[:10])  # compile
            times = [[] for _ in models]
            for r in range(rounds):
                for k in np.roll(np.arange(len(models)), r):
                    models[k].reset()
                    t0 = time.perf_counter()
                    models[k].learn_many(X, y)
                    times[k].append(time.perf_counter() - t0)
            t = np.array(times)
            best = t.min(axis=1) * 1e9 / N
            cells = []
            for a in (0, 2):
                q1, q2, q3 = np.percentile(t[a + 1] / t[a], [25, 50, 75])
                cells.append(f"{q2:.2f} ({q1:.2f}-{q3:.2f})")
            ratios = f"| {best[1] / best[0]:.2f} | {best[3] / best[2]:.2f} "
            print(f"| {d} | {best[0]:.0f} | {best[1]:.0f} | {best[2]:.0f} | {best[3]:.0f} "
                  f"{ratios}| {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
