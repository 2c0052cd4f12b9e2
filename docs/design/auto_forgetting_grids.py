"""Issue 16: the DFOPBank's accuracy for several member grids, on reproduce_dfop.py's protocol.

Run from the repository root (shared datasets beside it)::

    GRIDS=G8,G6,G5a,G5b,G5c,G4 python docs/design/auto_forgetting_grids.py [dataset ...]

For every stream (10 sub-streams, prequential, as examples/reproduce_dfop.py)
it prints the best fixed mu of issue 16's grid in hindsight and the bank's
score for each grid, then per grid the count of classification streams
within 1 point of the best fixed mu, the worst gap and the regression MSE
ratios. Results: docs/design/auto-forgetting.md ("Grid").
"""
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import reproduce_dfop as R  # noqa: E402

from edgereg import DFOP  # noqa: E402

GRIDS = {
    "G8": (0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1),
    "G6": (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1),
    "G5a": (0.0, 1e-3, 3e-3, 1e-2, 0.1),
    "G5b": (0.0, 1e-3, 1e-2, 3e-2, 0.1),
    "G5c": (0.0, 3e-4, 3e-3, 3e-2, 0.1),
    "G4": (0.0, 1e-3, 1e-2, 0.1),
}


def main():
    chosen = os.environ.get("GRIDS", "G8,G6").split(",")
    names = sys.argv[1:] or list(R.ALL)
    t0 = time.time()
    res = []
    for name in names:
        for label, X, y, task in R.streams_of(name, R.default_root()):
            T = X.shape[0]
            Z = R.prepare(X, T)
            length = (4 * T) // 5
            fixed = np.zeros(len(R.MU_GRID))
            auto = dict.fromkeys(chosen, 0.0)
            for i in range(1, 11):
                s = (i * T) // 50
                Zs, ys = Z[s:s + length], y[s:s + length]
                for k, mu in enumerate(R.MU_GRID):
                    fixed[k] += R.prequential(Zs, ys, task, mu)[0] / 10
                for g in chosen:
                    m = DFOP(Z.shape[1], "auto", task=task, p0=R.P0, on_invalid="skip",
                             forgetting_grid=GRIDS[g])
                    auto[g] += R.score(ys, m.learn_many(Zs, ys), task) / 10
            best = fixed.max() if task == "classification" else fixed.min()
            res.append((label, task, best, auto))
            print(f"{label:26s} best fixed {best:.5g} "
                  + " ".join(f"{g} {auto[g]:.5g}" for g in chosen), flush=True)
    for g in chosen:
        gaps = [100 * (a[g] - b) for _, t, b, a in res if t == "classification"]
        ratios = [a[g] / b for _, t, b, a in res if t == "regression"]
        print(f"{g}: within 1 point {sum(x >= -1 for x in gaps)}/{len(gaps)}, worst "
              f"{min(gaps):+.2f}; regression MSE / best fixed "
              + ", ".join(f"{r:.3f}" for r in ratios))
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
