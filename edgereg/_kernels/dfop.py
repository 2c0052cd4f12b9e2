"""DFOP's kernels: the G-DFOP step, its guards, the prior refresh, the block kernel.

docs/algorithms/dfop.md. Per sample, with lambda = 1 - mu::

    yhat = w^T x,  Px = P x,  c = 1 / (lambda + x^T Px)
    w   <- w + c Px (y - yhat)
    P   <- (P - c Px Px^T) / lambda

the rank-one term written so that P stays exactly symmetric, plus the prior
refresh (one coordinate k gets the pseudo-sample (sqrt(rho) e_k, 0)). The
block's pass over P (downdate, forgetting and refresh in one sweep) is in
``dfop_pass``. The numerical argument (symmetry, the refresh's bound on P,
the guards, the keep_prior=False reset) is docs/design/dfop.md. Every kernel
takes plain arrays, never allocates, and reports a bad sample with a status
before writing anything.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import dfop_pass as _pass_module
from . import guards as _guards_module
from . import interval_core as _interval_core_module
from . import linalg as _linalg_module
from . import prior as _prior_module
from .dfop_pass import (
    _TWO_ROWS_FROM,
    _downdate_pass,
    _downdate_pass_2,
    _downdate_refresh_pass,
    _downdate_refresh_pass_2,
    _downdate_refresh_pass_c,
    _entry,
)
from .dtype import like, scratch_of
from .guards import (
    _APPLY,
    _CHECK_DIAGONAL,
    _admit,
    _diagonal_verdict,
    _proven,
    _rare_den,
    _set_prior,
)
from .interval_core import (
    IHYPER_COVERAGE,
    IHYPER_ETA,
    INTERVAL_COVERED,
    INTERVAL_Q,
    INTERVAL_SCORED,
    INTERVAL_SUM,
    INTERVAL_WEIGHT,
    _half,
    _noise_lam,
    _scale,
    _track,
    ib_views,
    leverage_factor,
)
from .linalg import scratch_stride
from .linalg import symv as _symv
from .prior import (
    MAX_VARIANCE,
    _bounded_pull,
    _diagonal_positive,
    _max_variance,
    _refresh_coordinates,
    _refresh_width,
    _reset_unexcited,
)

OK = 0
INVALID = 1
_STEP_CAREFULLY = 2  # _step_from's answer to its caller only, never a model's status
_INLINE_D = 24  # up to this d, _dfop_learn_many runs the common pass inline (measured)
# From this d on the rank-one term is u u^T with u = Px sqrt(c); below it,
# (Px_i Px_j) c (no sqrt, one more multiply per entry). Both paths of every
# kernel choose by d alike, so learn_one and learn_many stay bit-identical.
_GAIN_BY_SQRT_FROM = _INLINE_D + 1

#: A float32 model computes in float32 from this d: P x, u and the
#: pass over P, the part of a step that grows as d^2 (float32 does twice the
#: lanes). Below it, only while its forgetting mu <= 1 / d, that is while its
#: prior refresh period floor(2 / (d mu)) (codes[CODE_PERIOD], set with mu) is at
#: least FLOAT32_PERIOD_FROM: the careful steps below are then rare
#: (x^T P x / lambda ~ mu d / lambda on average), while at a higher
#: forgetting most steps of a small model are careful and cost more than
#: float64 arithmetic rounded into float32 storage, which such a model
#: keeps (measured: docs/design/float32.md).
FLOAT32_FROM = _GAIN_BY_SQRT_FROM
FLOAT32_PERIOD_FROM = 2

#: A float32 step (in float32 arithmetic, above) runs in float32 unless
#: x^T P x > CAREFUL lambda: then the update cancels most of P in the
#: direction of x (by the factor 1 + x^T P x / lambda), which would amplify
#: float32's rounding of Px and u as much; that step recomputes Px in float64
#: and updates P in float64 arithmetic, rounded into float32 (docs/design/
#: float32.md: every high-forgetting stream ran up to 16384, none beyond it).
CAREFUL = 16.0


@inline_kernel
def _float32_arithmetic(d, P, codes):
    """Whether a model's steps compute in float32 (its scratch seen as float32).

    By d and the model's own forgetting through its refresh period, a
    constant of the model: per-step forgetting factors (a block's, G-DFOP)
    do not change it, so learn_one and learn_many decide alike."""
    return P.itemsize == 4 and (d >= FLOAT32_FROM or codes[CODE_PERIOD] >= FLOAT32_PERIOD_FROM)


@inline_kernel
def _careful(xPx, lam, Px):
    """Whether a step whose Px is float32 is a careful step (x^T P x = ``xPx``)."""
    return Px.itemsize == 4 and xPx > CAREFUL * lam


@inline_kernel
def _reads(x, w, Px):
    """A step's O(d) reads of x, w and Px = P x, in float64 and in one pass:
    the prediction w^T x, x^T P x, and the guards' scales max |Px_j| and
    max |w_j| (:func:`guards._admit`). learn_one's step and the block's."""
    yhat = 0.0
    xPx = 0.0
    big = 0.0
    wbig = 0.0
    for j in range(x.shape[0]):
        wj = np.float64(w[j])
        yhat += wj * x[j]
        xPx += np.float64(x[j]) * Px[j]
        a = abs(Px[j])
        big = a if a > big else big
        b = abs(wj)
        wbig = b if b > wbig else wbig
    return yhat, xPx, big, wbig


# ------------------------------------------------------------- the blocks
# Every DFOP kernel (and Fleet's, SparseDFOP's, which run these) takes
#   PW     (d + 1, d) of the dtype: P in rows 0..d-1, w in row d   (learnt)
#   L      float64 (N_LEARNT,): LEARNT_FORGOTTEN, then 4 int64 counters stored
#          as their bits at LEARNT_COUNTS.. (learnt, skipped, steps since refresh,
#          next refresh coordinate)                                 (learnt)
#   work   float64 (3s,): P x, P_new x_next, the refresh vector v,   (scratch)
#          each starting every s = scratch_stride(d) floats (_scratch_views)
#   hyper  float64 (N_HYPER,) and codes int64 (N_CODES,), named below
# (docs/design/calling_convention.md). A model built on DFOP may
# append its own entries to hyper and codes after these.
HYPER_MU, HYPER_P0 = 0, 1
N_HYPER = 2
CODE_PERIOD, CODE_KEEP_PRIOR, CODE_SKIP = 0, 1, 2
N_CODES = 3
LEARNT_FORGOTTEN, LEARNT_COUNTS = 0, 1
N_LEARNT = 5


@inline_kernel
def _scratch_views(work, d):
    """Px, the pass's accumulator P_new x_next and the refresh vector v: the
    three d-vectors of the scratch ``work``, each at a multiple of
    ``scratch_stride(d)`` entries (of work's dtype: a float32 view of the
    float64 block keeps its three vectors in the block's first half, clear
    of the float64 Px of a careful step, the block's third vector)."""
    s = scratch_stride(d)
    return work[:d], work[s : s + d], work[2 * s : 2 * s + d]


@inline_kernel
def scratch_size(d):
    """Length of DFOP's float64 scratch: the three vectors of ``_scratch_views``."""
    return 3 * scratch_stride(d)


@inline_kernel
def packed_size(d):
    """Length of learn_one's float64 block B for dimension d (``_packed_views``;
    from Python: ``_jit.python_function(packed_size)``)."""
    return scratch_size(d) + N_LEARNT + N_HYPER + N_CODES


@inline_kernel
def _packed_views(B, d):
    """work, L, hyper, codes: views of learn_one's one float64 block B (codes
    as int64 bits), one block so that a call from Python unboxes 4 arrays
    (each costs ~50 ns, measured). The class makes its views with this too."""
    a = scratch_size(d)
    b = a + N_LEARNT
    c = b + N_HYPER
    return B[:a], B[a:b], B[b:c], B[c : c + N_CODES].view(np.int64)


# --------------------------------------------------------------------- kernels
@kernel
def _dfop_step(x, y, lam, w, P, Px, max_variance, p0, Px64):
    """One G-DFOP step on sample (x, y) with discount lam = 1 - mu.

    Px = P x in the scratch's dtype (and P's smallest diagonal entry, read
    in the same pass), then :func:`_step_from`; a float32
    step that is careful (:func:`_careful`) recomputes Px in float64 into
    ``Px64`` (scratch) and steps from that. Returns ``(yhat, status)``.
    """
    pmin = _symv(P, x, Px)
    yhat, status = _step_from(x, y, lam, w, P, Px, max_variance, p0, pmin)
    if status == _STEP_CAREFULLY:
        _symv(P, x, Px64)
        return _step_from(x, y, lam, w, P, Px64, max_variance, p0, pmin)
    return yhat, status


@kernel
def _step_from(x, y, lam, w, P, Px, max_variance, p0, pmin):
    """The step from Px = P x (scratch afterwards), in Px's dtype.

    Returns ``(yhat, status)``: the prequential prediction w^T x made before
    the update, and OK, or INVALID when x, y or the update is not finite or
    would make P indefinite (the state is then untouched, :func:`_admit`),
    or ``_STEP_CAREFULLY`` (state untouched) when Px is float32 and the step
    is careful: the caller steps again from a float64 Px.
    ``Px`` is scratch. ``pmin``, min_i P_ii when known (else -1), proves the
    diagonal guard without its pass (:func:`guards._proven`), as in the
    block. A coordinate whose P_ii passes ``max_variance`` is
    reset to the prior (:func:`_reset_unexcited`; ``np.inf``: off, DFOP
    bounds P with ``_refresh_prior`` instead). A P that lost positive
    definiteness in rounding is reset to the prior p0 I (:func:`_rare_den`).
    Shared by the models built on DFOP.
    """
    yhat, xPx, big, wbig = _reads(x, w, Px)
    return _step_read(x, y, lam, w, P, Px, max_variance, p0, pmin, yhat, xPx, big, wbig)


@inline_kernel
def _step_read(x, y, lam, w, P, Px, max_variance, p0, pmin, yhat, xPx, big, wbig):
    """:func:`_step_from` after its reads of x, w and Px (``_reads``'s four values):
    for a caller that needs them before the step (the interval's learn_one)."""
    d = x.shape[0]
    if _careful(xPx, lam, Px):
        return yhat, _STEP_CAREFULLY
    small = d < _GAIN_BY_SQRT_FROM
    den = lam + xPx
    c = 1.0 / den
    g = (y - yhat) * c
    verdict = _admit(y, yhat, den, c, g, big, wbig, small, w.itemsize == 4)
    if verdict == _CHECK_DIAGONAL:
        verdict = _APPLY if _proven(pmin, big, c) else _diagonal_verdict(P, Px, c)
    if verdict != _APPLY:
        den = _rare_den(x, y, yhat, lam, wbig, P, Px, p0, small, verdict)
        if not den > 0.0:  # NaN: invalid
            return yhat, INVALID
        c = 1.0 / den
        g = (y - yhat) * c
    invlam = like(1.0 / lam, Px)  # the pass in Px's dtype (float32: twice the lanes)
    if small:
        for j in range(d):
            w[j] += Px[j] * g
        cx = like(c, Px)
        for i in range(d):
            ui = Px[i]
            Pi = P[i]
            for j in range(d):
                Pi[j] = (Pi[j] - (ui * Px[j]) * cx) * invlam
    else:
        s = np.float64(math.sqrt(c))  # a float64 factor also without the JIT (NEP 50)
        gain_and_downdate(w, P, Px, g, s, invlam)
    # keep_prior=False's cap: _reset_unexcited scans the diagonal itself.
    # Gathering max P_ii in the row loop instead (as the block's inline pass
    # does) made this step take 25-35% longer at d = 10 with the cap off, 13-21%
    # with it on (measured, learn_one's kernel from a compiled loop).
    if max_variance < np.inf:
        _reset_unexcited(w, P, max_variance, p0, Px)
    return yhat, OK


@inline_kernel
def gain_and_downdate(w, P, Px, g, s, invlam):
    """w <- w + Px g, u = Px s (in Px), P <- (P - u u^T) invlam: a step's update
    with the gain by sqrt(c) (s = sqrt(c)), in the arithmetic of Px, g and s
    (this module's mixed float32 and float64; ``_kernels/dfop32.py``'s float32)."""
    d = w.shape[0]
    for j in range(d):
        w[j] += Px[j] * g
        Px[j] *= s
    for i in range(d):
        ui = Px[i]
        Pi = P[i]
        for j in range(d):
            Pi[j] = (Pi[j] - ui * Px[j]) * invlam


@inline_kernel
def _counters(L):
    """The int64 counters of L (a view of their bits)."""
    return L[LEARNT_COUNTS : LEARNT_COUNTS + 4].view(np.int64)


@kernel
def _dfop_learn_one(x, y, PW, L, work, hyper, codes):
    """learn_one: one step, then the prior refresh when due (same arithmetic as the block).

    Returns ``(yhat, status)``; the blocks as above, mu = ``hyper[HYPER_MU]``.
    """
    d = x.shape[0]
    w = PW[d]
    P = PW[:d]
    p0 = hyper[HYPER_P0]
    mu = hyper[HYPER_MU]
    cap = _max_variance(p0, codes[CODE_KEEP_PRIOR] != 0)
    Px64 = _scratch_views(work, d)[2]  # float32's careful steps (beyond its float32 views)
    if _float32_arithmetic(d, P, codes):
        Px, _, v = _scratch_views(scratch_of(work, P), d)  # in float32
        yhat, status = _dfop_step(x, y, 1.0 - mu, w, P, Px, cap, p0, Px64)
        _after_step(status, mu, w, P, L, v, p0, codes, Px)
    else:
        Px, _, v = _scratch_views(work, d)
        yhat, status = _dfop_step(x, y, 1.0 - mu, w, P, Px, cap, p0, Px64)
        _after_step(status, mu, w, P, L, v, p0, codes, Px)
    return yhat, status


@inline_kernel
def _after_step(status, mu, w, P, L, v, p0, codes, a):
    """Count the step, then the prior refresh when due (``v``, ``a`` scratch
    of one dtype, :func:`prior._refresh_coordinates`): learn_one's, and the
    block's careful steps'."""
    d = w.shape[0]
    counts = _counters(L)
    if status == OK:
        counts[0] += 1
        if codes[CODE_KEEP_PRIOR] != 0:
            L[LEARNT_FORGOTTEN] += mu
            counts[2] += 1
            if counts[2] >= codes[CODE_PERIOD] and L[LEARNT_FORGOTTEN] > 0.0:
                k = counts[3]
                forgotten = L[LEARNT_FORGOTTEN]
                width = _refresh_width(d, forgotten)
                rho = d * forgotten / p0 / width
                _refresh_coordinates(k, width, rho, w, P, v, a)
                if not _diagonal_positive(P):
                    _set_prior(P, p0)  # the refresh met a P rounding made indefinite
                counts[2] = 0
                counts[3] = (k + width) % d
                L[LEARNT_FORGOTTEN] = 0.0
    elif codes[CODE_SKIP] != 0:
        counts[1] += 1


@kernel
def _dfop_learn_one_packed(x, y, PW, B):
    """``_dfop_learn_one`` on learn_one's two blocks (4 arguments: cheap to call).

    ``B`` is the float64 block of :func:`_packed_views`: work, L, hyper, codes.
    Returns only the prediction (a float is cheaper to return than a tuple):
    NaN when the sample is invalid and not skipped (a valid sample's
    prediction is always finite); with skip the prediction whatever the status.
    """
    work, L, hyper, codes = _packed_views(B, PW.shape[1])
    yhat, status = _dfop_learn_one(x, y, PW, L, work, hyper, codes)
    if status != OK and codes[CODE_SKIP] == 0:
        return np.nan
    return yhat


@kernel
def _dfop_learn_many(X, Y, MU, out, PW, L, work, hyper, codes):
    """Learn a block; out[t] = prequential prediction of row t (:func:`_learn_many_in`)."""
    d = X.shape[1]
    P = PW[:d]
    Px64 = _scratch_views(work, d)[2]  # float32's careful steps (beyond its float32 views)
    # No interval: empty bands and bookkeeping, views (no allocation; no reshape,
    # whose runtime helper a C export does not link).
    none = work[:0]
    bands = PW[:0]
    if _float32_arithmetic(d, P, codes):
        return _learn_many_in(X, Y, MU, out, bands, PW, L, scratch_of(work, P), Px64, hyper,
                              codes, none, False)
    return _learn_many_in(X, Y, MU, out, bands, PW, L, work, Px64, hyper, codes, none, False)


@kernel
def _dfop_learn_many_interval(X, Y, MU, out, bands, PW, L, work, hyper, codes, IB):
    """``_dfop_learn_many`` with the prediction intervals (``interval_core``) in the
    same row loop: bands[t] = (lower, prediction, upper), the interval made before
    learning row t (NaN bounds for a row refused), and IB's bookkeeping learnt from
    each row learnt, with the arithmetic of learn_one's (``interval.dfop_learn_one_interval``).
    """
    return _learn_many_interval_in(X, Y, MU, out, bands, PW, L, work, hyper, codes, IB, False)


@kernel
def _dfop_learn_many_impute(X, Y, MU, out, bands, PW, L, work, hyper, codes, IB):
    """``_dfop_learn_many_interval`` that stops at the first row with a NaN in x or in
    its target, before writing anything for it, and returns its index (as it returns
    an invalid row's): ``missing="impute"``, whose caller completes that row
    (``impute.dfop_impute_learn_one``) and goes on after it. The check costs a
    comparison per row: a NaN in x makes the prediction w^T x NaN."""
    return _learn_many_interval_in(X, Y, MU, out, bands, PW, L, work, hyper, codes, IB, True)


@kernel
def _learn_many_interval_in(X, Y, MU, out, bands, PW, L, work, hyper, codes, IB, impute):
    d = X.shape[1]
    P = PW[:d]
    Px64 = _scratch_views(work, d)[2]
    if _float32_arithmetic(d, P, codes):
        return _learn_many_in(X, Y, MU, out, bands, PW, L, scratch_of(work, P), Px64, hyper,
                              codes, IB, impute)
    return _learn_many_in(X, Y, MU, out, bands, PW, L, work, Px64, hyper, codes, IB, impute)


@inline_kernel
def _has_nan(x, y):
    """Whether row (x, y) holds a NaN (``missing="impute"``'s rows)."""
    if y != y:
        return True
    for j in range(x.shape[0]):
        if x[j] != x[j]:
            return True
    return False


@inline_kernel
def _store_interval(I, N, S, q, scored, covered):
    """The block's bookkeeping, kept in registers by its row loop, back into I."""
    I[INTERVAL_WEIGHT] = N
    I[INTERVAL_SUM] = S
    I[INTERVAL_Q] = q
    I[INTERVAL_SCORED] = scored
    I[INTERVAL_COVERED] = covered


@kernel
def _learn_many_in(X, Y, MU, out, bands, PW, L, work, Px64, hyper, codes, IB, impute):
    """Learn a block; out[t] = prequential prediction of row t.

    ``MU`` is the forgetting factor of each step (G-DFOP), or of all steps
    when it holds one value (``hyper[HYPER_MU:HYPER_MU + 1]``, the model's own). The
    blocks are those of the module's header, ``work`` the scratch in the
    dtype of the arithmetic and ``Px64`` float64 scratch. With intervals,
    ``bands`` (n, 3) and IB, the interval's block (``interval_core.ib_views``):
    bands[t] = the interval made before learning row t from the x^T P x the step
    forms (NaN bounds when the row is refused), and IB's bookkeeping learnt from
    each row learnt, in registers during the loop (``interval_core._track``,
    learn_one's arithmetic); without, both are empty. ``impute``: stop at a row
    with a NaN (``_dfop_learn_many_impute``). The loop is fused: while row i
    of the new P is written, it is also accumulated into P_new x_{t+1} (so
    P is read once per step), and on a refresh step the prior
    pseudo-sample's rank-one term is applied in the same pass. Bit for bit
    the same arithmetic as ``_dfop_learn_one``.

    Returns -1 when every row was handled, else the index of the first invalid
    row (only when ``codes[CODE_SKIP]`` is 0); rows before it are learnt, it and the
    rows after it are not.
    """
    n = X.shape[0]
    d = X.shape[1]
    mu = MU
    mu_stride = 1 if MU.shape[0] > 1 else 0
    w = PW[d]
    P = PW[:d]
    forgotten = L[LEARNT_FORGOTTEN : LEARNT_FORGOTTEN + 1]
    counts = _counters(L)
    # The pass accumulates P_new x_next in ``work``, then swaps it with Px.
    Px, work, v = _scratch_views(work, d)
    p0 = hyper[HYPER_P0]
    period = codes[CODE_PERIOD]
    keep_prior = codes[CODE_KEEP_PRIOR] != 0
    skip = codes[CODE_SKIP] != 0
    record = bands.shape[0] > 0
    I, ihyper, _ = ib_views(IB)
    if record:
        iN = I[INTERVAL_WEIGHT]
        iS = I[INTERVAL_SUM]
        iq = I[INTERVAL_Q]
        iscored = I[INTERVAL_SCORED]
        icovered = I[INTERVAL_COVERED]
        eta = ihyper[IHYPER_ETA]
        alpha = 1.0 - ihyper[IHYPER_COVERAGE]
    else:
        iN = iS = iq = iscored = icovered = eta = alpha = 0.0
    v_t = 1.0
    scale = 0.0
    fresh = False  # does Px already hold P @ X[t]?
    # min diag(P) when the last pass gathered it (-1: unknown). Then
    # max|Px_i|^2 c <= pmin proves the diagonal check without its pass.
    pmin = -1.0
    for t in range(n):
        x = X[t]
        y = Y[t]
        mu_t = mu[t * mu_stride]
        lam = 1.0 - mu_t
        if not fresh:
            _symv(P, x, Px)
        yhat, xPx, big, wbig = _reads(x, w, Px)
        if impute and (yhat != yhat or y != y) and _has_nan(x, y):
            if record:
                _store_interval(I, iN, iS, iq, iscored, icovered)
            return t
        out[t] = yhat
        if record:
            # The interval made before learning, from the x^T P x of the step's gain.
            v_t = leverage_factor(xPx, mu_t)
            scale = _scale(v_t, iN, iS)
            half = _half(iq, scale)
            band = bands[t]
            band[0] = yhat - half
            band[1] = yhat
            band[2] = yhat + half
        if _careful(xPx, lam, Px):
            # learn_one's step and refresh, from Px in float64 (no fused pass).
            _symv(P, x, Px64)
            _, status = _step_from(x, y, lam, w, P, Px64, _max_variance(p0, keep_prior), p0, pmin)
            if status != OK and not skip:
                if record:
                    _store_interval(I, iN, iS, iq, iscored, icovered)
                return t
            if record:
                if status != OK:
                    _refused_band(bands[t])
                else:
                    iN, iS, iq, iscored, icovered = _learn_interval(
                        y, yhat, scale, v_t, _noise_lam(mu_t, ihyper), iN, iS, iq, eta, alpha,
                        iscored, icovered)
            _after_step(status, mu_t, w, P, L, v, p0, codes, Px)  # stale from here
            fresh = False
            pmin = -1.0
            continue
        small = d < _GAIN_BY_SQRT_FROM
        den = lam + xPx
        c = 1.0 / den
        g = (y - yhat) * c
        verdict = _admit(y, yhat, den, c, g, big, wbig, small, w.itemsize == 4)
        if verdict == _CHECK_DIAGONAL:
            # Proven only from a positive smallest entry: learn_one's check
            # repairs a P with an entry that is not positive.
            verdict = _APPLY if _proven(pmin, big, c) else _diagonal_verdict(P, Px, c)
        if verdict != _APPLY:  # learn_one's test and repair
            den = _rare_den(x, y, yhat, lam, wbig, P, Px, p0, small, verdict)
            if not den > 0.0:  # NaN: invalid
                fresh = False
                if skip:
                    if record:
                        _refused_band(bands[t])
                    counts[1] += 1
                    continue
                if record:
                    _store_interval(I, iN, iS, iq, iscored, icovered)
                return t
            c = 1.0 / den
            g = (y - yhat) * c
            pmin = -1.0  # P may be the prior now
        if record:  # the row is learnt from here on
            iN, iS, iq, iscored, icovered = _learn_interval(
                y, yhat, scale, v_t, _noise_lam(mu_t, ihyper), iN, iS, iq, eta, alpha,
                iscored, icovered)
        if small:
            for j in range(d):
                w[j] += Px[j] * g
        else:
            s = np.float64(math.sqrt(c))
            for j in range(d):
                w[j] += Px[j] * g
                Px[j] *= s
        invlam = like(1.0 / lam, Px)
        cx = like(c, Px)  # the small form's c (below d = 25), in Px's dtype
        counts[0] += 1
        k = -1
        width = 1
        repaired = False
        # max diag(P) after the pass, gathered by the inline pass only (inf:
        # unknown); keep_prior=False's reset is needed only above its cap.
        pmax = np.inf
        if keep_prior:
            forgotten[0] += mu_t
            counts[2] += 1
            if counts[2] >= period and forgotten[0] > 0.0:
                k = counts[3]
        xn = X[t + 1] if t + 1 < n else x
        if k < 0:
            if d >= _TWO_ROWS_FROM:
                pmin = _downdate_pass_2(P, Px, invlam, xn, work)
            elif d > _INLINE_D:
                pmin = _downdate_pass(P, Px, invlam, xn, work)
            else:
                # The same pass inline: for small d the call costs more than
                # the compiler's better code for the separate function wins.
                # Written out, not dfop_pass._rows: through it float32 ran
                # 3% slower at d = 10, float64 2% (docs/design/dfop.md).
                for j in range(d):
                    work[j] = 0.0
                pmin = np.inf
                pmax = 0.0
                for i in range(d):
                    ui = Px[i]
                    xi = like(xn[i], work)
                    Pi = P[i]
                    for j in range(d):
                        Pi[j] = (Pi[j] - (ui * Px[j]) * cx) * invlam
                        work[j] += xi * Pi[j]
                    pii = np.float64(Pi[i])
                    pmin = pii if pii < pmin else pmin
                    pmax = pii if pii > pmax else pmax
        else:
            # Row k of the updated P, then _refresh_prior's w and v, computed
            # before the pass with exactly its arithmetic.
            width = _refresh_width(d, forgotten[0])
            rho = d * forgotten[0] / p0 / width
            uk = Px[k]
            Pk = P[k]
            for j in range(d):
                # The pass's entry, stored: in float32, the rounded entry
                # that _refresh_prior reads in learn_one (then P[k] is restored).
                old = Pk[j]
                v[j] = _entry(Pk, j, uk, Px[j], 0.0, 0.0, cx, invlam, small, False)
                Pk[j] = old
            rden = 1.0 + rho * v[k]
            rg = _bounded_pull(rho * w[k] / rden, w, v)
            rs = np.float64(math.sqrt(rho / rden))
            for j in range(d):
                w[j] -= v[j] * rg
            for j in range(d):
                v[j] *= rs
            if small:
                pmin = _downdate_refresh_pass_c(P, Px, cx, invlam, v, xn, work)
            elif d >= _TWO_ROWS_FROM:
                pmin = _downdate_refresh_pass_2(P, Px, invlam, v, xn, work)
            else:
                pmin = _downdate_refresh_pass(P, Px, invlam, v, xn, work)
            # learn_one's test after the refresh: every P_ii > 0 (no NaN can
            # arise here: the update passed its guard, the refresh's
            # denominators are checked), read off the pass while width is 1.
            positive = pmin > 0.0
            if width > 1:
                # At high forgetting, the other coordinates of this refresh
                # (after the fused one, in learn_one's order and arithmetic).
                # Px is stale from here (P x_next is formed again).
                pmin = -1.0
                _refresh_coordinates(k + 1, width - 1, rho, w, P, v, Px)
                positive = _diagonal_positive(P)
            if not positive:
                _set_prior(P, p0)  # learn_one's repair after a refresh
                repaired = True
                pmin = -1.0
            counts[2] = 0
            counts[3] = (k + width) % d
            forgotten[0] = 0.0
        Px, work = work, Px
        # P_new x_next is stale after a further refresh or a repair.
        fresh = width == 1 and not repaired
        # The gate by pmax reads what _reset_unexcited would read (the pass's
        # final diagonal) and spares its scan and call: 14% of keep_prior=False's
        # time at d = 10 (measured, docs/design/dfop.md).
        cap = MAX_VARIANCE * p0
        if not keep_prior and pmax > cap and _reset_unexcited(w, P, cap, p0, v):
            fresh = False  # the cap of the canonical update changed P: recompute P x
            pmin = -1.0
    if record:
        _store_interval(I, iN, iS, iq, iscored, icovered)
    return -1


@inline_kernel
def _refused_band(band):
    """A refused row's interval: NaN bounds around its prediction."""
    band[0] = np.nan
    band[2] = np.nan


@inline_kernel
def _learn_interval(y, yhat, scale, v, lam, N, S, q, eta, alpha, scored, covered):
    """``interval_core._track`` on the block's registers: the new (N, S, q, scored,
    covered), unchanged when the bookkeeping refuses the sample."""
    N1, S1, q1, sc, cv = _track(y, yhat, scale, v, lam, N, S, q, eta, alpha)
    if sc >= 0.0:
        return N1, S1, q1, scored + sc, covered + cv
    return N, S, q, scored, covered


@kernel
def _dfop_predict_many(X, w, out):
    n = X.shape[0]
    d = X.shape[1]
    for t in range(n):
        acc = 0.0
        x = X[t]
        for j in range(d):
            acc += np.float64(w[j]) * x[j]
        out[t] = acc


@kernel
def _dfop_predict_one(x, w):
    acc = 0.0
    for j in range(x.shape[0]):
        acc += np.float64(w[j]) * x[j]
    return acc


# ---------------------------------------------------------------------- models


# These kernels call the guards', the prior's, linalg's and the passes over P:
# recompile them when those change (see _jit).
recompile_with(globals(), _guards_module, _prior_module, _linalg_module, _pass_module,
               _interval_core_module)
