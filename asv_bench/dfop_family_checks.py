"""One-process speed checks of the DFOP family: the tree against COMMIT, alternating.

    python asv_bench/dfop_family_checks.py COMMIT bank        # DFOPBank.learn_one, d = 10
    python asv_bench/dfop_family_checks.py COMMIT asv-cases   # the asv cases asv read as slower
    python asv_bench/dfop_family_checks.py COMMIT learn-many  # DFOP learn_many, d = 10 and 50

COMMIT's edgereg/ is imported beside the tree's (``asv_bench/same_process.py``);
each case is built the same way in both packages, on the asv benchmarks' own
data, and timed call by call in alternating order; the ratio of median times
(the tree's speed over COMMIT's) is printed. Why one process: asv's separate
processes moved Fleet and SparseDFOP cases by -36% to +19% where these read
1.03-1.19 (docs/design/dfop.md).
"""
import collections
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "asv_bench"))
from benchmarks.bench_fleet import _N, _TICKS, FORGETTING, D, fleet_stream  # noqa: E402
from benchmarks.bench_sparse_dfop import sparse_stream  # noqa: E402
from benchmarks.common import linear_stream  # noqa: E402
from same_process import package_at  # noqa: E402

import edgereg  # noqa: E402


def ratio(make, rounds=15):
    """Median time of COMMIT's call over the tree's; make(pkg) -> a call."""
    calls = {"old": make(OLD), "new": make(edgereg)}
    for f in calls.values():
        f()
    times = collections.defaultdict(list)
    for r in range(rounds):
        for side in (("old", "new") if r % 2 == 0 else ("new", "old")):
            t0 = time.perf_counter()
            calls[side]()
            times[side].append(time.perf_counter() - t0)
    return np.median(times["old"]) / np.median(times["new"])


def bank():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 10))
    y = X[:, 0].copy()

    def make(pkg):
        m = pkg.DFOPBank(10)
        return lambda: [m.learn_one(X[i], y[i]) for i in range(len(X))]
    yield "DFOPBank learn_one d=10", make


def asv_cases():
    for K in (1, 100):
        def make(pkg, K=K):
            X, y = fleet_stream(K, _N[K], D)
            f = pkg.Fleet(K, D, FORGETTING)
            return lambda: (f.reset(), f.learn_many(X, y))
        yield f"Fleet learn_many K={K} float64", make

    def ticks(pkg):
        X, y = fleet_stream(100, _TICKS, D)
        f = pkg.Fleet(100, D, FORGETTING)

        def run():
            f.reset()
            for t in range(_TICKS):
                f.learn_one(X[:, t], y[:, t])  # asv's strided rows
        return run
    yield "Fleet learn_one K=100", ticks
    for Dim, nnz, proj in ((1000, 10, "gaussian"), (1000, 10, "rademacher"), (1000, 100, "hashed")):
        def make(pkg, Dim=Dim, nnz=nnz, proj=proj):
            X, y = sparse_stream(2000, Dim, nnz)
            m = pkg.SparseDFOP(Dim, 100, forgetting=2e-3, projection=proj)
            return lambda: (m.reset(), m.learn_many(X, y))
        yield f"SparseDFOP learn_many D={Dim} nnz={nnz} {proj}", make


def learn_many():
    for d, dtype in ((10, "float32"), (10, "float64"), (50, "float64")):
        X, y = linear_stream(100_000, d)
        X = X.astype(dtype)

        def make(pkg, d=d, dtype=dtype, X=X, y=y):
            m = pkg.DFOP(d, 0.01, dtype=dtype)
            return lambda: (m.reset(), m.learn_many(X, y))
        yield f"DFOP learn_many d={d} {dtype}", make


if __name__ == "__main__":
    OLD, sha = package_at(sys.argv[1], Path(tempfile.mkdtemp()))
    cases = {"bank": bank, "asv-cases": asv_cases, "learn-many": learn_many}[sys.argv[2]]
    print(f"| case | tree / {sha[:8]} |\n|---|---:|")
    for name, make in cases():
        print(f"| {name} | {ratio(make):.3f} |", flush=True)
