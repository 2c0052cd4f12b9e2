r"""Selective sampling with switch detection: BBQ + a demo classifier (SPEC.md section 4).

A linear classifier y in {-1, +1} that asks for few labels (the BBQ rule of
Cesa-Bianchi, Gentile & Orabona) and restarts itself when the concept
switches, as in "Learning Drifting Data Using Selective Sampling".

Estimator (rounds t = 1, 2, ... of the current epoch, inputs of unit norm)
---------------------------------------------------------------------------
RLS on the queried examples only, with A_{t-1} = I + sum_{queried i} x_i x_i^T
and b_{t-1} = sum_{queried i} y_i x_i. The round-t quantities include the
current input:

    A_t = A_{t-1} + x_t x_t^T,   w_t = A_t^{-1} b_{t-1},   r_t = x_t^T A_t^{-1} x_t .

Only P = A_{t-1}^{-1} and w_{t-1} = A_{t-1}^{-1} b_{t-1} are stored (the RLS
state of :func:`edgereg.dfop._dfop_step` with lambda = 1 and P0 = I, which is
exactly A^{-1} b after learning the queried examples). With
r' = x^T A_{t-1}^{-1} x, Sherman-Morrison gives A_t^{-1} = P - P x x^T P / (1 + r'), hence

    r_t       = r' - r'^2 / (1 + r') = r' / (1 + r'),
    w_t^T x_t = w_{t-1}^T x - r' w_{t-1}^T x / (1 + r') = w_{t-1}^T x / (1 + r'),

so the margin needs one product P x (O(d^2)) and no extra matrix, and the
prediction sign(w_t^T x_t) = sign(w_{t-1}^T x_t) (1 + r' > 0; sign(0) = +1).

Query rule (BBQ): ask for y_t iff r_t > t^-kappa. A queried example is then
learnt by one Sherman-Morrison step (``_dfop_step``, lambda = 1), O(d^2).

Switch detection
----------------
A demo classifier h (same RLS, P_h = A_L^{-1}, weights h) is fitted on the
window of the last L_t labelled examples, L_t = min(window0 + floor(sqrt(t)),
window_max). With r'_L = x^T A_L^{-1} x, as above r_{L_t} = r'_L / (1 + r'_L)
and h_t^T x = h^T x / (1 + r'_L). Every round (queried or not: the test needs
no label),

    C_t     = |w_t^T x_t - h_t^T x_t|
    delta_t = delta / (t (t + 1)),   c = sqrt(2 ln(2 / delta_t)) + 1
    K_t     = c sqrt(r_t) + r_t + c sqrt(r_{L_t}) + r_{L_t}

and C_t > K_t declares a switch at this round.

Choices where SPEC.md section 4 is open (the reference in tests/reference.py
makes the same ones):

* t counts *every* round (every sample processed, queried or not) since the
  last restart; the current round is t = counts + 1. The same t drives the
  query threshold t^-kappa, delta_t, L_t and the rebuild schedule.
* The demo classifier needs consecutive fresh labels: in the last L_t rounds
  before each scheduled rebuild (the *demo rounds*, t - t_rebuild >
  (rebuild_every - 1) L_t) every label is asked. These are the SPEC's
  "about T / K extra labels": they go to the window only; the estimator w
  learns the BBQ queries only (so w, r_t and the query rate stay those of
  BBQ, and its label count stays O(d T^kappa ln T)). The labels used are the
  union of both (``n_queries_``; ``n_demo_queries_`` counts the extra ones).
  Why not a window of the BBQ queries only (no extra labels): measured on
  1e5-step switch streams (d = 2..5), BBQ asks about 1% of the labels
  around t = 5e4, so L_t = 274 queried labels span tens of thousands of
  rounds and a switch at ||u - v|| <= 1 was never detected within 5e4
  rounds. The window is a ring buffer of capacity ``window_max`` holding every
  label used (in ``learn_one``/``learn_many`` every example is labelled and
  learnt); it survives a restart.
* "Rebuilt every K L_t rounds": at the end of round t, if
  t - t_rebuild >= rebuild_every * L_t, the demo classifier is refitted from
  scratch (A_L = I, h = 0) by RLS steps (``_dfop_step``, lambda = 1) over the
  last min(L_t, labels in the window) examples in chronological order, and
  t_rebuild = t. Between rebuilds h is frozen. Cost O(L_t d^2) every
  rebuild_every * L_t rounds: O(d^2 / rebuild_every) amortised.
* Order within a round: predict and decide the query from the state before
  the round; test for a switch with that same state; on a switch reset
  A = I, b = 0 (P = I, w = 0), record the step and make this round t = 1 of
  the new epoch (t_rebuild = 0); then, if queried, learn (x_t, y_t) into the
  (possibly fresh) estimator and push it into the window; then the rebuild
  check.

False alarms: each of the two estimators is within c sqrt(r) + r of the
stationary concept's margin with probability >= 1 - delta_t (SPEC), so a
union bound over t gives P(any false switch in an epoch) <= 2 sum_t delta_t =
2 delta (delta for each estimator's bound). examples/selective_evaluation.py
measures the rate.

The kernels never allocate: every temporary is a ``work*`` array of the
state; non-finite input is reported with a status before anything is written.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ._base import OnlineModel
from ._jit import kernel
from ._validate import as_row, check_float, check_int
from .dfop import _dfop_predict_many, _dfop_predict_one, _dfop_step, _symv

__all__ = ["SelectiveSampler", "SelectiveState"]

OK = 0
INVALID = 1

#: Capacity of the record of switch steps (the most recent ones are kept; the
#: total is counted without limit). Fixed memory: 64 int64.
SWITCH_RECORD = 64

# Indices into ``counts``.
_SEEN = 0  # valid rounds processed (queried or not)
_SKIPPED = 1  # samples skipped as invalid
_T = 2  # rounds of the current epoch (since the last restart)
_QUERIES = 3  # labels used
_SWITCHES = 4  # switches declared (total)
_HEAD = 5  # next write position in the window ring
_SIZE = 6  # labelled examples in the window
_REBUILT = 7  # epoch round t of the last demo rebuild
_REBUILDS = 8  # demo rebuilds (total)
_DEMO = 9  # labels asked for the demo classifier only (demo rounds BBQ did not query)
_N_COUNTS = 10

# What a round does with its label (``_assess``'s decision).
NO_LABEL = 0
DEMO_LABEL = 1  # asked for the demo window only
BBQ_LABEL = 2  # asked by the BBQ rule (or given, in learn mode): learnt by the estimator

_INF = np.inf


class SelectiveState(NamedTuple):
    """Fixed memory: 2 d^2 + (window_max + 5) d + window_max values, 64 + 10 int64."""

    w: np.ndarray  # (d,) w_{t-1} = A^-1 b of the current epoch
    P: np.ndarray  # (d, d) A^-1, exactly symmetric
    demo_w: np.ndarray  # (d,) demo classifier h
    demo_P: np.ndarray  # (d, d) A_L^-1 of the demo classifier
    window_X: np.ndarray  # (window_max, d) ring of the last labelled (normalised) inputs
    window_y: np.ndarray  # (window_max,) their labels
    switches: np.ndarray  # int64 (SWITCH_RECORD,) ring of the latest switch steps
    counts: np.ndarray  # int64 (10,): see the _SEEN.._DEMO indices
    work_x: np.ndarray  # (d,) scratch: the normalised input
    work_px: np.ndarray  # (d,) scratch: A^-1 x
    work_hx: np.ndarray  # (d,) scratch: A_L^-1 x


def _allocate(n_features: int, window_max: int, dtype: np.dtype) -> SelectiveState:
    d = n_features
    return SelectiveState(
        w=np.zeros(d, dtype=dtype),
        P=np.eye(d, dtype=dtype),
        demo_w=np.zeros(d, dtype=dtype),
        demo_P=np.eye(d, dtype=dtype),
        window_X=np.zeros((window_max, d), dtype=dtype),
        window_y=np.zeros(window_max, dtype=dtype),
        switches=np.full(SWITCH_RECORD, -1, dtype=np.int64),
        counts=np.zeros(_N_COUNTS, dtype=np.int64),
        work_x=np.zeros(d, dtype=dtype),
        work_px=np.zeros(d, dtype=dtype),
        work_hx=np.zeros(d, dtype=dtype),
    )


# --------------------------------------------------------------------- kernels
@kernel
def _prepare(x, normalize, xn):
    """xn = x / ||x|| (x = 0 stays 0), or a copy; False if x is not finite.

    The norm is taken of x / max|x_j| so that it neither overflows nor
    underflows for any finite x.
    """
    d = x.shape[0]
    m = 0.0
    for j in range(d):
        a = abs(x[j])
        if not np.isfinite(a):
            return False
        if a > m:
            m = a
    if not normalize:
        for j in range(d):
            xn[j] = x[j]
        return True
    if m == 0.0:
        for j in range(d):
            xn[j] = 0.0
        return True
    inv_m = 1.0 / m
    ss = 0.0
    for j in range(d):
        v = x[j] * inv_m
        ss += v * v
    scale = inv_m / math.sqrt(ss)  # ss in [1, d]: no overflow
    for j in range(d):
        xn[j] = x[j] * scale
    return True


@kernel
def _dot(a, b):
    acc = 0.0
    for j in range(a.shape[0]):
        acc += a[j] * b[j]
    return acc


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
def _assess(x, normalize, detect, kappa, window0, rebuild_every, forced, w, P, hw, hP,
            window_X, counts, xn, Px, hx):
    """Round quantities from the state before the round; writes only work arrays.

    Returns ``(f, rp, g, rLp, ask, status)`` with f = w_{t-1}^T x,
    rp = x^T A_{t-1}^-1 x, g = h^T x, rLp = x^T A_L^-1 x (0 when not
    detecting) and what to do with the label: BBQ_LABEL when forced or
    r_t > t^-kappa, else DEMO_LABEL in a demo round, else NO_LABEL.
    Status INVALID when x (or anything derived) is not finite.
    """
    if not _prepare(x, normalize, xn):
        return 0.0, 0.0, 0.0, 0.0, NO_LABEL, INVALID
    _symv(P, xn, Px)
    f = _dot(w, xn)
    rp = _dot(xn, Px)
    nn = _dot(xn, xn)  # A = I after a restart: x^T A^-1 x = ||x||^2 must be finite too
    g = 0.0
    rLp = 0.0
    if detect:
        _symv(hP, xn, hx)
        g = _dot(hw, xn)
        rLp = _dot(xn, hx)
    if not (np.isfinite(f) and np.isfinite(rp) and np.isfinite(nn)
            and np.isfinite(g) and np.isfinite(rLp)):
        return f, rp, g, rLp, NO_LABEL, INVALID
    if forced:
        return f, rp, g, rLp, BBQ_LABEL, OK
    t = counts[_T] + 1
    r = rp / (1.0 + rp)
    if r > float(t) ** (-kappa):
        return f, rp, g, rLp, BBQ_LABEL, OK
    if detect:
        # Demo rounds: the last L_t rounds before the scheduled rebuild.
        L = _window_length(t, window0, window_X.shape[0])
        if t - counts[_REBUILT] > (rebuild_every - 1) * L:
            return f, rp, g, rLp, DEMO_LABEL, OK
    return f, rp, g, rLp, NO_LABEL, OK


@kernel
def _switch_test(f, rp, g, rLp, t, delta):
    """C_t > K_t with the margins and r's of SPEC.md section 4 (see module notes)."""
    r = rp / (1.0 + rp)
    rL = rLp / (1.0 + rLp)
    C = abs(f / (1.0 + rp) - g / (1.0 + rLp))
    tf = float(t)
    delta_t = delta / (tf * (tf + 1.0))
    c = math.sqrt(2.0 * math.log(2.0 / delta_t)) + 1.0
    K = c * math.sqrt(r) + r + c * math.sqrt(rL) + rL
    return C > K


@kernel
def _rebuild(window_X, window_y, counts, m, hw, hP, hx):
    """Refit the demo classifier from scratch on the last m labelled examples."""
    d = hw.shape[0]
    for i in range(d):
        hw[i] = 0.0
        Pi = hP[i]
        for j in range(d):
            Pi[j] = 0.0
        Pi[i] = 1.0
    cap = window_X.shape[0]
    start = counts[_HEAD] - m
    if start < 0:
        start += cap
    for k in range(m):
        i = start + k
        if i >= cap:
            i -= cap
        # Window entries were finite when stored: the step cannot fail.
        _dfop_step(window_X[i], window_y[i], 1.0, hw, hP, hx, _INF)


@kernel
def _commit(xn, y, ask, learnt, f, rp, g, rLp, detect, delta, window0, rebuild_every,
            w, P, hw, hP, window_X, window_y, switches, counts, Px, hx):
    """Finish a round assessed by ``_assess``: switch test, restart, learn, rebuild.

    ``ask``: NO_LABEL (y unused), DEMO_LABEL (y goes to the window) or
    BBQ_LABEL (y is learnt by the estimator and goes to the window).
    ``learnt``: the learn path already applied the BBQ step to the
    estimator (it is redone from A = I if the round restarts it).

    Returns ``(status, switched)``; INVALID (a queried label that is not
    finite) is returned before anything is written.
    """
    if ask != NO_LABEL and not np.isfinite(y):
        return INVALID, False
    d = xn.shape[0]
    t = counts[_T] + 1
    switched = False
    if detect and _switch_test(f, rp, g, rLp, t, delta):
        switched = True
        k = counts[_SWITCHES]
        switches[k % switches.shape[0]] = counts[_SEEN]
        counts[_SWITCHES] = k + 1
        for i in range(d):
            w[i] = 0.0
            Pi = P[i]
            for j in range(d):
                Pi[j] = 0.0
            Pi[i] = 1.0
        t = 1
        counts[_REBUILT] = 0
        learnt = False
    if ask == BBQ_LABEL and not learnt:
        # Finite x, ||x||^2, x^T P x and y (checked) keep this step finite.
        _dfop_step(xn, y, 1.0, w, P, Px, _INF)
    if ask != NO_LABEL:
        counts[_QUERIES] += 1
        if ask == DEMO_LABEL:
            counts[_DEMO] += 1
        if detect:
            cap = window_X.shape[0]
            h = counts[_HEAD]
            row = window_X[h]
            for j in range(d):
                row[j] = xn[j]
            window_y[h] = y
            counts[_HEAD] = h + 1 if h + 1 < cap else 0
            if counts[_SIZE] < cap:
                counts[_SIZE] += 1
    counts[_T] = t
    counts[_SEEN] += 1
    if detect:
        L = _window_length(t, window0, window_X.shape[0])
        if t - counts[_REBUILT] >= rebuild_every * L:
            m = counts[_SIZE] if counts[_SIZE] < L else L
            _rebuild(window_X, window_y, counts, m, hw, hP, hx)
            counts[_REBUILT] = t
            counts[_REBUILDS] += 1
    return OK, switched


@kernel
def _learn_round(x, y, normalize, detect, delta, window0, rebuild_every,
                 w, P, hw, hP, window_X, window_y, switches, counts, xn, Px, hx):
    """A round whose label is given (learn mode): learn first, then test.

    Saves the product A^-1 x that ``_assess`` would compute: the RLS step
    leaves u = A^-1 x / sqrt(1 + r') in Px, so s = x^T u = r' / sqrt(1 + r')
    and r' = (s^2 + s sqrt(s^2 + 4)) / 2 (the positive root). Same
    decisions as ``_assess`` + ``_commit`` up to rounding of r'.
    """
    if not _prepare(x, normalize, xn):
        return 0.0, INVALID
    nn = _dot(xn, xn)
    g = 0.0
    rLp = 0.0
    if detect:
        _symv(hP, xn, hx)
        g = _dot(hw, xn)
        rLp = _dot(xn, hx)
    if not (np.isfinite(nn) and np.isfinite(g) and np.isfinite(rLp)):
        return 0.0, INVALID
    # Checks x, y and the update before writing anything.
    f, status = _dfop_step(xn, y, 1.0, w, P, Px, _INF)
    if status != OK:
        return f, status
    s = _dot(xn, Px)
    rp = 0.5 * (s * s + s * math.sqrt(s * s + 4.0))
    status, _ = _commit(xn, y, BBQ_LABEL, True, f, rp, g, rLp, detect, delta, window0,
                        rebuild_every, w, P, hw, hP, window_X, window_y, switches, counts,
                        Px, hx)
    return f, status


@kernel
def _learn_one(x, y, normalize, detect, delta, window0, rebuild_every, skip,
               w, P, hw, hP, window_X, window_y, switches, counts, xn, Px, hx):
    f, status = _learn_round(x, y, normalize, detect, delta, window0, rebuild_every,
                             w, P, hw, hP, window_X, window_y, switches, counts, xn, Px, hx)
    if status != OK and skip:
        counts[_SKIPPED] += 1
    return f, status


@kernel
def _run_many(X, Y, forced, normalize, detect, kappa, delta, window0, rebuild_every, skip,
              w, P, hw, hP, window_X, window_y, switches, counts, xn, Px, hx, out, asked):
    """The whole protocol over a block; the same calls as the one-sample paths.

    ``forced``: every row is labelled (learn_many); else the BBQ rule decides
    and Y[t] is read only for queried rows (process_many). out[t] is
    w_{t-1}^T x_t (its sign is the prediction); asked[t] whether y_t was used.
    Returns -1, or the first invalid row when not skipping (rows before it
    are done, it and the rows after it are not).
    """
    n = X.shape[0]
    for t in range(n):
        if forced:
            f, status = _learn_round(X[t], Y[t], normalize, detect, delta, window0,
                                     rebuild_every, w, P, hw, hP, window_X, window_y,
                                     switches, counts, xn, Px, hx)
            out[t] = f
            asked[t] = status == OK
            if status != OK:
                if skip:
                    counts[_SKIPPED] += 1
                else:
                    return t
            continue
        f, rp, g, rLp, ask, status = _assess(X[t], normalize, detect, kappa, window0,
                                             rebuild_every, forced, w, P, hw, hP, window_X,
                                             counts, xn, Px, hx)
        out[t] = f
        asked[t] = False
        if status == OK:
            y = Y[t] if ask != NO_LABEL else 0.0
            status, _ = _commit(xn, y, ask, False, f, rp, g, rLp, detect, delta, window0,
                                rebuild_every, w, P, hw, hP, window_X, window_y, switches,
                                counts, Px, hx)
            if status == OK:
                asked[t] = ask != NO_LABEL
        if status != OK:
            if skip:
                counts[_SKIPPED] += 1
            else:
                return t
    return -1


# ---------------------------------------------------------------------- model
def _label(y: Any) -> float:
    """+1 -> 1.0; 0 or -1 -> -1.0; anything else (NaN, 2, ...) -> NaN (rejected by the kernel)."""
    try:
        if y == 1:
            return 1.0
        if y == 0 or y == -1:
            return -1.0
    except (TypeError, ValueError):
        pass
    return math.nan


def _labels(Y: Any, n: int) -> np.ndarray:
    y = np.asarray(Y)
    if y.shape != (n,):
        raise ValueError(f"y must be a 1-D array of shape ({n},), got shape {y.shape}")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"y must hold real numbers, got dtype {y.dtype}")
    return np.where(y == 1, 1.0, np.where((y == 0) | (y == -1), -1.0, np.nan))


class SelectiveSampler(OnlineModel):
    r"""BBQ selective sampler with switch detection (SPEC.md section 4).

    A linear classifier that asks for the label of x_t only when
    r_t = x_t^T A_t^{-1} x_t > t^-kappa (it is then uncertain about x_t),
    and for the L_t rounds before each demo rebuild (about T / rebuild_every
    labels), learns the BBQ-queried examples by recursive least squares (A^{-1} kept by
    Sherman-Morrison, O(d^2) per step), and restarts when a demo classifier
    fitted on the last L_t labels disagrees with it by more than a confidence
    bound. See the module docstring for the equations and every choice made
    where the SPEC is open.

    Parameters
    ----------
    n_features : int
        Input dimension d.
    kappa : float in (0, 1), default 0.5
        Query exponent: ask iff r_t > t^-kappa. Expected labels on a
        stationary stream O(d T^kappa ln T).
    detect_switch : bool, default True
        Run the demo classifier and restart on a switch. False: plain BBQ.
    delta : float in (0, 1), default 0.1
        Confidence of the switch test: delta_t = delta / (t (t + 1)), so a
        stationary epoch raises a false switch with probability <= 2 delta
        (union bound over t and the two estimators).
    window0, window_max : int, default 50 and 2000
        Demo window L_t = min(window0 + floor(sqrt(t)), window_max) labels;
        window_max is the ring buffer's capacity.
    rebuild_every : int, default 4
        K: the demo classifier is refitted every K L_t rounds.
    normalize : bool, default True
        Scale each x to unit norm (x = 0 stays 0) inside the kernel; the
        bounds assume ||x|| <= 1. With False the caller guarantees it.
    dtype : {"float64", "float32"}
    on_invalid : {"raise", "skip"}
        NaN/inf in x (or in a label that is used): raise ``ValueError`` with
        the state unchanged, or skip and count in ``n_skipped_``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        w = A^{-1} b of the current epoch.
    n_seen_ : int
        Valid samples processed (queried or not; learnt ones in learn mode).
    n_queries_ : int
        Labels used. ``query_rate_`` = n_queries_ / n_seen_.
    switches_ : ndarray of int64
        0-based indices (among the valid samples processed) of the rounds at
        which a switch was declared, oldest first; the latest
        ``SWITCH_RECORD`` (64) are kept, ``n_switches_`` counts all.

    Notes
    -----
    Memory, fixed at construction: 2 d^2 + (window_max + 5) d + window_max
    values of ``dtype`` plus 584 bytes of counters and switch record
    (d = 10, window_max = 2000, float64: 178 KB; d = 200: 3.5 MB). Time per
    round O(d^2): two products A^{-1} x and A_L^{-1} x, a Sherman-Morrison
    update on queried rounds, and the demo rebuilds, O(d^2 / rebuild_every)
    amortised.

    Examples
    --------
    >>> import numpy as np
    >>> from edgereg import SelectiveSampler
    >>> from edgereg.streams import switch_stream
    >>> X, y, u, v = switch_stream(4000, 3, switch_at=2000, distance=2.0, seed=1)
    >>> model = SelectiveSampler(3)
    >>> pred, asked = model.process_many(X, y)
    >>> model.n_queries_ < 4000
    True
    """

    _task = "classification"

    def __init__(
        self,
        n_features: int,
        kappa: float = 0.5,
        *,
        detect_switch: bool = True,
        delta: float = 0.1,
        window0: int = 50,
        window_max: int = 2000,
        rebuild_every: int = 4,
        normalize: bool = True,
        dtype: Any = "float64",
        on_invalid: str = "raise",
    ) -> None:
        self._init_common(n_features, dtype, on_invalid)
        self.kappa = check_float("kappa", kappa, 0.0, 1.0, low_open=True, high_open=True)
        if not isinstance(detect_switch, (bool, np.bool_)):
            raise TypeError(f"detect_switch must be a bool, got {detect_switch!r}")
        if not isinstance(normalize, (bool, np.bool_)):
            raise TypeError(f"normalize must be a bool, got {normalize!r}")
        self.detect_switch = bool(detect_switch)
        self.normalize = bool(normalize)
        self.delta = check_float("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        self.window0 = check_int("window0", window0)
        self.window_max = check_int("window_max", window_max)
        if self.window_max < self.window0:
            raise ValueError(
                f"window_max ({self.window_max}) must be >= window0 ({self.window0})"
            )
        self.rebuild_every = check_int("rebuild_every", rebuild_every)
        self.reset()

    def _allocate(self) -> SelectiveState:
        return _allocate(self.n_features, self.window_max, self.dtype)

    def _bind_state(self) -> None:
        s = self._state
        # Kernel argument tail shared by every call (plain arrays: cheaper to
        # dispatch than the NamedTuple).
        self._arrays = (
            s.w, s.P, s.demo_w, s.demo_P, s.window_X, s.window_y, s.switches, s.counts,
            s.work_x, s.work_px, s.work_hx,
        )
        self._row_shape = (self.n_features,)

    # ------------------------------------------------------------ attributes
    @property
    def coef_(self) -> np.ndarray:
        """w = A^{-1} b of the current epoch (a copy)."""
        return self._state.w.copy()

    @property
    def n_queries_(self) -> int:
        """Labels used so far."""
        return int(self._state.counts[_QUERIES])

    @property
    def query_rate_(self) -> float:
        """Labels used per valid sample processed (0 before any)."""
        seen = self.n_seen_
        return self.n_queries_ / seen if seen else 0.0

    @property
    def n_switches_(self) -> int:
        """Switches declared so far (all of them, not only the recorded ones)."""
        return int(self._state.counts[_SWITCHES])

    @property
    def switches_(self) -> np.ndarray:
        """Steps of the latest (up to 64) declared switches, oldest first."""
        n = self.n_switches_
        rec = self._state.switches
        if n <= rec.shape[0]:
            return rec[:n].copy()
        k = n % rec.shape[0]
        return np.concatenate([rec[k:], rec[:k]])

    @property
    def n_demo_queries_(self) -> int:
        """Labels asked only for the demo window (included in ``n_queries_``)."""
        return int(self._state.counts[_DEMO])

    @property
    def n_demo_rebuilds_(self) -> int:
        """Times the demo classifier was refitted."""
        return int(self._state.counts[_REBUILDS])

    # -------------------------------------------------------------- one-step
    def _row(self, x: Any) -> np.ndarray:
        if type(x) is np.ndarray and x.dtype is self.dtype and x.shape == self._row_shape:
            if x.flags.c_contiguous:
                return x
        return as_row(x, self.n_features, self.dtype)

    def predict_one(self, x: Any) -> float:
        """sign(w_t^T x) = sign(w_{t-1}^T x), in {-1.0, +1.0} (sign(0) = +1); no learning."""
        return 1.0 if _dfop_predict_one(self._row(x), self._state.w) >= 0.0 else -1.0

    def should_query(self, x: Any) -> bool:
        """The BBQ rule for x as the next round t: r_t > t^-kappa (no state change)."""
        xr = self._row(x)
        s = self._state
        *_, ask, status = _assess(
            xr, self.normalize, self.detect_switch, self.kappa, self.window0,
            self.rebuild_every, False, s.w, s.P, s.demo_w, s.demo_P, s.window_X, s.counts,
            s.work_x, s.work_px, s.work_hx,
        )
        if status != OK:
            raise ValueError(self._invalid_message(xr, 0.0, "sample"))
        return ask != NO_LABEL

    def learn_one(self, x: Any, y: Any) -> float:
        """One round with the label given: predict, test for a switch, learn (x, y).

        Returns the prequential prediction (that of :meth:`predict_one` before
        the call).

        Raises
        ------
        ValueError
            On NaN/inf in x or an invalid label (``on_invalid="raise"``); the
            state is then exactly as before the call.
        """
        xr = self._row(x)
        f, status = _learn_one(
            xr, _label(y), self.normalize, self.detect_switch, self.delta, self.window0,
            self.rebuild_every, self._skip, *self._arrays,
        )
        if status != OK and not self._skip:
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return 1.0 if f >= 0.0 else -1.0

    def process_one(self, x: Any, label_oracle: Callable[[], Any]) -> tuple[float, bool]:
        """One round of the selective-sampling protocol.

        Predicts x, decides by the BBQ rule whether to ask for its label,
        calls ``label_oracle()`` only if so, learns the label, tests for a
        switch and rebuilds the demo classifier when due.

        Returns
        -------
        (prediction, queried) : (float, bool)
            The prediction in {-1.0, +1.0} made before the label is asked, and
            whether the oracle was called.
        """
        xr = self._row(x)
        s = self._state
        f, rp, g, rLp, ask, status = _assess(
            xr, self.normalize, self.detect_switch, self.kappa, self.window0,
            self.rebuild_every, False, s.w, s.P, s.demo_w, s.demo_P, s.window_X, s.counts,
            s.work_x, s.work_px, s.work_hx,
        )
        pred = 1.0 if f >= 0.0 else -1.0
        q = ask != NO_LABEL
        y: Any = 0.0
        if status == OK:
            y = label_oracle() if q else 0.0
            status, _ = _commit(
                s.work_x, _label(y) if q else 0.0, ask, False, f, rp, g, rLp, self.detect_switch,
                self.delta, self.window0, self.rebuild_every, *self._arrays[:8],
                s.work_px, s.work_hx,
            )
        if status != OK:
            if self._skip:
                s.counts[_SKIPPED] += 1
                return pred, False
            raise ValueError(self._invalid_message(xr, y, "sample"))
        return pred, bool(q)

    # ----------------------------------------------------------------- block
    def _targets_many(self, Y: Any, n: int) -> np.ndarray:
        return _labels(Y, n)

    def _run(self, X: np.ndarray, Y: np.ndarray, forced: bool, out: np.ndarray,
             asked: np.ndarray) -> int:
        return _run_many(
            X, Y, forced, self.normalize, self.detect_switch, self.kappa, self.delta,
            self.window0, self.rebuild_every, self._skip, *self._arrays, out, asked,
        )

    def _learn_block(self, X, Y, out):  # type: ignore[override]
        return self._run(X, Y, True, out, np.empty(X.shape[0], dtype=np.bool_))

    def learn_many(self, X: Any, y: Any) -> np.ndarray:
        """Learn every row (all labels given) in one kernel call.

        Returns the prequential predictions in {-1.0, +1.0}; identical to
        :meth:`learn_one` row by row.
        """
        return np.where(self._learn_many_checked(X, y) >= 0.0, 1.0, -1.0)

    def process_many(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Run the selective-sampling protocol over a block in one kernel call.

        ``y[t]`` is read only for the rows whose label is queried (the others
        may hold anything, NaN for an unknown label). Identical to
        :meth:`process_one` row by row with an oracle returning ``y[t]``.

        Returns
        -------
        predictions : ndarray of shape (n,)
            Prequential predictions in {-1.0, +1.0}.
        queried : ndarray of bool, shape (n,)
            Which labels were used.

        Raises
        ------
        ValueError
            On NaN/inf in a row of X or in a queried label: rows before it are
            processed, it and the rows after it are not.
        """
        X = self._check_X(X)
        n = X.shape[0]
        Y = _labels(y, n)
        out = np.empty(n, dtype=np.float64)
        asked = np.empty(n, dtype=np.bool_)
        bad = self._run(X, Y, False, out, asked)
        if bad >= 0:
            raise ValueError(
                self._invalid_message(X[bad], np.asarray(y)[bad], f"row {bad} of the block")
                + f"; rows 0..{bad - 1} were processed, rows {bad}.. were not"
            )
        return np.where(out >= 0.0, 1.0, -1.0), asked

    def _predict_block(self, X, out):  # type: ignore[override]
        _dfop_predict_many(X, self._state.w, out)

    def predict_many(self, X: Any) -> np.ndarray:
        """Predict a block without learning: signs in {-1.0, +1.0}."""
        return np.where(super().predict_many(X) >= 0.0, 1.0, -1.0)

    @classmethod
    def _unit_test_params(cls) -> list[dict[str, Any]]:
        return [
            {"n_features": 4},
            {"n_features": 3, "delta": 0.5, "window0": 5, "window_max": 12, "rebuild_every": 2},
            {"n_features": 5, "dtype": "float32", "kappa": 0.3},
            {"n_features": 3, "detect_switch": False, "normalize": False},
        ]
