"""NORMA on drifting and switching Gaussian-mixture streams (docs/algorithms/norma.md and 7).

The shape of Kivinen, Smola & Williamson's experiment: cumulative prequential
mistakes of the kernel perceptron (margin 0, no regularisation, unbudgeted),
NORMA with margin 0 and NORMA with a margin, all with the Gaussian RBF kernel.
Regularisation makes old terms fade, which is what lets NORMA follow a
changing concept; the perceptron remembers everything.

    python examples/norma_drift.py [--n 10000]

Prints a table of cumulative mistakes at a few checkpoints per stream; with
matplotlib installed also writes ``norma_drift.png`` to the current directory.
"""

from __future__ import annotations

import argparse

import numpy as np

from edgereg import NORMAClassifier
from edgereg.streams import gaussian_mixture_drift


def models(n: int) -> dict[str, NORMAClassifier]:
    common = {"n_features": 2, "kernel": "rbf", "gamma": 1.0}
    return {
        "perceptron": NORMAClassifier(
            budget=n, learning_rate=1.0, regularization=0.0, margin=0.0, fit_offset=False,
            **common,
        ),
        "NORMA rho=0": NORMAClassifier(
            budget=500, learning_rate=0.2, regularization=0.05, margin=0.0, **common
        ),
        "NORMA rho=1": NORMAClassifier(
            budget=500, learning_rate=0.2, regularization=0.05, margin=1.0, **common
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="stream length (default 10000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    n = args.n
    checkpoints = sorted({max(1, n * k // 5) for k in range(1, 6)})
    curves: dict[str, dict[str, np.ndarray]] = {}
    for kind in ("drifting", "switching"):
        X, y = gaussian_mixture_drift(
            n, kind=kind, seed=args.seed, drift_scale=0.02, switch_every=max(n // 5, 1)
        )
        curves[kind] = {}
        for name, model in models(n).items():
            pred = model.learn_many(X, y)
            curves[kind][name] = np.cumsum(pred != y)
        print(f"\n{kind} stream, n = {n}: cumulative mistakes")
        names = list(curves[kind])
        print(f"{'t':>8} " + " ".join(f"{name:>13}" for name in names))
        for t in checkpoints:
            print(f"{t:>8} " + " ".join(f"{curves[kind][m][t - 1]:>13d}" for m in names))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (kind, c) in zip(axes, curves.items(), strict=True):
        for name, curve in c.items():
            ax.plot(np.arange(1, n + 1), curve, label=name)
        ax.set_title(f"{kind} Gaussian mixture")
        ax.set_xlabel("samples")
    axes[0].set_ylabel("cumulative mistakes")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig("norma_drift.png", dpi=100)
    print("\nplot written to ./norma_drift.png")


if __name__ == "__main__":
    main()
