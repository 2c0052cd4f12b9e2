"""NORMA's kernels: the kernel row, the decision value and the budgeted step.

docs/algorithms/norma.md. One step, with g = f + b and the budget a ring buffer::

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

from .._jit import inline_kernel, kernel, recompile_with
from . import dtype as _dtype_module
from .dtype import by_dtype

OK = 0
INVALID = 1

#: Kernel codes (dispatched inside the kernels).
RBF, LAPLACIAN, POLYNOMIAL, LINEAR = 0, 1, 2, 3

#: Loss codes.
HINGE, HINGE_NU, NOVELTY, SQUARED, EPS, EPS_NU, HUBER, HUBER_NU = range(8)


#: Renormalise the stored a_i when the global scale s drops below this (see module notes).
RENORM_THRESHOLD = 2.0**-64

# Layout of the small parameter arrays handed to the kernels.
HYPER_ETA, HYPER_LAMBDA, HYPER_NU, HYPER_GAMMA, HYPER_COEF0 = range(5)
N_HYPER = 5
CODE_KERNEL, CODE_LOSS, CODE_SCHEDULE, CODE_OFFSET, CODE_SKIP, CODE_DEGREE = range(6)
N_CODES = 6
# counts: learnt, skipped, stored support vectors, next slot, dropped terms, loss-active steps
COUNT_SV, COUNT_NEXT, COUNT_DROPPED, COUNT_ACTIVE = 2, 3, 4, 5



# exp(t) for t <= 0 in a loop LLVM vectorises (no libm call; portable to NEON),
# in the arithmetic of the row's dtype: t = k ln2 + r with k = round(t / ln2) by
# the shifter 1.5 * 2^p (p = 52 or 23: adding it rounds to an integer),
# |r| <= ln2 / 2 by a Cody-Waite split of ln 2 (k * ln2_hi exact), exp(r) by
# its Taylor polynomial evaluated with Estrin's scheme (short dependency
# chains), 2^k built from the exponent bits. float64: fdlibm's split, degree 13
# (truncation 1.7e-16), at most 2 ulp from numpy's exp on [-707, 0]. float32
# (twice the lanes, docs/design/float32.md): cephes' expf split, degree 7
# (truncation 5e-9 < eps32 / 2), float32 constants throughout so that nothing
# promotes to float64, at most 2 float32 ulp from exp of the float32 argument
# on [-87, 0]. Both measured in tests/test_norma.py. Below the floor the
# result is exp(floor): the smallest power of two the exponent bits still make
# normal is 2^-1022 (2^-126).
#              floor, log2(e), shifter, its bits, exponent bias, mantissa bits, ln2_hi, ln2_lo
_SHIFTER64, _SHIFTER32 = np.float64(1.5 * 2.0**52), np.float32(1.5 * 2.0**23)
_EXP64 = (
    np.float64(-708.0), np.float64(1.4426950408889634), _SHIFTER64,
    np.array([_SHIFTER64]).view(np.int64)[0], np.int64(1023), np.int64(52),
    np.float64(6.93147180369123816490e-01), np.float64(1.90821492927058770002e-10),
)
_EXP32 = (
    np.float32(-87.0), np.float32(1.4426950408889634), _SHIFTER32,
    np.array([_SHIFTER32]).view(np.int32)[0], np.int32(127), np.int32(23),
    np.float32(0.693359375), np.float32(-2.12194440e-4),
)
_T64 = tuple(np.float64(1.0 / math.factorial(k)) for k in range(14))
_T32 = tuple(np.float32(1.0 / math.factorial(k)) for k in range(8))


@inline_kernel
def _exp_format64(row):
    return _EXP64


@inline_kernel
def _exp_format32(row):
    return _EXP32


#: The constants of ``_exp_scaled`` for row's dtype (``_EXP64``, ``_EXP32``).
exp_format = by_dtype("row", _exp_format64, _exp_format32)


@inline_kernel
def _exp_taylor64(r):
    t = _T64
    r2 = r * r
    r4 = r2 * r2
    q0 = (t[0] + t[1] * r) + (t[2] + t[3] * r) * r2
    q1 = (t[4] + t[5] * r) + (t[6] + t[7] * r) * r2
    q2 = (t[8] + t[9] * r) + (t[10] + t[11] * r) * r2
    q3 = t[12] + t[13] * r
    return (q0 + q1 * r4) + (q2 + q3 * r4) * (r4 * r4)


@inline_kernel
def _exp_taylor32(r):
    t = _T32
    r2 = r * r
    q0 = (t[0] + t[1] * r) + (t[2] + t[3] * r) * r2
    q1 = (t[4] + t[5] * r) + (t[6] + t[7] * r) * r2
    return q0 + q1 * (r2 * r2)


#: exp(r) for |r| <= ln2 / 2 in r's precision: degree 13 (float64) or 7 (float32).
exp_taylor = by_dtype("r", _exp_taylor64, _exp_taylor32)


@kernel
def _exp_scaled(row, n, ng, bits, pow2):
    """row[i] <- exp(ng * row[i]) for i < n (ng <= 0, of row's dtype); ``bits``
    and ``pow2`` are views of one scratch as the integer and the float of row's
    width (int64 and float64, or int32 and float32).

    Three loops so that each one vectorises: the polynomial, the integer
    exponent arithmetic, the product. NaN stays NaN.
    """
    floor, log2e, shifter, shifter_bits, bias, mantissa, ln2_hi, ln2_lo = exp_format(row)
    for i in range(n):
        t = ng * row[i]
        t = t if not (t < floor) else floor
        v = t * log2e + shifter
        k = v - shifter
        row[i] = exp_taylor((t - k * ln2_hi) - k * ln2_lo)
        pow2[i] = v
    for i in range(n):
        bits[i] = (bits[i] - shifter_bits + bias) << mantissa
    for i in range(n):
        row[i] = row[i] * pow2[i]


@inline_kernel
def _exp_of_row64(row, n, ng, bits, pow2):
    _exp_scaled(row, n, ng, bits, pow2)


@inline_kernel
def _exp_of_row32(row, n, ng, bits, pow2):
    _exp_scaled(row, n, np.float32(ng), bits.view(np.int32), pow2.view(np.float32))


#: ``_exp_scaled`` in the arithmetic of row's dtype, from the model's exponent
#: scratch (``bits`` int64, ``pow2`` its float64 view): for float32, ng and
#: float32 views of the scratch. Chosen when numba types the call (a run-time
#: branch on row.itemsize made float64's learn_many 13% slower, measured).
exp_of_row = by_dtype("row", _exp_of_row64, _exp_of_row32)


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
        x, sv, n, codes[CODE_KERNEL], hyper[HYPER_GAMMA], hyper[HYPER_COEF0], codes[CODE_DEGREE],
        row,
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
    """One prequential NORMA step on (x, y) (docs/algorithms/norma.md).

    Returns ``(score, status)``: score is g(x) before the update (f(x) - rho
    for novelty detection), status OK or INVALID (x, y or g(x) not finite,
    or a value the update would store is not: nothing is then written).
    """
    n = counts[COUNT_SV]
    g, chk = _decision(x, sv, coef, scalars, row, bits, pow2, n, hyper, codes)
    loss = codes[CODE_LOSS]
    rho = scalars[2]
    score = g - rho if loss == NOVELTY else g
    if not (np.isfinite(chk) and np.isfinite(g) and np.isfinite(y)):
        return score, INVALID

    t = counts[0] + 1
    eta = hyper[HYPER_ETA]
    if codes[CODE_SCHEDULE] == 1:
        eta = eta / math.sqrt(t)
    nu = hyper[HYPER_NU]

    # alpha_t = -eta dl/dg; the nu-variants move rho (margin / eps / sigma) by
    # -eta dl/drho (the corrected signs, docs/algorithms/norma.md).
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

    # Check what the commit would store: a finite target of 1e152
    # gives a coefficient alpha / s beyond float32's range, a target near
    # 1.7e308 an offset b + alpha beyond float64's.
    s = scalars[0] * (1.0 - eta * hyper[HYPER_LAMBDA])
    stored = alpha if s < RENORM_THRESHOLD else alpha / s
    limit = 3.4028234663852886e38 if coef.itemsize == 4 else np.inf
    offset = scalars[1] + alpha if codes[CODE_OFFSET] else 0.0
    if not (abs(stored) < limit and abs(offset) < limit and abs(new_rho) < limit):
        return score, INVALID

    # Commit: decay every coefficient through the global scale, then insert.
    if s < RENORM_THRESHOLD:
        for i in range(n):
            coef[i] = coef[i] * s
        s = 1.0
    if alpha != 0.0:
        tau = coef.shape[0]
        slot = counts[COUNT_NEXT]
        for j in range(x.shape[0]):
            sv[j, slot] = x[j]
        coef[slot] = alpha / s
        counts[COUNT_NEXT] = slot + 1 if slot + 1 < tau else 0
        if n < tau:
            counts[COUNT_SV] = n + 1
        else:
            counts[COUNT_DROPPED] += 1
    scalars[0] = s
    if codes[CODE_OFFSET]:
        scalars[1] = offset
    scalars[2] = new_rho
    counts[0] += 1
    if active:
        counts[COUNT_ACTIVE] += 1
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
    (tau, the dtype) and ``exp`` (tau, int64); hyper and codes by the HYPER_*
    and CODE_* names above.
    """
    coef, scalars, bits, pow2 = _blocks(sv, C, exp)
    score, status = _norma_step(x, y, sv, coef, scalars, row, bits, pow2, counts, hyper, codes)
    if status != OK and codes[CODE_SKIP]:
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
    skip = codes[CODE_SKIP]
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
    n = counts[COUNT_SV]
    novelty = codes[CODE_LOSS] == NOVELTY
    for t in range(X.shape[0]):
        g, _ = _decision(X[t], sv, coef, scalars, row, bits, pow2, n, hyper, codes)
        out[t] = g - scalars[2] if novelty else g


@kernel
def _norma_predict_one(x, sv, C, counts, row, exp, hyper, codes):
    coef, scalars, bits, pow2 = _blocks(sv, C, exp)
    g, _ = _decision(x, sv, coef, scalars, row, bits, pow2, counts[COUNT_SV], hyper, codes)
    return g - scalars[2] if codes[CODE_LOSS] == NOVELTY else g


# by_dtype's choice of kernel is dtype.py's code: recompile when it changes (see _jit).
recompile_with(globals(), _dtype_module)
