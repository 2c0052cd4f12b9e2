"""An anytime-valid change detector: a change-point e-process against a stationary linear model.

Shared by SelectiveSampler's switch test (``switch_test="eprocess"``) and the
regressors' drift alarm (``edgereg/drift.py``); docs/algorithms/selective.md; derivation and
proof in docs/design/selective.md ("The e-process switch test").

Null (one epoch): E[y_i | x_i, past] = u^T x_i for one u with ||u|| <= 1 and
y_i - u^T x_i 1-sub-Gaussian (true of y in {-1, +1}: Hoeffding). For any
prediction m_i made before y_i is seen,

    exp(sum_i [ (y_i - u^T x_i)^2 - (y_i - m_i)^2 ] / 2)

is a nonnegative supermartingale under u. The null's unknown u is replaced by
a lower bound of min_{||u|| <= 1} sum (y_i - u^T x_i)^2, the ridge residual
J_n - 1 (J_n = min_u ||u||^2 + sum (y_i - u^T x_i)^2, accumulated by RLS as
sum e_i^2 / (1 + x_i^T P x_i)), and the prediction m_i by a mixture over the
change point s: the null's own RLS prediction before s, the alternative's
(a forgetting RLS, or the model's own prequential prediction) from s on.
So, with l^a_i, l^b_i the two predictions' increments
(e_i^2 / (1 + r_i) - (y_i - m_i)^2) / 2,

    log E_n = -1/2 + log( tail(k) exp(LA_n)
                          + sum_{s <= k} pi_s exp(LA_{c_s - 1} + sum_{i >= c_s} l^b_i) )

over candidate change points c_s every GRID labels, pi_s = ln 2 (1 / ln(s + 1)
- 1 / ln(s + 2)) (sum 1), tail(k) = ln 2 / ln(k + 2) the prior mass of "no
change among the first k"; the sum is kept as one log-sum R (``eprocess_label``).
Ville's inequality: P(sup_n E_n >= 1 / delta) <= delta under the null, for
any input sequence and any predictable query rule.

Two instances of the test run staggered (a new one every ``span`` labels,
each living 2 ``span``), the j-th spending delta pi_j: the null's regret
(d / 2) ln n and the change-point prior's cost stay bounded, so the delay
after a switch does not grow with the epoch's length.

Block ``E`` (float64): 8 globals, then per instance slot w0 (d), P0 (d x d),
8 scalars, then the alternative RLS wb (d), Pb (d x d) when it has one.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel, python_function, recompile_with
from . import linalg as _linalg_kernels
from .linalg import symv

# The helpers below are called, not inlined (``kernel``, not ``inline_kernel``):
# inlined, the e-process was typed and compiled again inside every
# SelectiveSampler and DriftAlarm kernel, in both dtypes, for a path that runs
# only with switch_test="eprocess". Called, a cold run of the fast test tier
# takes 28% less CPU; measured costs in docs/design/caching.md ("Compile time").

#: Candidate change points every GRID test labels.
GRID = 16
#: The alternative RLS's forgetting per test label (effective memory 100 labels).
ALT_LAMBDA = 0.99
#: Step of the confidence threshold's multiplicative quantile tracking.
CONFIDENCE_RATE = 0.02
#: The threshold's value in a fresh block, and its floor.
THETA_START = 0.01
THETA_FLOOR = 1e-12
LN2 = math.log(2.0)
#: log of an empty sum, finite so that a state file can hold it (every later
#: sum added to it is larger by far: _log_add returns that sum exactly).
_NONE = -1e300

# Globals (E[:8]).
GLOBAL_SCORE = 0  # unused (the current log e-value is ``eprocess_score``'s)
GLOBAL_LABELS = 1  # test labels in the epoch
GLOBAL_SPAN = 2  # labels between two instance starts
GLOBAL_ALARMS = 3  # alarms raised (total)
GLOBAL_LAST = 4  # log e-value of the last alarm
GLOBAL_THETA = 5  # the confidence threshold of the test rounds (``track_confidence``)
N_GLOBALS = 8
# An instance's scalars (after its w0 and P0).
SCALAR_LA = 0  # log of the no-change path's likelihood ratio
SCALAR_R = 1  # log-sum of the change paths' weighted ratios
SCALAR_K = 2  # candidate change points opened
SCALAR_N = 3  # labels seen
SCALAR_J = 4  # its index j (spends delta pi_j); 0: not started
SCALAR_TAIL = 5  # log of the prior mass of "no change among the first K" (_log_tail(K))
SCALAR_PJ = 6  # log pi_j, its share of delta (_log_prior(j))
N_SCALARS = 8
_SLOTS = 2


def eprocess_size(d, alternative):
    """Length of the block E: globals, two instance slots, the alternative RLS."""
    return N_GLOBALS + _SLOTS * (d + d * d + N_SCALARS) + (d + d * d if alternative else 0)


@kernel
def _slot(E, d, i):
    """(w0, P0, scalars) of instance slot i."""
    o = N_GLOBALS + i * (d + d * d + N_SCALARS)
    return (E[o : o + d], E[o + d : o + d + d * d].reshape((d, d)),
            E[o + d + d * d : o + d + d * d + N_SCALARS])


@kernel
def _alternative(E, d):
    """(wb, Pb) of the alternative RLS (empty views when the block has none)."""
    o = N_GLOBALS + _SLOTS * (d + d * d + N_SCALARS)
    if E.shape[0] < o + d + d * d:
        return E[o:o], E[o:o].reshape((0, 0))
    return E[o : o + d], E[o + d : o + d + d * d].reshape((d, d))


@kernel
def _log_add(a, b):
    """log(e^a + e^b); an argument of ``_NONE`` (or -inf) returns the other."""
    if a < b:
        a, b = b, a
    if b <= _NONE:
        return a
    return a + math.log1p(math.exp(b - a))


@kernel
def _log_prior(k):
    """log pi_k = log(ln 2 (1 / ln(k + 1) - 1 / ln(k + 2))), k >= 1 (sum over k: 1),
    as log ln 2 + log(ln(1 + 1 / (k + 1))) - log ln(k + 1) - log ln(k + 2): the
    difference of the two reciprocals is not formed (it cancels to 0 for
    k near 1e15)."""
    return (math.log(LN2) + math.log(math.log1p(1.0 / (k + 1.0)))
            - math.log(math.log(k + 1.0)) - math.log(math.log(k + 2.0)))


@kernel
def _log_tail(k):
    """log sum_{s > k} pi_s = log(ln 2 / ln(k + 2))."""
    return math.log(LN2 / math.log(k + 2.0))


@kernel
def _reset_rls(w, P):
    """w = 0, P = I (ridge 1: A = I)."""
    d = w.shape[0]
    for i in range(d):
        w[i] = 0.0
        for j in range(d):
            P[i, j] = 0.0
        P[i, i] = 1.0


@kernel
def _start_instance(E, d, i, j):
    """Instance slot i starts afresh as the j-th instance of the epoch."""
    w0, P0, s = _slot(E, d, i)
    _reset_rls(w0, P0)
    s[SCALAR_LA] = 0.0
    s[SCALAR_R] = _NONE
    s[SCALAR_K] = 0.0
    s[SCALAR_N] = 0.0
    s[SCALAR_J] = float(j)
    s[SCALAR_TAIL] = 0.0  # _log_tail(0)
    s[SCALAR_PJ] = _log_prior(float(j))


@kernel
def eprocess_restart(E, d, span):
    """A new epoch: instance 1 starts, slot 1 waits ``span`` labels; the alternative is kept."""
    E[GLOBAL_SCORE] = 0.0
    E[GLOBAL_LABELS] = 0.0
    E[GLOBAL_SPAN] = float(span)
    _start_instance(E, d, 0, 1)
    _w, _P, s = _slot(E, d, 1)
    _reset_rls(_w, _P)
    for k in range(N_SCALARS):
        s[k] = 0.0
    s[SCALAR_R] = _NONE


@kernel
def eprocess_alarm(E, d, span):
    """The test fired (``eprocess_label`` recorded its log e-value): count the
    alarm, then ``eprocess_restart``."""
    E[GLOBAL_ALARMS] += 1.0
    eprocess_restart(E, d, span)


@kernel
def eprocess_init(E, d, span):
    """A fresh block: ``eprocess_restart`` and the alternative RLS at its prior."""
    for k in range(N_GLOBALS):
        E[k] = 0.0
    E[GLOBAL_THETA] = THETA_START
    eprocess_restart(E, d, span)
    wb, Pb = _alternative(E, d)
    if wb.shape[0] == d:
        _reset_rls(wb, Pb)


@kernel
def confidence_factors(test_every):
    """(up, down): theta's factors after a round above it and after one below."""
    return (math.exp(CONFIDENCE_RATE * (1.0 - 1.0 / test_every)),
            math.exp(-CONFIDENCE_RATE / test_every))


@kernel
def track_confidence(E, margin, up, down):
    """Update the threshold theta of the test rounds after a round of |margin| ``margin``.

    A round is a test round (its label asked for the switch test) when the
    model's |margin| exceeds theta: where it is most confident, a changed
    concept contradicts it most (for a sign flip the evidence per label is
    2 (u^T x)^2). theta <- theta exp(rate (1[margin > theta] - 1 / test_every))
    (``confidence_factors``) keeps the fraction of test rounds at
    1 / test_every (a multiplicative stochastic-approximation quantile
    tracker). The choice depends on x and the past only, so the test stays
    valid.
    """
    theta = E[GLOBAL_THETA]
    theta *= up if margin > theta else down
    E[GLOBAL_THETA] = theta if theta > THETA_FLOOR else THETA_FLOOR


@kernel
def _rls_products(x, w, P, Px):
    """Px = P x (``linalg.symv``); returns (w^T x, x^T P x)."""
    d = x.shape[0]
    symv(P, x, Px)
    f = 0.0
    r = 0.0
    for j in range(d):
        xj = np.float64(x[j])
        f += w[j] * xj
        r += xj * Px[j]
    return f, r


@kernel
def _rls_learn(y, f, r, w, P, Px, scale):
    """Learn (x, y) given Px = P x, f = w^T x, r = x^T P x, with P first scaled by
    ``scale`` (1 / lambda: forgetting; 1: none), in one pass over P:
    w += s Px (y - f) / (1 + s r), P <- s P - u u^T, u = s Px / sqrt(1 + s r)
    (exactly symmetric)."""
    d = w.shape[0]
    r *= scale
    c = 1.0 / (1.0 + r)
    g = (y - f) * c
    sc = math.sqrt(c) * scale
    for j in range(d):
        w[j] += Px[j] * scale * g
        Px[j] *= sc
    for i in range(d):
        ui = Px[i]
        Pi = P[i]
        for j in range(d):
            Pi[j] = Pi[j] * scale - ui * Px[j]


@kernel
def _rls_fits(f, r, P, Px, scale):
    """Whether a label may enter an RLS whose products are f, r and Px: f finite,
    1 + s r >= 1/2 and every updated diagonal entry s P_ii - (s Px_i)^2 /
    (1 + s r) >= -8 d eps. Exactly, P is positive definite and all three
    hold; with extreme inputs (DriftAlarm's scaled x up to 1e50) rounding
    can make P indefinite, and one more such label would take the square
    root of a negative number. A label refused here is not learnt nor
    counted by this RLS; the refusal depends on x and the past only, so
    the test stays valid. d multiply-adds.
    """
    den = 1.0 + scale * r
    if not (den >= 0.5 and math.isfinite(f) and math.isfinite(den)):
        return False
    slack = 8.0 * Px.shape[0] * 2.220446049250313e-16
    for i in range(Px.shape[0]):
        v = scale * Px[i]
        if not scale * P[i, i] - v * v / den >= -slack:
            return False
    return True


@kernel
def alternative_prediction(x, E, d, Pbx):
    """(m, f, r): the alternative RLS's prediction m = wb^T x / (1 + x^T Pb x),
    clipped to [-1, 1] (where a label of -1 or +1 is nearest), and the f, r
    and Pb x (left in Pbx) that ``alternative_learn`` takes."""
    wb, Pb = _alternative(E, d)
    f, r = _rls_products(x, wb, Pb, Pbx)
    m = f / (1.0 + r)
    if not math.isfinite(m):
        m = 0.0  # a state _rls_fits will refuse to update (never with ||x|| <= 1)
    return (-1.0 if m < -1.0 else (1.0 if m > 1.0 else m)), f, r


@kernel
def alternative_learn(y, f, r, E, d, Pbx):
    """Learn the label into the alternative RLS with forgetting ALT_LAMBDA per label.

    P is divided by lambda only while its trace is at most d (the prior's):
    the directions the labels do not excite cannot wind up (the prediction
    is only the alternative's: any rule keeps the test valid).
    """
    wb, Pb = _alternative(E, d)
    trace = 0.0
    for i in range(d):
        trace += Pb[i, i]
    scale = 1.0 / ALT_LAMBDA if trace <= d else 1.0
    if _rls_fits(f, r, Pb, Pbx, scale):
        _rls_learn(y, f, r, wb, Pb, Pbx, scale)


@kernel
def eprocess_label(x, y, m_alt, clip, threshold, E, d, scratch):
    """One labelled example (x, y) with the alternative's prediction m_alt made
    before y: both instances' statistics and nulls updated, the staggered
    restart made; returns True when the test fires (log e-value >=
    ``threshold`` = log(1 / delta), then recorded in E[GLOBAL_LAST]).

    The log e-value of instance j is log E_j + log pi_j (the share delta pi_j
    of delta it spends, so that log(1 / delta) is every instance's
    threshold); the test's is the larger of the two. Its exact value needs
    an exp and a log: computed only when the bound log(e^a + e^b) <=
    max(a, b) + ln 2 does not rule the threshold out (``eprocess_score``
    gives it on demand). ``clip``: predictions clipped to [-1, 1] (labels
    in {-1, +1}). 2 (d^2 + d^2) multiply-adds.
    """
    fired = False
    for i in range(_SLOTS):
        w0, P0, s = _slot(E, d, i)
        if s[SCALAR_J] < 1.0:
            continue
        f0, r0 = _rls_products(x, w0, P0, scratch)
        if not _rls_fits(f0, r0, P0, scratch, 1.0):
            continue  # this instance does not test this label (see _rls_fits)
        e = y - f0
        jinc = e * e / (1.0 + r0)
        ma = f0 / (1.0 + r0)
        if clip:
            ma = -1.0 if ma < -1.0 else (1.0 if ma > 1.0 else ma)
        la = 0.5 * (jinc - (y - ma) * (y - ma))
        lb = 0.5 * (jinc - (y - m_alt) * (y - m_alt))
        if int(s[SCALAR_N]) % GRID == 0:  # a candidate change point opens before this label
            s[SCALAR_K] += 1.0
            s[SCALAR_R] = _log_add(s[SCALAR_R], _log_prior(s[SCALAR_K]) + s[SCALAR_LA])
            s[SCALAR_TAIL] = _log_tail(s[SCALAR_K])
        s[SCALAR_N] += 1.0
        s[SCALAR_R] += lb
        s[SCALAR_LA] += la
        a = s[SCALAR_LA] + s[SCALAR_TAIL]
        b = s[SCALAR_R]
        base = s[SCALAR_PJ] - 0.5
        if base + (a if a > b else b) + LN2 >= threshold:
            log_e = base + _log_add(a, b)
            if log_e >= threshold and (not fired or log_e > E[GLOBAL_LAST]):
                E[GLOBAL_LAST] = log_e
                fired = True
        _rls_learn(y, f0, r0, w0, P0, scratch, 1.0)
    n = int(E[GLOBAL_LABELS]) + 1
    E[GLOBAL_LABELS] = float(n)
    span = int(E[GLOBAL_SPAN])
    if n % span == 0:  # staggered restart: slot (n / span) mod 2, index n / span + 1
        q = n // span
        _start_instance(E, d, q % 2, q + 1)
    return fired


@kernel
def eprocess_score(E, d):
    """The test's current log e-value: the larger of its instances'
    -1/2 + log(tail(K) e^LA + R-sum) + log pi_j."""
    best = _NONE
    for i in range(_SLOTS):
        _w, _P, s = _slot(E, d, i)
        if s[SCALAR_J] >= 1.0:
            v = s[SCALAR_PJ] - 0.5 + _log_add(s[SCALAR_LA] + s[SCALAR_TAIL], s[SCALAR_R])
            best = v if v > best else best
    return best

def eprocess_span(d):
    """Labels between two instance starts: 2048, or 64 d from d = 32 (measured: at
    d = 10 a span of 1000 lost 4 of 10 sign flips that 2000 found, see
    docs/design/selective.md)."""
    return max(2048, 64 * d)


def eprocess_faults(E, d, span, alternative, labels_bounded, field):
    """(field, reason) for every invariant a loaded block E breaks (plain Python)."""
    faults = []
    E = np.asarray(E, dtype=np.float64)
    if E.shape[0] != eprocess_size(d, alternative):
        return [(field, f"has {E.shape[0]} values, expected {eprocess_size(d, alternative)}")]
    limit = 2.0**53

    def count(v):
        return v == math.floor(v) and 0.0 <= v <= limit

    if not E[GLOBAL_THETA] >= THETA_FLOOR:
        faults.append((field, f"holds a confidence threshold {E[GLOBAL_THETA]!r} below "
                              f"{THETA_FLOOR}"))
    if E[GLOBAL_SPAN] != span:
        faults.append((field, f"holds an instance span of {E[GLOBAL_SPAN]!r}, expected {span}"))
    if not (count(E[GLOBAL_LABELS]) and count(E[GLOBAL_ALARMS])):
        faults.append((field, "holds a label or alarm count that is not a whole number "
                              f"in [0, 2^53]: {E[GLOBAL_LABELS]!r}, {E[GLOBAL_ALARMS]!r}"))
    live = 0
    for i in range(_SLOTS):
        o = N_GLOBALS + i * (d + d * d + N_SCALARS)
        w0 = E[o : o + d]
        P0 = E[o + d : o + d + d * d].reshape((d, d))
        s = E[o + d + d * d : o + d + d * d + N_SCALARS]
        live += s[SCALAR_J] >= 1.0
        # ||w0||^2 = b^T A^-2 b <= b^T A^-1 b = sum y^2 - J_n <= n max y^2, with
        # |y| <= 1 (labels) or 1e50 (DriftAlarm's tested values).
        y2 = 1.0 if labels_bounded else 1e100
        with np.errstate(over="ignore"):
            long = not np.sum(w0 * w0) <= s[SCALAR_N] * y2 * (1.0 + 1e-9) + 1e-9
        if long:
            faults.append((field, f"instance {i}'s weights are longer than its "
                                  f"{s[SCALAR_N]:.0f} labels allow"))
        if count(s[SCALAR_J]) and s[SCALAR_J] >= 1.0 and count(s[SCALAR_K]) and not (
                abs(s[SCALAR_PJ] - python_function(_log_prior)(s[SCALAR_J])) <= 1e-9
                and abs(s[SCALAR_TAIL] - python_function(_log_tail)(s[SCALAR_K])) <= 1e-9):
            faults.append((field, f"instance {i}'s prior weights are not those of its "
                                  "index and candidates"))
        big = 1e12 if labels_bounded else 1e250
        if not (abs(s[SCALAR_LA]) <= big and _NONE <= s[SCALAR_R] <= big):
            faults.append((field, f"instance {i} holds log-ratios out of range "
                                  f"({s[SCALAR_LA]!r}, {s[SCALAR_R]!r})"))
        if not (count(s[SCALAR_J]) and count(s[SCALAR_N]) and s[SCALAR_N] <= 2 * span
                and s[SCALAR_K] == math.ceil(s[SCALAR_N] / GRID)):
            faults.append((field, f"instance {i} holds inconsistent counts "
                                  f"(index {s[SCALAR_J]!r}, labels {s[SCALAR_N]!r}, candidates "
                                  f"{s[SCALAR_K]!r})"))
        # P0 = A^-1 with A >= I: its eigenvalues in (0, 1] for labels of
        # inputs of norm <= 1 (SelectiveSampler). DriftAlarm's scaled inputs
        # reach 1e50, where rounding can make P0 indefinite: there the
        # kernel's per-label guard (_rls_fits) keeps every update finite
        # for any finite symmetric P0, and only symmetry is required.
        if not np.array_equal(P0, P0.T) or (labels_bounded and not (
                np.all(np.abs(P0) <= 1.0 + 1e-6) and np.linalg.eigvalsh(P0).min() >= -1e-6)):
            faults.append((field, f"instance {i}'s P0 is not the inverse of a symmetric "
                                  "matrix >= I"))
    if live == 0:
        faults.append((field, "holds no running instance of the test"))
    if alternative:
        o = N_GLOBALS + _SLOTS * (d + d * d + N_SCALARS)
        if not np.all(np.abs(E[o : o + d]) <= 1e12):
            faults.append((field, "the alternative's weights exceed 1e12"))
        Pb = E[o + d : o + d + d * d].reshape((d, d))
        bound = d / ALT_LAMBDA * (1.0 + 1e-6)
        if not (np.array_equal(Pb, Pb.T) and np.all(np.abs(Pb) <= bound)
                and np.trace(Pb) <= bound and np.linalg.eigvalsh(Pb).min() >= -1e-6):
            faults.append((field, "the alternative's Pb is not symmetric positive "
                                  f"semi-definite with its trace within {bound:.4g}"))
    return faults


# ------------------------------------------------------------- the drift alarm
# DriftAlarm's kernels take (X, Y, M, rows, E, N, work, hyper, codes):
#   E  learnt, float64: the test's block (no alternative RLS: the wrapped
#      model's prequential predictions are the alternative)
#   N  learnt, int64: drifts (DRIFT_RECORD), then the counts COUNT_*
#   work  float64 (2 d): the scaled input, P0 x
#   hyper  float64: the scales of x and y, delta; codes int64: span
DRIFT_RECORD = 64
COUNT_SEEN, COUNT_SKIPPED, COUNT_ALARMS = range(3)
N_COUNTS = 4
HYPER_SCALE_X, HYPER_SCALE_Y, HYPER_DELTA = range(3)
N_HYPER = 3
#: Scaled values beyond these are not tested (||x'||^2 <= 1e100, |y'|, |m'|
#: <= 1e50): every quantity of the test then stays finite (docs/design).
_X2_LIMIT = 1e100
_Y_LIMIT = 1e50


@kernel
def _drift_row(X, Y, M, t, E, N, work, hyper, span):
    """One row of the alarm: x' = x s_x, y' = y s_y, m' = m s_y into the test.

    Returns 1 on an alarm, 0 without, -1 when the row is not tested: a value
    not finite (a sample the model skipped), or beyond the limits (counted
    in COUNT_SKIPPED); nothing else is written."""
    d = X.shape[1]
    sx = hyper[HYPER_SCALE_X]
    sy = hyper[HYPER_SCALE_Y]
    y = np.float64(Y[t]) * sy
    m = np.float64(M[t]) * sy
    nn = 0.0
    xs = work[:d]
    for j in range(d):
        v = np.float64(X[t, j]) * sx
        xs[j] = v
        nn += v * v
    counts = N[DRIFT_RECORD:]
    if not (math.isfinite(nn) and math.isfinite(y) and math.isfinite(m)):
        return -1  # a sample the model skipped (it counts it)
    if not (nn <= _X2_LIMIT and abs(y) <= _Y_LIMIT and abs(m) <= _Y_LIMIT):
        counts[COUNT_SKIPPED] += 1
        return -1
    fired = eprocess_label(xs, y, m, False, -math.log(hyper[HYPER_DELTA]), E, d, work[d:])
    counts[COUNT_SEEN] += 1
    if fired:
        k = counts[COUNT_ALARMS]
        N[k % DRIFT_RECORD] = counts[COUNT_SEEN] - 1
        counts[COUNT_ALARMS] = k + 1
        eprocess_alarm(E, d, span)
        return 1
    return 0


@kernel
def drift_run(X, Y, M, rows, E, N, work, hyper, codes):
    """``_drift_row`` over rows 0 .. rows - 1; returns the alarms raised."""
    alarms = 0
    for t in range(rows):
        if _drift_row(X, Y, M, t, E, N, work, hyper, codes[0]) == 1:
            alarms += 1
    return alarms


@kernel
def _norm_fits(xn):
    """||x||^2 <= 1 (the e-process's model; normalised inputs always are)."""
    nn = 0.0
    for j in range(xn.shape[0]):
        v = np.float64(xn[j])
        nn += v * v
    return nn <= 1.0


@kernel
def _eprocess_round(xn, y, threshold, E, scratch, alt_scratch):
    """The e-process on a used label (x, y): the alternative's prediction, the
    test's update, then the alternative learns; True when the test fires."""
    d = xn.shape[0]
    m_alt, f, r = alternative_prediction(xn, E, d, alt_scratch)
    fired = eprocess_label(xn, y, m_alt, True, threshold, E, d, scratch)
    alternative_learn(y, f, r, E, d, alt_scratch)
    return fired


# Kernels here call linalg's: recompile them when it changes (see _jit).
recompile_with(globals(), _linalg_kernels)
