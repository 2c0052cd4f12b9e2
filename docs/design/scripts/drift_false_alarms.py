"""DriftAlarm's false alarms on stationary streams a linear model cannot fit.

    python docs/design/scripts/drift_false_alarms.py [--seeds 100]

The streams of docs/results.md's A1 (20,000 rows, d = 5, x ~ N(0, I)): a
fixed nonlinear target sin(2 x_1) + x_2^2 + x_3 x_4 / 2 + noise, a linear
target with t(2) noise, and one with noise of sd 0.1 + 2 |x_1|; seeds 1000
on. Prints, for DriftAlarm(DFOP(5, mu)) with mu 0.01 and "auto" (the
default test), the runs with an alarm and the alarms in all runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from edgereg import DFOP, DriftAlarm  # noqa: E402


def stream(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1000 + seed)
    X = rng.normal(size=(20_000, 5))
    if kind == "nonlinear":
        target = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] * X[:, 3] / 2
        y = target + 0.3 * rng.normal(size=20_000)
    elif kind == "t2":
        y = X @ np.ones(5) + rng.standard_t(2, size=20_000)
    else:
        y = X @ np.ones(5) + (0.1 + 2 * np.abs(X[:, 0])) * rng.normal(size=20_000)
    return X, y


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100)
    args = ap.parse_args(argv)
    print(f"{'stream':<16} {'model':<6} runs with an alarm (alarms)")
    for kind in ("nonlinear", "t2", "heteroscedastic"):
        for mu in (0.01, "auto"):
            runs = alarms = 0
            for seed in range(args.seeds):
                X, y = stream(kind, seed)
                alarm = DriftAlarm(DFOP(5, mu))
                alarm.learn_many(X, y)
                runs += alarm.n_drifts_ > 0
                alarms += alarm.n_drifts_
            print(f"{kind:<16} {mu!s:<6} {runs}/{args.seeds} ({alarms})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
