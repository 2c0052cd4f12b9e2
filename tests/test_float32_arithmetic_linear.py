"""SOMOR's and PARegressor's float32-only arithmetic (``arithmetic="float32"``): bit
for bit against a slow NumPy float32 reference step by step, learn_one == learn_many,
save/load, refused rows leave the state as it was, and the accuracy against the
float64 models on a long stream (docs/design/float32.md, "float32-only arithmetic")."""

from __future__ import annotations

import numpy as np
import pytest
from reference import LinearFloat32Reference

from edgereg import SOMOR, PARegressor, load

#: float32 tests belong to the deep tier (conftest.py); the reference's inf/NaN warn.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

_EXTREMES = np.array([0, 1e-320, 1e-40, 1e-8, 1, -1, 3.7, 1e8, 1e15, 1e18, 1e20, 3.4e38,
                      1e39, 1.7e308])


def _model(kind, d, m, **kw):
    kw = {"dtype": "float32", "arithmetic": "float32", "on_invalid": "skip", **kw}
    if kind == "somor":
        return SOMOR(d, m or 1, **kw)
    return PARegressor(d, m, variant=kind, **kw)


def _reference(model):
    kind = {"I": 1, "II": 2}.get(getattr(model, "variant", None), 0)
    return LinearFloat32Reference(model._D, model._m, kind, model._C32, model._eps32,
                                  model.fit_intercept)


def _stream(seed, n, d, m, extreme=0.0, bad=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    k = m or 1
    Y = X @ rng.normal(size=(d, k)) + 0.1 * rng.normal(size=(n, k))
    if extreme:
        big = rng.choice(_EXTREMES, (n, d)) * rng.choice([-1, 1], (n, d))
        X = np.where(rng.random((n, d)) < extreme, big, X)
        Y = np.where(rng.random(Y.shape) < extreme, rng.choice(_EXTREMES, Y.shape), Y)
    if bad:
        X[rng.random((n, d)) < bad] = np.nan
        Y[rng.random(Y.shape) < bad] = np.inf
    return X, (Y if m else Y[:, 0])


def _bound(model):
    return model._work.bound.view(np.float32)[:2]


def _assert_same(model, ref, label):
    assert np.array_equal(model.state.W, ref.W), label
    assert list(model.state.counts) == [ref.seen, ref.skipped], label
    b = _bound(model)
    assert np.array_equal(b, [ref.B, ref.count], equal_nan=True), label


CASES = [
    # kind, d, m, params, extreme, bad
    ("somor", 5, 3, {"epsilon": 0.05}, 0.0, 0.0),
    ("somor", 4, 2, {"epsilon": 0.0, "fit_intercept": False}, 0.05, 0.02),
    ("I", 6, None, {"C": 0.5, "epsilon": 0.01}, 0.0, 0.02),
    ("I", 3, 2, {"C": 1e30}, 0.05, 0.02),
    ("II", 6, None, {"C": 0.5, "epsilon": 0.05}, 0.05, 0.0),
    ("II", 4, 3, {"C": 2.0, "epsilon": 0.0, "fit_intercept": False}, 0.05, 0.02),
]


@pytest.mark.parametrize("kind, d, m, params, extreme, bad", CASES)
def test_every_step_equals_the_numpy_reference_bit_for_bit(kind, d, m, params, extreme, bad):
    """learn_one against the reference after every step (prediction, W, counts, the
    bound of ||W||_F), NaN/inf rows and steps that would overflow skipped."""
    X, Y = _stream(d + (m or 0), 500, d, m, extreme, bad)
    model = _model(kind, d, m, **params)
    ref = _reference(model)
    refused = 0
    for t in range(X.shape[0]):
        before = np.asarray(model.predict_many(X[t:t + 1])).reshape(-1)
        got = np.atleast_1d(model.learn_one(X[t], Y[t]))
        want, ok = ref.learn(X[t].astype(np.float32), np.atleast_1d(Y[t]))
        refused += not ok
        if np.all(np.isfinite(want)):
            assert np.array_equal(got, want.astype(np.float64)), t
            assert np.array_equal(before, got), t  # predict_many: learn_one's prediction
        _assert_same(model, ref, f"step {t}")
    assert model.n_skipped_ == refused
    if extreme or bad:
        assert refused > 0
    else:
        assert refused == 0


@pytest.mark.parametrize("kind", ["somor", "I", "II"])
def test_learn_one_equals_learn_many_bit_for_bit(kind):
    for seed in range(4):
        rng = np.random.default_rng(seed)
        d = int(rng.integers(1, 10))
        m = None if kind != "somor" and seed % 2 else int(rng.integers(1, 4))
        X, Y = _stream(seed, 300, d, m, 0.05, 0.02)
        kw = {"epsilon": float(rng.choice([0.0, 0.05])), "fit_intercept": bool(seed % 3)}
        block, one = _model(kind, d, m, **kw), _model(kind, d, m, **kw)
        a = block.learn_many(X, Y)
        b = np.array([one.learn_one(X[t], Y[t]) for t in range(len(Y))])
        assert np.array_equal(a, b, equal_nan=True), seed
        assert np.array_equal(block.state.W, one.state.W), seed
        assert np.array_equal(block.state.counts, one.state.counts), seed
        assert np.array_equal(_bound(block), _bound(one), equal_nan=True), seed
        assert np.array_equal(block.predict_many(X[:50]),
                              np.array([one.predict_one(x) for x in X[:50]]), equal_nan=True)


@pytest.mark.parametrize("kind", ["somor", "I", "II"])
def test_save_and_load_continue_bit_for_bit(tmp_path, kind):
    X, Y = _stream(5, 400, 6, 2, 0.0, 0.02)
    a = _model(kind, 6, 2, epsilon=0.01)
    a.learn_many(X[:200], Y[:200])
    a.save(tmp_path / "m.npz")
    b = load(tmp_path / "m.npz")
    assert b.get_params() == a.get_params() and b.arithmetic == "float32"
    assert np.array_equal(b.learn_many(X[200:], Y[200:]), a.learn_many(X[200:], Y[200:]),
                          equal_nan=True)
    assert np.array_equal(a.state.W, b.state.W)
    assert np.array_equal(a.state.counts, b.state.counts)


@pytest.mark.parametrize("kind", ["somor", "I", "II"])
def test_a_refused_row_leaves_the_state_as_it_was(kind):
    """NaN/inf, an input whose square overflows float32 (1e20), a target beyond
    float32 (1e39) and a step that would overflow W: ValueError, state unchanged."""
    kw = {} if kind == "somor" else {"C": 1e30}
    model = _model(kind, 3, 2, on_invalid="raise", epsilon=0.0, fit_intercept=False, **kw)
    X, Y = _stream(3, 50, 3, 2)
    model.learn_many(X, Y)
    before = [a.copy() for a in model.state]
    for x, y in [([np.nan, 0, 1], [1, 2]), ([0, 1, 2], [np.inf, 0]), ([1e20, 0, 0], [1, 1]),
                 ([1, 0, 0], [1e39, 0]), ([1e-18, 0, 0], [1e19, 0])]:  # the last: W to inf
        with pytest.raises(ValueError):
            model.learn_one(np.array(x, float), np.array(y, float))
        for a, b in zip(model.state, before, strict=True):
            assert np.array_equal(a, b)
    assert model.n_seen_ == 50


def test_the_parameter_is_checked_and_the_default_is_unchanged():
    assert SOMOR(3, 2).arithmetic == "auto" and PARegressor(3).get_params()["arithmetic"] == "auto"
    with pytest.raises(ValueError, match="dtype='float32'"):
        PARegressor(3, arithmetic="float32")
    with pytest.raises(ValueError, match="arithmetic must be"):
        SOMOR(3, 2, dtype="float32", arithmetic="float16")
    with pytest.raises(ValueError, match=r"C 1e-40 is outside"):
        _model("I", 3, None, C=1e-40)
    with pytest.raises(ValueError, match=r"C 1e\+39 is outside"):
        _model("II", 3, None, C=1e39)
    with pytest.raises(ValueError, match="epsilon"):
        _model("somor", 3, 2, epsilon=1e39)
    assert _model("I", 3, None, epsilon=1e-40)._eps32 == 0.0  # subnormal: no zone
    # With the default arithmetic a float32 model keeps its float64 scalars:
    # the same stream gives different bits (the two are different arithmetics).
    X, Y = _stream(1, 300, 6, 2)
    for kind in ("somor", "I", "II"):
        mixed = _model(kind, 6, 2, arithmetic="auto").learn_many(X, Y)
        only32 = _model(kind, 6, 2).learn_many(X, Y)
        assert not np.array_equal(mixed, only32), kind
        np.testing.assert_allclose(only32, mixed, rtol=1e-4, atol=1e-4)


#: kind, C, epsilon, the largest relative deviation of W from the float64 model's
#: measured over 200,000 rows (2.3e-7, 1.4e-7, 1.2e-7; docs/design/float32.md),
#: times about 5.
_LONG = [("somor", 1.0, 0.01, 1.2e-6), ("I", 0.1, 0.01, 7e-7), ("II", 0.1, 0.01, 7e-7)]


@pytest.mark.parametrize("kind, C, eps, bound", _LONG)
def test_long_runs_follow_the_float64_model(kind, C, eps, bound):
    """200,000 rows at d = 6, m = 2 with a drift at the middle: after every block of
    20,000 rows the weights are within ``bound`` (relative to max |W|) of a float64
    model's on the same float32-rounded rows, nothing refused."""
    rng = np.random.default_rng(11)
    d, m, n = 6, 2, 200_000
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)
    A = rng.normal(size=(d, m))
    Y = X @ A + 0.1 * rng.normal(size=(n, m))
    Y[n // 2:] = X[n // 2:] @ -A + 0.1 * rng.normal(size=(n - n // 2, m))
    kw = {} if kind == "somor" else {"C": C}
    model, ref = _model(kind, d, m, epsilon=eps, **kw), _model(kind, d, m, epsilon=eps,
                                                                dtype="float64",
                                                                arithmetic="auto", **kw)
    worst = 0.0
    for start in range(0, n, 20_000):
        rows = slice(start, start + 20_000)
        model.learn_many(X[rows], Y[rows])
        ref.learn_many(X[rows], Y[rows])
        W, R = model.state.W.astype(np.float64), ref.state.W
        worst = max(worst, np.abs(W - R).max() / np.abs(R).max())
    assert worst < bound
    assert model.n_skipped_ == 0
