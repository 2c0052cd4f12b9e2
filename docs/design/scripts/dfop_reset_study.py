"""keep_prior=False's remedy, measured: every stream x forgetting, both dtypes.

    python docs/design/scripts/dfop_reset_study.py [cap]     # cap: MAX_VARIANCE (default 10)

Prints one markdown row per stream and dtype: accuracy % (classification)
or MSE of the first target (debutanizer, sru), prequential, the streams of
examples/reproduce_dfop.py standardised on their first 2% plus a bias
column (dfop_high_forgetting_study.py's protocol), and "stops@r" for a
ValueError at row r. The cap is set before anything is compiled, in a
numba cache folder of its own (kernels read it at compile time). Needs the
shared datasets beside the repository (../shared/data).
"""

import os
import sys
import tempfile

import numpy as np
from dfop_high_forgetting_study import NAMES, stream

MUS = (0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.9)


def set_cap(cap):
    """MAX_VARIANCE = cap for the kernels this process compiles.

    The kernels read it at compile time from two modules: ``_kernels/prior.py``
    (where it is defined) and ``_kernels/dfop.py`` (its copy, taken when dfop
    is imported): so it is set in prior before dfop is imported, in a cache
    folder of its own (the cache does not see the constant).
    """
    if "edgereg._kernels.dfop" in sys.modules or "numba" in sys.modules:
        raise RuntimeError("set_cap must run before numba and the DFOP kernels are imported")
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="edgereg-study-")
    from edgereg._kernels import prior

    prior.MAX_VARIANCE = cap
    from edgereg._kernels import dfop

    assert dfop.MAX_VARIANCE == cap


def cell(X, y, task, mu, dtype):
    from edgereg import DFOP

    model = DFOP(X.shape[1], mu, task=task, keep_prior=False, dtype=dtype)
    try:
        pred = model.learn_many(X.astype(dtype), y)
    except ValueError:
        return f"stops@{model.n_seen_}"
    if task == "classification":
        return f"{100.0 * np.mean(pred == y):.1f}"
    err = np.mean((pred - y) ** 2)
    return f"{err:.4f}" if err < 1e3 else f"{err:.1e}"


def main():
    cap = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    set_cap(cap)
    print(f"keep_prior=False, MAX_VARIANCE = {cap:g}")
    print("| stream | dtype | " + " | ".join(f"mu={mu}" for mu in MUS) + " |")
    print("|---|---|" + "---:|" * len(MUS))
    for name in NAMES:
        X, y, task = stream(name)
        for dtype in ("float64", "float32"):
            cells = [cell(X, y, task, mu, dtype) for mu in MUS]
            print(f"| {name} | {dtype} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
