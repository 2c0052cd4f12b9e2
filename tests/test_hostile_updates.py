"""Finite samples whose update would not be finite are invalid, the state untouched.

The cases for the DFOP family: a target near 1.7e308 (the
correction g overflows), inputs near 5e152 (the rank-one term Px_i Px_j
overflows although x^T P x does not), a float32 model fed y = 1e39 (finite as
a float64 argument, inf once stored). On 751aa9a each left the model dead:
NaN or inf in its state, every later prediction NaN, a checkpoint that load
refuses.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgereg import DFOP, Fleet, SparseDFOP


def _trained(dtype="float64", on_invalid="raise"):
    """A model early in its stream: P still near its prior p0 I."""
    model = DFOP(3, 0.01, dtype=dtype, on_invalid=on_invalid)
    model.learn_many(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=dtype), [1.0, 2.0])
    return model


def _learnt(model):
    """The learnt fields (scratch, ``work*``, has no meaning between calls)."""
    return [a.copy() for a in model.state]


CASES = [
    ("float64", np.array([1.0, 0.5, -0.2]), 1.7e308),
    ("float64", np.array([0.0, 0.0, 5e152]), 1.0),  # along the unexcited coordinate
    ("float64", np.array([1.0, 0.0, -5e152]), 0.0),
    ("float32", np.array([1.0, 0.5, -0.2]), 1e39),
    ("float32", np.array([1.0, 0.5, -0.2]), -3e38),
]


@pytest.mark.parametrize(("dtype", "x", "y"), CASES)
def test_an_overflowing_update_is_refused_and_the_state_kept(dtype, x, y):
    for how in ("one", "many"):
        model = _trained(dtype)
        before = _learnt(model)
        # A target beyond 1e100 is refused before its update is formed.
        expected = "beyond the model's range" if abs(y) > 1e100 else "not finite"
        with pytest.raises(ValueError, match=expected):
            if how == "one":
                model.learn_one(x.astype(dtype), y)
            else:
                model.learn_many(np.vstack([x, x]).astype(dtype), [y, y])
        for a, b in zip(before, _learnt(model), strict=True):
            np.testing.assert_array_equal(a, b)
        assert np.isfinite(model.predict_one(np.ones(3, dtype=dtype)))


@pytest.mark.parametrize(("dtype", "x", "y"), CASES)
def test_skip_counts_it_and_learning_goes_on(dtype, x, y):
    model = _trained(dtype, on_invalid="skip")
    model.learn_many(np.vstack([x, np.ones(3)]).astype(dtype), [y, 3.0])
    assert model.n_skipped_ == 1 and model.n_seen_ == 3
    assert all(np.all(np.isfinite(np.asarray(a, dtype=np.float64))) for a in model.state)


def test_the_models_built_on_dfop_refuse_it_too():
    # A small input, so that the gain c = 1 / (lambda + x^T P x) is about 1 / lambda
    # and the correction (y - yhat) c passes the largest double.
    fleet = Fleet(2, 3, on_invalid="skip")
    X = np.full((2, 2, 3), 1e-3)
    fleet.learn_many(X, np.array([[1.79e308, 1.0], [1.0, 2.0]]))
    assert fleet.state.counts[0, 1] == 1
    assert np.all(np.isfinite(fleet.state.w)) and np.all(np.isfinite(fleet.state.P))
    sparse = SparseDFOP(20, 5, on_invalid="skip")
    sparse.learn_many(np.full((2, 20), 1e-4), [1.79e308, 1.0])
    assert sparse.n_skipped_ == 1 and np.all(np.isfinite(sparse.state.P))


def _fresh_after_huge_target(how, on_invalid="raise"):
    """A fresh float64 DFOP fed y = 1.7e308 on a small input (||x|| ~ 0.02): the
    update passes its own overflow check, but the weights it leaves (~1e308)
    made 5 of 20 later predictions on ordinary rows inf."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 4))
    model = DFOP(4, on_invalid=on_invalid)
    x = 0.01 * X[0]
    if how == "one":
        model.learn_one(x, 1.7e308)
    else:
        model.learn_many(x[None, :], [1.7e308])
    return model, X


@pytest.mark.parametrize("how", ["one", "many"])
def test_a_target_beyond_the_range_is_refused_and_predictions_stay_finite(how):
    with pytest.raises(ValueError, match=r"target y=1\.7e\+?308 beyond the model's range "
                                         r"\|y\| <= 1e\+100.*state is unchanged"):
        _fresh_after_huge_target(how)
    model, X = _fresh_after_huge_target(how, on_invalid="skip")
    assert model.n_skipped_ == 1 and model.n_seen_ == 0
    fresh = DFOP(4)
    np.testing.assert_array_equal(model.state.w, fresh.state.w)
    np.testing.assert_array_equal(model.state.P, fresh.state.P)
    assert np.all(np.isfinite(model.predict_many(X)))


def test_targets_within_the_range_are_learnt_and_predictions_stay_finite():
    """The rule's edge: |y| = 1e100 is learnt, the next double above is not, and
    a stream of targets up to 1e100 on inputs down to 1e-3 keeps every
    prediction on ordinary rows finite (learn_one == learn_many)."""
    model = DFOP(3, on_invalid="skip")
    model.learn_one(np.array([0.01, 0.0, 0.0]), 1e100)
    model.learn_one(np.array([0.01, 0.0, 0.0]), -np.nextafter(1e100, np.inf))
    assert model.n_seen_ == 1 and model.n_skipped_ == 1
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3)) * 10.0 ** rng.integers(-3, 1, size=(400, 1))
    y = rng.choice([1e100, -1e100, 1e50, 1.0], size=400)
    one, many = DFOP(3, 0.1), DFOP(3, 0.1)
    yhat_one = np.array([one.learn_one(x, t) for x, t in zip(X, y, strict=True)])
    np.testing.assert_array_equal(yhat_one, many.learn_many(X, y))
    assert np.all(np.isfinite(yhat_one))
    assert np.all(np.isfinite(many.predict_many(rng.normal(size=(100, 3)))))


def test_messages_name_the_true_cause():
    """A bad label was blamed on float32 precision, a float32 overflow was shown as 'inf'."""
    from edgereg import NORMAClassifier, SelectiveSampler

    for model in (DFOP(3, task="classification"), SelectiveSampler(3), NORMAClassifier(3)):
        with pytest.raises(ValueError, match=r"y=2.0 is not a class label") as info:
            model.learn_many(np.ones((2, 3)), [1.0, 2.0])
        assert "float32" not in str(info.value)
    with pytest.raises(ValueError, match="beyond float32's range"):
        DFOP(3, dtype="float32").learn_one(np.array([1e39, 0.0, 0.0]), 1.0)


def test_array_conversion_passes_a_ready_array_through_and_overflows_silently():
    """An array already of the dtype and C-contiguous is used as it is (no
    conversion, and no ``np.errstate``, which cost Fleet's learn_one ~1 us a
    call); anything else is converted, and a float64 beyond float32's range
    becomes inf without a RuntimeWarning (the model reports it by name)."""
    import warnings

    from edgereg._validate import _as_numeric_array

    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    ready = np.ones((3, 2))
    assert _as_numeric_array(ready, "X", f64) is ready
    strided = np.ones((3, 4))[:, ::2]
    out = _as_numeric_array(strided, "X", f64)
    assert out.flags.c_contiguous and np.array_equal(out, strided)
    masked = np.ma.masked_array(np.ones(3))
    assert type(_as_numeric_array(masked, "x", f64)) is np.ndarray
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _as_numeric_array(np.array([1e39, -1e39, 1.0]), "x", f32)
    assert out.dtype == f32 and np.isinf(out[:2]).all() and out[2] == 1.0
    assert _as_numeric_array([1, 2], "x", np.float64).dtype == f64  # a type, not a dtype


def test_an_array_where_one_target_is_expected_is_a_type_error_naming_y():
    """NORMAClassifier answered numpy's 'truth value of an array is ambiguous'."""
    from edgereg import RLS, NORMAClassifier, NORMANovelty, NORMARegressor, SelectiveSampler

    models = [DFOP(3), DFOP(3, task="classification"), RLS(3), SparseDFOP(6, 3),
              SparseDFOP(6, 3, task="classification"), NORMARegressor(3), NORMAClassifier(3),
              SelectiveSampler(3)]
    for model in models:
        before = {k: a.copy() for k, a in model.state._asdict().items()}
        with pytest.raises((TypeError, ValueError), match=r"y") as info:
            model.learn_one(np.ones(model.n_features), np.array([1.0, 2.0]))
        assert "ambiguous" not in str(info.value), type(model).__name__
        for k, a in before.items():
            np.testing.assert_array_equal(a, getattr(model.state, k))
    assert NORMANovelty(3).learn_one(np.ones(3)) is not None
