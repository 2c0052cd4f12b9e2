"""SelectiveSampler's block kernels: the whole protocol over a block, in one call.

``_run_block`` runs, per row, the calls of ``_assess_one`` and ``_commit``
(``_kernels/selective.py``) written out inline, with the next row's A^-1 x
fused into the update's pass and the switch test screened first; the tests
check both paths bit for bit. Why it is written out rather than calling the
one-sample kernels (each call of ~20 arrays costs atomic reference counts,
more than the arithmetic at d = 10): docs/design/selective.md.
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import compare as _compare_kernels
from . import eprocess as _eprocess_kernels
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
from .linalg import REGISTER_SYMV_UP_TO, symv_registers
from .linalg import symv as _symv
from .selective import (
    BBQ_LABEL,
    CODE_DETECT,
    CODE_NORMALIZE,
    CODE_REBUILD_EVERY,
    CODE_SKIP,
    CODE_WINDOW0,
    COMPARE_TEST,
    COUNT_HEAD,
    COUNT_REBUILT,
    COUNT_SKIPPED,
    COUNT_T,
    HYPER_DELTA,
    HYPER_KAPPA,
    INVALID,
    NO_LABEL,
    OK,
    SPEC_TEST,
    _decide,
    _end_round,
    _eprocess_options,
    _learnable,
    _prepare,
    _products4,
    _record,
    _restart,
    _selective_views,
    _sum_squares,
    _swap,
    _update,
    _update_fused,
)
from .selective_spec import (
    _FULL_ROWS_UP_TO,
    _demo_rows,
    _demo_triangle,
    _refit,
    _switch_screen,
    _switch_test,
    _window_bracket,
)


@kernel
def _demo_norm2(xn, G, v):
    """r'_L = ||V^T x||^2 as ``_products`` sums it (v = V^T x is left in v)."""
    d = xn.shape[0]
    if d <= _FULL_ROWS_UP_TO:
        _demo_rows(xn, G, v)
    else:
        _demo_triangle(xn, G, v)
    return _sum_squares(v)


@kernel
def _label_of(v):
    """The label of a value of y, as ``_label``: 1 -> 1.0; 0 or -1 -> -1.0; else NaN.

    The block kernels map each label they read (``_label_values`` passes y
    as float64: exact for every integer that could equal 1, 0 or -1).
    """
    if v == 1.0:
        return 1.0
    if v == 0.0 or v == -1.0:
        return -1.0
    return np.nan


@inline_kernel
def _run_block(X, Y, forced, normalize, test, test_every, span, kappa, delta, window0,
               rebuild_every, skip, w, P, hw, G, window_X, window_y, switches, counts, E, xn,
               xnext, Px, acc, hx, cache, screen, out, asked):
    """The whole protocol over a block: ``_assess_one`` + ``_commit``'s calls, inline.

    The body of the two block kernels (inlined into each with ``forced`` a
    constant, so that each compiles only its own path): ``forced``: every
    row is labelled (learn_many); else the BBQ rule decides and Y[t] is
    read only for queried rows (process_many). Y holds raw values of y
    (``_label_of`` maps them); out[t] is the prediction sign(w_{t-1}^T x_t)
    in {-1.0, +1.0} (+1.0 for a row rejected as invalid and skipped);
    asked[t] whether y_t was used.

    When a round learns, row t + 1 is prepared first and A_new^-1 x_{t+1} is
    accumulated in the update's pass (``_update_fused``), so the next round
    skips ``symv_by_size``. The switch test runs ``_switch_screen`` first and
    computes r'_L = ||V^T x||^2 and runs ``_switch_test`` only when the
    screen does not decide: the same decisions as ``_commit``'s, d^2 / 2
    fewer multiply-adds on almost every round. The round's logic is written
    out here rather than calling ``_assess_one``/``_commit``: passing their
    ~20 arrays costs an atomic incref and decref each per call (more than
    the arithmetic at d = 10); the small helpers called here are shared, and
    the tests check the two paths bit for bit. Returns -1, or the first
    invalid row when not skipping (rows before it are done, it and the rows
    after it are not).
    """
    n = X.shape[0]
    d = X.shape[1]
    cap = window_X.shape[0]
    detect = test == SPEC_TEST  # the demo classifier and its screen
    compare = test == COMPARE_TEST
    prepared = False  # xn already holds row t prepared
    fresh = False  # Px already holds A^-1 xn
    L = window0  # L_s for the epoch rounds s in [t_lo, t_hi) (empty: computed on first use)
    t_lo = 0
    t_hi = 0
    threshold = -np.log(delta)  # the e-process's: log(1 / delta)
    # min diag(A^-1) when the last update's pass gathered it (-1: unknown;
    # ``_learnable`` then runs the diagonal's pass).
    pmin = -1.0
    up, down = confidence_factors(test_every if test_every > 0 else 1)
    for t in range(n):
        ok = True
        if not prepared:
            ok = _prepare(X, t, normalize, xn)
        prepared = False
        fused = False
        ask = NO_LABEL
        status = INVALID
        if ok:
            if not fresh:  # symv_by_size, written out (measured: a call layer costs 8 ns)
                if d <= REGISTER_SYMV_UP_TO:
                    symv_registers(P, xn, Px)
                else:
                    _symv(P, xn, Px)
            f, rp, nn, g = _products4(xn, w, Px, hw)
            out[t] = 1.0 if f >= 0.0 else -1.0  # the prediction, made before any restart
            tt = counts[COUNT_T] + 1
            # The switch screen (or, when it does not decide, r'_L) before the
            # checks: a non-finite r'_L rejects the row as in _assess_one.
            finite = np.isfinite(f) and np.isfinite(rp) and np.isfinite(nn) and np.isfinite(g)
            screened = True
            rLp = 0.0
            if finite and detect and not _switch_screen(f, rp, nn, g, tt, delta, screen):
                screened = False
                rLp = _demo_norm2(xn, G, hx)
                finite = np.isfinite(rLp)
            if finite:
                if not (t_lo <= tt < t_hi):
                    L, t_lo, t_hi = _window_bracket(tt, window0, cap)
                theta = E[GLOBAL_THETA] if test_every > 0 else 0.0
                ask = _decide(forced, detect, theta, f, rp, tt, kappa, L, rebuild_every,
                              counts[COUNT_REBUILT], cache)
                y = _label_of(Y[t]) if ask != NO_LABEL else 0.0
                tested = theta > 0.0 and ask != NO_LABEL and abs(f) / (1.0 + rp) > theta
                eproc = tested and not compare and _norm_fits(xn)
                learns = ask == BBQ_LABEL
                if (ask == NO_LABEL or np.isfinite(y)) and (
                        not learns or _learnable(y, f, rp, w, pmin, P, Px)):
                    status = OK
                    if theta > 0.0:
                        track_confidence(E, abs(f) / (1.0 + rp), up, down)
                    won = False
                    fc = 0.0
                    rc = 0.0
                    fs = 0.0
                    rs = 0.0
                    if compare and ask != NO_LABEL:
                        fc, rc = candidate_prediction(xn, E, d, hx)
                        fs, rs = shadow_prediction(xn, E, d, acc)
                        if tested:
                            won = compare_label(wrong(fs, y) - wrong(fc, y), threshold, E, True)
                    if won:
                        wc, _pc = compare_rls(E, d)
                        f, rp = _swap(switches, counts, w, P, xn, Px, wc)
                        fs, rs = shadow_restart(E, d, xn, acc)
                        pmin = -1.0
                        compare_alarm(E, span)
                        tt = 1
                        if not (t_lo <= tt < t_hi):
                            L, t_lo, t_hi = _window_bracket(tt, window0, cap)
                        # the switch round's label is learnt, as in ``_finish``
                        learns = _learnable(y, f, rp, w, pmin, P, Px)
                    elif (not screened and _switch_test(f, rp, g, rLp, tt, delta, cache)) or (
                            eproc and _eprocess_round(xn, y, threshold, E, hx, acc)):
                        rp = _restart(switches, counts, w, P, xn, Px)
                        pmin = -1.0
                        if eproc:
                            eprocess_alarm(E, d, span)
                        f = 0.0
                        tt = 1
                        if not (t_lo <= tt < t_hi):
                            L, t_lo, t_hi = _window_bracket(tt, window0, cap)
                    if compare and ask != NO_LABEL:
                        candidate_learn(y, fc, rc, E, d, hx)
                        shadow_learn(y, fs, rs, E, d, acc)
                    if learns:
                        if t + 1 < n and _prepare(X, t + 1, normalize, xnext):
                            pmin = _update_fused(y, f, rp, w, P, Px, xnext, acc)
                            prepared = True
                            fused = True
                        else:
                            _update(y, f, rp, w, P, Px)
                            pmin = -1.0
                    if ask != NO_LABEL:
                        _record(xn, y, ask, detect, window_X, window_y, counts)
                    m = _end_round(tt, detect, L, rebuild_every, counts)
                    if m >= 0:
                        _refit(window_X, window_y, counts[COUNT_HEAD], m, hw, G, hx, screen)
        else:
            out[t] = 1.0
        asked[t] = status == OK and ask != NO_LABEL
        if status != OK:
            if not skip:
                return t
            counts[COUNT_SKIPPED] += 1
        if prepared:  # copies: swapping the arrays costs two atomic refcounts each
            for j in range(d):
                xn[j] = xnext[j]
        if fused:
            for j in range(d):
                Px[j] = acc[j]
        fresh = fused
    return -1


@inline_kernel
def _run_many(forced, X, Y, out, asked, A, N, E, Z, F, hyper, codes):
    """``_run_block`` on the blocks of ``selective._selective_views`` (inlined
    into each entry kernel below with ``forced`` a constant)."""
    w, P, hw, G, window_X, window_y, switches, counts, xn, xnext, Px, acc, hx, cache, screen = (
        _selective_views(A, N, Z, F, X.shape[1])
    )
    test_every, span, _ = _eprocess_options(codes, E)
    return _run_block(X, Y, forced, codes[CODE_NORMALIZE] != 0, codes[CODE_DETECT],
                      test_every, span, hyper[HYPER_KAPPA], hyper[HYPER_DELTA], codes[CODE_WINDOW0],
                      codes[CODE_REBUILD_EVERY], codes[CODE_SKIP] != 0, w, P, hw, G, window_X,
                      window_y, switches, counts, E, xn, xnext, Px, acc, hx, cache, screen, out,
                      asked)


@kernel
def _run_many_learn(X, Y, out, asked, A, N, E, Z, F, hyper, codes):
    """learn_many's kernel: ``_run_block`` with every label given."""
    return _run_many(True, X, Y, out, asked, A, N, E, Z, F, hyper, codes)


@kernel
def _run_many_process(X, Y, out, asked, A, N, E, Z, F, hyper, codes):
    """process_many's kernel: ``_run_block`` with the BBQ rule deciding the queries."""
    return _run_many(False, X, Y, out, asked, A, N, E, Z, F, hyper, codes)


# Kernels here call the one-sample kernels' helpers and linalg's: recompile
# them when those change (see _jit).
recompile_with(globals(), _selective_kernels, _spec_kernels, _eprocess_kernels, _linalg_kernels,
               _compare_kernels)
