"""The exported functions of each model family, as numba shims over its blocks:
here DFOP, RLS and the auto bank (two blocks, PW and B), and ``family_of``, which
finds any model's family (the others in ``family_*.py``, one module per family).

Every family gives ``learn_one``, ``learn_many`` and ``predict_one`` with the
same C shapes (the header's), calling the class's own kernels:

    int64  learn_one(block..., const T *x, double y, double *yhat)  -> status
    int64  learn_many(block..., const T *X, const double *Y, int64 n,
                      const double *mu, int64 n_mu, double *out)    -> -1 or a row
    double predict_one(block..., const T *x)

A model of m outputs (SOMOR, a multi-output PARegressor) takes y and gives yhat
as m values (``const double *y``, ``double *yhat``; Y and out are n x m,
row-major) and its predict_one writes them (``int64 predict_one(block...,
const T *x, double *yhat)`` -> OK). A model without forgetting keeps learn_many's
mu arguments so that every family has the one shape: n_mu must be 0 (mu is not
read), anything else is refused with BAD_LENGTH before a row is learnt.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, njit, types

from .._kernels.selective_block import _label_of
from .shims import (
    BAD_FORGETTING,
    BAD_LENGTH,
    SHIM_OPTIONS,
    Block,
    Family,
    _factors_status,
    _label_of32,
    _labels_into,
    _numba_float,
    _sign32,
    _signs,
    index_names,
    locate_fields,
    stack_array,
)


def _two_block_family(model: Any, prefix: str, k: Any, forgetting: bool,
                      state: Any = None) -> Family:
    """The Family of a model over the blocks (PW, B) (DFOP's, the bank's), its
    hyper and codes named by kernel module ``k``; the init image is a freshly
    reset model's blocks. ``state``: the learnt fields as located (default the
    model's own)."""
    PW, B = model._PW, model._B
    init = type(model)(**model.get_params())
    return Family(
        prefix=prefix,
        d=model.n_features,
        dtype=np.dtype(model.dtype),
        task=model.task,
        blocks=[Block("PW", PW.dtype, PW.size, init._PW.reshape(-1).copy()),
                Block("B", B.dtype, B.size, init._B.copy())],
        fields=locate_fields({"PW": PW, "B": B}, [(model._state if state is None else state,
                                                   True), (model._work, False)]),
        hyper={n: float(model._work.hyper[i]) for n, i in index_names(k, "hyper").items()},
        codes={n: int(model._work.codes[i]) for n, i in index_names(k, "codes").items()},
        current={"PW": PW, "B": B},
        forgetting=forgetting,
    )


def _two_block_functions(model: Any, PW: np.ndarray, learn_one, learn_many, predict_one) -> dict:
    """The C signatures of a family over the blocks (PW, B): DFOP's and the bank's."""
    T = _numba_float(model.dtype)
    pw, pb = types.CPointer(_numba_float(PW.dtype)), types.CPointer(types.float64)
    px, pd = types.CPointer(T), types.CPointer(types.float64)
    return {
        "learn_one": (learn_one, types.int64(pw, pb, px, types.float64, pd)),
        "learn_many": (learn_many, types.int64(pw, pb, px, pd, types.int64, pd, types.int64, pd)),
        "predict_one": (predict_one, types.float64(pw, pb, px)),
    }


def dfop32_family(model: Any) -> Family:
    """DFOP and RLS with ``arithmetic="float32"``: the kernels of ``_kernels/dfop32.py``
    over DFOP's blocks, with y, yhat, Y, mu and out float32 in C (no double anywhere:
    the object needs no soft-double helper on a single-precision FPU).

    The struct holds what persists between calls: P and w (``PW``) and B without its
    leading scratch (the forgotten mass and counters, hyper, codes). The scratch is
    work within one call (every element written before it is read), so each call
    keeps it on its own stack, sized to what the float32 views use (``_views32``:
    three float32 vectors of stride ``scratch_stride(d)``, the last d long):
    reentrant, and the caller's RAM holds no dead bytes between calls."""
    from .._jit import python_function
    from .._kernels import dfop as k
    from .._kernels import dfop32 as k32
    from .._kernels.linalg import scratch_stride

    d = model.n_features
    B = model._B
    a = model._work.scratch.size  # B's leading scratch (float64 slots), not in the struct
    family = _two_block_family(model, "dfop", k, forgetting=True)
    init = type(model)(**model.get_params())
    family.blocks[1] = Block("B", B.dtype, B.size - a, init._B[a:].copy())
    family.fields = locate_fields({"PW": model._PW, "B": B[a:]},
                                  [(model._state, True),
                                   (model._work._replace(scratch=None), False)])
    family.current = {"PW": model._PW, "B": B[a:]}
    family.io = np.dtype(np.float32)
    s = python_function(scratch_stride)(d)
    n_scratch = -(-(2 * s + d) // 2)  # float64 slots holding 2 s + d float32
    family.stack_scratch = 8 * n_scratch
    stack = stack_array(n_scratch, types.float64, align=8)
    nB = B.size - a
    i_hyper, i_codes, n_codes = k.N_LEARNT, k.N_LEARNT + k.N_HYPER, k.N_CODES
    classify = model.task == "classification"
    learn_one_kernel, learn_many_kernel = k32.dfop32_learn_one, k32.dfop32_learn_many
    predict_kernel = k32.dfop32_predict_one

    @njit(inline="always", **SHIM_OPTIONS)
    def views(Bp):
        """work (on this call's stack), L, hyper, codes: ``_packed_views`` without the
        scratch in front."""
        rest = carray(Bp, (nB,))
        return (carray(stack(), (n_scratch,)), rest[:i_hyper], rest[i_hyper:i_codes],
                rest[i_codes: i_codes + n_codes].view(np.int64))

    def learn_one(PWp, Bp, xp, y, yhat_p):
        PW = carray(PWp, (d + 1, d))
        x = carray(xp, (d,))
        work, L, hyper, codes = views(Bp)
        yv = _label_of32(y) if classify else y
        yhat, status = learn_one_kernel(x, yv, PW, L, work, hyper, codes)
        if classify:
            yhat = _sign32(yhat)
        carray(yhat_p, (1,))[0] = yhat
        return np.int64(status)

    def learn_many(PWp, Bp, Xp, Yp, n, mup, n_mu, outp):
        PW = carray(PWp, (d + 1, d))
        work, L, hyper, codes = views(Bp)
        X = carray(Xp, (n, d))
        out = carray(outp, (n,))
        if n_mu == 0:
            MU = carray(mup, (0,))  # empty: the model's own mu (not read)
        elif n_mu == n or n_mu == 1:
            MU = carray(mup, (n_mu,))
            for t in range(n_mu):
                if not (MU[t] >= np.float32(0.0) and MU[t] < np.float32(1.0)):
                    return np.int64(BAD_FORGETTING)
        else:
            return np.int64(BAD_LENGTH)
        if classify:
            Y = carray(Yp, (n,))
            for t in range(n):
                out[t] = _label_of32(Y[t])
            Y = out
        else:
            Y = carray(Yp, (n,))
        first = learn_many_kernel(X, Y, MU, out, PW, L, work, hyper, codes)
        if classify:
            for t in range(n):
                out[t] = _sign32(out[t])
        return np.int64(first)

    def predict_one(PWp, Bp, xp):
        PW = carray(PWp, (d + 1, d))
        score = predict_kernel(carray(xp, (d,)), PW[d])
        return _sign32(score) if classify else score

    f32 = types.float32
    pw, pb, pf = types.CPointer(f32), types.CPointer(types.float64), types.CPointer(f32)
    family.functions = {
        "learn_one": (learn_one, types.int64(pw, pb, pf, f32, pf)),
        "learn_many": (learn_many, types.int64(pw, pb, pf, pf, types.int64, pf, types.int64,
                                                pf)),
        "predict_one": (predict_one, f32(pw, pb, pf)),
    }
    return family


def dfop_family(model: Any) -> Family:
    """DFOP and RLS, regression and classification, fixed or per-step forgetting."""
    from .._kernels import dfop as k

    if model._arith32:
        return dfop32_family(model)

    d = model.n_features
    PW, B = model._PW, model._B
    family = _two_block_family(model, "dfop", k, forgetting=True)
    nB = B.size
    classify = model.task == "classification"
    learn_one_kernel, learn_many_kernel = k._dfop_learn_one, k._dfop_learn_many
    predict_kernel, views = k._dfop_predict_one, k._packed_views
    mu_index = next(i for n, i in index_names(k, "hyper").items() if "MU" in n)

    def learn_one(PWp, Bp, xp, y, yhat_p):
        PW = carray(PWp, (d + 1, d))
        x = carray(xp, (d,))
        work, L, hyper, codes = views(carray(Bp, (nB,)), d)
        yv = _label_of(y) if classify else y
        yhat, status = learn_one_kernel(x, yv, PW, L, work, hyper, codes)
        if classify:
            yhat = 1.0 if yhat >= 0.0 else -1.0
        carray(yhat_p, (1,))[0] = yhat
        return np.int64(status)

    def learn_many(PWp, Bp, Xp, Yp, n, mup, n_mu, outp):
        PW = carray(PWp, (d + 1, d))
        B = carray(Bp, (nB,))
        work, L, hyper, codes = views(B, d)
        X = carray(Xp, (n, d))
        out = carray(outp, (n,))
        status = _factors_status(mup, n_mu, n)
        if status != 0:
            return np.int64(status)
        if n_mu == 0:
            MU = hyper[mu_index : mu_index + 1]
        else:
            MU = carray(mup, (n_mu,))
        Y = _labels_into(Yp, n, out) if classify else carray(Yp, (n,))
        first = learn_many_kernel(X, Y, MU, out, PW, L, work, hyper, codes)
        if classify:
            _signs(out, n)
        return np.int64(first)

    def predict_one(PWp, Bp, xp):
        PW = carray(PWp, (d + 1, d))
        x = carray(xp, (d,))
        score = predict_kernel(x, PW[d])
        if classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    family.functions = _two_block_functions(model, PW, learn_one, learn_many, predict_one)
    return family


def bank32_family(model: Any) -> Family:
    """DFOPBank with ``arithmetic="float32"``: the kernels of ``_kernels/bank32.py``
    over the bank's blocks (PW, B: A), y, yhat, Y and out float32 in C (no double
    anywhere: no soft-double helper on a single-precision FPU, no libm). The members'
    forgotten masses are float32 in the first half of their float64 slots (as
    DFOP's float32-only arithmetic keeps its own): the header names the slots."""
    from numpy.lib.stride_tricks import as_strided

    from .._kernels import bank as k
    from .._kernels import bank32 as k32

    d = model.n_features
    PW, B = model._PW, model._B
    f = model._state.forgotten  # float32 (K, 1), every member_stride slots
    offset = (f.__array_interface__["data"][0] - B.__array_interface__["data"][0]) // 8
    slots = as_strided(B[offset:], shape=f.shape, strides=(f.strides[0], 8), writeable=False)
    family = _two_block_family(model, "dfopbank", k, forgetting=False,
                               state=model._state._replace(forgotten=slots))
    family.io = np.dtype(np.float32)
    K, nB = PW.shape[0], B.size
    classify = model.task == "classification"
    learn_one_kernel, learn_many_kernel = k32.bank32_learn_one, k32.bank32_learn_many
    predict_kernel = k32.bank32_predict_one

    def learn_one(PWp, Bp, xp, y, yhat_p):
        yv = _label_of32(y) if classify else y
        score = learn_one_kernel(carray(xp, (d,)), yv, carray(PWp, (K, d + 1, d)),
                                 carray(Bp, (nB,)))
        carray(yhat_p, (1,))[0] = _sign32(score) if classify else score
        return np.int64(0 if score == score else 1)  # NaN: refused (OK / INVALID)

    def learn_many(PWp, Bp, Xp, Yp, n, mup, n_mu, outp):
        if n_mu != 0:
            return np.int64(BAD_LENGTH)
        out = carray(outp, (n,))
        Y = carray(Yp, (n,))
        if classify:
            for t in range(n):
                out[t] = _label_of32(Y[t])
            Y = out
        first = learn_many_kernel(carray(Xp, (n, d)), Y, out, carray(PWp, (K, d + 1, d)),
                                  carray(Bp, (nB,)))
        if classify:
            for t in range(n):
                out[t] = _sign32(out[t])
        return np.int64(first)

    def predict_one(PWp, Bp, xp):
        score = predict_kernel(carray(xp, (d,)), carray(PWp, (K, d + 1, d)), carray(Bp, (nB,)))
        return _sign32(score) if classify else score

    f32 = types.float32
    pw, pb, pf = types.CPointer(f32), types.CPointer(types.float64), types.CPointer(f32)
    family.functions = {
        "learn_one": (learn_one, types.int64(pw, pb, pf, f32, pf)),
        "learn_many": (learn_many, types.int64(pw, pb, pf, pf, types.int64, pf, types.int64,
                                                pf)),
        "predict_one": (predict_one, f32(pw, pb, pf)),
    }
    return family


def bank_family(model: Any) -> Family:
    """DFOPBank (``DFOP(..., forgetting="auto")``): K DFOP members on a moving
    window of forgetting factors, ``_bank_learn_one(x, y, PW, A)`` over DFOP's two
    block names (PW: the members' P and w; B: the bank's block A). Labels as
    DFOP's; no per-step forgetting (n_mu must be 0): the bank learns its own.
    With ``arithmetic="float32"``: ``bank32_family``."""
    from .._kernels import bank as k

    if model._arith32:
        return bank32_family(model)

    d = model.n_features
    PW, B = model._PW, model._B
    family = _two_block_family(model, "dfopbank", k, forgetting=False)
    K, nB = PW.shape[0], B.size
    classify = model.task == "classification"
    learn_one_kernel, learn_many_kernel = k._bank_learn_one, k._bank_learn_many
    predict_kernel = k._bank_predict_one

    def learn_one(PWp, Bp, xp, y, yhat_p):
        yv = _label_of(y) if classify else y
        score = learn_one_kernel(carray(xp, (d,)), yv, carray(PWp, (K, d + 1, d)),
                                 carray(Bp, (nB,)))
        # A refused row's NaN is -1 for classification, as the class returns it.
        carray(yhat_p, (1,))[0] = (1.0 if score >= 0.0 else -1.0) if classify else score
        return np.int64(0 if score == score else 1)  # NaN: refused (OK / INVALID)

    def learn_many(PWp, Bp, Xp, Yp, n, mup, n_mu, outp):
        if n_mu != 0:
            return np.int64(BAD_LENGTH)
        out = carray(outp, (n,))
        Y = _labels_into(Yp, n, out) if classify else carray(Yp, (n,))
        first = learn_many_kernel(carray(Xp, (n, d)), Y, out, carray(PWp, (K, d + 1, d)),
                                  carray(Bp, (nB,)))
        if classify:
            _signs(out, n)
        return np.int64(first)

    def predict_one(PWp, Bp, xp):
        score = predict_kernel(carray(xp, (d,)), carray(PWp, (K, d + 1, d)), carray(Bp, (nB,)))
        if classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    family.functions = _two_block_functions(model, PW, learn_one, learn_many, predict_one)
    return family


#: The exportable classes (by exact name: a subclass may change the kernels).
SUPPORTED = ("DFOP", "RLS", "DFOPBank", "PARegressor", "SOMOR", "MORES", "NORMARegressor",
             "NORMAClassifier", "NORMANovelty", "SparseDFOP", "SelectiveSampler", "DriftAlarm")


def family_of(model: Any) -> Family:
    """The export description of a model instance, or a clear refusal."""
    from .._norma_base import _NORMA
    from ..bank import DFOPBank
    from ..dfop import DFOP
    from ..drift import DriftAlarm
    from ..mores import MORES
    from ..pa import SOMOR, PARegressor

    name = type(model).__name__
    from ._errors import ExportError

    if getattr(model, "coverage", None) is not None or getattr(
            model, "missing", "reject") != "reject":
        # Other kernels (the interval's pass, the imputation's step) that no shim calls.
        raise ExportError(f"{name} with coverage or missing='impute' cannot be exported yet "
                          "(docs/design/export.md, 'Not yet')")
    if isinstance(model, DriftAlarm) and name == "DriftAlarm":
        from .family_drift import drift_family

        return drift_family(model, family_of)
    if isinstance(model, DFOP) and name in ("DFOP", "RLS"):
        return dfop_family(model)
    if isinstance(model, DFOPBank) and name == "DFOPBank":
        return bank_family(model)
    if isinstance(model, (PARegressor, SOMOR)) and name in ("PARegressor", "SOMOR"):
        from .family_linear import linear_family

        return linear_family(model)
    if isinstance(model, MORES) and name == "MORES":
        from .family_linear import mores_family

        return mores_family(model)
    if isinstance(model, _NORMA) and name in SUPPORTED:
        from .family_norma import norma_family

        return norma_family(model)
    if name == "SparseDFOP":
        from ..sparse_dfop import SparseDFOP

        if isinstance(model, SparseDFOP):
            from .family_sparse import sparse_dfop_family

            return sparse_dfop_family(model)
    if name == "SelectiveSampler":
        from .family_selective import selective_family

        return selective_family(model)
    raise ExportError(
        f"{name} cannot be exported yet (supported: {', '.join(SUPPORTED)}; "
        "docs/design/export.md says why the others are not yet)")
