"""Helpers shared by the benchmark modules (pandas' asv_bench layout).

Throughput is reported by ``track_*`` benchmarks in samples per second
(``unit = "samples/s"``): each times a fixed block itself and returns the best
of a few repeats, so the number is comparable across models and peers in the
same run. JIT compilation always happens in ``setup()``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

#: CI sets EDGEREG_BENCH_QUICK=1: one repeat per measurement, so that
#: ``asv run --quick`` checks every benchmark runs without spending minutes.
QUICK = os.environ.get("EDGEREG_BENCH_QUICK") == "1"


def samples_per_second(fn: Callable[[], object], n_samples: int, repeat: int = 5,
                       reset: Callable[[], object] | None = None) -> float:
    """Best-of-``repeat`` throughput of ``fn`` processing ``n_samples`` samples."""
    best = float("inf")
    for _ in range(1 if QUICK else repeat):
        if reset is not None:
            reset()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n_samples / best


def linear_stream(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """x ~ N(0, I), y = w.x + 0.1 noise, w ~ N(0, 1/d): the peers' study stream."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d) / np.sqrt(d)
    return X, X @ w + 0.1 * rng.normal(size=n)
