"""The exported functions of PARegressor, SOMOR and MORES: the multi-output models.

One output or m: y and yhat are m values (``const double *y``, ``double
*yhat``; Y and out n x m, row-major) and predict_one writes them. No
forgetting: learn_many's n_mu must be 0. With ``arithmetic="float32"`` y, yhat,
Y, mu and out are float in C. The route and the shapes: ``families.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, njit, types

from .shims import (
    BAD_LENGTH,
    SHIM_OPTIONS,
    Block,
    Family,
    _numba_float,
    _stack_double,
    _stack_float,
    locate_fields,
)


def _own_and_imported(module: Any, prefix: str) -> dict[str, int]:
    """The index constants a kernel module uses, its own and those it imports
    (pa.py appends its names to MORES' shared ones), ordered by index."""
    found = {k: v for k, v in vars(module).items() if k.startswith(prefix) and type(v) is int}
    ordered = dict(sorted(found.items(), key=lambda kv: kv[1]))
    if list(ordered.values()) != list(range(len(ordered))):
        raise ValueError(f"{module.__name__}: {prefix}* indices are not 0..n-1: {ordered}")
    return ordered


def linear_family(model: Any) -> Family:
    """SOMOR and PARegressor (PA-I, PA-II; one output or m): ``_lin_learn_one`` /
    ``_lin_learn_many`` over the model's six blocks W, counts, scratch, bound,
    hyper, codes. No forgetting: learn_many's n_mu must be 0. With
    ``arithmetic="float32"`` the kernels of ``_kernels/pa32.py``, y, yhat, Y, mu
    and out float in C (no double anywhere)."""
    from .._kernels import mores as km
    from .._kernels import pa as k
    from .._kernels import pa32 as k32

    s, w = model._state, model._work
    arrays = {"W": s.W, "counts": s.counts, "scratch": w.scratch, "bound": w.bound,
              "hyper": w.hyper, "codes": w.codes}
    init = type(model)(**model.get_params())
    fresh = {"W": init._state.W, "counts": init._state.counts, "scratch": init._work.scratch,
             "bound": init._work.bound, "hyper": init._work.hyper, "codes": init._work.codes}
    D, m, d = model._D, model._m, model.n_features
    scalar = getattr(model, "_scalar", False)
    family = Family(
        prefix="pa" if type(model).__name__ == "PARegressor" else "somor",
        d=d,
        dtype=np.dtype(model.dtype),
        task="regression",
        blocks=[Block(n, a.dtype, a.size, fresh[n].reshape(-1).copy()) for n, a in arrays.items()],
        fields=locate_fields(arrays, [(s, True), (w, False)]),
        hyper={n: float(w.hyper[i]) for n, i in _own_and_imported(k, "HYPER_").items()},
        codes={n: int(w.codes[i]) for n, i in _own_and_imported(k, "CODE_").items()},
        current=arrays,
        n_outputs=0 if scalar else m,
        forgetting=False,
    )
    if len(family.hyper) != w.hyper.size or len(family.codes) != w.codes.size:
        raise ValueError("pa.py's index names do not cover hyper and codes")
    nS, nb, nh, nc = w.scratch.size, w.bound.size, w.hyper.size, w.codes.size
    intercept_code = family.codes["CODE_INTERCEPT"]
    arith32 = model._arith32
    if arith32:
        family.io = np.dtype(np.float32)
        learn_one_kernel, learn_many_kernel = k32.lin32_learn_one, k32.lin32_learn_many
        predict_kernel, stack_y = k32.mo32_predict_one, _stack_float
    else:
        learn_one_kernel, learn_many_kernel = k._lin_learn_one, k._lin_learn_many
        predict_kernel, stack_y = km._mo_predict_one, _stack_double

    def views(Wp, Cp, Sp, Bp, Hp, Kp):
        return (carray(Wp, (D, m)), carray(Cp, (2,)), carray(Sp, (nS,)), carray(Bp, (nb,)),
                carray(Hp, (nh,)), carray(Kp, (nc,)))

    views = njit(inline="always", **SHIM_OPTIONS)(views)

    def learn_one_scalar(Wp, Cp, Sp, Bp, Hp, Kp, xp, y, yhat_p):
        W, counts, scratch, bound, hyper, codes = views(Wp, Cp, Sp, Bp, Hp, Kp)
        yv = carray(stack_y(), (1,))
        yv[0] = y
        return np.int64(learn_one_kernel(carray(xp, (d,)), yv, carray(yhat_p, (1,)), W,
                                         counts, scratch, bound, hyper, codes))

    def learn_one_vector(Wp, Cp, Sp, Bp, Hp, Kp, xp, yp, yhat_p):
        W, counts, scratch, bound, hyper, codes = views(Wp, Cp, Sp, Bp, Hp, Kp)
        return np.int64(learn_one_kernel(carray(xp, (d,)), carray(yp, (m,)),
                                         carray(yhat_p, (m,)), W, counts, scratch, bound,
                                         hyper, codes))

    def learn_many(Wp, Cp, Sp, Bp, Hp, Kp, Xp, Yp, n, mup, n_mu, outp):
        if n_mu != 0:
            return np.int64(BAD_LENGTH)
        W, counts, scratch, bound, hyper, codes = views(Wp, Cp, Sp, Bp, Hp, Kp)
        return np.int64(learn_many_kernel(carray(Xp, (n, d)), carray(Yp, (n, m)),
                                          carray(outp, (n, m)), W, counts, scratch, bound,
                                          hyper, codes))

    def predict_one_scalar(Wp, Cp, Sp, Bp, Hp, Kp, xp):
        W, counts, scratch, bound, hyper, codes = views(Wp, Cp, Sp, Bp, Hp, Kp)
        out = carray(stack_y(), (1,))
        predict_kernel(carray(xp, (d,)), codes[intercept_code] != 0, W, out)
        return out[0]

    def predict_one_vector(Wp, Cp, Sp, Bp, Hp, Kp, xp, yhat_p):
        W, counts, scratch, bound, hyper, codes = views(Wp, Cp, Sp, Bp, Hp, Kp)
        predict_kernel(carray(xp, (d,)), codes[intercept_code] != 0, W, carray(yhat_p, (m,)))
        return np.int64(0)

    T = _numba_float(model.dtype)
    pT, pd, pi = types.CPointer(T), types.CPointer(types.float64), types.CPointer(types.int64)
    Y = types.float32 if arith32 else types.float64  # y, yhat, Y, mu, out
    pY = types.CPointer(Y)
    blocks = (pT, pi, pT, pd, pd, pi)
    many = types.int64(*blocks, pT, pY, types.int64, pY, types.int64, pY)
    if scalar:
        family.functions = {
            "learn_one": (learn_one_scalar, types.int64(*blocks, pT, Y, pY)),
            "learn_many": (learn_many, many),
            "predict_one": (predict_one_scalar, Y(*blocks, pT)),
        }
    else:
        family.functions = {
            "learn_one": (learn_one_vector, types.int64(*blocks, pT, pY, pY)),
            "learn_many": (learn_many, many),
            "predict_one": (predict_one_vector, types.int64(*blocks, pT, pY)),
        }
    return family


def mores_family(model: Any) -> Family:
    """MORES (m outputs): ``_mores_learn_one`` / ``_mores_learn_many`` over its five
    blocks A (every learnt matrix), counts, scratch, hyper, codes. Its decay is
    a constant: learn_many's n_mu must be 0. With ``arithmetic="float32"`` the
    kernels of ``_kernels/mores32.py`` (and pa32.py's prediction), y, yhat, Y, mu
    and out float in C (no double anywhere)."""
    from .._kernels import mores as k
    from .._kernels import mores32 as k32
    from .._kernels import pa32

    s, w = model._state, model._work
    arrays = dict(zip(("A", "counts", "scratch", "hyper", "codes"), model._blocks, strict=True))
    init = type(model)(**model.get_params())
    family = Family(
        prefix="mores",
        d=model.n_features,
        dtype=np.dtype(model.dtype),
        task="regression",
        blocks=[Block(n, a.dtype, a.size, b.reshape(-1).copy())
                for (n, a), b in zip(arrays.items(), init._blocks, strict=True)],
        fields=locate_fields(arrays, [(s, True), (w, False)]),
        hyper={n: float(w.hyper[i]) for n, i in _own_and_imported(k, "HYPER_").items()},
        codes={n: int(w.codes[i]) for n, i in _own_and_imported(k, "CODE_").items()},
        current=arrays,
        n_outputs=model._m,
        forgetting=False,
    )
    if len(family.hyper) != w.hyper.size or len(family.codes) != w.codes.size:
        raise ValueError("mores.py's index names do not cover hyper and codes")
    D, m, d = model._D, model._m, model.n_features
    nA, nS, nh, nc = (arrays[n].size for n in ("A", "scratch", "hyper", "codes"))
    intercept_code = family.codes["CODE_INTERCEPT"]
    arith32 = model._arith32
    if arith32:
        family.io = np.dtype(np.float32)
        learn_one_kernel, learn_many_kernel = k32.mores32_learn_one, k32.mores32_learn_many
        predict_kernel = pa32.mo32_predict_one
    else:
        learn_one_kernel, learn_many_kernel = k._mores_learn_one, k._mores_learn_many
        predict_kernel = k._mo_predict_one

    def views(Ap, Cp, Sp, Hp, Kp):
        return (carray(Ap, (nA,)), carray(Cp, (2,)), carray(Sp, (nS,)), carray(Hp, (nh,)),
                carray(Kp, (nc,)))

    views = njit(inline="always", **SHIM_OPTIONS)(views)

    def learn_one(Ap, Cp, Sp, Hp, Kp, xp, yp, yhat_p):
        A, counts, scratch, hyper, codes = views(Ap, Cp, Sp, Hp, Kp)
        skipped = counts[1]
        status = learn_one_kernel(carray(xp, (d,)), carray(yp, (m,)), carray(yhat_p, (m,)),
                                  A, counts, scratch, hyper, codes)
        # The kernel answers OK for a row it skipped; C is told INVALID, as by
        # every other family (state unchanged but the skipped count).
        return np.int64(k.INVALID if counts[1] != skipped else status)

    def learn_many(Ap, Cp, Sp, Hp, Kp, Xp, Yp, n, mup, n_mu, outp):
        if n_mu != 0:
            return np.int64(BAD_LENGTH)
        A, counts, scratch, hyper, codes = views(Ap, Cp, Sp, Hp, Kp)
        return np.int64(learn_many_kernel(carray(Xp, (n, d)), carray(Yp, (n, m)),
                                          carray(outp, (n, m)), A, counts, scratch, hyper,
                                          codes))

    if arith32:  # without reshape's size check, a comparison in double (mores32._view)
        def weights(A):
            return k32._view(A[: D * m], (D, m))
    else:
        def weights(A):
            return A[: D * m].reshape((D, m))

    weights = njit(inline="always", **SHIM_OPTIONS)(weights)

    def predict_one(Ap, Cp, Sp, Hp, Kp, xp, yhat_p):
        A, counts, scratch, hyper, codes = views(Ap, Cp, Sp, Hp, Kp)
        W = weights(A)  # the first of the learnt block's views
        predict_kernel(carray(xp, (d,)), codes[intercept_code] != 0, W, carray(yhat_p, (m,)))
        return np.int64(0)

    T = _numba_float(model.dtype)
    pT, pd, pi = types.CPointer(T), types.CPointer(types.float64), types.CPointer(types.int64)
    pY = types.CPointer(types.float32 if arith32 else types.float64)  # y, yhat, Y, mu, out
    blocks = (pT, pi, pT, pd, pi)
    family.functions = {
        "learn_one": (learn_one, types.int64(*blocks, pT, pY, pY)),
        "learn_many": (learn_many, types.int64(*blocks, pT, pY, types.int64, pY, types.int64,
                                               pY)),
        "predict_one": (predict_one, types.int64(*blocks, pT, pY)),
    }
    return family
