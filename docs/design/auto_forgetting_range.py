"""Calibrate the random-walk streams of examples/adaptation_forgetting.py's ``rates`` table.

For each family (coefficients d = 5, a level d = 1), task and target mu it
bisects on the log of the random-walk step until the best fixed mu in
hindsight (of the example's 49 factors, ``FINE``) on seed 0's stream is
nearest the target, and prints the steps (the example's ``STEPS``; where
the best fixed mu meets a plateau the bisection cannot settle and the step
was set by hand from a scan, see ``STEPS``). The table itself::

    python examples/adaptation_forgetting.py --tables rates

Run from the repository root::

    python docs/design/auto_forgetting_range.py [--families coef level] [--tasks ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import adaptation_forgetting as E  # noqa: E402


def calibrate(family: str, task: str, target: float, seed: int = 0) -> float:
    """The random-walk step whose stream's best fixed mu is nearest ``target``."""
    if target == 0.0:
        return 0.0
    lo, hi = -7.0, 1.5
    best = None
    for _ in range(14):
        mid = 0.5 * (lo + hi)
        mu, _ = E.best_fixed(*E.rw_stream(family, task, 10.0**mid, seed), task)
        err = abs(np.log((mu + 1e-6) / (1 - mu)) - np.log(target / (1 - target)))
        if best is None or err < best[0]:
            best = (err, 10.0**mid)
        if mu < target:
            lo = mid
        else:
            hi = mid
    return best[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", nargs="+", default=["coef", "level"])
    parser.add_argument("--tasks", nargs="+", default=["regression", "classification"])
    args = parser.parse_args(argv)
    t0 = time.time()
    for family in args.families:
        for task in args.tasks:
            steps = tuple(calibrate(family, task, t) for t in E.TARGETS)
            print(f"    ({family!r}, {task!r}): ({', '.join(f'{s:.3g}' for s in steps)}),",
                  flush=True)
    print(f"{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
