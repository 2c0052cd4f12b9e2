"""``edgereg bench``, ``warmup`` and ``cache``: what the kernels do on this machine.

``run_bench`` measures samples/s of every model, ``warmup`` compiles every
kernel (float64 and float32) into numba's on-disk cache for a deployment
image, ``run_cache`` says where that cache is and how big. The command line
is ``cli.py``; ``Progress`` is the bar that it and ``edgereg demo`` draw.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np


# ----------------------------------------------------------------- progress
class Progress:
    """A minimal progress bar on stderr, silent when stderr is not a terminal."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total, self.label = total, label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.done = 0

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.enabled:
            frac = min(1.0, self.done / max(1, self.total))
            bar = "#" * int(30 * frac)
            self.stream.write(f"\r{self.label:<28} [{bar:<30}] {100 * frac:5.1f}%")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 70 + "\r")
            self.stream.flush()


# -------------------------------------------------------------- bench/warmup


def _model_factories() -> list[tuple[str, Callable[[], Any], str]]:
    import edgereg

    return [
        ("DFOP d=10", lambda: edgereg.DFOP(10), "regression"),
        ("DFOP d=50", lambda: edgereg.DFOP(50), "regression"),
        ("DFOP d=200", lambda: edgereg.DFOP(200), "regression"),
        ("DFOP auto d=10", lambda: edgereg.DFOP(10, "auto"), "regression"),
        ("RLS d=10", lambda: edgereg.RLS(10), "regression"),
        ("SparseDFOP D=1e5 d=100", lambda: edgereg.SparseDFOP(100_000, 100), "sparse"),
        ("SparseDFOP auto D=1e5 d=20", lambda: edgereg.SparseDFOP(100_000, 20, "auto"), "sparse"),
        ("NORMA rbf d=10 budget=200", lambda: edgereg.NORMARegressor(10), "regression"),
        ("SelectiveSampler d=10", lambda: edgereg.SelectiveSampler(10), "classification"),
        ("SelectiveSampler spec d=10", lambda: edgereg.SelectiveSampler(10, switch_test="spec"),
         "classification"),
        ("MORES d=21 m=7", lambda: edgereg.MORES(21, 7), "multioutput"),
        ("SOMOR d=21 m=7", lambda: edgereg.SOMOR(21, 7), "multioutput"),
        ("PA-I d=10", lambda: edgereg.PARegressor(10), "regression"),
        ("DriftAlarm(DFOP) d=10",
         lambda: edgereg.DriftAlarm(edgereg.DFOP(10), noise=0.1, coef_bound=10.0), "regression"),
    ]


def _bench_data(model: Any, kind: str, n: int, rng: np.random.Generator) -> tuple[Any, Any]:
    if kind == "sparse":
        import scipy.sparse as sp

        X = sp.random(n, model.n_features, density=10 / model.n_features, format="csr", rng=rng)
        return X, rng.normal(size=n)
    X = rng.normal(size=(n, model.n_features))
    if kind == "multioutput":
        return X, rng.normal(size=(n, model.n_outputs))
    if kind == "classification":
        return X, np.where(X[:, 0] > 0, 1.0, -1.0)
    return X, X @ rng.normal(size=model.n_features) + 0.1 * rng.normal(size=n)


def run_bench(quick: bool = False) -> list[tuple[str, float]]:
    """Samples/s of every model (best of a few learn_many calls) on this machine."""
    rng = np.random.default_rng(0)
    budget = 0.05 if quick else 0.5  # seconds of work per model
    results = []
    factories = _model_factories()
    progress = Progress(len(factories), "edgereg bench")
    for name, make, kind in factories:
        model = make()
        X, y = _bench_data(model, kind, 64, rng)
        model.learn_many(X, y)
        t0 = time.perf_counter()
        model.learn_many(X, y)
        per_sample = max((time.perf_counter() - t0) / 64, 1e-9)
        n = int(min(max(budget / per_sample, 100), 2_000_000))
        X, y = _bench_data(model, kind, n, rng)
        best = float("inf")
        for _ in range(1 if quick else 3):
            model.reset()
            t0 = time.perf_counter()
            model.learn_many(X, y)
            best = min(best, time.perf_counter() - t0)
        results.append((name, n / best))
        progress.advance()
    progress.close()
    print(f"{'model':<28} {'learn_many samples/s':>22}")
    for name, rate in results:
        print(f"{name:<28} {rate:>22,.0f}")
    return results


def warmup() -> float:
    """Compile every model's kernels (float64 and float32) into the on-disk cache."""
    from .datasets import BUNDLED  # noqa: F401  (import cost paid here, not later)

    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    for _, make, kind in _model_factories():
        proto = make()
        params = proto.get_params()
        inner = params["model"]["params"] if "model" in params else params  # a DriftAlarm
        inner["n_features"] = min(proto.n_features, 8) if kind != "sparse" else 1000
        for dtype in ("float64", "float32"):
            model = type(proto)(**{**params, "dtype": dtype})
            X, y = _bench_data(model, kind, 4, rng)
            model.learn_many(X, y)
            model.predict_many(X)
            x0 = X[0] if kind != "sparse" else X[0].toarray().ravel()
            model.predict_one(x0)
            model.learn_one(x0, y[0])
            if hasattr(model, "process_many"):  # SelectiveSampler's protocol kernels
                model.process_many(X, y)
                model.process_one(x0, lambda y0=y[0]: y0)
    from .fleet import Fleet

    for dtype in ("float64", "float32"):
        for forgetting in (0.01, "auto"):  # a Fleet, and a FleetBank
            fleet = Fleet(2, 3, forgetting, dtype=dtype)
            Xf = rng.normal(size=(2, 4, 3))
            fleet.learn_many(Xf, Xf.sum(axis=2))
            fleet.learn_one(Xf[:, 0], Xf[:, 0].sum(axis=1))
            fleet.predict_many(Xf)
            fleet.predict_one(Xf[:, 0])
    elapsed = time.perf_counter() - t0
    from ._cache import cache_dir

    print(f"compiled and cached every kernel in {elapsed:.1f} s (cache: {cache_dir()})")
    return elapsed


def run_cache(clear: bool, out: TextIO) -> None:
    """``edgereg cache``: where the compiled kernels are cached, how many files, how big."""
    from ._cache import cache_dir, cache_files, clear_cache, edgereg_root

    if clear:
        root, count, size = clear_cache()
        print(f"removed {root}: {count} cache files, {size / 1e6:.1f} MB", file=out)
        return
    here = cache_dir()
    files = cache_files()
    size = sum(p.stat().st_size for p in files)
    moved = "NUMBA_CACHE_DIR" if os.environ.get("NUMBA_CACHE_DIR") else (
        "EDGEREG_CACHE_DIR" if os.environ.get("EDGEREG_CACHE_DIR") else "the user cache folder")
    print(f"compiled kernels of this edgereg/numba/CPU: {here}", file=out)
    print(f"chosen by: {moved}", file=out)
    where = here if os.environ.get("NUMBA_CACHE_DIR") else edgereg_root()
    print(f"{len(files)} cache files, {size / 1e6:.1f} MB under {where} "
          f"(clear with: edgereg cache --clear)", file=out)
