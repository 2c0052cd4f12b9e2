"""Fleet's kernels: K DFOP models updated in one call, ``prange`` over the models.

Each model runs DFOP's own kernels (``_kernels/dfop.py``) on its slices of the
stacked state (views inside njit), so a fleet is bit for bit K separate DFOP
models fed the same rows, and nothing is allocated per step.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._jit import compiled, kernel, recompile_with
from . import bank as _bank_kernels
from . import dfop as _dfop_kernels
from .bank import _bank_learn_many, _bank_learn_one, _bank_predict_many, _bank_predict_one
from .dfop import HYPER_MU, _dfop_learn_many, _dfop_learn_one, _dfop_predict_many, _dfop_predict_one

#: Parallel kernels: the DFOP decorator (``_jit.kernel``) plus ``parallel=True``.
parallel_kernel = compiled(parallel=True)


@kernel
def _count_failed(STATUS, ok):
    """How many models' status is not ``ok`` (-1 after a block: every row
    handled, else the first invalid row; 0 after one sample: valid)."""
    bad = 0
    for k in range(STATUS.shape[0]):
        if STATUS[k] != ok:
            bad += 1
    return bad


@parallel_kernel
def _fleet_learn_many(X, Y, OUT, PW, L, WORK, hyper, codes, STATUS):
    """Model k learns block (X[k], Y[k]) with ``dfop._dfop_learn_many``; prange over k.

    Model k's blocks are PW[k], L[k], WORK[k] (DFOP's, stacked); hyper and
    codes are shared. ``STATUS[k]`` receives that kernel's return value: -1
    when model k handled every row, else its first invalid row (models are
    independent: the others carry on). Returns the number of models that
    stopped on an invalid row.
    """
    K = X.shape[0]
    mu = hyper[HYPER_MU : HYPER_MU + 1]
    for k in prange(K):
        STATUS[k] = _dfop_learn_many(X[k], Y[k], mu, OUT[k], PW[k], L[k], WORK[k], hyper, codes)
    return _count_failed(STATUS, -1)


@parallel_kernel
def _fleet_learn_one(X, Y, OUT, PW, L, WORK, hyper, codes, STATUS):
    """Model k learns the one sample (X[k], Y[k]) with ``dfop._dfop_learn_one``.

    ``STATUS[k]`` is that kernel's status (0 OK, 1 invalid: model k untouched
    unless skipping, which only counts it). Returns the number of invalid samples.
    """
    K = X.shape[0]
    for k in prange(K):
        yhat, status = _dfop_learn_one(X[k], Y[k], PW[k], L[k], WORK[k], hyper, codes)
        OUT[k] = yhat
        STATUS[k] = status
    return _count_failed(STATUS, 0)


# Predictions take w as row d of PW[k] (C-contiguous, as DFOP passes it), so
# that DFOP's prediction kernels compile once for both callers.
@parallel_kernel
def _fleet_predict_many(X, PW, OUT):
    for k in prange(X.shape[0]):
        _dfop_predict_many(X[k], PW[k][PW.shape[2]], OUT[k])


@parallel_kernel
def _fleet_predict_one(X, PW, OUT):
    for k in prange(X.shape[0]):
        OUT[k] = _dfop_predict_one(X[k], PW[k][PW.shape[2]])


# -------------------------------------------------------- a fleet of banks
# Fleet(..., forgetting="auto"): model k is a DFOPBank whose blocks are PW[k]
# and A[k] (``_kernels/bank.py``); the same prange over the models.
@parallel_kernel
def _fleet_bank_learn_many(X, Y, OUT, PW, A, STATUS):
    """Bank k learns (X[k], Y[k]) (``bank._bank_learn_many``); as ``_fleet_learn_many``."""
    K = X.shape[0]
    for k in prange(K):
        STATUS[k] = _bank_learn_many(X[k], Y[k], OUT[k], PW[k], A[k])
    return _count_failed(STATUS, -1)


@parallel_kernel
def _fleet_bank_learn_one(X, Y, OUT, PW, A, STATUS):
    """Bank k learns its one sample; STATUS[k] 1 when it was invalid (NaN prediction)."""
    K = X.shape[0]
    for k in prange(K):
        OUT[k] = _bank_learn_one(X[k], Y[k], PW[k], A[k])
        STATUS[k] = 1 if np.isnan(OUT[k]) else 0
    return _count_failed(STATUS, 0)


@parallel_kernel
def _fleet_bank_predict_many(X, PW, A, OUT):
    for k in prange(X.shape[0]):
        _bank_predict_many(X[k], PW[k], A[k], OUT[k])


@parallel_kernel
def _fleet_bank_predict_one(X, PW, A, OUT):
    for k in prange(X.shape[0]):
        OUT[k] = _bank_predict_one(X[k], PW[k], A[k])


# The fleet kernels call DFOP's and the bank's: recompile them when those change (see _jit).
recompile_with(globals(), _dfop_kernels, _bank_kernels)
