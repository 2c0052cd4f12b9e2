"""DFOP's float32-only arithmetic (``DFOP(..., dtype="float32", arithmetic="float32")``).

The same G-DFOP step, prior refresh and guards as ``dfop.py``, over the same
blocks and with the same calling convention, but every value, scalar or not,
in float32: w^T x, x^T P x, c, sqrt(c), g, the guards' scales, 1 / lambda,
the prior refresh and the forgotten mass. Nothing is formed in float64, so an
export for a single-precision FPU (Cortex-M4F, rv32imafc) needs no soft-double
helper. Per sample, with lambda = 1 - mu::

    yhat = w^T x,  Px = P x,  c = 1 / (lambda + x^T Px),  u = Px sqrt(c)
    w   <- w + Px (y - yhat) c
    P   <- (P - u u^T) / lambda

(the u u^T form at every d: u_i^2 <= P_ii by Cauchy-Schwarz, so no product
of the update can overflow where P does not). A careful step (x^T P x > 16
lambda, where the update cancels most of P in the direction of x) is
computed in double-float32 instead of float64 (``_careful32``). Why the step
stays stable, and what it costs against the mixed arithmetic:
docs/design/float32.md ("float32-only arithmetic").

The blocks are ``dfop.py``'s (PW, L, work, hyper, codes), read as follows:

* ``L``'s forgotten mass is a float32 in the first 4 bytes of its float64
  slot (``_forgotten``), the counters are the same int64s;
* ``work`` is seen as float32 (its three vectors in its first half);
* ``hyper`` holds mu and p0 as float64 values that are float32 values (the
  class rounds them), read by their bits (``_narrow``: integer operations,
  no double arithmetic);
* learn_many's X, Y, MU and out are float32 (MU empty: the model's own mu).

learn_many is learn_one's step and refresh in a loop (no fused pass): the
same bits by construction, and the smallest code, which is what a
microcontroller needs.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._jit import inline_kernel, kernel, recompile_with
from . import dfop as _dfop_module
from . import linalg as _linalg_module
from .dfop import (
    CODE_KEEP_PRIOR,
    CODE_PERIOD,
    CODE_SKIP,
    HYPER_MU,
    HYPER_P0,
    INVALID,
    LEARNT_COUNTS,
    LEARNT_FORGOTTEN,
    OK,
    _packed_views,
    gain_and_downdate,
)
from .guards import _set_prior
from .linalg import scratch_stride
from .prior import pull_and_downdate

_ZERO = np.float32(0.0)
_ONE = np.float32(1.0)
_TWO = np.float32(2.0)
#: float32's largest finite value.
_MAX = np.float32(3.4028234663852886e38)
#: Largest abs(y) the float32 arithmetic accepts (the float64 kernels' 1e100 is
#: not a float32): with weights of a fresh model below ~sqrt(p0) |y| (p0 <= 1e8),
#: 1e30 leaves them four decades below float32's overflow for inputs up to 1e3.
TARGET_LIMIT32 = np.float32(1e30)
#: A diagonal entry of the updated P may come this far (times P_ii) below zero
#: and still count as rounding: 8 d eps (``guards._diagonal_slack``), float32 eps.
_EPS32 = np.float32(2.0**-23)
_EIGHT = np.float32(8.0)
#: P's condition number float32 holds (``guards._FLOAT32_CONDITION``).
_CONDITION = np.float32(1e7)
#: keep_prior=False's cap, MAX_VARIANCE (``prior.py``) in float32.
_MAX_VARIANCE = np.float32(10.0)
#: ``prior._WIDTH_SLACK`` for a float32 sum of mu's: a sum of up to 2^13 float32
#: additions is within ~2^13 2^-24 = 5e-4 relative; between two widths the
#: step is 1 / width >= 1 / d.
_WIDTH_SLACK32 = np.float32(1e-3)


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose bits are the int32 ``bits`` (a bit cast, no arithmetic)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@inline_kernel
def _narrow(A, i):
    """``A[i]`` (float64) as a float32, from its bits by integer operations only:
    exact for a float32 value that is normal or zero (the class stores mu and p0 so);
    an export reads the model's constants with no soft-double helper."""
    bits = A.view(np.int64)[i]
    sign = (bits >> 32) & 0x80000000
    e = (bits >> 52) & 0x7FF
    if e == 0:
        return _float32_from_bits(np.int32(sign))
    m = (bits >> 29) & 0x7FFFFF
    return _float32_from_bits(np.int32(sign | ((e - 896) << 23) | m))


@inline_kernel
def _forgotten(L):
    """The forgotten mass: a float32 in the first half of L's float64 slot."""
    return L[LEARNT_FORGOTTEN : LEARNT_FORGOTTEN + 1].view(np.float32)


@inline_kernel
def _counters(L):
    return L[LEARNT_COUNTS : LEARNT_COUNTS + 4].view(np.int64)


@inline_kernel
def _views32(work, d):
    """Px, a careful step's low parts of P x, and the refresh vector v: float32
    views of work."""
    s = scratch_stride(d)
    w32 = work.view(np.float32)
    return w32[:d], w32[s : s + d], w32[2 * s : 2 * s + d]


@inline_kernel
def _symv32(P, x, out):
    """out = P x (row axpys, float32); returns min_i P_ii."""
    d = x.shape[0]
    for j in range(d):
        out[j] = _ZERO
    pmin = _MAX
    for i in range(d):
        xi = x[i]
        Pi = P[i]
        for j in range(d):
            out[j] += xi * Pi[j]
        pii = Pi[i]
        pmin = pii if pii < pmin else pmin
    return pmin


@inline_kernel
def _reads32(x, w, Px):
    """w^T x, x^T P x, max |Px_j| and max |w_j|, in float32 and one pass."""
    yhat = _ZERO
    xPx = _ZERO
    big = _ZERO
    wbig = _ZERO
    for j in range(x.shape[0]):
        yhat += w[j] * x[j]
        xPx += x[j] * Px[j]
        a = abs(Px[j])
        big = a if a > big else big
        b = abs(w[j])
        wbig = b if b > wbig else wbig
    return yhat, xPx, big, wbig


@inline_kernel
def _fits32(big, wbig, s, g):
    """Whether the update stays finite in float32: the largest term of P's update
    is (big sqrt(c))^2, of w's wbig + big |g| (evaluated as the update does)."""
    u = big * s
    term = u * u
    wnew = wbig + big * abs(g)
    return np.isfinite(g) and np.isfinite(term) and np.isfinite(wnew) and wnew < _MAX


@inline_kernel
def _diagonal_ok32(P, Px, s):
    """0: every P_ii - (Px_i s)^2 >= -8 d eps P_ii (apply); 1: some is below
    (refuse: the sample would make P indefinite); 2: some P_ii is not
    positive (the state's fault: the update is made from the prior)."""
    d = Px.shape[0]
    slack = _EIGHT * np.float32(np.int32(d)) * _EPS32
    refuse = 0
    fault = 0
    for i in range(d):
        pii = P[i, i]
        ui = Px[i] * s
        refuse |= pii - ui * ui < -slack * pii
        fault |= not pii > _ZERO
    if fault:
        return 2
    return 1 if refuse else 0


# ------------------------------------------------ the careful step, double-float32
#: A step with x^T P x > CAREFUL lambda is careful (as ``dfop.CAREFUL``): its update
#: cancels P in the direction of x by the factor 1 + x^T P x / lambda, which
#: amplifies float32's rounding of P x, of c and of (Px_i Px_j) c as much. It is
#: computed in double-float32 arithmetic instead (each value an unevaluated sum
#: hi + lo of two float32, about 48 bits: Dekker's and Knuth's error-free
#: products and sums, float32 operations only), rounded once into P.
CAREFUL32 = np.float32(16.0)
#: Veltkamp's splitter for float32 (2^12 + 1), and the magnitude below which
#: splitting cannot overflow (|a| 4097 < float32's largest).
_SPLITTER = np.float32(4097.0)
_SPLIT_BELOW = np.float32(1e30)


@inline_kernel
def _split(a):
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


@inline_kernel
def _two_product(a, b):
    """p + e = a b exactly (Dekker; no fused multiply-add)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = al * bl - (((p - ah * bh) - al * bh) - ah * bl)
    return p, e


@inline_kernel
def _two_sum(a, b):
    """s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@inline_kernel
def _fast_two_sum(a, b):
    s = a + b
    return s, b - (s - a)


@inline_kernel
def _df_add(ah, al, bh, bl):
    s, e = _two_sum(ah, bh)
    return _fast_two_sum(s, e + (al + bl))


@inline_kernel
def _df_mul(ah, al, bh, bl):
    p, e = _two_product(ah, bh)
    return _fast_two_sum(p, e + (ah * bl + al * bh))


@inline_kernel
def _df_recip(dh, dl):
    """1 / (dh + dl): q + q (1 - d q), the residual from an exact product."""
    q = _ONE / dh
    ph, pl = _df_mul(dh, dl, q, _ZERO)
    return _fast_two_sum(q, q * ((_ONE - ph) - pl))


@inline_kernel
def _fits_split(x):
    """Whether every |x_j| is below ``_SPLIT_BELOW`` (the careful step splits x)."""
    ok = True
    for j in range(x.shape[0]):
        ok = ok and abs(x[j]) < _SPLIT_BELOW
    return ok


@kernel
def _careful32(x, y, yhat, lam, w, P, Ph, Pl, wbig):
    """The careful step in double-float32 (``CAREFUL32``). Returns OK (applied),
    INVALID (refused, nothing written) or -1: the state is at fault (a
    denominator or diagonal entry of P not positive), the caller steps from the
    prior. ``Ph``, ``Pl``: scratch (P x's two parts)."""
    d = x.shape[0]
    for j in range(d):
        Ph[j] = _ZERO
        Pl[j] = _ZERO
    for i in range(d):
        xi = x[i]
        Pi = P[i]
        for j in range(d):
            p, e = _two_product(xi, Pi[j])
            Ph[j], Pl[j] = _df_add(Ph[j], Pl[j], p, e)
    sh = _ZERO
    sl = _ZERO
    big = _ZERO
    for j in range(d):
        ph, pl = _df_mul(Ph[j], Pl[j], x[j], _ZERO)
        sh, sl = _df_add(sh, sl, ph, pl)
        a = abs(Ph[j])
        big = a if a > big else big
    dh, dl = _df_add(sh, sl, lam, _ZERO)
    if not np.isfinite(dh):
        return INVALID
    if not dh > _ZERO:
        return -1
    ch, cl = _df_recip(dh, dl)
    s = math.sqrt(ch)
    g = (y - yhat) * ch
    if not _fits32(big, wbig, s, g):
        return INVALID
    slack = _EIGHT * np.float32(np.int32(d)) * _EPS32
    refuse = False
    for i in range(d):
        pii = P[i, i]
        if not pii > _ZERO:
            return -1
        qh, ql = _df_mul(Ph[i], Pl[i], Ph[i], Pl[i])
        th, tl = _df_mul(qh, ql, ch, cl)
        rh, _ = _df_add(pii, _ZERO, -th, -tl)
        refuse = refuse or rh < -slack * pii
    if refuse:
        return INVALID
    invlam = _ONE / lam
    for j in range(d):
        w[j] += Ph[j] * g
    for i in range(d):  # the upper triangle, mirrored: P stays exactly symmetric
        for j in range(i, d):
            qh, ql = _df_mul(Ph[i], Pl[i], Ph[j], Pl[j])
            th, tl = _df_mul(qh, ql, ch, cl)
            rh, _ = _df_add(P[i, j], _ZERO, -th, -tl)
            e = rh * invlam
            P[i, j] = e
            P[j, i] = e
    return OK


@kernel
def _step32(x, y, lam, w, P, Px, Pl, p0, keep_prior):
    """One G-DFOP step in float32 (careful: ``_careful32``); returns ``(yhat,
    status)``, the state untouched when the sample is refused (INVALID). ``Px``
    and ``Pl`` are scratch."""
    d = x.shape[0]
    pmin = _symv32(P, x, Px)
    yhat, xPx, big, wbig = _reads32(x, w, Px)
    if not (np.isfinite(yhat) and abs(y) <= TARGET_LIMIT32):
        return yhat, INVALID
    den = lam + xPx
    if not np.isfinite(den):
        return yhat, INVALID
    prior = not den > _ZERO  # P lost definiteness in rounding: from the prior
    if not prior and xPx > CAREFUL32 * lam and big < _SPLIT_BELOW and _fits_split(x):
        status = _careful32(x, y, yhat, lam, w, P, Px, Pl, wbig)
        if status == OK:
            if not keep_prior:
                _reset_unexcited32(w, P, _MAX_VARIANCE * p0, p0, Px)
            return yhat, OK
        if status == INVALID:
            return yhat, INVALID
        prior = True
    if not prior:
        c = _ONE / den
        s = math.sqrt(c)
        g = (y - yhat) * c
        if not _fits32(big, wbig, s, g):
            return yhat, INVALID
        u = big * s
        if not (_ZERO < pmin and u * u <= pmin):  # not proven by min P_ii
            verdict = _diagonal_ok32(P, Px, s)
            if verdict == 1:
                return yhat, INVALID
            prior = verdict == 2
    if prior:
        nn = _ZERO
        for j in range(d):
            nn += x[j] * x[j]
        if not p0 * nn <= _CONDITION:
            return yhat, INVALID
        xPx = _ZERO
        big = _ZERO
        for j in range(d):
            Px[j] = p0 * x[j]
            xPx += x[j] * Px[j]
            a = abs(Px[j])
            big = a if a > big else big
        den = lam + xPx
        if not (np.isfinite(den) and den > _ZERO):
            return yhat, INVALID
        c = _ONE / den
        s = math.sqrt(c)
        g = (y - yhat) * c
        if not _fits32(big, wbig, s, g):
            return yhat, INVALID
        _set_prior(P, p0)
    gain_and_downdate(w, P, Px, g, s, _ONE / lam)
    if not keep_prior:
        _reset_unexcited32(w, P, _MAX_VARIANCE * p0, p0, Px)
    return yhat, OK


@inline_kernel
def _pull_fits32(w, row, b):
    """Whether w - row g stays finite in float32 for |g| = b (``prior._bounded_pull``)."""
    fits = True
    for j in range(w.shape[0]):
        t = abs(w[j]) + abs(row[j]) * b
        fits = fits and t < _MAX
    return fits


@kernel
def _refresh32(k, rho, w, P, v):
    """The pseudo-sample (sqrt(rho) e_k, 0), undiscounted (``prior._refresh_prior``):
    den = 1 + rho P_kk, w <- w - (rho w_k / den) P[:, k] (0 when that would not be
    finite), P <- P - v v^T with v = P[:, k] sqrt(rho / den); ``v`` scratch."""
    Pk = P[k]
    den = _ONE + rho * Pk[k]
    if not den > _ZERO:
        return
    g = rho * w[k] / den
    if not _pull_fits32(w, Pk, abs(g)):
        g = _ZERO
    pull_and_downdate(w, P, Pk, v, g, math.sqrt(rho / den))


@kernel
def _reset_unexcited32(w, P, cap, p0, v):
    """keep_prior=False: a coordinate whose P_ii passed ``cap`` returns to the prior
    (``prior._reset_unexcited`` in float32: the pseudo-sample with rho = 1/p0 - 1/P_ii,
    or where it would not keep w finite and the diagonal positive, row and column
    k times sqrt(p0 / P_ii))."""
    d = P.shape[0]
    for i in range(d):
        pii = P[i, i]
        if pii > cap:
            rho = _ONE / p0 - _ONE / pii
            Pk = P[i]
            den = _ONE + rho * Pk[i]
            g = abs(rho * w[i] / den)
            s = math.sqrt(rho / den)
            fits = True
            for j in range(d):
                v[j] = Pk[j]
                v[j] *= s
                fits = fits and abs(w[j]) + abs(Pk[j]) * g < _MAX
                fits = fits and P[j, j] - v[j] * v[j] > _ZERO
            if fits:
                _refresh32(i, rho, w, P, v)
            else:
                r = math.sqrt(p0 / pii)
                for j in range(d):
                    P[i, j] *= r
                for j in range(d):
                    P[j, i] *= r


@inline_kernel
def _diagonal_positive32(P):
    ok = True
    for i in range(P.shape[0]):
        ok = ok and P[i, i] > _ZERO
    return ok


@inline_kernel
def _refresh_width32(d, forgotten):
    """ceil(d forgotten / 2) between 1 and d (``prior._refresh_width``, float32).

    The ceiling of z >= 0 as int32 conversions (exact: z <= d), which a
    single-precision FPU does in one instruction each, where ceilf and a
    float-to-int64 conversion are library calls."""
    z = np.float32(np.int32(d)) * forgotten / _TWO * (_ONE - _WIDTH_SLACK32)
    if not z < np.float32(np.int32(d)):  # also NaN
        return d
    width = np.int32(z)
    if np.float32(width) < z:
        width += 1
    return max(1, np.int64(width))


@kernel
def _after_step32(status, mu, w, P, L, v, p0, codes):
    """Count the step, then the prior refresh when due (learn_one's and the block's)."""
    d = w.shape[0]
    counts = _counters(L)
    forgotten = _forgotten(L)
    if status == OK:
        counts[0] += 1
        if codes[CODE_KEEP_PRIOR] != 0:
            forgotten[0] += mu
            counts[2] += 1
            if counts[2] >= codes[CODE_PERIOD] and forgotten[0] > _ZERO:
                k = counts[3]
                f = forgotten[0]
                width = _refresh_width32(d, f)
                rho = np.float32(np.int32(d)) * f / p0 / np.float32(np.int32(width))
                for i in range(width):
                    # (k + i) mod d with k < d and i < width <= d: no int64 division
                    # (a library call on a 32-bit core)
                    j = k + i
                    _refresh32(j - d if j >= d else j, rho, w, P, v)
                if not _diagonal_positive32(P):
                    _set_prior(P, p0)
                counts[2] = 0
                j = k + width
                counts[3] = j - d if j >= d else j
                forgotten[0] = _ZERO
    elif codes[CODE_SKIP] != 0:
        counts[1] += 1


@kernel
def dfop32_learn_one(x, y, PW, L, work, hyper, codes):
    """learn_one in float32: x (d,) and y float32; returns ``(yhat, status)``."""
    d = x.shape[0]
    w = PW[d]
    P = PW[:d]
    Px, Pl, v = _views32(work, d)
    mu = _narrow(hyper, HYPER_MU)
    p0 = _narrow(hyper, HYPER_P0)
    yhat, status = _step32(x, y, _ONE - mu, w, P, Px, Pl, p0, codes[CODE_KEEP_PRIOR] != 0)
    _after_step32(status, mu, w, P, L, v, p0, codes)
    return yhat, status


@kernel
def dfop32_learn_many(X, Y, MU, out, PW, L, work, hyper, codes):
    """learn_one over the rows of X (float32 X, Y, MU, out); out[t] = prediction of
    row t before learning it. MU: empty (the model's own mu), one value, or one per
    row. Returns -1, or the first invalid row when not skipping (it and the rows
    after it are not learnt)."""
    n = X.shape[0]
    d = X.shape[1]
    w = PW[d]
    P = PW[:d]
    Px, Pl, v = _views32(work, d)
    own = _narrow(hyper, HYPER_MU)
    p0 = _narrow(hyper, HYPER_P0)
    keep_prior = codes[CODE_KEEP_PRIOR] != 0
    skip = codes[CODE_SKIP] != 0
    m = MU.shape[0]
    for t in range(n):
        mu = own if m == 0 else MU[t if m > 1 else 0]
        yhat, status = _step32(X[t], Y[t], _ONE - mu, w, P, Px, Pl, p0, keep_prior)
        out[t] = yhat
        if status != OK and not skip:
            return t
        _after_step32(status, mu, w, P, L, v, p0, codes)
    return -1


@kernel
def dfop32_learn_one_packed(x, y, PW, B):
    """``dfop32_learn_one`` on learn_one's two blocks (``dfop._packed_views``), y a
    float64 rounded to float32 here; returns the prediction as a float64, NaN when
    refused and not skipped."""
    work, L, hyper, codes = _packed_views(B, PW.shape[1])
    yhat, status = dfop32_learn_one(x, np.float32(y), PW, L, work, hyper, codes)
    if status != OK and codes[CODE_SKIP] == 0:
        return np.nan
    return np.float64(yhat)


@kernel
def dfop32_predict_one(x, w):
    """w^T x in float32."""
    acc = _ZERO
    for j in range(x.shape[0]):
        acc += w[j] * x[j]
    return acc


@kernel
def dfop32_predict_many(X, w, out):
    for t in range(X.shape[0]):
        out[t] = dfop32_predict_one(X[t], w)


# The blocks' layout and scratch_stride come from dfop.py and linalg.py (see _jit).
recompile_with(globals(), _dfop_module, _linalg_module)
