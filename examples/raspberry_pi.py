"""The sensor loop of ``sensor_loop.py``, set up for a Raspberry Pi (64-bit OS).

What changes on a Pi:

* the numba cache lives in a user directory that survives reinstalls of the
  script (``NUMBA_CACHE_DIR``, default ``~/.cache/edgereg-numba``; set before
  numba is imported). Pre-fill it once with ``edgereg warmup`` (or
  ``--full-warmup`` here); for identical devices build it with
  ``NUMBA_CPU_NAME=generic`` and copy the directory;
* the model is float32 (half the memory of float64);
* the compiled kernels the loop needs are loaded (or compiled, the first time)
  before the loop starts, and the time it took is printed, so the first
  sensor reading is not delayed by a compile.

Run::

    python examples/raspberry_pi.py --steps 20000 --state ~/edgereg-state
    python examples/raspberry_pi.py --memory-table      # the README's memory table

Memory per model is printed from ``model.nbytes()`` (the whole fixed state).
"""

from __future__ import annotations

import os
import sys
import time

# Before numba is imported (edgereg imports it).
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.expanduser("~/.cache/edgereg-numba"))

import argparse  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sensor_loop import N_INPUTS, run_loop  # noqa: E402

from edgereg import DFOP  # noqa: E402


def warm_up(dtype: str, full: bool) -> float:
    """Load (or compile) the kernels before the loop; return the seconds it took.

    ``full``: every model's kernels via ``edgereg.cli.warmup`` (the deployment
    step); otherwise only the DFOP paths this loop calls.
    """
    t0 = time.perf_counter()
    if full:
        try:
            from edgereg.cli import warmup
        except ImportError:
            full = False
        else:
            warmup()
    if not full:
        d = N_INPUTS + 1
        model = DFOP(d, 0.01, dtype=dtype)
        X = np.ones((4, d), dtype=dtype)
        model.learn_many(X, np.zeros(4))
        model.predict_many(X)
        model.predict_one(X[0])
        model.learn_one(X[0], 0.0)
    return time.perf_counter() - t0


def memory_table() -> str:
    """Markdown table of every model's fixed memory, from ``nbytes()`` (not estimated)."""
    import edgereg
    from edgereg.fleet import Fleet

    rows = [
        ("DFOP d=10", lambda dt: edgereg.DFOP(10, dtype=dt)),
        ("DFOP d=50", lambda dt: edgereg.DFOP(50, dtype=dt)),
        ("DFOP d=200", lambda dt: edgereg.DFOP(200, dtype=dt)),
        ("SparseDFOP D=10^6, d=100 (hashed M)",
         lambda dt: edgereg.SparseDFOP(1_000_000, 100, dtype=dt)),
        ("NORMARegressor d=10, budget 200", lambda dt: edgereg.NORMARegressor(10, dtype=dt)),
        ("NORMARegressor d=10, budget 1000",
         lambda dt: edgereg.NORMARegressor(10, budget=1000, dtype=dt)),
        ("SelectiveSampler d=10", lambda dt: edgereg.SelectiveSampler(10, dtype=dt)),
        ("SelectiveSampler d=10, switch_test=\"spec\"",
         lambda dt: edgereg.SelectiveSampler(10, switch_test="spec", dtype=dt)),
        ("MORES d=21, 7 outputs", lambda dt: edgereg.MORES(21, 7, dtype=dt)),
        ("PARegressor d=10", lambda dt: edgereg.PARegressor(10, dtype=dt)),
        ("DriftAlarm around DFOP d=10",
         lambda dt: edgereg.DriftAlarm(edgereg.DFOP(10, dtype=dt))),
        ("Fleet of 10,000 DFOP d=10", lambda dt: Fleet(10_000, 10, dtype=dt)),
    ]

    def fmt(n: int) -> str:
        if n >= 2**20:
            return f"{n / 2**20:.2f} MiB"
        if n >= 2**10:
            return f"{n / 2**10:.1f} KiB"
        return f"{n} B"

    lines = ["| model | float64 | float32 |", "|---|---:|---:|"]
    for name, make in rows:
        a, b = make("float64").nbytes(), make("float32").nbytes()
        lines.append(f"| {name} | {fmt(a)} ({a:,} B) | {fmt(b)} ({b:,} B) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--checkpoint-every", type=int, default=1_000)
    parser.add_argument("--state", type=Path, default=Path.home() / "edgereg-state")
    parser.add_argument("--delay", type=int, default=3)
    parser.add_argument("--crash-at", type=int, default=None)
    parser.add_argument("--full-warmup", action="store_true",
                        help="compile every edgereg kernel (edgereg warmup), not only DFOP's")
    parser.add_argument("--memory-table", action="store_true",
                        help="print the memory-per-model table and exit")
    args = parser.parse_args(argv)
    if args.memory_table:
        print(memory_table())
        return
    dtype = "float32"
    print(f"NUMBA_CACHE_DIR={os.environ['NUMBA_CACHE_DIR']}"
          f"  NUMBA_CPU_NAME={os.environ.get('NUMBA_CPU_NAME', '(host)')}")
    print(f"DFOP d={N_INPUTS + 1} {dtype}: {DFOP(N_INPUTS + 1, dtype=dtype).nbytes()} bytes "
          f"per model (float64: {DFOP(N_INPUTS + 1).nbytes()})")
    seconds = warm_up(dtype, args.full_warmup)
    print(f"kernels ready in {seconds:.2f} s "
          "(well under a second means they came from the cache)")
    run_loop(steps=args.steps, checkpoint_every=args.checkpoint_every, state_dir=args.state,
             delay=args.delay, dtype=dtype, crash_at=args.crash_at)


if __name__ == "__main__":
    main()
