"""DriftAlarm's false alarms on stationary streams a linear model cannot fit.

    python docs/design/scripts/drift_false_alarms.py [--seeds 100]

The streams of docs/results.md's A1, made by ``examples/adaptation_benchmark.py``'s
own generators (20,000 rows, d = 5, x ~ N(0, I): a fixed nonlinear target, t(2)
noise, heteroscedastic noise), with more seeds than A1's 20 and none of
them (seeds 1000 on). Prints, for DriftAlarm(DFOP(5, mu)) with mu 0.01 and
"auto" (the default test), the runs with an alarm and the alarms in all runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

from adaptation_benchmark import _regression_stationary  # noqa: E402

from edgereg import DFOP, DriftAlarm  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100)
    args = ap.parse_args(argv)
    print(f"{'stream':<24} {'model':<6} runs with an alarm (alarms)")
    for name, make in _regression_stationary():
        for mu in (0.01, "auto"):
            runs = alarms = 0
            for seed in range(args.seeds):
                X, y = make(np.random.default_rng(1000 + seed), 20_000, 5)
                alarm = DriftAlarm(DFOP(5, mu))
                alarm.learn_many(X, y)
                runs += alarm.n_drifts_ > 0
                alarms += alarm.n_drifts_
            print(f"{name:<24} {mu!s:<6} {runs}/{args.seeds} ({alarms})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
