"""SelectiveSampler's kernels: the blocks, BBQ's query, the RLS step, the round's helpers.

docs/algorithms/selective.md. Per round (inputs of unit norm, r' = x^T A_{t-1}^-1 x)::

    r_t = r' / (1 + r'),  ask for y_t iff r_t > t^-kappa,
    switch when C_t = |w_t^T x_t - h_t^T x_t| > K_t

with the queried examples learnt by DFOP's symmetric Sherman-Morrison step at
lambda = 1, and h the demo classifier refitted on the window of the last L_t
labelled examples (that test's window and demo classifier:
``selective_spec.py``; the default e-process test: ``eprocess.py``). The
one-sample (``selective_one.py``) and block (``selective_block.py``) kernels
share the per-round helpers; the derivation and the measured speed choices:
docs/design/selective.md.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import compare as _compare_kernels
from . import eprocess as _eprocess_kernels
from . import guards as _guards_kernels
from . import linalg as _linalg_kernels
from .compare import compare_size
from .eprocess import GLOBAL_THETA, eprocess_size
from .guards import (  # _EPS*: machine epsilons (``_prepare``'s rounding down)
    _EPS32,
    _EPS64,
    _diagonal_slack,
    _update_fits,
)
from .linalg import scratch_stride

OK = 0
INVALID = 1

#: Capacity of the record of switch steps (the most recent ones are kept; the
#: total is counted without limit). Fixed memory: 64 int64.
SWITCH_RECORD = 64

# Indices into ``counts``.
COUNT_SEEN = 0  # valid rounds processed (queried or not)
COUNT_SKIPPED = 1  # samples skipped as invalid
COUNT_T = 2  # rounds of the current epoch (since the last restart)
COUNT_QUERIES = 3  # labels used
COUNT_SWITCHES = 4  # switches declared (total)
COUNT_HEAD = 5  # next write position in the window ring
COUNT_SIZE = 6  # labelled examples in the window
COUNT_REBUILT = 7  # epoch round t of the last demo rebuild
COUNT_REBUILDS = 8  # demo rebuilds (total)
COUNT_DEMO = 9  # labels asked for the demo classifier only (demo rounds BBQ did not query)
N_COUNTS = 10

# What a round does with its label (``_assess``'s decision).
NO_LABEL = 0
DEMO_LABEL = 1  # asked for the demo window only
BBQ_LABEL = 2  # asked by the BBQ rule (or given, in learn mode): learnt by the estimator


# Indices into ``work_cache``: bracket [t0, t1] of the query threshold with
# f0 = t0^-kappa, f1 = t1^-kappa (``_bbq_query``), and the lower bound c_1^2 of
# c^2 in the switch test. Stale entries (other kappa or delta, t out of the
# bracket) are recomputed; the decisions never depend on the cache, only
# whether a pow or log is evaluated.
CACHE_T0, CACHE_T1, CACHE_F0, CACHE_F1, CACHE_KAPPA, CACHE_CLO2, CACHE_DELTA = range(7)
N_CACHE = 8
# Indices into ``work_screen`` (``_switch_screen``): r'_L = ||V^T x||^2 lies in
# [mu ||x||^2, hi ||x||^2] for the current demo factor V (written by
# ``_refit`` with V; mu = 0, hi = 1e300, true of any V, in a fresh state and
# in one loaded from a file saved without this field), c = c_t at epoch
# round t_c, a lower bound of c_t for t in [t_c, 2 t_c) and that delta, and
# the machine epsilon of the dtype (for ``_refit``'s margin).
SCREEN_MU, SCREEN_HI, SCREEN_C, SCREEN_TC, SCREEN_DELTA, SCREEN_EPS = range(6)
N_SCREEN = 8
#: Below this epoch round the threshold t^-kappa is always computed exactly.
_BRACKET_FROM = 64

# ------------------------------------------------------------- the blocks
# SelectiveSampler's kernels take (inputs, A, N, E, Z, F, hyper, codes):
#   A  learnt, the dtype: w, P (= A^-1), demo_w, demo_factor, window_X, window_y
#   N  learnt, int64: switches (SWITCH_RECORD), then counts (N_COUNTS)
#   E  learnt, float64: the e-process switch test (_kernels/eprocess.py; empty
#      when that test is off)
#   Z  scratch, the dtype: x, x_next (normalised inputs)
#   F  float64, 64-byte aligned: Px, acc, hx (scratch), each starting every
#      scratch_stride(d) floats, then the cache and the screen (bounds that
#      carry over between calls but decide nothing)
# (``_selective_views``; the class makes its state and workspace from it).
HYPER_KAPPA, HYPER_DELTA = range(2)
N_HYPER = 2
CODE_NORMALIZE = 0
CODE_DETECT = 1
CODE_WINDOW0 = 2
CODE_REBUILD_EVERY = 3
CODE_SKIP = 4
CODE_TEST_EVERY = 5
CODE_SPAN = 6
N_CODES = 7
# CODE_DETECT: which switch test runs.
NO_TEST = 0
SPEC_TEST = 1  # the paper's C_t > K_t against the demo classifier (docs/algorithms/selective.md)
EPROCESS_TEST = 2  # the e-process of _kernels/eprocess.py on the labels used
COMPARE_TEST = 3  # the comparison test of _kernels/compare.py (a candidate against w)


@inline_kernel
def _selective_views(A, N, Z, F, d):
    """The 15 arrays of the blocks, in the order of ``_run_block``'s arguments:
    w, P, demo_w, demo_factor, window_X, window_y, switches, counts, x, x_next,
    Px, acc, hx, cache, screen."""
    dd = d * d
    cap = (A.shape[0] - 2 * d - 2 * dd) // (d + 1)  # window_max
    w = A[:d]
    P = A[d : d + dd].reshape((d, d))
    o = d + dd
    hw = A[o : o + d]
    G = A[o + d : o + d + dd].reshape((d, d))
    o += d + dd
    window_X = A[o : o + cap * d].reshape((cap, d))
    window_y = A[o + cap * d : o + cap * d + cap]
    switches = N[:SWITCH_RECORD]
    counts = N[SWITCH_RECORD : SWITCH_RECORD + N_COUNTS]
    s = scratch_stride(d)  # F's vectors each start 64-byte aligned
    cache = F[3 * s : 3 * s + N_CACHE]
    screen = F[3 * s + N_CACHE : 3 * s + N_CACHE + N_SCREEN]
    return (w, P, hw, G, window_X, window_y, switches, counts, Z[:d], Z[d : 2 * d],
            F[:d], F[s : s + d], F[2 * s : 2 * s + d], cache, screen)


@inline_kernel
def _options(hyper, codes):
    """(normalize, detect, kappa, delta, window0, rebuild_every, skip) of hyper and codes;
    detect: the demo-classifier test runs (the demo classifier and its rounds)."""
    return (codes[CODE_NORMALIZE] != 0, codes[CODE_DETECT] == SPEC_TEST, hyper[HYPER_KAPPA],
            hyper[HYPER_DELTA], codes[CODE_WINDOW0], codes[CODE_REBUILD_EVERY],
            codes[CODE_SKIP] != 0)


@inline_kernel
def _eprocess_options(codes, E):
    """(test_every, span, theta): the e-process's test-round rate (0: the
    e-process is off), its instances' span and the current threshold of the
    test rounds (0.0 when off)."""
    if codes[CODE_DETECT] != EPROCESS_TEST and codes[CODE_DETECT] != COMPARE_TEST:
        return 0, 0, 0.0
    return codes[CODE_TEST_EVERY], codes[CODE_SPAN], E[GLOBAL_THETA]  # compare's GLOBAL_THETA too


def selective_sizes(d, window_max, test):
    """Lengths of the blocks A, N, E, Z, F (``test``: the CODE_DETECT code)."""
    nE = (eprocess_size(d, True) if test == EPROCESS_TEST
          else compare_size(d, False) if test == COMPARE_TEST else 0)
    return (2 * d + 2 * d * d + window_max * (d + 1), SWITCH_RECORD + N_COUNTS, nE, 2 * d,
            3 * scratch_stride(d) + N_CACHE + N_SCREEN)

#: Relative margin of the bracket's bounds. States saved before the bounds
#: were exact held f0 (1 + 1e-12) and f1 (1 - 1e-12) in CACHE_F0, CACHE_F1: this
#: margin covers that too.
_BRACKET_MARGIN = 1e-11


# --------------------------------------------------------------------- kernels
@kernel
def _prepare(X, t, normalize, xn):
    """xn = X[t] / ||X[t]|| (x = 0 stays 0), or a copy; False if X[t] is not finite.

    One pass finds max|x_j|, whether every x_j is finite (the sum of
    x_j - x_j is 0, or NaN from an inf or NaN) and sum x_j^2; when
    1e-140 < max|x_j| < 1e140 (no square underflows to a denormal, and the
    sum cannot overflow for d < 1e28) the scale is 1 / sqrt(sum x_j^2).
    Otherwise the norm is taken of x / max|x_j|, which neither overflows nor
    underflows for any finite x (a second pass). The scale is then rounded
    down by (d + 8) eps, plus 2 eps of float32 when xn is float32 (the
    rounding to storage), more than the relative error of computing it, of
    xn and of ||xn||^2: the computed ||xn||^2 never exceeds 1 (the bounds
    assume ||x|| <= 1). So r_t = t^-kappa, an exact tie at the start of an
    epoch (A = I: r'_t = ||xn||^2, r_t = 1/2 = 4^-1/2 with kappa = 1/2), is
    decided alike whatever the scale of x (no query).

    Row t of a 2-D block (the one-sample paths pass x as a 1 x d view): no
    row view is made, and the single exit lets numba drop the reference
    counting of the arguments.
    """
    d = X.shape[1]
    m = 0.0
    ss = 0.0
    z = 0.0
    for j in range(d):
        v = np.float64(X[t, j])
        z += v - v
        a = abs(v)
        m = a if a > m else m
        ss += v * v
    finite = z == 0.0
    scale = 1.0  # a copy when not normalising, and x = 0 stays 0
    if finite and normalize and m > 0.0:
        if 1e-140 < m < 1e140:
            scale = 1.0 / math.sqrt(ss)
        else:
            inv_m = 1.0 / m
            ss = 0.0
            for j in range(d):
                v = np.float64(X[t, j]) * inv_m
                ss += v * v
            scale = inv_m / math.sqrt(ss)  # ss in [1, d]: no overflow
        down = (d + 8) * _EPS64
        if xn.itemsize == 4:
            down += 2.0 * _EPS32
        scale *= 1.0 - down
    if finite:
        # np.float64(...): float64 products under NUMBA_DISABLE_JIT too, where
        # a float32 element times a Python float would stay float32 (NEP 50).
        for j in range(d):
            xn[j] = np.float64(X[t, j]) * scale
    return finite


@kernel
def _bbq_query(r, t, kappa, cache):
    """r > t^-kappa, with t^-kappa evaluated only when r is too close to it for the bounds.

    For t in a cached bracket [t0, t1] (t1 = t0 + t0 // 64), with f0 = t0^-kappa
    and f1 = t1^-kappa: f = t^-kappa is decreasing, so f1 <= f(t) <= f0, and
    convex, so f lies below the chord from (t0, f0) to (t1, f1) and above
    its tangent at t1, f1 (1 + kappa (t1 - t) / t1). Those bounds are at
    most kappa (kappa + 1) / 2 (1 / 64)^2 apart (relatively; 9e-5 for
    kappa = 1/2); widened by 1e-11 (relative) against the rounding of pow
    and of their own evaluation, r above the upper or at/below the lower
    decides exactly as the direct comparison.
    BBQ keeps r_t within about 1% of t^-kappa, so the ends alone would
    leave most rounds undecided. A pow is computed when the bracket moves
    (once every t / 64 rounds: the next bracket starts at the old t1) and
    when r lies between the bounds.
    """
    tf = float(t)
    if t < _BRACKET_FROM:
        return r > tf ** (-kappa)
    if not (cache[CACHE_T0] <= tf <= cache[CACHE_T1]) or cache[CACHE_KAPPA] != kappa:
        if cache[CACHE_KAPPA] == kappa and tf == cache[CACHE_T1] + 1.0:
            t0 = cache[CACHE_T1]  # the usual move: t just left the bracket
            f0 = cache[CACHE_F1]
        else:
            t0 = tf
            f0 = tf ** (-kappa)
        t1 = t0 + float(int(t0) // 64)
        cache[CACHE_T0] = t0
        cache[CACHE_T1] = t1
        cache[CACHE_F0] = f0
        cache[CACHE_F1] = t1 ** (-kappa)
        cache[CACHE_KAPPA] = kappa
    f0 = cache[CACHE_F0]
    f1 = cache[CACHE_F1]
    if r > f0 * (1.0 + _BRACKET_MARGIN):
        return True
    if r <= f1 * (1.0 - _BRACKET_MARGIN):
        return False
    t0 = cache[CACHE_T0]
    t1 = cache[CACHE_T1]
    if r > (f0 + (f1 - f0) * ((tf - t0) / (t1 - t0))) * (1.0 + _BRACKET_MARGIN):
        return True
    if r <= f1 * (1.0 + kappa * ((t1 - tf) / t1)) * (1.0 - _BRACKET_MARGIN):
        return False
    return r > tf ** (-kappa)


@kernel
def _gain(y, f, rp):
    """Sherman-Morrison step sizes: w += Px (y - f) / (1 + r'), u = Px / sqrt(1 + r')."""
    c = 1.0 / (1.0 + rp)
    return (y - f) * c, math.sqrt(c)


@inline_kernel
def _learnable(y, f, rp, w, pmin, P, Px):
    """Whether ``_update`` may learn (x, y): decided before anything is written.

    With A^-1 <= I and normalised inputs the update is always finite; a raw
    input of 4.3e9 followed by 1e150, or a state loaded with an entry at
    its bound, is not. Refused: 1 + r' not positive, an update that would
    overflow in the stored dtype (DFOP's ``_update_fits``: max |u_i|^2 in
    A^-1, max |w_i| + max |Px_i| |gain| in w), or an updated diagonal entry
    P_ii - Px_i^2 / (1 + r') below -8 d eps (A^-1's scale is 1). The
    diagonal's pass is skipped when pmin, the smallest P_ii (the block's
    last update pass gathers it; -1: unknown), proves it as in DFOP's block:
    0 < pmin and big^2 c <= pmin give P_ii - Px_i^2 c >= 0 for every i
    (rounding is monotone), the same decision as the pass.
    """
    den = 1.0 + rp
    if not den > 0.0:
        return False
    c = 1.0 / den
    big = 0.0
    wbig = 0.0
    for j in range(Px.shape[0]):
        a = abs(Px[j])
        big = a if a > big else big
        b = abs(np.float64(w[j]))
        wbig = b if b > wbig else wbig
    if not _update_fits(big, wbig, c, (y - f) * c, False, P.itemsize == 4):
        return False
    if 0.0 < pmin and (big * big) * c <= pmin:
        return True
    slack = _diagonal_slack(Px.shape[0], P.itemsize == 4)
    for i in range(Px.shape[0]):
        if np.float64(P[i, i]) - (Px[i] * Px[i]) * c < -slack:
            return False
    return True


@kernel
def _update(y, f, rp, w, P, Px):
    """Learn (x, y) given Px = A^-1 x, f = w^T x, r' = x^T Px (Sherman-Morrison, lambda = 1).

    w <- w + Px (y - f) / (1 + r'), A^-1 <- A^-1 - u u^T with
    u = Px / sqrt(1 + r') (``_dfop_step``'s symmetric form: A^-1 stays
    exactly symmetric); Px is left holding u.

    Not ``_dfop_step``: that recomputes A^-1 x, w^T x and x^T A^-1 x, which
    the round already has (for the query rule and the switch test), and
    cannot fuse the next round's product (``_update_fused``); lambda = 1
    also drops the discount's multiply and the variance cap. The entries
    written are ``_dfop_step``'s up to the rounding of r'. Finite x
    (|x_j| <= 1 when normalised), y and r' >= 0, checked by the caller,
    keep it finite.
    """
    d = w.shape[0]
    gain, sc = _gain(y, f, rp)
    for j in range(d):
        w[j] += Px[j] * gain
        Px[j] *= sc
    for i in range(d):
        ui = Px[i]
        for j in range(d):
            P[i, j] = P[i, j] - ui * Px[j]


@inline_kernel
def _update_fused(y, f, rp, w, P, Px, xnext, acc):
    """``_update``, and acc = A_new^-1 xnext accumulated in the same pass over A^-1.

    The next round then needs no product of its own: the same sums in the
    same order as ``linalg.symv_by_size`` (which the one-sample paths call), so the
    same bits. Returns the smallest updated P_ii (``_learnable``'s pmin).
    Inlined into the block kernels (a call passes 8 arrays).
    """
    d = w.shape[0]
    gain, sc = _gain(y, f, rp)
    for j in range(d):
        w[j] += Px[j] * gain
        Px[j] *= sc
    for j in range(d):
        acc[j] = 0.0
    pmin = np.inf
    for i in range(d):
        ui = Px[i]
        xi = np.float64(xnext[i])
        for j in range(d):
            P[i, j] = P[i, j] - ui * Px[j]
            # Re-read the stored value: in float32 it is the rounded one
            # _symv would see.
            acc[j] += xi * P[i, j]
        pii = np.float64(P[i, i])
        pmin = pmin if pii >= pmin else pii  # a NaN entry: pmin NaN, proves nothing
    return pmin


@inline_kernel
def _products4(xn, w, Px, hw):
    """(f, r', ||x||^2, g) = (w^T x, x^T Px, x^T x, h^T x) of every round, in one loop.

    The four sums are independent chains that overlap (without fastmath each
    is a serial chain of adds, the cost at small d). Inlined: as a call
    (four arrays passed as exploded structs) it cost process_many 10-12% and
    learn_many 3% at d = 10 (docs/design/selective.md).
    """
    f = 0.0
    rp = 0.0
    nn = 0.0  # A = I after a restart: x^T A^-1 x = ||x||^2 must be finite too
    g = 0.0
    for j in range(xn.shape[0]):
        xj = np.float64(xn[j])
        f += np.float64(w[j]) * xj
        rp += xj * Px[j]
        nn += xj * xj
        g += np.float64(hw[j]) * xj
    return f, rp, nn, g


@kernel
def _products(xn, w, Px, hw, v):
    """(f, r', ||x||^2, g, r'_L) = (w^T x, x^T Px, x^T x, h^T x, ||v||^2).

    Px = A^-1 x and v = V^T x are given (v = 0 and h = 0 when not
    detecting): ``_products4``'s four sums and ||v||^2, the sums the block
    kernel forms (the same order, the same bits).
    """
    f, rp, nn, g = _products4(xn, w, Px, hw)
    return f, rp, nn, g, _sum_squares(v)


@inline_kernel
def _sum_squares(v):
    """r'_L = ||v||^2 = ||V^T x||^2, summed in order (both paths, the same bits)."""
    total = 0.0
    for j in range(v.shape[0]):
        total += v[j] * v[j]
    return total


@kernel
def _decide(forced, detect, theta, f, rp, t, kappa, L, rebuild_every, t_rebuilt, cache):
    """What round t does with its label: BBQ_LABEL when forced or r_t > t^-kappa,
    else DEMO_LABEL in a demo round (demo-classifier test: the last L = L_t rounds
    before the scheduled rebuild; e-process, theta > 0: a confident round,
    |w_t^T x_t| > theta), else NO_LABEL."""
    ask = NO_LABEL
    if forced:
        ask = BBQ_LABEL
    elif _bbq_query(rp / (1.0 + rp), t, kappa, cache):
        ask = BBQ_LABEL
    elif detect and t - t_rebuilt > (rebuild_every - 1) * L:
        ask = DEMO_LABEL
    elif theta > 0.0 and abs(f) / (1.0 + rp) > theta:
        ask = DEMO_LABEL
    return ask


@kernel
def _restart(switches, counts, w, P, xn, Px):
    """Declare a switch at this round: record it, A^-1 = I, w = 0, Px = x; returns x^T x."""
    k = counts[COUNT_SWITCHES]
    switches[k % switches.shape[0]] = counts[COUNT_SEEN]
    counts[COUNT_SWITCHES] = k + 1
    counts[COUNT_REBUILT] = 0
    d = w.shape[0]
    rp = 0.0
    for i in range(d):
        w[i] = 0.0
        for j in range(d):
            P[i, j] = 0.0
        P[i, i] = 1.0
        xi = np.float64(xn[i])
        Px[i] = xi
        rp += xi * xi
    return rp


@kernel
def _swap(switches, counts, w, P, xn, Px, wc):
    """Declare a switch won by the candidate: record it, w = wc (the candidate's
    weights), A^-1 = I (so the new epoch's RLS is ridge towards wc), Px = x;
    returns (w^T x, x^T x)."""
    rp = _restart(switches, counts, w, P, xn, Px)
    f = 0.0
    for i in range(w.shape[0]):
        w[i] = wc[i]
        f += np.float64(w[i]) * np.float64(xn[i])
    return f, rp


@inline_kernel
def _record(xn, y, ask, detect, window_X, window_y, counts):
    """Count a used label and push (x, y) into the window ring."""
    counts[COUNT_QUERIES] += 1
    if ask == DEMO_LABEL:
        counts[COUNT_DEMO] += 1
    if detect:
        cap = window_X.shape[0]
        h = counts[COUNT_HEAD]
        for j in range(xn.shape[0]):
            window_X[h, j] = xn[j]
        window_y[h] = y
        counts[COUNT_HEAD] = h + 1 if h + 1 < cap else 0
        if counts[COUNT_SIZE] < cap:
            counts[COUNT_SIZE] += 1


@kernel
def _end_round(t, detect, L, rebuild_every, counts):
    """Close epoch round t (L = L_t); returns how many window examples the demo
    classifier must be refitted on now (t - t_rebuild >= K L_t), else -1."""
    counts[COUNT_T] = t
    counts[COUNT_SEEN] += 1
    m = -1
    if detect:
        if t - counts[COUNT_REBUILT] >= rebuild_every * L:
            m = counts[COUNT_SIZE] if counts[COUNT_SIZE] < L else L
            counts[COUNT_REBUILT] = t
            counts[COUNT_REBUILDS] += 1
    return m


# Kernels here call the guards' and linalg's: recompile them when those change (see _jit).
recompile_with(globals(), _guards_kernels, _linalg_kernels, _eprocess_kernels,
               _compare_kernels)
