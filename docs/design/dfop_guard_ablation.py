"""What each guard of DFOP's block kernel costs: variants of ``_dfop_learn_many`` by text.

    python docs/design/dfop_guard_ablation.py [d] [rounds]

Each variant is the installed kernel's source with one piece changed (the
substitution must match, or the script stops), compiled with numba and timed
in this one process, interleaved over the rounds (best of 3 per round, best
over rounds), 10^5 rows of Gaussian inputs, mu = 0.01. Variants that drop a
guard are wrong on hostile inputs: they measure what the guard costs, they
are not candidates. Figures: docs/design/dfop.md.
"""
import inspect, sys, time, textwrap
import numpy as np
from numba import njit
import edgereg
from edgereg._kernels import dfop as K

src = textwrap.dedent(inspect.getsource(K._dfop_learn_many.py_func))
src = src[src.index("def "):]

def variant(name, *subs):
    s = src
    for a, b in subs:
        assert a in s, (name, a)
        s = s.replace(a, b)
    ns = dict(vars(K))
    exec(s, ns)
    return name, njit(ns["_dfop_learn_many"])

variants = [variant("current")]
variants.append(variant("no big/wbig",
    ("            a = abs(Px[j])\n            big = a if a > big else big\n            b = abs(wj)\n            wbig = b if b > wbig else wbig\n", "")))
variants.append(variant("no admit (old check)",
    ("        verdict = _admit(y, yhat, den, c, g, big, wbig, small, w.itemsize == 4)",
     "        verdict = _APPLY if (np.isfinite(yhat) and np.isfinite(y) and np.isfinite(den) and den > 0.0) else 1")))
variants.append(variant("no diag proof (always verdict)",
    ("            proven = 0.0 < pmin and (big * big) * c <= pmin", "            proven = False")))
variants.append(variant("never check diag",
    ("            verdict = _APPLY if proven else _diagonal_verdict(P, Px, c)", "            verdict = _APPLY")))
variants.append(variant("no pmax gate (the reset's scan every step)",
    ("pmax > cap and _reset_unexcited(", "_reset_unexcited(")))

d = int(sys.argv[1]) if len(sys.argv) > 1 else 10
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
rng = np.random.default_rng(0)
n = 100_000
for dtype, keep in [("float64", True), ("float32", True), ("float64", False)]:
    X = rng.normal(size=(n, d)).astype(dtype); y = X[:, 0] + 0.1 * rng.normal(size=n)
    res = {}
    for rnd in range(rounds):
        for name, fn in variants:
            m = edgereg.DFOP(d, 0.01, dtype=dtype, keep_prior=keep)
            out = np.empty(n)
            args = lambda m: (X, y, m._mu, out, m._PW, m._L, m._work.scratch, m._work.hyper, m._work.codes)
            fn(*args(m))
            best = 1e9
            for _ in range(3):
                m = edgereg.DFOP(d, 0.01, dtype=dtype, keep_prior=keep)
                a = args(m)
                t = time.perf_counter(); fn(*a); best = min(best, time.perf_counter() - t)
            res[name] = max(res.get(name, 0), n / best)
    base = res["current"]
    print(f"d={d} {dtype} keep_prior={keep}: " + ", ".join(f"{k} {v/1e6:.2f}M ({v/base:.3f})" for k, v in res.items()))
