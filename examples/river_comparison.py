"""edgereg against river's own models on the Electricity (Elec2) stream.

Prequential (test-then-train) accuracy with ``river.evaluate.progressive_val_score``
for edgereg's DFOP and NORMA classifiers, wrapped by ``edgereg.river``, and
river's linear (LogisticRegression, Perceptron) and tree (HoeffdingTree,
HoeffdingAdaptiveTree) classifiers, all fed river's dicts from
``river.stream.iter_array``. Throughput (samples/s) is measured around
``progressive_val_score`` (dict building, prediction, metric and learning
included), after a warm-up on 200 samples that loads the compiled kernels.
The same edgereg models are then run natively: one ``learn_many`` call over
the array. The adapters call the same kernels sample by sample, so the
accuracies agree up to the first samples (before both labels are seen the
adapter predicts None, then the one label seen; the native model the sign).

Elec2 (45,312 x 8, normalised to [0, 1], labels -1/+1 given to river as
False/True) is bundled with edgereg. No feature scaling for any model.

Usage: ``python examples/river_comparison.py [--n N]`` (CI: ``--n 3000``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from river import evaluate, linear_model, metrics, stream, tree

import edgereg
import edgereg.river as er
from edgereg.datasets import load


def river_models() -> dict[str, Callable]:
    return {
        "edgereg DFOP (forgetting 0.01)": lambda: er.DFOPClassifier(forgetting=0.01),
        "edgereg NORMA (rbf, budget 200)": lambda: er.NORMAClassifier(budget=200),
        "river LogisticRegression": lambda: linear_model.LogisticRegression(),
        "river Perceptron": lambda: linear_model.Perceptron(),
        "river HoeffdingTree": lambda: tree.HoeffdingTreeClassifier(),
        "river HoeffdingAdaptiveTree": lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=0),
    }


def native_models(d: int) -> dict[str, Callable]:
    return {
        "edgereg DFOP (forgetting 0.01)": lambda: edgereg.DFOP(d, 0.01, task="classification"),
        "edgereg NORMA (rbf, budget 200)": lambda: edgereg.NORMAClassifier(d, budget=200),
    }


def run_river(make, X, y) -> tuple[float, float]:
    evaluate.progressive_val_score(stream.iter_array(X[:200], y[:200]), make(), metrics.Accuracy())
    model, metric = make(), metrics.Accuracy()
    t = time.perf_counter()
    evaluate.progressive_val_score(stream.iter_array(X, y), model, metric)
    return metric.get(), len(X) / (time.perf_counter() - t)


def run_native(make, X, y) -> tuple[float, float]:
    make().learn_many(X[:200], y[:200])
    model = make()
    t = time.perf_counter()
    pred = model.learn_many(X, y)
    return float(np.mean(pred == y)), len(X) / (time.perf_counter() - t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="cap the stream at N samples")
    args = parser.parse_args()
    data = load("elec2")
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)
    if args.n is not None:
        X, y = X[: args.n], y[: args.n]
    labels = y > 0  # river's binary classifiers take bool labels
    print(f"Electricity (elec2): {X.shape[0]} samples x {X.shape[1]} features, "
          f"majority class {max(labels.mean(), 1 - labels.mean()):.2%}\n")
    rows = []
    for name, make in river_models().items():
        acc, rate = run_river(make, X, labels)
        rows.append((name, "river progressive_val_score", acc, rate))
    for name, make in native_models(X.shape[1]).items():
        acc, rate = run_native(make, X, y)
        rows.append((name, "native learn_many", acc, rate))
    w = max(len(r[0]) for r in rows)
    print(f"{'model':<{w}}  {'run as':<27}  {'accuracy':>8}  {'samples/s':>11}")
    print(f"{'-' * w}  {'-' * 27}  {'-' * 8}  {'-' * 11}")
    for name, how, acc, rate in rows:
        print(f"{name:<{w}}  {how:<27}  {acc:>8.2%}  {rate:>11,.0f}")


if __name__ == "__main__":
    main()
