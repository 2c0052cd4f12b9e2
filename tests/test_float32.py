"""float32 models compute in float32: the robustness bar of float64.

The step's arithmetic is checked bit for bit against tests/reference.py's
float32 step in tests/test_dfop.py; here, the long-run behaviour asked
of it, in float32 arithmetic, and the same in float64 for comparison.
The error analysis: docs/design/float32.md.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgereg import DFOP

# The slow tier (pytest -m slow): a million steps, 150 streams of extreme rows.
pytestmark = pytest.mark.slow

N, D, MU = 1_000_000, 10, 0.01


@pytest.fixture(scope="module")
def half_unexcited_stream():
    """10^6 rows, d = 10: rows 250,000-749,999 excite only 2 of the 10
    directions (the other 8 inputs are exactly 0), the rest all of them."""
    rng = np.random.default_rng(18)
    X = rng.normal(size=(N, D))
    X[N // 4 : 3 * N // 4, 2:] = 0.0
    w = rng.normal(size=D)
    y = X @ w + 0.1 * rng.normal(size=N)
    return X, y


def _discounted_least_squares(X, y, lam, window):
    """argmin_w sum_t lam^(n-1-t) (y_t - w^T x_t)^2 over the last ``window`` rows,
    in float64 (lam^window is below 1e-13 here: the older rows do not count)."""
    Xw, yw = X[-window:], y[-window:]
    s = np.sqrt(lam ** np.arange(window - 1, -1, -1))
    return np.linalg.lstsq(Xw * s[:, None], yw * s, rcond=None)[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_million_steps_with_half_a_million_unexcited_stay_finite_and_exact(
    half_unexcited_stream, dtype
):
    """Finite, exactly symmetric and positive definite P throughout; after the
    stretch and full excitation again, within 2e-2 (relative) of the exact
    discounted least squares over the recent rows."""
    X, y = half_unexcited_stream
    model = DFOP(D, MU, dtype=dtype)
    for start in range(0, N, 50_000):
        pred = model.learn_many(X[start : start + 50_000].astype(dtype), y[start : start + 50_000])
        P = model.state.P.astype(np.float64)
        assert np.all(np.isfinite(pred)) and np.all(np.isfinite(model.coef_)), start
        assert np.array_equal(P, P.T), start
        assert np.linalg.eigvalsh(P).min() > 0.0, start
    assert model.n_seen_ == N
    exact = _discounted_least_squares(X.astype(dtype).astype(np.float64), y, 1.0 - MU, 3000)
    error = np.linalg.norm(model.coef_.astype(np.float64) - exact) / np.linalg.norm(exact)
    assert error < 2e-2, error


@pytest.mark.parametrize("low, high", [(25, 33), (2, 25)])
def test_extreme_rows_in_float32_arithmetic_keep_the_state_and_the_paths_equal(low, high):
    """d = 25-32 (float32 arithmetic, careful steps and all) and d = 2-24 (float32
    arithmetic while mu d <= 1, else float64 rounded into float32), rows of every
    scale from 1e-320 to 1.7e308 on 10% of the entries, forgetting 0.01-0.9,
    both keep_prior: w and P stay finite, P exactly symmetric with a diagonal
    >= 0 up to rounding (within its cap without the refresh), and a learn_one
    loop equals learn_many bit for bit, refusals included (the
    contract, where the float32 passes run)."""
    from test_high_forgetting import _EXTREMES

    from edgereg._kernels.dfop import MAX_VARIANCE

    for seed in range(150):
        rng = np.random.default_rng(seed)
        d = int(rng.integers(low, high))
        mu = float(rng.choice([0.01, 0.04, 0.3, 0.5, 0.9] if low < 25 else [0.01, 0.3, 0.5, 0.9]))
        keep_prior = bool(rng.integers(0, 2))
        n = 200
        extreme = rng.choice(_EXTREMES, (n, d)) * rng.choice([-1, 1], (n, d))
        X = np.where(rng.random((n, d)) < 0.1, extreme, rng.normal(size=(n, d)))
        X[rng.random((n, d)) < 0.3] = 0.0
        y = np.where(rng.random(n) < 0.2, rng.choice(_EXTREMES, n), rng.normal(size=n))
        block = DFOP(d, mu, keep_prior=keep_prior, dtype="float32", on_invalid="skip")
        block.learn_many(X, y)
        one = DFOP(d, mu, keep_prior=keep_prior, dtype="float32", on_invalid="skip")
        for t in range(n):
            one.learn_one(X[t], y[t])
        P = block.state.P.astype(np.float64)
        assert np.all(np.isfinite(block.state.w)) and np.all(np.isfinite(P)), seed
        assert np.array_equal(P, P.T), seed
        assert P.diagonal().min() >= -64 * np.finfo(np.float32).eps * 100 * block.p0, seed
        if not keep_prior:
            assert P.diagonal().max() <= MAX_VARIANCE * block.p0 * (1.0 + 1e-6), seed
        for name in ("w", "P", "counts", "forgotten"):
            np.testing.assert_array_equal(getattr(block.state, name), getattr(one.state, name),
                                          err_msg=f"seed {seed}: {name}")
