"""The exported functions of each model family, as numba shims over its blocks.

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
    _labels_into,
    _numba_float,
    _signs,
    _stack_double,
    _stack_float,
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


@njit(inline="always", **SHIM_OPTIONS)
def _label_of32(v):
    """``_label_of`` in float32 (a float32 y; no double compare)."""
    if v == np.float32(1.0):
        return np.float32(1.0)
    if v == np.float32(0.0) or v == np.float32(-1.0):
        return np.float32(-1.0)
    return np.float32(np.nan)


@njit(inline="always", **SHIM_OPTIONS)
def _sign32(v):
    return np.float32(1.0) if v >= np.float32(0.0) else np.float32(-1.0)


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


def norma_family(model: Any) -> Family:
    """NORMA: regression, classification (labels as DFOP's: 1 -> +1, 0 or -1 -> -1,
    yhat -1/+1) and novelty (y not read, yhat 1.0 for novel else 0.0), over the
    class's seven blocks. No forgetting: learn_many's n_mu must be 0. The RBF and
    Laplacian kernels' exp is the kernels' own polynomial (no libm call). With
    ``arithmetic="float32"``: ``_norma32_functions``."""
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
        return _norma32_functions(family, d, tau, nC, nc, nh, ncode, classify, novelty)
    learn_one_kernel, learn_many_kernel = k._norma_learn_one, k._norma_learn_many
    predict_kernel = k._norma_predict_one

    def shown(score):  # what the class returns for a score
        if classify:
            return 1.0 if score >= 0.0 else -1.0
        if novelty:
            return 1.0 if score < 0.0 else 0.0
        return score

    shown = njit(inline="always", **SHIM_OPTIONS)(shown)

    def views(Sp, Cp, Kp, Rp, Ep, Hp, Qp):
        return (carray(Sp, (d, tau)), carray(Cp, (nC,)), carray(Kp, (nc,)), carray(Rp, (tau,)),
                carray(Ep, (tau,)), carray(Hp, (nh,)), carray(Qp, (ncode,)))

    views = njit(inline="always", **SHIM_OPTIONS)(views)

    def learn_one(Sp, Cp, Kp, Rp, Ep, Hp, Qp, xp, y, yhat_p):
        sv, C, counts, row, ex, hyper, codes = views(Sp, Cp, Kp, Rp, Ep, Hp, Qp)
        yv = 0.0 if novelty else (_label_of(y) if classify else y)
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
        if novelty:  # no target: one 0.0 for every row (the class's own _NO_TARGET)
            Y = carray(_stack_double(), (1,))
            Y[0] = 0.0
        elif classify:
            Y = _labels_into(Yp, n, out)
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

    T = _numba_float(model.dtype)
    pT, pd, pi = types.CPointer(T), types.CPointer(types.float64), types.CPointer(types.int64)
    blocks = (pT, pT, pi, pT, pi, pd, pi)
    family.functions = {
        "learn_one": (learn_one, types.int64(*blocks, pT, types.float64, pd)),
        "learn_many": (learn_many, types.int64(*blocks, pT, pd, types.int64, pd, types.int64,
                                               pd)),
        "predict_one": (predict_one, types.float64(*blocks, pT)),
    }
    return family


def _norma32_functions(family: Family, d: int, tau: int, nC: int, nc: int, nh: int,
                       ncode: int, classify: bool, novelty: bool) -> Family:
    """NORMA with ``arithmetic="float32"``: ``norma_family``'s shims over the kernels of
    ``_kernels/norma32.py``, y, yhat, Y and out float in C (no double anywhere)."""
    from .._kernels import norma32 as k

    family.io = np.dtype(np.float32)
    learn_one_kernel, learn_many_kernel = k.norma32_learn_one, k.norma32_learn_many
    predict_kernel = k.norma32_predict_one
    one, zero = np.float32(1.0), np.float32(0.0)

    def shown(score):  # what the class returns for a score, in float32
        if classify:
            return _sign32(score)
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
        yv = zero if novelty else (_label_of32(y) if classify else y)
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
        if novelty:  # no target: one 0 for every row (the class's own _NO_TARGET32)
            Y = carray(_stack_float(), (1,))
            Y[0] = zero
        elif classify:  # the labels written into out, read as Y (row t before out[t])
            Yin = carray(Yp, (n,))
            for t in range(n):
                out[t] = _label_of32(Yin[t])
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

    T, F = types.float32, types.float32
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
    from ..mores import MORES, SOMOR, PARegressor

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
        return linear_family(model)
    if isinstance(model, MORES) and name == "MORES":
        return mores_family(model)
    if isinstance(model, _NORMA) and name in SUPPORTED:
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
