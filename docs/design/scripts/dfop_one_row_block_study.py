"""Is DFOP's learn_one free as its block kernel on one row? (issue 14, item 4)

    python docs/design/scripts/dfop_one_row_block_study.py

A gateway tick of Fleet.learn_one, serial: K = 100 models, each learns one
sample, (a) with ``_dfop_learn_one`` (the one-sample text), (b) with
``_dfop_learn_many`` on the one row (a 1 x d view; one text for both). Best
of 5 rounds of 2,000 ticks; both give the same weights bit for bit (checked).
"""
import time

import numpy as np
from numba import njit

from edgereg._jit import python_function
from edgereg._kernels import dfop as K
from edgereg.dfop import refresh_period


@njit
def tick_one(X, Y, PW, L, W, hyper, codes, OUT):
    for k in range(X.shape[0]):
        OUT[k] = K._dfop_learn_one(X[k], Y[k], PW[k], L[k], W[k], hyper, codes)[0]


@njit
def tick_block(X, Y, PW, L, W, hyper, codes, OUT, YB):
    d = X.shape[1]
    mu = hyper[K.HYPER_MU : K.HYPER_MU + 1]
    for k in range(X.shape[0]):
        YB[k, 0] = Y[k]
        K._dfop_learn_many(X[k].reshape((1, d)), YB[k], mu, OUT[k : k + 1], PW[k], L[k], W[k],
                           hyper, codes)


def fresh(Kn, d):
    PW = np.zeros((Kn, d + 1, d))
    PW[:, np.arange(d), np.arange(d)] = 100.0
    hyper = np.array([0.01, 100.0])
    codes = np.array([refresh_period(d, 0.01), 1, 0], dtype=np.int64)
    scratch = np.zeros((Kn, python_function(K.scratch_size)(d)))  # 3 vectors, each aligned
    return PW, np.zeros((Kn, K.N_LEARNT)), scratch, hyper, codes


def main():
    for d in (10, 50):
        Kn, T = 100, 2000
        rng = np.random.default_rng(0)
        Xs = rng.normal(size=(T, Kn, d))
        Ys = Xs[:, :, 0].copy()
        res = {}
        for _ in range(5):
            blocks = fresh(Kn, d)
            OUT = np.zeros(Kn)
            tick_one(Xs[0], Ys[0], *blocks, OUT)
            t = time.perf_counter()
            for s in range(1, T):
                tick_one(Xs[s], Ys[s], *blocks, OUT)
            res["one"] = max(res.get("one", 0), Kn * T / (time.perf_counter() - t))
            w_one = blocks[0].copy()
            blocks = fresh(Kn, d)
            YB = np.zeros((Kn, 1))
            tick_block(Xs[0], Ys[0], *blocks, OUT, YB)
            t = time.perf_counter()
            for s in range(1, T):
                tick_block(Xs[s], Ys[s], *blocks, OUT, YB)
            res["block"] = max(res.get("block", 0), Kn * T / (time.perf_counter() - t))
            assert np.array_equal(blocks[0], w_one)
        ratio = res["block"] / res["one"]
        print(f"d = {d}: one-sample kernel {res['one'] / 1e6:.2f}M samples/s, "
              f"block kernel on one row {res['block'] / 1e6:.2f}M ({ratio:.2f}x)")


if __name__ == "__main__":
    main()
