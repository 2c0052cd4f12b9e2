"""SOMOR's and the passive-aggressive PA-I/II kernels: cheap multi-output linear steps.

docs/algorithms/mores.md (SOMOR) and Crammer et al. 2006, section 5 (PA): one
rank-one correction W <- W + x s^T per sample, guarded so that W stays
finite in its dtype (``_step_fits``). Blocks: (inputs, W, counts, work,
bound, hyper, codes), work = [x, r] of the dtype and bound the float64
cache of ||W||_F; the index names of hyper and codes are below and in
``_kernels/mores.py`` (shared with MORES). The prediction and the loading
of [x, 1] are MORES' (``_load_and_predict``). Classes: ``edgereg/pa.py``.
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import mores as _mores_module
from .mores import CODE_INTERCEPT, CODE_SKIP, HYPER_C, INVALID, OK, _load_and_predict

HYPER_EPSILON = 1  # hyper = (C, epsilon)
CODE_KIND = 2  # codes = (intercept, skip, kind); kind: SOMOR 0, PA-I 1, PA-II 2

#: How many updates the linear models' bound on ||W||_F may grow by the
#: triangle inequality before it is recomputed exactly (O(D m), amortised).
_BOUND_REFRESH = 256


@kernel
def _frobenius(W):
    """||W||_F without overflow (scaled by max |W_kj|): an exact bound's refresh."""
    big = 0.0
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            a = abs(np.float64(W[k, j]))
            big = a if a > big else big
    if big == 0.0 or not np.isfinite(big):
        return big
    acc = 0.0
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            v = np.float64(W[k, j]) / big
            acc += v * v
    return big * np.sqrt(acc)


@inline_kernel
def _step_fits(W, bound, xx, ss):
    """Whether W + x s^T stays finite in W's dtype; ``bound`` keeps ||W||_F's bound.

    Every entry of the result is at most ||W + x s^T||_F <= B + ||x|| ||s||
    <= B + (||x||^2 + ||s||^2) / 2, B an upper bound of ||W||_F kept in
    ``bound[0]`` (grown by each update, recomputed exactly every
    ``_BOUND_REFRESH`` updates and after a load, where it is NaN). A target
    of 1.7e308, or 3.5e38 in a float32 model, makes the step overflow
    although the sample is finite. No square root, no pass over
    W: scanning W for its largest entry in the prediction's pass cost SOMOR
    13% at d = 50, m = 10, the exact growth's two square roots 4%.
    Returns the bound's growth, or -1.0 when the step does not fit.
    """
    if not (bound[0] >= 0.0) or bound[1] >= _BOUND_REFRESH:
        bound[0] = _frobenius(W)
        bound[1] = 0.0
    grow = 0.5 * (xx + ss)
    limit = 3.4028234663852886e38 if W.itemsize == 4 else 1.7976931348623157e308
    # 1 + 2^-20: the rounding of the bound's own arithmetic.
    if not ((bound[0] + grow) * (1.0 + 2.0**-20) < limit):
        return -1.0
    return grow


@inline_kernel
def _grew(bound, grow):
    """After an update that ``_step_fits`` admitted: B <- B + ||x|| ||s||."""
    bound[0] += grow
    bound[1] += 1.0


@kernel
def _somor_step(xin, y, intercept, W, eps, x, r, yhat, bound):
    """W <- W + x r^T max(0, 1 - eps/||r||) / ||x||^2, r = y - W^T x (docs/algorithms/mores.md)."""
    ok, xx = _load_and_predict(xin, y, intercept, W, x, yhat)
    if not ok:
        return INVALID
    D = W.shape[0]
    m = W.shape[1]
    rr = 0.0
    for j in range(m):
        rj = y[j] - yhat[j]
        r[j] = rj
        rr += rj * rj
    rn = np.sqrt(rr)
    if not np.isfinite(rn):
        return INVALID
    if rn > eps and xx > 0.0:
        f = (1.0 - eps / rn) / xx
        if W.itemsize == 4:  # r is stored in float32 too: 3.5e38 -> inf
            for j in range(m):
                if not np.isfinite(r[j]):
                    return INVALID
        grow = _step_fits(W, bound, xx, rr * (f * f))
        if not grow >= 0.0:
            return INVALID
        for k in range(D):
            a = x[k] * f
            Wk = W[k]
            for j in range(m):
                Wk[j] += a * r[j]
        _grew(bound, grow)
    return OK


@kernel
def _pa_step(xin, y, intercept, W, variant, C, eps, x, r, yhat, bound):
    """Passive-aggressive regression per output (Crammer et al. 2006, section 5).

    loss_j = max(0, |y_j - w_j^T x| - eps); step
    tau_j = min(C, loss_j / ||x||^2) (PA-I, variant 1) or
    tau_j = loss_j / (||x||^2 + 1/(2C)) (PA-II, variant 2);
    w_j <- w_j + sign(y_j - w_j^T x) tau_j x.
    """
    ok, xx = _load_and_predict(xin, y, intercept, W, x, yhat)
    if not ok:
        return INVALID
    D = W.shape[0]
    m = W.shape[1]
    any_step = False
    ss = 0.0
    for j in range(m):
        e = y[j] - yhat[j]
        loss = abs(e) - eps
        r[j] = 0.0
        if loss > 0.0 and xx > 0.0:
            if variant == 1:
                step = min(C, loss / xx)
            else:
                step = loss / (xx + 0.5 / C)
            r[j] = step if e > 0.0 else -step
            any_step = True
            ss += step * step
    if not any_step:
        return OK
    if W.itemsize == 4:  # r is stored in float32 too
        for j in range(m):
            if not np.isfinite(r[j]):
                return INVALID
    grow = _step_fits(W, bound, xx, ss)
    if not grow >= 0.0:
        return INVALID
    for k in range(D):
        xk = x[k]
        Wk = W[k]
        for j in range(m):
            Wk[j] += xk * r[j]
    _grew(bound, grow)
    return OK


@kernel
def _lin_learn_one(x, y, out, W, counts, work, bound, hyper, codes):
    """One SOMOR / PA step on (x, y); ``out`` receives the prequential prediction."""
    D = W.shape[0]
    intercept = codes[CODE_INTERCEPT] != 0
    if codes[CODE_KIND] == 0:
        status = _somor_step(x, y, intercept, W, hyper[HYPER_EPSILON], work[:D], work[D:], out,
                             bound)
    else:
        status = _pa_step(x, y, intercept, W, codes[CODE_KIND], hyper[HYPER_C],
                          hyper[HYPER_EPSILON],
                          work[:D], work[D:], out, bound)
    if status == OK:
        counts[0] += 1
    elif codes[CODE_SKIP] != 0:
        counts[1] += 1
    return status


@kernel
def _lin_learn_many(X, Y, out, W, counts, work, bound, hyper, codes):
    """Block kernel of SOMOR (kind 0), PA-I (kind 1) and PA-II (kind 2).

    The step and its count written out, not called: per row, a called step
    (or numba's inlined helper) made the block kernel 0.70x (0.84x) as fast
    (interleaved, docs/design/mores.md).
    """
    D = W.shape[0]
    intercept = codes[CODE_INTERCEPT] != 0
    kind = codes[CODE_KIND]
    skip = codes[CODE_SKIP] != 0
    C = hyper[HYPER_C]
    eps = hyper[HYPER_EPSILON]
    wx = work[:D]
    wr = work[D:]
    for t in range(X.shape[0]):
        if kind == 0:
            status = _somor_step(X[t], Y[t], intercept, W, eps, wx, wr, out[t], bound)
        else:
            status = _pa_step(X[t], Y[t], intercept, W, kind, C, eps, wx, wr, out[t], bound)
        if status == OK:
            counts[0] += 1
        elif skip:
            counts[1] += 1
        else:
            return t
    return -1


# Kernels here call MORES' (and through them linalg's): recompile them when
# those change (see _jit).
recompile_with(globals(), _mores_module)
