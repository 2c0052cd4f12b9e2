"""ns a row of SelectiveSampler's block kernels, each commit's package in processes of its own.

    python docs/design/selective_row_ns.py [--rounds R] [--d D] [--mode learn|process]
        [--test spec|eprocess] COMMIT|tree ...

As ``dfop_step_ns.py``, for SelectiveSampler: each commit's edgereg/ is
extracted once into a folder of its own (``tree``: the working tree's),
imported as ``edgereg`` by ``PYTHONPATH`` with a kernel cache of its own
(compiled once, then loaded), and timed in one process per round, commits
interleaved. A process runs 12 fresh models in turn (a random allocation
between them, so the blocks land at different offsets), best of 5
``learn_many`` (or ``process_many``) calls of each on the switch stream
of ``asv_bench/interleaved.py`` (20,000 rows at d <= 10, else 4,000; a
switch halfway), and reports the median of the 12; this prints every
round and the median over the rounds. What one process cannot average
out is the code's layout, which is the build's: a variant that changes
nothing the rows run can still move by a few per cent.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r'''
import sys, time
import numpy as np
import edgereg
from edgereg import streams
mode, test, d = sys.argv[1], sys.argv[2], int(sys.argv[3])
n = 20_000 if d <= 10 else 4_000
X, y, _ = streams.switch_stream(n, d, switch_at=[n // 2], distance=2.0, seed=1)
try:
    edgereg.SelectiveSampler(d, switch_test=test)
    make = lambda: edgereg.SelectiveSampler(d, switch_test=test)
except TypeError:  # before the switch_test parameter: the demo test only
    if test != "spec":
        sys.exit("this commit's SelectiveSampler has no switch_test parameter: --test spec only")
    make = lambda: edgereg.SelectiveSampler(d)
rng = np.random.default_rng(0)
keep, res = [], []
for k in range(12):
    keep.append(np.empty(int(rng.integers(1, 700))))
    m = make(); keep.append(m)
    getattr(m, mode + "_many")(X[:10], y[:10])
    best = np.inf
    for r in range(5):
        m = make(); keep.append(m); run = getattr(m, mode + "_many")
        t0 = time.perf_counter(); run(X, y); best = min(best, time.perf_counter() - t0)
    res.append(best / n * 1e9)
print(float(np.median(res)))
'''


def package_folder(commit: str, base: Path) -> Path:
    """A folder holding COMMIT's edgereg/ (``tree``: the working tree's root)."""
    if commit == "tree":
        return ROOT
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", commit],
                         capture_output=True, text=True, check=True).stdout.strip()
    folder = base / sha
    if not (folder / "edgereg").exists():
        blob = subprocess.run(["git", "-C", str(ROOT), "archive", sha, "edgereg"],
                              capture_output=True, check=True).stdout
        with tarfile.open(fileobj=BytesIO(blob)) as tar:
            tar.extractall(folder, filter="data")
    return folder


def run_child(argv, env, cwd, commit):
    """The child's stdout; a child that fails stops the run with its commit and last line."""
    out = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=cwd)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["(no message)"])[-1]
        sys.exit(f"{commit}: {last}")
    return out.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("commits", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--mode", choices=("learn", "process"), default="learn")
    ap.add_argument("--test", choices=("spec", "eprocess"), default="spec")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        runs = {}
        for c in args.commits:
            folder = package_folder(c, base)
            env = dict(os.environ, PYTHONPATH=str(folder),
                       EDGEREG_CACHE_DIR=str(base / f"cache-{c}"))
            env.pop("NUMBA_CACHE_DIR", None)
            runs[c] = env
        argv = [sys.executable, "-c", CHILD, args.mode, args.test, str(args.d)]
        for c, env in runs.items():  # compile (and cache) each package's kernels
            run_child(argv, env, tmp, c)
        got: dict = {}
        for r in range(args.rounds):
            for c, env in runs.items():
                ns = float(run_child(argv, env, tmp, c).split()[-1])
                got.setdefault(c, []).append(ns)
                print(f"round {r + 1} {c} {ns:.1f} ns", flush=True)
    print(f"\n{args.mode}_many, d = {args.d}, switch test {args.test}, "
          f"median of {args.rounds} rounds (ns a row)")
    print("| commit | ns a row |")
    print("|---|---:|")
    for c in args.commits:
        print(f"| {c} | {statistics.median(got[c]):.1f} |")


if __name__ == "__main__":
    main()
