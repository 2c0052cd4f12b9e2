"""What each guard of DFOP's block kernel costs: variants of its row loop by text.

    python asv_bench/dfop_guard_ablation.py [d] [rounds]

Each variant is the installed row loop's source (``_learn_many_in``, which
``_dfop_learn_many`` runs in the arithmetic's dtype) with one piece changed
(the substitution must match, or the script stops: tests/test_design_scripts.py
checks that they all still do), compiled with numba and timed in this one
process, interleaved over the rounds (best of 3 per round, best over rounds),
10^5 rows of Gaussian inputs, mu = 0.01. Variants that drop a guard are wrong
on hostile inputs: they measure what the guard costs, they are not
candidates. Figures: docs/design/dfop.md.
"""

import inspect
import sys
import textwrap
import time

import numpy as np
from numba import njit

import edgereg
from edgereg._kernels import dfop as K


def source(f):
    s = textwrap.dedent(inspect.getsource(f.py_func))
    return s[s.index("def "):]


NO_MAXIMA = ("        yhat, xPx, big, wbig = _reads(x, w, Px)\n",
             "        yhat = 0.0\n        xPx = 0.0\n        big = 0.0\n        wbig = 0.0\n"
             "        for j in range(d):\n            yhat += np.float64(w[j]) * x[j]\n"
             "            xPx += np.float64(x[j]) * Px[j]\n")
OLD_CHECK = ("        verdict = _admit(y, yhat, den, c, g, big, wbig, small, w.itemsize == 4)",
             "        verdict = _APPLY if (np.isfinite(yhat) and np.isfinite(y)"
             " and np.isfinite(den) and den > 0.0) else 1")
DIAGONAL = "            verdict = _APPLY if _proven(pmin, big, c) else _diagonal_verdict(P, Px, c)"
NO_PROOF = (DIAGONAL, "            verdict = _diagonal_verdict(P, Px, c)")
NO_DIAGONAL = (DIAGONAL, "            verdict = _APPLY")
NO_GATE = ("pmax > cap and _reset_unexcited(", "_reset_unexcited(")

#: name -> the substitutions that make the variant from the installed source.
VARIANTS = {
    "current": (),
    "no big/wbig": (NO_MAXIMA,),
    "no admit (old check)": (OLD_CHECK,),
    "no diag proof (always verdict)": (NO_PROOF,),
    "never check diag": (NO_DIAGONAL,),
    "unguarded (0e7a520's check only)": (NO_MAXIMA, OLD_CHECK, NO_DIAGONAL),
    "no pmax gate (the reset's scan every step)": (NO_GATE,),
}


def variant_source(name):
    """The row loop's source for the variant ``name`` (AssertionError if a
    substitution no longer matches the installed kernel)."""
    s = source(K._learn_many_in)
    for a, b in VARIANTS[name]:
        assert a in s, (name, a)
        s = s.replace(a, b)
    return s


def variant(name):
    ns = dict(vars(K))
    exec(variant_source(name), ns)
    ns["_learn_many_in"] = njit(ns["_learn_many_in"])
    exec(source(K._dfop_learn_many), ns)  # the entry, calling this variant
    return name, njit(ns["_dfop_learn_many"])


def blocks(m, X, y, out):
    return (X, y, m._mu, out, m._PW, m._L, m._work.scratch, m._work.hyper, m._work.codes)


def main():
    variants = [variant(name) for name in VARIANTS]
    d = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rng = np.random.default_rng(0)
    n = 100_000
    for dtype, keep in [("float64", True), ("float32", True), ("float64", False)]:
        X = rng.normal(size=(n, d)).astype(dtype)
        y = X[:, 0] + 0.1 * rng.normal(size=n)
        res = {}
        for _ in range(rounds):
            for name, fn in variants:
                out = np.empty(n)
                fn(*blocks(edgereg.DFOP(d, 0.01, dtype=dtype, keep_prior=keep), X, y, out))
                best = 1e9
                for _ in range(3):
                    a = blocks(edgereg.DFOP(d, 0.01, dtype=dtype, keep_prior=keep), X, y, out)
                    t = time.perf_counter()
                    fn(*a)
                    best = min(best, time.perf_counter() - t)
                res[name] = max(res.get(name, 0), n / best)
        base = res["current"]
        print(f"d={d} {dtype} keep_prior={keep}: "
              + ", ".join(f"{k} {v / 1e6:.2f}M ({v / base:.3f})" for k, v in res.items()))


if __name__ == "__main__":
    main()
