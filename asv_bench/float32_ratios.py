"""float32 / float64 of bench_float32's models in one process, alternating.

    python asv_bench/float32_ratios.py [model-substring ...]

The asv benchmark's models, data and sizes (``benchmarks/bench_float32.py``),
both dtypes of each built side by side and timed call by call in alternating
order (7 rounds, medians): the ratio is then free of the drift between
separate processes on a shared machine (see ``same_process.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_float32 import MODELS, _data  # noqa: E402

DTYPES = ("float64", "float32")


def main(patterns: list[str], rounds: int = 7) -> None:
    for name in [n for n in MODELS if not patterns or any(p in n for p in patterns)]:
        make, kind, n = MODELS[name]
        models = {dt: make(dt) for dt in DTYPES}
        X, y = _data(models["float64"], kind, n)
        rows = {dt: X.astype(dt) for dt in DTYPES}
        for dt, model in models.items():
            model.learn_many(rows[dt][:4], y[:4])  # compile / load from cache
        times: dict[str, list[float]] = {dt: [] for dt in DTYPES}
        for _ in range(rounds):
            for dt, model in models.items():
                model.reset()
                t0 = time.perf_counter()
                model.learn_many(rows[dt], y)
                times[dt].append(time.perf_counter() - t0)
        sps = {dt: y.shape[0] / np.median(v) for dt, v in times.items()}
        print(f"| {name} | {sps['float64']:,.0f} | {sps['float32']:,.0f} "
              f"| {sps['float32'] / sps['float64']:.3f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
