"""SelectiveSampler's speed over fresh allocations: COMMIT's package against the working tree's.

    python docs/design/selective_layout_lottery.py COMMIT d N [method] [switch_test]

method: learn_many (default), process_many or learn_one (5,000 calls,
scaled); switch_test: spec (default) or eprocess. In one process, N fresh
models of each package alternate (a small array allocated between them
moves the allocator), each timed once on the demo-classifier test's
``switch_stream(20_000, d)``; printed: the 10/25/50/75/90th percentiles
of each package's samples/s. One model a package (``asv_bench/same_process.py``)
draws one layout; where the speed depends on where the blocks land, the
distribution is what a user gets (docs/design/selective.md).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "asv_bench"))
from same_process import package_at  # noqa: E402

import edgereg  # noqa: E402
from edgereg import streams  # noqa: E402


def main() -> None:
    commit, d, n_models = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    method = sys.argv[4] if len(sys.argv) > 4 else "learn_many"
    test = sys.argv[5] if len(sys.argv) > 5 else "spec"
    old, sha = package_at(commit, Path(tempfile.mkdtemp()))
    X, y, _ = streams.switch_stream(20_000, d, switch_at=[10_000], distance=2.0, seed=1)

    def make(package):
        try:
            return package.SelectiveSampler(d, switch_test=test)
        except TypeError:  # before the e-process test: the demo test only
            return package.SelectiveSampler(d)

    def seconds(model) -> float:
        if method == "learn_one":
            learn, t0 = model.learn_one, time.perf_counter()
            for i in range(5000):
                learn(X[i], y[i])
            return (time.perf_counter() - t0) * len(X) / 5000
        t0 = time.perf_counter()
        getattr(model, method)(X, y)
        return time.perf_counter() - t0

    for package in (old, edgereg):  # compile both first
        make(package).learn_one(X[0], y[0])
        getattr(make(package), "learn_many" if method == "learn_one" else method)(X[:200], y[:200])
    rng = np.random.default_rng(0)
    keep, speed = [], {"old": [], "new": []}
    pair = (("old", old), ("new", edgereg))
    for k in range(n_models):
        for name, package in pair if k % 2 == 0 else pair[::-1]:
            keep.append(np.empty(int(rng.integers(1, 600))))
            model = make(package)
            speed[name].append(len(X) / seconds(model) / 1e6)
            keep.append(model)
    for name, label in (("old", sha), ("new", "working tree")):
        q = np.percentile(speed[name], [10, 25, 50, 75, 90])
        print(f"{label}: p10 {q[0]:.2f}  p25 {q[1]:.2f}  median {q[2]:.2f}  p75 {q[3]:.2f}  "
              f"p90 {q[4]:.2f}  M samples/s")
    print(f"median ratio (working tree / {sha}): "
          f"{np.median(speed['new']) / np.median(speed['old']):.3f}")


if __name__ == "__main__":
    main()
