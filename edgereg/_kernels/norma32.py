"""NORMA's float32-only arithmetic (``arithmetic="float32"``).

The step of ``norma.py`` over the same seven blocks with every value in float32:
the kernel row and its exp (``_exp_scaled``'s float32 polynomial), the decision
value, the step size eta_t (eta / sqrt(t) by float32 ``sqrt``, one FPU
instruction; t capped at 2^31 - 1), the loss' coefficient, the decay
1 - eta_t lambda, the global scale and the checks before the commit. Nothing
is formed in float64, so an export for a single-precision FPU (Cortex-M4F)
needs neither a soft-double helper nor libm. One step, as ``norma.py``::

    alpha_t = -eta_t dl/dg (g_t(x_t), y_t),  s <- s (1 - eta_t lambda),
    a_slot <- alpha_t / s,  b <- b + alpha_t

The blocks are ``norma.py``'s (sv, C, counts, row, exp, hyper, codes), read as
follows:

* ``sv``, ``C`` (coefficients, then s, b, rho) and ``row`` are float32 (the
  model's dtype);
* ``exp`` (tau int64) is seen as 2 tau int32 and as 2 tau float32 (the
  exponent scratch of the float32 exp);
* ``hyper`` holds eta, lambda, nu, gamma and coef0 as float64 values that are
  float32 values (the class rounds them), read by their bits
  (``dfop32._narrow``: integer operations, no double arithmetic);
* y, the scores, learn_many's Y and out are float32.

The kernel row is ``norma._kernel_row`` with float32 constants (its float64
zeros would promote every float32 operation to double): the same loops, so the
same vectorisation. Why and what it costs: docs/design/float32.md (NORMA).
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import dfop32 as _dfop32_module
from . import norma as _norma_module
from .dfop32 import _narrow
from .norma import (
    CODE_DEGREE,
    CODE_KERNEL,
    CODE_LOSS,
    CODE_OFFSET,
    CODE_SCHEDULE,
    CODE_SKIP,
    COUNT_ACTIVE,
    COUNT_DROPPED,
    COUNT_NEXT,
    COUNT_SV,
    EPS_NU,
    HINGE,
    HINGE_NU,
    HUBER,
    HUBER_NU,
    HYPER_COEF0,
    HYPER_ETA,
    HYPER_GAMMA,
    HYPER_LAMBDA,
    HYPER_NU,
    INVALID,
    LAPLACIAN,
    NOVELTY,
    OK,
    POLYNOMIAL,
    RBF,
    RENORM_THRESHOLD,
    SQUARED,
    _exp_scaled,
)

_ZERO = np.float32(0.0)
_ONE = np.float32(1.0)
#: The step count's cap in the ``inv_sqrt`` schedule (2^31 - 1: int32's largest).
_INT32_MAX = 2147483647
#: ``RENORM_THRESHOLD`` (2^-64, a float32 value).
_RENORM32 = np.float32(RENORM_THRESHOLD)


@inline_kernel
def _hyper32(hyper):
    """(eta, lambda, nu, gamma, coef0) as float32, read by their bits."""
    return (_narrow(hyper, HYPER_ETA), _narrow(hyper, HYPER_LAMBDA), _narrow(hyper, HYPER_NU),
            _narrow(hyper, HYPER_GAMMA), _narrow(hyper, HYPER_COEF0))


@inline_kernel
def _blocks32(sv, C, exp):
    """coef, scalars (views of C) and the exponent scratch as int32 bits and float32."""
    tau = sv.shape[1]
    return C[:tau], C[tau : tau + 3], exp.view(np.int32), exp.view(np.float32)


@kernel
def _kernel_row32(x, sv, n, kcode, gamma, coef0, degree, row, bits, pow2):
    """``norma._kernel_row`` in float32: row[i] = k(x, sv_i); returns sum_j x_j * 0
    (0 for a finite x, NaN otherwise)."""
    d = x.shape[0]
    chk = _ZERO
    for i in range(n):
        row[i] = _ZERO
    j0 = 0
    if kcode == RBF:
        while j0 + 1 < d:
            xa = x[j0]
            xb = x[j0 + 1]
            chk += xa * _ZERO + xb * _ZERO
            sa = sv[j0]
            sb = sv[j0 + 1]
            for i in range(n):
                da = xa - sa[i]
                db = xb - sb[i]
                row[i] = row[i] + da * da + db * db
            j0 += 2
        if j0 < d:
            xa = x[j0]
            chk += xa * _ZERO
            sa = sv[j0]
            for i in range(n):
                da = xa - sa[i]
                row[i] += da * da
    elif kcode == LAPLACIAN:
        while j0 + 1 < d:
            xa = x[j0]
            xb = x[j0 + 1]
            chk += xa * _ZERO + xb * _ZERO
            sa = sv[j0]
            sb = sv[j0 + 1]
            for i in range(n):
                row[i] = row[i] + abs(xa - sa[i]) + abs(xb - sb[i])
            j0 += 2
        if j0 < d:
            xa = x[j0]
            chk += xa * _ZERO
            sa = sv[j0]
            for i in range(n):
                row[i] += abs(xa - sa[i])
    else:
        while j0 + 1 < d:
            xa = x[j0]
            xb = x[j0 + 1]
            chk += xa * _ZERO + xb * _ZERO
            sa = sv[j0]
            sb = sv[j0 + 1]
            for i in range(n):
                row[i] = row[i] + xa * sa[i] + xb * sb[i]
            j0 += 2
        if j0 < d:
            xa = x[j0]
            chk += xa * _ZERO
            sa = sv[j0]
            for i in range(n):
                row[i] += xa * sa[i]
    if kcode == RBF or kcode == LAPLACIAN:
        _exp_scaled(row, n, -gamma, bits, pow2)
    elif kcode == POLYNOMIAL:
        for i in range(n):
            base = gamma * row[i] + coef0
            v = _ONE
            for _ in range(degree):
                v *= base
            row[i] = v
    return chk


@kernel
def _decision32(x, sv, coef, scalars, row, bits, pow2, n, h, codes):
    """``norma._decision`` in float32 (the same four partial sums, the same order)."""
    chk = _kernel_row32(x, sv, n, codes[CODE_KERNEL], h[3], h[4], codes[CODE_DEGREE], row,
                        bits, pow2)
    a0 = _ZERO
    a1 = _ZERO
    a2 = _ZERO
    a3 = _ZERO
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
def _norma_step32(x, y, sv, coef, scalars, row, bits, pow2, counts, h, codes):
    """``norma._norma_step`` in float32 (y float32; h = ``_hyper32``). Returns
    ``(score, status)``; INVALID (nothing written) when x, y or g(x) is not finite
    or a value the commit would store (a_slot, b, rho) overflows float32."""
    eta, lam, nu = h[0], h[1], h[2]
    n = counts[COUNT_SV]
    g, chk = _decision32(x, sv, coef, scalars, row, bits, pow2, n, h, codes)
    loss = codes[CODE_LOSS]
    rho = scalars[2]
    score = g - rho if loss == NOVELTY else g
    if not (np.isfinite(chk) and np.isfinite(g) and np.isfinite(y)):
        return score, INVALID

    if codes[CODE_SCHEDULE] == 1:
        # t in float32 (exact up to 2^24, then rounded) through int32, capped at
        # 2^31 - 1 (an int64 to float conversion is a libgcc call on a 32-bit
        # core, an int32 one an FPU instruction), its float32 square root
        t = counts[0] + 1
        eta = eta / np.sqrt(np.float32(np.int32(t if t < _INT32_MAX else _INT32_MAX)))

    alpha = _ZERO
    active = False
    new_rho = rho
    if loss == HINGE or loss == HINGE_NU:
        active = y * g <= rho
        if active:
            alpha = eta * y
        if loss == HINGE_NU:
            new_rho = rho - eta * (_ONE - nu) if active else rho + eta * nu
    elif loss == NOVELTY:
        active = g < rho
        if active:
            alpha = eta
        new_rho = rho - eta * (_ONE - nu) if active else rho + eta * nu
    else:
        delta = y - g
        if loss == SQUARED:
            alpha = eta * delta
            active = alpha != _ZERO
        else:
            active = abs(delta) > rho
            if active:  # eta sign(delta) (a negative rho leaves delta = 0 active)
                alpha = eta if delta > _ZERO else (-eta if delta < _ZERO else _ZERO)
            elif (loss == HUBER or loss == HUBER_NU) and rho > _ZERO:
                alpha = eta * delta / rho
            if loss == EPS_NU or loss == HUBER_NU:
                new_rho = rho + eta * (_ONE - nu) if active else rho - eta * nu

    # What the commit would store must be a finite float32.
    s = scalars[0] * (_ONE - eta * lam)
    stored = alpha if s < _RENORM32 else alpha / s
    offset = scalars[1] + alpha if codes[CODE_OFFSET] else _ZERO
    if not (np.isfinite(stored) and np.isfinite(offset) and np.isfinite(new_rho)):
        return score, INVALID

    if s < _RENORM32:
        for i in range(n):
            coef[i] = coef[i] * s
        s = _ONE
    if alpha != _ZERO:
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


@kernel
def norma32_learn_one(x, y, sv, C, counts, row, exp, hyper, codes):
    """One float32 step on (x, y) (float32 x and y); returns ``(score, status)``,
    score float32, a skipped sample counted."""
    coef, scalars, bits, pow2 = _blocks32(sv, C, exp)
    score, status = _norma_step32(x, y, sv, coef, scalars, row, bits, pow2, counts,
                                  _hyper32(hyper), codes)
    if status != OK and codes[CODE_SKIP]:
        counts[1] += 1
    return score, status


@kernel
def norma32_learn_one_wide(x, y, sv, C, counts, row, exp, hyper, codes):
    """``norma32_learn_one`` for the class's learn_one: a float64 y rounded to float32
    (beyond float32's range: inf, refused)."""
    return norma32_learn_one(x, np.float32(y), sv, C, counts, row, exp, hyper, codes)


@kernel
def norma32_learn_many(X, Y, out, sv, C, counts, row, exp, hyper, codes):
    """``norma32_learn_one`` over the rows of X (float32 X, Y, out; Y one value per
    row, or one value read for every row). Returns -1, or the first invalid row when
    not skipping (it and the rows after it not learnt)."""
    coef, scalars, bits, pow2 = _blocks32(sv, C, exp)
    h = _hyper32(hyper)
    y_stride = 1 if Y.shape[0] == X.shape[0] else 0
    skip = codes[CODE_SKIP]
    for t in range(X.shape[0]):
        score, status = _norma_step32(X[t], Y[t * y_stride], sv, coef, scalars, row, bits, pow2,
                                      counts, h, codes)
        out[t] = score
        if status != OK:
            if skip:
                counts[1] += 1
                continue
            return t
    return -1


@kernel
def norma32_predict_one(x, sv, C, counts, row, exp, hyper, codes):
    """g(x) in float32 (f(x) - rho for novelty), as learn_one's score."""
    coef, scalars, bits, pow2 = _blocks32(sv, C, exp)
    g, _ = _decision32(x, sv, coef, scalars, row, bits, pow2, counts[COUNT_SV],
                       _hyper32(hyper), codes)
    return g - scalars[2] if codes[CODE_LOSS] == NOVELTY else g


@kernel
def norma32_predict_many(X, out, sv, C, counts, row, exp, hyper, codes):
    """``norma32_predict_one`` over the rows of X (float32 out)."""
    coef, scalars, bits, pow2 = _blocks32(sv, C, exp)
    h = _hyper32(hyper)
    n = counts[COUNT_SV]
    novelty = codes[CODE_LOSS] == NOVELTY
    for t in range(X.shape[0]):
        g, _ = _decision32(X[t], sv, coef, scalars, row, bits, pow2, n, h, codes)
        out[t] = g - scalars[2] if novelty else g


# The blocks' names and _narrow come from norma.py and dfop32.py (see _jit).
recompile_with(globals(), _norma_module, _dfop32_module)
