"""DriftAlarm's side of the comparison test: its incumbent RLS, the row's loss
difference and the run kernel.

The test itself (the wealth over fixed bets, the staggered instances, the
block C) is ``compare.py``'s, shared with SelectiveSampler; the guarantee and
the measured choices are docs/design/switch-tests.md ("DriftAlarm").
Candidate: the wrapped model's prequential prediction m_t. Incumbent: an RLS
that never forgets, restarted at each alarm, prior P0 = PRIOR_SCALE /
||x_1||^2 I. Loss: squared, of values clipped to y's epoch mean -+ width mean
absolute deviations, each row's difference over the most it can be given
both predictions (``_drift_delta``).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import compare as _compare_kernels
from . import dfop_pass as _pass_kernels
from . import linalg as _linalg_kernels
from .compare import (
    GLOBAL_ALARMS,
    GLOBAL_ROWS,
    N_YSTATS,
    YSTAT_ABSDEV,
    YSTAT_MEAN,
    _ystats,
    compare_label,
    compare_restart,
    compare_rls,
    rls_fits,
)
from .dfop_pass import _TWO_ROWS_FROM, _downdate_pass, _downdate_pass_2
from .linalg import symv as _symv

# DriftAlarm's kernels take (X, Y, M, rows, C, N, work, hyper, codes):
#   C  learnt, float64: the test's block with the incumbent RLS and y's statistics
#   N  learnt, int64: drifts (DRIFT_RECORD), then the counts COUNT_*
#   work  float64 (2 d): P0 x, the next row's P0 x (fused)
#   hyper  float64: delta, the clip width (in absolute deviations); codes int64: span, burn-in
HYPER_COMPARE_DELTA, HYPER_COMPARE_WIDTH = range(2)
N_COMPARE_HYPER = 2
CODE_COMPARE_SPAN, CODE_COMPARE_BURN = range(2)
N_COMPARE_CODES = 2
#: The incumbent's prior P0 = PRIOR_SCALE / ||x_1||^2 I (x_1: the epoch's first
#: nonzero row): weak against the data at any scale of the inputs.
PRIOR_SCALE = 1e6
#: Values beyond these are not tested (as the e-process's DriftAlarm test).
_X2_LIMIT = 1e100
_Y_LIMIT = 1e50


def drift_span(d):
    """Rows between two instance starts (DriftAlarm)."""
    return 512


def drift_burn(d):
    """Rows of an epoch the incumbent learns before the test starts."""
    return 10 * d + 20


@inline_kernel
def _clip(v, lo, hi):
    return lo if v < lo else (hi if v > hi else v)


@inline_kernel
def _drift_delta(y, f, m, ys, width):
    """The row's loss difference (incumbent's prediction f, model's m) in [-1, 1]:
    squared losses of values clipped to y's epoch mean +- ``width`` absolute
    deviations, over the most they can differ given both predictions
    (NaN when not finite).

    With fc, mc the clipped predictions, (yc - fc)^2 - (yc - mc)^2 =
    (mc - fc)(2 yc - fc - mc) and yc in [lo, hi], so the difference is at most
    B = |mc - fc| max(|2 lo - fc - mc|, |2 hi - fc - mc|) in magnitude, known
    before y. Over (hi - lo)^2 alone a jump
    small against y's range gave differences of ~0.02 a row
    (docs/design/switch-tests.md, "DriftAlarm's scale"). Equal predictions
    give 0."""
    half = width * ys[YSTAT_ABSDEV]
    lo = ys[YSTAT_MEAN] - half
    hi = ys[YSTAT_MEAN] + half
    yc = _clip(y, lo, hi)
    fc = _clip(f, lo, hi)
    mc = _clip(m, lo, hi)
    li = yc - fc
    lc = yc - mc
    below = abs(2.0 * lo - fc - mc)
    above = abs(2.0 * hi - fc - mc)
    # At most (hi - lo)^2: it is the largest of |li^2 - lc^2| over yc in
    # [lo, hi], and both squares lie in [0, (hi - lo)^2].
    bound = abs(mc - fc) * (below if below > above else above)
    if bound == 0.0:
        return 0.0
    delta = (li * li - lc * lc) / bound
    return -1.0 if delta < -1.0 else (1.0 if delta > 1.0 else delta)


@inline_kernel
def _drift_ystats(y, rows, ys):
    """y's mean and mean absolute deviation of the epoch, after their use (predictable)."""
    dev = abs(y - ys[YSTAT_MEAN]) if rows > 0.0 else 0.0
    ys[YSTAT_MEAN] += (y - ys[YSTAT_MEAN]) / (rows + 1.0)
    if rows > 0.0:
        ys[YSTAT_ABSDEV] += (dev - ys[YSTAT_ABSDEV]) / rows


@kernel
def _drift_prior(x, w0, P0):
    """The epoch's incumbent at its prior w0 = 0, P0 = PRIOR_SCALE / ||x||^2 I
    (x the epoch's first nonzero row, ||x||^2 <= _X2_LIMIT)."""
    nn = 0.0
    for j in range(x.shape[0]):
        v = np.float64(x[j])
        nn += v * v
    p0 = PRIOR_SCALE / nn
    p0 = p0 if p0 < 1e100 else 1e100
    d = w0.shape[0]
    for i in range(d):
        w0[i] = 0.0
        for j in range(d):
            P0[i, j] = 0.0
        P0[i, i] = p0


@kernel
def compare_drift_run(X, Y, M, rows, C, N, work, hyper, codes, record, n_counts):
    """DriftAlarm's test over rows 0 .. rows - 1, recording alarms in N
    (``record`` entries, then ``n_counts`` counts: seen, skipped, alarms);
    returns the alarms raised.

    Each row: the incumbent RLS's prediction against the model's (M), clipped
    squared losses normalised by the predictable range, into the test; then
    y's statistics and the incumbent learn the row. A row with a value not
    finite is not counted, one beyond the limits counted as skipped (not as
    seen); neither is tested nor learnt.

    The incumbent's step is DFOP's at mu = 0 (docs/algorithms/dfop.md, lambda = 1):
    P x by ``linalg.symv``, the gain, then ``dfop_pass``'s rank-one pass
    P <- P - u u^T (u = P x sqrt(c)) with P_new x_next accumulated on the way,
    the next row's P x (the same sums, so the same bits as ``symv``).
    Written in this loop, not in a row helper: the previous inlined row
    helper's 11 array arguments cost atomic reference counts, ~170 ns a row
    at d = 10, more than the row's arithmetic; the helpers left take one or
    two arrays and cost nothing measurable (docs/design/switch-tests.md, "Cost").
    """
    d = X.shape[1]
    n = X.shape[0]
    alarms = 0
    fresh = False  # Px holds P0 X[t] (accumulated by the previous row's pass)
    counts = N[record : record + n_counts]
    threshold = -math.log(hyper[HYPER_COMPARE_DELTA])
    width = hyper[HYPER_COMPARE_WIDTH]
    burn = codes[CODE_COMPARE_BURN]
    span = codes[CODE_COMPARE_SPAN]
    w0, P0 = compare_rls(C, d)
    ys = _ystats(C, d)
    Px = work[:d]
    acc = work[d : 2 * d]
    for t in range(rows):
        x = X[t]
        y = np.float64(Y[t])
        m = np.float64(M[t])
        nn = 0.0
        for j in range(d):
            v = np.float64(x[j])
            nn += v * v
        if not (math.isfinite(nn) and math.isfinite(y) and math.isfinite(m)):
            fresh = False
            continue
        if not (nn <= _X2_LIMIT and abs(y) <= _Y_LIMIT and abs(m) <= _Y_LIMIT):
            counts[1] += 1  # skipped, not counted as seen
            fresh = False
            continue
        counts[0] += 1
        rows_seen = C[GLOBAL_ROWS]
        if rows_seen == 0.0:
            if nn == 0.0:
                fresh = False
                continue  # the prior waits for a row that sets its scale
            _drift_prior(x, w0, P0)
            fresh = False
        if not fresh:
            _symv(P0, x, Px)
        f = 0.0
        r = 0.0
        for j in range(d):
            xj = np.float64(x[j])
            f += w0[j] * xj
            r += xj * Px[j]
        fired = False
        if rows_seen >= burn and ys[YSTAT_ABSDEV] > 0.0:
            delta = _drift_delta(y, f, m, ys, width)
            if math.isfinite(delta):
                fired = compare_label(delta, threshold, C, False)
        _drift_ystats(y, rows_seen, ys)
        C[GLOBAL_ROWS] = rows_seen + 1.0
        fresh = False
        if rls_fits(f, r, P0, Px, 1.0):
            c = 1.0 / (1.0 + r)
            g = (y - f) * c
            s = math.sqrt(c)
            for j in range(d):
                w0[j] += Px[j] * g
                Px[j] *= s
            xn = X[t + 1] if t + 1 < n else x
            if d >= _TWO_ROWS_FROM:
                _downdate_pass_2(P0, Px, 1.0, xn, acc)
            else:
                _downdate_pass(P0, Px, 1.0, xn, acc)
            if t + 1 < n:
                for j in range(d):
                    Px[j] = acc[j]
                fresh = True
        if fired:
            C[GLOBAL_ALARMS] += 1.0
            compare_restart(C, span)
            for k in range(N_YSTATS):
                ys[k] = 0.0
            fresh = False
            k = counts[2]
            N[k % record] = counts[0] - 1
            counts[2] = k + 1
            alarms += 1
    return alarms


# Kernels here call compare's, linalg's and dfop_pass's: recompile them when they change (see _jit).
recompile_with(globals(), _compare_kernels, _linalg_kernels, _pass_kernels)
