"""Rows with missing inputs: the conditional expectation under the model's own P.

P is, up to scale, the inverse of the forgetting-weighted second-moment
matrix R of the inputs (R = P^-1 = Lambda / p0 I + sum_i lambda^(t-i) x_i x_i^T).
Taking the inputs as zero-mean Gaussian with covariance M = R / N (N the
weight of the data, the noise bookkeeping's N), the precision is N P and the
missing block m given the observed block o is::

    E[x_m | x_o]   = -P_mm^-1 P_mo x_o
    Cov[x_m | x_o] = (N P_mm)^-1

(no inverse of P needed: a k x k Cholesky of P_mm, k the number missing).
The completed row x^ then predicts yhat = w^T x^, whose error carries the
extra variance w_m^T Cov w_m; the update is the weighted least-squares one
with weight omega = sigma^2 / (sigma^2 + w_m^T Cov w_m), made as DFOP's step
on (sqrt(omega) x^, sqrt(omega) y), and the innovation's variance factor is
v + 1 / omega - 1 (the interval's). docs/design/missing-inputs.md.

Scratch ``MW`` float64: r (d), u (d), then G and its factor (d x d each);
``xs`` (d,) of the model's dtype: the row completed, then scaled.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel, recompile_with
from . import dfop as _dfop_module
from . import interval as _interval_module
from . import linalg as _linalg_module
from .dfop import (
    CODE_SKIP,
    HYPER_MU,
    OK,
    _counters,
    _dfop_learn_one,
    _has_nan,
    _packed_views,
    _reads,
    _scratch_views,
)
from .dtype import scratch_of
from .interval import (
    INTERVAL_IMPUTED,
    INTERVAL_SUM,
    INTERVAL_WEIGHT,
    _float32_arithmetic,
    _learn_one_interval,
    ib_views,
    interval_band,
    interval_learn,
    leverage_factor,
)
from .linalg import cholesky
from .linalg import symv as _symv

#: Status of ``dfop_impute_learn_one``: learnt; refused (invalid, nothing
#: written); predict-only (no input observed, or no target: nothing learnt).
IMPUTED, IMPUTE_REFUSED, PREDICT_ONLY = 0, 1, 2


@kernel
def mw_size(d):
    """Length of the imputation's float64 scratch for dimension d."""
    return 2 * d + 2 * d * d


@kernel
def _complete(x, P, w, MW, xs, N, S):
    """xs <- x with its NaNs replaced by E[x_m | x_o]; returns (k, quad): the number
    missing and w_m^T Cov[x_m | x_o] w_m (inf while N = 0; -1: x holds an inf)."""
    d = x.shape[0]
    r = MW[:d]
    u = MW[d : 2 * d]
    G = MW[2 * d : 2 * d + d * d].reshape((d, d))
    C = MW[2 * d + d * d : 2 * d + 2 * d * d].reshape((d, d))
    k = 0
    for j in range(d):
        xj = x[j]
        if xj != xj:
            k += 1
        elif not np.isfinite(xj):
            return k, -1.0
    if k == 0 or k == d:
        for j in range(d):
            xs[j] = x[j]
        return k, 0.0
    # The missing indices in order (in u, as floats), G = P_mm, r = P_mo x_o.
    a = 0
    for j in range(d):
        if x[j] != x[j]:
            u[a] = j
            a += 1
    for a in range(k):
        i = int(u[a])
        Pi = P[i]
        acc = 0.0
        for j in range(d):
            if x[j] == x[j]:
                acc += np.float64(Pi[j]) * x[j]
        r[a] = acc
        for b in range(k):
            G[a, b] = Pi[int(u[b])]
    Gk = G[:k, :k]
    Ck = C[:k, :k]
    cholesky(Gk, Ck, 1e-300)
    _solve(Ck, r, k)  # r <- P_mm^-1 P_mo x_o
    # w_m into the rows of G not needed any more: G[0, :k] (G's factor is in C).
    wm = G[0]
    for a in range(k):
        wm[a] = w[int(u[a])]
    quad = 0.0
    _solve(Ck, wm, k)  # wm <- P_mm^-1 w_m
    for a in range(k):
        quad += np.float64(w[int(u[a])]) * wm[a]
    quad = quad / N if N > 0.0 else np.inf
    for j in range(d):
        xs[j] = x[j]
    for a in range(k):
        xs[int(u[a])] = -r[a]
    return k, quad


@kernel
def _solve(L, b, k):
    """b[:k] <- (L L^T)^-1 b[:k] (forward, then backward substitution)."""
    for i in range(k):
        acc = b[i]
        Li = L[i]
        for j in range(i):
            acc -= Li[j] * b[j]
        b[i] = acc / Li[i]
    for i in range(k - 1, -1, -1):
        acc = b[i]
        for j in range(i + 1, k):
            acc -= L[j, i] * b[j]
        b[i] = acc / L[i, i]


@kernel
def _refused(L, codes):
    """A row refused before DFOP's step: counted as skipped under on_invalid="skip"."""
    if codes[CODE_SKIP] != 0:
        _counters(L)[1] += 1
    return IMPUTE_REFUSED


@kernel
def dfop_impute_learn_one(x, y, PW, B, IB, MW, xs):
    """learn_one for a row with NaNs in x (or a NaN target): complete, predict, learn.

    Writes IB's band (lower, yhat, upper) for the completed row with the
    innovation's variance factor v + 1 / omega - 1; learns (sqrt(omega) x^,
    sqrt(omega) y) with DFOP's step (``dfop._dfop_learn_one``) and the
    noise bookkeeping with the unscaled residual; counts the row in
    I[INTERVAL_IMPUTED]. A row refused gets NaN bounds (and a NaN prediction
    when x holds an inf), as DFOP's refused rows. Returns IMPUTED,
    IMPUTE_REFUSED (nothing written but the band) or
    PREDICT_ONLY (every input missing: NaN band; or y NaN: nothing learnt).
    """
    I, ihyper, band = ib_views(IB)
    d = x.shape[0]
    w = PW[d]
    P = PW[:d]
    N = I[INTERVAL_WEIGHT]
    S = I[INTERVAL_SUM]
    k, quad = _complete(x, P, w, MW, xs, N, S)
    work, L, hyper, codes = _packed_views(B, d)
    if quad < 0.0:  # an inf beside the NaNs: no prediction
        band[0] = np.nan
        band[1] = np.nan
        band[2] = np.nan
        return _refused(L, codes)
    if k == d:
        band[0] = np.nan
        band[1] = np.nan
        band[2] = np.nan
        return PREDICT_ONLY
    sigma2 = S / N if N > 0.0 else np.inf
    if quad == 0.0:
        omega = 1.0
    elif np.isfinite(sigma2):
        omega = sigma2 / (sigma2 + quad)
    else:
        omega = 0.0 if not np.isfinite(quad) else 1.0
    mu = hyper[HYPER_MU]
    if _float32_arithmetic(d, P, codes):
        Px = _scratch_views(scratch_of(work, P), d)[0]
        _symv(P, xs, Px)
        yhat, xPx, _, _ = _reads(xs, w, Px)
    else:
        Px = _scratch_views(work, d)[0]
        _symv(P, xs, Px)
        yhat, xPx, _, _ = _reads(xs, w, Px)
    v = leverage_factor(xPx, mu) + (1.0 / omega - 1.0 if omega > 0.0 else np.inf)
    interval_band(yhat, v, I, band)
    if y != y:
        return PREDICT_ONLY
    if not (np.isfinite(y) and np.isfinite(yhat)):
        band[0] = np.nan
        band[2] = np.nan
        return _refused(L, codes)
    s = math.sqrt(omega)
    for j in range(d):
        xs[j] = xs[j] * s
    _, status = _dfop_learn_one(xs, y * s, PW, L, work, hyper, codes)
    if status != OK:
        band[0] = np.nan
        band[2] = np.nan
        return IMPUTE_REFUSED
    if np.isfinite(v):
        interval_learn(y, yhat, v, mu, I, ihyper)
    if k > 0:
        I[INTERVAL_IMPUTED] += 1.0
    return IMPUTED


@kernel
def dfop_learn_one_band_impute(x, y, PW, B, IB, MW, xs):
    """learn_one of ``missing="impute"``: (lower, yhat, upper, refused).

    A row with a NaN in x or y goes through :func:`dfop_impute_learn_one`, a
    complete one through DFOP's learn_one with its interval
    (``interval.dfop_learn_one_interval``): a complete row costs a NaN scan of
    x. ``refused`` is 1.0 when the row was refused (state untouched), else 0.0.
    """
    if _has_nan(x, y):
        refused = dfop_impute_learn_one(x, y, PW, B, IB, MW, xs) == IMPUTE_REFUSED
    else:
        refused = _learn_one_interval(x, y, PW, B, IB) != OK
    band = ib_views(IB)[2]
    return band[0], band[1], band[2], 1.0 if refused else 0.0


recompile_with(globals(), _dfop_module, _interval_module, _linalg_module)
