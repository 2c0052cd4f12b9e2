"""Sparse-DFOP (SPEC.md section 2): projection, input forms, recovery, allocation.

The contract tests (test_contracts.py, test_allocation.py) run on SparseDFOP
automatically; these add what is specific to the projection.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats
from numba.core.runtime import _nrt_python, rtsys
from reference import hashed_column, sparse_projection

from edgereg import DFOP, SparseDFOP, load
from edgereg.sparse_dfop import _ZF, _ZK, _ZR, _ZW


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
    return {k: np.array(v) for k, v in model.state._asdict().items() if not k.startswith("work")}


def _same_state(a, b):
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


# ------------------------------------------------------------------ reference
@pytest.mark.parametrize("projection", ["gaussian", "hashed", "rademacher"])
def test_step_by_step_equals_dfop_on_projected_input(projection):
    """SparseDFOP == DFOP(d) fed psi = M x (reference projection), bit for bit, every step."""
    D, d = 40, 7
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


def test_gaussian_and_hashed_define_the_same_matrix():
    a = SparseDFOP(300, 33, projection="gaussian", seed=5)
    b = SparseDFOP(300, 33, projection="hashed", seed=5)
    np.testing.assert_array_equal(a.projection_matrix(), b.projection_matrix())
    np.testing.assert_array_equal(a.state.M_T.T, b.projection_matrix())
    assert b.state.M_T.size == 0


@pytest.mark.parametrize("kind", ["hashed", "rademacher"])
def test_hashed_columns_match_the_documented_integer_reference(kind):
    """The kernel's columns equal a pure-Python splitmix64 + ziggurat, bit for bit."""
    d, seed = 150, 123456789
    model = SparseDFOP(10**6, d, projection=kind, seed=seed)
    cols = [0, 1, 77, 4242, 999_999]
    M = model.projection_matrix(cols)
    slow: list[int] = []
    for k, j in enumerate(cols):
        ref = hashed_column(seed, j, d, kind, _ZK, _ZW, _ZF, _ZR, slow)
        np.testing.assert_array_equal(M[:, k], ref)
    if kind == "hashed":  # the ziggurat's rejection branch (~1.2%) was exercised
        assert len(slow) >= 2


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
def test_hashed_entries_are_n_0_1_over_d():
    """Mean, variance (CLT bounds, 5 sigma) and shape (KS) of 262,144 entries."""
    d, D = 64, 4096
    M = SparseDFOP(D, d, seed=7).projection_matrix()
    z = M.ravel() * np.sqrt(d)  # should be N(0, 1)
    n = z.size
    assert abs(z.mean()) < 5.0 / np.sqrt(n)
    assert abs(z.var() - 1.0) < 5.0 * np.sqrt(2.0 / n)
    assert scipy.stats.kstest(z, "norm").pvalue > 1e-4
    # The tail beyond r (the ziggurat's slow path) has the right mass too.
    tail = np.mean(np.abs(z) > _ZR)
    p = 2 * scipy.stats.norm.sf(_ZR)
    assert abs(tail - p) < 5.0 * np.sqrt(p / n)
    # Each column is centred and scaled: column means/variances spread as the CLT says.
    col_var = (M**2).sum(axis=0)  # ||M_j||^2 ~ chi2_d / d
    assert abs(col_var.mean() - 1.0) < 5.0 * np.sqrt(2.0 / d / D)


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
    from edgereg.sparse_dfop import _sparse_learn_one_sparse

    preds, status = [], []
    for t in range(len(y)):
        yhat, st = _sparse_learn_one_sparse(
            np.ascontiguousarray(idx[t], dtype=np.int64),
            np.ascontiguousarray(val[t], dtype=model.dtype), float(y[t]), float(mu[t]),
            *model._kernel_args(), *model._dfop_args(),
        )
        preds.append(yhat)
        status.append(st)
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
    from edgereg.sparse_dfop import BLOCK_ROWS

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
    from edgereg.sparse_dfop import BLOCK_ROWS

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
    """End to end: learn the SPEC's sparse stream, recover w_t from v (l1)."""
    from edgereg.streams import sparse_state_space

    X, y, W = sparse_state_space(3000, 300, sparsity=5, jump_every=10**6, support="random",
                                 as_csr=True, seed=1)
    model = SparseDFOP(300, 60, forgetting=0.0, seed=0, p0=1e4)
    model.learn_many(X, y)
    w_true = W[-1].toarray().ravel()
    w_eff = model.recover(5, coef="effective")
    assert set(np.flatnonzero(w_eff)) == set(np.flatnonzero(w_true))
    np.testing.assert_allclose(w_eff, w_true, atol=1e-6)
    # The SPEC's v = M w reading is off by (M_S^T M_S)^-1 here: same support.
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
