"""The same contract checked over every public model (river's check_estimator idea).

Models are discovered from ``edgereg.__all__`` and built from each of their
``_unit_test_params()``; the stream suits ``model._task``. A new model passes
these without any change here.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from contract_data import (
    assert_same_state,
    learn_many,
    learn_one,
    make_stream,
    model_cases,
    predict_many,
    row,
    seen,
    skipped,
    state_arrays,
)

from edgereg import Fleet, StateFileError, load

CASES = model_cases()
IDS = [c[0] for c in CASES]


@pytest.fixture(params=CASES, ids=IDS)
def case(request):
    _, cls, params = request.param
    return cls, params


def _invalid_value(model):
    """NaN, the invalid value, except for a model that imputes NaN inputs (its
    missing="impute" is tested in test_missing_inputs.py): inf, invalid for all."""
    return np.inf if getattr(model, "missing", "reject") == "impute" else np.nan


def _prediction_equal(a, b):
    np.testing.assert_array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


def test_get_params_roundtrip(case):
    cls, params = case
    model = cls(**params)
    again = cls(**model.get_params())
    assert again.get_params() == model.get_params()
    assert type(model).__name__ in repr(model)


def test_learn_one_loop_equals_learn_many(case):
    cls, params = case
    a, b = cls(**params), cls(**params)
    X, Y = make_stream(a, 60)
    loop = np.array([learn_one(a, X[t], row(Y, t)) for t in range(len(X))])
    block = learn_many(b, X, Y)
    _prediction_equal(loop, block)
    assert_same_state(state_arrays(a), state_arrays(b))
    assert seen(a) == seen(b) == len(X)


def test_a_model_is_freed_by_its_last_reference(case, tmp_path):
    """No reference cycle through a model (fresh, after learn_one, after a
    load): a loop that makes models on a device frees each one at once, not
    at the cyclic collector's next pass. (A bound method stored in the
    instance, as DFOP's learn_one once did, fails this.)"""
    import gc
    import weakref

    cls, params = case
    X, Y = make_stream(cls(**params), 3)
    path = tmp_path / "m.npz"
    cls(**params).save(path)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for stage in ("fresh", "learn_one", "load"):
            model = cls(**params)
            if stage == "learn_one":
                learn_one(model, X[0], row(Y, 0))
                learn_one(model, X[1], row(Y, 1))
            elif stage == "load":
                model = load(path)
                learn_one(model, X[0], row(Y, 0))
            ref = weakref.ref(model)
            del model
            assert ref() is None, f"{cls.__name__} ({stage}) is kept alive by a reference cycle"
    finally:
        if enabled:
            gc.enable()


def test_prequential_prediction_is_made_before_learning(case):
    cls, params = case
    model = cls(**params)
    X, Y = make_stream(model, 30)
    learn_many(model, X[:20], None if Y is None else Y[:20])
    expected = model.predict_one(X[20])
    got = learn_one(model, X[20], row(Y, 20))
    _prediction_equal(got, expected)


def test_predict_many_equals_predict_one_and_does_not_learn(case):
    cls, params = case
    model = cls(**params)
    X, Y = make_stream(model, 40)
    learn_many(model, X[:30], None if Y is None else Y[:30])
    before = state_arrays(model)
    many = predict_many(model, X[30:])
    ones = np.array([model.predict_one(x) for x in X[30:]])
    _prediction_equal(many, ones)
    assert_same_state(before, state_arrays(model))


def test_inputs_are_not_mutated(case):
    cls, params = case
    model = cls(**params)
    X, Y = make_stream(model, 25)
    X0 = X.copy()
    Y0 = None if Y is None else Y.copy()
    learn_many(model, X, Y)
    learn_one(model, X[0], row(Y, 0))
    predict_many(model, X)
    np.testing.assert_array_equal(X, X0)
    if Y is not None:
        np.testing.assert_array_equal(Y, Y0)


def _read_only_signatures() -> set:
    """Every compiled (kernel, signature) in this process with a read-only array."""
    import sys

    from numba import types
    from numba.core.registry import CPUDispatcher

    found = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("edgereg._kernels"):
            continue
        for kernel in vars(module).values():
            if isinstance(kernel, CPUDispatcher):
                for sig in kernel.signatures:
                    if any(isinstance(t, types.Array) and not t.mutable for t in sig):
                        found.add((kernel.__qualname__, sig))
    return found


def test_read_only_inputs_learn_alike_and_compile_nothing_new(case):
    """A read-only input (a memory map, pandas' copy-on-write ``to_numpy()``)
    learns as its writeable copy does and reaches the kernels as a writeable
    array: numba would otherwise compile each kernel again for it."""
    cls, params = case
    a, b = cls(**params), cls(**params)
    X, Y = make_stream(a, 30)
    Xr = X.copy()
    Xr.flags.writeable = False
    Yr = None
    if Y is not None:
        Yr = Y.copy()
        Yr.flags.writeable = False
    before = _read_only_signatures()
    _prediction_equal(learn_many(a, Xr[:20], None if Yr is None else Yr[:20]),
                      learn_many(b, X[:20], None if Y is None else Y[:20]))
    for t in range(20, 30):
        _prediction_equal(learn_one(a, Xr[t], row(Yr, t)), learn_one(b, X[t], row(Y, t)))
    _prediction_equal(predict_many(a, Xr), predict_many(b, X))
    _prediction_equal(a.predict_one(Xr[0]), b.predict_one(X[0]))
    assert_same_state(state_arrays(a), state_arrays(b))
    assert _read_only_signatures() == before


def test_save_load_resumes_bit_exactly(case, tmp_path):
    cls, params = case
    a = cls(**params)
    X, Y = make_stream(a, 80)
    learn_many(a, X[:37], None if Y is None else Y[:37])
    path = tmp_path / "model.npz"
    a.save(path)
    b = load(path)
    assert type(b) is type(a) and b.get_params() == a.get_params()
    assert_same_state(state_arrays(a), state_arrays(b))
    rest_a = learn_many(a, X[37:], None if Y is None else Y[37:])
    rest_b = learn_many(b, X[37:], None if Y is None else Y[37:])
    _prediction_equal(rest_a, rest_b)
    assert_same_state(state_arrays(a), state_arrays(b))
    assert not [p for p in tmp_path.iterdir() if p.name != "model.npz"], "temp file left behind"


def test_pickle_resumes_bit_exactly(case):
    cls, params = case
    a = cls(**params)
    X, Y = make_stream(a, 50)
    learn_many(a, X[:25], None if Y is None else Y[:25])
    b = pickle.loads(pickle.dumps(a))
    _prediction_equal(
        learn_many(a, X[25:], None if Y is None else Y[25:]),
        learn_many(b, X[25:], None if Y is None else Y[25:]),
    )
    assert_same_state(state_arrays(a), state_arrays(b))


def test_truncated_and_foreign_files_are_rejected(case, tmp_path):
    cls, params = case
    model = cls(**params)
    X, Y = make_stream(model, 10)
    learn_many(model, X, Y)
    path = tmp_path / "m.npz"
    model.save(path)
    data = path.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(StateFileError):
        load(tmp_path / "trunc.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a state file at all")
    with pytest.raises(StateFileError):
        load(tmp_path / "junk.npz")
    np.savez(tmp_path / "foreign.npz", a=np.zeros(3))
    with pytest.raises(StateFileError):
        load(tmp_path / "foreign.npz")


def test_reset_returns_to_fresh_state(case):
    cls, params = case
    model = cls(**params)
    X, Y = make_stream(model, 20)
    learn_many(model, X, Y)
    model.reset()
    assert_same_state(state_arrays(model), state_arrays(cls(**params)))


def test_state_is_read_only(case):
    cls, params = case
    model = cls(**params)
    first = model.state[0]
    with pytest.raises(ValueError):
        first[...] = 1.0


def test_nan_in_x_raises_and_leaves_state_unchanged(case):
    cls, params = case
    model = cls(**params)
    X, Y = make_stream(model, 20)
    learn_many(model, X[:10], None if Y is None else Y[:10])
    before = state_arrays(model)
    x = X[10].copy()
    x[..., 0] = _invalid_value(model)  # for a Fleet, in every member's sample
    with pytest.raises(ValueError, match="non-finite"):
        learn_one(model, x, row(Y, 10))
    assert_same_state(before, state_arrays(model))
    x[..., 0] = np.inf
    with pytest.raises(ValueError, match="non-finite"):
        learn_one(model, x, row(Y, 10))
    assert_same_state(before, state_arrays(model))
    # Nothing of the rejected sample is visible in the state (it held the
    # kernels' scratch, where a NaN input was left behind).
    for k, v in model.state._asdict().items():
        assert np.all(np.isfinite(v)), f"state field {k!r} holds NaN or inf"


def test_nan_in_y_raises_and_leaves_state_unchanged(case):
    cls, params = case
    model = cls(**params)
    X, Y = make_stream(model, 20)
    if Y is None:
        pytest.skip("unsupervised model: no target")
    learn_many(model, X[:10], Y[:10])
    before = state_arrays(model)
    y = np.array(Y[10], dtype=np.float64, copy=True)
    y[...] = _invalid_value(model)  # a NaN target is predict-only when imputing
    with pytest.raises(ValueError):
        learn_one(model, X[10], y if y.ndim else float(y))
    assert_same_state(before, state_arrays(model))


def test_bad_row_in_block_learns_rows_before_only(case):
    cls, params = case
    a, b = cls(**params), cls(**params)
    X, Y = make_stream(a, 30)
    Xbad = X.copy()
    Xbad[17, ..., -1] = _invalid_value(a)
    with pytest.raises(ValueError, match="row 17"):
        learn_many(a, Xbad, Y)
    learn_many(b, X[:17], None if Y is None else Y[:17])
    assert_same_state(state_arrays(a), state_arrays(b))


def test_skip_policy_skips_and_counts(case):
    cls, params = case
    a = cls(**{**params, "on_invalid": "skip"})
    b = cls(**params)
    X, Y = make_stream(a, 40)
    Xbad = X.copy()
    bad = [3, 17, 18, 39]
    Xbad[bad, ..., 0] = _invalid_value(a)
    learn_many(a, Xbad, Y)
    keep = np.setdiff1d(np.arange(40), bad)
    learn_many(b, X[keep], None if Y is None else Y[keep])
    assert skipped(a) == len(bad)
    assert seen(a) == seen(b) == len(keep)
    assert_same_state(
        {k: v for k, v in state_arrays(a).items() if k != "counts"},
        {k: v for k, v in state_arrays(b).items() if k != "counts"},
    )
    learn_one(a, Xbad[3], row(Y, 3))  # skipped, no exception
    assert skipped(a) == len(bad) + 1


def test_wrong_shape_and_dtype_are_explained(case):
    cls, params = case
    model = cls(**params)
    X, Y = make_stream(model, 5)
    before = state_arrays(model)
    fleet = isinstance(model, Fleet)  # its sample is (n_models, n_features)
    one_shape = rf"n_features={model.n_features}\)" if fleet else rf"\({model.n_features},\)"
    with pytest.raises(ValueError, match=one_shape):
        learn_one(model, X[0][:-1], row(Y, 0))
    with pytest.raises(ValueError, match="3-D" if fleet else "2-D"):
        learn_many(model, X[0], Y)
    with pytest.raises(TypeError, match="real numbers"):
        model.predict_one(np.full(X[0].shape, "a"))
    if Y is not None:  # mismatched lengths (a novelty model has no target)
        with pytest.raises(ValueError):
            learn_many(model, X[:4], Y[:3])
    assert_same_state(before, state_arrays(model))


@pytest.mark.slow  # compiles every model's float32 kernels (tests/conftest.py)
def test_float32_tracks_float64(case):
    cls, params = case
    if params.get("dtype") == "float32":
        pytest.skip("already a float32 case")
    a = cls(**{**params, "dtype": "float32"})
    b = cls(**params)
    X, Y = make_stream(a, 200)
    pa = learn_many(a, X, Y)
    pb = learn_many(b, X, Y)
    # The learnt arrays are float32; DFOP's accumulator of forgotten mass (one
    # number, one per member of a Fleet or a DFOPBank) and a DFOPBank's
    # aggregation (K weights, K slow losses, 3 target statistics) and a SelectiveSampler's
    # switch test and a DriftAlarm's test (statistical tests: their sums of
    # log-ratios) and a prediction interval's bookkeeping (noise level,
    # quantile, counts) stay float64.
    float64_fields = ("forgotten", "weights", "losses", "scale", "switch_test", "drift",
                      "interval")
    arrays = [v for k, v in a.state._asdict().items()
              if v.dtype.kind == "f" and v.size > 1 and k not in float64_fields]
    assert arrays and all(v.dtype == np.float32 for v in arrays)
    assert np.all(np.isfinite(pa))
    err = np.abs(pa - pb)[-50:]
    scale = np.abs(pb[-50:]).mean() + 1e-12
    assert err.mean() / scale < 1e-2


def test_an_unknown_label_is_an_invalid_sample_alike_in_learn_one_and_learn_many(case):
    """One label policy for every classifier (``_validate.label_sign``).

    Label 2 is neither of {-1, +1} nor of {0, 1}: an invalid sample, which
    ``on_invalid`` decides the same way one sample at a time and in a block
    (DFOP raised in learn_one and skipped in learn_many).
    """
    cls, params = case
    probe = cls(**params)
    if probe._task != "classification":
        pytest.skip("not a classifier")
    X, Y = make_stream(probe, 30)
    Ybad = np.array(Y, dtype=np.float64)
    Ybad[[4, 21]] = 2.0
    a = cls(**{**params, "on_invalid": "skip"})
    b = cls(**{**params, "on_invalid": "skip"})
    loop = np.array([learn_one(a, X[t], Ybad[t]) for t in range(len(X))])
    block = learn_many(b, X, Ybad)
    _prediction_equal(loop, block)
    assert_same_state(state_arrays(a), state_arrays(b))
    assert skipped(a) == skipped(b) == 2
    assert seen(a) == seen(b) == len(X) - 2
    # on_invalid="raise": both refuse at the bad label, with the same message,
    # and leave the state as after the rows before it.
    c, d = cls(**params), cls(**params)
    learn_many(c, X[:4], Ybad[:4])
    learn_many(d, X[:4], Ybad[:4])
    before = state_arrays(c)
    with pytest.raises(ValueError, match=r"y=2.0 is not a class label") as one:
        learn_one(c, X[4], Ybad[4])
    with pytest.raises(ValueError, match=r"y=2.0 is not a class label") as many:
        learn_many(d, X[4:], Ybad[4:])
    assert "row 0" in str(many.value)
    assert "float32" not in str(one.value)
    assert_same_state(before, state_arrays(c))
    assert_same_state(before, state_arrays(d))
