"""The tables of docs/design/dfop.md: every stream x forgetting x keep_prior x dtype.

    python docs/design/scripts/dfop_high_forgetting_study.py [name,name,...]

Needs the shared datasets beside the repository (../shared/data). The cap
comparison of keep_prior=False is ``dfop_reset_study.py`` (the same streams,
with ``MAX_VARIANCE`` set before the kernels are compiled).
"""

import re
import sys
from pathlib import Path

import numpy as np

DATA = str(Path(__file__).resolve().parents[3].parent / "shared" / "data")
NAMES = ["elec2", "weather", "chess", "luxembourg", "usenet1", "usenet2", "powersupply", "sea",
         "1CDT", "2CDT", "UG_2C_2D", "debutanizer", "sru"]
MUS = (0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.9)


def stream(name):
    """The stream standardised on its first 2%, plus a bias column; (X, y, task)."""
    from edgereg.datasets import load

    kw = {"binarize": True} if name == "powersupply" else {}
    ds = load(name, root=DATA, **kw)
    X = np.asarray(ds.X, float)
    head = X[: max(len(X) // 50, 2)]
    mean, std = head.mean(0), head.std(0)
    std[std <= 1e-8 * np.maximum(1, abs(mean))] = 1.0
    Z = np.hstack([(X - mean) / std, np.ones((len(X), 1))])
    y = ds.y if ds.y.ndim == 1 else ds.y[:, 0]
    task = "regression" if ds.task != "classification" else "classification"
    return Z, np.ascontiguousarray(y), task


def run(name, mu, keep, dtype):
    from edgereg import DFOP

    X, y, task = stream(name)
    m = DFOP(X.shape[1], mu, task=task, keep_prior=keep, dtype=dtype, on_invalid="raise")
    try:
        p = m.learn_many(X.astype(dtype), y)
    except ValueError as e:
        r = re.search(r"row (\d+)", str(e))
        return f"stops at row {r.group(1) if r else '?'}"
    P = np.asarray(m.state.P, float)
    ok = np.array_equal(P, P.T) and np.all(np.isfinite(P)) and np.linalg.eigvalsh(P).min() >= 0
    score = np.mean(p == y) if task == "classification" else np.mean((p - y) ** 2)
    kind = "acc" if task == "classification" else "mse"
    return (f"{kind} {score:.4f} maxdiag/p0 {P.diagonal().max() / m.p0:.3g} "
            f"{'PSD' if ok else 'BROKEN'}")


def main():
    for name in (sys.argv[1].split(",") if len(sys.argv) > 1 else NAMES):
        for dtype in ("float64", "float32"):
            for keep in (True, False):
                row = [run(name, mu, keep, dtype) for mu in MUS]
                print(f"{name} {dtype} keep={keep}: " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()
