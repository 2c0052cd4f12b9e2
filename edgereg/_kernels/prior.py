"""DFOP's bound on P: the prior refresh, and keep_prior=False's reset of a coordinate.

``_refresh_prior`` gives one coordinate k the undiscounted pseudo-sample
(sqrt(rho) e_k, 0), the mass of the prior that forgetting took (keep_prior);
``_reset_unexcited`` returns a coordinate whose variance passed
``MAX_VARIANCE`` p0 to the prior (keep_prior=False). Both by Sherman-Morrison
steps on one coordinate, guarded like the update. The bound they give and how
the remedy was chosen: docs/design/dfop.md.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import compiled, inline_kernel, kernel, recompile_with
from . import dtype as _dtype_module
from .dtype import like

#: keep_prior=False: a coordinate whose variance P_ii passes MAX_VARIANCE * p0
#: is reset to the prior (``_reset_unexcited``: P_ii back to p0, w_i pulled
#: towards 0), the remedy of plain exponential forgetting for P's windup and
#: w's bursting; 10 chosen by measurement, docs/design/dfop.md. Inactive
#: while P_ii <= MAX_VARIANCE * p0.
MAX_VARIANCE = 10.0


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
                _rescale(i, np.float64(math.sqrt(p0 / pii)), P)
            changed = True
    return changed


@kernel
def _reset_fits(k, rho, w, P, v):
    """Whether :func:`_refresh_prior`'s step on coordinate k keeps w finite in its
    dtype and every diagonal entry of P positive; ``v`` is filled as that step
    fills it, so the test is on the values it would write.

    Neither can fail in exact arithmetic for a positive definite P, both can
    in rounding under extreme inputs (the property tests: weights a 1e300
    target took near the dtype's largest value overflowed by the pull; after
    a row with 1e8 beside 6, P's 2 x 2 minors were indefinite at rounding level
    and the subtraction took a diagonal entry below zero). Then only P is
    reset, by :func:`_rescale`, and w is left as it is.
    """
    Pk = P[k]
    den = 1.0 + rho * Pk[k]  # _refresh_prior's den, g and s
    g = abs(rho * w[k] / den)
    s = np.float64(math.sqrt(rho / den))
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
    """g, or 0 when w - row g would not be finite in w's dtype.

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
    inputs: fuzzing at forgetting 0.3-0.9) can take a diagonal
    entry below zero and the next refresh's denominator with it (NaN). The
    state is then at fault and P is reset to the prior, w kept (the
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
    Pk = P[k]
    for j in range(w.shape[0]):
        v[j] = Pk[j]
    if _pull_row(k, rho, w, v):
        _downdate(P, v)


@inline_kernel
def _pull_row(c, rho, w, u):
    """The refresh's step on coordinate c from u = row c of P (in P's dtype):
    den = 1 + rho u_c, w <- w - u g with g = rho w_c / den (``_bounded_pull``),
    then u <- u sqrt(rho / den), the vector to downdate P with. False, and
    nothing done, when den <= 0 (P_cc < 0: P is at fault, repaired after the
    refresh, ``_diagonal_positive``)."""
    # np.float64: numba forms these in float64 whatever P's dtype; without
    # the JIT, numpy's scalars would keep float32's.
    den = 1.0 + rho * np.float64(u[c])
    if not den > 0.0:
        return False
    g = _bounded_pull(rho * np.float64(w[c]) / den, w, u)
    s = np.float64(math.sqrt(rho / den))  # float64 also without the JIT
    d = w.shape[0]
    for j in range(d):
        w[j] -= u[j] * g
    for j in range(d):
        u[j] *= s
    return True


@compiled(_nrt=False)
def _refresh_coordinates(k, count, rho, w, P, v, a):
    """``count`` coordinates of a refresh, k, k + 1, ... (mod d): each
    :func:`_refresh_prior`'s step in turn, the same bits, two of their
    downdates to a pass over P. A refresh at high forgetting covers
    ceil(d mu / 2) coordinates, a pass each (docs/design/dfop.md, "Cost").

    The second coordinate's step reads row c of P as the first left it: that
    row is formed from the first vector by the subtraction the pass makes,
    rounded to P's dtype as the pass stores it; then w's pull and the vector
    (the row times sqrt(rho / den)) as ``_refresh_prior`` forms them. The
    pass subtracts both vectors from every entry, in their order. ``v``,
    ``a``: scratch of one dtype (``_refresh_prior``'s ``v``'s). Compiled
    without NRT: it allocates nothing, and the reference counts of the rows
    and buffers it names cost as much as the pass at d = 10.
    """
    d = w.shape[0]
    done = 0
    while done < count:
        n = 0
        while n < 2 and done < count:
            c = (k + done) % d
            done += 1
            u = v if n == 0 else a
            Pc = P[c]
            if n == 0:
                for j in range(d):
                    u[j] = Pc[j]
            else:
                vc = v[c]
                for j in range(d):
                    u[j] = like(Pc[j] - vc * v[j], P)
            if _pull_row(c, rho, w, u):
                n += 1
        _downdate_pair(P, n, v, a)


@inline_kernel
def _downdate(P, v):
    """P <- P - v v^T, each entry rounded to P's dtype: the one downdate of a
    refresh step, for :func:`pull_and_downdate` and :func:`_downdate_pair`'s
    single vector (inlined, so it adds no call and, in the NRT-free
    ``_refresh_coordinates``, no reference count)."""
    d = P.shape[0]
    for i in range(d):
        vi = v[i]
        Pi = P[i]
        for j in range(d):
            Pi[j] = Pi[j] - vi * v[j]


@inline_kernel
def _downdate_pair(P, n, v, a):
    """P <- P - v v^T (n = 1), or P <- (P - v v^T) - a a^T in one pass (n = 2),
    each entry rounded to P's dtype after each subtraction, as two passes
    store it."""
    d = P.shape[0]
    if n == 1:
        _downdate(P, v)
    elif n == 2:
        for i in range(d):
            vi = v[i]
            ai = a[i]
            Pi = P[i]
            for j in range(d):
                Pi[j] = like(Pi[j] - vi * v[j], P) - ai * a[j]


@inline_kernel
def pull_and_downdate(w, P, Pk, v, g, s):
    """The refresh's update from row Pk = P[k] (``v`` scratch): w <- w - Pk g,
    P <- P - v v^T with v = Pk s, in the arithmetic of g and s: the
    float32-only kernels' refresh (``_kernels/dfop32.py``), whose g and s are
    float32 (the default arithmetic's step is :func:`_pull_row`)."""
    d = w.shape[0]
    for j in range(d):
        w[j] -= Pk[j] * g
        v[j] = Pk[j]
    for j in range(d):
        v[j] *= s
    _downdate(P, v)


#: Larger than the rounding of a sum of up to 2^32 mu's (about n 2^-53
#: relative), far below the step between two widths.
_WIDTH_SLACK = 1e-6


@kernel
def _refresh_width(d, forgotten):
    """Coordinates refreshed at once: ceil(d * forgotten / 2), between 1 and d.

    One per refresh while d mu <= 2 (``refresh_period`` then spaces the
    refreshes); at a higher forgetting one coordinate per step cannot keep
    up (each would wait d steps, its information shrinking by lambda^d), so
    a refresh covers as many coordinates as keep every coordinate's wait
    within about 2 / mu steps (docs/design/dfop.md). ``forgotten`` is a
    sum of mu's, so d f / 2 can be an integer raised by rounding alone (20
    additions of 0.01 make 0.20000000000000004: d f / 2 = 1.0000000000000002
    at d = 10, which took two coordinates where one was meant); a relative
    ``_WIDTH_SLACK`` below the integer counts as the integer.
    """
    width = int(math.ceil(d * forgotten / 2.0 * (1.0 - _WIDTH_SLACK)))
    return min(d, max(1, width))


@kernel
def _max_variance(p0, keep_prior):
    """The cap on P's diagonal: none with the prior refresh, MAX_VARIANCE * p0 without it."""
    return np.inf if keep_prior else MAX_VARIANCE * p0


# The refresh inlines dtype's ``like``: recompile it when dtype.py changes (see _jit).
recompile_with(globals(), _dtype_module)
