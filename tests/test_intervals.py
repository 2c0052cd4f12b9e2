"""Calibrated prediction intervals (``coverage=``): against the NumPy reference step by
step, learn_one == learn_many bit for bit, the tracker's long-run identity, and the
errors. The contract, allocation, hostile-value and state-file suites cover the
models built with ``coverage`` through their ``_unit_test_params``."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
import scipy.sparse as sp
from reference import dfop_interval_reference, mores_reference, residual_interval_reference

from edgereg import DFOP, MORES, RLS, SparseDFOP, StateFileError, load
from edgereg._interval import INTERVAL_RATE
from edgereg._kernels.interval import INTERVAL_COVERED, INTERVAL_Q, INTERVAL_SCORED


def _stream(n=300, d=4, seed=0, jump=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=(2, d))
    y = np.where(np.arange(n) < n // 2, X @ w[0], X @ w[1]) if jump else X @ w[0]
    sd = np.where(np.arange(n) < 3 * n // 4, 0.3, 0.6)
    return X, y + sd * rng.normal(size=n)


@pytest.mark.parametrize("mu", [0.0, 0.03])
def test_intervals_follow_the_reference_after_every_step(mu):
    X, y = _stream(160, 3)
    q0 = NormalDist().inv_cdf(0.95)
    bands, book = dfop_interval_reference(X, y, mu, 100.0, 0.9, INTERVAL_RATE, q0)
    model = DFOP(3, mu, keep_prior=False, coverage=0.9)
    for t in range(len(y)):
        got = model.learn_one(X[t], y[t], interval=True)
        np.testing.assert_allclose(got, bands[t], rtol=1e-8, atol=1e-10, err_msg=f"step {t}")
        np.testing.assert_allclose(model.state.interval, book[t], rtol=1e-8, atol=1e-10,
                                   err_msg=f"bookkeeping after step {t}")


@pytest.mark.parametrize("params", [
    {"forgetting": 0.02},
    {"forgetting": 0.0},
    {"forgetting": 0.3, "dtype": "float32"},
    {"forgetting": 0.01, "dtype": "float32"},
    {"forgetting": 0.05, "keep_prior": False},
])
@pytest.mark.parametrize("d", [3, 30])
def test_learn_one_equals_learn_many_bit_for_bit(params, d):
    X, y = _stream(200, d, seed=d)
    X[[17, 90], 1] = np.nan  # refused rows: NaN interval, bookkeeping untouched
    a = DFOP(d, coverage=0.8, on_invalid="skip", **params)
    b = DFOP(d, coverage=0.8, on_invalid="skip", **params)
    loop = np.array([a.learn_one(X[t], y[t], interval=True) for t in range(len(y))])
    block = np.vstack([b.learn_many(X[:70], y[:70], interval=True),
                       b.learn_many(X[70:], y[70:], interval=True)])
    np.testing.assert_array_equal(loop, block)
    for (k, u), v in zip(a.state._asdict().items(), b.state, strict=True):
        np.testing.assert_array_equal(u, v, err_msg=k)
    assert np.isnan(loop[[17, 90]][:, [0, 2]]).all()
    assert a.n_skipped_ == 2
    # The predictions are the model's without intervals, bit for bit.
    c = DFOP(d, on_invalid="skip", **params)
    np.testing.assert_array_equal(c.learn_many(X, y), block[:, 1])


def test_predict_interval_is_the_interval_learn_one_makes_next():
    X, y = _stream(120, 5)
    model = DFOP(5, 0.02, coverage=0.9)
    model.learn_many(X[:100], y[:100])
    many = model.predict_interval_many(X[100:])
    one = model.predict_interval(X[100])
    assert one == tuple(many[0])
    assert model.learn_one(X[100], y[100], interval=True) == one
    assert model.predict_interval(X[101], coverage=0.9)[1] == model.predict_one(X[101])


def test_the_tracker_misses_at_its_rate_for_any_sequence():
    """sum_t (miss_t - (1 - c)) = (q_T - q_0) / eta exactly (up to rounding): the
    long-run guarantee, here on heavy-tailed noise, a jump and a scale change."""
    rng = np.random.default_rng(3)
    X, y = _stream(4000, 4, seed=3)
    y = y + rng.standard_cauchy(4000) * (np.arange(4000) > 2500)
    model = DFOP(4, 0.01, coverage=0.9)
    model.learn_many(X, y)
    I = model.state.interval
    scored, covered, q = I[INTERVAL_SCORED], I[INTERVAL_COVERED], I[INTERVAL_Q]
    q0 = NormalDist().inv_cdf(0.95)
    assert scored == 3999
    np.testing.assert_allclose((scored - covered) - 0.1 * scored, (q - q0) / INTERVAL_RATE,
                               atol=1e-6)
    assert abs(model.coverage_ - 0.9) < 0.02


def test_coverage_holds_under_drift_on_the_synthetic_stream():
    X, y = _stream(6000, 5, seed=1)
    band = DFOP(5, 0.01, coverage=0.9).learn_many(X, y, interval=True)
    hit = (band[:, 0] <= y) & (y <= band[:, 2])
    assert abs(hit.mean() - 0.9) <= 0.015
    windows = hit[: 6000].reshape(6, 1000).mean(axis=1)
    assert np.all(np.abs(windows - 0.9) <= 0.07)


def test_rls_and_an_old_file_without_intervals(tmp_path):
    X, y = _stream(50, 3)
    RLS(3).save(tmp_path / "old.npz")  # a model (and file) without intervals
    assert load(tmp_path / "old.npz").coverage is None
    model = RLS(3, coverage=0.95)
    band = model.learn_many(X, y, interval=True)
    assert np.isinf(band[0, [0, 2]]).all() and np.isfinite(band[1:]).all()
    model.save(tmp_path / "new.npz")
    again = load(tmp_path / "new.npz")
    np.testing.assert_array_equal(again.state.interval, model.state.interval)


def test_a_malformed_bookkeeping_is_refused(tmp_path):
    model = DFOP(3, coverage=0.9)
    model.learn_many(*_stream(20, 3))
    model.save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as f:
        arrays = dict(f)
    arrays["state.interval"][4] = arrays["state.interval"][2] + 1  # covered > scored
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(StateFileError, match="interval"):
        load(tmp_path / "bad.npz")


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="coverage"):
        DFOP(3, coverage=1.0)
    with pytest.raises(ValueError, match="regression"):
        DFOP(3, task="classification", coverage=0.9)
    plain = DFOP(3)
    with pytest.raises(ValueError, match="coverage=0.9"):
        plain.predict_interval(np.zeros(3))
    with pytest.raises(ValueError, match="coverage=0.9"):
        plain.learn_many(np.zeros((2, 3)), np.zeros(2), interval=True)
    model = DFOP(3, coverage=0.9)
    with pytest.raises(ValueError, match="calibrates its intervals at coverage=0.9"):
        model.predict_interval(np.zeros(3), coverage=0.8)
    before = model.state.interval.copy()
    with pytest.raises(ValueError, match="non-finite"):
        model.learn_one(np.array([np.nan, 0.0, 0.0]), 1.0, interval=True)
    np.testing.assert_array_equal(model.state.interval, before)


def test_auto_forgetting_intervals_learn_one_equals_learn_many_and_cover():
    X, y = _stream(3000, 4, seed=5)
    X[[11, 400]] = np.nan
    a = DFOP(4, "auto", coverage=0.9, on_invalid="skip")
    b = DFOP(4, "auto", coverage=0.9, on_invalid="skip")
    block = np.vstack([a.learn_many(X[:1000], y[:1000], interval=True),
                       a.learn_many(X[1000:], y[1000:], interval=True)])
    loop = np.array([b.learn_one(X[t], y[t], interval=True) for t in range(len(y))])
    np.testing.assert_array_equal(loop, block)
    np.testing.assert_array_equal(a.state.interval, b.state.interval)
    assert np.isnan(block[[11, 400]]).all()
    assert a.predict_interval(X[0]) == tuple(a.predict_interval_many(X[:1])[0])
    ok = np.isfinite(block[:, 0])
    hit = (block[ok, 0] <= y[ok]) & (y[ok] <= block[ok, 2])
    assert abs(hit.mean() - 0.9) <= 0.015
    assert abs(a.coverage_ - hit.mean()) <= 1.0 / hit.size  # scored as held (up to a tie)


# ------------------------------------------------------------------ SparseDFOP
def _sparse_stream(n=200, D=30, seed=0, density=0.2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)) * (rng.random((n, D)) < density)
    w = rng.normal(size=(2, D))
    y = np.where(np.arange(n) < n // 2, X @ w[0], X @ w[1])
    return X, y + 0.3 * rng.normal(size=n)


@pytest.mark.parametrize("mu", [0.0, 0.03])
def test_sparse_dfop_intervals_follow_the_reference_on_the_projection(mu):
    """DFOP's reference intervals on psi_t = M x_t, compared after every step."""
    X, y = _sparse_stream(160, 25)
    model = SparseDFOP(25, 6, mu, keep_prior=False, coverage=0.9, projection="gaussian")
    Psi = X @ model.projection_matrix().T
    q0 = NormalDist().inv_cdf(0.95)
    bands, book = dfop_interval_reference(Psi, y, mu, 100.0, 0.9, INTERVAL_RATE, q0)
    for t in range(len(y)):
        idx = np.flatnonzero(X[t])
        x = (idx, X[t, idx]) if t % 2 else X[t]  # both input forms
        got = model.learn_one(x, y[t], interval=True)
        np.testing.assert_allclose(got, bands[t], rtol=1e-8, atol=1e-10, err_msg=f"step {t}")
        np.testing.assert_allclose(model.state.interval, book[t], rtol=1e-8, atol=1e-10,
                                   err_msg=f"bookkeeping after step {t}")


@pytest.mark.parametrize("params", [
    {"forgetting": 0.02},
    {"forgetting": 0.0, "projection": "gaussian"},
    {"forgetting": 0.3, "dtype": "float32", "projection": "rademacher"},
    {"forgetting": 0.01, "dtype": "float32"},
])
def test_sparse_dfop_learn_one_equals_learn_many_bit_for_bit(params):
    X, y = _sparse_stream(200, 40, seed=3)
    X[[17, 90], 1] = np.nan  # refused rows: NaN interval, bookkeeping untouched
    a = SparseDFOP(40, 8, coverage=0.8, on_invalid="skip", **params)
    b = SparseDFOP(40, 8, coverage=0.8, on_invalid="skip", **params)
    loop = np.array([a.learn_one(X[t], y[t], interval=True) for t in range(len(y))])
    # a dense block, then a CSR one (NaN kept as a stored value)
    block = np.vstack([b.learn_many(X[:70], y[:70], interval=True),
                       b.learn_many(sp.csr_matrix(X[70:]), y[70:], interval=True)])
    np.testing.assert_array_equal(loop, block)
    for (k, u), v in zip(a.state._asdict().items(), b.state, strict=True):
        np.testing.assert_array_equal(u, v, err_msg=k)
    assert np.isnan(loop[[17, 90]][:, [0, 2]]).all()
    assert a.n_skipped_ == 2
    c = SparseDFOP(40, 8, on_invalid="skip", **params)
    np.testing.assert_array_equal(c.learn_many(X, y), block[:, 1])
    # predict_interval is the interval learn_one makes next, for every input form
    nxt = a.predict_interval_many(X[:3])
    np.testing.assert_array_equal(nxt, a.predict_interval_many(sp.csr_matrix(X[:3])))
    idx = np.flatnonzero(X[2])
    assert a.predict_interval((idx, X[2, idx])) == tuple(nxt[2])
    assert tuple(a.learn_one(X[0], y[0], interval=True)) == tuple(nxt[0])


def test_sparse_dfop_intervals_save_load_and_errors(tmp_path):
    X, y = _sparse_stream(120, 20, seed=4)
    model = SparseDFOP(20, 5, 0.01, coverage=0.9)
    model.learn_many(X[:60], y[:60])
    model.save(tmp_path / "s.npz")
    back = load(tmp_path / "s.npz")
    assert back.coverage == 0.9
    np.testing.assert_array_equal(back.learn_many(X[60:], y[60:], interval=True),
                                  model.learn_many(X[60:], y[60:], interval=True))
    assert back.coverage_ == model.coverage_
    with pytest.raises(ValueError, match="coverage"):
        SparseDFOP(20, 5, coverage=1.5)
    with pytest.raises(ValueError, match="built without intervals"):
        SparseDFOP(20, 5).predict_interval(X[0])
    with pytest.raises(ValueError, match="task='regression'"):
        SparseDFOP(20, 5, task="classification", coverage=0.9)
    before = model.state.interval.copy()
    with pytest.raises(ValueError, match="non-finite"):
        model.learn_one(np.where(np.arange(20) == 3, np.nan, X[0]), 1.0, interval=True)
    np.testing.assert_array_equal(model.state.interval, before)


# ------------------------------------------------------------------------ MORES
def _mo_stream(n=150, d=3, m=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(2, d, m))
    Y = np.where((np.arange(n) < n // 2)[:, None], X @ W[0], X @ W[1])
    sd = np.where(np.arange(n) < 3 * n // 4, 0.3, 0.6)[:, None]
    return X, Y + sd * rng.normal(size=(n, m))


@pytest.mark.parametrize("decay", [0.99, 1.0])
def test_mores_intervals_follow_the_reference_after_every_step(decay):
    """Each output's interval from the reference MORES' predictions and the v = 1
    equations (noise forgotten at MORES' decay), after every step."""
    X, Y = _mo_stream(90, 3, 2)
    refs = mores_reference(X, Y, mu=decay)
    yhat = np.array([r["yhat"] for r in refs])
    q0 = NormalDist().inv_cdf(0.95)
    expected = [residual_interval_reference(yhat[:, j], Y[:, j], decay, 0.9, INTERVAL_RATE, q0)
                for j in range(2)]
    model = MORES(3, 2, decay=decay, coverage=0.9)
    for t in range(len(Y)):
        got = model.learn_one(X[t], Y[t], interval=True)
        assert got.shape == (2, 3)
        for j, (bands, book) in enumerate(expected):
            np.testing.assert_allclose(got[j], bands[t], rtol=1e-7, atol=1e-9,
                                       err_msg=f"step {t}, output {j}")
            np.testing.assert_allclose(model.state.interval[j], book[t], rtol=1e-7, atol=1e-9,
                                       err_msg=f"bookkeeping of output {j} after step {t}")


@pytest.mark.parametrize("params", [{}, {"decay": 0.9, "dtype": "float32"},
                                    {"fit_intercept": False, "decay": 1.0}])
def test_mores_learn_one_equals_learn_many_bit_for_bit(params):
    X, Y = _mo_stream(200, 4, 3, seed=2)
    X[[17, 90], 1] = np.nan
    a = MORES(4, 3, coverage=0.8, on_invalid="skip", **params)
    b = MORES(4, 3, coverage=0.8, on_invalid="skip", **params)
    loop = np.array([a.learn_one(X[t], Y[t], interval=True) for t in range(len(Y))])
    block = np.concatenate([b.learn_many(X[:70], Y[:70], interval=True),
                            b.learn_many(X[70:], Y[70:], interval=True)])
    assert block.shape == (200, 3, 3)
    np.testing.assert_array_equal(loop, block)
    for (k, u), v in zip(a.state._asdict().items(), b.state, strict=True):
        np.testing.assert_array_equal(u, v, err_msg=k)
    assert np.isnan(loop[[17, 90]][:, :, [0, 2]]).all()
    assert a.n_skipped_ == 2
    c = MORES(4, 3, on_invalid="skip", **params)
    np.testing.assert_array_equal(c.learn_many(X, Y)[~np.isnan(X).any(axis=1)],
                                  block[~np.isnan(X).any(axis=1), :, 1])
    nxt = a.predict_interval_many(X[:2])
    assert nxt.shape == (2, 3, 3)
    np.testing.assert_array_equal(a.predict_interval(X[0]), nxt[0])
    np.testing.assert_array_equal(a.learn_one(X[0], Y[0], interval=True), nxt[0])
    assert a.coverage_.shape == (3,) and a.noise_scale_.shape == (3,)
    scored = a.state.interval[:, INTERVAL_SCORED]
    np.testing.assert_array_equal(a.coverage_, a.state.interval[:, INTERVAL_COVERED] / scored)


def test_mores_intervals_cover_each_output_under_drift():
    X, Y = _mo_stream(4000, 3, 2, seed=7)
    band = MORES(3, 2, coverage=0.9).learn_many(X, Y, interval=True)
    for j in range(2):
        ok = np.isfinite(band[:, j, 0])
        hit = (band[ok, j, 0] <= Y[ok, j]) & (Y[ok, j] <= band[ok, j, 2])
        assert abs(hit.mean() - 0.9) <= 0.015, j


def test_mores_intervals_save_load_errors_and_predict_out(tmp_path):
    X, Y = _mo_stream(120, 3, 2, seed=4)
    model = MORES(3, 2, coverage=0.9)
    model.learn_many(X[:60], Y[:60])
    model.save(tmp_path / "m.npz")
    back = load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.learn_many(X[60:], Y[60:], interval=True),
                                  model.learn_many(X[60:], Y[60:], interval=True))
    np.testing.assert_array_equal(back.coverage_, model.coverage_)
    arrays = dict(np.load(tmp_path / "m.npz"))
    arrays["state.interval"][1, INTERVAL_COVERED] = arrays["state.interval"][1, INTERVAL_SCORED] + 1
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(StateFileError, match=r"interval\[1\]"):
        load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="coverage"):
        MORES(3, 2, coverage=0.0)
    with pytest.raises(ValueError, match="built without intervals"):
        MORES(3, 2).learn_one(X[0], Y[0], interval=True)
    before = model.state.interval.copy()
    with pytest.raises(ValueError, match="non-finite"):
        model.learn_one(X[0], np.array([np.nan, 0.0]), interval=True)
    np.testing.assert_array_equal(model.state.interval, before)
    out = np.empty(2)
    assert model.predict_one(X[1], out=out) is out
    np.testing.assert_array_equal(out, model.predict_one(X[1]))
    with pytest.raises(ValueError, match="out must be"):
        model.predict_one(X[1], out=np.empty(3))


def test_sparse_dfop_auto_intervals_learn_one_equals_learn_many_and_cover():
    X, y = _sparse_stream(3000, 40, seed=6)
    X[[11, 400], 2] = np.nan
    a = SparseDFOP(40, 8, "auto", coverage=0.9, on_invalid="skip")
    b = SparseDFOP(40, 8, "auto", coverage=0.9, on_invalid="skip")
    assert type(a).__name__ == "SparseDFOPBank"
    block = np.vstack([a.learn_many(X[:1000], y[:1000], interval=True),
                       a.learn_many(sp.csr_matrix(X[1000:]), y[1000:], interval=True)])
    loop = np.array([b.learn_one(X[t], y[t], interval=True) for t in range(len(y))])
    np.testing.assert_array_equal(loop, block)
    for (k, u), v in zip(a.state._asdict().items(), b.state, strict=True):
        np.testing.assert_array_equal(u, v, err_msg=k)
    assert np.isnan(block[[11, 400]]).all()
    c = SparseDFOP(40, 8, "auto", on_invalid="skip")
    np.testing.assert_array_equal(c.learn_many(X, y), block[:, 1])
    idx = np.flatnonzero(X[0])
    assert a.predict_interval((idx, X[0, idx])) == tuple(a.predict_interval_many(X[:1])[0])
    ok = np.isfinite(block[:, 0])
    hit = (block[ok, 0] <= y[ok]) & (y[ok] <= block[ok, 2])
    assert abs(hit.mean() - 0.9) <= 0.015
    assert abs(a.coverage_ - hit.mean()) <= 1.0 / hit.size
