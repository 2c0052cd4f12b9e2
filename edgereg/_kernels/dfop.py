"""DFOP's kernels: the G-DFOP step, its guards, the prior refresh, the fused block pass.

SPEC.md section 1. Per sample, with lambda = 1 - mu::

    yhat = w^T x,  Px = P x,  c = 1 / (lambda + x^T Px)
    w   <- w + c Px (y - yhat)
    P   <- (P - c Px Px^T) / lambda

the rank-one term written so that P stays exactly symmetric, plus the prior
refresh (one coordinate k gets the pseudo-sample (sqrt(rho) e_k, 0)). The
numerical argument (symmetry, the refresh's bound on P, the guards, the
keep_prior=False reset) is docs/design/dfop.md. Every kernel takes plain
arrays, never allocates, and reports a bad sample with a status before
writing anything.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import linalg as _linalg_module
from .linalg import symv as _symv

OK = 0
INVALID = 1
_INLINE_D = 24  # up to this d, _dfop_learn_many runs the common pass inline (measured)
# From this d on the rank-one term is u u^T with u = Px sqrt(c); below it,
# (Px_i Px_j) c (no sqrt, one more multiply per entry). Both paths of every
# kernel choose by d alike, so learn_one and learn_many stay bit-identical.
_GAIN_BY_SQRT_FROM = _INLINE_D + 1
#: keep_prior=False: a coordinate whose variance P_ii passes MAX_VARIANCE * p0
#: is reset to the prior (``_reset_unexcited``: P_ii back to p0, w_i pulled
#: towards 0), the remedy of plain exponential forgetting for P's windup and
#: w's bursting; 10 chosen by measurement, docs/design/dfop.md. Inactive
#: while P_ii <= MAX_VARIANCE * p0.
MAX_VARIANCE = 10.0
#: float32's P holds only while its condition number stays below ~1e7
#: (p0 ||x||^2 is what a sample adds to it from the prior).
_FLOAT32_CONDITION = 1e7

# Layout of the float64 block F that holds DFOP's scratch, bookkeeping and
# (after the state proper) the constants of learn_one: fewer, larger arrays
# make the per-sample kernel call cheaper (numba unboxes every argument).
_F_MU, _F_P0, _F_PERIOD, _F_KEEP, _F_SKIP = range(5)
_N_CONST = 5


# --------------------------------------------------------------------- kernels
#: How far below zero an updated diagonal P_ii - Px_i^2 c may come and still
#: count as rounding: ``_diagonal_slack(d, narrow)`` P_ii, 8 d eps of the
#: stored dtype (the d-term sum Px_i and the subtraction each round at a few
#: eps). Beyond it the sample would make P indefinite (issue 15).
_EPS64 = 2.0**-52
_EPS32 = 2.0**-23


@inline_kernel
def _diagonal_slack(d, narrow):
    return 8.0 * d * (_EPS32 if narrow else _EPS64)


#: What the step's checks found: the update may be applied; the sample is
#: invalid; the state is at fault (P lost positive definiteness in rounding)
#: and the update may be applied from the prior P = p0 I; the diagonal of
#: the update must be checked first (:func:`_admit`).
_APPLY = 0
_REFUSE = 1
_FROM_PRIOR = 2
_CHECK_DIAGONAL = 3


@inline_kernel
def _update_fits(big, wbig, c, g, small, narrow):
    """Whether the step's update stays finite in the stored dtype (issue 15).

    A finite sample can still overflow the update: a target near 1.7e308
    makes g infinite, an input near 5e152 makes (Px_i Px_j) infinite, a
    float32 model's weight can pass 3.4e38 (y = 1e39). The largest terms
    are big^2 c (or (big sqrt c)^2) in P and wbig + big |g| in w, with
    big = max|Px_i| and wbig = max|w_i| (gathered in the pass that forms
    w^T x and x^T P x), evaluated in the order the update evaluates them;
    such a sample is invalid and nothing is written. Scalars only: free.
    """
    if small:
        term = (big * big) * c
    else:
        s = math.sqrt(c) * big
        term = s * s
    limit = 3.4028234663852886e38 if narrow else np.inf
    wnew = wbig + big * abs(g)
    return np.isfinite(g) and np.isfinite(term) and wnew < limit and np.isfinite(wnew)


@inline_kernel
def _admit(y, yhat, den, c, g, big, wbig, small, narrow):
    """Whether the step may apply its update, decided before anything is written.

    Scalars only, c = 1 / den and g = (y - yhat) c formed once by the
    caller (free). The sample is invalid (``_REFUSE``) when x, y or the
    prediction is not finite, or when the update would overflow
    (:func:`_update_fits`). The state is at fault (``_FROM_PRIOR``) when a
    finite sample meets a denominator that is not positive: P lost
    positive definiteness in rounding, and the update is made from the
    prior (issue 19: the update on valid data must not stop). Otherwise
    (``_CHECK_DIAGONAL``) P's updated diagonal decides: the block kernel
    proves it from the smallest diagonal entry its last pass saw, or runs
    :func:`_diagonal_verdict` (docs/design/dfop.md).
    """
    if not (np.isfinite(yhat) and np.isfinite(y) and np.isfinite(den)):
        return _REFUSE
    if not den > 0.0:
        return _FROM_PRIOR
    if not _update_fits(big, wbig, c, g, small, narrow):
        return _REFUSE
    return _CHECK_DIAGONAL


@inline_kernel
def _diagonal_verdict(P, Px, c):
    """``_admit``'s diagonal pass: refuse when P_ii - Px_i^2 c < -8 d eps P_ii.

    For a semi-definite P, Cauchy-Schwarz gives Px_i^2 <= P_ii x^T P x <
    P_ii / c, so the true value is never negative; beyond the slack the
    sample would make P indefinite (x = 5e152 on a coordinate whose
    variance is down to rounding, issue 15). A diagonal entry that is not
    positive is the state's fault (``_FROM_PRIOR``). Integer or-reductions,
    no early exit: the loop vectorises without reassociating any float sum.
    """
    slack = _diagonal_slack(Px.shape[0], P.itemsize == 4)
    refuse = 0
    fault = 0
    for i in range(Px.shape[0]):
        pii = np.float64(P[i, i])
        refuse |= pii - (Px[i] * Px[i]) * c < -slack * pii
        fault |= not pii > 0.0
    if fault:
        return _FROM_PRIOR
    return _REFUSE if refuse else _APPLY


@kernel
def _prior_den(x, lam, P, Px, p0):
    """The denominator from the prior P = p0 I, with Px <- p0 x; nothing else written.

    NaN when even the prior cannot take x: in float32 when p0 ||x||^2
    passes float32's precision (P's condition number would be beyond it
    again).
    """
    d = x.shape[0]
    nn = 0.0
    for j in range(d):
        nn += x[j] * x[j]
    if P.itemsize == 4 and p0 * nn > _FLOAT32_CONDITION:
        return np.nan
    xPx = 0.0
    for j in range(d):
        Px[j] = p0 * np.float64(x[j])  # what _symv gives for P = p0 I, bit for bit
        xPx += x[j] * Px[j]
    return lam + xPx


@kernel
def _set_prior(P, p0):
    """P <- p0 I."""
    d = P.shape[0]
    for i in range(d):
        Pi = P[i]
        for j in range(d):
            Pi[j] = 0.0
        Pi[i] = p0


@kernel
def _max_abs(v):
    """max |v_i| (of the prior's Px; the common path gathers it in its pass)."""
    big = 0.0
    for j in range(v.shape[0]):
        a = abs(np.float64(v[j]))
        big = a if a > big else big
    return big


@kernel
def _rare_den(x, y, yhat, lam, wbig, P, Px, p0, small, verdict):
    """The denominator when the checks did not let the update apply; NaN: invalid.

    ``_REFUSE``: NaN. ``_FROM_PRIOR``: the prior's denominator with
    Px <- p0 x, and P <- p0 I only once the sample is known to be valid
    from there (a refused sample leaves the learnt state exactly as it was).
    """
    if verdict == _REFUSE:
        return np.nan
    narrow = P.itemsize == 4
    den = _prior_den(x, lam, P, Px, p0)
    if not (np.isfinite(den) and den > 0.0):
        return np.nan
    c = 1.0 / den
    if not _update_fits(_max_abs(Px), wbig, c, (y - yhat) * c, small, narrow):
        return np.nan
    _set_prior(P, p0)
    return den


@inline_kernel
def _assess(x, y, lam, w, P, Px, p0, pmin):
    """The first half of every DFOP step: predict, form the gain, admit or repair.

    ``Px`` holds P x. Returns ``(yhat, c, g, from_prior)``: the prequential
    prediction w^T x, c = 1 / (lambda + x^T P x) and g = (y - yhat) c, with
    c NaN when the sample is invalid (nothing written: :func:`_admit`,
    :func:`_diagonal_verdict`), and ``from_prior`` True when P was reset to
    the prior first (Px then holds p0 x: :func:`_rare_den`). ``pmin`` is the
    smallest diagonal entry of P when the caller knows it (the block kernel's
    last pass), else -1: a positive one proves the diagonal check without
    its pass. The one-sample and the block kernels both call this (inlined),
    so their arithmetic is one text.
    """
    d = x.shape[0]
    yhat = 0.0
    xPx = 0.0
    big = 0.0
    wbig = 0.0
    for j in range(d):
        wj = np.float64(w[j])
        yhat += wj * x[j]
        xPx += x[j] * Px[j]
        a = abs(Px[j])
        big = a if a > big else big
        b = abs(wj)
        wbig = b if b > wbig else wbig
    small = d < _GAIN_BY_SQRT_FROM
    den = lam + xPx
    c = 1.0 / den
    g = (y - yhat) * c
    verdict = _admit(y, yhat, den, c, g, big, wbig, small, w.itemsize == 4)
    if verdict == _CHECK_DIAGONAL:
        # Proven only from a positive smallest entry: the full check repairs
        # a P with an entry that is not positive (issue 15).
        proven = 0.0 < pmin and (big * big) * c <= pmin
        verdict = _APPLY if proven else _diagonal_verdict(P, Px, c)
    if verdict == _APPLY:
        return yhat, c, g, False
    den = _rare_den(x, y, yhat, lam, wbig, P, Px, p0, small, verdict)
    if not den > 0.0:  # NaN: invalid
        return yhat, np.nan, np.nan, False
    c = 1.0 / den
    return yhat, c, (y - yhat) * c, True


@inline_kernel
def _apply_gain(w, Px, g, c):
    """w <- w + Px g; from ``_GAIN_BY_SQRT_FROM`` on, also Px <- Px sqrt(c) (the u of u u^T)."""
    d = w.shape[0]
    if d < _GAIN_BY_SQRT_FROM:
        for j in range(d):
            w[j] += Px[j] * g
    else:
        s = math.sqrt(c)
        for j in range(d):
            w[j] += Px[j] * g
            Px[j] *= s


@kernel
def _dfop_step(x, y, lam, w, P, Px, max_variance, p0):
    """One G-DFOP step on sample (x, y) with discount lam = 1 - mu.

    Returns ``(yhat, status)``: the prequential prediction w^T x made before
    the update, and OK, or INVALID when x, y or the update is not finite or
    would make P indefinite (the state is then untouched, :func:`_admit`).
    ``Px`` is scratch. A coordinate whose P_ii passes ``max_variance`` is
    reset to the prior (:func:`_reset_unexcited`; ``np.inf``: off, DFOP
    bounds P with ``_refresh_prior`` instead). A P that lost positive
    definiteness in rounding is reset to the prior p0 I (:func:`_rare_den`).
    Shared by the models built on DFOP.
    """
    d = x.shape[0]
    _symv(P, x, Px)
    yhat, c, g, _ = _assess(x, y, lam, w, P, Px, p0, -1.0)
    if not c > 0.0:  # NaN: invalid, nothing written
        return yhat, INVALID
    _apply_gain(w, Px, g, c)
    invlam = 1.0 / lam
    worst = 0.0
    if d < _GAIN_BY_SQRT_FROM:
        for i in range(d):
            ui = Px[i]
            Pi = P[i]
            for j in range(d):
                Pi[j] = (Pi[j] - (ui * Px[j]) * c) * invlam
            if Pi[i] > worst:
                worst = Pi[i]
    else:
        for i in range(d):
            ui = Px[i]
            Pi = P[i]
            for j in range(d):
                Pi[j] = (Pi[j] - ui * Px[j]) * invlam
            if Pi[i] > worst:
                worst = Pi[i]
    if worst > max_variance:
        _reset_unexcited(w, P, max_variance, p0, Px)
    return yhat, OK


@kernel
def _reset_unexcited(w, P, cap, p0, v):
    """keep_prior=False's remedy: a coordinate whose variance passed the cap returns to the prior.

    For each i, in order, with P_ii > cap (re-read after the resets before
    it): the pseudo-sample (sqrt(rho) e_i, 0) with rho = 1/p0 - 1/P_ii, by
    :func:`_refresh_prior`, so P_ii becomes p0 and w_i is pulled towards 0
    in proportion. Information is added on coordinate i only, little
    (rho < 1/p0) against what an excited direction holds, so the excited
    directions are left nearly as they were while an unexcited one is reset
    to the prior, weights included (a congruence D P D bounded P but left w
    to burst at high forgetting: docs/design/dfop.md); where that step would
    overflow w or take a diagonal entry below zero in rounding, only P is
    reset (:func:`_reset_fits`). Every other P_jj only shrinks, so
    afterwards max P_jj <= cap. ``v`` is scratch. Returns whether P changed.
    """
    changed = False
    for i in range(P.shape[0]):
        pii = np.float64(P[i, i])
        if pii > cap:
            rho = 1.0 / p0 - 1.0 / pii
            if _reset_fits(i, rho, w, P, v):
                _refresh_prior(i, rho, w, P, v)
            else:
                _rescale(i, math.sqrt(p0 / pii), P)
            changed = True
    return changed


@kernel
def _reset_fits(k, rho, w, P, v):
    """Whether :func:`_refresh_prior`'s step on coordinate k keeps w finite in its
    dtype and every diagonal entry of P positive; ``v`` is filled as that step
    fills it, so the test is on the values it would write.

    Neither can fail in exact arithmetic for a positive definite P, both can
    in rounding under extreme inputs (issue 15's property test: weights a 1e300
    target took near the dtype's largest value overflowed by the pull; after
    a row with 1e8 beside 6, P's 2 x 2 minors were indefinite at rounding level
    and the subtraction took a diagonal entry below zero). Then only P is
    reset, by :func:`_rescale`, and w is left as it is.
    """
    Pk = P[k]
    den = 1.0 + rho * Pk[k]  # _refresh_prior's den, g and s
    g = abs(rho * w[k] / den)
    s = math.sqrt(rho / den)
    limit = 3.4028234663852886e38 if w.itemsize == 4 else np.inf
    fits = True
    for j in range(w.shape[0]):
        v[j] = Pk[j]
        v[j] *= s
        fits = fits and abs(np.float64(w[j])) + abs(np.float64(Pk[j])) * g < limit
        fits = fits and P[j, j] - v[j] * v[j] > 0.0
    return fits


@kernel
def _rescale(k, s, P):
    """Row and column k of P times s (a congruence: P stays exactly symmetric and
    positive semi-definite; P_kk becomes s^2 P_kk)."""
    for j in range(P.shape[0]):
        P[k, j] *= s
    for j in range(P.shape[0]):
        P[j, k] *= s


@inline_kernel
def _bounded_pull(g, w, row):
    """g, or 0 when w - row g would not be finite in w's dtype (issue 15).

    The refresh pulls w towards 0 by g P[:, k]; with weights that an extreme
    but finite target took near the dtype's largest value, that pull
    overflowed w (fuzzing at forgetting 0.3-0.9 with values up to 1.7e308:
    23 of 400 streams). Then the pseudo-observation takes w_k as its target
    and w is left as it is (P is refreshed all the same). Decided on the
    values the pull reads, alike in the fused block and in learn_one.
    """
    limit = 3.4028234663852886e38 if w.itemsize == 4 else np.inf
    b = abs(g)
    fits = True
    for j in range(w.shape[0]):
        fits = fits and abs(np.float64(w[j])) + abs(np.float64(row[j])) * b < limit
    return g if fits else 0.0


@inline_kernel
def _diagonal_positive(P):
    """Whether every P_ii > 0 (NaN: no). An and-reduction: vectorises.

    Checked after each prior refresh: a refresh subtracts v v^T, which on a P
    that rounding left indefinite in its 2 x 2 minors (extreme but finite
    inputs: issue 15's fuzzing at forgetting 0.3-0.9) can take a diagonal
    entry below zero and the next refresh's denominator with it (NaN). The
    state is then at fault and P is reset to the prior, w kept (issue 19's
    repair), in learn_one and in the block alike.
    """
    ok = True
    for i in range(P.shape[0]):
        ok = ok and P[i, i] > 0.0
    return ok


@kernel
def _refresh_prior(k, rho, w, P, v):
    """Restore forgotten prior mass: learn the pseudo-sample (sqrt(rho) e_k, 0), undiscounted.

    Sherman-Morrison with x = sqrt(rho) e_k (so P x is just rho^1/2 P[:, k]):
    den = 1 + rho P_kk, w <- w - (rho w_k / den) P[:, k], P <- P - v v^T with
    v = P[:, k] sqrt(rho / den). ``v`` is scratch. Where the pull of w would
    not be finite, w is left as it is (:func:`_bounded_pull`).
    """
    d = w.shape[0]
    Pk = P[k]
    den = 1.0 + rho * Pk[k]
    if not den > 0.0:
        return  # P_kk < 0: P is at fault, repaired after the refresh (_diagonal_positive)
    g = _bounded_pull(rho * w[k] / den, w, Pk)
    s = math.sqrt(rho / den)
    for j in range(d):
        w[j] -= Pk[j] * g
        v[j] = Pk[j]
    for j in range(d):
        v[j] *= s
    for i in range(d):
        vi = v[i]
        Pi = P[i]
        for j in range(d):
            Pi[j] = Pi[j] - vi * v[j]


@kernel
def _refresh_width(d, forgotten):
    """Coordinates refreshed at once: ceil(d * forgotten / 2), between 1 and d.

    One per refresh while d mu <= 2 (``refresh_period`` then spaces the
    refreshes); at a higher forgetting one coordinate per step cannot keep
    up (each would wait d steps, its information shrinking by lambda^d), so
    a refresh covers as many coordinates as keep every coordinate's wait
    within about 2 / mu steps (docs/design/dfop.md).
    """
    width = int(math.ceil(d * forgotten / 2.0))
    return min(d, max(1, width))


@kernel
def _max_variance(p0, keep_prior):
    """The cap on P's diagonal: none with the prior refresh, MAX_VARIANCE * p0 without it."""
    return np.inf if keep_prior else MAX_VARIANCE * p0


@kernel
def _dfop_learn_one(x, y, mu, w, P, Px, v, counts, forgotten, p0, period, keep_prior, skip):
    """learn_one: one step, then the prior refresh when due (same arithmetic as the block)."""
    yhat, status = _dfop_step(x, y, 1.0 - mu, w, P, Px, _max_variance(p0, keep_prior), p0)
    if status == OK:
        counts[0] += 1
        if keep_prior:
            d = w.shape[0]
            forgotten[0] += mu
            counts[2] += 1
            if counts[2] >= period and forgotten[0] > 0.0:
                k = counts[3]
                width = _refresh_width(d, forgotten[0])
                rho = d * forgotten[0] / p0 / width
                for i in range(width):
                    _refresh_prior((k + i) % d, rho, w, P, v)
                if not _diagonal_positive(P):
                    _set_prior(P, p0)  # the refresh met a P rounding made indefinite
                counts[2] = 0
                counts[3] = (k + width) % d
                forgotten[0] = 0.0
    elif skip:
        counts[1] += 1
    return yhat, status


@kernel
def _dfop_learn_one_packed(x, y, PW, F):
    """``_dfop_learn_one`` on the two blocks of ``_allocate`` (4 arguments: cheap to call).

    ``PW`` is P stacked over w, ``F`` the float64 block (scratch, forgotten,
    counts, then the constants mu, p0, period, keep_prior, skip). Returns
    only the prediction (a float is cheaper to return than a tuple): NaN
    when the sample is invalid and not skipped (a valid sample's prediction
    is always finite); with ``skip`` the prediction whatever the status.
    """
    d = PW.shape[1]
    c = 3 * d + 5
    skip = F[c + _F_SKIP] != 0.0
    yhat, status = _dfop_learn_one(
        x, y, F[c + _F_MU], PW[d], PW[:d], F[:d], F[2 * d : 3 * d],
        F[3 * d + 1 : 3 * d + 5].view(np.int64), F[3 * d : 3 * d + 1], F[c + _F_P0],
        np.int64(F[c + _F_PERIOD]), F[c + _F_KEEP] != 0.0, skip,
    )
    if status != OK and not skip:
        return np.nan
    return yhat


@kernel
def _downdate_pass(P, u, invlam, xn, acc):
    """P <- (P - u u^T) * invlam and acc = P_new xn, in one pass over P (row by row).

    Returns min diag(P_new) (the block kernel's shortcut of the diagonal check).
    """
    d = u.shape[0]
    for j in range(d):
        acc[j] = 0.0
    least = np.inf
    for i in range(d):
        ui = u[i]
        xi = np.float64(xn[i])
        Pi = P[i]
        for j in range(d):
            Pi[j] = (Pi[j] - ui * u[j]) * invlam
            # Re-read the stored value: in float32 it is the rounded one
            # _symv would see (keeps learn_one == learn_many).
            acc[j] += xi * Pi[j]
        pii = np.float64(Pi[i])
        least = pii if pii < least else least
    return least


@kernel
def _downdate_refresh_pass(P, u, invlam, v, xn, acc):
    """``_downdate_pass`` plus the prior refresh: P <- (P - u u^T) * invlam - v v^T."""
    d = u.shape[0]
    for j in range(d):
        acc[j] = 0.0
    least = np.inf
    for i in range(d):
        ui = u[i]
        vi = v[i]
        xi = np.float64(xn[i])
        Pi = P[i]
        for j in range(d):
            Pi[j] = (Pi[j] - ui * u[j]) * invlam
            Pi[j] = Pi[j] - vi * v[j]
            acc[j] += xi * Pi[j]
        pii = np.float64(Pi[i])
        least = pii if pii < least else least
    return least


@kernel
def _downdate_refresh_pass_c(P, px, c, invlam, v, xn, acc):
    """``_downdate_refresh_pass`` in the small-d form: P <- (P - (px px^T) c) * invlam - v v^T."""
    d = px.shape[0]
    for j in range(d):
        acc[j] = 0.0
    least = np.inf
    for i in range(d):
        pi = px[i]
        vi = v[i]
        xi = np.float64(xn[i])
        Pi = P[i]
        for j in range(d):
            Pi[j] = (Pi[j] - (pi * px[j]) * c) * invlam
            Pi[j] = Pi[j] - vi * v[j]
            acc[j] += xi * Pi[j]
        pii = np.float64(Pi[i])
        least = pii if pii < least else least
    return least


@kernel
def _dfop_learn_many(
    X, Y, mu, mu_stride, w, P, Px, work, v, counts, forgotten, p0, period, keep_prior, skip, out
):
    """Learn a block; out[t] = prequential prediction of row t.

    ``mu[t * mu_stride]`` is the forgetting factor of step t (stride 0: a
    constant). The loop is fused: while row i of the new P is written, it is
    also accumulated into P_new x_{t+1} (so P is read once per step), and on a
    refresh step the prior pseudo-sample's rank-one term is applied in the
    same pass. Bit-for-bit the same arithmetic as ``_dfop_learn_one``.

    Returns -1 when every row was handled, else the index of the first invalid
    row (only when ``skip`` is False); rows before it are learnt, it and the
    rows after it are not.
    """
    n = X.shape[0]
    d = X.shape[1]
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
        yhat, c, g, from_prior = _assess(x, y, lam, w, P, Px, p0, pmin)
        out[t] = yhat
        if not c > 0.0:  # NaN: invalid, nothing written
            fresh = False
            if skip:
                counts[1] += 1
                continue
            return t
        if from_prior:
            pmin = -1.0  # P is the prior now
        _apply_gain(w, Px, g, c)
        small = d < _GAIN_BY_SQRT_FROM
        invlam = 1.0 / lam
        counts[0] += 1
        k = -1
        width = 1
        repaired = False
        if keep_prior:
            forgotten[0] += mu_t
            counts[2] += 1
            if counts[2] >= period and forgotten[0] > 0.0:
                k = counts[3]
        xn = X[t + 1] if t + 1 < n else x
        if k < 0:
            if d > _INLINE_D:
                pmin = _downdate_pass(P, Px, invlam, xn, work)
            else:
                # The same pass inline: for small d the call costs more than
                # the compiler's better code for the separate function wins.
                for j in range(d):
                    work[j] = 0.0
                pmin = np.inf
                for i in range(d):
                    ui = Px[i]
                    xi = np.float64(xn[i])
                    Pi = P[i]
                    for j in range(d):
                        Pi[j] = (Pi[j] - (ui * Px[j]) * c) * invlam
                        work[j] += xi * Pi[j]
                    pii = np.float64(Pi[i])
                    pmin = pii if pii < pmin else pmin
        else:
            # Row k of the updated P, then _refresh_prior's w and v, computed
            # before the pass with exactly its arithmetic.
            width = _refresh_width(d, forgotten[0])
            rho = d * forgotten[0] / p0 / width
            uk = Px[k]
            Pk = P[k]
            for j in range(d):
                # Stored and re-read: in float32, the rounded entry that
                # _refresh_prior reads in learn_one (then P[k] is restored).
                old = Pk[j]
                if small:
                    Pk[j] = (old - (uk * Px[j]) * c) * invlam
                else:
                    Pk[j] = (old - uk * Px[j]) * invlam
                v[j] = Pk[j]
                Pk[j] = old
            rden = 1.0 + rho * v[k]
            rg = _bounded_pull(rho * w[k] / rden, w, v)
            rs = math.sqrt(rho / rden)
            for j in range(d):
                w[j] -= v[j] * rg
            for j in range(d):
                v[j] *= rs
            if small:
                pmin = _downdate_refresh_pass_c(P, Px, c, invlam, v, xn, work)
            else:
                pmin = _downdate_refresh_pass(P, Px, invlam, v, xn, work)
            # learn_one's test after the refresh: every P_ii > 0 (no NaN can
            # arise here: the update passed its guard, the refresh's
            # denominators are checked), read off the pass while width is 1.
            positive = pmin > 0.0
            if width > 1:
                pmin = -1.0
            # At high forgetting, the other coordinates of this refresh
            # (after the fused one, in learn_one's order and arithmetic).
            for i in range(1, width):
                _refresh_prior((k + i) % d, rho, w, P, v)
            if width > 1:
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
        if not keep_prior and _reset_unexcited(w, P, MAX_VARIANCE * p0, p0, v):
            fresh = False  # the cap of the canonical update changed P: recompute P x
            pmin = -1.0
    return -1


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


# These kernels call linalg's: recompile them when linalg.py changes (see _jit).
recompile_with(globals(), _linalg_module)
