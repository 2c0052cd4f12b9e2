"""edgereg.sklearn: scikit-learn's own estimator checks, plus what they do not cover."""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")

import scipy.sparse as sp  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.utils.estimator_checks import (  # noqa: E402
    check_estimator,
    check_outliers_fit_predict,
    check_outliers_train,
    check_regressors_train,
    parametrize_with_checks,
)

import edgereg  # noqa: E402
import edgereg.sklearn as S  # noqa: E402

ESTIMATORS = [cls() for cls in S._ALL]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=S.expected_failed_checks)
def test_sklearn_checks(estimator, check):
    check(estimator)


# ------------------------------------------------------- the expected failures
@pytest.mark.parametrize("name", sorted(S.EXPECTED_FAILED_CHECKS))
def test_expected_failures_are_exactly_those_listed(name):
    """Minimal list: without it, exactly the listed checks fail (each with a reason)."""
    est = getattr(S, name)()
    results = check_estimator(est, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    listed = S.EXPECTED_FAILED_CHECKS[name]
    assert failed == set(listed)
    assert all(len(reason) > 40 for reason in listed.values())


def test_expected_failures_pass_with_the_parameters_given_in_the_reason():
    check_regressors_train("NORMARegressor", S.NORMARegressor(gamma=0.1, learning_rate=0.3))
    check_outliers_train("NORMANovelty", S.NORMANovelty(nu=0.3))
    check_outliers_fit_predict("NORMANovelty", S.NORMANovelty(nu=0.3))


def test_no_expected_failure_for_unknown_estimators():
    assert set(S.EXPECTED_FAILED_CHECKS) <= {c.__name__ for c in S._ALL}


# ----------------------------------------------------------------- parameters
_SET_BY_ADAPTER = {"self", "n_features", "task", "n_outputs"}


@pytest.mark.parametrize("cls", S._ALL, ids=lambda c: c.__name__)
def test_parameters_mirror_the_model(cls):
    """Every model hyper-parameter is exposed, with the model's default."""
    model_sig = inspect.signature(getattr(edgereg, cls._model_name).__init__).parameters
    est_sig = inspect.signature(cls.__init__).parameters
    expected = {k: p.default for k, p in model_sig.items() if k not in _SET_BY_ADAPTER}
    got = {k: p.default for k, p in est_sig.items() if k != "self"}
    assert got == expected


def test_model_built_with_the_parameters_and_n_features():
    est = S.DFOPClassifier(forgetting=0.05, p0=10.0).fit(np.eye(3), [0, 1, 0])
    assert est.model_.get_params() == {
        "n_features": 3, "forgetting": 0.05, "task": "classification", "p0": 10.0,
        "keep_prior": True, "dtype": "float64", "arithmetic": "auto", "on_invalid": "raise",
        "coverage": None, "missing": "reject",
    }
    assert est.n_features_in_ == 3
    with pytest.raises(ValueError, match="forgetting"):
        S.DFOPRegressor(forgetting=2.0).fit(np.eye(3), [0.0, 1.0, 2.0])


# ----------------------------------------------------------------- behaviour
def _blobs(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + np.where(y[:, None] == 1, 1.5, -1.5)
    return X, y


def test_fit_equals_native_learn_many_bit_for_bit():
    X, y = _blobs()
    est = S.DFOPClassifier(forgetting=0.02).fit(X, y)
    native = edgereg.DFOP(4, 0.02, task="classification")
    native.learn_many(X, np.where(y == 1, 1.0, -1.0))
    np.testing.assert_array_equal(est.coef_, native.coef_)
    np.testing.assert_array_equal(est.decision_function(X), native.decision_function(X))


def test_string_labels_map_to_signs_and_back():
    X, y = _blobs()
    labels = np.array(["down", "up"])[y]
    est = S.NORMAClassifier(gamma=0.2).fit(X, labels)
    assert est.classes_.tolist() == ["down", "up"]
    pred = est.predict(X)
    assert set(pred) <= {"down", "up"}
    np.testing.assert_array_equal(pred == "up", est.decision_function(X) >= 0)
    assert est.score(X, labels) > 0.9


def test_more_than_two_classes_is_a_clear_error():
    X = np.random.default_rng(0).normal(size=(9, 2))
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        S.DFOPClassifier().fit(X, [0, 1, 2] * 3)
    est = S.DFOPClassifier().partial_fit(X, [0, 1, 0] * 3, classes=[0, 1])
    with pytest.raises(ValueError, match=r"labels \[2\] not in classes_"):
        est.partial_fit(X, [0, 1, 2] * 3)


def test_partial_fit_in_chunks_equals_fit():
    X, y = _blobs(300)
    full = S.DFOPClassifier().fit(X, y)
    est = S.DFOPClassifier()
    with pytest.raises(ValueError, match="classes must be passed"):
        est.partial_fit(X[:10], y[:10])
    for lo in range(0, 300, 70):
        est.partial_fit(X[lo : lo + 70], y[lo : lo + 70], classes=[0, 1] if lo == 0 else None)
    np.testing.assert_array_equal(est.coef_, full.coef_)
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y, classes=[1, 2])


def test_regressor_partial_fit_equals_fit():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = X @ [1.0, -2.0, 0.5]
    full = S.RLSRegressor(p0=1e6).fit(X, y)
    est = S.RLSRegressor(p0=1e6).partial_fit(X[:50], y[:50]).partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(est.coef_, full.coef_)
    np.testing.assert_allclose(full.coef_, [1.0, -2.0, 0.5], atol=1e-6)
    assert full.score(X, y) > 0.999999


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_dfop_sparse_equals_dense(fmt):
    rng = np.random.default_rng(2)
    Xd = sp.random(150, 40, density=0.1, random_state=3, format="csr").toarray()
    y = Xd @ rng.normal(size=40)
    dense = S.SparseDFOPRegressor(n_components=8).fit(Xd, y)
    sparse = S.SparseDFOPRegressor(n_components=8).fit(sp.csr_matrix(Xd).asformat(fmt), y)
    np.testing.assert_array_equal(dense.coef_, sparse.coef_)
    np.testing.assert_array_equal(dense.predict(Xd), sparse.predict(sp.csr_matrix(Xd)))
    with pytest.raises(TypeError, match="[Ss]parse"):
        S.DFOPRegressor().fit(sp.csr_matrix(Xd), y)


def test_outlier_detector_conventions():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 2))
    est = S.NORMANovelty(nu=0.2, gamma=0.5).fit(X)
    far = np.array([[8.0, 8.0], [0.0, 0.0]])
    assert est.predict(far).tolist() == [-1, 1]
    np.testing.assert_allclose(est.decision_function(far), est.score_samples(far) - est.offset_)
    assert est.score_samples(far)[0] < est.score_samples(far)[1]
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("cls", [S.MORESRegressor, S.SOMORRegressor, S.PARegressor])
def test_multi_output_shapes(cls):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 4))
    W = rng.normal(size=(4, 3))
    Y = X @ W
    est = cls().fit(X, Y)
    assert est.predict(X).shape == (120, 3)
    assert est.coef_.shape == (4, 3) and est.intercept_.shape == (3,)
    assert est.n_outputs_ == 3
    one = cls().fit(X, Y[:, 0])
    assert one.predict(X).shape == (120,) and one.coef_.shape == (4,)
    with pytest.raises(ValueError, match="n_outputs_"):
        est.partial_fit(X, Y[:, :2])


def test_clone_and_pickle_keep_the_model():
    import pickle

    X, y = _blobs()
    est = S.SelectiveSamplerClassifier(window0=5, window_max=50).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    fresh = clone(est)
    assert not hasattr(fresh, "model_") and fresh.get_params() == est.get_params()


# ------------------------------------------------------------------ isolation
def test_importing_edgereg_imports_neither_sklearn_nor_river():
    code = (
        "import edgereg, sys; "
        "assert 'sklearn' not in sys.modules and 'river' not in sys.modules, "
        "[m for m in sys.modules if m.split('.')[0] in ('sklearn', 'river')]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_predict_interval_is_the_models_for_dfop_sparse_dfop_and_mores():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    Y = X @ rng.normal(size=(4, 2)) + 0.1 * rng.normal(size=(300, 2))
    for est, native in [
        (S.DFOPRegressor(forgetting=0.02, coverage=0.9), edgereg.DFOP(4, 0.02, coverage=0.9)),
        (S.SparseDFOPRegressor(n_components=3, coverage=0.8),
         edgereg.SparseDFOP(4, n_components=3, coverage=0.8)),
    ]:
        est.fit(X[:200], Y[:200, 0])
        native.learn_many(X[:200], Y[:200, 0])
        bands = est.predict_interval(X[200:])
        assert bands.shape == (100, 3)
        np.testing.assert_array_equal(bands, native.predict_interval_many(X[200:]))
        np.testing.assert_array_equal(bands[:, 1], est.predict(X[200:]))
    sparse = S.SparseDFOPRegressor(n_components=3, coverage=0.8).fit(sp.csr_matrix(X), Y[:, 0])
    np.testing.assert_array_equal(sparse.predict_interval(sp.csr_matrix(X[:5])),
                                  sparse.predict_interval(X[:5]))
    est = S.MORESRegressor(coverage=0.9).fit(X[:200], Y[:200])
    native = edgereg.MORES(4, 2, coverage=0.9)
    native.learn_many(X[:200], Y[:200])
    bands = est.predict_interval(X[200:])
    assert bands.shape == (100, 2, 3)
    np.testing.assert_array_equal(bands, native.predict_interval_many(X[200:]))
    one = S.MORESRegressor(coverage=0.9).fit(X[:200], Y[:200, 0])  # a 1-D y: (n, 3)
    assert one.predict_interval(X[200:]).shape == (100, 3)
    np.testing.assert_array_equal(one.predict_interval(X[200:])[:, 1], one.predict(X[200:]))
    with pytest.raises(ValueError, match="without intervals"):
        S.MORESRegressor().fit(X[:50], Y[:50]).predict_interval(X[:2])
