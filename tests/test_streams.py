"""Stream generators (docs/algorithms/): determinism, shapes, generative facts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from edgereg import streams

# Small versions of every generator: name -> callable(seed) -> tuple of outputs.
SMALL = {
    "sea": lambda seed: streams.sea(2000, seed=seed),
    "rotating_hyperplane": lambda seed: streams.rotating_hyperplane(
        900, 6, return_hyperplanes=True, seed=seed
    ),
    "drifting_linear_rw": lambda seed: streams.drifting_linear(500, 4, seed=seed),
    "drifting_linear_jumps": lambda seed: streams.drifting_linear(
        500, 4, drift="jumps", jump_every=100, seed=seed
    ),
    "sparse_state_space": lambda seed: streams.sparse_state_space(
        600, 50, jump_every=100, seed=seed
    ),
    "gaussian_mixture_drifting": lambda seed: streams.gaussian_mixture_drift(500, seed=seed),
    "gaussian_mixture_switching": lambda seed: streams.gaussian_mixture_drift(
        500, kind="switching", switch_every=100, seed=seed
    ),
    "switch_stream": lambda seed: streams.switch_stream(500, 4, seed=seed),
    "switch_stream_multi": lambda seed: streams.switch_stream(
        500, 4, switch_at=[100, 300], seed=seed
    ),
    "mores_synthetic": lambda seed: streams.mores_synthetic(200, seed=seed),
    "drift_regimes": lambda seed: streams.drift_regimes(900, 3, switch_every=100, seed=seed),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_deterministic_from_seed(name: str) -> None:
    make = SMALL[name]
    a, b, c = make(3), make(3), make(4)
    assert len(a) == len(b) == len(c)
    for xa, xb in zip(a, b, strict=True):
        np.testing.assert_array_equal(xa, xb)
    # A different seed changes the data (the first array, X, is always random).
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("name", sorted(SMALL))
def test_float_arrays_are_float64_c_contiguous(name: str) -> None:
    for arr in SMALL[name](0):
        assert isinstance(arr, np.ndarray)
        assert arr.dtype.kind in "fi"
        if arr.dtype.kind == "f":
            assert arr.dtype == np.float64
            assert arr.flags.c_contiguous
            assert np.all(np.isfinite(arr))


def test_sea_rule_and_noise() -> None:
    n = 40_000
    X, y, concept = streams.sea(n, noise=0.1, seed=1)
    assert X.shape == (n, 3) and y.shape == (n,) and concept.shape == (n,)
    assert X.min() >= 0.0 and X.max() <= 10.0
    assert set(np.unique(y)) == {-1.0, 1.0}
    np.testing.assert_array_equal(np.bincount(concept), [n // 4] * 4)
    b = np.array([7.0, 8.0, 9.0, 9.5])[concept]
    clean = np.where(X[:, 0] + X[:, 1] <= b, 1.0, -1.0)
    flipped = np.mean(y != clean)
    assert abs(flipped - 0.1) < 4 * np.sqrt(0.1 * 0.9 / n)
    X0, y0, _ = streams.sea(n, noise=0.0, seed=1)
    np.testing.assert_array_equal(y0, clean)


def test_sea_stage_order_follows_thresholds() -> None:
    _, _, concept = streams.sea(10, thresholds=(1.0, 2.0, 3.0), noise=0.0)
    np.testing.assert_array_equal(concept, [0, 0, 0, 0, 1, 1, 1, 2, 2, 2])


def test_rotating_hyperplane_rule_and_rotation() -> None:
    n, d, K = 9000, 10, 9
    X, y, concept, H = streams.rotating_hyperplane(
        n, d, n_stages=K, angle=0.3, return_hyperplanes=True
    )
    assert X.shape == (n, d) and H.shape == (K, d + 1)
    assert X.min() >= 0.0 and X.max() < 1.0
    np.testing.assert_array_equal(np.bincount(concept), [n // K] * K)
    w0, w = H[:, 0], H[:, 1:]
    np.testing.assert_allclose(np.linalg.norm(w, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(w0, w @ np.full(d, 0.5), atol=1e-12)
    cosines = np.einsum("ij,ij->i", w[1:], w[:-1])
    np.testing.assert_allclose(cosines, np.cos(0.3), atol=1e-12)
    expected = np.where(np.einsum("ij,ij->i", X, w[concept]) - w0[concept] >= 0, 1.0, -1.0)
    np.testing.assert_array_equal(y, expected)
    # The hyperplanes pass through the centre of the cube: balanced classes.
    assert abs(y.mean()) < 0.1


def test_rotating_hyperplane_default_returns_three() -> None:
    out = streams.rotating_hyperplane(90, 3, n_stages=3)
    assert len(out) == 3


@pytest.mark.parametrize("drift", ["random_walk", "jumps"])
def test_drifting_linear_noise_and_drift(drift: str) -> None:
    n, d = 20_000, 5
    X, y, W = streams.drifting_linear(n, d, drift=drift, jump_every=1000, noise=0.3, seed=2)
    assert X.shape == (n, d) and y.shape == (n,) and W.shape == (n, d)
    resid = y - np.sum(X * W, axis=1)
    assert abs(resid.std() - 0.3) < 0.01
    assert abs(resid.mean()) < 0.01
    steps = np.diff(W, axis=0)
    if drift == "random_walk":
        assert abs(steps.std() - 0.01) < 0.001
    else:
        changed = np.flatnonzero(np.any(steps != 0.0, axis=1)) + 1
        np.testing.assert_array_equal(changed, np.arange(1000, n, 1000))
        assert abs(steps[changed - 1].std() - 1.0) < 0.3


def test_drifting_linear_zero_scale_is_stationary() -> None:
    _, _, W = streams.drifting_linear(50, 3, drift_scale=0.0)
    np.testing.assert_array_equal(W, np.broadcast_to(W[0], W.shape))


def test_sparse_state_space_structure() -> None:
    n, D, s, k = 2000, 200, 10, 500
    X, y, W = streams.sparse_state_space(n, D, sparsity=s, jump_every=k, seed=5)
    assert X.shape == (n, D) and W.shape == (n, D) and y.shape == (n,)
    assert np.all(np.count_nonzero(W, axis=1) == s)
    assert np.all(np.count_nonzero(X, axis=1) == s)
    # Support: the first s coordinates, shared by x and w.
    assert not np.any(X[:, s:]) and not np.any(W[:, s:])
    # x follows x_t = 0.1 x_{t-1} + xi_t with xi in [-1, 1): check the recursion.
    xi = X[1:, :s] - 0.1 * X[:-1, :s]
    assert np.all(np.abs(xi) <= 1.0 + 1e-12) and np.all(np.abs(X[0, :s]) <= 1.0)
    assert abs(xi.std() - 1 / np.sqrt(3)) < 0.02
    # w changes only at multiples of jump_every, and at each of them.
    changed = np.flatnonzero(np.any(np.diff(W, axis=0) != 0.0, axis=1)) + 1
    np.testing.assert_array_equal(changed, np.arange(k, n, k))
    np.testing.assert_allclose(y, np.sum(X * W, axis=1), rtol=0, atol=1e-12)


def test_sparse_state_space_random_support_and_csr() -> None:
    kw = dict(sparsity=7, jump_every=100, noise=0.05, support="random", seed=9)
    X, y, W = streams.sparse_state_space(400, 300, **kw)
    Xc, yc, Wc = streams.sparse_state_space(400, 300, as_csr=True, **kw)
    assert sp.issparse(Xc) and sp.issparse(Wc)
    assert Xc.format == "csr" and Xc.has_sorted_indices
    np.testing.assert_array_equal(np.diff(Xc.indptr), 7)
    np.testing.assert_array_equal(Xc.toarray(), X)
    np.testing.assert_array_equal(Wc.toarray(), W)
    np.testing.assert_array_equal(yc, y)
    support = np.flatnonzero(W[0])
    assert support.size == 7 and not np.array_equal(support, np.arange(7))
    np.testing.assert_array_equal(np.flatnonzero(X[0]), support)
    assert abs(np.std(y - np.sum(X * W, axis=1)) - 0.05) < 0.01


def test_sparse_state_space_rejects_bad_sparsity() -> None:
    with pytest.raises(ValueError, match="sparsity"):
        streams.sparse_state_space(10, 5, sparsity=6)


@pytest.mark.parametrize("kind", ["drifting", "switching"])
def test_gaussian_mixture(kind: str) -> None:
    n = 4000
    X, y = streams.gaussian_mixture_drift(n, n_features=3, kind=kind, switch_every=1000, seed=1)
    assert X.shape == (n, 3) and y.shape == (n,)
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert abs(y.mean()) < 0.1


def test_gaussian_mixture_switching_changes_at_switch() -> None:
    # Tiny within-component spread: the points of a block sit on 2K centres.
    X, y = streams.gaussian_mixture_drift(
        3000, kind="switching", n_components=1, std=1e-9, switch_every=1000, seed=0
    )
    centres = [np.unique(np.round(X[i : i + 1000], 6), axis=0) for i in (0, 1000, 2000)]
    assert all(c.shape == (2, 2) for c in centres)
    assert not np.allclose(centres[0], centres[1])


def test_gaussian_mixture_drifting_moves_slowly() -> None:
    X, y = streams.gaussian_mixture_drift(
        20_000, n_components=1, std=1e-9, drift_scale=0.01, seed=0
    )
    pos = X[y == 1.0]
    steps = np.linalg.norm(np.diff(pos, axis=0), axis=1)
    assert steps.max() < 0.2  # a random walk, no jumps
    assert np.linalg.norm(pos[-1] - pos[0]) > 0.1  # but it does move


def test_switch_stream_geometry_and_mean() -> None:
    n, d = 40_000, 4
    X, y, u, v = streams.switch_stream(n, d, distance=0.7, seed=3)
    assert X.shape == (n, d)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-12)
    assert abs(np.linalg.norm(u) - 1.0) < 1e-12
    assert abs(np.linalg.norm(v) - 1.0) < 1e-12
    assert abs(np.linalg.norm(u - v) - 0.7) < 1e-12
    half = n // 2
    # E[y u^T x] = E[(u^T x)^2] = 1/d before the switch; after it, E[y v^T x] = 1/d.
    before = np.mean(y[:half] * (X[:half] @ u))
    after = np.mean(y[half:] * (X[half:] @ v))
    se = 1.0 / np.sqrt(half)
    assert abs(before - 1 / d) < 4 * se
    assert abs(after - 1 / d) < 4 * se
    # And the empirical E[y x] estimates the concept in force.
    np.testing.assert_allclose(d * (y[:half, None] * X[:half]).mean(axis=0), u, atol=0.05)
    np.testing.assert_allclose(d * (y[half:, None] * X[half:]).mean(axis=0), v, atol=0.05)


@pytest.mark.parametrize("distance", [1e-3, 1.0, 1.9, 2.0])
def test_switch_stream_exact_distance(distance: float) -> None:
    _, _, u, v = streams.switch_stream(10, 7, distance=distance, seed=11)
    assert abs(np.linalg.norm(u) - 1.0) < 1e-12
    assert abs(np.linalg.norm(v) - 1.0) < 1e-12
    assert abs(np.linalg.norm(u - v) - distance) < 1e-12


def test_switch_stream_several_switches() -> None:
    n, d = 30_000, 3
    X, y, C = streams.switch_stream(n, d, switch_at=[10_000, 20_000], distance=1.5, seed=4)
    assert C.shape == (3, d)
    np.testing.assert_allclose(np.linalg.norm(C, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(np.diff(C, axis=0), axis=1), 1.5, atol=1e-12)
    for k in range(3):
        seg = slice(10_000 * k, 10_000 * (k + 1))
        np.testing.assert_allclose(d * (y[seg, None] * X[seg]).mean(axis=0), C[k], atol=0.07)
    given = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    _, _, C2 = streams.switch_stream(100, 3, switch_at=[50], concepts=given)
    np.testing.assert_array_equal(C2, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def test_switch_stream_holdout_from_a_known_concept() -> None:
    _, _, u, v = streams.switch_stream(100, 3, seed=0)
    X, y, u2, v2 = streams.switch_stream(30_000, 3, switch_at=30_000, concepts=[v, v], seed=1)
    np.testing.assert_allclose(u2, v, atol=1e-15)
    np.testing.assert_allclose(3 * (y[:, None] * X).mean(axis=0), v, atol=0.05)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"distance": 0.0},
        {"distance": 2.5},
        {"switch_at": [30, 20]},
        {"switch_at": [200]},
        {"switch_at": [50], "concepts": np.ones((3, 3))},
        {"switch_at": 50, "concepts": np.ones((3, 3))},
        {"switch_at": [50], "concepts": np.zeros((2, 3))},
    ],
)
def test_switch_stream_rejects_bad_arguments(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        streams.switch_stream(100, 3, **kwargs)


def test_mores_synthetic() -> None:
    n = 20_000
    X, Y, W = streams.mores_synthetic(n, seed=0)
    assert X.shape == (n, 11) and Y.shape == (n, 3) and W.shape == (11, 3)
    np.testing.assert_array_equal(X[:, 10], 1.0)
    np.testing.assert_allclose(W[:, 2], 0.5 * W[:, 0] + 0.5 * W[:, 1], rtol=0, atol=1e-15)
    R = Y - X @ W
    np.testing.assert_allclose(R.std(axis=0), [0.1, 0.1, 0.1 * np.sqrt(1.5)], rtol=0.03)
    corr = np.corrcoef(R.T)
    assert corr[0, 2] > 0.3 and corr[1, 2] > 0.3
    assert abs(corr[0, 1]) < 0.05
    # The default 500-sample set shows the correlation too.
    X5, Y5, W5 = streams.mores_synthetic()
    R5 = Y5 - X5 @ W5
    assert X5.shape == (500, 11) and np.corrcoef(R5.T)[0, 2] > 0.2


def test_sizes_default_to_the_papers() -> None:
    X, _, concept = streams.sea()
    assert X.shape == (50_000, 3) and concept.max() == 3
    X, _, concept = streams.rotating_hyperplane()
    assert X.shape == (90_000, 10) and concept.max() == 8


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_drift_regimes_stationary_then_slow_then_switches(task: str) -> None:
    n, d, k, sigma = 3_000, 4, 250, 0.05
    X, y, W, regime = streams.drift_regimes(
        n, d, task=task, drift_scale=sigma, switch_every=k, noise=0.0, seed=5
    )
    r = n // 3
    np.testing.assert_array_equal(regime, np.repeat([0, 1, 2], r))
    np.testing.assert_array_equal(W[:r], np.broadcast_to(W[0], (r, d)))  # stationary
    steps = np.diff(W[r - 1 : 2 * r], axis=0)
    assert abs(steps.std() / sigma - 1.0) < 0.05  # a step at every sample
    changes = np.flatnonzero(np.any(np.diff(W[2 * r - 1 :], axis=0) != 0.0, axis=1)) + 2 * r
    np.testing.assert_array_equal(changes, np.arange(2 * r, n, k))  # switches only
    score = np.einsum("ij,ij->i", X, W)
    if task == "regression":
        np.testing.assert_array_equal(y, score)  # noise = 0
    else:
        np.testing.assert_array_equal(y, np.where(score >= 0.0, 1.0, -1.0))


def test_drift_regimes_no_fixed_forgetting_suits_every_regime() -> None:
    """The point of the stream: the best mu of the stationary regime loses on the switches."""
    from edgereg import DFOP

    X, y, _, regime = streams.drift_regimes(9_000, 5, seed=1)
    errors = {}
    for mu in (0.0, 0.03):
        e = (DFOP(5, mu).learn_many(X, y) - y) ** 2
        errors[mu] = [e[regime == g].mean() for g in range(3)]
    assert errors[0.0][0] < errors[0.03][0]  # stationary: remember everything
    assert errors[0.03][2] < errors[0.0][2]  # switches: forget fast
