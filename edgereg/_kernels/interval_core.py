"""The interval's scalar arithmetic: the bookkeeping's layout and one sample's update.

Apart from ``interval.py`` (which builds on DFOP's kernels) so that DFOP's
block kernel can run the bookkeeping in its own row loop, one pass over the
block (``dfop._learn_many_in``); the model, the equations and the blocks are
described in ``interval.py``'s docstring and docs/design/intervals.md.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import inline_kernel

INTERVAL_WEIGHT = 0
INTERVAL_SUM = 1
INTERVAL_SCORED = 2
INTERVAL_Q = 3
INTERVAL_COVERED = 4
INTERVAL_IMPUTED = 5
N_INTERVAL = 6
IHYPER_ETA, IHYPER_NOISE_MU, IHYPER_COVERAGE = 0, 1, 2
N_IHYPER = 3
#: learn_one's one block IB: I, then ihyper, then the band it writes (lower,
#: prediction, upper), so that its kernel takes 5 arguments.
IB_SIZE = N_INTERVAL + N_IHYPER + 3
#: Status of the bookkeeping: learnt, or refused (I unchanged).
INTERVAL_OK, INTERVAL_REFUSED = 0, 1


@inline_kernel
def ib_views(IB):
    """I, ihyper and the band: views of learn_one's block IB."""
    a = N_INTERVAL
    b = a + N_IHYPER
    return IB[:a], IB[a:b], IB[b : b + 3]


@inline_kernel
def leverage_factor(xPx, mu):
    """v = (lambda + x^T P x) / lambda, lambda = 1 - mu: the innovation's variance in sigma^2."""
    lam = 1.0 - mu
    return (lam + xPx) / lam


@inline_kernel
def _scale(v, N, S):
    """sqrt(sigma^2 v), sigma^2 = S / N (inf before the first residual, N = 0)."""
    if not N > 0.0:
        return np.inf
    return math.sqrt(S / N * v)


@inline_kernel
def _half(q, scale):
    """The half-width q sqrt(sigma^2 v) (0 when q <= 0)."""
    return q * scale if q > 0.0 else 0.0


@inline_kernel
def interval_band(yhat, v, I, band):
    """band = (lower, yhat, upper) from the prediction and its leverage factor v."""
    half = _half(I[INTERVAL_Q], _scale(v, I[INTERVAL_WEIGHT], I[INTERVAL_SUM]))
    band[0] = yhat - half
    band[1] = yhat
    band[2] = yhat + half


@inline_kernel
def _track(y, yhat, scale, v, lam, N, S, q, eta, alpha):
    """One sample's bookkeeping from scalars: returns (N, S, q, scored, covered), or
    ``scored = -1`` when refused (e^2 / v or the new sum not finite: nothing changes).

    The interval (of half-width q scale) is scored when one was made (N > 0):
    miss = abs(e) > q scale, q <- q + eta (miss - alpha); then N <- lam N + 1,
    S <- lam S + e^2 / v."""
    e = y - yhat
    z2 = e * e / v
    total = lam * S + z2
    if not (np.isfinite(z2) and z2 >= 0.0 and np.isfinite(total)):
        return N, S, q, -1.0, 0.0
    scored = 0.0
    covered = 0.0
    if N > 0.0:
        scored = 1.0
        if abs(e) > q * scale:
            q = q + eta * (1.0 - alpha)
        else:
            q = q + eta * (0.0 - alpha)
            covered = 1.0
    return lam * N + 1.0, total, q, scored, covered


@inline_kernel
def _noise_lam(mu, ihyper):
    nmu = ihyper[IHYPER_NOISE_MU]
    return 1.0 - (nmu if nmu >= 0.0 else mu)


@inline_kernel
def interval_learn(y, yhat, v, mu, I, ihyper):
    """Score the interval made for (yhat, v), then learn y's residual; returns the status
    (refused, ``I`` untouched: e^2 / v or the new weighted sum not finite)."""
    N = I[INTERVAL_WEIGHT]
    S = I[INTERVAL_SUM]
    N, S, q, scored, covered = _track(
        y, yhat, _scale(v, N, S), v, _noise_lam(mu, ihyper), N, S, I[INTERVAL_Q],
        ihyper[IHYPER_ETA], 1.0 - ihyper[IHYPER_COVERAGE])
    if scored < 0.0:
        return INTERVAL_REFUSED
    I[INTERVAL_WEIGHT] = N
    I[INTERVAL_SUM] = S
    I[INTERVAL_Q] = q
    I[INTERVAL_SCORED] += scored
    I[INTERVAL_COVERED] += covered
    return INTERVAL_OK
