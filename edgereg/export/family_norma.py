"""The exported functions of the three NORMA models (regression, classification,
novelty), their default arithmetic and their float32-only one. The route and
the shapes: ``families.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, njit, types

from .._kernels.selective_block import _label_of
from .shims import (
    BAD_LENGTH,
    SHIM_OPTIONS,
    Block,
    Family,
    _label_of32,
    _numba_float,
    _stack_double,
    _stack_float,
    index_names,
    locate_fields,
)


def norma_family(model: Any) -> Family:
    """NORMA: regression, classification (labels as DFOP's: 1 -> +1, 0 or -1 -> -1,
    yhat -1/+1) and novelty (y not read, yhat 1.0 for novel else 0.0), over the
    class's seven blocks. No forgetting: learn_many's n_mu must be 0. The RBF and
    Laplacian kernels' exp is the kernels' own polynomial (no libm call). With
    ``arithmetic="float32"``: the kernels of ``_kernels/norma32.py``."""
    from .._kernels import norma as k

    s, w = model._state, model._work
    arrays = {"sv": s.support_vectors, "C": s.coef.base, "counts": s.counts, "row": w.row,
              "exp": w.exp, "hyper": model._hyper, "codes": model._codes}
    init = type(model)(**model.get_params())
    fresh = {"sv": init._state.support_vectors, "C": init._state.coef.base,
             "counts": init._state.counts, "row": init._work.row, "exp": init._work.exp,
             "hyper": init._hyper, "codes": init._codes}
    d, tau = s.support_vectors.shape
    task = model._task
    family = Family(
        prefix="norma",
        d=d,
        dtype=np.dtype(model.dtype),
        task=task,
        blocks=[Block(n, a.dtype, a.size, fresh[n].reshape(-1).copy()) for n, a in arrays.items()],
        fields=locate_fields(arrays, [(s, True), (w, False)]),
        hyper={n: float(model._hyper[i]) for n, i in index_names(k, "hyper").items()},
        codes={n: int(model._codes[i]) for n, i in index_names(k, "codes").items()},
        current=arrays,
        forgetting=False,
    )
    nC, nc, nh, ncode = tau + 3, s.counts.size, model._hyper.size, model._codes.size
    classify, novelty = task == "classification", task == "novelty"
    if model._arith32:
        from .._kernels import norma32 as k32

        family.io = np.dtype(np.float32)
        kernels = (k32.norma32_learn_one, k32.norma32_learn_many, k32.norma32_predict_one)
        return _norma_functions(family, kernels, (d, tau, nC, nc, nh, ncode), classify,
                                novelty, types.float32, types.float32)
    kernels = (k._norma_learn_one, k._norma_learn_many, k._norma_predict_one)
    return _norma_functions(family, kernels, (d, tau, nC, nc, nh, ncode), classify, novelty,
                            _numba_float(model.dtype), types.float64)


def _norma_functions(family: Family, kernels: tuple, sizes: tuple, classify: bool,
                     novelty: bool, T: Any, F: Any) -> Family:
    """The three C functions over NORMA's kernels (learn_one, learn_many,
    predict_one): T the arrays' type, F that of y, yhat, Y and out (float64; float32
    in the float32-only arithmetic of ``_kernels/norma32.py``, with no double
    anywhere: its labels by ``_label_of32``, its constants float32)."""
    learn_one_kernel, learn_many_kernel, predict_kernel = kernels
    d, tau, nC, nc, nh, ncode = sizes
    f32 = F == types.float32
    label_of = _label_of32 if f32 else _label_of
    stack = _stack_float if f32 else _stack_double
    one, zero = (np.float32(1.0), np.float32(0.0)) if f32 else (1.0, 0.0)

    def shown(score):  # what the class returns for a score, in F
        if classify:
            return one if score >= zero else -one
        if novelty:
            return one if score < zero else zero
        return score

    shown = njit(inline="always", **SHIM_OPTIONS)(shown)

    def views(Sp, Cp, Kp, Rp, Ep, Hp, Qp):
        return (carray(Sp, (d, tau)), carray(Cp, (nC,)), carray(Kp, (nc,)), carray(Rp, (tau,)),
                carray(Ep, (tau,)), carray(Hp, (nh,)), carray(Qp, (ncode,)))

    views = njit(inline="always", **SHIM_OPTIONS)(views)

    def learn_one(Sp, Cp, Kp, Rp, Ep, Hp, Qp, xp, y, yhat_p):
        sv, C, counts, row, ex, hyper, codes = views(Sp, Cp, Kp, Rp, Ep, Hp, Qp)
        yv = zero if novelty else (label_of(y) if classify else y)
        score, status = learn_one_kernel(carray(xp, (d,)), yv, sv, C, counts, row, ex, hyper,
                                         codes)
        carray(yhat_p, (1,))[0] = shown(score)
        return np.int64(status)

    def learn_many(Sp, Cp, Kp, Rp, Ep, Hp, Qp, Xp, Yp, n, mup, n_mu, outp):
        if n_mu != 0:
            return np.int64(BAD_LENGTH)
        sv, C, counts, row, ex, hyper, codes = views(Sp, Cp, Kp, Rp, Ep, Hp, Qp)
        X = carray(Xp, (n, d))
        out = carray(outp, (n,))
        if novelty:  # no target: one 0 for every row (the class's own _NO_TARGET)
            Y = carray(stack(), (1,))
            Y[0] = zero
        elif classify:  # the labels written into out, read as Y (row t before out[t])
            Yin = carray(Yp, (n,))
            for t in range(n):
                out[t] = label_of(Yin[t])
            Y = out
        else:
            Y = carray(Yp, (n,))
        first = learn_many_kernel(X, Y, out, sv, C, counts, row, ex, hyper, codes)
        if classify or novelty:
            for t in range(n):
                out[t] = shown(out[t])
        return np.int64(first)

    def predict_one(Sp, Cp, Kp, Rp, Ep, Hp, Qp, xp):
        sv, C, counts, row, ex, hyper, codes = views(Sp, Cp, Kp, Rp, Ep, Hp, Qp)
        return shown(predict_kernel(carray(xp, (d,)), sv, C, counts, row, ex, hyper, codes))

    pT, pF = types.CPointer(T), types.CPointer(F)
    pd, pi = types.CPointer(types.float64), types.CPointer(types.int64)
    blocks = (pT, pT, pi, pT, pi, pd, pi)
    family.functions = {
        "learn_one": (learn_one, types.int64(*blocks, pT, F, pF)),
        "learn_many": (learn_many, types.int64(*blocks, pT, pF, types.int64, pF, types.int64,
                                               pF)),
        "predict_one": (predict_one, F(*blocks, pT)),
    }
    return family
