"""auto / DFOP time in one process, and learn_one's samples/s: run it against two trees in turn.

Prints one line: samples/s of ``learn_many`` for DFOP(d, 0.01) and DFOP(d,
"auto") (best of 5; d = 10 with 40,000 rows, d = 50 with 6,000), of
``learn_one`` of DFOP(10, "auto") over 10,000 rows, and the time ratios.
To compare two commits on a loaded machine, alternate them::

    for i in 1 2; do PYTHONPATH=../main python docs/design/auto_forgetting_speed.py main
                     PYTHONPATH=. python docs/design/auto_forgetting_speed.py window; done
"""

import sys
import time

import numpy as np

from edgereg import DFOP


def best(fn, reps=5):
    b = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        b = min(b, time.perf_counter() - t)
    return b


def main(label: str) -> None:
    rng = np.random.default_rng(0)
    out = {}
    for d, n in ((10, 40_000), (50, 6_000)):
        X = rng.normal(size=(n, d))
        y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
        for name, forgetting in (("dfop", 0.01), ("auto", "auto")):
            m = DFOP(d, forgetting)
            m.learn_many(X[:100], y[:100])

            def run(m=m, X=X, y=y):
                m.reset()
                m.learn_many(X, y)

            out[f"{name}{d}"] = n / best(run)
    X = rng.normal(size=(10_000, 10))
    rows, targets = list(X), [float(v) for v in X @ rng.normal(size=10)]
    m = DFOP(10, "auto")
    m.learn_one(rows[0], targets[0])

    def loop():
        m.reset()
        learn = m.learn_one
        for a, b in zip(rows, targets, strict=True):
            learn(a, b)

    out["auto_one10"] = 10_000 / best(loop)
    ratios = (out["dfop10"] / out["auto10"], out["dfop50"] / out["auto50"])
    print(label, " ".join(f"{k}={v / 1e3:.0f}k" for k, v in out.items()),
          f"ratio10={ratios[0]:.2f} ratio50={ratios[1]:.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
