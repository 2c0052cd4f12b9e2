"""NORMA's kernels: the kernel row, the decision value and the budgeted step.

SPEC.md section 3. One step, with g = f + b and the budget a ring buffer::

    alpha_t = -eta_t dl/dg (g_t(x_t), y_t),  alpha_i <- (1 - eta_t lambda) alpha_i,
    b <- b + alpha_t

the decay held in one global scale s (alpha_i = s a_i, renormalised below
``RENORM_THRESHOLD``), the support vectors stored transposed so the kernel row
vectorises. Kernel and loss are integer codes dispatched inside njit. The
argument and the truncation bound: docs/design/norma.md.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

from .._jit import inline_kernel, kernel

OK = 0
INVALID = 1

#: Kernel codes (dispatched inside the kernels).
RBF, LAPLACIAN, POLYNOMIAL, LINEAR = 0, 1, 2, 3

#: Loss codes.
HINGE, HINGE_NU, NOVELTY, SQUARED, EPS, EPS_NU, HUBER, HUBER_NU = range(8)


#: Renormalise the stored a_i when the global scale s drops below this (see module notes).
RENORM_THRESHOLD = 2.0**-64

# Layout of the small parameter arrays handed to the kernels.
_H_ETA, _H_LAMBDA, _H_NU, _H_GAMMA, _H_COEF0 = range(5)
_N_HYPER = 5
_C_KERNEL, _C_LOSS, _C_SCHEDULE, _C_OFFSET, _C_SKIP, _C_DEGREE = range(6)
_N_CODES = 6
# counts: learnt, skipped, stored support vectors, next slot, dropped terms, loss-active steps
_N_SV, _NEXT, _DROPPED, _ACTIVE = 2, 3, 4, 5



# exp(t) for t <= 0 in a loop LLVM vectorises (no libm call; portable to NEON):
# t = k ln2 + r with k = round(t / ln2) by the 1.5 * 2^52 shifter, |r| <= ln2 / 2,
# exp(r) by its degree-13 Taylor polynomial (truncation 1.7e-16) evaluated with
# Estrin's scheme (short dependency chains), 2^k built from the exponent bits.
# Measured: at most 2 ulp from numpy's exp on [-707, 0] (tests/test_norma.py).
_LOG2E = 1.4426950408889634
_SHIFTER = 6755399441055744.0  # 1.5 * 2^52: adding it rounds to an integer
_SHIFTER_BITS = int(np.array([_SHIFTER]).view(np.int64)[0])
_LN2_HI = 6.93147180369123816490e-01  # Cody-Waite split (fdlibm): k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_EXP_FLOOR = -708.0  # exp(-708) = 3.3e-308 is still normal; below it 2^k would underflow
(_E0, _E1, _E2, _E3, _E4, _E5, _E6, _E7, _E8, _E9, _E10, _E11, _E12, _E13) = (
    1.0 / math.factorial(_k) for _k in range(14)
)


@kernel
def _exp_scaled(row, n, ng, bits, pow2):
    """row[i] <- exp(ng * row[i]) for i < n (ng <= 0); ``bits``/``pow2`` share memory.

    Three loops so that each one vectorises: the polynomial, the integer
    exponent arithmetic (through the int64 view), the product. Arguments
    below -708 give exp(-708) (absolute error < 3.3e-308); NaN stays NaN.
    """
    for i in range(n):
        t = ng * row[i]
        t = t if not (t < _EXP_FLOOR) else _EXP_FLOOR
        v = t * _LOG2E + _SHIFTER
        k = v - _SHIFTER
        r = (t - k * _LN2_HI) - k * _LN2_LO
        r2 = r * r
        r4 = r2 * r2
        q0 = (_E0 + _E1 * r) + (_E2 + _E3 * r) * r2
        q1 = (_E4 + _E5 * r) + (_E6 + _E7 * r) * r2
        q2 = (_E8 + _E9 * r) + (_E10 + _E11 * r) * r2
        q3 = _E12 + _E13 * r
        row[i] = (q0 + q1 * r4) + (q2 + q3 * r4) * (r4 * r4)
        pow2[i] = v
    for i in range(n):
        bits[i] = (bits[i] - _SHIFTER_BITS + 1023) << 52
    for i in range(n):
        row[i] = row[i] * pow2[i]


# The same in float32 for a float32 model's row, twice the lanes: the split of
# ln 2 is cephes' expf one (k * _LN2_HI32 exact for |k| < 2^15), the shifter
# 1.5 * 2^23, exp(r) by its degree-7 Taylor polynomial (truncation 5e-9 <
# eps32 / 2), float32 constants throughout so that nothing promotes to
# float64. Measured: at most 2 ulp (float32) from exp of the float32
# argument on [-87, 0] (tests/test_norma.py).
_LOG2E32 = np.float32(_LOG2E)
_SHIFTER32 = np.float32(12582912.0)  # 1.5 * 2^23
_SHIFTER32_BITS = np.int32(np.array([_SHIFTER32]).view(np.int32)[0])
_BIAS32 = np.int32(127)
_LN2_HI32 = np.float32(0.693359375)
_LN2_LO32 = np.float32(-2.12194440e-4)
_EXP_FLOOR32 = np.float32(-87.0)  # exp(-87) = 1.6e-38: float32's normal range ends at 1.2e-38
(_F0, _F1, _F2, _F3, _F4, _F5, _F6, _F7) = (
    np.float32(1.0 / math.factorial(_k)) for _k in range(8)
)


@kernel
def _exp_scaled32(row, n, ng, bits, pow2):
    """``_exp_scaled`` in float32 arithmetic: row (float32), ng (float32),
    ``bits`` int32 and ``pow2`` float32 views of one scratch. Arguments below
    -87 give exp(-87) (absolute error < 1.7e-38); NaN stays NaN."""
    for i in range(n):
        t = ng * row[i]
        t = t if not (t < _EXP_FLOOR32) else _EXP_FLOOR32
        v = t * _LOG2E32 + _SHIFTER32
        k = v - _SHIFTER32
        r = (t - k * _LN2_HI32) - k * _LN2_LO32
        r2 = r * r
        r4 = r2 * r2
        q0 = (_F0 + _F1 * r) + (_F2 + _F3 * r) * r2
        q1 = (_F4 + _F5 * r) + (_F6 + _F7 * r) * r2
        row[i] = q0 + q1 * r4
        pow2[i] = v
    for i in range(n):
        bits[i] = (bits[i] - _SHIFTER32_BITS + _BIAS32) << np.int32(23)
    for i in range(n):
        row[i] = row[i] * pow2[i]


def exp_of_row(row, n, ng, bits, pow2):
    """row[i] <- exp(ng * row[i]) for i < n in the arithmetic of row's dtype:
    ``_exp_scaled`` (float64) or ``_exp_scaled32`` on float32 views of the
    exponent scratch (``bits`` int64, ``pow2`` its float64 view). Chosen when
    numba types the call, so a float64 model's code has no float32 branch
    (a run-time branch on row.itemsize made float64's learn_many 13% slower,
    measured)."""
    if row.dtype == np.float32:
        _exp_scaled32(row, n, np.float32(ng), bits.view(np.int32), pow2.view(np.float32))
    else:
        _exp_scaled(row, n, ng, bits, pow2)


@overload(exp_of_row, inline="always")
def _exp_of_row(row, n, ng, bits, pow2):
    if isinstance(row, types.Array) and row.dtype == types.float32:
        def exp32(row, n, ng, bits, pow2):
            _exp_scaled32(row, n, np.float32(ng), bits.view(np.int32), pow2.view(np.float32))

        return exp32
    return lambda row, n, ng, bits, pow2: _exp_scaled(row, n, ng, bits, pow2)


@kernel
def _kernel_row(x, sv, n, kcode, gamma, coef0, degree, row, bits, pow2):
    """row[i] = k(x, sv_i) for the n stored support vectors; return sum_j x_j * 0.

    The returned value is 0 for a finite x and NaN otherwise (x * 0 is not
    folded without fastmath): the finiteness check rides on the feature loop.
    The feature loop is outside, the support-vector loop inside, so the inner
    loop is an element-wise update of contiguous arrays (vectorises); features
    are taken two at a time to halve the passes over ``row``.
    """
    d = x.shape[0]
    chk = 0.0
    for i in range(n):
        row[i] = 0.0
    j0 = 0
    if kcode == RBF:
        while j0 + 1 < d:
            xa = x[j0]
            xb = x[j0 + 1]
            chk += xa * 0.0 + xb * 0.0
            sa = sv[j0]
            sb = sv[j0 + 1]
            for i in range(n):
                da = xa - sa[i]
                db = xb - sb[i]
                row[i] = row[i] + da * da + db * db
            j0 += 2
        if j0 < d:
            xa = x[j0]
            chk += xa * 0.0
            sa = sv[j0]
            for i in range(n):
                da = xa - sa[i]
                row[i] += da * da
    elif kcode == LAPLACIAN:
        while j0 + 1 < d:
            xa = x[j0]
            xb = x[j0 + 1]
            chk += xa * 0.0 + xb * 0.0
            sa = sv[j0]
            sb = sv[j0 + 1]
            for i in range(n):
                row[i] = row[i] + abs(xa - sa[i]) + abs(xb - sb[i])
            j0 += 2
        if j0 < d:
            xa = x[j0]
            chk += xa * 0.0
            sa = sv[j0]
            for i in range(n):
                row[i] += abs(xa - sa[i])
    else:
        while j0 + 1 < d:
            xa = x[j0]
            xb = x[j0 + 1]
            chk += xa * 0.0 + xb * 0.0
            sa = sv[j0]
            sb = sv[j0 + 1]
            for i in range(n):
                row[i] = row[i] + xa * sa[i] + xb * sb[i]
            j0 += 2
        if j0 < d:
            xa = x[j0]
            chk += xa * 0.0
            sa = sv[j0]
            for i in range(n):
                row[i] += xa * sa[i]
    if kcode == RBF or kcode == LAPLACIAN:
        exp_of_row(row, n, -gamma, bits, pow2)
    elif kcode == POLYNOMIAL:
        for i in range(n):
            base = gamma * row[i] + coef0
            v = 1.0
            for _ in range(degree):
                v *= base
            row[i] = v
    return chk


@kernel
def _decision(x, sv, coef, scalars, row, bits, pow2, n, hyper, codes):
    """g(x) = s sum_i a_i k(x, sv_i) + b; second value is the finiteness check of x.

    The sum runs in four interleaved partial sums (a fixed order, so every
    path gives the same bits) instead of one serial chain of n additions.
    """
    chk = _kernel_row(
        x, sv, n, codes[_C_KERNEL], hyper[_H_GAMMA], hyper[_H_COEF0], codes[_C_DEGREE], row,
        bits, pow2,
    )
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    n4 = n - n % 4
    for i in range(0, n4, 4):
        a0 += coef[i] * row[i]
        a1 += coef[i + 1] * row[i + 1]
        a2 += coef[i + 2] * row[i + 2]
        a3 += coef[i + 3] * row[i + 3]
    for i in range(n4, n):
        a0 += coef[i] * row[i]
    acc = (a0 + a1) + (a2 + a3)
    return scalars[0] * acc + scalars[1], chk


@kernel
def _norma_step(x, y, sv, coef, scalars, row, bits, pow2, counts, hyper, codes):
    """One prequential NORMA step on (x, y) (SPEC section 3).

    Returns ``(score, status)``: score is g(x) before the update (f(x) - rho
    for novelty detection), status OK or INVALID (x, y or g(x) not finite,
    or a value the update would store is not: nothing is then written).
    """
    n = counts[_N_SV]
    g, chk = _decision(x, sv, coef, scalars, row, bits, pow2, n, hyper, codes)
    loss = codes[_C_LOSS]
    rho = scalars[2]
    score = g - rho if loss == NOVELTY else g
    if not (np.isfinite(chk) and np.isfinite(g) and np.isfinite(y)):
        return score, INVALID

    t = counts[0] + 1
    eta = hyper[_H_ETA]
    if codes[_C_SCHEDULE] == 1:
        eta = eta / math.sqrt(t)
    nu = hyper[_H_NU]

    # alpha_t = -eta dl/dg; the nu-variants move rho (margin / eps / sigma) by
    # -eta dl/drho (SPEC's corrected signs).
    alpha = 0.0
    active = False
    new_rho = rho
    if loss == HINGE or loss == HINGE_NU:
        # y g <= rho: the subgradient at the kink is taken as active, so the
        # perceptron (rho = 0) learns from a zero score.
        active = y * g <= rho
        if active:
            alpha = eta * y
        if loss == HINGE_NU:
            new_rho = rho - eta * (1.0 - nu) if active else rho + eta * nu
    elif loss == NOVELTY:
        active = g < rho
        if active:
            alpha = eta
        new_rho = rho - eta * (1.0 - nu) if active else rho + eta * nu
    else:
        delta = y - g
        if loss == SQUARED:
            alpha = eta * delta
            active = alpha != 0.0
        else:
            active = abs(delta) > rho
            if active:
                alpha = eta * np.sign(delta)
            elif (loss == HUBER or loss == HUBER_NU) and rho > 0.0:
                alpha = eta * delta / rho
            if loss == EPS_NU or loss == HUBER_NU:
                new_rho = rho + eta * (1.0 - nu) if active else rho - eta * nu

    # Check what the commit would store (issue 15): a finite target of 1e152
    # gives a coefficient alpha / s beyond float32's range, a target near
    # 1.7e308 an offset b + alpha beyond float64's.
    s = scalars[0] * (1.0 - eta * hyper[_H_LAMBDA])
    stored = alpha if s < RENORM_THRESHOLD else alpha / s
    limit = 3.4028234663852886e38 if coef.itemsize == 4 else np.inf
    offset = scalars[1] + alpha if codes[_C_OFFSET] else 0.0
    if not (abs(stored) < limit and abs(offset) < limit and abs(new_rho) < limit):
        return score, INVALID

    # Commit: decay every coefficient through the global scale, then insert.
    if s < RENORM_THRESHOLD:
        for i in range(n):
            coef[i] = coef[i] * s
        s = 1.0
    if alpha != 0.0:
        tau = coef.shape[0]
        slot = counts[_NEXT]
        for j in range(x.shape[0]):
            sv[j, slot] = x[j]
        coef[slot] = alpha / s
        counts[_NEXT] = slot + 1 if slot + 1 < tau else 0
        if n < tau:
            counts[_N_SV] = n + 1
        else:
            counts[_DROPPED] += 1
    scalars[0] = s
    if codes[_C_OFFSET]:
        scalars[1] = offset
    scalars[2] = new_rho
    counts[0] += 1
    if active:
        counts[_ACTIVE] += 1
    return score, OK


@inline_kernel
def _blocks(sv, C, exp):
    """coef, scalars (views of C: tau coefficients, then s, b, rho) and the
    exponent scratch read as int64 bits and as float64 powers of two."""
    tau = sv.shape[1]
    return C[:tau], C[tau : tau + 3], exp, exp.view(np.float64)


@kernel
def _norma_learn_one(x, y, sv, C, counts, row, exp, hyper, codes):
    """One step on (x, y); returns ``(score, status)``, a skipped sample counted.

    Learnt: ``sv`` (d, tau) support vectors (column i = slot i), ``C`` the
    tau coefficients then (s, b, rho), ``counts`` int64; scratch: ``row``
    (tau, the dtype) and ``exp`` (tau, int64); hyper and codes by the _H_*
    and _C_* names above.
    """
    coef, scalars, bits, pow2 = _blocks(sv, C, exp)
    score, status = _norma_step(x, y, sv, coef, scalars, row, bits, pow2, counts, hyper, codes)
    if status != OK and codes[_C_SKIP]:
        counts[1] += 1
    return score, status


@kernel
def _norma_learn_many(X, Y, out, sv, C, counts, row, exp, hyper, codes):
    """Learn a block; out[t] = prequential score of row t (blocks as ``_norma_learn_one``).

    ``Y`` holds a target per row, or one value (novelty, which has none).
    Returns -1 when every row was handled, else the index of the first
    invalid row (only without skipping): rows before it are learnt, it and
    the rows after it are not.
    """
    coef, scalars, bits, pow2 = _blocks(sv, C, exp)
    y_stride = 1 if Y.shape[0] == X.shape[0] else 0
    skip = codes[_C_SKIP]
    for t in range(X.shape[0]):
        score, status = _norma_step(
            X[t], Y[t * y_stride], sv, coef, scalars, row, bits, pow2, counts, hyper, codes
        )
        out[t] = score
        if status != OK:
            if skip:
                counts[1] += 1
                continue
            return t
    return -1


@kernel
def _norma_predict_many(X, out, sv, C, counts, row, exp, hyper, codes):
    coef, scalars, bits, pow2 = _blocks(sv, C, exp)
    n = counts[_N_SV]
    novelty = codes[_C_LOSS] == NOVELTY
    for t in range(X.shape[0]):
        g, _ = _decision(X[t], sv, coef, scalars, row, bits, pow2, n, hyper, codes)
        out[t] = g - scalars[2] if novelty else g


@kernel
def _norma_predict_one(x, sv, C, counts, row, exp, hyper, codes):
    coef, scalars, bits, pow2 = _blocks(sv, C, exp)
    g, _ = _decision(x, sv, coef, scalars, row, bits, pow2, counts[_N_SV], hyper, codes)
    return g - scalars[2] if codes[_C_LOSS] == NOVELTY else g
