"""DFOP's pass over P in a block: the rank-one downdate, the forgetting and the
prior refresh in one sweep of P, with P_new x of the next row accumulated on the way.

SPEC.md section 1 (the step) and the prior refresh::

    P <- (P - u u^T) / lambda  [- v v^T]
    acc = P_new x_next

with u = Px sqrt(c) from d = 25 on (``_downdate_refresh_pass_c`` keeps the
small-d form (Px_i Px_j) c). The passes are the whole d^2 cost of a block
step: a row at a time below ``_TWO_ROWS_FROM``, two rows per sweep of the
columns from it, every entry and sum in the same order, so the same bits.
Why two and not four, and the figures: docs/design/dfop.md ("The pass two
rows at a time"). Each pass returns min diag(P_new), the block kernel's
shortcut of the diagonal check.
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import dtype as _dtype_module
from .dtype import like

# From this d the block's pass over P updates two rows per sweep of the
# columns (``_two_rows``); below it a row at a time, as measured before
# (docs/design/dfop.md).
_TWO_ROWS_FROM = 48


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
        xi = like(xn[i], acc)
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
        xi = like(xn[i], acc)
        Pi = P[i]
        for j in range(d):
            Pi[j] = (Pi[j] - ui * u[j]) * invlam
            Pi[j] = Pi[j] - vi * v[j]
            acc[j] += xi * Pi[j]
        pii = np.float64(Pi[i])
        least = pii if pii < least else least
    return least


@inline_kernel
def _entry(row, j, ui, uj, vi, vj, invlam, refresh):
    """Entry j of a row of P updated and stored: (p - u_i u_j) * invlam, minus
    v_i v_j when refreshing, each rounded to P's dtype as the stored value
    is; returns the stored value (what the row-at-a-time passes re-read)."""
    e = like((row[j] - ui * uj) * invlam, row)
    if refresh:
        e = like(e - vi * vj, row)
    row[j] = e
    return e


@inline_kernel
def _two_rows(P, u, invlam, v, refresh, xn, acc):
    """``_downdate_pass`` (``_downdate_refresh_pass`` when ``refresh``, a constant)
    two rows per sweep of the columns.

    acc_j is read and written once for two rows and u_j (v_j) read once,
    where a row at a time moves them per row: the pass is bound by loads and
    stores from d ~ 50. Every entry is the row-at-a-time pass's stored value
    and acc_j = (acc_j + x_i P_ij) + x_i+1 P_i+1,j sums in its order: the
    same bits. An odd last row goes alone. (Four rows a sweep gained more
    at some placements and lost up to 20% at others: docs/design/dfop.md.)
    """
    d = u.shape[0]
    for j in range(d):
        acc[j] = 0.0
    least = np.inf
    i = 0
    while i + 2 <= d:
        ua, ub = u[i], u[i + 1]
        va, vb = v[i], v[i + 1]
        xa, xb = like(xn[i], acc), like(xn[i + 1], acc)
        Pa, Pb = P[i], P[i + 1]
        for j in range(d):
            uj = u[j]
            vj = v[j]
            a = _entry(Pa, j, ua, uj, va, vj, invlam, refresh)
            b = _entry(Pb, j, ub, uj, vb, vj, invlam, refresh)
            acc[j] = (acc[j] + xa * a) + xb * b
        for k in range(i, i + 2):
            pkk = np.float64(P[k, k])
            least = pkk if pkk < least else least
        i += 2
    if i < d:  # d odd: the last row alone
        ui = u[i]
        vi = v[i]
        xi = like(xn[i], acc)
        Pi = P[i]
        for j in range(d):
            acc[j] += xi * _entry(Pi, j, ui, u[j], vi, v[j], invlam, refresh)
        pii = np.float64(Pi[i])
        least = pii if pii < least else least
    return least


@kernel
def _downdate_pass_2(P, u, invlam, xn, acc):
    """``_downdate_pass``, two rows per sweep (``_two_rows``): from d = _TWO_ROWS_FROM."""
    return _two_rows(P, u, invlam, u, False, xn, acc)


@kernel
def _downdate_refresh_pass_2(P, u, invlam, v, xn, acc):
    """``_downdate_refresh_pass``, two rows per sweep: from d = _TWO_ROWS_FROM."""
    return _two_rows(P, u, invlam, v, True, xn, acc)


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
        xi = like(xn[i], acc)
        Pi = P[i]
        for j in range(d):
            Pi[j] = (Pi[j] - (pi * px[j]) * c) * invlam
            Pi[j] = Pi[j] - vi * v[j]
            acc[j] += xi * Pi[j]
        pii = np.float64(Pi[i])
        least = pii if pii < least else least
    return least


# like() comes from _kernels/dtype.py: recompile these when it changes (see _jit).
recompile_with(globals(), _dtype_module)
