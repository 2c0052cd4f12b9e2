"""A comparison test: is a candidate forecaster doing better than the incumbent?

Shared by SelectiveSampler's default switch test (``switch_test="compare"``)
and DriftAlarm's default alarm (``test="compare"``); the derivation, the
guarantee and the measured choices are docs/design/switch-tests.md.

Each tested round i gives a loss difference delta_i = (loss of the incumbent
- loss of the candidate) / B in [-1, 1], both predictions made before y_i
(0/1 losses for labels, B = 1; clipped squared losses for regression, B the
most they can differ given both predictions: DriftAlarm's side,
``compare_drift.py``). For a fixed bet l in [0, 1) the wealth
W_n(l) = prod_i (1 + l delta_i) satisfies W_n(l) <= M_n(l) =
prod_i (1 + l delta_i) / (1 + l mu_i), mu_i = E[delta_i | past], whenever
sum_i mu_i <= 0 for every n (the candidate is, cumulatively, no better than
the incumbent: the weak null of Choe and Ramdas), since
prod_i (1 + l mu_i) <= exp(l sum_i mu_i) <= 1; M_n(l) is a nonnegative
martingale of initial value 1. The mixture over the bets ``BETS`` (equal
weights) is too, and Ville's inequality bounds P(it ever reaches 1 / a) by a.
The bets are fixed: a bet chosen from the past would break the step from the
weak null to prod (1 + l_i mu_i) <= 1.

log(1 + l delta) is not kept per bet: it is bounded below by two forms of
four sums (S = sum delta, V = sum delta^2, and over the positive deltas
P = sum delta, VP = sum delta^2), each bet taking the larger. For
delta < 0 both use Fan's l delta - psi(l) delta^2, psi(l) = -log(1 - l) - l
(exact at delta = -1); for delta >= 0 one uses l delta - l^2 delta^2 / 2
(close for small deltas: regression) and the other the chord
delta log(1 + l) (exact at delta = 1: with 0/1 losses, delta in {-1, 0, 1},
it is the wealth itself).
The test runs as staggered instances (a new one every ``span`` tested
rounds, each living 2 span; the j-th spends delta pi_j of delta, pi_j as in
``eprocess._log_prior``), so the evidence a change must overcome does not
grow with the epoch: P(any instance of an epoch alarms) <= delta when the
weak null holds from each instance's start.

Block ``C`` (float64): 8 globals, two instance slots of 8 scalars, then
(SelectiveSampler) the candidate RLS wc (d), Pc (d x d), or (DriftAlarm) the
incumbent RLS w0 (d), P0 (d x d) and its epoch's statistics of y (8).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel, kernel, python_function, recompile_with
from . import eprocess as _eprocess_kernels
from .eprocess import _NONE, THETA_FLOOR, THETA_START, _log_add, _log_prior, _reset_rls

#: The bets l of the mixture (equal weights).
BETS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9)
N_BETS = 9
#: psi(l) = -log(1 - l) - l of each bet (Fan's inequality, the negative deltas).
PSI = tuple(-math.log1p(-lam) - lam for lam in BETS)
#: l^2 / 2 of each bet (log(1 + x) >= x - x^2 / 2 for x >= 0, the positive deltas).
HALF_SQUARE = tuple(0.5 * lam * lam for lam in BETS)
#: log(1 + l) of each bet (the chord of log(1 + l delta) over delta in [0, 1]).
LOG_GAIN = tuple(math.log1p(lam) for lam in BETS)
#: log(number of bets): the mixture's log is log-sum-exp minus this.
_LOG_N_BETS = math.log(9.0)
#: The candidate RLS's memory (SelectiveSampler): 1 / (1 - lambda) =
#: CANDIDATE_MEMORY_PER_INPUT d + CANDIDATE_MEMORY_BASE labels (20 at d = 3,
#: 48 at d = 10). Proportional to d, its excess risk over the shadow's is about
#: the same at every d; shorter, it turns sooner after a switch
#: (docs/design/switch-tests.md, "The candidate's memory").
CANDIDATE_MEMORY_PER_INPUT = 4.0
CANDIDATE_MEMORY_BASE = 8.0


def candidate_lambda(d):
    """The candidate's forgetting factor per label at dimension d."""
    return 1.0 - 1.0 / (CANDIDATE_MEMORY_PER_INPUT * d + CANDIDATE_MEMORY_BASE)
#: SelectiveSampler's comparison starts no ordinary instance in an epoch's
#: first WAIT_SPANS spans of tested rounds (``compare_restart``): while the
#: classifier that picks the tested rounds settles, a forgetting candidate can
#: be genuinely better on them (XOR labels), and the weak null fails.
WAIT_SPANS = 3
#: During that wait it runs *early* instances, which test the shifted null
#: "the candidate is better by at most EARLY_MARGIN" (in 0/1 error on the
#: tested rounds): delta enters their sums as (delta - EARLY_MARGIN) /
#: (1 + EARLY_MARGIN), still in [-1, 1]. The weak null implies the shifted
#: one, so they keep the guarantee; only a large advantage (a sign flip, not
#: the selection settling) makes them fire.
EARLY_MARGIN = 0.2
#: An early instance starts every span / EARLY_PER_SPAN tested rounds, so that
#: one is never far behind a change (each would otherwise carry the deficit
#: the shifted deltas pile up before it).
EARLY_PER_SPAN = 8
#: log of an early instance's share of delta: together they spend what the
#: ordinary instances 1 .. WAIT_SPANS would (pi_1 + ... + pi_WAIT_SPANS =
#: 1 - ln 2 / ln(WAIT_SPANS + 2)), in equal parts.
EARLY_LOG_PRIOR = math.log((1.0 - math.log(2.0) / math.log(WAIT_SPANS + 2.0))
                           / (WAIT_SPANS * EARLY_PER_SPAN))

# Globals (C[:8]).
# GLOBAL_LAST and GLOBAL_THETA are at the e-process's GLOBAL_LAST and GLOBAL_THETA: the
# class reads both tests' last alarm and threshold alike.
GLOBAL_LABELS = 0  # tested rounds in the epoch
GLOBAL_SPAN = 1  # tested rounds between two instance starts
GLOBAL_ALARMS = 2  # alarms raised (total)
GLOBAL_ROWS = 3  # DriftAlarm: rows of the epoch the incumbent has learnt
GLOBAL_LAST = 4  # log e-value of the last alarm
GLOBAL_THETA = 5  # the confidence threshold of the test rounds (SelectiveSampler)
GLOBAL_WAIT = 6  # 1: no instance before ``span`` tested rounds of an epoch (SelectiveSampler)
N_GLOBALS = 8
# An instance's scalars.
SCALAR_S = 0  # sum of delta
SCALAR_V = 1  # sum of delta^2
SCALAR_N = 2  # tested rounds seen
SCALAR_J = 3  # its index j (spends delta pi_j); 0: not started
SCALAR_PJ = 4  # log pi_j
SCALAR_P = 5  # sum of the positive deltas
SCALAR_VP = 6  # sum of the positive deltas' squares
SCALAR_MARGIN = 7  # 0, or EARLY_MARGIN for an early instance (its shifted null)
N_SCALARS = 8
_SLOTS = 2
# DriftAlarm's statistics of y in the epoch (after the incumbent RLS).
YSTAT_MEAN = 0
YSTAT_ABSDEV = 1
N_YSTATS = 8


def compare_size(d, drift):
    """Length of the block C: globals, two instances, an RLS, then (DriftAlarm) y's
    statistics or (SelectiveSampler) the shadow RLS."""
    return N_GLOBALS + _SLOTS * N_SCALARS + d + d * d + (N_YSTATS if drift else d + d * d)


@inline_kernel
def _slot(C, i):
    o = N_GLOBALS + i * N_SCALARS
    return C[o : o + N_SCALARS]


@inline_kernel
def compare_rls(C, d):
    """(w, P) of the block's RLS: the candidate (SelectiveSampler) or the incumbent (DriftAlarm)."""
    o = N_GLOBALS + _SLOTS * N_SCALARS
    return C[o : o + d], C[o + d : o + d + d * d].reshape((d, d))


@inline_kernel
def shadow_rls(C, d):
    """(w, P) of SelectiveSampler's shadow: an RLS without forgetting on the labels
    the candidate learns, since the epoch's start (the test's incumbent)."""
    o = N_GLOBALS + _SLOTS * N_SCALARS + d + d * d
    return C[o : o + d], C[o + d : o + d + d * d].reshape((d, d))


@inline_kernel
def _ystats(C, d):
    o = N_GLOBALS + _SLOTS * N_SCALARS + d + d * d
    return C[o : o + N_YSTATS]


@inline_kernel
def _start(C, i, j, log_prior, margin):
    """Instance slot i starts afresh as number j, spending exp(log_prior) of
    delta, with its margin (C indexed directly)."""
    o = N_GLOBALS + i * N_SCALARS
    for k in range(N_SCALARS):
        C[o + k] = 0.0
    C[o + SCALAR_J] = float(j)
    C[o + SCALAR_PJ] = log_prior
    C[o + SCALAR_MARGIN] = margin


@inline_kernel
def _start_instance(C, i, j):
    """Instance slot i starts as the j-th ordinary instance of the epoch."""
    _start(C, i, j, _log_prior(float(j)), 0.0)


@inline_kernel
def _start_early(C, i, k):
    """Instance slot i starts as the epoch's k-th early instance."""
    _start(C, i, k, EARLY_LOG_PRIOR, EARLY_MARGIN)


@kernel
def compare_restart(C, span):
    """A new epoch: instance 1 starts (DriftAlarm: after its incumbent's burn-in),
    slot 1 waits ``span`` tested rounds. SelectiveSampler's block (the one with a
    shadow) starts no ordinary instance before ``WAIT_SPANS`` spans of tested
    rounds, until the shadow has learnt that many labels and the classifier,
    which picks the tested rounds, has settled (XOR labels on [0, 1]^2, 20
    runs: a switch in 5 with a wait of two spans, 1 with three;
    docs/design/switch-tests.md); early instance 1 starts instead."""
    C[GLOBAL_LABELS] = 0.0
    C[GLOBAL_SPAN] = float(span)
    C[GLOBAL_ROWS] = 0.0
    for i in range(_SLOTS):
        o = N_GLOBALS + i * N_SCALARS
        for k in range(N_SCALARS):
            C[o + k] = 0.0
    if C[GLOBAL_WAIT] == 0.0:
        _start_instance(C, 0, 1)
    else:
        _start_early(C, 0, 1)


@kernel
def compare_init(C, d, span):
    """A fresh block: globals, ``compare_restart``, the RLS at its prior (w = 0, P = I)."""
    for k in range(N_GLOBALS):
        C[k] = 0.0
    C[GLOBAL_THETA] = THETA_START
    drift = C.shape[0] == N_GLOBALS + _SLOTS * N_SCALARS + d + d * d + N_YSTATS
    C[GLOBAL_WAIT] = 0.0 if drift else 1.0
    compare_restart(C, span)
    w, P = compare_rls(C, d)
    _reset_rls(w, P)
    if drift:
        ys = _ystats(C, d)
        for k in range(N_YSTATS):
            ys[k] = 0.0
    else:
        ws, Ps = shadow_rls(C, d)
        _reset_rls(ws, Ps)


@inline_kernel
def _bet_bound(k, S, V, P, VP):
    """A lower bound of log prod_i (1 + l_k delta_i) from the four sums: the
    larger of its two forms (module docstring)."""
    lam = BETS[k]
    negative = PSI[k] * (V - VP)
    a = lam * S - HALF_SQUARE[k] * VP - negative
    b = LOG_GAIN[k] * P + lam * (S - P) - negative
    return a if a > b else b


@kernel
def _log_wealth(S, V, P, VP):
    """log of the mixture (1 / K) sum_k exp(bound_k) over the bets, bound_k
    ``_bet_bound``'s lower bound of log prod_i (1 + l_k delta_i)."""
    total = _NONE
    for k in range(N_BETS):
        total = _log_add(total, _bet_bound(k, S, V, P, VP))
    return total - _LOG_N_BETS


@kernel
def _log_wealth_bound(S, V, P, VP):
    """max_k bound_k >= ``_log_wealth``: rules the threshold out without a logarithm."""
    best = _NONE
    for k in range(N_BETS):
        a = _bet_bound(k, S, V, P, VP)
        best = a if a > best else best
    return best


@inline_kernel
def compare_label(delta, threshold, C, early):
    """One tested round with loss difference ``delta`` in [-1, 1] (incumbent's
    minus candidate's): every running instance's sums updated, the staggered
    start made; True when an instance's log e-value (its log wealth + log pi_j)
    reaches ``threshold`` = log(1 / delta_level), recorded in C[GLOBAL_LAST].
    ``early``: a literal, True where the block can hold early instances
    (SelectiveSampler's), False for DriftAlarm's, whose rows then carry no
    test of an instance's margin.

    C is indexed directly (no views: a view made per round costs two atomic
    reference counts, more than the round's arithmetic)."""
    fired = False
    for i in range(_SLOTS):
        o = N_GLOBALS + i * N_SCALARS
        if C[o + SCALAR_J] < 1.0:
            continue
        dl = delta
        if early:
            margin = C[o + SCALAR_MARGIN]
            if margin != 0.0:
                dl = (delta - margin) / (1.0 + margin)
        S = C[o + SCALAR_S] + dl
        V = C[o + SCALAR_V] + dl * dl
        C[o + SCALAR_S] = S
        C[o + SCALAR_V] = V
        # Without a branch (the sign of delta is a coin toss on a stationary
        # stream: a mispredicted branch a row cost DriftAlarm ~5 ns at d = 10);
        # adding 0.0 leaves the sums as they are.
        positive = dl if dl > 0.0 else 0.0
        C[o + SCALAR_P] += positive
        C[o + SCALAR_VP] += positive * positive
        C[o + SCALAR_N] += 1.0
        pj = C[o + SCALAR_PJ]
        # Both forms of every bound_k are at most l_k S (log(1 + l) <= l):
        # max_k bound_k <= l_max max(S, 0), and most rounds end here.
        if pj + BETS[N_BETS - 1] * S >= threshold and pj + _log_wealth_bound(
                S, V, C[o + SCALAR_P], C[o + SCALAR_VP]) >= threshold:
            log_e = pj + _log_wealth(S, V, C[o + SCALAR_P], C[o + SCALAR_VP])
            if log_e >= threshold and (not fired or log_e > C[GLOBAL_LAST]):
                C[GLOBAL_LAST] = log_e
                fired = True
    n = int(C[GLOBAL_LABELS]) + 1
    C[GLOBAL_LABELS] = float(n)
    span = int(C[GLOBAL_SPAN])
    if early and C[GLOBAL_WAIT] == 1.0 and n < WAIT_SPANS * span:
        # The wait: an early instance every span / EARLY_PER_SPAN tested rounds,
        # each living until its slot is taken (the last one in slot 0 runs on
        # until instance WAIT_SPANS + 2 takes it).
        every = span // EARLY_PER_SPAN
        if n % every == 0:
            k = n // every
            _start_early(C, k % 2, k + 1)
    elif n % span == 0:
        q = n // span
        _start_instance(C, q % 2, q + 1)
    return fired


@kernel
def compare_score(C):
    """The test's current log e-value: the larger of its instances' log wealth + log pi_j."""
    best = _NONE
    for i in range(_SLOTS):
        s = _slot(C, i)
        if s[SCALAR_J] >= 1.0:
            v = s[SCALAR_PJ] + _log_wealth(s[SCALAR_S], s[SCALAR_V], s[SCALAR_P], s[SCALAR_VP])
            best = v if v > best else best
    return best


@kernel
def compare_alarm(C, span):
    """The test fired: count the alarm, then ``compare_restart``."""
    C[GLOBAL_ALARMS] += 1.0
    compare_restart(C, span)


@inline_kernel
def rls_products(x, w, P, Px):
    """Px = P x (row axpys, ``linalg.symv``'s order); returns (w^T x, x^T P x)."""
    d = w.shape[0]
    for j in range(d):
        Px[j] = 0.0
    for i in range(d):
        xi = np.float64(x[i])
        for j in range(d):
            Px[j] += xi * P[i, j]
    f = 0.0
    r = 0.0
    for j in range(d):
        xj = np.float64(x[j])
        f += w[j] * xj
        r += xj * Px[j]
    return f, r


@inline_kernel
def rls_fits(f, r, P, Px, scale):
    """``eprocess._rls_fits``: f finite, 1 + s r >= 1/2 and every updated
    diagonal entry >= -8 d eps (refused labels are not learnt; the refusal
    depends on x and the past only)."""
    den = 1.0 + scale * r
    if not (den >= 0.5 and math.isfinite(f) and math.isfinite(den)):
        return False
    slack = 8.0 * Px.shape[0] * 2.220446049250313e-16
    for i in range(Px.shape[0]):
        v = scale * Px[i]
        if not scale * P[i, i] - v * v / den >= -slack:
            return False
    return True


@inline_kernel
def rls_learn(y, f, r, w, P, Px, scale):
    """Learn (x, y) given Px = P x, f = w^T x, r = x^T P x, with P first scaled
    by ``scale`` (1 / lambda; 1: no forgetting), in one pass over P
    (SelectiveSampler's candidate and shadow; DriftAlarm's incumbent runs
    DFOP's pass, ``compare_drift.compare_drift_run``)."""
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
        for j in range(d):
            P[i, j] = P[i, j] * scale - ui * Px[j]


# ----------------------------------------------------- SelectiveSampler's side
@inline_kernel
def candidate_prediction(x, C, d, Pcx):
    """(fc, r): the candidate RLS's margin wc^T x and x^T Pc x (Pc x left in Pcx)."""
    wc, Pc = compare_rls(C, d)
    return rls_products(x, wc, Pc, Pcx)


@inline_kernel
def candidate_learn(y, f, r, C, d, Pcx):
    """The candidate learns (x, y) with forgetting lambda = 1 - 1 / m per
    label, m = ``candidate_lambda``'s memory; P is divided by lambda
    (multiplied by m / (m - 1)) only while its trace is at most d (the
    prior's), so the directions the labels do not excite cannot wind up."""
    wc, Pc = compare_rls(C, d)
    trace = 0.0
    for i in range(d):
        trace += Pc[i, i]
    memory = CANDIDATE_MEMORY_PER_INPUT * d + CANDIDATE_MEMORY_BASE
    scale = 1.0 + 1.0 / (memory - 1.0) if trace <= d else 1.0
    if rls_fits(f, r, Pc, Pcx, scale):
        rls_learn(y, f, r, wc, Pc, Pcx, scale)


@inline_kernel
def shadow_prediction(x, C, d, Psx):
    """(fs, r): the shadow RLS's margin ws^T x and x^T Ps x (Ps x left in Psx)."""
    ws, Ps = shadow_rls(C, d)
    return rls_products(x, ws, Ps, Psx)


@inline_kernel
def shadow_learn(y, f, r, C, d, Psx):
    """The shadow learns (x, y), without forgetting."""
    ws, Ps = shadow_rls(C, d)
    if rls_fits(f, r, Ps, Psx, 1.0):
        rls_learn(y, f, r, ws, Ps, Psx, 1.0)


@kernel
def shadow_restart(C, d, x, Psx):
    """At a switch the shadow restarts from the candidate's weights (ws = wc,
    Ps = I, as the classifier); returns its (fs, r) for x, Ps x = x in Psx."""
    wc, _pc = compare_rls(C, d)
    ws, Ps = shadow_rls(C, d)
    _reset_rls(ws, Ps)
    f = 0.0
    r = 0.0
    for j in range(d):
        ws[j] = wc[j]
        xj = np.float64(x[j])
        Psx[j] = xj
        f += ws[j] * xj
        r += xj * xj
    return f, r


@inline_kernel
def wrong(f, y):
    """1.0 when sign(f) (sign(0) = +1) is not the label y in {-1, +1}, else 0.0."""
    return 1.0 if (f >= 0.0) != (y > 0.0) else 0.0


@inline_kernel
def track_confidence(C, margin, up, down):
    """``eprocess.track_confidence`` on this block's threshold."""
    theta = C[GLOBAL_THETA]
    theta *= up if margin > theta else down
    C[GLOBAL_THETA] = theta if theta > THETA_FLOOR else THETA_FLOOR


def compare_span(d):
    """Tested rounds between two instance starts (SelectiveSampler)."""
    return 256


def compare_faults(C, d, span, drift, field):
    """(field, reason) for every invariant a loaded block C breaks (plain Python)."""
    faults = []
    C = np.asarray(C, dtype=np.float64)
    if C.shape[0] != compare_size(d, drift):
        return [(field, f"has {C.shape[0]} values, expected {compare_size(d, drift)}")]
    limit = 2.0**53

    def count(v):
        return v == math.floor(v) and 0.0 <= v <= limit

    if not np.all(np.isfinite(C)):
        faults.append((field, "holds a value that is not finite"))
        return faults
    if C[GLOBAL_SPAN] != span:
        faults.append((field, f"holds an instance span of {C[GLOBAL_SPAN]!r}, expected {span}"))
    if not (count(C[GLOBAL_LABELS]) and count(C[GLOBAL_ALARMS]) and count(C[GLOBAL_ROWS])):
        faults.append((field, "holds a count that is not a whole number in [0, 2^53]"))
    if not C[GLOBAL_THETA] >= THETA_FLOOR:
        faults.append((field, f"holds a confidence threshold {C[GLOBAL_THETA]!r} below "
                              f"{THETA_FLOOR}"))
    live = 0
    for i in range(_SLOTS):
        s = C[N_GLOBALS + i * N_SCALARS : N_GLOBALS + (i + 1) * N_SCALARS]
        if s[SCALAR_J] >= 1.0:
            live += 1
            early = s[SCALAR_MARGIN] != 0.0
            prior = EARLY_LOG_PRIOR if early else python_function(_log_prior)(s[SCALAR_J])
            if not (count(s[SCALAR_J]) and count(s[SCALAR_N]) and s[SCALAR_N] <= 2 * span
                    and abs(s[SCALAR_S]) <= s[SCALAR_N] and 0.0 <= s[SCALAR_V] <= s[SCALAR_N]
                    and 0.0 <= s[SCALAR_P] <= s[SCALAR_N] and 0.0 <= s[SCALAR_VP] <= s[SCALAR_V]
                    and abs(s[SCALAR_PJ] - prior) <= 1e-9):
                faults.append((field, f"instance {i} holds inconsistent sums or counts"))
            elif early and not (s[SCALAR_MARGIN] == EARLY_MARGIN and not drift
                                and s[SCALAR_J] <= WAIT_SPANS * EARLY_PER_SPAN):
                faults.append((field, f"instance {i} holds an early instance's margin "
                                      f"{s[SCALAR_MARGIN]!r} it cannot have"))
    if C[GLOBAL_WAIT] != (0.0 if drift else 1.0):
        faults.append((field, f"holds a wait flag {C[GLOBAL_WAIT]!r} of the other model"))
    # (a file written before the early instances may hold none during the wait)
    if live == 0 and not (C[GLOBAL_WAIT] == 1.0 and C[GLOBAL_LABELS] < WAIT_SPANS * span):
        faults.append((field, "holds no running instance of the test"))
    o = N_GLOBALS + _SLOTS * N_SCALARS
    P = C[o + d : o + d + d * d].reshape((d, d))
    if not np.array_equal(P, P.T):
        faults.append((field, "the RLS's P is not symmetric"))
    elif not drift:
        bound = d / candidate_lambda(d) * (1.0 + 1e-6)
        if not (np.all(np.abs(P) <= bound) and np.trace(P) <= bound
                and np.linalg.eigvalsh(P).min() >= -1e-6):
            faults.append((field, "the candidate's P is not symmetric positive "
                                  f"semi-definite with its trace within {bound:.4g}"))
        if not np.all(np.abs(C[o : o + d]) <= 1e12):
            faults.append((field, "the candidate's weights exceed 1e12"))
        o2 = o + d + d * d
        Ps = C[o2 + d : o2 + d + d * d].reshape((d, d))
        if not (np.array_equal(Ps, Ps.T) and np.all(np.abs(Ps) <= 1.0 + 1e-6)
                and np.all(np.abs(C[o2 : o2 + d]) <= 1e12)):
            faults.append((field, "the shadow RLS is not symmetric with entries in [-1, 1] "
                                  "and weights within 1e12"))
    return faults


# Kernels here call eprocess's: recompile them when they change (see _jit).
recompile_with(globals(), _eprocess_kernels)
