"""DFOP(d, "auto").learn_one of the working tree against COMMIT's, bit for bit.

    python asv_bench/bank_bit_for_bit.py COMMIT [cases]

Random cases (default 40): d in 1..64, regression or classification,
float64 or float32, on_invalid raise or skip, and one of keep_prior=False,
a fixed grid, intervals (coverage 0.9) or none; a stream whose drift rate
changes every 400 rows (the window moves and jumps), with NaN, inf and
values beyond the bank's range among the inputs and the targets. Both
packages learn it sample by sample: every answer (or the error's message),
the state arrays and the saved file's arrays must be the same bits.
COMMIT's edgereg/ is imported beside the tree's (``same_process.py``).
"""
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from same_process import package_at  # noqa: E402

import edgereg  # noqa: E402


def stream(rng, task, n, d):
    w = rng.normal(size=d)
    X = rng.normal(size=(n, d)) * rng.choice([0.01, 1.0, 100.0])
    y = np.empty(n)
    speed = 0.0
    for t in range(n):
        if t % 400 == 0:
            speed = rng.choice([0.0, 0.001, 0.05, 0.3])
        w += speed * rng.normal(size=d)
        y[t] = X[t] @ w + 0.1 * rng.normal()
    if task == "classification":
        y = np.where(y >= 0, 1.0, -1.0)
    return X, y


def add_bad_rows(rng, X, y):
    """NaN, inf and values beyond the bank's range in 8 rows after the first, in place:
    four in X (one entry each), four in y."""
    n, d = X.shape
    bad = rng.choice(np.arange(1, n), size=8, replace=False)
    X[bad[:4], rng.integers(d, size=4)] = [np.nan, np.inf, 1e101, -1e101]
    y[bad[4:]] = [np.nan, -np.inf, 1e101, 1e300]


def answer(model, x, y):
    try:
        return model.learn_one(x, y)
    except ValueError as error:
        return str(error)


def same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return type(a) is type(b) and np.float64(a).tobytes() == np.float64(b).tobytes()


def case(old, seed, folder):
    rng = np.random.default_rng(1000 + seed)
    d = int(rng.choice([1, 2, 3, 5, 10, 10, 17, 25, 33, 64]))
    task = str(rng.choice(["regression", "classification"]))
    kw = {"task": task, "dtype": str(rng.choice(["float64", "float32"])),
          "on_invalid": str(rng.choice(["raise", "skip"]))}
    extra = rng.integers(4)
    if extra == 1:
        kw["keep_prior"] = False
    elif extra == 2:
        kw["forgetting_grid"] = (0.0, 0.01, 0.1, 0.5)
    elif extra == 3 and task == "regression":
        kw["coverage"] = 0.9
    n = 1500 if d <= 10 else 500
    X, y = stream(rng, task, n, d)
    add_bad_rows(rng, X, y)
    a, b = old.DFOP(d, "auto", **kw), edgereg.DFOP(d, "auto", **kw)
    diffs = [f"row {t}" for t in range(n) if not same(answer(a, X[t], y[t]), answer(b, X[t], y[t]))]
    diffs += state_and_file_diffs(a, b, folder)
    print(seed, d, kw, "same" if not diffs else f"DIFFERENT: {diffs[:3]}", flush=True)
    return not diffs


def state_and_file_diffs(a, b, folder):
    """The state arrays and the saved files' arrays of two models that differ."""
    diffs = [f"state {f}" for f, fa, fb in zip(a.state._fields, a.state, b.state, strict=True)
             if fa.tobytes() != fb.tobytes()]
    a.save(folder / "a.npz")
    b.save(folder / "b.npz")
    with np.load(folder / "a.npz") as fa, np.load(folder / "b.npz") as fb:
        diffs += [f"file {k}" for k in fa.files if fa[k].tobytes() != fb[k].tobytes()]
    return diffs


def main(case=case, default_cases=40):
    """Run ``case(old package, seed, folder)`` over the cases; exit 1 if any differ."""
    folder = Path(tempfile.mkdtemp())
    old, sha = package_at(sys.argv[1], folder / "package")
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else default_cases
    different = sum(not case(old, seed, folder) for seed in range(cases))
    print(f"tree against {sha[:8]}: {cases} cases, {different} different")
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()
