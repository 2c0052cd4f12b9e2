"""missing="impute": against the NumPy reference step by step, learn_one == learn_many
bit for bit, predict-only rows, and what stays refused. The contract suites cover a
model built with ``missing="impute"`` through DFOP's ``_unit_test_params``."""

from __future__ import annotations

import numpy as np
import pytest
from reference import dfop_impute_reference

from edgereg import DFOP


def _stream(n, d, seed=0, share=0.2, rho=0.8):
    rng = np.random.default_rng(seed)
    cov = rho ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    X = rng.normal(size=(n, d)) @ np.linalg.cholesky(cov).T
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    Xm = np.where(rng.random((n, d)) < share, np.nan, X)
    Xm[:5] = X[:5]  # the first rows complete: the noise level exists
    return X, Xm, y


@pytest.mark.parametrize("mu", [0.0, 0.02])
def test_imputation_follows_the_reference_after_every_step(mu):
    _, Xm, y = _stream(120, 4, seed=1)
    pred, Rs, Ws = dfop_impute_reference(Xm, y, mu, 100.0)
    model = DFOP(4, mu, keep_prior=False, missing="impute")
    for t in range(len(y)):
        got = model.learn_one(Xm[t], y[t])
        np.testing.assert_allclose(got, pred[t], rtol=1e-7, atol=1e-9, err_msg=f"step {t}")
        np.testing.assert_allclose(model.coef_, Ws[t], rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(model.covariance_ @ Rs[t], np.eye(4), atol=1e-7)
    assert model.n_imputed_ == int(np.isnan(Xm).any(axis=1).sum())


@pytest.mark.parametrize("params", [
    {"forgetting": 0.01},
    {"forgetting": 0.01, "coverage": 0.9},
    {"forgetting": 0.2, "dtype": "float32"},
])
def test_learn_one_equals_learn_many_bit_for_bit(params):
    _, Xm, y = _stream(400, 6, seed=2)
    y = y.copy()
    y[[30, 31]] = np.nan  # predict-only
    Xm[50] = np.nan  # every input missing: predict-only, NaN
    a = DFOP(6, missing="impute", **params)
    b = DFOP(6, missing="impute", **params)
    loop = np.array([a.learn_one(Xm[t], y[t]) for t in range(len(y))])
    block = np.concatenate([b.learn_many(Xm[:100], y[:100]), b.learn_many(Xm[100:], y[100:])])
    np.testing.assert_array_equal(loop, block)
    for (k, u), v in zip(a.state._asdict().items(), b.state, strict=True):
        np.testing.assert_array_equal(u, v, err_msg=k)
    assert np.isnan(loop[50]) and np.isfinite(loop[30])
    assert a.n_seen_ == 400 - 3
    if "coverage" in params:
        c = DFOP(6, missing="impute", **params)
        bands = c.learn_many(Xm, y, interval=True)
        np.testing.assert_array_equal(bands[:, 1], loop)


def test_predict_only_rows_leave_the_state_and_predictions_use_the_fill():
    X, Xm, y = _stream(300, 5, seed=3)
    model = DFOP(5, 0.01, missing="impute")
    model.learn_many(X[:200], y[:200])
    before = [a.copy() for a in model.state]
    x = X[200].copy()
    x[2] = np.nan
    p = model.predict_one(x)
    assert np.isfinite(p) and p == model.predict_many(x[None])[0]
    assert model.learn_one(x, np.nan) == p  # NaN target: predicted, not learnt
    for a, b in zip(before, model.state, strict=True):
        np.testing.assert_array_equal(a, b)
    # The fill is the conditional mean: closer to the truth than 0 on correlated inputs.
    P = model.covariance_
    fill = -(P[2, [0, 1, 3, 4]] @ x[[0, 1, 3, 4]]) / P[2, 2]
    np.testing.assert_allclose(p, model.coef_ @ np.where(np.isnan(x), fill, x), rtol=1e-12)


def test_inf_stays_invalid_and_reject_is_the_default():
    _, Xm, y = _stream(50, 3, seed=4)
    model = DFOP(3, missing="impute")
    model.learn_many(Xm[:20], y[:20])
    before = [a.copy() for a in model.state]
    x = np.array([np.nan, np.inf, 1.0])
    with pytest.raises(ValueError, match="non-finite"):
        model.learn_one(x, 1.0)
    with pytest.raises(ValueError, match="row 1"):
        model.learn_many(np.vstack([Xm[20], x]), np.array([y[20], 1.0]))
    model2 = DFOP(3, missing="impute")
    model2.learn_many(Xm[:21], y[:21])
    for a, b in zip(model.state, model2.state, strict=True):
        np.testing.assert_array_equal(a, b)
    _ = before
    with pytest.raises(ValueError, match="non-finite"):
        DFOP(3).learn_one(np.array([np.nan, 0.0, 0.0]), 1.0)
    with pytest.raises(ValueError, match="missing"):
        DFOP(3, missing="mean")
    with pytest.raises(ValueError, match="regression"):
        DFOP(3, task="classification", missing="impute")


def test_refused_rows_give_the_same_band_one_by_one_and_in_a_block():
    """Rows with inf (with and without a NaN beside it, +inf and -inf together, an inf
    target) are refused alike by learn_one and learn_many under on_invalid="skip":
    NaN bounds around the same prediction, the same counts, the same state."""
    _, Xm, y = _stream(200, 4, seed=5)
    y = y.copy()
    Xm[40] = [np.inf, -np.inf, 1.0, 0.5]  # sums to NaN: no NaN in it, refused
    Xm[41] = [np.nan, np.inf, 1.0, 0.5]  # a NaN and an inf: refused
    Xm[42, 0] = np.inf
    y[43] = np.inf
    kw = {"missing": "impute", "coverage": 0.9, "on_invalid": "skip"}
    a, b = DFOP(4, 0.02, **kw), DFOP(4, 0.02, **kw)
    loop = np.array([a.learn_one(Xm[t], y[t], interval=True) for t in range(len(y))])
    block = b.learn_many(Xm, y, interval=True)
    np.testing.assert_array_equal(loop, block)
    assert np.isnan(block[40:44, [0, 2]]).all() and np.isfinite(block[44]).all()
    assert a.n_skipped_ == b.n_skipped_ == 4
    for (k, u), v in zip(a.state._asdict().items(), b.state, strict=True):
        np.testing.assert_array_equal(u, v, err_msg=k)
