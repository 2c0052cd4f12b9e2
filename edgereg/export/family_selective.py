"""SelectiveSampler's exported functions: the standard calls and a round in two calls.

``learn_one`` (a round whose label is given), ``learn_many`` and
``predict_one`` have DFOP's classification shapes; the selective round of
``process_one`` is two further C calls, ``assess`` then ``commit``, over the
kernels the class calls between the label oracle's question and answer
(``_kernels/selective_one.py``'s ``_assess_one`` and ``_commit``):

    int64 assess(block..., round, const T *x, double *yhat, int64 *ask) -> status
    int64 commit(block..., round, double y)                            -> status

``assess`` predicts x and decides whether to ask for its label (``*ask`` 1 or
0), keeping the round's values in the small block ``round`` (the prepared x,
A^-1 x and the demo's products stay in the struct's scratch); ``commit`` reads
y only when the round asked for it (pass NaN otherwise, as ``process_many``
reads no label of a row it does not query) and finishes the round: switch
test, learning, rebuilds. ``learn_one`` and ``learn_many`` overwrite the
scratch and so drop a pending round; ``commit`` without one returns NO_ROUND
and changes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, njit, types

from .._kernels.selective_block import _label_of
from ._errors import ExportError
from .shims import (
    BAD_LENGTH,
    SHIM_OPTIONS,
    Block,
    Family,
    Field,
    index_names,
    locate_fields,
    stack_array,
)

#: commit's status when no assessed round is pending (nothing is done).
NO_ROUND = 3
#: Length of the ``round`` block: pending flag, then f, r', g, r'_L and the ask code.
N_ROUND = 6
#: Rows of learn_many per kernel call: its ``asked`` flags live in a stack array of
#: this many bytes (the block kernel needs one per row; the C call allocates nothing).
CHUNK = 64


def _c_api(T: str) -> list[str]:
    """The header's declarations of assess and commit (``@prefix@`` / ``@PREFIX@``: the
    export's prefix, written in by the header)."""
    blocks = (f"{T} *A, int64_t *N, double *E, {T} *Z, double *F, double *hyper, "
              "int64_t *codes, double *round")
    args = "s->A, s->N, s->E, s->Z, s->F, s->hyper, s->codes, s->round"
    return [
        "/* The selective round (process_one) in two calls: assess, then commit. */",
        "#define @PREFIX@_NO_ROUND 3 /* commit: no assessed round pending (nothing done) */",
        f"int64_t @prefix@_assess_blocks({blocks},",
        f"    const {T} *x, double *yhat, int64_t *ask);",
        f"int64_t @prefix@_commit_blocks({blocks}, double y);",
        "/* Predict x (*yhat = -1 or +1) and decide by the BBQ rule and the switch test",
        " * whether its label is needed (*ask = 1, else 0); the round is kept in the",
        " * state until commit; assess alone learns nothing (should_query). Returns OK,",
        " * or INVALID (x NaN/inf: no round pending, *ask = 0, counted as skipped when",
        " * on_invalid was \"skip\"). */",
        f"static inline int64_t @prefix@_assess(@prefix@_state *s, const {T} *x, double *yhat,",
        f"    int64_t *ask) {{ return @prefix@_assess_blocks({args}, x, yhat, ask); }}",
        "/* Finish the assessed round: y is its label when assess asked for it (1 is +1,",
        " * 0 or -1 is -1), else not read (pass NAN). Switch test, learning, rebuilds.",
        " * Returns OK, INVALID (an asked label that is not 1, 0 or -1: state unchanged",
        " * but the skipped count under on_invalid \"skip\"; the round is over) or",
        " * NO_ROUND (no assess since the last commit, learn_one or learn_many). */",
        "static inline int64_t @prefix@_commit(@prefix@_state *s, double y) {",
        f"    return @prefix@_commit_blocks({args}, y); }}",
    ]


def selective_family(model: Any) -> Family:
    """SelectiveSampler (every switch test, float64 and float32) over the class's seven
    blocks A, N, E, Z, F, hyper, codes (the arrays its kernels take) and ``round``."""
    from .._kernels import selective as k
    from .._kernels.selective_block import _run_many_learn
    from .._kernels.selective_one import _assess_one, _commit, _learn_one
    from ..dfop import _dfop_predict_one

    if type(model).__name__ != "SelectiveSampler":
        raise ExportError(f"{type(model).__name__} is not a SelectiveSampler")
    names = ("A", "N", "E", "Z", "F", "hyper", "codes")
    live = dict(zip(names, model._blocks, strict=True))
    init = type(model)(**model.get_params())
    fresh = dict(zip(names, init._blocks, strict=True))
    for name, a in live.items():
        if a.ndim != 1 or not a.flags.c_contiguous:
            raise ExportError(f"SelectiveSampler's block {name} is not one contiguous "
                              "vector: the exporter cannot lay it out")
    sizes = {n: a.size for n, a in live.items()}
    # A C array has at least one element: an empty block (E without a switch test) keeps
    # one unused slot in the struct; the kernels see it empty.
    blocks = [Block(n, a.dtype, max(a.size, 1),
                    fresh[n].copy() if a.size else np.zeros(1, a.dtype))
              for n, a in live.items()]
    blocks.append(Block("round", np.dtype(np.float64), N_ROUND, np.zeros(N_ROUND)))
    state = model._state
    if state.switch_test.size == 0:  # no test: nothing of E is learnt
        state = state._replace(switch_test=None)
    located = {n: a for n, a in live.items() if a.size}
    fields = locate_fields(located, [(state, True), (model._work, False)])
    fields += [Field("round_pending", "round", 0, (1,), np.dtype(np.float64), False),
               Field("round_assessed", "round", 1, (N_ROUND - 1,), np.dtype(np.float64),
                     False)]
    hyper = {n: float(model._work.hyper[i]) for n, i in index_names(k, "hyper").items()}
    codes = {n: int(model._work.codes[i]) for n, i in index_names(k, "codes").items()}
    if len(hyper) != model._work.hyper.size or len(codes) != model._work.codes.size:
        raise ExportError("_kernels/selective.py's HYPER_/CODE_ names do not cover hyper "
                          "and codes: the header could not name them")
    d = model.n_features
    family = Family(
        prefix="selective",
        d=d,
        dtype=np.dtype(model.dtype),
        task="classification",
        blocks=blocks,
        fields=fields,
        hyper=hyper,
        codes=codes,
        current={**live, "round": np.zeros(N_ROUND)},
        forgetting=False,
    )
    nA, nN, nE, nZ, nF = (sizes[n] for n in ("A", "N", "E", "Z", "F"))
    nH, nC = sizes["hyper"], sizes["codes"]
    OK, NO_LABEL = k.OK, k.NO_LABEL
    skipped, counts_at = k.COUNT_SKIPPED, k.SWITCH_RECORD  # counts = N[SWITCH_RECORD:]
    skip_code = k.CODE_SKIP
    flags = stack_array(CHUNK, types.boolean)

    @njit(inline="always", **SHIM_OPTIONS)
    def views(Ap, Np, Ep, Zp, Fp, Hp, Cp):
        return (carray(Ap, (nA,)), carray(Np, (nN,)), carray(Ep, (nE,)), carray(Zp, (nZ,)),
                carray(Fp, (nF,)), carray(Hp, (nH,)), carray(Cp, (nC,)))

    @njit(inline="always", **SHIM_OPTIONS)
    def sign(f):
        return 1.0 if f >= 0.0 else -1.0

    def learn_one(Ap, Np, Ep, Zp, Fp, Hp, Cp, Rp, xp, y, yhat_p):
        A, N, E, Z, F, hyper, codes = views(Ap, Np, Ep, Zp, Fp, Hp, Cp)
        carray(Rp, (N_ROUND,))[0] = 0.0  # the scratch is overwritten: no round pending
        f, status = _learn_one(carray(xp, (d,)), _label_of(y), A, N, E, Z, F, hyper, codes)
        carray(yhat_p, (1,))[0] = sign(f)
        return np.int64(status)

    def learn_many(Ap, Np, Ep, Zp, Fp, Hp, Cp, Rp, Xp, Yp, n, mup, n_mu, outp):
        if n_mu != 0:
            return np.int64(BAD_LENGTH)
        A, N, E, Z, F, hyper, codes = views(Ap, Np, Ep, Zp, Fp, Hp, Cp)
        carray(Rp, (N_ROUND,))[0] = 0.0
        X = carray(Xp, (n, d))
        Y = carray(Yp, (n,))  # raw labels: the block kernel maps them (_label_of)
        out = carray(outp, (n,))
        asked = carray(flags(), (CHUNK,))
        for lo in range(0, n, CHUNK):  # learn_many is learn_one row by row: chunks too
            hi = min(lo + CHUNK, n)
            first = _run_many_learn(X[lo:hi], Y[lo:hi], out[lo:hi], asked[: hi - lo], A, N,
                                    E, Z, F, hyper, codes)
            if first >= 0:
                return np.int64(lo + first)
        return np.int64(-1)

    def predict_one(Ap, Np, Ep, Zp, Fp, Hp, Cp, Rp, xp):
        return sign(_dfop_predict_one(carray(xp, (d,)), carray(Ap, (nA,))[:d]))

    def assess(Ap, Np, Ep, Zp, Fp, Hp, Cp, Rp, xp, yhat_p, ask_p):
        A, N, E, Z, F, hyper, codes = views(Ap, Np, Ep, Zp, Fp, Hp, Cp)
        R = carray(Rp, (N_ROUND,))
        f, rp, g, rLp, ask, status = _assess_one(carray(xp, (d,)), False, A, N, E, Z, F,
                                                 hyper, codes)
        carray(yhat_p, (1,))[0] = sign(f)  # process_one's prediction, made before the label
        if status == OK:
            R[0] = 1.0
            R[1] = f
            R[2] = rp
            R[3] = g
            R[4] = rLp
            R[5] = float(ask)
            carray(ask_p, (1,))[0] = np.int64(1 if ask != NO_LABEL else 0)
        else:
            R[0] = 0.0
            carray(ask_p, (1,))[0] = np.int64(0)
            if codes[skip_code] != 0:
                N[counts_at + skipped] += 1
        return np.int64(status)

    def commit(Ap, Np, Ep, Zp, Fp, Hp, Cp, Rp, y):
        R = carray(Rp, (N_ROUND,))
        if R[0] != 1.0:
            return np.int64(NO_ROUND)
        R[0] = 0.0
        A, N, E, Z, F, hyper, codes = views(Ap, Np, Ep, Zp, Fp, Hp, Cp)
        ask = np.int64(R[5])
        yv = _label_of(y) if ask != NO_LABEL else 0.0
        status = _commit(yv, (R[1], R[2], R[3], R[4], ask), A, N, E, Z, F, hyper, codes)
        if status != OK and codes[skip_code] != 0:
            N[counts_at + skipped] += 1
        return np.int64(status)

    T = types.float32 if np.dtype(model.dtype) == np.float32 else types.float64
    pT, pd, pi = types.CPointer(T), types.CPointer(types.float64), types.CPointer(types.int64)
    args = (pT, pi, pd, pT, pd, pd, pi, pd)
    family.functions = {
        "learn_one": (learn_one, types.int64(*args, pT, types.float64, pd)),
        "learn_many": (learn_many, types.int64(*args, pT, pd, types.int64, pd, types.int64,
                                               pd)),
        "predict_one": (predict_one, types.float64(*args, pT)),
        "assess": (assess, types.int64(*args, pT, pd, pi)),
        "commit": (commit, types.int64(*args, types.float64)),
    }
    family.c_api = _c_api("float" if T == types.float32 else "double")
    return family
