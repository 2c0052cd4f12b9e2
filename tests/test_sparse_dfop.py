"""Sparse-DFOP (docs/algorithms/sparse_dfop.md): projection, input forms, recovery, allocation.

The contract tests (test_contracts.py, test_allocation.py) run on SparseDFOP
automatically; these add what is specific to the projection.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.special
import scipy.stats
from numba.core.runtime import _nrt_python, rtsys
from reference import hashed_gaussian_column, rademacher_column, sparse_projection

from edgereg import DFOP, SparseDFOP, load
from edgereg._kernels.hashing import _ZF, _ZIG_LAYERS, _ZIG_V, _ZR, _ZTAB, _ZW


def _sparse_stream(n, D, nnz, seed=0):
    """Rows with ``nnz`` random non-zeros (unsorted column order) and a linear target."""
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.choice(D, nnz, replace=False) for _ in range(n)])
    val = rng.normal(size=(n, nnz))
    w = np.zeros(D)
    w[rng.choice(D, 8, replace=False)] = rng.normal(size=8)
    X = np.zeros((n, D))
    np.put_along_axis(X, idx, val, axis=1)
    y = X @ w + 0.05 * rng.normal(size=n)
    return idx, val, X, y


def _state(model):
    return {k: np.array(v) for k, v in model.state._asdict().items()}


def _same_state(a, b):
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def _gaussian_reference(seed, j, d, slow=None):
    """tests/reference.py's pure-Python generator with the module's tables."""
    width, inner = _ZTAB[0::2] * 2.0**31, _ZTAB[1::2]
    np.testing.assert_array_equal(width, _ZW)
    return hashed_gaussian_column(seed, j, d, _ZW, inner, _ZF, _ZR, slow)


# ------------------------------------------------------------------ reference
@pytest.mark.parametrize("d", [7, 13])
@pytest.mark.parametrize("projection", ["gaussian", "hashed", "rademacher"])
def test_step_by_step_equals_dfop_on_projected_input(projection, d):
    """SparseDFOP == DFOP(d) fed psi = M x (reference projection), bit for bit, every step.

    d = 7 takes the scalar path of the hashed generator, d = 13 the 8-lane
    kernel with an overlapping last block (and ~20 rejected entries over the
    400 columns, fixed up after their blocks).
    """
    D = 400
    idx, val, X, y = _sparse_stream(120, D, 5)
    model = SparseDFOP(D, d, forgetting=0.02, projection=projection, seed=11)
    dfop = DFOP(d, forgetting=0.02)
    M = model.projection_matrix()
    for t in range(len(y)):
        psi = sparse_projection(M, idx[t], val[t])
        got = model.learn_one((idx[t], val[t]), y[t])
        want = dfop.learn_one(psi, y[t])
        assert got == want, t
        np.testing.assert_array_equal(model.coef_, dfop.coef_)
        np.testing.assert_array_equal(model.state.P, dfop.state.P)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("d", [5, 8, 13, 64, 100])
def test_fused_projection_equals_the_column_by_column_sum(d, dtype):
    """psi as learn_many/predict compute it (generation fused with the accumulation,
    rejected lanes fixed up afterwards) == sum over the materialised columns, in order."""
    from edgereg._kernels.sparse import BLOCK_ROWS

    D, n, nnz = 100_000, 2 * BLOCK_ROWS, 40
    rng = np.random.default_rng(d)
    idx = np.sort(np.stack([rng.choice(D, nnz, replace=False) for _ in range(n)]), axis=1)
    val = rng.normal(size=(n, nnz)).astype(dtype)
    model = SparseDFOP(D, d, seed=21, dtype=dtype)
    X = sp.csr_matrix((val.ravel(), idx.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, D))
    model.learn_many(X, np.zeros(n))  # learning from y = 0 leaves v = 0: psi is in the scratch
    psi_block = model._work.psi_block.copy()
    for t in range(n):
        M = model.projection_matrix(idx[t])  # the row's columns, in increasing order
        want = sparse_projection(M, np.arange(nnz), val[t])
        if t >= n - BLOCK_ROWS:  # the last chunk is still in the block scratch
            np.testing.assert_array_equal(psi_block[t - (n - BLOCK_ROWS)], want, err_msg=str(t))
        model.predict_one((idx[t], val[t]))
        np.testing.assert_array_equal(model._work.psi, want, err_msg=str(t))
        x = np.zeros(D, dtype=dtype)
        x[idx[t]] = val[t]
        model.predict_one(x)  # the dense scan
        np.testing.assert_array_equal(model._work.psi, want, err_msg=str(t))


def test_gaussian_and_hashed_define_the_same_matrix():
    a = SparseDFOP(300, 33, projection="gaussian", seed=5)
    b = SparseDFOP(300, 33, projection="hashed", seed=5)
    np.testing.assert_array_equal(a.projection_matrix(), b.projection_matrix())
    np.testing.assert_array_equal(a.state.M_T.T, b.projection_matrix())
    assert b.state.M_T.size == 0


def test_rademacher_columns_match_the_documented_integer_reference():
    """The kernel's +-1 columns equal a pure-Python splitmix64 reference, bit for bit."""
    d, seed = 150, 123456789
    model = SparseDFOP(10**6, d, projection="rademacher", seed=seed)
    cols = [0, 1, 77, 4242, 999_999]
    M = model.projection_matrix(cols)
    for k, j in enumerate(cols):
        ref = rademacher_column(seed, j, d)
        np.testing.assert_array_equal(M[:, k], ref)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("d", [5, 8, 150])
def test_gaussian_columns_match_the_documented_integer_reference(d, dtype):
    """The kernel's columns equal the pure-Python lowbias32 + ziggurat reference, bit for bit.

    d = 5: the scalar path; 8: one 8-lane block; 150: 18 blocks and an
    overlapping last one. ~9000 entries each: the fast test's rejections
    (0.43%, ~39 expected) are exercised in every path.
    """
    seed = 123456789
    model = SparseDFOP(10**6, d, seed=seed, dtype=dtype)
    cols = [0, 1, 77, 4242, 999_999, *range(500_000, 500_000 + 9000 // d)]
    M = model.projection_matrix(cols)
    slow: list = []
    for k, j in enumerate(cols):
        ref = _gaussian_reference(seed, j, d, slow).astype(dtype)
        np.testing.assert_array_equal(M[:, k], ref, err_msg=f"column {j}")
    assert len(slow) >= 15, len(slow)


def test_gaussian_tail_and_top_layer_match_the_reference():
    """Entries beyond r (Marsaglia's tail) and from the top layer (always the wedge test)
    equal the reference too: found by scanning 50,000 columns (3.2 million entries)."""
    d, seed = 64, 7
    model = SparseDFOP(10**6, d, seed=seed)
    found = []
    for start in range(0, 50_000, 10_000):
        M = model.projection_matrix(np.arange(start, start + 10_000)) * np.sqrt(d)
        found += [start + j for j in np.flatnonzero(np.any(np.abs(M) > _ZR, axis=0))]
    # P(|z| > r) = 5.4e-5: ~170 expected; check 20 of their columns.
    assert len(found) > 100, len(found)
    slow: list = []
    for j in found[:20]:
        ref = _gaussian_reference(seed, j, d, slow)
        np.testing.assert_array_equal(model.projection_matrix([j])[:, 0], ref)
        assert np.any(np.abs(ref) * np.sqrt(d) > _ZR)
    layers = {layer for _, layer in slow}
    assert 0 in layers and 1 in layers  # the base strip/tail and the top layer


def test_ziggurat_tables_have_equal_area_layers():
    """Layer L >= 1 (x_L (f(x_{L-1}) - f(x_L))), the base strip with the tail and the
    top layer all have area v, to double precision; the fast test's thresholds."""
    f = np.exp(-0.5 * _ZW**2)
    x = np.concatenate([[0.0], _ZW[1:]])  # x_0 = 0 (the peak), x_L = W[L]
    v = float(_ZIG_V)
    areas = x[2:] * (f[1:-1] - f[2:])  # layers 2..1023
    np.testing.assert_allclose(areas, v, rtol=1e-12)
    np.testing.assert_allclose(x[1] * (1.0 - f[1]), v, rtol=1e-12)  # the top layer
    tail = np.sqrt(np.pi / 2) * scipy.special.erfc(_ZR / np.sqrt(2))
    np.testing.assert_allclose(_ZW[0] * np.exp(-0.5 * _ZR**2), v, rtol=1e-14)
    np.testing.assert_allclose(_ZR * np.exp(-0.5 * _ZR**2) + tail, v, rtol=1e-12)
    np.testing.assert_allclose(_ZF, np.exp(-0.5 * x**2), rtol=1e-14)  # F[e] = f(x_e)
    inner = _ZTAB[1::2]
    assert inner[0] == _ZR and inner[1] == 0.0
    np.testing.assert_array_equal(inner[2:], _ZW[1:-1])  # T[L] = x_{L-1}
    assert _ZW[-1] == _ZR and np.all(np.diff(_ZW[1:]) > 0)
    # Fast-test acceptance: sum of T/W over the layers, 99.57%.
    accept = np.mean(inner / _ZW)
    assert 0.9956 < accept < 0.9958
    assert _ZIG_LAYERS == 1024


def test_hashed_columns_are_bit_identical_in_another_process():
    cols = [3, 50_000, 999_999]
    here = SparseDFOP(10**6, 64, seed=42).projection_matrix(cols)
    code = (
        "import sys; from edgereg import SparseDFOP; "
        f"M = SparseDFOP(10**6, 64, seed=42).projection_matrix({cols}); "
        "sys.stdout.write(M.tobytes().hex())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    there = np.frombuffer(bytes.fromhex(out.stdout), dtype=np.float64).reshape(here.shape)
    np.testing.assert_array_equal(here, there)


def test_projection_survives_save_load(tmp_path):
    idx, val, X, y = _sparse_stream(60, 500, 6, seed=2)
    a = SparseDFOP(500, 16, projection="hashed", seed=9)
    a.learn_many(sp.csr_matrix(X[:30]), y[:30])
    a.save(tmp_path / "m.npz")
    b = load(tmp_path / "m.npz")
    np.testing.assert_array_equal(a.projection_matrix(), b.projection_matrix())
    np.testing.assert_array_equal(
        a.learn_many(sp.csr_matrix(X[30:]), y[30:]), b.learn_many(sp.csr_matrix(X[30:]), y[30:])
    )
    _same_state(_state(a), _state(b))


def test_seeds_give_different_matrices():
    a = SparseDFOP(100, 10, seed=0).projection_matrix()
    b = SparseDFOP(100, 10, seed=1).projection_matrix()
    assert not np.any(a == b)


# ------------------------------------------------------------------ statistics
@pytest.fixture(scope="module")
def gaussian_entries():
    """2^20 entries of the hashed projection (d = 64, D = 16384), times sqrt(d): N(0, 1)."""
    d, D = 64, 16384
    M = SparseDFOP(D, d, seed=7).projection_matrix()
    return M * np.sqrt(d)


def test_hashed_entries_are_n_0_1(gaussian_entries):
    """Moments (CLT bounds, 5 sigma), shape (KS and chi-square) and tails of 2^20 entries."""
    z = gaussian_entries.ravel()
    n = z.size
    assert n >= 10**6
    assert abs(z.mean()) < 5.0 / np.sqrt(n)
    assert abs(z.var() - 1.0) < 5.0 * np.sqrt(2.0 / n)
    assert abs(scipy.stats.skew(z)) < 5.0 * np.sqrt(6.0 / n)
    assert abs(scipy.stats.kurtosis(z)) < 5.0 * np.sqrt(24.0 / n)
    assert scipy.stats.kstest(z, "norm").pvalue > 1e-4
    # 256 equiprobable bins (a finer view of the shape than KS).
    edges = scipy.stats.norm.ppf(np.linspace(0.0, 1.0, 257))
    counts = np.histogram(z, bins=edges)[0]
    assert scipy.stats.chisquare(counts).pvalue > 1e-4
    # Tail masses, including beyond r = 4.04 (the ziggurat's tail algorithm).
    for c in (2.0, 3.0, 3.5, _ZR):
        p = 2 * scipy.stats.norm.sf(c)
        assert abs(np.mean(np.abs(z) > c) - p) < 5.0 * np.sqrt(p / n) + 1.0 / n, c
    # Signs are balanced, on both sides of the mode.
    assert abs(np.mean(z > 0) - 0.5) < 5.0 * 0.5 / np.sqrt(n)


def test_hashed_entries_are_uncorrelated(gaussian_entries):
    """No correlation between neighbouring entries of a column, the same entry of
    neighbouring columns, nor between their squares or signs (5 sigma, ~1/sqrt(n))."""
    M = gaussian_entries  # (d, D): rows = entries i, columns = features j
    pairs = {
        "entries i, i+1": (M[:-1].ravel(), M[1:].ravel()),
        "entries i, i+2": (M[:-2].ravel(), M[2:].ravel()),
        "entries i, i+8": (M[:-8].ravel(), M[8:].ravel()),  # the same lane of the next block
        "columns j, j+1": (M[:, :-1].ravel(), M[:, 1:].ravel()),
        "columns j, j+64": (M[:, :-64].ravel(), M[:, 64:].ravel()),
    }
    for name, (a, b) in pairs.items():
        bound = 5.0 / np.sqrt(a.size)
        assert abs(np.corrcoef(a, b)[0, 1]) < bound, name
        assert abs(np.corrcoef(a * a, b * b)[0, 1]) < bound, name + " (squares)"
        assert abs(np.corrcoef(np.sign(a), np.sign(b))[0, 1]) < bound, name + " (signs)"
    # Each column is centred and scaled: ||M_j||^2 / d ~ chi2_d / d, mean 1.
    d, D = M.shape
    col_var = (M**2).mean(axis=0)
    assert abs(col_var.mean() - 1.0) < 5.0 * np.sqrt(2.0 / d / D)
    # Gram matrix of 256 columns: off-diagonal entries ~ N(0, 1/d) (JL), nothing larger.
    G = M[:, :256].T @ M[:, :256] / d
    off = G[~np.eye(256, dtype=bool)]
    assert abs(off.std() - 1.0 / np.sqrt(d)) < 0.05 / np.sqrt(d)
    assert np.abs(off).max() < 6.0 / np.sqrt(d)


def test_seeds_give_uncorrelated_matrices():
    a = SparseDFOP(4096, 64, seed=0).projection_matrix().ravel()
    b = SparseDFOP(4096, 64, seed=1).projection_matrix().ravel()
    assert abs(np.corrcoef(a, b)[0, 1]) < 5.0 / np.sqrt(a.size)


def test_rademacher_entries():
    d, D = 100, 2000
    M = SparseDFOP(D, d, projection="rademacher", seed=3).projection_matrix()
    assert set(np.unique(M)) == {-1 / np.sqrt(d), 1 / np.sqrt(d)}
    plus = np.mean(M > 0)
    assert abs(plus - 0.5) < 5.0 * 0.5 / np.sqrt(M.size)


@pytest.mark.parametrize("projection", ["hashed", "rademacher"])
def test_projection_preserves_norms_within_jl_bounds(projection):
    """||M x||^2 / ||x||^2 for 200 random 10-sparse x in R^100000, d = 256.

    JL: P(|ratio - 1| > eps) <= 2 exp(-d (eps^2/2 - eps^3/3) / 2); eps = 0.57
    makes the union bound over 200 vectors < 1e-3. Their mean is 1 within the
    CLT's 5 sigma (each ratio has variance ~2/d).
    """
    D, d, nvec = 100_000, 256, 200
    model = SparseDFOP(D, d, projection=projection, seed=1)
    rng = np.random.default_rng(0)
    ratios = []
    for _ in range(nvec):
        cols = rng.choice(D, 10, replace=False)
        vals = rng.normal(size=10)
        psi = model.projection_matrix(cols) @ vals
        ratios.append(psi @ psi / (vals @ vals))
    ratios = np.array(ratios)
    assert np.all(np.abs(ratios - 1.0) < 0.57)
    assert abs(ratios.mean() - 1.0) < 5.0 * np.sqrt(2.0 / d / nvec)


# ------------------------------------------------------------------ input forms
@pytest.mark.parametrize("projection", ["gaussian", "hashed", "rademacher"])
def test_dense_pairs_and_csr_inputs_agree_bit_for_bit(projection):
    D, d = 60, 9
    idx, val, X, y = _sparse_stream(80, D, 6, seed=4)
    kw = {"n_features": D, "n_components": d, "projection": projection, "forgetting": 0.03}
    dense, pairs, csr, other = (SparseDFOP(**kw) for _ in range(4))
    p_dense = np.array([dense.learn_one(X[t], y[t]) for t in range(len(y))])
    p_pairs = np.array([pairs.learn_one((idx[t], val[t]), y[t]) for t in range(len(y))])
    # CSR with unsorted indices, built directly from the pairs.
    Xcsr = sp.csr_matrix((val.ravel(), idx.ravel(), np.arange(0, idx.size + 1, idx.shape[1])),
                         shape=(len(y), D))
    assert not Xcsr.has_sorted_indices
    p_csr = csr.learn_many(Xcsr, y)
    assert not Xcsr.has_sorted_indices, "the caller's matrix was modified"
    p_other = np.concatenate([
        other.learn_many(sp.csc_matrix(X[:30]), y[:30]),
        other.learn_many(sp.coo_matrix(X[30:60]), y[30:60]),
        np.array([other.learn_one(sp.csr_matrix(X[t : t + 1]), y[t]) for t in range(60, 80)]),
    ])
    for p in (p_pairs, p_csr, p_other):
        np.testing.assert_array_equal(p, p_dense)
    for m in (pairs, csr, other):
        _same_state(_state(m), _state(dense))
    # predictions too, and predict_one(pairs) == predict_many(csr)
    np.testing.assert_array_equal(
        dense.predict_many(X), csr.predict_many(sp.csr_matrix(X))
    )
    np.testing.assert_array_equal(
        [pairs.predict_one((idx[t], val[t])) for t in range(10)], dense.predict_many(X[:10])
    )


def test_empty_row_and_int_indices_of_any_width():
    model = SparseDFOP(50, 5)
    ref = SparseDFOP(50, 5)
    got = model.learn_one((np.array([], dtype=np.int32), np.array([])), 1.0)
    assert got == ref.learn_one(np.zeros(50), 1.0)
    a = model.learn_one((np.array([3, 1], dtype=np.uint16), [1.0, 2.0]), 0.5)
    b = ref.learn_one((np.array([1, 3]), np.array([2.0, 1.0])), 0.5)
    assert a == b


def test_bad_sparse_input_is_explained_and_leaves_state_unchanged():
    model = SparseDFOP(30, 4)
    model.learn_one((np.array([1, 2]), np.array([1.0, 1.0])), 1.0)
    before = _state(model)
    with pytest.raises(ValueError, match=r"\[0, 30\)"):
        model.learn_one((np.array([1, 30]), np.array([1.0, 1.0])), 1.0)
    with pytest.raises(ValueError, match=r"\[0, 30\)"):
        model.learn_one((np.array([-1]), np.array([1.0])), 1.0)
    with pytest.raises(ValueError, match="same length"):
        model.learn_one((np.array([1, 2]), np.array([1.0])), 1.0)
    with pytest.raises(TypeError, match="integers"):
        model.learn_one((np.array([1.5]), np.array([1.0])), 1.0)
    with pytest.raises(ValueError, match=r"non-finite input x\[7\]=nan"):
        model.learn_one((np.array([2, 7]), np.array([1.0, np.nan])), 1.0)
    with pytest.raises(ValueError, match="shape"):
        model.learn_many(sp.csr_matrix(np.ones((3, 29))), np.ones(3))
    bad = sp.csr_matrix((np.ones(2), np.array([1, 40]), np.array([0, 1, 2])), shape=(2, 30),
                        copy=False)
    bad.indices[1] = 40  # scipy accepts it unchecked; the model must not
    with pytest.raises(ValueError, match="column indices"):
        model.learn_many(bad, np.ones(2))
    _same_state(before, _state(model))


def test_nan_row_in_csr_block_learns_rows_before_only():
    idx, val, X, y = _sparse_stream(30, 40, 5, seed=5)
    Xbad = X.copy()
    Xbad[17, idx[17, 0]] = np.nan
    a, b = SparseDFOP(40, 6), SparseDFOP(40, 6)
    with pytest.raises(ValueError, match="row 17"):
        a.learn_many(sp.csr_matrix(Xbad), y)
    b.learn_many(sp.csr_matrix(X[:17]), y[:17])
    _same_state(_state(a), _state(b))
    c = SparseDFOP(40, 6, on_invalid="skip")
    c.learn_many(sp.csr_matrix(Xbad), y)
    assert c.n_skipped_ == 1 and c.n_seen_ == 29


def _per_row_reference(model, idx, val, y, mu):
    """Drive the per-row kernel (learn_one's path) on ``model``, with per-step mu."""
    from edgereg._kernels.dfop import HYPER_MU
    from edgereg._kernels.sparse import _sparse_learn_one_sparse

    preds, status = [], []
    hyper = model._work.hyper
    own = hyper[HYPER_MU]
    for t in range(len(y)):
        hyper[HYPER_MU] = mu[t]  # the one-row kernel forgets hyper[HYPER_MU]
        yhat, st = _sparse_learn_one_sparse(
            np.ascontiguousarray(idx[t], dtype=np.int64),
            np.ascontiguousarray(val[t], dtype=model.dtype), np.float64(y[t]),
            model._projection, *model._dfop_blocks,
        )
        preds.append(yhat)
        status.append(st)
    hyper[HYPER_MU] = own
    return np.array(preds), np.array(status)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("projection", ["gaussian", "hashed", "rademacher"])
def test_block_path_equals_per_row_kernel_across_chunks(projection, dtype):
    """learn_many (chunks of BLOCK_ROWS through DFOP's fused kernel) == learn_one's kernel.

    Bit for bit, with invalid rows inside a chunk, as the last row of a chunk
    and as the first of the next (NaN and inf in x, inf in y), the skip
    policy, per-step forgetting and a prior refresh at every step; for CSR
    and dense blocks.
    """
    from edgereg._kernels.sparse import BLOCK_ROWS

    D, d = 50, 8
    n = 3 * BLOCK_ROWS + 7
    idx, val, X, y = _sparse_stream(n, D, 5, seed=12)
    idx = np.sort(idx, axis=1)
    val = np.take_along_axis(X, idx, axis=1)
    bad_x = {5: np.nan, BLOCK_ROWS - 1: np.inf, BLOCK_ROWS: np.nan, 2 * BLOCK_ROWS + 3: -np.inf}
    for r, v in bad_x.items():
        X[r, idx[r, 2]] = v
        val[r, 2] = v
    y[BLOCK_ROWS + 9] = np.inf
    mu = np.random.default_rng(3).uniform(0.0, 0.3, n)
    kw = {"n_features": D, "n_components": d, "forgetting": 0.3, "projection": projection,
          "dtype": dtype, "on_invalid": "skip", "seed": 3}
    ref = SparseDFOP(**kw)
    assert ref._period == 1  # a prior refresh at every step
    want, status = _per_row_reference(ref, idx, val, y, mu)
    assert np.count_nonzero(status) == len(bad_x) + 1
    for Xin in (sp.csr_matrix(X), X):
        model = SparseDFOP(**kw)
        got = model.learn_many(Xin, y, forgetting=mu)
        np.testing.assert_array_equal(got[status == 0], want[status == 0])
        _same_state(_state(model), _state(ref))
        assert model.n_skipped_ == len(bad_x) + 1
    # Constant forgetting (stride 0) too, block split at an odd place.
    ref = SparseDFOP(**kw)
    want, _ = _per_row_reference(ref, idx, val, y, np.full(n, 0.3))
    model = SparseDFOP(**kw)
    got = np.concatenate([model.learn_many(sp.csr_matrix(X[:BLOCK_ROWS + 2]), y[:BLOCK_ROWS + 2]),
                          model.learn_many(X[BLOCK_ROWS + 2 :], y[BLOCK_ROWS + 2 :])])
    np.testing.assert_array_equal(got[status == 0], want[status == 0])
    _same_state(_state(model), _state(ref))


@pytest.mark.parametrize("form", ["csr", "dense"])
def test_invalid_row_in_a_later_chunk_is_named_by_its_block_index(form):
    from edgereg._kernels.sparse import BLOCK_ROWS

    D, d = 40, 6
    n = 2 * BLOCK_ROWS + 5
    idx, val, X, y = _sparse_stream(n, D, 4, seed=13)
    bad = BLOCK_ROWS + 3
    X[bad, idx[bad, 1]] = np.nan
    a, b = SparseDFOP(D, d, forgetting=0.05), SparseDFOP(D, d, forgetting=0.05)
    Xin = sp.csr_matrix(X) if form == "csr" else X
    with pytest.raises(ValueError, match=rf"row {bad} of the block"):
        a.learn_many(Xin, y)
    for t in range(bad):
        b.learn_one(X[t], y[t])
    _same_state(_state(a), _state(b))
    assert a.n_seen_ == bad


# ------------------------------------------------------------------ recovery
@pytest.mark.parametrize("method", ["l1", "omp"])
@pytest.mark.parametrize("projection", ["hashed", "rademacher"])
def test_recover_finds_an_exactly_sparse_w(method, projection):
    D, d, s = 400, 60, 5
    model = SparseDFOP(D, d, projection=projection, seed=2)
    rng = np.random.default_rng(8)
    w = np.zeros(D)
    w[rng.choice(D, s, replace=False)] = rng.choice([-1.0, 1.0], s) * rng.uniform(0.5, 2.0, s)
    model._state.w[:] = model.projection_matrix() @ w  # v = M w, noiseless
    w_hat = model.recover(s, method=method)
    np.testing.assert_allclose(w_hat, w, atol=1e-8)
    assert np.count_nonzero(w_hat) == s


def test_recover_omp_at_a_million_features():
    """OMP computes M^T r column by column from the hash (M is never stored)."""
    D, d, s = 10**6, 80, 4
    model = SparseDFOP(D, d, seed=4)
    support = np.array([17, 123_456, 500_000, 999_998])
    w_s = np.array([1.5, -2.0, 0.7, 1.1])
    model._state.w[:] = model.projection_matrix(support) @ w_s
    w_hat = model.recover(s, method="omp")
    assert set(np.flatnonzero(w_hat)) == set(support)
    np.testing.assert_allclose(w_hat[support], w_s, atol=1e-10)
    with pytest.raises(ValueError, match="omp"):
        model.recover(s, method="l1")


def test_recover_after_learning_the_state_space_stream():
    """End to end: learn the paper's sparse stream, recover w_t from v (l1)."""
    from edgereg.streams import sparse_state_space

    X, y, W = sparse_state_space(3000, 300, sparsity=5, jump_every=10**6, support="random",
                                 as_csr=True, seed=1)
    model = SparseDFOP(300, 60, forgetting=0.0, seed=0, p0=1e4)
    model.learn_many(X, y)
    w_true = W[-1].toarray().ravel()
    w_eff = model.recover(5, coef="effective")
    assert set(np.flatnonzero(w_eff)) == set(np.flatnonzero(w_true))
    np.testing.assert_allclose(w_eff, w_true, atol=1e-6)
    # The v = M w reading is off by (M_S^T M_S)^-1 here: same support.
    assert set(np.flatnonzero(model.recover(5))) == set(np.flatnonzero(w_true))


# ------------------------------------------------------------------ allocation
@pytest.fixture
def nrt_stats():
    _nrt_python.memsys_enable_stats()
    yield
    _nrt_python.memsys_disable_stats()


def _allocs(fn):
    before = rtsys.get_allocation_stats()
    fn()
    after = rtsys.get_allocation_stats()
    return after.alloc - before.alloc, after.free - before.free


@pytest.mark.parametrize("projection", ["gaussian", "hashed", "rademacher"])
def test_sparse_paths_allocate_nothing_per_step(nrt_stats, projection):
    D, n = 200, 3000
    idx, val, X, y = _sparse_stream(n, D, 8, seed=6)
    Xcsr = sp.csr_matrix(X)
    model = SparseDFOP(D, 12, projection=projection)
    model.learn_many(Xcsr[:10], y[:10])
    model.predict_many(Xcsr[:10])
    small = _allocs(lambda: model.learn_many(Xcsr[:10], y[:10]))
    large = _allocs(lambda: model.learn_many(Xcsr, y))
    assert small == large and large[0] == large[1], (small, large)
    small = _allocs(lambda: model.predict_many(Xcsr[:10]))
    large = _allocs(lambda: model.predict_many(Xcsr))
    assert small == large and large[0] == large[1], (small, large)

    pairs = [(idx[t].astype(np.int64), val[t]) for t in range(n)]
    model.learn_one(pairs[0], y[0])
    model.predict_one(pairs[0])

    def calls(start, k):
        def run():
            for t in range(start, start + k):
                model.learn_one(pairs[t], y[t])
                model.predict_one(pairs[t])

        return run

    one = _allocs(calls(1, 1))
    many = _allocs(calls(2, 200))
    assert many[0] == 200 * one[0] and many[0] == many[1], (one, many)
