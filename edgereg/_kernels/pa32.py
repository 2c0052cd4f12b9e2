"""SOMOR's and PA's float32-only arithmetic (``arithmetic="float32"``).

The steps of ``pa.py`` over the same blocks, with every value in float32:
x^T x, the prediction W^T x, the residual, its norm, the step sizes, the
bound on ||W||_F and its refresh. Nothing is formed in float64, so an export
for a single-precision FPU (Cortex-M4F, rv32imafc) needs no soft-double
helper. Per sample (x with its constant 1 when fitting an intercept),
yhat = W^T x, r = y - yhat and

    SOMOR:  W <- W + x r^T max(0, 1 - eps / ||r||) / ||x||^2
    PA:     w_j <- w_j + sign(r_j) tau_j x,  tau_j = min(C, l_j / ||x||^2) (PA-I)
            or l_j / (||x||^2 + 1 / (2 C)) (PA-II),  l_j = max(0, |r_j| - eps)

The blocks are ``pa.py``'s (W, counts, work, bound, hyper, codes), read as follows:

* ``work`` is of the model's dtype (float32): x, then r;
* ``bound`` (two float64 slots) is seen as four float32: the bound of
  ||W||_F and the updates since it was exact (NaN: unknown, recomputed);
* ``hyper`` holds C and epsilon as float64 values that are float32 values
  (the class rounds them), read by their bits (``dfop32._narrow``: integer
  operations, no double arithmetic);
* y, the predictions, learn_many's Y and out are float32.

Why and what it costs against the float64 scalars of the default arithmetic:
docs/design/float32.md ("float32-only arithmetic").
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel, recompile_with
from . import dfop32 as _dfop32_module
from . import mores as _mores_module
from . import pa as _pa_module
from .dfop32 import _narrow
from .mores import CODE_INTERCEPT, CODE_SKIP, HYPER_C, INVALID, OK
from .pa import _BOUND_REFRESH, CODE_KIND, HYPER_EPSILON

_ZERO = np.float32(0.0)
_ONE = np.float32(1.0)
_HALF = np.float32(0.5)
#: float32's largest finite value.
_MAX = np.float32(3.4028234663852886e38)
_REFRESH = np.float32(_BOUND_REFRESH)
#: 4 eps of float32: the bound's slack is 1 + 4 eps (D m + D + m + 1024) (below).
_FOUR_EPS = np.float32(2.0**-21)


@kernel
def _frobenius32(W):
    """||W||_F in float32 without overflow (scaled by max |W_kj|)."""
    big = _ZERO
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            a = abs(W[k, j])
            big = a if a > big else big
    if big == _ZERO or not np.isfinite(big):
        return big
    acc = _ZERO
    for k in range(W.shape[0]):
        for j in range(W.shape[1]):
            v = W[k, j] / big
            acc += v * v
    return big * np.sqrt(acc)


@kernel
def _step_fits32(W, bound, xx, ss):
    """``pa._step_fits`` in float32: the growth (||x||^2 + ||s||^2) / 2 of the bound
    B >= ||W||_F, or -1 when B + growth, times the slack, is not below float32's
    largest value. The slack 1 + 4 eps (D m + D + m + 1024) (eps = 2^-23; the
    count capped at 2^24) is about 8 times what rounding can take from B against
    ||W||_F: the refresh's D m terms, each growth's D + m terms (relative to that
    growth), and per update one rounding of B + g and three of each entry of W,
    256 updates at most between refreshes (1024 + D m + D + m + 7 roundings of
    2^-24 to first order)."""
    b = bound.view(np.float32)
    if not (b[0] >= _ZERO) or b[1] >= _REFRESH:
        b[0] = _frobenius32(W)
        b[1] = _ZERO
    grow = _HALF * (xx + ss)
    D, m = W.shape
    n = min(D * m + D + m + 1024, 1 << 24)
    slack = _ONE + np.float32(np.int32(n)) * _FOUR_EPS
    if not ((b[0] + grow) * slack < _MAX):
        return -_ONE
    return grow


@kernel
def _grew32(bound, grow):
    b = bound.view(np.float32)
    b[0] += grow
    b[1] += _ONE


@kernel
def _load_and_predict32(xin, y, intercept, W, x, yhat):
    """x <- [xin, 1]; yhat <- W^T x, all in float32. Returns ``(ok, x^T x)``, ok False
    when x^T x, y^T y or a prediction is not finite (|y| or ||x|| beyond ~1.8e19
    overflows its square: refused). Writes only the scratch ``x`` and ``yhat``."""
    d = xin.shape[0]
    D = W.shape[0]
    m = W.shape[1]
    xx = _ZERO
    for k in range(d):
        v = xin[k]
        x[k] = v
        xx += v * v
    if intercept:
        x[d] = _ONE
        xx += _ONE
    yy = _ZERO
    for j in range(m):
        yy += y[j] * y[j]
        yhat[j] = _ZERO
    for k in range(D):
        xk = x[k]
        Wk = W[k]
        for j in range(m):
            yhat[j] += xk * Wk[j]
    ok = np.isfinite(xx) and np.isfinite(yy)
    for j in range(m):
        ok = ok and np.isfinite(yhat[j])
    return ok, xx


@kernel
def _somor_step32(xin, y, intercept, W, eps, x, r, yhat, bound):
    """``pa._somor_step`` in float32 (r = y - yhat is exact in its float32 slots:
    a finite ||r||^2 makes every r_j finite)."""
    ok, xx = _load_and_predict32(xin, y, intercept, W, x, yhat)
    if not ok:
        return INVALID
    D = W.shape[0]
    m = W.shape[1]
    rr = _ZERO
    for j in range(m):
        rj = y[j] - yhat[j]
        r[j] = rj
        rr += rj * rj
    rn = np.sqrt(rr)
    if not np.isfinite(rn):
        return INVALID
    if rn > eps and xx > _ZERO:
        f = (_ONE - eps / rn) / xx
        grow = _step_fits32(W, bound, xx, rr * (f * f))
        if not grow >= _ZERO:
            return INVALID
        for k in range(D):
            a = x[k] * f
            Wk = W[k]
            for j in range(m):
                Wk[j] += a * r[j]
        _grew32(bound, grow)
    return OK


@kernel
def _pa_step32(xin, y, intercept, W, variant, C, eps, x, r, yhat, bound):
    """``pa._pa_step`` in float32: tau_j = min(C, l_j / ||x||^2) (PA-I, variant 1) or
    l_j / (||x||^2 + 0.5 / C) (PA-II, variant 2)."""
    ok, xx = _load_and_predict32(xin, y, intercept, W, x, yhat)
    if not ok:
        return INVALID
    D = W.shape[0]
    m = W.shape[1]
    any_step = False
    ss = _ZERO
    for j in range(m):
        e = y[j] - yhat[j]
        loss = abs(e) - eps
        r[j] = _ZERO
        if loss > _ZERO and xx > _ZERO:
            if variant == 1:
                step = min(C, loss / xx)
            else:
                step = loss / (xx + _HALF / C)
            r[j] = step if e > _ZERO else -step
            any_step = True
            ss += step * step
    if not any_step:
        return OK
    grow = _step_fits32(W, bound, xx, ss)  # an infinite step makes ss, so grow, inf
    if not grow >= _ZERO:
        return INVALID
    for k in range(D):
        xk = x[k]
        Wk = W[k]
        for j in range(m):
            Wk[j] += xk * r[j]
    _grew32(bound, grow)
    return OK


@kernel
def lin32_learn_one(x, y, out, W, counts, work, bound, hyper, codes):
    """One SOMOR / PA step in float32 on (x, y) (float32 x, y, out); ``out``
    receives the prequential prediction. Returns OK or INVALID."""
    D = W.shape[0]
    intercept = codes[CODE_INTERCEPT] != 0
    eps = _narrow(hyper, HYPER_EPSILON)
    if codes[CODE_KIND] == 0:
        status = _somor_step32(x, y, intercept, W, eps, work[:D], work[D:], out, bound)
    else:
        status = _pa_step32(x, y, intercept, W, codes[CODE_KIND], _narrow(hyper, HYPER_C),
                            eps, work[:D], work[D:], out, bound)
    if status == OK:
        counts[0] += 1
    elif codes[CODE_SKIP] != 0:
        counts[1] += 1
    return status


@kernel
def lin32_learn_many(X, Y, out, W, counts, work, bound, hyper, codes):
    """``lin32_learn_one`` over the rows of X (float32 X, Y, out). Returns -1, or
    the first invalid row when not skipping (it and the rows after it not learnt)."""
    D = W.shape[0]
    intercept = codes[CODE_INTERCEPT] != 0
    kind = codes[CODE_KIND]
    skip = codes[CODE_SKIP] != 0
    C = _narrow(hyper, HYPER_C)
    eps = _narrow(hyper, HYPER_EPSILON)
    wx = work[:D]
    wr = work[D:]
    for t in range(X.shape[0]):
        if kind == 0:
            status = _somor_step32(X[t], Y[t], intercept, W, eps, wx, wr, out[t], bound)
        else:
            status = _pa_step32(X[t], Y[t], intercept, W, kind, C, eps, wx, wr, out[t], bound)
        if status == OK:
            counts[0] += 1
        elif skip:
            counts[1] += 1
        else:
            return t
    return -1


@kernel
def lin32_learn_one_wide(x, y, out, W, counts, work, bound, hyper, codes, y32, out32):
    """``lin32_learn_one`` for the class's learn_one: float64 y rounded to float32
    (beyond float32: inf, refused) into ``y32``, the float32 prediction in ``out32``
    widened into the float64 ``out``."""
    for j in range(y.shape[0]):
        y32[j] = np.float32(y[j])
    status = lin32_learn_one(x, y32, out32, W, counts, work, bound, hyper, codes)
    for j in range(out.shape[0]):
        out[j] = out32[j]
    return status


@kernel
def mo32_predict_one(xin, intercept, W, out):
    """out_j = w_j^T [x, 1] summed in float32 in the order of ``_load_and_predict32``
    (the intercept last: the predictions of learn_one, bit for bit)."""
    d = xin.shape[0]
    for j in range(W.shape[1]):
        acc = _ZERO
        for k in range(d):
            acc += xin[k] * W[k, j]
        if intercept:
            acc += W[d, j]
        out[j] = acc


@kernel
def mo32_predict_many(X, intercept, W, out):
    for t in range(X.shape[0]):
        mo32_predict_one(X[t], intercept, W, out[t])


# The blocks' names and _narrow come from pa.py, mores.py and dfop32.py (see _jit).
recompile_with(globals(), _pa_module, _mores_module, _dfop32_module)
