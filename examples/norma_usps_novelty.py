"""NORMANovelty on the USPS handwritten digits (docs/algorithms/norma.md).

Learns the digits in one pass (nu = 0.1: about a tenth of them are flagged
and stored) and prints the most novel ones, i.e. the lowest f(x) - rho under
the final model, with their labels; as in Kivinen, Smola & Williamson's
figure they tend to be oddly written digits. Draws them as 16x16 images to
``norma_usps_novelty.png`` in the current directory when matplotlib exists.

    python examples/norma_usps_novelty.py [--n 500] [--data-root PATH]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from edgereg import NORMANovelty

#: A folder holding the original files; unset, edgereg's data folder (where
#: ``edgereg data fetch usps`` puts them).
_ENV_ROOT = os.environ.get("EDGEREG_DATA_ROOT")
DEFAULT_ROOT = Path(_ENV_ROOT) if _ENV_ROOT else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="use the first N digits only")
    parser.add_argument("--data-root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    from edgereg.datasets import DataFileError, load

    try:
        data = load("usps", root=args.data_root)
    except (ValueError, DataFileError) as exc:
        print(f"USPS data not found ({str(exc).splitlines()[0][:100]}...): fetch it once "
              "with `edgereg data fetch usps`, or pass --data-root")
        return
    X, labels = data.X, data.y.astype(int)
    if args.n is not None:
        X, labels = X[: args.n], labels[: args.n]
    n, d = X.shape
    # gamma = 1 / (d * mean pixel variance): typical ||x - x'||^2 of order 1 / gamma.
    gamma = 1.0 / (2.0 * d * X.var(axis=0).mean())
    model = NORMANovelty(d, budget=300, gamma=gamma, learning_rate=0.2,
                         regularization=0.01, nu=0.1)
    flags = model.learn_many(X)
    print(f"{n} digits, {d} pixels: {int(flags.sum())} flagged while learning "
          f"({flags.mean():.3f}, nu = {model.nu}), {model.n_support_} support vectors kept")
    scores = model.score_many(X)
    order = np.argsort(scores, kind="stable")[: args.top]
    print(f"\n{args.top} most novel digits under the final model")
    print(f"{'rank':>4} {'index':>6} {'label':>5} {'f(x) - rho':>11}")
    for rank, i in enumerate(order, 1):
        print(f"{rank:>4} {i:>6} {labels[i]:>5} {scores[i]:>11.4f}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    cols = min(5, len(order))
    rows = -(-len(order) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2 * cols, 2.2 * rows), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, i in zip(axes.ravel(), order, strict=False):
        ax.imshow(X[i].reshape(16, 16), cmap="gray_r")
        ax.set_title(f"#{i}: {labels[i]}")
    fig.tight_layout()
    fig.savefig("norma_usps_novelty.png", dpi=100)
    print("\nimages written to ./norma_usps_novelty.png")


if __name__ == "__main__":
    main()
