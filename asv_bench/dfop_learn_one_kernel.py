"""DFOP's learn_one kernel, the working tree's against COMMIT's, in one process.

    python asv_bench/dfop_learn_one_kernel.py COMMIT [d] [--no-prior]

Each package's ``DFOP(d, 0.01)`` (``keep_prior=False`` with --no-prior)
learns 50,000 rows through its learn_one kernel called from a compiled loop
(no Python per step: what Fleet's and the bank's learn_one run K times a
call), 25 rounds, alternating; prints the median ns a step and the tree's
speed over COMMIT's. COMMIT's edgereg/ is imported beside the tree's as
``asv_bench/same_process.py`` does; the kernel is found as each commit's
learn_one found it (``_packed_kernel``, or ``dfop._dfop_learn_one_packed``).
"""
import collections
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from same_process import package_at  # noqa: E402

import edgereg  # noqa: E402


def make_loop(kern):
    @njit
    def loop(X, Y, PW, B):
        s = 0.0
        for i in range(X.shape[0]):
            s += kern(X[i], Y[i], PW, B)
        return s
    return loop


def timed(pkg, d, keep_prior, X, y):
    m = pkg.DFOP(d, 0.01, keep_prior=keep_prior)
    kern = getattr(type(m), "_packed_kernel", None)
    if kern is None:
        kern = sys.modules[pkg.__name__ + ".dfop"]._dfop_learn_one_packed
    B = m._B if hasattr(m, "_B") else m._F  # learn_one's float64 block (older: _F)
    loop = make_loop(kern)
    return lambda: loop(X, y, m._PW, B)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    d = int(args[1]) if len(args) > 1 else 10
    keep_prior = "--no-prior" not in sys.argv
    old, sha = package_at(args[0], Path(tempfile.mkdtemp()))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50_000, d))
    y = X[:, 0].copy()
    runs = {sha[:8]: timed(old, d, keep_prior, X, y), "tree": timed(edgereg, d, keep_prior, X, y)}
    for f in runs.values():
        f()
    times = collections.defaultdict(list)
    for r in range(25):
        for name in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            t0 = time.perf_counter()
            runs[name]()
            times[name].append((time.perf_counter() - t0) / len(X) * 1e9)
    med = {k: float(np.median(v)) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k}: {v:.1f} ns a step")
    print(f"tree / {sha[:8]} speed: {med[sha[:8]] / med['tree']:.3f} "
          f"(d = {d}, keep_prior={keep_prior})")


if __name__ == "__main__":
    main()
