"""A twice-finer lattice for regression banks only (docs/design/auto-forgetting.md,
"Not kept: a finer lattice"): the study, not the library's default.

The default lattice (``DEFAULT_LATTICE``, factors about 3x apart in the odds
mu / (1 - mu)) with a factor inserted between each pair (their geometric mean
in the odds: 26 factors about 1.7x apart), a window of 4 and a scout GAP
factors above it, for regression banks built with the defaults;
classification banks keep the default. Prints examples/adaptation_forgetting.py's
tables with that bank::

    python docs/design/scripts/auto_forgetting_regression_lattice.py GAP --tables rates real jump

(EDGEREG_DATA_ROOT for the real streams edgereg does not bundle.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import edgereg.bank as bank

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
import adaptation_forgetting  # noqa: E402


def finer(lattice: tuple[float, ...]) -> tuple[float, ...]:
    """0, then every factor of ``lattice`` and the geometric mean of each pair's odds."""
    odds = [mu / (1 - mu) for mu in lattice[1:]]
    fine = [odds[0]]
    for low, high in zip(odds[:-1], odds[1:], strict=True):
        fine += [float(np.sqrt(low * high)), high]
    return (0.0, *(o / (1 + o) for o in fine))


def main(argv: list[str]) -> int:
    gap, rest = int(argv[0]), argv[1:]
    lattice, default = finer(bank.DEFAULT_LATTICE), bank._init_bank_parameters

    def regression_finer(model, grid, members, learning_rate, share, scout=None):
        if grid is None and members is None and scout is None and not model._classify:
            return default(model, lattice, 4, learning_rate, share, gap)
        return default(model, grid, members, learning_rate, share, scout)

    bank._init_bank_parameters = regression_finer
    print(f"regression banks: {len(lattice)} factors, scout gap {gap}", flush=True)
    return adaptation_forgetting.main(rest)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
