"""forgetting="auto" on the paper's 25 + 3 streams (reproduce_dfop.py's protocol), auto only.

The fixed-mu columns of docs/results.md do not depend on the bank; this
runs only ``DFOP(d + 1, "auto", p0=100, on_invalid="skip")`` over the 10
sub-streams of every stream and compares it with the "best fixed mu of the
grid (hindsight)" column of docs/results.md (written by
examples/reproduce_dfop.py, which runs everything, ~9x longer). Prints each
stream's gap (points) or MSE ratio and the targets' summary.

Run from the repository root::

    python docs/design/auto_forgetting_paper.py [dataset ...]   # after `edgereg data fetch all`
"""

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import reproduce_dfop as R  # noqa: E402


def best_fixed_of_results() -> dict[str, float]:
    """The best fixed mu's score per stream, from docs/results.md's table."""
    best = {}
    for line in (ROOT / "docs" / "results.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if (len(cells) > 10 and cells[2].replace(",", "").isdigit()
                and cells[1] not in best):  # the first table (later ones hold other columns)
            try:
                best[cells[1]] = float(cells[8].split()[0])
            except ValueError:  # a later table's row (intervals: a coverage in %)
                continue
    return best


def main() -> None:
    best = best_fixed_of_results()
    names = sys.argv[1:] or list(R.ALL)
    t0 = time.time()
    gaps, ratios = [], []
    print("| stream | best fixed mu of the grid (hindsight) | auto | auto - best (points) "
          "or auto / best (MSE) |\n|---|---:|---:|---:|")
    for name in names:
        for label, X, y, task in R.streams_of(name, R.default_root()):
            T = X.shape[0]
            Z = R.prepare(X, T)
            n = 4 * T // 5
            a = float(np.mean([R.prequential(Z[i * T // 50 : i * T // 50 + n],
                                             y[i * T // 50 : i * T // 50 + n], task, "auto")[0]
                               for i in range(1, 11)]))
            b = best[label]
            if task == "classification":
                gaps.append(100 * (a - b))
                print(f"| {label} | {b:.4f} | {a:.4f} | {gaps[-1]:+.2f} |", flush=True)
            else:
                ratios.append(a / b)
                print(f"| {label} | {b:.4g} | {a:.4g} | {ratios[-1]:.3f} |", flush=True)
    if gaps:
        print(f"\nwithin 1 point on {sum(g >= -1 for g in gaps)} of {len(gaps)} classification "
              f"streams, worst {min(gaps):+.2f}, below 3 points on {sum(g < -3 for g in gaps)}")
    print("regression MSE / best fixed: " + ", ".join(f"{r:.3f}" for r in ratios))
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
