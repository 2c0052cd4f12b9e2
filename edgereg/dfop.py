"""DFOP: forgetting-factor recursive least squares (SPEC.md section 1).

Distribution-free one-pass learning (Zhao & Zhou) minimises, at every step t,
the exponentially discounted squared loss with the prior of P0 = p0 I,

    w_t = argmin_w  Lambda_t / p0 ||w||^2
                  + sum_{i<=t} (prod_{j=i+1..t} lambda_j) (y_i - w^T x_i)^2,

with Lambda_t = prod_{j<=t} lambda_j and lambda_j = 1 - mu_j, mu the
*forgetting factor* (forgetting period 1/mu). It keeps w (d) and
P = R_t^{-1}, the inverse of the discounted input correlation (d x d), and
updates both in O(d^2) per sample with the canonical G-DFOP step

    yhat = w^T x                       (prequential prediction)
    Px   = P x
    k    = Px / (lambda_t + x^T Px)
    w   <- w + k (y - yhat)
    P   <- (P - k Px^T) / lambda_t .

Numerical care (the papers are silent; a sensor loop runs for months):

* Exact symmetry. The textbook ``P - k Px^T`` is not symmetric in floating
  point; its skew part is multiplied by 1/lambda every step and the update
  diverges after a few thousand samples. Here the rank-one term is written as
  ``u u^T`` with ``u = Px / sqrt(lambda + x^T Px)``: ``u_i u_j == u_j u_i``
  bit for bit, so P stays *exactly* symmetric forever. Below
  ``_GAIN_BY_SQRT_FROM`` inputs it is ``((Px)_i (Px)_j) c`` with
  c = 1 / (lambda + x^T Px) instead, just as symmetric: one more multiply per
  entry but no square root and no scaling pass, which is what a step costs
  at small d (measured +11% samples/s at d = 10, no gain at d = 50).
* Bounded wind-up (``keep_prior=True``, the default). In input directions a
  stream stops exciting, the discount shrinks the information R_t = P^-1
  towards 0 and P grows like lambda^-t until it overflows (or, in float32,
  loses positive definiteness when excitation returns). The discount also
  erodes the prior: its weight is Lambda_t / p0. edgereg gives that mass back
  as it is forgotten: every ``period`` steps one coordinate k (cycling) gets
  the undiscounted pseudo-sample (sqrt(rho) e_k, 0) with
  rho = d * sum(mu since the last refresh) / p0. Since
  Lambda_t + sum_i (prod_{j>i} lambda_j)(1 - lambda_i) = 1, the total prior
  weight stays 1/p0 on average over the coordinates: the model is never more
  uncertain than its prior (P_kk stays within a small factor of p0, see
  ``DFOP``), while in excited directions the added ridge (1 - lambda)/p0 per
  step is negligible against the data. The objective becomes

      Lambda_t/p0 ||w||^2 + sum_i (prod_{j>i} lambda_j) [(y_i - w^T x_i)^2 + rho_i w_{k_i}^2]

  (rho_i = 0 except on refresh steps), whose closed form the tests check
  after every step. The refresh is fused into the same pass over P, so it
  costs one extra multiply-add per entry on refresh steps. The period is
  ``max(1, floor(2 / (d mu)))`` and a refresh covers ``ceil(d f / 2)``
  coordinates (f the mu forgotten since the last one; one while d mu <= 2),
  so that every coordinate waits at most about 2 / mu steps: then
  P <= p0 (1 - lambda^T) / (T mu lambda^T) I with T that wait (about
  3.2 p0 at small mu, 55 p0 at mu = 0.9), docs/design/dfop.md.
  ``keep_prior=False`` is the canonical SPEC update, for reproduction; its P
  winds up by construction, so a coordinate whose variance passes
  ``MAX_VARIANCE`` p0 is reset to the prior (inactive until then). A P that loses definiteness in
  rounding all the same is reset to the prior at the next sample.

Kernels take plain arrays (cheaper to dispatch than the NamedTuple) and never
allocate. The state's fields are views of two blocks (``_allocate``): P
stacked over w, and one float64 block holding the scratch vectors, the
counters and learn_one's constants, so that ``learn_one`` is a single
4-argument kernel call (numba's dispatch cost grows with every argument).
A sample with NaN/inf (or one whose update would overflow) is detected
before anything is written and reported with a status.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel, index_faults, symmetric_faults
from ._jit import entry_point, inline_kernel, kernel
from ._validate import (
    as_row,
    as_scalar,
    as_targets,
    check_float,
    label_to_sign,
)

__all__ = ["DFOP", "RLS", "DFOPState"]

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
#: Largest prior variance accepted (issue 15; measured: p0 = 1e10 with inputs
#: of norm 2e3 had 16% of samples refused as making P indefinite, 1e8 none).
MAX_P0 = 1e8
#: float32's P holds only while its condition number stays below ~1e7
#: (p0 ||x||^2 is what a sample adds to it from the prior).
_FLOAT32_CONDITION = 1e7
_ndarray = np.ndarray


class DFOPState(NamedTuple):
    """Fixed memory of a DFOP model: d^2 + d values of the dtype, 3d + 5 of 8 bytes."""

    w: np.ndarray  # (d,) weights
    P: np.ndarray  # (d, d) inverse discounted correlation, exactly symmetric
    forgotten: np.ndarray  # float64 (1,): sum of mu_t since the last prior refresh
    work_px: np.ndarray  # (d,) scratch: P x, then the scaled gain u
    work_next: np.ndarray  # (d,) scratch: P_new x_next (fused stream kernel)
    work_v: np.ndarray  # (d,) scratch: the prior refresh's rank-one vector
    counts: np.ndarray  # int64 (4,): learnt, skipped, steps since refresh, next coordinate


# Layout of the float64 block F that holds DFOP's scratch, bookkeeping and
# (after the state proper) the constants of learn_one: fewer, larger arrays
# make the per-sample kernel call cheaper (numba unboxes every argument).
_F_MU, _F_P0, _F_PERIOD, _F_KEEP, _F_SKIP = range(5)
_N_CONST = 5


def _allocate(
    n_features: int,
    p0: float,
    dtype: np.dtype,
    forgetting: float = 0.0,
    period: int = 1,
    keep_prior: bool = True,
    skip: bool = False,
) -> DFOPState:
    """DFOP's state. The fields are views of two blocks (see ``_dfop_learn_one_packed``):

    * ``PW`` (d + 1, d) of the dtype: rows 0..d-1 are P, row d is w;
    * ``F`` float64 (3d + 10): work_px, work_next, work_v, forgotten, then
      counts (4 int64, stored in place of 4 float64), then the constants
      mu, p0, period, keep_prior, skip of ``_dfop_learn_one_packed`` (not
      state: filled from the parameters at every allocation).
    """
    d = n_features
    PW = np.zeros((d + 1, d), dtype=dtype)
    P = PW[:d]
    P[np.diag_indices(d)] = p0
    # Scratch vectors are float64 whatever the dtype: the downdate
    # P - u u^T then subtracts an exact-enough product and rounds once,
    # instead of cancelling two float32-rounded numbers (which made P
    # indefinite on large inputs in float32).
    F = np.zeros(3 * d + 5 + _N_CONST, dtype=np.float64)
    c = 3 * d + 5
    F[c + _F_MU] = forgetting
    F[c + _F_P0] = p0
    F[c + _F_PERIOD] = period  # exact: refresh_period caps it at 2**40
    F[c + _F_KEEP] = 1.0 if keep_prior else 0.0
    F[c + _F_SKIP] = 1.0 if skip else 0.0
    return DFOPState(
        w=PW[d],
        P=P,
        forgotten=F[3 * d : 3 * d + 1],
        work_px=F[:d],
        work_next=F[d : 2 * d],
        work_v=F[2 * d : 3 * d],
        counts=F[3 * d + 1 : 3 * d + 5].view(np.int64),
    )


# --------------------------------------------------------------------- kernels
@kernel
def _symv(P, x, out):
    """out = P x for symmetric P, as row axpys (vectorises without reassociation)."""
    d = x.shape[0]
    for j in range(d):
        out[j] = 0.0
    for i in range(d):
        xi = np.float64(x[i])  # float64 products (numba keeps float() of a float32 in float32)
        Pi = P[i]
        for j in range(d):
            out[j] += xi * Pi[j]


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
        verdict = _diagonal_verdict(P, Px, c)
    if verdict != _APPLY:
        den = _rare_den(x, y, yhat, lam, wbig, P, Px, p0, small, verdict)
        if not den > 0.0:  # NaN: invalid
            return yhat, INVALID
        c = 1.0 / den
        g = (y - yhat) * c
    invlam = 1.0 / lam
    worst = 0.0
    if d < _GAIN_BY_SQRT_FROM:
        for j in range(d):
            w[j] += Px[j] * g
        for i in range(d):
            ui = Px[i]
            Pi = P[i]
            for j in range(d):
                Pi[j] = (Pi[j] - (ui * Px[j]) * c) * invlam
            if Pi[i] > worst:
                worst = Pi[i]
    else:
        s = math.sqrt(c)
        for j in range(d):
            w[j] += Px[j] * g
            Px[j] *= s
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
        out[t] = yhat
        small = d < _GAIN_BY_SQRT_FROM
        den = lam + xPx
        c = 1.0 / den
        g = (y - yhat) * c
        verdict = _admit(y, yhat, den, c, g, big, wbig, small, w.itemsize == 4)
        if verdict == _CHECK_DIAGONAL:
            # Proven only from a positive smallest entry: learn_one's check
            # repairs a P with an entry that is not positive (issue 15).
            proven = 0.0 < pmin and (big * big) * c <= pmin
            verdict = _APPLY if proven else _diagonal_verdict(P, Px, c)
        if verdict != _APPLY:  # learn_one's test and repair
            den = _rare_den(x, y, yhat, lam, wbig, P, Px, p0, small, verdict)
            if not den > 0.0:  # NaN: invalid
                fresh = False
                if skip:
                    counts[1] += 1
                    continue
                return t
            c = 1.0 / den
            g = (y - yhat) * c
            pmin = -1.0  # P may be the prior now
        if small:
            for j in range(d):
                w[j] += Px[j] * g
        else:
            s = math.sqrt(c)
            for j in range(d):
                w[j] += Px[j] * g
                Px[j] *= s
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
_TASKS = ("regression", "classification")


def refresh_period(n_features: int, forgetting: float) -> int:
    """Steps between prior refreshes: max(1, floor(2 / (d mu))) (1 when mu = 0).

    With one coordinate per refresh, a coordinate then waits period * d <=
    2 / mu steps; when d mu > 2 the period is 1 and each refresh covers
    ceil(d mu / 2) coordinates instead (``_refresh_width``), so the wait
    stays about 2 / mu and P stays below p0 (1 - l^T) / (T mu l^T) I,
    l = 1 - mu, T the wait (docs/design/dfop.md).
    """
    if forgetting <= 0.0:
        return 1
    # Capped so that it fits the kernels' int64 even for a tiny forgetting.
    return max(1, int(min(2.0 / (n_features * forgetting), 2.0**40)))


class DFOP(OnlineModel):
    r"""Distribution-free one-pass learner: forgetting-factor RLS (SPEC.md section 1).

    Minimises the exponentially discounted squared loss in one pass with
    O(d^2) memory and time per sample, forgetting the past at rate ``forgetting``:

    .. math::

        w_t = \arg\min_w \frac{\Lambda_t}{p_0}\|w\|^2
              + \sum_{i \le t} \Big(\prod_{j=i+1}^{t} \lambda_j\Big) (y_i - w^\top x_i)^2,
        \qquad \lambda_j = 1 - \mu_j,

    updated per sample by the canonical G-DFOP step (module docstring), with P
    kept exactly symmetric and bounded.

    Parameters
    ----------
    n_features : int
        Input dimension d.
    forgetting : float, default 0.01
        The forgetting factor mu in [0, 1); each step discounts the past by
        lambda = 1 - mu. 1/mu is the forgetting period (older data weighs less
        than 1/e). 0 gives plain recursive least squares (see :class:`RLS`).
        ``learn_many(..., forgetting=array)`` overrides it per step (G-DFOP).
    task : {"regression", "classification"}
        Classification learns the labels as targets in {-1, +1} (labels in
        {0, 1} are accepted and 0 is mapped to -1) and predicts
        sign(w^T x), with sign(0) = +1: predictions are always in {-1, +1}.
        :meth:`decision_function` gives the raw score.
    p0 : float, default 100.0
        Prior P0 = p0 I: the initial variance of every weight (large = weak
        prior; 1e2..1e3 suits standardised inputs). At most ``MAX_P0`` = 1e8:
        beyond it p0 ||x||^2 passes 1 / eps of float64 for inputs of a few
        thousand, and updates lose P's positive definiteness (refused).
    keep_prior : bool, default True
        Give back to the prior the weight the discount takes from it (module
        docstring), which bounds P at every forgetting: P <= p0 (1 - l^T) /
        (T mu l^T) I with l = 1 - mu and T <= about 2 / mu (3.2 p0 at small
        mu, 55 p0 at mu = 0.9; docs/design/dfop.md). False is the canonical
        update of SPEC section 1 (for reproduction), whose P winds up under
        poor excitation: a coordinate whose variance passes ``MAX_VARIANCE *
        p0`` (10 p0) is then reset to the prior (P_ii back to p0, its weight
        pulled towards 0), which keeps P bounded and w from bursting.
    dtype : {"float64", "float32"}
        Precision of the stored w and P (products are formed in float64 and
        rounded once). float32 halves the memory but holds P only while its
        condition number stays below ~1e7: keep p0 * ||x||^2 below ~1e6
        (standardise the inputs). Beyond that a sample whose update would make
        P indefinite is rejected like an invalid one (the state is unchanged).
    on_invalid : {"raise", "skip"}
        What a sample with NaN/inf does: raise ``ValueError`` (state unchanged)
        or be skipped and counted in ``n_skipped_``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights w.
    n_seen_, n_skipped_ : int
        Samples learnt and samples skipped.

    Notes
    -----
    Memory: d^2 + d values of ``dtype`` plus 3d + 5 float64/int64 scratch and
    counters (and 5 float64 constants), fixed at construction (d = 10: 1.1 KB in float64; d = 200:
    327 KB in float64, 166 KB in float32).

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import DFOP
    >>> model = DFOP(n_features=2, forgetting=0.01)
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = np.array([2.0, -1.0, 1.0])
    >>> model.learn_many(X, y).round(4)    # prequential: predicted before each update
    array([0.    , 0.    , 0.9901])
    >>> round(model.predict_one([1.0, 1.0]), 4)
    0.9967
    """

    def __init__(
        self,
        n_features: int,
        forgetting: float = 0.01,
        *,
        task: str = "regression",
        p0: float = 100.0,
        keep_prior: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self.forgetting = check_float("forgetting", forgetting, 0.0, 1.0, high_open=True)
        if task not in _TASKS:
            raise ValueError(f"task must be one of {_TASKS}, got {task!r}")
        self.task = task
        self._classify = task == "classification"
        self.p0 = check_float("p0", p0, 0.0, MAX_P0, low_open=True)
        if not isinstance(keep_prior, (bool, np.bool_)):
            raise TypeError(f"keep_prior must be a bool, got {keep_prior!r}")
        self.keep_prior = bool(keep_prior)
        self._period = refresh_period(self.n_features, self.forgetting)
        self._mu = np.array([self.forgetting])
        self.reset()

    @property
    def _task(self) -> str:  # type: ignore[override]
        return self.task

    def _allocate(self) -> DFOPState:
        return _allocate(
            self.n_features, self.p0, self.dtype, self.forgetting, self._period,
            self.keep_prior, self._skip,
        )

    def _state_faults(self, state: NamedTuple) -> list[tuple[str, str]]:
        """The next refresh coordinate indexes P's rows; P must be exactly symmetric."""
        d = state.w.shape[0]  # type: ignore[attr-defined]
        counts = state.counts  # type: ignore[attr-defined]
        faults = super()._state_faults(state)
        faults += index_faults("counts", int(counts[3]), 0, d - 1, "the next refresh coordinate")
        if not 0.0 <= float(state.forgotten[0]) <= self._period:  # type: ignore[attr-defined]
            faults.append(("forgotten", f"holds {float(state.forgotten[0])!r}, outside "
                                        f"0..{self._period} (a sum of at most period mu < 1)"))
        faults += symmetric_faults("P", state.P)  # type: ignore[attr-defined]
        return faults

    def _bind_state(self) -> None:
        s = self._state
        self._w, self._P = s.w, s.P
        self._Px, self._work, self._v = s.work_px, s.work_next, s.work_v
        self._counts, self._forgotten = s.counts, s.forgotten
        # The two blocks the state's fields are views of (``_allocate``).
        self._PW, self._F = s.P.base, s.work_px.base
        assert self._PW is s.w.base and self._F is s.counts.base
        self._learn_one_kernel = _dfop_learn_one_packed

    # ------------------------------------------------------------ attributes
    @property
    def coef_(self) -> np.ndarray:
        """Learnt weights w (a copy)."""
        return self._w.copy()

    @property
    def covariance_(self) -> np.ndarray:
        """P, the inverse of the discounted input correlation (a copy)."""
        return self._P.copy()

    # -------------------------------------------------------------- one-step
    def decision_function_one(self, x: Any) -> float:
        """Raw score w^T x for one sample."""
        return _dfop_predict_one(self._row(x), self._w)

    def predict_one(self, x: Any) -> float:
        """Predict one sample (the sign of the score for classification)."""
        score = _dfop_predict_one(self._row(x), self._w)
        if self._classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    def learn_one(self, x: Any, y: Any) -> float:
        """Predict x with the current model, then learn (x, y); return the prediction.

        Raises
        ------
        ValueError
            On NaN/inf in x or y (``on_invalid="raise"``); the state is then
            exactly as before the call.
        """
        # The fast path inlines ``_row`` (shape, dtype, contiguity) and makes
        # one 4-argument kernel call.
        if (
            type(x) is _ndarray
            and x.dtype is self.dtype
            and x.shape == self._row_shape
            and x.flags.c_contiguous
        ):
            xr = x
        else:
            xr = as_row(x, self.n_features, self.dtype)
        classify = self._classify
        if classify:
            yv = label_to_sign(y)
        elif type(y) is float:
            yv = y
        else:
            yv = as_scalar(y)
        kernel = self._learn_one_kernel
        yhat = kernel(xr, yv, self._PW, self._F)
        if kernel is _dfop_learn_one_packed:
            # From now on call the compiled entry point directly: the checks
            # above guarantee its argument types (float64 y, C-contiguous x
            # of the model's dtype, the model's own blocks).
            self._learn_one_kernel = entry_point(kernel, (xr, yv, self._PW, self._F))
        if yhat != yhat and not self._skip:  # NaN: rejected, state unchanged
            raise ValueError(self._invalid_message(xr, y, "sample"))
        if classify:
            return 1.0 if yhat >= 0.0 else -1.0
        return yhat

    # ----------------------------------------------------------------- block
    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        if self._classify:
            y = np.asarray(Y)
            if y.shape != (n,):
                raise ValueError(f"y must be a 1-D array of shape ({n},), got shape {y.shape}")
            # Unknown labels become NaN so the kernel stops (or skips) at that
            # row like at any other invalid target.
            return np.where(y == 1, 1.0, np.where((y == 0) | (y == -1), -1.0, np.nan))
        return as_targets(Y, n, np.float64)

    def _learn_block(self, X, Y, out, forgetting=None):  # type: ignore[override]
        if forgetting is None:
            mu, stride = self._mu, 0
        else:
            mu = np.ascontiguousarray(forgetting, dtype=np.float64)
            if mu.shape != (X.shape[0],):
                raise ValueError(
                    f"forgetting must be a scalar or an array of shape ({X.shape[0]},), "
                    f"got shape {mu.shape}"
                )
            if not np.all((mu >= 0.0) & (mu < 1.0)):
                raise ValueError("every per-step forgetting factor must be in [0, 1)")
            stride = 1
        return _dfop_learn_many(
            X, Y, mu, stride, self._w, self._P, self._Px, self._work, self._v, self._counts,
            self._forgotten, self.p0, self._period, self.keep_prior, self._skip, out,
        )

    def learn_many(self, X: Any, y: Any, forgetting: Any = None) -> np.ndarray:
        """Learn a block of samples in one kernel call; return prequential predictions.

        Parameters
        ----------
        X : array of shape (n, n_features)
        y : array of shape (n,)
        forgetting : float or array of shape (n,), optional
            Per-step forgetting factors mu_t in [0, 1) (G-DFOP); default: the
            model's ``forgetting``.

        Returns
        -------
        ndarray of shape (n,)
            Row t is the prediction for X[t] made before learning it (labels in
            {-1, +1} for classification). Identical to calling
            :meth:`learn_one` row by row.
        """
        if forgetting is not None and np.ndim(forgetting) == 0:
            n = np.shape(X)[0] if np.ndim(X) == 2 else 0
            forgetting = np.full(n, float(forgetting))
        out = self._learn_many_checked(X, y, forgetting=forgetting)
        return self._finish(out)

    def _predict_block(self, X, out):  # type: ignore[override]
        _dfop_predict_many(X, self._w, out)

    def predict_many(self, X: Any) -> np.ndarray:
        """Predict a block of samples without learning."""
        return self._finish(super().predict_many(X))

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores w^T x for a block of samples."""
        return super().predict_many(X)

    def _finish(self, scores: np.ndarray) -> np.ndarray:
        if self._classify:
            return np.where(scores >= 0.0, 1.0, -1.0)
        return scores

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4},
            {"n_features": 3, "forgetting": 0.05, "task": "classification"},
            {"n_features": 5, "dtype": "float32"},
            {"n_features": 3, "forgetting": 0.2},  # a prior refresh every step
        ]


class RLS(DFOP):
    """Recursive least squares: :class:`DFOP` with forgetting 0 (SPEC.md section 1).

    Minimises the undiscounted squared loss plus the prior ||w||^2 / p0; all
    samples weigh the same forever (nothing is forgotten, so the prior needs
    no refresh). Same parameters as DFOP except ``forgetting`` (always 0).

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import RLS
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> model = RLS(3, p0=1e6)
    >>> _ = model.learn_many(X, X @ [1.0, -2.0, 0.5])
    >>> model.coef_.round(6)
    array([ 1. , -2. ,  0.5])
    """

    def __init__(
        self,
        n_features: int,
        *,
        task: str = "regression",
        p0: float = 100.0,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        super().__init__(n_features, 0.0, task=task, p0=p0, dtype=dtype, on_invalid=on_invalid)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [{"n_features": 4}, {"n_features": 3, "task": "classification"}]
