"""DFOP's guards: is a sample's update admissible, and the repair from the prior.

Before any write, a step checks that x, y and the prediction are finite, that
the gain keeps w and P finite (``_update_fits``), and that P's updated diagonal
stays non-negative beyond rounding (``_diagonal_verdict``); a denominator that
is not positive on a finite sample is the state's fault (P lost definiteness in
rounding), and the update is made from the prior p0 I instead (``_rare_den``).
SelectiveSampler's update uses the same checks. The argument and what the
checks cost: docs/design/dfop.md ("The repair, and the guard before every
update").
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel, kernel

#: float32's P holds only while its condition number stays below ~1e7
#: (p0 ||x||^2 is what a sample adds to it from the prior).
_FLOAT32_CONDITION = 1e7

#: How far below zero an updated diagonal P_ii - Px_i^2 c may come and still
#: count as rounding: ``_diagonal_slack(d, narrow)`` P_ii, 8 d eps of the
#: stored dtype (the d-term sum Px_i and the subtraction each round at a few
#: eps). Beyond it the sample would make P indefinite.
_EPS64 = 2.0**-52
_EPS32 = 2.0**-23


@inline_kernel
def _diagonal_slack(d, narrow):
    return 8.0 * d * (_EPS32 if narrow else _EPS64)


#: Largest abs(y) a step accepts: the banks' LIMIT (``_kernels/bank.py``), the
#: same rule for every model built on DFOP's step. A finite target can pass
#: the update's own check and still leave weights near the largest double: a
#: fresh float64 DFOP that learnt y = 1.7e308 at ||x|| ~ 0.01 predicted inf on
#: 5 of 20 ordinary rows afterwards. Within it, the weights a fresh model takes
#: stay below ~sqrt(p0) LIMIT (p0 <= 1e8), far from overflow on ordinary rows.
TARGET_LIMIT = 1e100

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
    """Whether the step's update stays finite in the stored dtype.

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
    prediction is not finite, when y is beyond ``TARGET_LIMIT`` in magnitude
    (out of range), or when the update would overflow (:func:`_update_fits`).
    The state is at fault (``_FROM_PRIOR``) when a finite sample meets a
    denominator that is not positive: P lost positive definiteness in
    rounding, and the update is made from the prior (the update on valid
    data must not stop). Otherwise (``_CHECK_DIAGONAL``) P's updated
    diagonal decides: the step proves it from P's smallest diagonal entry
    (:func:`_proven`; the block reads it off its last pass, learn_one off
    its P x pass), or runs :func:`_diagonal_verdict` (docs/design/dfop.md).
    """
    if not (np.isfinite(yhat) and abs(y) <= TARGET_LIMIT and np.isfinite(den)):
        return _REFUSE
    if not den > 0.0:
        return _FROM_PRIOR
    if not _update_fits(big, wbig, c, g, small, narrow):
        return _REFUSE
    return _CHECK_DIAGONAL


@inline_kernel
def _proven(pmin, big, c):
    """Whether P's smallest diagonal entry ``pmin`` proves the diagonal check:
    max |Px_i|^2 c <= pmin gives Px_i^2 c <= P_ii for every i. Only from a
    positive ``pmin`` (a P with an entry that is not positive is repaired by
    :func:`_diagonal_verdict`); -1: unknown."""
    return 0.0 < pmin and (big * big) * c <= pmin


@inline_kernel
def _diagonal_verdict(P, Px, c):
    """``_admit``'s diagonal pass: refuse when P_ii - Px_i^2 c < -8 d eps P_ii.

    For a semi-definite P, Cauchy-Schwarz gives Px_i^2 <= P_ii x^T P x <
    P_ii / c, so the true value is never negative; beyond the slack the
    sample would make P indefinite (x = 5e152 on a coordinate whose
    variance is down to rounding). A diagonal entry that is not
    positive is the state's fault (``_FROM_PRIOR``). Integer or-reductions,
    no early exit: the loop vectorises without reassociating any float sum.
    """
    slack = _diagonal_slack(Px.shape[0], P.itemsize == 4)
    refuse = 0
    fault = 0
    for i in range(Px.shape[0]):
        pii = np.float64(P[i, i])
        px = np.float64(Px[i])  # float32's Px_i^2 overflows where Px_i^2 c is small
        refuse |= pii - (px * px) * c < -slack * pii
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
