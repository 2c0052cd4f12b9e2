"""SparseDFOP's export: DFOP's blocks, the projection's arrays as more blocks, and
two further C calls for a sparse row (its indices and values).

The shims call the class's own kernels (``_kernels/sparse.py``): the projection
psi = M x (a column of M per non-zero: computed from the hash, +-1 from its
bits, or read from the stored M_T), then DFOP's step on psi. The projection's
kind, seed key and scale are constants of the export (as d is), so the object
holds the one kind it runs.

C calls (T the model's dtype; D = ``<P>_N_FEATURES``, d = ``<P>_N_COMPONENTS``):

    learn_one, learn_many, predict_one   DFOP's shapes over a dense row of D values
    int64 learn_one_sparse(blocks..., const int64 *indices, const T *values,
                           int64 nnz, double y, double *yhat)
    int64 predict_one_sparse(blocks..., const int64 *indices, const T *values,
                             int64 nnz, double *yhat)

A sparse row's indices must be in [0, D) and non-decreasing (a repeated index
adds up, in the given order, as the class adds them after its stable sort); the
class sorts an unsorted row, the C call does not (it would need a copy): it
returns BAD_INDICES (-4), as for an index out of range or nnz < 0, before
anything is read past the check, the state unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, njit, types

from .._kernels.selective_block import _label_of
from ._errors import ExportError
from .shims import (
    SHIM_OPTIONS,
    Block,
    Family,
    Field,
    _factors_status,
    _labels_into,
    _numba_float,
    _signs,
    index_names,
    locate_fields,
)

#: learn_one_sparse / predict_one_sparse: an index out of [0, D), indices not
#: non-decreasing, or nnz < 0 (nothing read past the check, the state unchanged).
BAD_INDICES = -4
#: The largest stored projection (``projection="gaussian"``: M_T, D x d values in
#: the struct and in the header's init table) an export accepts.
MAX_STORED_BYTES = 64 * 1024


def _refusal(model: Any) -> str | None:
    """Why the route cannot honour this SparseDFOP, or None."""
    from .._kernels.sparse import STORED

    if getattr(model, "_arith32", False):
        return "arithmetic='float32' is not a SparseDFOP option"
    if model._kind == STORED and model._state.M_T.nbytes > MAX_STORED_BYTES:
        return (f"projection='gaussian' stores M ({model.n_features} x {model.n_components}, "
                f"{model._state.M_T.nbytes} bytes) in the state and in the header's init "
                f"table, over the export's {MAX_STORED_BYTES} bytes; projection='hashed' "
                "computes the same M on the fly and stores nothing")
    return None


def sparse_dfop_family(model: Any) -> Family:
    """SparseDFOP (regression and classification, fixed or per-step forgetting, the
    three projections; not ``coverage``, refused by ``family_of``) over the blocks
    PW, B (DFOP's), M_T (``"gaussian"`` only), psi, col, psi_block, hash."""
    from .._kernels import dfop as k
    from .._kernels import sparse as ks

    why = _refusal(model)
    if why:
        raise ExportError(f"SparseDFOP cannot be exported: {why}")
    D = model.n_features
    s, w = model._state, model._work
    init = type(model)(**model.get_params())
    stored = model._kind == ks.STORED
    hash64 = w.hash.view(np.int64)  # uint32 words kept in int64 slots (C has the type)
    arrays = {"PW": model._PW, "B": model._B}
    fresh = {"PW": init._PW, "B": init._B}
    if stored:
        arrays["M_T"], fresh["M_T"] = s.M_T, init._state.M_T
    arrays |= {"psi": w.psi, "col": w.col, "psi_block": w.psi_block, "hash": hash64}
    fresh |= {"psi": init._work.psi, "col": init._work.col,
              "psi_block": init._work.psi_block, "hash": init._work.hash.view(np.int64)}
    state = s if stored else s._replace(M_T=None)
    fields = locate_fields(arrays, [(state, True), (w, False)])
    if not stored:  # an empty (0, d) M_T: a learnt field of no element (files carry it)
        fields.insert(3, Field("M_T", "PW", 0, tuple(s.M_T.shape), s.M_T.dtype, True))
    family = Family(
        prefix="sparse_dfop",
        d=D,
        dtype=np.dtype(model.dtype),
        task=model.task,
        blocks=[Block(n, a.dtype, a.size, fresh[n].reshape(-1).copy())
                for n, a in arrays.items()],
        fields=fields,
        hyper={n: float(w.hyper[i]) for n, i in index_names(k, "hyper").items()},
        codes={n: int(w.codes[i]) for n, i in index_names(k, "codes").items()},
        current=arrays,
        forgetting=True,
    )
    _functions(family, model, stored)
    return family


def _functions(family: Family, model: Any, stored: bool) -> None:
    from .._kernels import dfop as k
    from .._kernels import sparse as ks

    D, d = model.n_features, model.n_components
    nB, nblock, nhash = model._B.size, model._work.psi_block.shape[0], model._work.hash.size // 2
    nM = model._state.M_T.size
    kind, key, scale = model._kind, model._key, model._scale
    classify = model.task == "classification"
    views = k._packed_views
    mu_index = next(i for n, i in index_names(k, "hyper").items() if "MU" in n)
    learn_dense, learn_sparse = ks._sparse_learn_one_dense, ks._sparse_learn_one_sparse
    learn_many_kernel = ks._sparse_learn_many_dense
    predict_dense, predict_sparse = ks._sparse_predict_one_dense, ks._sparse_predict_one_sparse

    @njit(inline="always", **SHIM_OPTIONS)
    def m_t(Mp):
        return carray(Mp, (nM // d, d))

    @njit(inline="always", **SHIM_OPTIONS)
    def projection(M_T, psi_p, col_p, hp, rows):
        """The class's (kind, seed key, scale, M_T, psi, col, hbuf) over the blocks;
        rows: psi_block's rows (learn_many) or 0 (psi)."""
        psi = carray(psi_p, (max(rows, 1), d))
        hbuf = carray(hp, (nhash,)).view(np.uint32)
        col = carray(col_p, (d,))
        return psi, col, hbuf, M_T

    @njit(inline="always", **SHIM_OPTIONS)
    def valid(idx_p, nnz):
        """Indices in [0, D), non-decreasing; nnz >= 0."""
        if nnz < 0:
            return False
        idx = carray(idx_p, (nnz,))
        last = 0
        for t in range(nnz):
            j = idx[t]
            if j < last or j >= D:
                return False
            last = j
        return True

    @njit(inline="always", **SHIM_OPTIONS)
    def shown(score):
        if classify:
            return 1.0 if score >= 0.0 else -1.0
        return score

    @njit(inline="always", **SHIM_OPTIONS)
    def dense_one(PWp, Bp, M_T, psi_p, col_p, hp, xp, y, yhat_p):
        PW = carray(PWp, (d + 1, d))
        work, L, hyper, codes = views(carray(Bp, (nB,)), d)
        psi, col, hbuf, M = projection(M_T, psi_p, col_p, hp, 0)
        yv = _label_of(y) if classify else y
        yhat, status = learn_dense(carray(xp, (D,)), yv, (kind, key, scale, M, psi[0], col,
                                                          hbuf), PW, L, work, hyper, codes)
        carray(yhat_p, (1,))[0] = shown(yhat)
        return np.int64(status)

    @njit(inline="always", **SHIM_OPTIONS)
    def sparse_one(PWp, Bp, M_T, psi_p, col_p, hp, idx_p, val_p, nnz, y, yhat_p):
        if not valid(idx_p, nnz):
            return np.int64(BAD_INDICES)
        PW = carray(PWp, (d + 1, d))
        work, L, hyper, codes = views(carray(Bp, (nB,)), d)
        psi, col, hbuf, M = projection(M_T, psi_p, col_p, hp, 0)
        yv = _label_of(y) if classify else y
        yhat, status = learn_sparse(carray(idx_p, (nnz,)), carray(val_p, (nnz,)), yv,
                                    (kind, key, scale, M, psi[0], col, hbuf), PW, L, work,
                                    hyper, codes)
        carray(yhat_p, (1,))[0] = shown(yhat)
        return np.int64(status)

    @njit(inline="always", **SHIM_OPTIONS)
    def dense_many(PWp, Bp, M_T, block_p, col_p, hp, Xp, Yp, n, mup, n_mu, outp):
        PW = carray(PWp, (d + 1, d))
        work, L, hyper, codes = views(carray(Bp, (nB,)), d)
        X = carray(Xp, (n, D))
        out = carray(outp, (n,))
        status = _factors_status(mup, n_mu, n)
        if status != 0:
            return np.int64(status)
        if n_mu == 0:
            MU = hyper[mu_index: mu_index + 1]
        else:
            MU = carray(mup, (n_mu,))
        Y = _labels_into(Yp, n, out) if classify else carray(Yp, (n,))
        block, col, hbuf, M = projection(M_T, block_p, col_p, hp, nblock)
        first = learn_many_kernel(X, Y, MU, out, (kind, key, scale, M, block, col, hbuf), PW,
                                  L, work, hyper, codes)
        if classify:
            _signs(out, n)
        return np.int64(first)

    @njit(inline="always", **SHIM_OPTIONS)
    def dense_predict(PWp, M_T, psi_p, col_p, hp, xp):
        psi, col, hbuf, M = projection(M_T, psi_p, col_p, hp, 0)
        score = predict_dense(carray(xp, (D,)), (kind, key, scale, M, psi[0], col, hbuf),
                              carray(PWp, (d + 1, d))[d])
        return shown(score)

    @njit(inline="always", **SHIM_OPTIONS)
    def sparse_predict(PWp, M_T, psi_p, col_p, hp, idx_p, val_p, nnz, yhat_p):
        if not valid(idx_p, nnz):
            return np.int64(BAD_INDICES)
        psi, col, hbuf, M = projection(M_T, psi_p, col_p, hp, 0)
        score = predict_sparse(carray(idx_p, (nnz,)), carray(val_p, (nnz,)),
                               (kind, key, scale, M, psi[0], col, hbuf),
                               carray(PWp, (d + 1, d))[d])
        carray(yhat_p, (1,))[0] = shown(score)
        return np.int64(0)

    # The C entry points: blocks PW, B, [M_T], psi, col, psi_block, hash. Without a
    # stored M the kernels get an empty (0, d) M_T (psi's pointer: never read).
    if stored:
        def learn_one(PWp, Bp, Mp, psi_p, col_p, blk_p, hp, xp, y, yhat_p):
            return dense_one(PWp, Bp, m_t(Mp), psi_p, col_p, hp, xp, y, yhat_p)

        def learn_many(PWp, Bp, Mp, psi_p, col_p, blk_p, hp, Xp, Yp, n, mup, n_mu, outp):
            return dense_many(PWp, Bp, m_t(Mp), blk_p, col_p, hp, Xp, Yp, n, mup, n_mu, outp)

        def predict_one(PWp, Bp, Mp, psi_p, col_p, blk_p, hp, xp):
            return dense_predict(PWp, m_t(Mp), psi_p, col_p, hp, xp)

        def learn_one_sparse(PWp, Bp, Mp, psi_p, col_p, blk_p, hp, ip, vp, nnz, y, yhat_p):
            return sparse_one(PWp, Bp, m_t(Mp), psi_p, col_p, hp, ip, vp, nnz, y, yhat_p)

        def predict_one_sparse(PWp, Bp, Mp, psi_p, col_p, blk_p, hp, ip, vp, nnz, yhat_p):
            return sparse_predict(PWp, m_t(Mp), psi_p, col_p, hp, ip, vp, nnz, yhat_p)
    else:
        def learn_one(PWp, Bp, psi_p, col_p, blk_p, hp, xp, y, yhat_p):
            return dense_one(PWp, Bp, carray(psi_p, (0, d)), psi_p, col_p, hp, xp, y, yhat_p)

        def learn_many(PWp, Bp, psi_p, col_p, blk_p, hp, Xp, Yp, n, mup, n_mu, outp):
            return dense_many(PWp, Bp, carray(psi_p, (0, d)), blk_p, col_p, hp, Xp, Yp, n,
                              mup, n_mu, outp)

        def predict_one(PWp, Bp, psi_p, col_p, blk_p, hp, xp):
            return dense_predict(PWp, carray(psi_p, (0, d)), psi_p, col_p, hp, xp)

        def learn_one_sparse(PWp, Bp, psi_p, col_p, blk_p, hp, ip, vp, nnz, y, yhat_p):
            return sparse_one(PWp, Bp, carray(psi_p, (0, d)), psi_p, col_p, hp, ip, vp, nnz,
                              y, yhat_p)

        def predict_one_sparse(PWp, Bp, psi_p, col_p, blk_p, hp, ip, vp, nnz, yhat_p):
            return sparse_predict(PWp, carray(psi_p, (0, d)), psi_p, col_p, hp, ip, vp, nnz,
                                  yhat_p)

    T = _numba_float(model.dtype)
    pT, pd, pi = types.CPointer(T), types.CPointer(types.float64), types.CPointer(types.int64)
    blocks = (pT, pd, *((pT,) if stored else ()), pT, pT, pT, pi)
    f64, i64 = types.float64, types.int64
    family.functions = {
        "learn_one": (learn_one, i64(*blocks, pT, f64, pd)),
        "learn_many": (learn_many, i64(*blocks, pT, pd, i64, pd, i64, pd)),
        "predict_one": (predict_one, f64(*blocks, pT)),
        "learn_one_sparse": (learn_one_sparse, i64(*blocks, pi, pT, i64, f64, pd)),
        "predict_one_sparse": (predict_one_sparse, i64(*blocks, pi, pT, i64, pd)),
    }
    family.c_api = _c_api(family, model, stored)


def _c_api(family: Family, model: Any, stored: bool) -> list[str]:
    """The header's lines for the sparse calls (``@prefix@`` / ``@PREFIX@``: the export's
    prefix, upper-cased for ``@PREFIX@``)."""
    from .header import _CTYPE

    T = _CTYPE[str(family.dtype)]
    blocks = ", ".join(f"{_CTYPE[str(b.dtype)]} *{b.name}" for b in family.blocks)
    args = ", ".join(f"s->{b.name}" for b in family.blocks)
    kind = {0: "gaussian (M stored in M_T)", 1: "hashed (M computed, nothing stored)",
            2: "rademacher (M from hash bits, nothing stored)"}[model._kind]
    return [
        f"#define @PREFIX@_N_COMPONENTS {model.n_components} /* d: psi = M x, M d x N_FEATURES */",
        f"#define @PREFIX@_PROJECTION \"{model.projection}\" /* {kind}, seed {model.seed} */",
        f"#define @PREFIX@_BAD_INDICES ({BAD_INDICES}) /* an index outside [0, N_FEATURES), "
        "indices",
        " * decreasing somewhere, or nnz < 0: nothing learnt (sort a row before the call;",
        " * a repeated index adds up, in the given order) */",
        f"int64_t @prefix@_learn_one_sparse_blocks({blocks}, const int64_t *indices,",
        f"    const {T} *values, int64_t nnz, double y, double *yhat);",
        f"int64_t @prefix@_predict_one_sparse_blocks({blocks}, const int64_t *indices,",
        f"    const {T} *values, int64_t nnz, double *yhat);",
        "/* learn_one of the sparse row x[indices[k]] = values[k] (k < nnz; the others 0):",
        " * OK, INVALID (as learn_one) or BAD_INDICES (state unchanged, *yhat not written). */",
        "static inline int64_t @prefix@_learn_one_sparse(@prefix@_state *s, "
        "const int64_t *indices,",
        f"    const {T} *values, int64_t nnz, double y, double *yhat) {{",
        f"    return @prefix@_learn_one_sparse_blocks({args}, indices, values, nnz, y, "
        "yhat); }",
        "/* *yhat = predict_one of the sparse row; OK or BAD_INDICES (*yhat not written). */",
        "static inline int64_t @prefix@_predict_one_sparse(@prefix@_state *s, "
        "const int64_t *indices,",
        f"    const {T} *values, int64_t nnz, double *yhat) {{",
        f"    return @prefix@_predict_one_sparse_blocks({args}, indices, values, nnz, "
        "yhat); }",
    ]
