"""Budgeted NORMA (docs/algorithms/norma.md) against the naive reference, step by step."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
import reference
from contract_data import assert_same_state, state_arrays
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereg import NORMAClassifier, NORMANovelty, NORMARegressor, load
from edgereg._kernels.norma import RENORM_THRESHOLD, _exp_scaled

KERNELS = ["rbf", "laplacian", "polynomial", "linear"]
SCHEDULES = ["constant", "inv_sqrt"]

# name -> (class, constructor kwargs, reference variant, reference kwargs, task)
VARIANTS = {
    "clf-margin": (NORMAClassifier, {"margin": 0.5}, "hinge", {"rho0": 0.5}, "clf"),
    "clf-nu": (NORMAClassifier, {"nu": 0.3, "margin": 0.2}, "hinge_nu",
               {"nu": 0.3, "rho0": 0.2}, "clf"),
    "clf-perceptron": (NORMAClassifier, {"margin": 0.0, "regularization": 0.0}, "hinge",
                       {"rho0": 0.0, "lam": 0.0}, "clf"),
    "reg-squared": (NORMARegressor, {"loss": "squared"}, "squared", {}, "reg"),
    "reg-epsilon": (NORMARegressor, {"loss": "epsilon", "epsilon": 0.3}, "epsilon",
                    {"rho0": 0.3}, "reg"),
    "reg-epsilon-nu": (NORMARegressor, {"loss": "epsilon", "epsilon": 0.3, "nu": 0.4},
                       "epsilon_nu", {"rho0": 0.3, "nu": 0.4}, "reg"),
    "reg-huber": (NORMARegressor, {"loss": "huber", "huber_sigma": 0.5}, "huber",
                  {"rho0": 0.5}, "reg"),
    "reg-huber-nu": (NORMARegressor, {"loss": "huber", "huber_sigma": 0.5, "nu": 0.4},
                     "huber_nu", {"rho0": 0.5, "nu": 0.4}, "reg"),
    "novelty": (NORMANovelty, {"nu": 0.3}, "novelty", {"nu": 0.3, "fit_offset": False},
                "nov"),
}


def _stream(task: str, n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
    rng = np.random.default_rng(seed)
    X = 0.7 * rng.normal(size=(n, d))
    if task == "nov":
        return X, None
    w = rng.normal(size=d)
    score = np.sin(X @ w) + 0.1 * rng.normal(size=n)
    if task == "clf":
        return X, np.where(score >= 0, 1.0, -1.0)
    return X, score


def _build(name: str, kernel: str, schedule: str, budget: int, **over):
    cls, kw, variant, ref_kw, task = VARIANTS[name]
    common = {"kernel": kernel, "gamma": 0.5, "learning_rate": 0.3, "regularization": 0.05,
              "learning_rate_schedule": schedule, "degree": 2, "coef0": 1.0}
    params = {"n_features": 3, "budget": budget, **common, **kw, **over}
    if cls is NORMANovelty:
        params["fit_offset"] = False
    model = cls(**params)
    rk = {"kernel": kernel, "gamma": 0.5, "degree": 2, "coef0": 1.0, "eta": 0.3, "lam": 0.05,
          "schedule": schedule, **ref_kw}
    for key, ref_key in (("learning_rate", "eta"), ("regularization", "lam")):
        if key in over:
            rk[ref_key] = over[key]
    return model, variant, rk, task


def _learn(model, x, y):
    return model.learn_one(x) if y is None else model.learn_one(x, y)


def _check_against_reference(model, X, Y, variant, rk, budget=None, tol=1e-10):
    ref = reference.norma(X, Y, variant=variant, budget=budget, **rk)
    for t in range(len(X)):
        y = None if Y is None else Y[t]
        if isinstance(model, NORMAClassifier):
            score = model.decision_function_one(X[t])
        elif isinstance(model, NORMANovelty):
            score = model.score_one(X[t])
        else:
            score = model.predict_one(X[t])
        _learn(model, X[t], y)
        np.testing.assert_allclose(score, ref["score"][t], rtol=tol, atol=tol,
                                   err_msg=f"score at step {t}")
        np.testing.assert_allclose(model.dual_coef_, ref["coef"][t], rtol=tol, atol=tol,
                                   err_msg=f"coefficients at step {t}")
        np.testing.assert_array_equal(model.support_vectors_, ref["sv"][t],
                                      err_msg=f"support vectors at step {t}")
        np.testing.assert_allclose(model._scalars[2], ref["rho"][t], rtol=tol, atol=tol)
        np.testing.assert_allclose(model.offset_, ref["b"][t], rtol=tol, atol=tol)
    assert model.n_active_ == sum(ref["active"])
    return ref


# ------------------------------------------------------------ exactness
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", list(VARIANTS))
def test_unbudgeted_matches_naive_reference_step_by_step(name, kernel, schedule):
    model, variant, rk, task = _build(name, kernel, schedule, budget=60)
    X, Y = _stream(task, 50, 3, seed=zlib.crc32(f"{name}-{kernel}".encode()) % 1000)
    ref = _check_against_reference(model, X, Y, variant, rk)
    # The stream must exercise the model: several terms stored, not all of them.
    n_terms = len(ref["coef"][-1])
    assert n_terms >= 5
    assert model.n_dropped_ == 0


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("name", ["clf-margin", "reg-huber-nu", "novelty", "reg-squared"])
def test_budgeted_matches_truncated_reference_step_by_step(name, schedule):
    model, variant, rk, task = _build(name, "rbf", schedule, budget=7)
    X, Y = _stream(task, 120, 3, seed=7)
    _check_against_reference(model, X, Y, variant, rk, budget=7)
    assert model.n_support_ == 7 and model.n_dropped_ > 0


def test_scale_renormalisation_matches_reference():
    # eta lambda = 0.9: s shrinks tenfold per step and crosses 2^-64 every ~19 steps.
    model, variant, rk, task = _build("reg-epsilon", "rbf", "constant", budget=200,
                                      learning_rate=1.0, regularization=0.9)
    X, Y = _stream(task, 100, 3, seed=3)
    _check_against_reference(model, X, Y, variant, rk, tol=1e-12)
    assert RENORM_THRESHOLD <= model._scalars[0] <= 1.0


def test_truncation_error_stays_within_the_proposition_bound():
    """||f_full - f_tau||_H <= sum_dropped |alpha_i| X <= (1 - eta lambda)^tau C X / lambda."""
    eta, lam, tau = 0.5, 0.1, 12
    model = NORMAClassifier(2, tau, "rbf", gamma=1.0, learning_rate=eta, regularization=lam,
                            margin=1.0)
    X, Y = _stream("clf", 400, 2, seed=11)
    ref = _check_against_reference(model, X, Y, "hinge",
                                   {"kernel": "rbf", "gamma": 1.0, "eta": eta, "lam": lam,
                                    "rho0": 1.0}, budget=tau)
    bound = model.truncation_bound(max_kernel_diagonal=1.0, loss_bound=1.0)
    assert bound == pytest.approx((1 - eta * lam) ** tau / lam)
    dropped = np.array(ref["dropped_l1"])
    gap = np.abs(np.array(ref["full_score"]) - np.array(ref["score"]))
    assert dropped.max() > 0.1 * bound  # the stream really truncates, near the worst case
    assert np.all(dropped <= bound)
    assert np.all(gap <= bound)  # X^2 = 1 for the RBF kernel


# ------------------------------------------------------------ nu-property
@pytest.mark.parametrize(
    ("cls", "kw", "task"),
    [
        (NORMANovelty, {"nu": 0.2, "fit_offset": False}, "nov"),
        (NORMAClassifier, {"nu": 0.3}, "clf"),
        (NORMARegressor, {"loss": "epsilon", "nu": 0.3}, "reg"),
        (NORMARegressor, {"loss": "huber", "nu": 0.3}, "reg"),
    ],
    ids=["novelty", "classifier", "epsilon", "huber"],
)
def test_nu_fraction_converges(cls, kw, task):
    """The fraction of loss-active steps (margin errors, flags, residuals outside the band).

    For a constant eta the rho update gives exactly
    rho_end - rho_start = eta (nu m - F) over m steps with F active ones, so
    F / m = nu - (rho_end - rho_start) / (eta m) (eps and sigma move the other
    way: F / m = nu + (eps_end - eps_start) / (eta m)): the fraction is nu up to the
    drift of rho. On a stationary stream rho stays bounded (O(1)); with
    eta m = 400 a deviation of 0.02 would need rho to move by 8 units, which
    only the wrong (printed) signs produce: rho then runs off linearly.
    """
    eta, m = 0.1, 4000
    model = cls(2, 100, "rbf", gamma=1.0, learning_rate=eta, regularization=0.01, **kw)
    X, Y = _stream(task, 2000 + m, 2, seed=5)
    head = (X[:2000],) if Y is None else (X[:2000], Y[:2000])
    tail = (X[2000:],) if Y is None else (X[2000:], Y[2000:])
    model.learn_many(*head)
    active0, rho0 = model.n_active_, float(model._scalars[2])
    out = model.learn_many(*tail)
    fraction = (model.n_active_ - active0) / m
    assert abs(fraction - kw["nu"]) < 0.02, fraction
    drift = float(model._scalars[2]) - rho0
    # rho (margin, novelty threshold) falls on active steps, eps / sigma rise.
    sign = 1.0 if cls is NORMARegressor else -1.0
    assert fraction == pytest.approx(kw["nu"] + sign * drift / (eta * m), abs=1e-9)
    if cls is NORMANovelty:
        assert out.mean() == pytest.approx(fraction)  # flags are the active steps


# ------------------------------------------------------------ persistence
@pytest.mark.parametrize("n_first", [5, 37])
def test_save_load_with_partly_filled_or_wrapped_ring_buffer(tmp_path, n_first):
    a = NORMARegressor(3, 16, "rbf", loss="epsilon", epsilon=0.2)
    X, Y = _stream("reg", 80, 3, seed=2)
    a.learn_many(X[:n_first], Y[:n_first])
    assert 0 < a.n_support_ <= 16
    if n_first == 5:
        assert a.n_support_ < 16 and a.n_dropped_ == 0  # partly filled
    else:
        assert a.n_dropped_ > 0 and a._counts[3] != 0  # wrapped, oldest not in slot 0
    a.save(tmp_path / "m.npz")
    b = load(tmp_path / "m.npz")
    assert_same_state(state_arrays(a), state_arrays(b))
    np.testing.assert_array_equal(a.support_vectors_, b.support_vectors_)
    np.testing.assert_array_equal(
        a.learn_many(X[n_first:], Y[n_first:]), b.learn_many(X[n_first:], Y[n_first:])
    )
    assert_same_state(state_arrays(a), state_arrays(b))


# ------------------------------------------------------------ ring buffer
@settings(max_examples=40, deadline=None)
@given(
    budget=st.integers(1, 6),
    steps=st.lists(
        st.tuples(st.floats(-2, 2), st.floats(-2, 2), st.floats(-3, 3)), min_size=1, max_size=40
    ),
)
def test_ring_buffer_never_exceeds_budget_and_stays_consistent(budget, steps):
    model = NORMARegressor(2, budget, "rbf", loss="epsilon", epsilon=0.5, learning_rate=0.5)
    stored: list[np.ndarray] = []
    for x0, x1, y in steps:
        x = np.array([x0, x1])
        total = model.n_support_ + model.n_dropped_
        active = model.n_active_
        model.learn_one(x, y)
        added = model.n_support_ + model.n_dropped_ - total
        assert added in (0, 1)
        assert added == model.n_active_ - active  # stored exactly when the loss is active
        if added:
            stored.append(x)
        assert model.n_support_ == min(len(stored), budget) <= budget
        assert model.n_dropped_ == max(0, len(stored) - budget)
        assert model._counts[3] == len(stored) % budget
        expect = np.array(stored[-budget:]).reshape(-1, 2) if stored else np.zeros((0, 2))
        np.testing.assert_array_equal(model.support_vectors_, expect)
        coef = model.dual_coef_
        assert coef.shape == (model.n_support_,) and np.all(coef != 0.0)


# ------------------------------------------------------------ API and bad input
def test_classifier_labels_and_outputs():
    X, Y = _stream("clf", 60, 3, seed=4)
    a = NORMAClassifier(3, 50)
    b = NORMAClassifier(3, 50)
    pa = a.learn_many(X, Y)
    pb = b.learn_many(X, np.where(Y > 0, 1, 0))  # {0, 1} labels: 0 -> -1
    np.testing.assert_array_equal(pa, pb)
    assert set(np.unique(pa)) <= {-1.0, 1.0}
    scores = a.decision_function(X)
    np.testing.assert_array_equal(a.predict_many(X), np.where(scores >= 0, 1.0, -1.0))
    before = state_arrays(a)
    with pytest.raises(ValueError, match="invalid target"):
        a.learn_one(X[0], 2)
    assert_same_state(before, state_arrays(a))
    with pytest.raises(ValueError, match="row 3"):
        a.learn_many(X[:5], np.array([1, -1, 1, 2, 1]))


def test_novelty_flags_and_scores():
    X, _ = _stream("nov", 100, 3, seed=6)
    model = NORMANovelty(3, 50, nu=0.2)
    flags = model.learn_many(X)
    assert set(np.unique(flags)) <= {0.0, 1.0}
    assert flags.sum() == model.n_active_ == model.n_support_ + model.n_dropped_
    scores = np.array([model.score_one(x) for x in X])
    np.testing.assert_array_equal(model.predict_many(X), (scores < 0).astype(float))
    np.testing.assert_array_equal(model.score_many(X), scores)


@pytest.mark.parametrize(
    ("cls", "kw", "match"),
    [
        (NORMARegressor, {"learning_rate": 2.0, "regularization": 0.5}, "must be < 1"),
        (NORMAClassifier, {"learning_rate": 10.0, "regularization": 0.1}, "must be < 1"),
        (NORMARegressor, {"nu": 0.2}, "loss='epsilon' or 'huber'"),
        (NORMANovelty, {"fit_offset": True}, "no offset"),
        (NORMAClassifier, {"kernel": "sigmoid"}, "kernel must be"),
        (NORMAClassifier, {"nu": 1.5}, "nu must be"),
        (NORMARegressor, {"learning_rate_schedule": "linear"}, "schedule"),
        (NORMARegressor, {"huber_sigma": 0.0, "loss": "huber"}, "huber_sigma"),
        (NORMAClassifier, {"budget": 0}, "budget"),
    ],
)
def test_bad_hyper_parameters_are_explained(cls, kw, match):
    with pytest.raises(ValueError, match=match):
        cls(3, **kw)


def test_memory_is_fixed_and_as_documented():
    model = NORMAClassifier(10, 200)
    expected = ((10 + 2) * 200 + 3) * 8 + 200 * 8 + 6 * 8
    assert model.nbytes() == expected == 20_872
    X, Y = _stream("clf", 500, 10, seed=1)
    model.learn_many(X, Y)
    assert model.nbytes() == expected
    assert math.isfinite(model.decision_function_one(X[0]))


def test_vectorised_exp_is_within_two_ulp_of_numpy():
    t = np.concatenate([-np.linspace(0.0, 707.0, 20001), -np.logspace(-300, 0, 500), [0.0]])
    row = -t.copy()
    bits = np.zeros(t.size, dtype=np.int64)
    _exp_scaled(row, t.size, -1.0, bits, bits.view(np.float64))
    expected = np.exp(t)
    assert np.all(np.abs(row - expected) <= 2 * np.spacing(expected))
    below = -np.array([708.0, 709.0, 745.0, 1e6, np.inf])
    row = -below
    _exp_scaled(row, row.size, -1.0, bits, bits.view(np.float64))
    assert np.all((row >= 0.0) & (row <= np.exp(-708.0) * (1 + 1e-15)))
    row = np.array([np.nan])
    _exp_scaled(row, 1, -1.0, bits, bits.view(np.float64))
    assert np.isnan(row[0])


@pytest.mark.slow  # float32 kernels: the deep tier (tests/conftest.py)
def test_float32_exp_is_within_two_ulp_of_exp_of_its_argument():
    """The float32 model's exp (float32 arithmetic) against float64's exp
    of the same float32 argument, in float32 ulps; below -87 the floor."""
    t = np.concatenate([-np.linspace(0.0, 87.0, 20001), -np.logspace(-40, 0, 500), [0.0]])
    row = (-t).astype(np.float32)
    scratch = np.zeros(row.size, dtype=np.int64)  # as the model's: int64, viewed
    bits = scratch.view(np.int32)
    _exp_scaled(row, row.size, np.float32(-1.0), bits, bits.view(np.float32))
    assert row.dtype == np.float32
    expected = np.exp(t.astype(np.float32).astype(np.float64))
    ulp = np.spacing(expected.astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(row - expected) <= 2 * ulp)
    below = np.array([88.0, 104.0, 1e6, np.inf], dtype=np.float32)
    _exp_scaled(below, below.size, np.float32(-1.0), bits, bits.view(np.float32))
    assert np.all((below > 0.0) & (below <= np.exp(-87.0) * (1 + 1e-6)))
    nan = np.array([np.nan], dtype=np.float32)
    _exp_scaled(nan, 1, np.float32(-1.0), bits, bits.view(np.float32))
    assert np.isnan(nan[0])


@pytest.mark.slow  # float32 kernels: the deep tier (tests/conftest.py)
@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_float32_arithmetic_keeps_the_float64_model_within_float32_rounding(kernel):
    """3,000 steps in float32 arithmetic: predictions within 1e-5 (relative to
    their mean size) of the float64 model's; measured 2-6e-7 (to 20,000 steps),
    as with the float64 exp on float32 storage before (2-5e-7)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3_000, 10))
    y = X @ rng.normal(size=10) / np.sqrt(10) + 0.1 * rng.normal(size=3_000)
    a = NORMARegressor(10, kernel=kernel, gamma=0.1)
    b = NORMARegressor(10, kernel=kernel, gamma=0.1, dtype="float32")
    a.learn_many(X, y)
    b.learn_many(X.astype(np.float32), y)
    Xt = rng.normal(size=(300, 10))
    fa, fb = a.predict_many(Xt), b.predict_many(Xt)
    assert np.max(np.abs(fa - fb)) / np.mean(np.abs(fa)) < 1e-5
