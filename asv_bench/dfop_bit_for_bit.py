"""DFOP's learn_one and learn_many of the working tree against COMMIT's, bit for bit.

    python asv_bench/dfop_bit_for_bit.py COMMIT [cases]

Random cases (default 60): d in 1..64, a forgetting factor from 0.01 to
0.99 (most of them high: a refresh there covers several coordinates, and
``prior._refresh_coordinates`` fuses their passes), regression or
classification, float64 or float32 (``arithmetic`` "auto" or, for float32,
"float32"), on_invalid raise or skip, with or without intervals (coverage
0.9), on ``bank_bit_for_bit.py``'s drifting stream with NaN, inf and huge
values among the rows. Each package learns the first half sample by sample
and the rest in blocks of random sizes: every answer (or the error's
message), the state arrays and the saved file's arrays must be the same
bits. COMMIT's edgereg/ is imported beside the tree's (``same_process.py``).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bank_bit_for_bit import (  # noqa: E402
    add_bad_rows,
    answer,
    main,
    same,
    state_and_file_diffs,
    stream,
)

import edgereg  # noqa: E402


def blocks(model, X, y, cuts):
    out = []
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        try:
            out.extend(np.asarray(model.learn_many(X[lo:hi], y[lo:hi]), dtype=np.float64))
        except ValueError as error:
            out.append(str(error))
    return out


def case(old, seed, folder):
    rng = np.random.default_rng(2000 + seed)
    d = int(rng.choice([1, 2, 3, 5, 9, 10, 17, 25, 33, 64]))
    mu = float(rng.choice([0.01, 0.1, 0.3, 0.5, 0.75, 0.9, 0.99]))
    task = str(rng.choice(["regression", "classification"]))
    dtype = str(rng.choice(["float64", "float32"]))
    kw = {"task": task, "dtype": dtype, "on_invalid": str(rng.choice(["raise", "skip"]))}
    if dtype == "float32" and rng.random() < 0.3:
        kw["arithmetic"] = "float32"
    elif task == "regression" and rng.random() < 0.3:
        kw["coverage"] = 0.9
    n = 1200 if d <= 10 else 400
    X, y = stream(rng, task, n, d)
    add_bad_rows(rng, X, y)
    a, b = old.DFOP(d, mu, **kw), edgereg.DFOP(d, mu, **kw)
    half = n // 2
    diffs = [f"row {t}" for t in range(half)
             if not same(answer(a, X[t], y[t]), answer(b, X[t], y[t]))]
    cuts = np.unique(np.r_[half, rng.integers(half, n, size=6), n])
    ra, rb = blocks(a, X, y, cuts), blocks(b, X, y, cuts)
    diffs += [f"block answer {i}" for i, (p, q) in enumerate(zip(ra, rb, strict=True))
              if not same(p, q)] if len(ra) == len(rb) else ["block answers' count"]
    diffs += state_and_file_diffs(a, b, folder)
    print(seed, d, mu, kw, "same" if not diffs else f"DIFFERENT: {diffs[:3]}", flush=True)
    return not diffs


if __name__ == "__main__":
    main(case, default_cases=60)
