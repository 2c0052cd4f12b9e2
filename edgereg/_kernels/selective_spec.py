"""The demo-classifier switch test's kernels: the window of labelled examples, C_t > K_t.

docs/algorithms/selective.md (``switch_test="spec"``): the demo classifier h is the
ridge fit on the last L_t = min(window0 + floor(sqrt(t)), window_max)
labelled examples, refitted every ``rebuild_every`` L_t rounds, and a switch
is declared when C_t = |w_t^T x_t - h_t^T x_t| exceeds K_t. The bounds that
let most rounds skip the demo product (``_switch_screen``) and the
derivation: docs/design/selective.md. Called by ``selective_one.py`` and
``selective_block.py``; the blocks' layout is ``selective.py``'s.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel, recompile_with
from . import linalg as _linalg_kernels
from . import selective as _selective_kernels
from .linalg import invert_upper_in_place, upper_cholesky_in_place
from .selective import (
    CACHE_CLO2,
    CACHE_DELTA,
    SCREEN_C,
    SCREEN_DELTA,
    SCREEN_EPS,
    SCREEN_HI,
    SCREEN_MU,
    SCREEN_TC,
)

#: Up to this d the demo product runs over whole rows of V (measured faster
#: than the triangle: d = 10 and 50); above it, over the upper triangle only.
_FULL_ROWS_UP_TO = 64


@kernel
def _isqrt(t):
    s = int(math.sqrt(t))
    while s * s > t:
        s -= 1
    while (s + 1) * (s + 1) <= t:
        s += 1
    return s


@kernel
def _window_length(t, window0, window_max):
    """L_t = min(window0 + floor(sqrt(t)), window_max)."""
    L = window0 + _isqrt(t)
    return L if L < window_max else window_max


@kernel
def _window_bracket(t, window0, window_max):
    """(L_t, t_lo, t_hi): L_s = L_t for every s in [t_lo, t_hi).

    With q = floor(sqrt(t)), floor(sqrt(s)) = q for q^2 <= s < (q + 1)^2;
    once window0 + q >= window_max, L stays window_max for every s >= t_lo.
    ``_run_block`` keeps the bracket and recomputes it only when t leaves it
    (t grows by one per round, and returns to 1 on a restart).
    """
    q = _isqrt(t)
    L = window0 + q
    t_lo = q * q
    t_hi = (q + 1) * (q + 1)
    if L >= window_max:
        L = window_max
        t_hi = np.iinfo(np.int64).max
    return L, t_lo, t_hi


@kernel
def _demo_triangle(xn, V, v):
    """v = V^T x, so that r'_L = x^T A_L^-1 x = ||v||^2 (``_products``): d^2 / 2 multiply-adds.

    V = U^-1 is upper triangular (A_L = U^T U, so A_L^-1 = V V^T): v is a
    sequence of axpys on the rows of V. The inner loops run over
    ``range(d - j)`` (offset j): numba vectorises those, not ``range(j, d)``.
    """
    d = xn.shape[0]
    for i in range(d):
        v[i] = 0.0
    for j in range(d):
        xj = np.float64(xn[j])
        for i in range(d - j):
            v[j + i] += V[j, j + i] * xj


@kernel
def _demo_rows(xn, V, v):
    """``_demo_triangle`` over whole rows of V: the zeros below the diagonal
    add only signed zeros, so ||v||^2 is the same bits; short rows
    (d <= ``_FULL_ROWS_UP_TO``) loop faster this way."""
    d = xn.shape[0]
    for i in range(d):
        v[i] = 0.0
    for j in range(d):
        xj = np.float64(xn[j])
        Vj = V[j]  # a row view vectorises better here than V[j, i]
        for i in range(d):
            v[i] += xj * Vj[i]


@kernel
def _switch_test(f, rp, g, rLp, t, delta, cache):
    """C_t > K_t with the margins and r's of docs/algorithms/selective.md (see module notes).

    The log and square roots are needed only when C_t exceeds a lower bound
    of K_t: with s = r + r_L, sqrt(r) + sqrt(r_L) >= sqrt(s) and c >= c_1 (c
    at t = 1, c grows with t), so K_t >= c_1 sqrt(s) + s. C_t - s <= 0, or
    (C_t - s)^2 <= c_1^2 s (c_1^2 lowered by 1e-9 against rounding), proves
    C_t <= K_t; otherwise K_t is computed as written.
    """
    r = rp / (1.0 + rp)
    rL = rLp / (1.0 + rLp)
    C = abs(f / (1.0 + rp) - g / (1.0 + rLp))
    s = r + rL
    D = C - s
    if D <= 0.0:
        return False
    if cache[CACHE_DELTA] != delta:
        c1 = math.sqrt(2.0 * math.log(4.0 / delta)) + 1.0  # delta_1 = delta / 2
        cache[CACHE_CLO2] = c1 * c1 * (1.0 - 1e-9)
        cache[CACHE_DELTA] = delta
    if D * D <= cache[CACHE_CLO2] * s:
        return False
    tf = float(t)
    delta_t = delta / (tf * (tf + 1.0))
    c = math.sqrt(2.0 * math.log(2.0 / delta_t)) + 1.0
    K = c * math.sqrt(r) + r + c * math.sqrt(rL) + rL
    return C > K


@kernel
def _switch_screen(f, rp, nn, g, t, delta, screen):
    """True when C_t <= K_t holds for every r'_L within its bounds: no switch this round.

    Needs no V^T x (d^2 / 2 per round): r'_L lies in [lo, hi] =
    [mu ||x||^2, hi ||x||^2] (``_refit``). K_t grows with r'_L and c_t with
    t, so K_t >= c_lo (sqrt(r) + sqrt(r_lo)) + r + r_lo with
    r_lo = lo / (1 + lo) and c_lo = c at a round <= t (cached, recomputed
    when t doubles, restarts or delta changes). h_t^T x = g / (1 + r'_L) lies
    between g / (1 + hi) and g / (1 + lo), so C_t is at most the larger
    distance from w_t^T x = a to those two ends. The bound of K_t is
    lowered by 1e-9 (relative) and 1e-12 (|a| + |g|) against the rounding of
    both sides, so True implies that ``_switch_test`` returns False. False
    (the caller computes r'_L and runs ``_switch_test``) when the bounds do
    not decide, when a square root is NaN (r' rounded below 0) and when
    ||x||^2 >= 1e300 (below, a skipped r'_L, about ||x||^2 at most as
    A_L >= I, is finite: the row is valid exactly when ``_assess_one``
    finds it valid).
    """
    tf = float(t)
    if not (screen[SCREEN_TC] <= tf < 2.0 * screen[SCREEN_TC]) or screen[SCREEN_DELTA] != delta:
        delta_t = delta / (tf * (tf + 1.0))
        screen[SCREEN_C] = math.sqrt(2.0 * math.log(2.0 / delta_t)) + 1.0
        screen[SCREEN_TC] = tf
        screen[SCREEN_DELTA] = delta
    inv = 1.0 / (1.0 + rp)
    a = f * inv
    r = rp * inv
    lo = nn * screen[SCREEN_MU]
    q = 1.0 / (1.0 + lo)
    r_lo = lo * q
    z_near = g * q
    z_far = g / (1.0 + nn * screen[SCREEN_HI])  # 0 if nn * hi overflows: still an end
    K = (screen[SCREEN_C] * (math.sqrt(r) + math.sqrt(r_lo)) + r + r_lo) * (1.0 - 1e-9)
    K -= 1e-12 * (abs(a) + abs(g))
    return nn < 1e300 and abs(a - z_near) <= K and abs(a - z_far) <= K


@kernel
def _rebuild(window_X, window_y, head, m, hw, V, acc):
    """Refit the demo classifier from scratch on the last m labelled examples.

    A_L = I + sum x_i x_i^T and b_L = sum y_i x_i are formed (upper triangle
    of ``V``), factored A_L = U^T U (Cholesky, right-looking: A_L >= I, so
    every pivot is >= 1), U is inverted in place (V = U^-1, rows from the
    last) and h = A_L^-1 b_L = V (V^T b_L). Then per round
    x^T A_L^-1 x = ||V^T x||^2 (``_demo_triangle``). Every inner loop is an
    axpy on a row segment (vectorised): m d^2 / 2 + d^3 / 3 multiply-adds in
    place, ``acc`` is scratch. Returns lam >= the largest eigenvalue of the
    A_L formed (Gershgorin's bound, max_i sum_j |A_L[i, j]|) for ``_refit``.
    """
    d = hw.shape[0]
    for i in range(d):
        hw[i] = 0.0
        Vi = V[i]
        for j in range(d):
            Vi[j] = 0.0
        Vi[i] = 1.0
    cap = window_X.shape[0]
    start = head - m
    if start < 0:
        start += cap
    for k in range(m):
        r = start + k
        if r >= cap:
            r -= cap
        xk = window_X[r]
        yk = np.float64(window_y[r])
        for a in range(d):
            xa = np.float64(xk[a])
            hw[a] += yk * xa
            Va = V[a]
            for j in range(d - a):
                Va[a + j] += xa * xk[a + j]
    # Gershgorin: lambda_max(A_L) <= max_i sum_j |A_L[i, j]| (row i of the upper
    # triangle plus column i above the diagonal, accumulated in acc).
    for j in range(d):
        acc[j] = 0.0
    lam = 0.0
    for i in range(d):
        Vi = V[i]
        s = 0.0
        for j in range(d - i):
            s += abs(np.float64(Vi[i + j]))
        for j in range(d - i - 1):
            acc[i + 1 + j] += abs(np.float64(Vi[i + 1 + j]))
        if s + acc[i] > lam:
            lam = s + acc[i]
    upper_cholesky_in_place(V)  # A_L = U^T U (A_L >= I: every pivot >= 1)
    invert_upper_in_place(V, acc)  # V = U^-1
    # h = V (V^T b_L).
    for j in range(d):
        acc[j] = 0.0
    for i in range(d):
        bi = np.float64(hw[i])
        Vi = V[i]
        for j in range(d - i):
            acc[i + j] += bi * Vi[i + j]
    for i in range(d):
        Vi = V[i]
        s = 0.0
        for j in range(d - i):
            s += np.float64(Vi[i + j]) * acc[i + j]
        hw[i] = s
    return lam


@kernel
def _refit(window_X, window_y, head, m, hw, V, acc, screen):
    """``_rebuild``, then the bounds of r'_L = ||V^T x||^2 that ``_switch_screen`` uses.

    The stored A_L (formed in V, then factored) is >= I, and its largest
    eigenvalue is <= lam (Gershgorin, returned by ``_rebuild``), so
    ||x||^2 / lam <= x^T A_L^-1 x <= ||x||^2. The computed ||V^T x||^2
    differs from x^T A_L^-1 x by the rounding of the Cholesky factor and its
    inverse: relatively at most O(d^2 kappa eps) (the worst-case bounds),
    kappa <= lam. The bounds are widened by 8 d^2 lam eps (float64, d = 10,
    lam = 2000: 3.6e-10; float32, d = 10, lam = 50: 0.005), and dropped
    (mu = 0, hi = 1e300, true of any V) when that is not below 0.25.
    Every change of V goes through here, so the bounds always belong to the
    current V.
    """
    lam = _rebuild(window_X, window_y, head, m, hw, V, acc)
    d = V.shape[0]
    slack = 8.0 * d * d * lam * screen[SCREEN_EPS]
    if slack < 0.25:
        screen[SCREEN_MU] = (1.0 - slack) / lam
        screen[SCREEN_HI] = 1.0 + slack
    else:
        screen[SCREEN_MU] = 0.0
        screen[SCREEN_HI] = 1e300


# Kernels here call linalg's and use selective's layout: recompile them when
# those change (see _jit).
recompile_with(globals(), _selective_kernels, _linalg_kernels)
