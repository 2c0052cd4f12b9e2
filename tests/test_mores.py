"""MORES, SOMOR and PA-I/II against the docs/algorithms/mores.md objective and their references."""

from __future__ import annotations

import pickle

import numba
import numpy as np
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

import edgereg.mores
from edgereg import MORES, SOMOR, PARegressor


def _stream(n, d, m, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, m))
    return X, X @ W + 0.5 + noise * rng.normal(size=(n, m))


def _spd(rng, m, low=0.2):
    """A random SPD matrix with eigenvalues in [low, 1]."""
    q, _ = np.linalg.qr(rng.normal(size=(m, m)))
    M = q @ np.diag(rng.uniform(low, 1.0, size=m)) @ q.T
    return (M + M.T) / 2


def _rel(a, scale):
    return np.abs(a).max() / scale


# ------------------------------------------------------------------ one step
def _random_state_step(seed, d=5, m=3, C=2.0, mu=0.9, gamma=0.7, tau=3.0, dirty=True):
    """Put a MORES model in a random state, learn one sample, return before/after.

    ``dirty``: fill every scratch (workspace) array with garbage first; the step
    must not depend on what a previous step left there.
    """
    rng = np.random.default_rng(seed)
    model = MORES(d, m, C=C, decay=mu, gamma=gamma, tau=tau, fit_intercept=False)
    st_ = model._state
    Xp = rng.normal(size=(3 * d, d))
    st_.M[...] = Xp.T @ Xp
    st_.N[...] = rng.normal(size=(d, m))
    Yp = rng.normal(size=(3 * d, m))
    st_.Q[...] = Yp.T @ Yp
    st_.W[...] = rng.normal(size=(d, m))
    S0, Om0 = _spd(rng, m), _spd(rng, m)
    st_.S[...], st_.S_inv[...] = S0, np.linalg.inv(S0)
    st_.Omega[...], st_.Omega_inv[...] = Om0, np.linalg.inv(Om0)
    if dirty:
        for name, v in model._work._asdict().items():
            if name not in ("hyper", "codes"):  # scratch, not the constants
                v[...] = rng.normal(size=v.shape) * 1e3
    st_.counts[0] = 10
    before = {k: np.array(v, copy=True) for k, v in st_._asdict().items()}
    x, y = rng.normal(size=d), rng.normal(size=m)
    pred = model.learn_one(x, y)
    after = {k: np.array(v, copy=True) for k, v in st_._asdict().items()}
    M = mu * before["M"] + np.outer(x, x)
    N = mu * before["N"] + np.outer(x, y)
    Q = mu * before["Q"] + np.outer(y, y)
    return before, after, (M, N, Q), (x, y, pred), (C, gamma, tau)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dirty", [True, False])
def test_each_substep_zeroes_its_gradient(seed, dirty):
    b, a, (M, N, Q), (x, y, pred), (C, gamma, tau) = _random_state_step(seed, dirty=dirty)
    np.testing.assert_allclose(pred, b["W"].T @ x, rtol=1e-14)
    np.testing.assert_allclose(a["M"], M, rtol=1e-14)
    W, S, Om = a["W"], a["S"], a["Omega"]
    W0, S0, Om0 = b["W"], b["S"], b["Omega"]
    # W-step: gradient in W at (W_t, Omega_{t-1}, S_{t-1})
    gW, _, _ = ref.mores_gradients(W, Om0, S0, W0, Om0, S0, M, N, Q, C, gamma, tau)
    scale_w = np.abs(W0 @ Om0).max() + C * np.abs(N @ S0).max() + C * np.abs(M @ W @ S0).max()
    assert _rel(gW, scale_w) < 1e-8
    # S-step: gradient in S at (W_t, S_t) with S_{t-1}
    _, gS, _ = ref.mores_gradients(W, Om0, S, W0, Om0, S0, M, N, Q, C, gamma, tau)
    scale_s = (np.abs(ref.mores_E(W, M, N, Q)).max() * C
               + (gamma + tau) * np.abs(np.linalg.inv(S)).max())
    assert _rel(gS, scale_s) < 1e-8
    # Omega-step: gradient in Omega at (W_t, Omega_t) with W_{t-1}, Omega_{t-1}
    _, _, gO = ref.mores_gradients(W, Om, S, W0, Om0, S0, M, N, Q, C, gamma, tau)
    scale_o = np.abs((W - W0).T @ (W - W0)).max() + (gamma + tau) * np.abs(np.linalg.inv(Om)).max()
    assert _rel(gO, scale_o) < 1e-8


@pytest.mark.parametrize("seed", range(3))
def test_w_step_equals_kronecker_solve(seed):
    b, a, (M, N, Q), _, (C, _, _) = _random_state_step(seed, d=4, m=3)
    W_kron = ref.mores_w_step_kron(b["W"], b["Omega"], b["S"], M, N, C)
    np.testing.assert_allclose(a["W"], W_kron, rtol=1e-9, atol=1e-10 * np.abs(W_kron).max())


def test_objective_decreases_along_the_sweep():
    """Each sub-step minimises the objective in its variable (literal evaluation)."""
    b, a, (M, N, Q), _, (C, gamma, tau) = _random_state_step(7)
    args = (b["W"], b["Omega"], b["S"], M, N, Q, C, gamma, tau)
    f0 = ref.mores_objective(b["W"], b["Omega"], b["S"], *args)
    f1 = ref.mores_objective(a["W"], b["Omega"], b["S"], *args)
    f2 = ref.mores_objective(a["W"], b["Omega"], a["S"], *args)
    f3 = ref.mores_objective(a["W"], a["Omega"], a["S"], *args)
    assert f0 > f1 > f2 > f3
    rng = np.random.default_rng(0)
    for _ in range(5):  # a perturbed W is never better than the W-step's
        Wp = a["W"] + 1e-3 * rng.normal(size=a["W"].shape)
        assert ref.mores_objective(Wp, b["Omega"], b["S"], *args) > f1


# --------------------------------------------------------- whole stream
@pytest.mark.parametrize(
    "params",
    [
        {"C": 1.0, "decay": 0.99},
        {"C": 5.0, "decay": 1.0, "fit_intercept": False},
        {"C": 0.5, "decay": 0.0, "gamma": 0.0, "tau": 2.0},
        {"C": 3.0, "decay": 0.7, "gamma": 5.0, "tau": 1.0},
    ],
)
def test_matches_full_reference_step_by_step(params):
    d, m, n = 4, 3, 80
    X, Y = _stream(n, d, m, seed=1)
    model = MORES(d, m, **params)
    mu = params["decay"]
    refs = ref.mores_reference(
        X, Y, C=params["C"], mu=mu, gamma=params.get("gamma", 1.0),
        tau=params.get("tau", 100.0), fit_intercept=params.get("fit_intercept", True),
    )
    for t in range(n):
        pred = model.learn_one(X[t], Y[t])
        r = refs[t]
        for got, want, name in [
            (pred, r["yhat"], "yhat"),
            (model.state.W, r["W"], "W"),
            (model.state.S, r["S"], "S"),
            (model.state.Omega, r["Omega"], "Omega"),
            (model.state.M, r["M"], "M"),
            (model.state.N, r["N"], "N"),
            (model.state.Q, r["Q"], "Q"),
        ]:
            scale = np.abs(want).max() + 1e-300
            assert np.abs(got - want).max() <= 1e-8 * scale, (t, name)


def test_statistics_equal_weighted_sums_and_0_pow_0():
    X, Y = _stream(30, 3, 2, seed=2)
    for mu in (0.0, 0.5, 1.0):
        model = MORES(3, 2, decay=mu)
        Xa = ref.mores_augment(X, True)
        for t in range(30):
            model.learn_one(X[t], Y[t])
            M, N, Q = ref.mores_statistics(Xa[: t + 1], Y[: t + 1], mu)
            np.testing.assert_allclose(model.state.M, M, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(model.state.N, N, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(model.state.Q, Q, rtol=1e-12, atol=1e-12)
        if mu == 0.0:  # current sample only
            np.testing.assert_array_equal(model.state.M, np.outer(Xa[-1], Xa[-1]))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    C=st.floats(1e-2, 1e2),
    decay=st.floats(0.0, 1.0),
    gamma=st.floats(0.0, 10.0),
    tau=st.floats(1e-2, 1e3),
    scale=st.floats(1e-2, 1e2),
)
def test_structures_stay_symmetric_with_eigenvalues_in_0_1(seed, C, decay, gamma, tau, scale):
    X, Y = _stream(40, 3, 3, seed=seed % 1000)
    model = MORES(3, 3, C=C, decay=decay, gamma=gamma, tau=tau)
    for t in range(0, 40, 10):
        model.learn_many(X[t : t + 10] * scale, Y[t : t + 10] * scale)
        for A in (model.residual_structure_, model.output_structure_):
            np.testing.assert_array_equal(A, A.T)
            ev = np.linalg.eigvalsh(A)
            assert ev.min() > 0.0 and ev.max() <= 1.0 + 1e-12, ev
        assert np.all(np.isfinite(model.state.W))


def test_w_step_stays_exact_over_a_long_stream():
    """After thousands of steps (large, ill-conditioned M) the W-step is still exact."""
    X, Y = _stream(3001, 6, 2, seed=3)
    C, mu, gamma, tau = 1.0, 0.995, 1.0, 100.0
    model = MORES(6, 2, C=C, decay=mu, gamma=gamma, tau=tau)
    model.learn_many(X[:3000], Y[:3000])
    b = {k: np.array(v, copy=True) for k, v in model.state._asdict().items()}
    model.learn_one(X[3000], Y[3000])
    xa = ref.mores_augment(X[3000:], True)[0]
    M = mu * b["M"] + np.outer(xa, xa)
    N = mu * b["N"] + np.outer(xa, Y[3000])
    Q = mu * b["Q"] + np.outer(Y[3000], Y[3000])
    np.testing.assert_allclose(model.state.M, M, rtol=1e-14)
    W, W0, Om0, S0 = model.state.W, b["W"], b["Omega"], b["S"]
    gW, _, _ = ref.mores_gradients(W, Om0, S0, W0, Om0, S0, M, N, Q, C, gamma, tau)
    scale_w = np.abs(W0 @ Om0).max() + C * np.abs(N @ S0).max() + C * np.abs(M @ W @ S0).max()
    assert _rel(gW, scale_w) < 1e-8
    W_kron = ref.mores_w_step_kron(W0, Om0, S0, M, N, C)
    np.testing.assert_allclose(W, W_kron, rtol=1e-9, atol=1e-10 * np.abs(W_kron).max())


def test_w_step_with_a_rank_deficient_and_a_diagonal_M():
    """M singular (few samples) or already diagonal/tridiagonal: still the exact solve."""
    for n_seen, d in [(1, 5), (2, 6), (3, 4), (2, 1), (3, 2)]:
        X, Y = _stream(n_seen + 1, d, 3, seed=n_seen)
        model = MORES(d, 3, C=3.0, decay=1.0, gamma=0.5, tau=2.0, fit_intercept=False)
        model.learn_many(X[:n_seen], Y[:n_seen])
        b = {k: np.array(v, copy=True) for k, v in model.state._asdict().items()}
        model.learn_one(X[n_seen], Y[n_seen])
        M, N = model.state.M, model.state.N
        W_kron = ref.mores_w_step_kron(b["W"], b["Omega"], b["S"], M, N, 3.0)
        np.testing.assert_allclose(model.state.W, W_kron, rtol=1e-9,
                                   atol=1e-10 * np.abs(W_kron).max())
    # x along the axes: M diagonal (every Householder step is skipped)
    model = MORES(4, 2, C=2.0, decay=0.9, fit_intercept=False)
    X = np.eye(4)[[0, 1, 2, 3, 0, 2]] * np.arange(1.0, 7.0)[:, None]
    Y = np.arange(12.0).reshape(6, 2)
    model.learn_many(X[:5], Y[:5])
    b = {k: np.array(v, copy=True) for k, v in model.state._asdict().items()}
    model.learn_one(X[5], Y[5])
    M, N = model.state.M, model.state.N
    assert np.count_nonzero(M - np.diag(np.diag(M))) == 0
    W_kron = ref.mores_w_step_kron(b["W"], b["Omega"], b["S"], M, N, 2.0)
    np.testing.assert_allclose(model.state.W, W_kron, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("d", "m", "fit_intercept"), [(3, 2, True), (21, 7, True), (1, 1, False)])
def test_state_size_matches_the_documented_memory(d, m, fit_intercept):
    """Docstrings: the learnt state D^2 + 2 D m + 5 m^2 values plus 16 bytes of
    counters, the workspace 2 D^2 + 4 D m + 12 m^2 + 5 D + 2 m values plus the
    kernels' constants (5 float64 hyper-parameters, 2 int64 codes: 56 bytes)."""
    model = MORES(d, m, fit_intercept=fit_intercept)
    D = d + fit_intercept
    assert sum(v.nbytes for v in model.state) == 8 * (D * D + 2 * D * m + 5 * m * m) + 16
    nbytes = model.nbytes()
    assert nbytes == 8 * (3 * D * D + 6 * D * m + 17 * m * m + 5 * D + 2 * m) + 16 + 56
    if (d, m) == (21, 7):
        assert round(nbytes / 1000, 1) == 26.7


@pytest.mark.parametrize("cls", [SOMOR, PARegressor])
@pytest.mark.parametrize(("d", "m", "fit_intercept"), [(10, 3, True), (1, 1, False)])
def test_linear_models_memory_matches_the_documented_figure(cls, d, m, fit_intercept):
    """Docstrings: D m + D + m values plus 72 bytes (counters 16, bound 16, constants 40)."""
    D = d + fit_intercept
    for dtype, size in (("float64", 8), ("float32", 4)):
        model = cls(d, m, fit_intercept=fit_intercept, dtype=dtype)
        assert model.nbytes() == size * (D * m + D + m) + 72


def _mores_synthetic(n=500, seed=0):
    try:
        from edgereg.streams import mores_synthetic
    except ImportError:  # pragma: no cover - streams.py not there yet
        rng = np.random.default_rng(seed)
        X = np.hstack([rng.normal(size=(n, 10)), np.ones((n, 1))])
        w1, w2 = rng.normal(size=11), rng.normal(size=11)
        W = np.column_stack([w1, w2, 0.5 * w1 + 0.5 * w2])
        E = 0.1 * rng.normal(size=(n, 3))
        E[:, 2] += 0.5 * E[:, 0] + 0.5 * E[:, 1]
        return X, X @ W + E, W
    return mores_synthetic(n, seed=seed)


def test_synthetic_set_converges_and_learns_residual_correlation():
    X, Y, W = _mores_synthetic(500, seed=0)
    model = MORES(X.shape[1], 3, C=100.0, decay=0.99, fit_intercept=False)  # x has its 1
    pred = model.learn_many(X, Y)
    err = np.abs(model.coef_ - W).max()
    assert err < 0.05, err
    mae_end = np.abs(pred[-100:] - Y[-100:]).mean()
    assert mae_end < 0.15, mae_end  # noise level: E|e| = 0.08 (outputs 1-2), 0.10 (output 3)
    S = model.residual_structure_
    # residuals r3 = 0.5 r1 + 0.5 r2 + e3: corr(r1, r3) = corr(r2, r3) = 0.41,
    # r1 and r2 independent. S^-1 - I grows like the discounted residual
    # covariance (S-step), so S, a precision-like weighting, has clearly
    # negative (0, 2) and (1, 2) entries (the precision of the true covariance
    # is [[1.25, .25, -.5], [.25, 1.25, -.5], [-.5, -.5, 1]]).
    assert S[0, 2] < -0.05 and S[1, 2] < -0.05
    K = np.linalg.inv(S) - np.eye(3)
    corr = K / np.sqrt(np.outer(np.diag(K), np.diag(K)))
    assert 0.3 < corr[0, 2] < 0.6 and 0.3 < corr[1, 2] < 0.6, corr
    assert abs(corr[0, 1]) < 0.2, corr


def test_mores_beats_independent_baselines_on_synthetic():
    X, Y, _ = _mores_synthetic(500, seed=1)
    mores = MORES(11, 3, C=100.0, fit_intercept=False).learn_many(X, Y)
    somor = SOMOR(11, 3, epsilon=0.1, fit_intercept=False).learn_many(X, Y)
    assert np.abs(mores - Y).mean() < np.abs(somor - Y).mean()


def test_attributes_and_validation():
    model = MORES(3, 2)
    X, Y = _stream(20, 3, 2)
    model.learn_many(X, Y)
    np.testing.assert_array_equal(model.coef_, model.state.W[:3])
    np.testing.assert_array_equal(model.intercept_, model.state.W[3])
    np.testing.assert_allclose(model.predict_one(X[0]), model.coef_.T @ X[0] + model.intercept_)
    assert MORES(3, 2, fit_intercept=False).intercept_.tolist() == [0.0, 0.0]
    for bad in [dict(C=0.0), dict(decay=1.5), dict(decay=-0.1), dict(gamma=-1.0), dict(tau=0.0)]:
        with pytest.raises(ValueError):
            MORES(3, 2, **bad)
    with pytest.raises(ValueError):
        MORES(3, 0)
    with pytest.raises(TypeError):
        MORES(3, 2, fit_intercept="yes")
    with pytest.raises(ValueError, match=r"\(2,\)"):
        model.learn_one(X[0], Y[0, :1])


def test_bad_sample_raises_before_any_write():
    model = MORES(3, 2)
    X, Y = _stream(20, 3, 2)
    model.learn_many(X[:10], Y[:10])
    before = {k: np.array(v, copy=True) for k, v in model.state._asdict().items()}
    for x, y in [(X[10], np.array([np.inf, 0.0])), (np.array([1e200, 0.0, 0.0]), Y[10])]:
        with pytest.raises(ValueError, match="sample"):
            model.learn_one(x, y)
        for k, v in before.items():
            np.testing.assert_array_equal(getattr(model.state, k), v)


# ------------------------------------------------------------ SOMOR and PA
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("epsilon", [0.0, 0.3])
def test_somor_matches_closed_form_step_by_step(fit_intercept, epsilon):
    X, Y = _stream(60, 4, 3, seed=5, noise=0.3)
    model = SOMOR(4, 3, epsilon=epsilon, fit_intercept=fit_intercept)
    Ws, preds = ref.somor_reference(X, Y, epsilon, fit_intercept)
    for t in range(60):
        p = model.learn_one(X[t], Y[t])
        np.testing.assert_allclose(p, preds[t], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(model.state.W, Ws[t], rtol=1e-12, atol=1e-12)
        if epsilon > 0 and np.linalg.norm(Y[t] - preds[t]) > epsilon:
            # the projection lands on the constraint boundary
            xa = ref.mores_augment(X[t : t + 1], fit_intercept)[0]
            assert np.isclose(np.linalg.norm(Y[t] - model.state.W.T @ xa), epsilon)


@pytest.mark.parametrize("variant", ["I", "II"])
@pytest.mark.parametrize("n_outputs", [None, 3])
def test_pa_matches_closed_form_step_by_step(variant, n_outputs):
    X, Y = _stream(60, 4, 3, seed=6, noise=0.3)
    Yt = Y[:, 0] if n_outputs is None else Y
    model = PARegressor(4, n_outputs, variant=variant, C=0.05, epsilon=0.1)
    Ws, preds = ref.pa_reference(X, Yt, variant, 0.05, 0.1)
    for t in range(60):
        p = model.learn_one(X[t], Yt[t])
        if n_outputs is None:
            assert isinstance(p, float)
            p = np.array([p])
        np.testing.assert_allclose(p, preds[t], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(model.state.W, Ws[t], rtol=1e-12, atol=1e-12)
    block = PARegressor(4, n_outputs, variant=variant, C=0.05, epsilon=0.1).learn_many(X, Yt)
    assert block.shape == Yt.shape
    np.testing.assert_allclose(block.reshape(60, -1), preds, rtol=1e-12, atol=1e-12)


def test_pa_scalar_mode_shapes_and_validation():
    model = PARegressor(3)
    assert model._task == "regression" and PARegressor(3, 2)._task == "multioutput"
    X, Y = _stream(10, 3, 1)
    model.learn_many(X, Y[:, 0])
    assert model.coef_.shape == (3,) and isinstance(model.intercept_, float)
    assert model.predict_many(X).shape == (10,)
    with pytest.raises(ValueError, match="variant"):
        PARegressor(3, variant="III")
    with pytest.raises(ValueError, match=r"shape \(10,\)"):
        model.learn_many(X, Y)


# ------------------------------------------- S-step: skipping the PSD clip
@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 10),
    seed=st.integers(0, 2**31 - 1),
    lam_min=st.sampled_from([-1e-3, -1e-12, -1e-16, 0.0, 1e-16, 1e-12, 1e-9, 1e-6, 1e-3, 1.0]),
)
def test_pd_certificate_never_skips_a_clip(m, seed, lam_min):
    """When E is certified positive definite, Jacobi finds no negative eigenvalue
    (so skipping it leaves E bit for bit as the clip would); clear cases are certified."""
    from edgereg._kernels.eigen import jacobi_eigh
    from edgereg._kernels.linalg import set_identity
    from edgereg._kernels.mores import _PSD_MARGIN, _certainly_positive_definite

    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(m, m)))
    ev = rng.uniform(0.5, 2.0, size=m) * 10.0 ** rng.uniform(-3, 3)
    ev[0] = lam_min * ev.max()
    E = q @ np.diag(ev) @ q.T
    E = np.triu(E) + np.triu(E, 1).T  # exactly symmetric, as the kernel forms it
    tol = 64 * np.finfo(np.float64).eps
    certified = _certainly_positive_definite(E, _PSD_MARGIN * m * m * tol, np.empty((m, m)))
    B, V = E.copy(), np.empty((m, m))
    set_identity(V)
    jacobi_eigh(B, V, tol, 30)
    if certified:
        assert np.diag(B).min() >= 0.0
    if lam_min >= 1e-6 or (m == 1 and lam_min > 0.0):
        assert certified
    if lam_min <= 0.0:
        assert not certified
    assert not _certainly_positive_definite(np.zeros((m, m)), 1.0, np.empty((m, m)))


@pytest.mark.parametrize("make", [
    lambda: MORES(3, 2),
    lambda: SOMOR(3, 2),
    pytest.param(lambda: SOMOR(3, 2, dtype="float32", arithmetic="float32"),
                 marks=pytest.mark.skipif(numba.config.DISABLE_JIT, reason="the float32-only "
                                          "kernels read constants by their bits: intrinsics")),
], ids=["mores", "somor", "somor-float32-only"])
def test_predict_one_writes_into_out_or_refuses_a_wrong_one(make):
    """predict_one(x, out=...) fills and returns the caller's array (both
    arithmetics check it alike); a wrong shape, dtype or a read-only array is
    refused with the model unchanged."""
    m = make()
    m.learn_one(np.ones(3), np.array([1.0, -1.0]))
    out = np.zeros(2)
    assert m.predict_one(np.ones(3), out=out) is out
    assert np.array_equal(out, m.predict_one(np.ones(3)))
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    for bad in (np.zeros(3), np.zeros(2, dtype=np.float32), frozen):
        with pytest.raises(ValueError, match="out must be"):
            m.predict_one(np.ones(3), out=bad)


@pytest.mark.parametrize("make", [lambda: SOMOR(3, 2), lambda: PARegressor(3, 2, variant="II")])
def test_a_pickle_that_names_the_old_module_loads(make):
    """SOMOR and PARegressor moved from edgereg.mores to edgereg.pa: a pickle
    written before names the old module (rewritten here in protocol 0's text
    form), and loads into the same model, state and all."""
    rng = np.random.default_rng(0)
    model = make()
    model.learn_many(rng.normal(size=(20, 3)), rng.normal(size=(20, 2)))
    text = pickle.dumps(model, protocol=0)
    assert b"edgereg.pa\n" in text
    old = pickle.loads(text.replace(b"edgereg.pa\n", b"edgereg.mores\n"))
    assert type(old) is type(model)
    np.testing.assert_array_equal(old.coef_, model.coef_)
    x = rng.normal(size=3)
    np.testing.assert_array_equal(old.predict_one(x), model.predict_one(x))
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        edgereg.mores.Nothing  # noqa: B018
