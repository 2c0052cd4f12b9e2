"""The exported functions of each model family, as numba shims over its blocks.

Every family gives ``learn_one``, ``learn_many`` and ``predict_one`` with the
same C shapes (the header's), calling the class's own kernels:

    int64  learn_one(block..., const T *x, double y, double *yhat)  -> status
    int64  learn_many(block..., const T *X, const double *Y, int64 n,
                      const double *mu, int64 n_mu, double *out)    -> -1 or a row
    double predict_one(block..., const T *x)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, njit, types

from .shims import SHIM_OPTIONS, Block, Family, index_names, locate_fields

#: Status of learn_one (the kernels' OK / INVALID) and of the shims.
BAD_FORGETTING = -2  # learn_many: a per-step forgetting factor outside [0, 1)
BAD_LENGTH = -3  # learn_many: n_mu is neither 0, 1 nor n


def _numba_float(dtype: np.dtype):
    return types.float32 if np.dtype(dtype) == np.float32 else types.float64


def dfop_family(model: Any) -> Family:
    """DFOP and RLS, regression and classification, fixed or per-step forgetting."""
    from .._kernels import dfop as k

    d = model.n_features
    PW, B = model._PW, model._B
    blocks = {"PW": PW, "B": B}
    fields = locate_fields(blocks, [(model._state, True), (model._work, False)])
    init = type(model)(**model.get_params())  # the init image: a freshly reset model
    family = Family(
        prefix="dfop",
        d=d,
        dtype=np.dtype(model.dtype),
        task=model.task,
        blocks=[Block("PW", PW.dtype, PW.size, init._PW.reshape(-1).copy()),
                Block("B", B.dtype, B.size, init._B.copy())],
        fields=fields,
        hyper={n: float(model._work.hyper[i]) for n, i in index_names(k, "hyper").items()},
        codes={n: int(model._work.codes[i]) for n, i in index_names(k, "codes").items()},
    )
    nB = B.size
    classify = model.task == "classification"
    learn_one_kernel, learn_many_kernel = k._dfop_learn_one, k._dfop_learn_many
    predict_kernel, views = k._dfop_predict_one, k._packed_views
    mu_index = next(i for n, i in index_names(k, "hyper").items() if "MU" in n)

    def label(y):
        if y == 1.0:
            return 1.0
        if y == 0.0 or y == -1.0:
            return -1.0
        return np.nan

    label = njit(inline="always", **SHIM_OPTIONS)(label)

    def learn_one(PWp, Bp, xp, y, yhat_p):
        PW = carray(PWp, (d + 1, d))
        x = carray(xp, (d,))
        work, L, hyper, codes = views(carray(Bp, (nB,)), d)
        yv = label(y) if classify else y
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
        if n_mu == 0:
            MU = hyper[mu_index : mu_index + 1]
        elif n_mu == n or n_mu == 1:
            MU = carray(mup, (n_mu,))
            for t in range(n_mu):
                if not (MU[t] >= 0.0 and MU[t] < 1.0):
                    return np.int64(BAD_FORGETTING)
        else:
            return np.int64(BAD_LENGTH)
        if classify:
            # The labels mapped into out (read at row t before out[t] is written).
            Y = carray(Yp, (n,))
            for t in range(n):
                out[t] = label(Y[t])
            Y = out
        else:
            Y = carray(Yp, (n,))
        first = learn_many_kernel(X, Y, MU, out, PW, L, work, hyper, codes)
        if classify:
            for t in range(n):
                out[t] = 1.0 if out[t] >= 0.0 else -1.0
        return np.int64(first)

    def predict_one(PWp, Bp, xp):
        PW = carray(PWp, (d + 1, d))
        x = carray(xp, (d,))
        score = predict_kernel(x, PW[d])
        if classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    T = _numba_float(model.dtype)
    pw, pb = types.CPointer(_numba_float(PW.dtype)), types.CPointer(types.float64)
    px, pd = types.CPointer(T), types.CPointer(types.float64)
    family.functions = {
        "learn_one": (learn_one, types.int64(pw, pb, px, types.float64, pd)),
        "learn_many": (learn_many, types.int64(pw, pb, px, pd, types.int64, pd, types.int64, pd)),
        "predict_one": (predict_one, types.float64(pw, pb, px)),
    }
    return family


def family_of(model: Any) -> Family:
    """The export description of a model instance, or a clear refusal."""
    from ..dfop import DFOP

    if isinstance(model, DFOP) and type(model).__name__ in ("DFOP", "RLS"):
        return dfop_family(model)
    from ._errors import ExportError

    raise ExportError(
        f"{type(model).__name__} cannot be exported yet (supported: DFOP, RLS; "
        "docs/design/export.md says why the others are not yet)")
