"""Prediction intervals under drift: the model's predictive variance, calibrated online.

For a step with discount lambda = 1 - mu, DFOP is the Kalman filter whose
prior covariance of w is P / lambda (docs/design/intervals.md), so the
innovation e = y - w^T x has variance sigma^2 v with::

    v = (lambda + x^T P x) / lambda                       (the leverage factor)

The noise level sigma^2 is the forgetting-weighted mean of e^2 / v (weight
sum N, weighted sum S, sigma^2 = S / N); the interval is::

    yhat -+ q sqrt(sigma^2 v)

and q, the quantile of the normalised score abs(e) / sqrt(sigma^2 v) at the
coverage c, is tracked by online quantile regression (the P part of
conformal PID control, Angelopoulos, Candes & Tibshirani 2023)::

    q <- q + eta (miss - (1 - c)),     miss = 1{abs(e) > q sqrt(sigma^2 v)}

whose long-run miss rate is within (max score + eta) / (eta T) of 1 - c for
any sequence. Both are updated after the interval is made (prequential).

Blocks:

* ``I`` float64 (N_INTERVAL,), learnt: N, S, the number of intervals scored,
  q, the number that covered their target, the number of rows learnt with
  inputs imputed (``_kernels/impute.py``) (INT_* below);
* ``ihyper`` float64 (N_IHYPER,): eta, the noise forgetting (negative: the
  step's own mu), the coverage c (IHYPER_* below).

No allocation, no exception: a sample whose bookkeeping would not stay
finite leaves ``I`` untouched and the kernels say so with a status.
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, kernel, recompile_with
from . import dfop as _dfop_module
from . import linalg as _linalg_module
from .dfop import (
    _STEP_CAREFULLY,
    CODE_KEEP_PRIOR,
    HYPER_MU,
    HYPER_P0,
    OK,
    _after_step,
    _float32_arithmetic,
    _packed_views,
    _reads,
    _scratch_views,
    _step_from,
    _step_read,
)
from .dtype import scratch_of
from .interval_core import (  # noqa: F401  (re-exported: the models import them from here)
    IB_SIZE,
    IHYPER_COVERAGE,
    IHYPER_ETA,
    IHYPER_NOISE_MU,
    INTERVAL_COVERED,
    INTERVAL_IMPUTED,
    INTERVAL_OK,
    INTERVAL_Q,
    INTERVAL_REFUSED,
    INTERVAL_SCORED,
    INTERVAL_SUM,
    INTERVAL_WEIGHT,
    N_IHYPER,
    N_INTERVAL,
    _half,
    _noise_lam,
    _scale,
    _track,
    ib_views,
    interval_band,
    interval_learn,
    leverage_factor,
)
from .linalg import symv as _symv
from .prior import _max_variance


@kernel
def interval_pass(Y, MU, pred, lev, n, IB, out):
    """The bookkeeping of a block after the model learnt its first n rows.

    pred[t] is the prequential prediction of row t and lev[t] its x^T P x
    (0 for a model without a leverage term; NaN: the model refused the row,
    whose interval is then NaN and not learnt); MU the forgetting of each
    step (or one for all). out (n, 3): lower, prediction, upper. The same
    arithmetic as learn_one's (``_track``), the bookkeeping in registers.
    """
    I, ihyper, _ = ib_views(IB)
    stride = 1 if MU.shape[0] > 1 else 0
    N = I[INTERVAL_WEIGHT]
    S = I[INTERVAL_SUM]
    q = I[INTERVAL_Q]
    scored = I[INTERVAL_SCORED]
    covered = I[INTERVAL_COVERED]
    eta = ihyper[IHYPER_ETA]
    alpha = 1.0 - ihyper[IHYPER_COVERAGE]
    for t in range(n):
        mu = MU[t * stride]
        h = lev[t]
        yhat = pred[t]
        band = out[t]
        band[1] = yhat
        if h != h:
            band[0] = np.nan
            band[2] = np.nan
            continue
        v = leverage_factor(h, mu)
        scale = _scale(v, N, S)
        half = _half(q, scale)
        band[0] = yhat - half
        band[2] = yhat + half
        N1, S1, q1, sc, cv = _track(Y[t], yhat, scale, v, _noise_lam(mu, ihyper), N, S, q,
                                     eta, alpha)
        if sc >= 0.0:
            N, S, q = N1, S1, q1
            scored += sc
            covered += cv
    I[INTERVAL_WEIGHT] = N
    I[INTERVAL_SUM] = S
    I[INTERVAL_Q] = q
    I[INTERVAL_SCORED] = scored
    I[INTERVAL_COVERED] = covered


@kernel
def interval_one(y, yhat, h, mu, IB):
    """One sample's ``interval_pass`` into IB's band: for a model whose step reports
    its prediction and whether it learnt (h = NaN: it did not), h = x^T P x or 0."""
    I, ihyper, band = ib_views(IB)
    if h != h:
        band[0] = np.nan
        band[1] = yhat
        band[2] = np.nan
        return INTERVAL_REFUSED
    v = leverage_factor(h, mu)
    interval_band(yhat, v, I, band)
    return interval_learn(y, yhat, v, mu, I, ihyper)


@kernel
def interval_bands(pred, IB, out):
    """out[t] = (lower, pred[t], upper) with v = 1 (a model without a leverage term)."""
    I = ib_views(IB)[0]
    for t in range(pred.shape[0]):
        interval_band(pred[t], 1.0, I, out[t])


@kernel
def interval_outputs(y, yhat, h, mu, IBS):
    """``interval_one`` for each output j of a multi-output model: IBS[j] is output j's
    block IB (its own bookkeeping, constants and band). Returns INTERVAL_REFUSED when
    any output's bookkeeping refused (that one untouched, the others learnt)."""
    status = INTERVAL_OK
    for j in range(IBS.shape[0]):
        if interval_one(y[j], yhat[j], h, mu, IBS[j]) != INTERVAL_OK:
            status = INTERVAL_REFUSED
    return status


@kernel
def interval_pass_outputs(Y, MU, pred, lev, n, IBS, out):
    """``interval_pass`` for each output j: Y and pred (n, m), out (n, m, 3)."""
    for j in range(IBS.shape[0]):
        interval_pass(Y[:, j], MU, pred[:, j], lev, n, IBS[j], out[:, j])


@kernel
def interval_bands_outputs(pred, IBS, out):
    """``interval_bands`` for each output j: pred (n, m), out (n, m, 3)."""
    for j in range(IBS.shape[0]):
        interval_bands(pred[:, j], IBS[j], out[:, j])


@inline_kernel
def _one(x, y, mu, w, P, Px, Px64, vv, L, cap, p0, codes, I, ihyper, band):
    """learn_one's step (``dfop._dfop_learn_one``'s, from the same P x) with its interval:
    the step's own reads (w^T x, x^T P x) make the interval, then the step goes on
    from them (``dfop._step_read``), one pass over P and x as without intervals."""
    pmin = _symv(P, x, Px)
    yhat, xPx, big, wbig = _reads(x, w, Px)
    v = leverage_factor(xPx, mu)
    interval_band(yhat, v, I, band)
    lam = 1.0 - mu
    yhat, status = _step_read(x, y, lam, w, P, Px, cap, p0, pmin, yhat, xPx, big, wbig)
    if status == _STEP_CAREFULLY:
        _symv(P, x, Px64)
        yhat, status = _step_from(x, y, lam, w, P, Px64, cap, p0, pmin)
    _after_step(status, mu, w, P, L, vv, p0, codes, Px)
    if status == OK:
        interval_learn(y, yhat, v, mu, I, ihyper)
    else:
        band[0] = np.nan
        band[2] = np.nan
    return status


@inline_kernel
def _learn_one_interval(x, y, PW, B, IB):
    """``dfop_learn_one_interval``'s body: DFOP's status, the band in IB's."""
    I, ihyper, band = ib_views(IB)
    d = x.shape[0]
    work, L, hyper, codes = _packed_views(B, d)
    w = PW[d]
    P = PW[:d]
    p0 = hyper[HYPER_P0]
    mu = hyper[HYPER_MU]
    cap = _max_variance(p0, codes[CODE_KEEP_PRIOR] != 0)
    Px64 = _scratch_views(work, d)[2]
    if _float32_arithmetic(d, P, codes):
        Px, _, vv = _scratch_views(scratch_of(work, P), d)
        return _one(x, y, mu, w, P, Px, Px64, vv, L, cap, p0, codes, I, ihyper, band)
    Px, _, vv = _scratch_views(work, d)
    return _one(x, y, mu, w, P, Px, Px64, vv, L, cap, p0, codes, I, ihyper, band)


@kernel
def dfop_learn_one_interval(x, y, PW, B, IB):
    """DFOP's learn_one with the interval made before learning into IB's band
    (lower, yhat, upper).

    The blocks of ``dfop._dfop_learn_one_packed``, plus ``IB`` (``ib_views``).
    Returns DFOP's status (the interval of a refused sample is NaN, I untouched).
    """
    return _learn_one_interval(x, y, PW, B, IB)


@kernel
def dfop_learn_one_band(x, y, PW, B, IB):
    """``dfop_learn_one_interval`` that returns the band (lower, yhat, upper) itself,
    for DFOP's learn_one (3 floats from the call cost less than 3 reads of IB from
    Python). The lower bound is NaN exactly when the sample is refused: a sample
    learnt has a finite prediction and a half-width q sqrt(sigma^2 v) in [0, inf]."""
    _learn_one_interval(x, y, PW, B, IB)
    band = ib_views(IB)[2]
    return band[0], band[1], band[2]


@kernel
def dfop_predict_interval(X, PW, B, IB, out):
    """out[t] = (lower, prediction, upper) for each row of X, without learning.

    x^T P x as learn_one forms it (P x in the dtype of the model's
    arithmetic, in its scratch), so a row's interval here is the one
    learn_one reports before learning it."""
    I = ib_views(IB)[0]
    d = X.shape[1]
    work, _, hyper, codes = _packed_views(B, d)
    w = PW[d]
    P = PW[:d]
    mu = hyper[HYPER_MU]
    for t in range(X.shape[0]):
        x = X[t]
        if _float32_arithmetic(d, P, codes):
            Px = _scratch_views(scratch_of(work, P), d)[0]
            _symv(P, x, Px)
            yhat, xPx, _, _ = _reads(x, w, Px)
        else:
            Px = _scratch_views(work, d)[0]
            _symv(P, x, Px)
            yhat, xPx, _, _ = _reads(x, w, Px)
        interval_band(yhat, leverage_factor(xPx, mu), I, out[t])


recompile_with(globals(), _dfop_module, _linalg_module)
