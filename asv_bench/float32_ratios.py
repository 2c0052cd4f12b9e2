"""float32 / float64 of bench_float32's models in one process, alternating.

    python asv_bench/float32_ratios.py [model-substring ...]
    python asv_bench/float32_ratios.py --dfop [d ...]

The asv benchmark's models, data and sizes (``benchmarks/bench_float32.py``),
both dtypes of each built side by side and timed call by call in alternating
order (7 rounds, medians): the ratio is then free of the drift between
separate processes on a shared machine (see ``same_process.py``).

``--dfop``: docs/design/float32.md's table, DFOP learn_many in float64 and float32 beside
the study's fused float64 kernel (``bench_dfop``'s sizes and forgetting, d =
10, 50 and 200 unless given; 25 rounds).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_dfop import _N, FORGETTING, _reference_rls_fused  # noqa: E402
from benchmarks.bench_float32 import MODELS, _data  # noqa: E402
from benchmarks.common import linear_stream  # noqa: E402

import edgereg  # noqa: E402

DTYPES = ("float64", "float32")


def medians(cases: dict, rounds: int, n: int) -> dict[str, float]:
    """Samples/s of each case (name -> (run, reset)), timed in alternating order."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (run, reset) in cases.items():
            reset()
            t0 = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t0)
    return {name: n / np.median(v) for name, v in times.items()}


def model_row(name: str, rounds: int = 7) -> str:
    """A table row: bench_float32's model ``name`` in both dtypes."""
    make, kind, n = MODELS[name]
    built = {dt: make(dt) for dt in DTYPES}
    X, y = _data(built["float64"], kind, n)
    rows = {dt: X.astype(dt) for dt in DTYPES}
    for dt, model in built.items():
        model.learn_many(rows[dt][:4], y[:4])  # compile / load from cache
    f64, f32 = built["float64"], built["float32"]
    sps = medians({"float64": (lambda: f64.learn_many(rows["float64"], y), f64.reset),
                   "float32": (lambda: f32.learn_many(rows["float32"], y), f32.reset)},
                  rounds, y.shape[0])
    return (f"| {name} | {sps['float64']:,.0f} | {sps['float32']:,.0f} "
            f"| {sps['float32'] / sps['float64']:.3f} |")


def dfop_row(d: int, rounds: int = 25) -> str:
    """A table row: DFOP in both dtypes and the fused float64 kernel at dimension d."""
    X, y = linear_stream(_N[d], d)
    X32 = X.astype(np.float32)
    m64 = edgereg.DFOP(d, FORGETTING)
    m32 = edgereg.DFOP(d, FORGETTING, dtype="float32")
    m64.learn_many(X[:10], y[:10])
    m32.learn_many(X32[:10], y[:10])

    def fused():
        w, P, Px, Pxn = np.zeros(d), 100.0 * np.eye(d), np.zeros(d), np.zeros(d)
        _reference_rls_fused(X, y, 1.0 - FORGETTING, w, P, Px, Pxn)

    fused()  # compile
    s = medians({"f64": (lambda: m64.learn_many(X, y), m64.reset),
                 "f32": (lambda: m32.learn_many(X32, y), m32.reset),
                 "fused": (fused, lambda: None)}, rounds, y.shape[0])
    return (f"| {d} | {s['f64']:,.0f} | {s['f32']:,.0f} | {s['fused']:,.0f} "
            f"| {s['f32'] / s['f64']:.3f} | {s['f64'] / s['fused']:.3f} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dfop"]:
        print("| d | DFOP float64 | DFOP float32 | fused kernel | float32 / float64 "
              "| float64 / fused |\n|---:|---:|---:|---:|---:|---:|")
        for d in [int(a) for a in sys.argv[2:]] or sorted(_N):
            print(dfop_row(d), flush=True)
    else:
        print("| model | float64 | float32 | float32 / float64 |\n|---|---:|---:|---:|")
        for name in MODELS:
            if not sys.argv[1:] or any(p in name for p in sys.argv[1:]):
                print(model_row(name), flush=True)
