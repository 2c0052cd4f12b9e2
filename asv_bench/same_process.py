"""Two commits' kernels in one process, alternating: few-percent differences resolved.

    python asv_bench/same_process.py COMMIT [rounds] [case-substring ...]

COMMIT's ``edgereg/`` (``git archive`` of this repository) is unpacked into a
temporary folder as the package ``edgereg_at_<commit>`` beside the working
tree's ``edgereg`` (imported as installed), and both run every case of
``interleaved.py`` (``CASES``, one text) on the same data in this one process:
each round times one call of each, in alternating order; per case, the
ratio of the median times (working tree over COMMIT's speed: above 1 is
faster) and the spread of the per-round ratios (quartiles).

Why: separate processes on this shared 2-core machine move by 10-30% between
runs on unchanged code (asv's two runs, ``interleaved.py``'s rounds); in one
process, alternating call by call, drifts of the machine fall on both sides
and an unchanged kernel reads 1.00 +- 0.03 (HEAD against the same working
tree, two runs of every case: 0.970-1.038, once 0.878). What remains is the
process's own layout (where numba put the code, where the arrays landed),
as that 0.878 shows: repeat the script; a ratio that holds across runs is
the kernels'.

Both packages compile into edgereg's kernel cache under the same entry
names (the cache is per version, not per folder): an entry the other
package wrote is a miss (its source stamp differs), so each run compiles
both (about a minute), never mixing them up.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interleaved import CASES  # noqa: E402

import edgereg  # noqa: E402


def package_at(commit: str, folder: Path):
    """COMMIT's edgereg/ imported as ``edgereg_at_<commit>`` (its own imports are relative)."""
    root = Path(__file__).resolve().parent.parent
    sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", commit],
                         capture_output=True, text=True, check=True).stdout.strip()
    blob = subprocess.run(["git", "-C", str(root), "archive", sha, "edgereg"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(folder, filter="data")
    name = f"edgereg_at_{sha}"
    (folder / "edgereg").rename(folder / name)
    sys.path.insert(0, str(folder))
    return importlib.import_module(name), sha


def cases_of(module) -> dict:
    """name -> (call, n) of every case, with ``edgereg`` bound to ``module``."""
    found = {}

    def case(name, fn, n):
        found[name] = (fn, n)

    streams = importlib.import_module(module.__name__ + ".streams")
    exec(CASES, {"edgereg": module, "streams": streams, "np": np,
                 "rng": np.random.default_rng(0), "case": case})
    return found


def main() -> None:
    commit = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    wanted = sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        old, sha = package_at(commit, Path(tmp))
        before, after = cases_of(old), cases_of(edgereg)
        print(f"| case | {sha[:8]} (samples/s) | working tree | ratio | quartiles of the rounds |")
        print("|---|---:|---:|---:|---|")
        for name, (fn_old, n) in before.items():
            if wanted and not any(w in name for w in wanted):
                continue
            fn_new = after[name][0]
            fn_old(), fn_new()  # compile both
            times = {0: [], 1: []}
            for r in range(rounds):
                for side in ((0, 1) if r % 2 == 0 else (1, 0)):
                    fn = fn_old if side == 0 else fn_new
                    t0 = time.perf_counter()
                    fn()
                    times[side].append(time.perf_counter() - t0)
            t_old, t_new = np.array(times[0]), np.array(times[1])
            q1, q3 = np.percentile(t_old / t_new, [25, 75])
            print(f"| {name} | {n / np.median(t_old):,.0f} | {n / np.median(t_new):,.0f} "
                  f"| {np.median(t_old) / np.median(t_new):.3f} | {q1:.3f}-{q3:.3f} |", flush=True)


if __name__ == "__main__":
    main()
