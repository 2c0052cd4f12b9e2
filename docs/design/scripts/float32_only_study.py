"""The measurements of docs/design/float32.md, "float32-only arithmetic".

    python docs/design/scripts/float32_only_study.py [long|poor|streams]

long: 200,000 rows at d = 6, the weights of a mixed float32 and a float32-only
DFOP against a float64 DFOP on the same float32-rounded rows. poor: 40,000 rows
of which rows 10,000-30,000 excite one direction, d = 8 and 30, forgetting 0.01,
0.3, 0.9, both keep_prior: the largest max|w - w64| / (1 + max|w64|) over blocks
of 2,000 rows, the smallest eigenvalue of P, rows refused. streams: sru and
luxembourg (EDGEREG_DATA_ROOT for the shared data) as tests/test_high_forgetting.py
standardises them, on_invalid="skip": rows refused, min eigenvalue, max P_ii / p0.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

from edgereg import DFOP

KINDS = {"mixed": {"dtype": "float32"}, "only32": {"dtype": "float32", "arithmetic": "float32"}}


def _long() -> None:
    rng = np.random.default_rng(11)
    d, n = 6, 200_000
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)
    y = X @ np.arange(1.0, d + 1) + 0.1 * rng.normal(size=n)
    for mu in (0.001, 0.01, 0.1):
        ref = DFOP(d, mu)
        ref.learn_many(X, y)
        for kind, kw in KINDS.items():
            m = DFOP(d, mu, **kw)
            m.learn_many(X, y)
            err = np.linalg.norm(m.coef_ - ref.coef_) / np.linalg.norm(ref.coef_)
            print(f"long mu={mu} {kind}: relative |w - w64| {err:.2e}, refused {m.n_skipped_}")


def _poor() -> None:
    for d in (8, 30):
        for mu in (0.01, 0.3, 0.9):
            for kp in (True, False):
                rng = np.random.default_rng(int(mu * 100) + kp)
                n = 40_000
                X = rng.normal(size=(n, d))
                X[10_000:30_000] = rng.normal(size=(20_000, 1)) * np.ones(d)
                X = X.astype(np.float32).astype(np.float64)
                y = X @ np.linspace(-2, 2, d) + 0.01 * rng.normal(size=n)
                row = []
                for kind, kw in KINDS.items():
                    m = DFOP(d, mu, keep_prior=kp, on_invalid="skip", **kw)
                    ref = DFOP(d, mu, keep_prior=kp)
                    dev, eig = 0.0, np.inf
                    for s in range(0, n, 2000):
                        m.learn_many(X[s:s + 2000], y[s:s + 2000])
                        ref.learn_many(X[s:s + 2000], y[s:s + 2000])
                        eig = min(eig, np.linalg.eigvalsh(m.state.P.astype(float)).min())
                        dev = max(dev, np.abs(m.coef_ - ref.coef_).max()
                                  / (1 + np.abs(ref.coef_).max()))
                    row.append(f"{kind} {dev:.1e} eig {eig:.1e} refused {m.n_skipped_}")
                print(f"poor d={d} mu={mu} keep_prior={kp}: " + " | ".join(row))


def _streams() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
    from test_high_forgetting import _stream

    warnings.simplefilter("ignore")
    for name in ("sru", "luxembourg"):
        X, y, task = _stream(name)
        for kp in (True, False):
            for mu in (0.1, 0.3, 0.5, 0.9):
                row = []
                for kind, kw in KINDS.items():
                    m = DFOP(X.shape[1], mu, task=task, keep_prior=kp, on_invalid="skip", **kw)
                    m.learn_many(X.astype(np.float32), y)
                    P = m.state.P.astype(float)
                    row.append(f"{kind} refused {m.n_skipped_} eig "
                               f"{np.linalg.eigvalsh(P).min():.1e} "
                               f"max P_ii/p0 {P.diagonal().max() / m.p0:.2f}")
                print(f"{name} keep_prior={kp} mu={mu}: " + " | ".join(row))


if __name__ == "__main__":
    which = sys.argv[1:] or ["long", "poor", "streams"]
    for part in which:
        {"long": _long, "poor": _poor, "streams": _streams}[part]()
