"""Issue 16: DFOPBank against every fixed mu of the issue's grid on drift_regimes.

Run from the repository root::

    python docs/design/auto_forgetting_regimes.py

For regression and classification, noise 0.1 and 0.5, seeds 0-4 of
``edgereg.streams.drift_regimes`` (30,000 samples, d = 5: stationary, slow
drift, then switches every 1,000), prints how many seeds the bank (the
default 6-member grid and the 8-member STUDY_GRID) beats every fixed mu of
the issue's grid, with the bank's and the best fixed mu's prequential MSE or
accuracy per seed. Results: docs/design/auto-forgetting.md.
"""
import numpy as np

from edgereg import DFOP
from edgereg.bank import STUDY_GRID
from edgereg.streams import drift_regimes


def score(p, y, task):
    return np.mean((p - y) ** 2) if task == "regression" else np.mean(p == y)


def main():
    for task in ("regression", "classification"):
        for noise in (0.5, 0.1):
            for name, kw in (("default", {}), ("STUDY_GRID", {"forgetting_grid": STUDY_GRID})):
                wins, parts = 0, []
                for seed in range(5):
                    X, y, _, _ = drift_regimes(task=task, noise=noise, seed=seed)
                    fixed = [score(DFOP(X.shape[1], mu, task=task).learn_many(X, y), y, task)
                             for mu in STUDY_GRID]
                    a = score(DFOP(X.shape[1], "auto", task=task, **kw).learn_many(X, y), y, task)
                    b = min(fixed) if task == "regression" else max(fixed)
                    wins += bool(a < b if task == "regression" else a > b)
                    parts.append(f"{a:.4f}/{b:.4f}")
                print(f"{task}, noise {noise}, {name}: beats every fixed mu on {wins}/5: "
                      + " ".join(parts), flush=True)


if __name__ == "__main__":
    main()
