"""The self-tuning bank's float32-only arithmetic
(``DFOP(..., forgetting="auto", dtype="float32", arithmetic="float32")``).

The bank of ``bank.py`` (its members, aggregate and window; the equations
are there) with every value in float32: each member is stepped by
``dfop32.dfop32_learn_one``, and the aggregate (the members' predictions
combined, their losses, the exponential weights, the loss scale, the slow
losses) and the window's moves compute in float32 only. The exponential
weights' exp is NORMA's float32 polynomial (``norma._exp_scaled``: at most
2 ulp from exp of the float32 argument, its floor exp(-87) ~ 1.6e-38 where
the float64 bank underflows to 0: such a weight is mixed back to alpha / K
by the share at once). Nothing is formed in float64, so an export for a
single-precision FPU (Cortex-M4F) needs no soft-double helper nor libm.

The blocks are ``bank.py``'s (PW, A; ``_bank_views`` is the one layout),
read as follows:

* the members' DFOP blocks as ``dfop32.py`` reads them;
* the bank's hyper (eta, alpha) and the lattice's factors are float64 values
  that are float32 values (the class rounds them): hyper read by their bits
  (``dfop32._narrow``), the factors copied into a member's hyper as int64
  bits when the window moves;
* the learnt fields of float64 slots (the loss scale, the weights v, the slow
  losses) hold their float32 values packed in the slots' first half
  (``_bank32_views``);
* the predictions' slots (q) and the chunk's hold float32 scratch: q the
  members' predictions and then their losses, the chunk's first slots the
  exp's argument and its power of two;
* x, y, learn_many's X, Y and out are float32.

A sample is valid when every x_j and y is finite and at most LIMIT32 in
magnitude. learn_many is learn_one's step in a loop (no fused pass over the
members): the same bits by construction, and the smallest code.
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import bank as _bank_module
from . import dfop32 as _dfop32_module
from . import norma as _norma_module
from .bank import (
    CHUNK,
    CODE_CLASSIFY,
    CODE_SCOUT,
    CODE_SKIP,
    HYPER_ETA,
    HYPER_SHARE,
    _bank_views,
    _member_block,
    member_index,
    member_stride,
    untracked,
)
from .dfop import CODE_PERIOD, HYPER_MU, _packed_views
from .dfop32 import _narrow, dfop32_learn_one
from .norma import _exp_scaled

_ZERO = np.float32(0.0)
_ONE = np.float32(1.0)
#: Largest |x_j| and |y| the float32 bank accepts (``dfop32.TARGET_LIMIT32``).
LIMIT32 = np.float32(1e30)
#: The bank's errors enter the loss scale clipped to +-ERROR_LIMIT32: its mean
#: within 1e18 and variance within (2e18)^2, so ERROR_SCALE (var + mean^2)
#: <= 2.5e38 stays finite in float32 (the float64 bank's 2e100 is not a float32).
ERROR_LIMIT32 = np.float32(1e18)
LOSS_CAP32 = np.float32(_bank_module.LOSS_CAP)
ERROR_SCALE32 = np.float32(_bank_module.ERROR_SCALE)
WRONG_SIGN_LOSS32 = np.float32(_bank_module.WRONG_SIGN_LOSS)
SLOW_RATE32 = np.float32(_bank_module.SLOW_RATE)
#: The jump onto the scout waits for this many learnt samples (1 / SLOW_RATE:
#: ``bank._move``'s ``learnt * SLOW_RATE >= 1``, as an integer comparison).
SLOW_SAMPLES = 500
SCALE_MEMORY32 = np.float32(_bank_module.SCALE_MEMORY)


@inline_kernel
def _bank32_views(A, K, d):
    """``_bank_views`` with the float32 fields: hyper (float64 slots, read by
    ``_narrow``), codes, counts, scale (3), v (K), q (K, scratch), B, window,
    lattice's bits (int64), periods, slow (K), and the exp's scratch (row, its
    int32 bits' view and float32 powers of two; K each, in the chunk's slots)."""
    hyper, codes, counts, scale, v, q, B, chunk, window, lattice, periods, slow = _bank_views(
        A, K, d)
    c32 = chunk.view(np.float32)
    pow2 = c32[K : 2 * K]
    return (hyper, codes, counts, scale.view(np.float32)[:3], v.view(np.float32)[:K],
            q.view(np.float32)[:K], B, window, lattice.view(np.int64), periods,
            slow.view(np.float32)[:K], c32[:K], pow2.view(np.int32), pow2)


@inline_kernel
def _valid32(x, y):
    """Every x_j and y finite and within LIMIT32 (NaN fails every comparison)."""
    ok = abs(y) <= LIMIT32
    for j in range(x.shape[0]):
        ok &= abs(x[j]) <= LIMIT32
    return ok


@inline_kernel
def _member_prediction32(p, classify):
    """q_k (0 when not finite; clipped to [-1, 1] for labels)."""
    if not np.isfinite(p):
        return _ZERO
    if classify:
        return min(max(p, -_ONE), _ONE)
    return p


@inline_kernel
def _combine32(q, v):
    yhat = _ZERO
    for k in range(v.shape[0]):
        yhat += v[k] * q[k]
    return yhat


@inline_kernel
def _loss_scale32(scale):
    s = ERROR_SCALE32 * (scale[2] + scale[1] * scale[1])
    if not s > _ZERO:
        return _ONE
    return s


@inline_kernel
def _observe_error32(scale, e):
    e = min(max(e, -ERROR_LIMIT32), ERROR_LIMIT32)
    n = scale[0] + _ONE
    scale[0] = n
    rate = _ONE / min(n, SCALE_MEMORY32)
    delta = e - scale[1]
    scale[1] += rate * delta
    scale[2] = (_ONE - rate) * (scale[2] + rate * delta * delta)


@inline_kernel
def _reweigh32(q, y, v, eta, share, s, classify, row, bits, pow2):
    """``bank._reweigh`` in float32, exp(-eta (l_k - min l)) by ``_exp_scaled``."""
    K = v.shape[0]
    inv_s = _ONE / s
    least = LOSS_CAP32
    for k in range(K):
        if classify:
            loss = _ZERO if (q[k] >= _ZERO) == (y > _ZERO) else WRONG_SIGN_LOSS32
        else:
            err = q[k] - y
            loss = (err * err) * inv_s
            loss = loss if loss < LOSS_CAP32 else LOSS_CAP32
        q[k] = loss
        least = loss if loss < least else least
    for k in range(K):
        row[k] = q[k] - least
    _exp_scaled(row, K, -eta, bits, pow2)
    total = _ZERO
    for k in range(K):
        v[k] = v[k] * row[k]
        total += v[k]
    inv_total = _ONE / total
    uniform = _ONE / np.float32(np.int32(K))
    for k in range(K):
        u = v[k] * inv_total
        v[k] = u + share * (uniform - u)


@inline_kernel
def _aggregate32(q, y, hyper, codes, scale, v, slow, row, bits, pow2):
    """``bank._aggregate`` in float32: yhat, then the weights, scale and slow losses."""
    classify = codes[CODE_CLASSIFY] != 0
    yhat = _combine32(q, v)
    if classify:
        for k in range(v.shape[0]):
            wrong = _ZERO if (q[k] >= _ZERO) == (y > _ZERO) else _ONE
            slow[k] += SLOW_RATE32 * (wrong - slow[k])
    s = _ONE if classify else _loss_scale32(scale)
    _reweigh32(q, y, v, _narrow(hyper, HYPER_ETA), _narrow(hyper, HYPER_SHARE), s, classify,
               row, bits, pow2)
    if not classify:
        for k in range(v.shape[0]):
            slow[k] += SLOW_RATE32 * (q[k] - slow[k])
        _observe_error32(scale, yhat - y)
    return yhat


@inline_kernel
def _copy_member32(PW, B, slow, src, dst, d):
    """``bank._copy_member``, its DFOP block copied as int64 bits (no double load)."""
    stride = member_stride(d)
    for i in range(d + 1):
        for j in range(d):
            PW[dst, i, j] = PW[src, i, j]
    b = B.view(np.int64)
    for i in range(stride):
        b[dst * stride + i] = b[src * stride + i]
    slow[dst] = slow[src]


@inline_kernel
def _set_factor32(B, k, index, lattice, periods, d):
    """Member k's factor (the lattice's bits) and refresh period."""
    _, _, h, c = _packed_views(_member_block(B, k, d), d)
    h.view(np.int64)[HYPER_MU] = lattice[index]
    c[CODE_PERIOD] = periods[index]


@inline_kernel
def _move32(PW, B, v, slow, window, lattice, periods, d, learnt, scout):
    """``bank._move`` on the float32 fields (the lattice as int64 bits)."""
    K = v.shape[0]
    n = lattice.shape[0]
    W = K - 1 if scout > 0 else K
    low = window[0]
    if W >= n or W < 1 or K < 2:
        return
    lead = 0
    for k in range(1, K):
        if slow[k] < slow[lead]:
            lead = k
    for k in range(K):
        if k != lead and slow[k] == slow[lead]:
            return
    top = low + W - 1
    if scout > 0 and lead == K - 1 and member_index(low, K - 1, K, n, scout) > top + 1 \
            and learnt >= SLOW_SAMPLES:
        low = min(member_index(low, K - 1, K, n, scout), n - 1) - (W - 1)
        for k in range(W):
            _copy_member32(PW, B, slow, K - 1, k, d)
            _set_factor32(B, k, low + k, lattice, periods, d)
    elif (lead == W - 1 or (scout > 0 and lead == K - 1)) and top + 1 < n:
        dropped = v[0]
        for k in range(W - 1):
            _copy_member32(PW, B, slow, k + 1, k, d)
            v[k] = v[k + 1]
        if W >= 2:
            _copy_member32(PW, B, slow, W - 2, W - 1, d)
        v[W - 1] = dropped
        low += 1
        _set_factor32(B, W - 1, low + W - 1, lattice, periods, d)
    elif lead == 0 and low > 0:
        dropped = v[W - 1]
        for k in range(W - 1, 0, -1):
            _copy_member32(PW, B, slow, k - 1, k, d)
            v[k] = v[k - 1]
        if W >= 2:
            _copy_member32(PW, B, slow, 1, 0, d)
        v[0] = dropped
        low -= 1
        _set_factor32(B, 0, low, lattice, periods, d)
    else:
        return
    window[0] = low
    if scout > 0:
        _set_factor32(B, K - 1, member_index(low, K - 1, K, n, scout), lattice, periods, d)


@kernel
def _bank32_step(x, y, PW, A):
    """One sample (x, y float32): every member's dfop32 step, the aggregate, and
    every CHUNK learnt samples the window's move. Returns ``(yhat, valid)``:
    an invalid sample changes nothing but the skipped count (when skipping)."""
    K = PW.shape[0]
    d = x.shape[0]
    (hyper, codes, counts, scale, v, q, B, window, lattice, periods, slow, row, bits,
     pow2) = _bank32_views(A, K, d)
    if not _valid32(x, y):
        if codes[CODE_SKIP] != 0:
            counts[1] += 1
        return np.float32(np.nan), False
    classify = codes[CODE_CLASSIFY] != 0
    for k in range(K):
        work, L, h, c = _packed_views(_member_block(B, k, d), d)
        p, _ = dfop32_learn_one(x, y, PW[k], L, work, h, c)
        q[k] = _member_prediction32(p, classify)
    counts[0] += 1
    yhat = _aggregate32(q, y, hyper, codes, scale, v, slow, row, bits, pow2)
    if counts[0] % CHUNK == 0:
        _move32(PW, B, v, slow, window, lattice, periods, d, counts[0], codes[CODE_SCOUT])
    return yhat, True


@kernel
def bank32_learn_one(x, y, PW, A):
    """learn_one in float32 (x, y float32; the blocks untracked, as
    ``bank._bank_learn_one``); returns the prediction, NaN for an invalid sample."""
    return _bank32_step(untracked(x), y, untracked(PW), untracked(A))[0]


@kernel
def bank32_learn_one_packed(x, y, PW, A):
    """``bank32_learn_one`` for the class: y a float64 rounded to float32 here, the
    prediction returned as a float64."""
    return np.float64(bank32_learn_one(x, np.float32(y), PW, A))


@kernel
def bank32_learn_many(X, Y, out, PW, A):
    """learn_one over the rows (float32 X, Y, out); out[t] = the prediction of row t.
    Returns -1, or the first invalid row when not skipping (it and the rows after
    it not learnt). On the blocks untracked, as learn_one (with their reference
    counts, a row's views cost more than its members' steps: learn_many ran at
    0.2-0.4x the default arithmetic's fused pass, measured at d = 5)."""
    return _bank32_many(untracked(X), untracked(Y), untracked(out), untracked(PW),
                        untracked(A))


@kernel
def _bank32_many(X, Y, out, PW, A):
    """``bank32_learn_many``'s loop, on blocks that its caller holds."""
    K = PW.shape[0]
    codes = _bank_views(A, K, X.shape[1])[1]
    for t in range(X.shape[0]):
        yhat, ok = _bank32_step(X[t], Y[t], PW, A)
        out[t] = yhat
        if not ok and codes[CODE_SKIP] == 0:
            return t
    return -1


@kernel
def bank32_predict_one(x, PW, A):
    """The aggregate of the members' w_k^T x in float32, without learning."""
    K = PW.shape[0]
    d = x.shape[0]
    _, codes, _, _, v, q, _, _, _, _, _, _, _, _ = _bank32_views(A, K, d)
    classify = codes[CODE_CLASSIFY] != 0
    for k in range(K):
        w = PW[k, d]
        acc = _ZERO
        for j in range(d):
            acc += w[j] * x[j]
        q[k] = _member_prediction32(acc, classify)
    return _combine32(q, v)


@kernel
def bank32_predict_many(X, PW, A, out):
    for t in range(X.shape[0]):
        out[t] = bank32_predict_one(X[t], PW, A)


# The layout and the steps come from bank.py, dfop32.py and norma.py (see _jit).
recompile_with(globals(), _bank_module, _dfop32_module, _norma_module)
