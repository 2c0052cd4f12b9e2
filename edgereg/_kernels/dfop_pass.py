"""DFOP's pass over P in a block: the rank-one downdate, the forgetting and the
prior refresh in one sweep of P, with P_new x of the next row accumulated on the way.

docs/algorithms/dfop.md (the step) and the prior refresh::

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


@inline_kernel
def _entry(row, j, ui, uj, vi, vj, c, invlam, small, refresh):
    """Entry j of a row of P updated and stored: (p - u_i u_j) * invlam (with
    ``small``: (p - (u_i u_j) c) * invlam, u = Px), minus v_i v_j when
    ``refresh``, each rounded to P's dtype as the stored value is; returns the
    stored value. ``small`` and ``refresh`` are constants of each caller."""
    if small:
        e = like((row[j] - (ui * uj) * c) * invlam, row)
    else:
        e = like((row[j] - ui * uj) * invlam, row)
    if refresh:
        e = like(e - vi * vj, row)
    row[j] = e
    return e


@inline_kernel
def _row(P, i, u, c, invlam, v, small, refresh, xn, acc):
    """Row i of P updated (:func:`_entry`) and acc += xn_i P_new[i]; returns P_new,ii.

    acc takes the stored entry: in float32 the rounded one ``_symv`` would
    read, which keeps learn_one == learn_many.
    """
    ui = u[i]
    vi = v[i]
    xi = like(xn[i], acc)
    Pi = P[i]
    for j in range(u.shape[0]):
        acc[j] += xi * _entry(Pi, j, ui, u[j], vi, v[j], c, invlam, small, refresh)
    return np.float64(Pi[i])


@inline_kernel
def _rows(P, u, c, invlam, v, small, refresh, xn, acc):
    """The pass a row at a time: acc = P_new xn; returns min diag(P_new)."""
    d = u.shape[0]
    for j in range(d):
        acc[j] = 0.0
    least = np.inf
    for i in range(d):
        pii = _row(P, i, u, c, invlam, v, small, refresh, xn, acc)
        least = pii if pii < least else least
    return least


@inline_kernel
def _two_rows(P, u, invlam, v, refresh, xn, acc):
    """``_rows`` (u = Px sqrt(c)) two rows per sweep of the columns; returns min diag(P_new).

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
            a = _entry(Pa, j, ua, uj, va, vj, 1.0, invlam, False, refresh)
            b = _entry(Pb, j, ub, uj, vb, vj, 1.0, invlam, False, refresh)
            acc[j] = (acc[j] + xa * a) + xb * b
        for k in range(i, i + 2):
            pkk = np.float64(P[k, k])
            least = pkk if pkk < least else least
        i += 2
    if i < d:  # d odd: the last row alone
        pii = _row(P, i, u, 1.0, invlam, v, False, refresh, xn, acc)
        least = pii if pii < least else least
    return least


# The kernels the block kernel calls: P <- (P - u u^T) * invlam [- v v^T] and
# acc = P_new xn in one pass; each returns min diag(P_new) (the block
# kernel's shortcut of the diagonal check). Separate functions, not inlined:
# for d > 24 the compiler's code for them is faster (docs/design/dfop.md).


@kernel
def _downdate_pass(P, u, invlam, xn, acc):
    """P <- (P - u u^T) * invlam, a row at a time (d < _TWO_ROWS_FROM)."""
    return _rows(P, u, 1.0, invlam, u, False, False, xn, acc)


@kernel
def _downdate_refresh_pass(P, u, invlam, v, xn, acc):
    """P <- (P - u u^T) * invlam - v v^T, a row at a time (d < _TWO_ROWS_FROM)."""
    return _rows(P, u, 1.0, invlam, v, False, True, xn, acc)


@kernel
def _downdate_refresh_pass_c(P, px, c, invlam, v, xn, acc):
    """The small-d form (d < 25): P <- (P - (px px^T) c) * invlam - v v^T, c in
    px's dtype (the caller's ``like``: a float32 product stays float32)."""
    return _rows(P, px, c, invlam, v, True, True, xn, acc)


@kernel
def _downdate_pass_2(P, u, invlam, xn, acc):
    """P <- (P - u u^T) * invlam, two rows per sweep (d >= _TWO_ROWS_FROM)."""
    return _two_rows(P, u, invlam, u, False, xn, acc)


@kernel
def _downdate_refresh_pass_2(P, u, invlam, v, xn, acc):
    """P <- (P - u u^T) * invlam - v v^T, two rows per sweep (d >= _TWO_ROWS_FROM)."""
    return _two_rows(P, u, invlam, v, True, xn, acc)


# like() comes from _kernels/dtype.py: recompile these when it changes (see _jit).
recompile_with(globals(), _dtype_module)
