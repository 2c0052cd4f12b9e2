"""SelectiveSampler's one-sample kernels: a round assessed, then finished.

docs/algorithms/selective.md. ``_assess`` computes the round's quantities from the state
before the round (prediction, r', the demo's g and r'_L, the query decision),
``_finish`` tests for a switch, learns and rebuilds; ``process_one`` calls the
label oracle between the two. The entry points take the blocks of
``selective._selective_views`` (inputs, A, N, Z, F, hyper, codes); the block
kernels are ``selective_block.py``, the round's helpers ``selective.py``.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel, recompile_with
from . import compare as _compare_kernels
from . import eprocess as _eprocess_kernels
from . import guards as _guards_kernels
from . import linalg as _linalg_kernels
from . import selective as _selective_kernels
from . import selective_spec as _spec_kernels
from .compare import (
    candidate_learn,
    candidate_prediction,
    compare_alarm,
    compare_label,
    compare_rls,
    shadow_learn,
    shadow_prediction,
    shadow_restart,
    wrong,
)
from .eprocess import (
    GLOBAL_THETA,
    _eprocess_round,
    _norm_fits,
    confidence_factors,
    eprocess_alarm,
    track_confidence,
)
from .linalg import symv_by_size
from .selective import (
    BBQ_LABEL,
    CODE_DETECT,
    COMPARE_TEST,
    COUNT_HEAD,
    COUNT_REBUILT,
    COUNT_SKIPPED,
    COUNT_T,
    INVALID,
    NO_LABEL,
    OK,
    _decide,
    _end_round,
    _eprocess_options,
    _learnable,
    _options,
    _prepare,
    _products,
    _record,
    _restart,
    _selective_views,
    _swap,
    _update,
)
from .selective_spec import (
    _FULL_ROWS_UP_TO,
    _demo_rows,
    _demo_triangle,
    _refit,
    _switch_test,
    _window_length,
)


@kernel
def _assess(x, normalize, detect, theta, kappa, window0, rebuild_every, forced, w, P, hw,
            G, window_X, counts, xn, Px, hx, cache):
    """Round quantities from the state before the round; writes only work arrays.

    Returns ``(f, rp, g, rLp, ask, status)`` with f = w_{t-1}^T x,
    rp = x^T A_{t-1}^-1 x, g = h^T x, rLp = x^T A_L^-1 x (0 when not
    detecting) and ``_decide``'s ask. Status INVALID when x (or anything
    derived) is not finite. ``_run_block`` makes the same calls in the same
    order (inline, with the product A^-1 x fused into the previous update,
    and r'_L computed only when ``_switch_screen`` does not decide).
    """
    if not _prepare(x.reshape((1, x.shape[0])), 0, normalize, xn):
        return 0.0, 0.0, 0.0, 0.0, NO_LABEL, INVALID
    symv_by_size(P, xn, Px)  # A^-1 x
    if detect:
        if xn.shape[0] <= _FULL_ROWS_UP_TO:
            _demo_rows(xn, G, hx)
        else:
            _demo_triangle(xn, G, hx)
    f, rp, nn, g, rLp = _products(xn, w, Px, hw, hx)
    if not (np.isfinite(f) and np.isfinite(rp) and np.isfinite(nn)
            and np.isfinite(g) and np.isfinite(rLp)):
        return f, rp, g, rLp, NO_LABEL, INVALID
    t = counts[COUNT_T] + 1
    ask = _decide(forced, detect, theta, f, rp, t, kappa,
                  _window_length(t, window0, window_X.shape[0]), rebuild_every,
                  counts[COUNT_REBUILT], cache)
    return f, rp, g, rLp, ask, OK


@kernel
def _finish(xn, y, ask, f, rp, g, rLp, detect, test_every, span, compare, delta, window0,
            rebuild_every, w, P, hw, G, window_X, window_y, switches, counts, E, Px, acc, hx,
            cache, screen):
    """Finish a round assessed by ``_assess``: switch test, restart, learn, rebuild.

    ``ask``: NO_LABEL (y unused), DEMO_LABEL (y goes to the window, or to
    the e-process) or BBQ_LABEL (y is learnt by the estimator and goes to
    the window or the e-process). ``span`` > 0: the e-process test runs (on
    every used label); ``test_every`` > 0: the threshold of its test rounds
    is tracked (0 in learn mode, where every label is used). Returns the
    status: INVALID (a queried label that is not finite, or one whose update
    ``_learnable`` refuses) before anything is written.
    """
    learns = ask == BBQ_LABEL
    if ask != NO_LABEL and not np.isfinite(y):
        return INVALID
    if learns and not _learnable(y, f, rp, w, -1.0, P, Px):
        return INVALID
    # The e-process runs on the test rounds' labels only: BBQ's own queries
    # follow the estimator's uncertainty, a drifting choice of x that on a
    # stationary stream not of the linear model's form (threshold labels)
    # made it fire (measured: 102 restarts on hyperplane1, 1 without them,
    # docs/design/selective.md). It sees only inputs of norm <= 1 (its
    # model; always true of normalised inputs): with normalize=False a
    # longer x is learnt but not tested, a choice made from x alone.
    tested = test_every > 0 and ask != NO_LABEL and abs(f) / (1.0 + rp) > E[GLOBAL_THETA]
    eproc = tested and not compare and _norm_fits(xn)
    if test_every > 0:
        up, down = confidence_factors(test_every)
        track_confidence(E, abs(f) / (1.0 + rp), up, down)
    t = counts[COUNT_T] + 1
    d = xn.shape[0]
    won = False
    fc = 0.0
    rc = 0.0
    fs = 0.0
    rs = 0.0
    if compare and ask != NO_LABEL:
        fc, rc = candidate_prediction(xn, E, d, hx)
        fs, rs = shadow_prediction(xn, E, d, acc)
        if tested:
            won = compare_label(wrong(fs, y) - wrong(fc, y), -np.log(delta), E, True)
    if won:
        wc, _pc = compare_rls(E, d)
        f, rp = _swap(switches, counts, w, P, xn, Px, wc)
        fs, rs = shadow_restart(E, d, xn, acc)
        compare_alarm(E, span)
        t = 1
        # The new epoch learns the switch round's label, as the shadow does
        # (a tested round is mostly a demo query, not learnt otherwise).
        learns = _learnable(y, f, rp, w, -1.0, P, Px)
    elif (detect and _switch_test(f, rp, g, rLp, t, delta, cache)) or (
            eproc and _eprocess_round(xn, y, -np.log(delta), E, hx, acc)):
        rp = _restart(switches, counts, w, P, xn, Px)
        if eproc:
            eprocess_alarm(E, xn.shape[0], span)
        f = 0.0
        t = 1
    if compare and ask != NO_LABEL:
        candidate_learn(y, fc, rc, E, d, hx)
        shadow_learn(y, fs, rs, E, d, acc)
    if learns:
        _update(y, f, rp, w, P, Px)
    if ask != NO_LABEL:
        _record(xn, y, ask, detect, window_X, window_y, counts)
    m = _end_round(t, detect, _window_length(t, window0, window_X.shape[0]), rebuild_every,
                   counts)
    if m >= 0:
        _refit(window_X, window_y, counts[COUNT_HEAD], m, hw, G, hx, screen)
    return OK


@kernel
def _assess_one(x, forced, A, N, E, Z, F, hyper, codes):
    """``_assess`` on the blocks: ``(f, rp, g, rLp, ask, status)``; writes only scratch."""
    normalize, detect, kappa, _, window0, rebuild_every, _ = _options(hyper, codes)
    _, _, theta = _eprocess_options(codes, E)
    w, P, hw, G, window_X, _, _, counts, xn, _, Px, _, hx, cache, _ = _selective_views(
        A, N, Z, F, x.shape[0]
    )
    return _assess(x, normalize, detect, theta, kappa, window0, rebuild_every, forced, w,
                   P, hw, G, window_X, counts, xn, Px, hx, cache)


@kernel
def _commit(y, assessed, A, N, E, Z, F, hyper, codes):
    """``_finish`` on the blocks, for a round assessed by ``_assess_one`` (its first
    five results, ``(f, rp, g, rLp, ask)``); returns the status."""
    f, rp, g, rLp, ask = assessed
    _, detect, _, delta, window0, rebuild_every, _ = _options(hyper, codes)
    test_every, span, _ = _eprocess_options(codes, E)
    w, P, hw, G, window_X, window_y, switches, counts, xn, _, Px, acc, hx, cache, screen = (
        _selective_views(A, N, Z, F, Z.shape[0] // 2)
    )
    return _finish(xn, y, ask, f, rp, g, rLp, detect, test_every, span,
                   codes[CODE_DETECT] == COMPARE_TEST, delta, window0, rebuild_every, w, P, hw,
                   G, window_X, window_y, switches, counts, E, Px, acc, hx, cache, screen)


@kernel
def _learn_one(x, y, A, N, E, Z, F, hyper, codes):
    """A round whose label is given (learn mode): ``_assess`` (forced) + ``_finish``.

    Returns ``(f, status)``; a skipped sample is counted. (The blocks' views
    made once: through ``_assess_one`` and ``_commit`` they would be made
    twice, 7% of a call at d = 10, measured.)
    """
    normalize, detect, _, delta, window0, rebuild_every, skip = _options(hyper, codes)
    test_every, span, theta = _eprocess_options(codes, E)
    w, P, hw, G, window_X, window_y, switches, counts, xn, _, Px, acc, hx, cache, screen = (
        _selective_views(A, N, Z, F, x.shape[0])
    )
    f, rp, g, rLp, ask, status = _assess(x, normalize, detect, theta, 0.5, window0,
                                         rebuild_every, True, w, P, hw, G, window_X, counts, xn,
                                         Px, hx, cache)
    if status == OK:
        status = _finish(xn, y, ask, f, rp, g, rLp, detect, test_every, span,
                         codes[CODE_DETECT] == COMPARE_TEST, delta, window0, rebuild_every, w,
                         P, hw, G, window_X, window_y, switches, counts, E, Px, acc, hx, cache,
                         screen)
    if status != OK and skip:
        counts[COUNT_SKIPPED] += 1
    return f, status


# Kernels here call selective's, the guards' and linalg's: recompile them when
# those change (see _jit).
recompile_with(globals(), _selective_kernels, _spec_kernels, _eprocess_kernels, _guards_kernels,
               _linalg_kernels, _compare_kernels)
