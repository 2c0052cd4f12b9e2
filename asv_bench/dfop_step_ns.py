"""ns a step of DFOP.learn_many, each commit's package in a process of its own.

    python asv_bench/dfop_step_ns.py [--rounds R] [--mu MU] [--d D] COMMIT|tree ...

One process per commit and dtype, rounds interleaved (commit A, B, ..., then
again): in one process the two packages' arrays and code share a layout
draw, which at d = 10 moved ratios by 5-10% (asv_bench/same_process.py's
caveat). Each process learns 100,000 Gaussian rows with 16 models in turn
(a random allocation between them, so the models' blocks land at different
offsets), best of 7 calls each, and reports the median of the 16; this
prints every round and the median over the rounds. ``tree`` is the
installed edgereg (the working tree); a commit's edgereg/ is imported as
``asv_bench/same_process.py`` does.
"""
import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r'''
import sys, tempfile, time
from pathlib import Path
import numpy as np
sys.path.insert(0, {bench!r})
which, dtype, mu, d = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
if which == "tree":
    import edgereg as pkg
else:
    from same_process import package_at
    pkg, _ = package_at(which, Path(tempfile.mkdtemp()))
rng = np.random.default_rng(0)
n = 100_000
X = rng.normal(size=(n, d)); y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
X = X.astype(dtype)
keep, res = [], []
for k in range(16):
    keep.append(np.empty(int(rng.integers(1, 700))))
    m = pkg.DFOP(d, mu, dtype=dtype); keep.append(m)
    m.learn_many(X[:10], y[:10])
    best = np.inf
    for r in range(7):
        m.reset(); t0 = time.perf_counter(); m.learn_many(X, y)
        best = min(best, time.perf_counter() - t0)
    res.append(best / n * 1e9)
print(float(np.median(res)))
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("commits", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mu", type=float, default=0.01)
    ap.add_argument("--d", type=int, default=10)
    args = ap.parse_args()
    code = CHILD.format(bench=str(ROOT / "asv_bench"))
    got: dict = {}
    for r in range(args.rounds):
        for c in args.commits:
            for dtype in ("float64", "float32"):
                argv = [sys.executable, "-c", code, c, dtype, str(args.mu), str(args.d)]
                out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT)
                ns = float(out.stdout.split()[-1])
                got.setdefault((c, dtype), []).append(ns)
                print(f"round {r + 1} {c} {dtype} {ns:.1f} ns", flush=True)
    print(f"\nd = {args.d}, mu = {args.mu}, median of {args.rounds} rounds")
    print("| commit | float64 | float32 |")
    print("|---|---:|---:|")
    for c in args.commits:
        print(f"| {c} | {statistics.median(got[(c, 'float64')]):.1f} "
              f"| {statistics.median(got[(c, 'float32')]):.1f} |")


if __name__ == "__main__":
    main()
