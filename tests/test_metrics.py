"""Metrics of docs/algorithms/streams_and_metrics.md against obviously-correct slow loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from edgereg import metrics

# ------------------------------------------------------------ slow references


def slow_running(s: list[float]) -> list[float]:
    out, total = [], 0.0
    for t, v in enumerate(s):
        total += v
        out.append(total / (t + 1))
    return out


def slow_window(s: list[float], w: int) -> list[float]:
    out = []
    for t in range(len(s)):
        last = s[max(0, t - w + 1) : t + 1]
        out.append(sum(last) / len(last))
    return out


def slow_fading(s: list[float], a: float) -> list[float]:
    out = []
    for t in range(len(s)):
        num = sum(a ** (t - i) * s[i] for i in range(t + 1))
        den = sum(a ** (t - i) for i in range(t + 1))
        out.append(num / den)
    return out


def labels(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.choice([-1.0, 1.0], n), rng.choice([-1.0, 1.0], n)


def hits(y: np.ndarray, yhat: np.ndarray) -> list[float]:
    return [1.0 if a == b else 0.0 for a, b in zip(y.tolist(), yhat.tolist(), strict=True)]


# ------------------------------------------------------------- whole stream


def test_whole_stream_metrics(rng: np.random.Generator) -> None:
    y, yhat = labels(rng, 300)
    assert metrics.accuracy(y, yhat) == sum(hits(y, yhat)) / 300
    r, rhat = rng.standard_normal(300), rng.standard_normal(300)
    pairs = list(zip(r.tolist(), rhat.tolist(), strict=True))
    assert metrics.mse(r, rhat) == pytest.approx(sum((a - b) ** 2 for a, b in pairs) / 300)
    assert metrics.mae(r, rhat) == pytest.approx(sum(abs(a - b) for a, b in pairs) / 300)
    R, Rhat = rng.standard_normal((50, 3)), rng.standard_normal((50, 3))
    assert metrics.mse(R, Rhat) == pytest.approx(np.mean((R - Rhat) ** 2))
    assert math.isnan(metrics.accuracy([], []))


# ------------------------------------------------------ every-step metrics


@pytest.mark.parametrize("n", [1, 7, 200])
def test_prequential_accuracy_variants(rng: np.random.Generator, n: int) -> None:
    y, yhat = labels(rng, n)
    h = hits(y, yhat)
    np.testing.assert_allclose(metrics.prequential_accuracy(y, yhat), slow_running(h), rtol=1e-12)
    for w in (1, 3, 10, 64):
        got = metrics.windowed_accuracy(y, yhat, w)
        np.testing.assert_allclose(got, slow_window(h, w), rtol=1e-12)
    for a in (0.5, 0.9, 0.99):
        got = metrics.fading_accuracy(y, yhat, a)
        np.testing.assert_allclose(got, slow_fading(h, a), rtol=1e-10)


@pytest.mark.parametrize("kind", ["mse", "mae"])
def test_prequential_error_variants(rng: np.random.Generator, kind: str) -> None:
    n = 150
    y, yhat = rng.standard_normal(n) * 3, rng.standard_normal(n)
    pairs = zip(y.tolist(), yhat.tolist(), strict=True)
    e = [(a - b) ** 2 if kind == "mse" else abs(a - b) for a, b in pairs]
    got = metrics.prequential_error(y, yhat, kind)
    np.testing.assert_allclose(got, slow_running(e), rtol=1e-12)
    for w in (1, 5, 33):
        got = metrics.prequential_error(y, yhat, kind, window=w)
        np.testing.assert_allclose(got, slow_window(e, w), rtol=1e-10)
    got = metrics.prequential_error(y, yhat, kind, alpha=0.95)
    np.testing.assert_allclose(got, slow_fading(e, 0.95), rtol=1e-10)


def test_prequential_error_multioutput_is_mean_over_outputs(rng: np.random.Generator) -> None:
    Y, Yhat = rng.standard_normal((40, 3)), rng.standard_normal((40, 3))
    per_sample = [float(np.mean((a - b) ** 2)) for a, b in zip(Y, Yhat, strict=True)]
    got = metrics.prequential_error(Y, Yhat)
    np.testing.assert_allclose(got, slow_running(per_sample), rtol=1e-12)


def test_fading_with_alpha_one_and_huge_window_equal_running_mean(rng: np.random.Generator) -> None:
    y, yhat = labels(rng, 500)
    running = metrics.prequential_accuracy(y, yhat)
    np.testing.assert_allclose(metrics.fading_accuracy(y, yhat, 1.0), running, rtol=1e-12)
    np.testing.assert_array_equal(metrics.windowed_accuracy(y, yhat, 500), running)
    np.testing.assert_array_equal(metrics.windowed_accuracy(y, yhat, 10_000), running)


def test_windowed_sum_does_not_drift_on_long_streams() -> None:
    # Large values early, tiny later: a global prefix-sum difference would lose the tail.
    v = np.concatenate([np.full(1000, 1e8), np.full(1000, 1e-3)])
    got = metrics.prequential_mean(v, window=10)
    np.testing.assert_allclose(got[1500:], 1e-3, rtol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda: metrics.accuracy([1, 1], [1]),
        lambda: metrics.prequential_error([1.0, 2.0], [1.0], "mse"),
        lambda: metrics.windowed_accuracy([1], [1], 0),
        lambda: metrics.windowed_accuracy([1], [1], 2.5),
        lambda: metrics.fading_accuracy([1], [1], 0.0),
        lambda: metrics.fading_accuracy([1], [1], 1.5),
        lambda: metrics.prequential_error([1.0], [1.0], "rmse"),
        lambda: metrics.prequential_mean([1.0], window=2, alpha=0.5),
        lambda: metrics.tracking_error(np.zeros((3, 2)), np.zeros((4, 2))),
        lambda: metrics.RunningMetric("rmse"),
        lambda: metrics.RunningMetric(window=0),
        lambda: metrics.RunningMetric(alpha=0.0),
        lambda: metrics.RunningMetric(window=3, alpha=0.5),
    ],
)
def test_bad_arguments_raise_value_error(call) -> None:
    with pytest.raises(ValueError):
        call()


# ------------------------------------------------------ tracking and holdout


def test_tracking_error(rng: np.random.Generator) -> None:
    W, What = rng.standard_normal((30, 4)), rng.standard_normal((30, 4))
    expected = [
        math.sqrt(sum((a - b) ** 2 for a, b in zip(r, s, strict=True)))
        for r, s in zip(W.tolist(), What.tolist(), strict=True)
    ]
    np.testing.assert_allclose(metrics.tracking_error(W, What), expected, rtol=1e-12)
    np.testing.assert_allclose(metrics.tracking_error(sp.csr_matrix(W), What), expected, rtol=1e-12)
    # A constant true vector is broadcast over the steps.
    np.testing.assert_allclose(
        metrics.tracking_error(W[0], What), np.linalg.norm(What - W[0], axis=1), rtol=1e-12
    )
    # Matrix parameters (MORES): Frobenius norm per step.
    A, B = rng.standard_normal((5, 3, 2)), rng.standard_normal((5, 3, 2))
    np.testing.assert_allclose(
        metrics.tracking_error(A, B),
        [np.linalg.norm(a - b) for a, b in zip(A, B, strict=True)],
        rtol=1e-12,
    )


def test_holdout_accuracy_uses_predict_many(rng: np.random.Generator) -> None:
    class Sign:
        def predict_many(self, X: np.ndarray) -> np.ndarray:
            return np.where(X[:, 0] >= 0, 1.0, -1.0)

    X = rng.standard_normal((100, 2))
    y = np.where(X[:, 0] >= 0, 1.0, -1.0)
    y[:10] *= -1
    assert metrics.holdout_accuracy(Sign(), X, y) == pytest.approx(0.9)


# ----------------------------------------------------------- running classes


@pytest.mark.parametrize(
    "opts", [{}, {"window": 1}, {"window": 7}, {"window": 1000}, {"alpha": 0.9}, {"alpha": 1.0}]
)
@pytest.mark.parametrize("kind", ["accuracy", "mse", "mae"])
def test_running_metric_equals_array_functions_step_by_step(
    rng: np.random.Generator, kind: str, opts: dict
) -> None:
    n = 300
    if kind == "accuracy":
        y, yhat = labels(rng, n)
        expected = metrics.prequential_mean(
            np.asarray(hits(y, yhat)), window=opts.get("window"), alpha=opts.get("alpha")
        )
    else:
        y, yhat = rng.standard_normal(n), rng.standard_normal(n)
        expected = metrics.prequential_error(y, yhat, kind, **opts)
    m = metrics.RunningMetric(kind, **opts)
    assert math.isnan(m.get())
    got = []
    for a, b in zip(y.tolist(), yhat.tolist(), strict=True):
        m.update(a, b)
        got.append(m.get())
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    assert m.n_seen == n
    m.reset()
    assert math.isnan(m.get()) and m.n_seen == 0


def test_running_shorthands_and_numpy_inputs(rng: np.random.Generator) -> None:
    acc = metrics.RunningAccuracy(window=5)
    sq = metrics.RunningMSE(alpha=0.8)
    ab = metrics.RunningMAE()
    y, yhat = rng.standard_normal(50), rng.standard_normal(50)
    for a, b in zip(y, yhat, strict=True):  # numpy float64 scalars
        acc.update(np.sign(a), np.sign(b))
        sq.update(a, b)
        ab.update(a, b)
    assert acc.kind == "accuracy" and acc.window == 5
    assert acc.get() == pytest.approx(metrics.windowed_accuracy(np.sign(y), np.sign(yhat), 5)[-1])
    assert sq.get() == pytest.approx(metrics.prequential_error(y, yhat, alpha=0.8)[-1])
    assert ab.get() == pytest.approx(metrics.mae(y, yhat))
    # Vector outputs: the per-sample score is the mean over outputs.
    Y, Yhat = rng.standard_normal((20, 3)), rng.standard_normal((20, 3))
    m = metrics.RunningMSE(window=4)
    for a, b in zip(Y, Yhat, strict=True):
        m.update(a, b)
    assert m.get() == pytest.approx(metrics.prequential_error(Y, Yhat, window=4)[-1])
    assert "RunningMSE" in repr(m)


def test_running_window_sum_is_resynchronised() -> None:
    # After a huge score leaves the window, the running sum must not keep its rounding error.
    m = metrics.RunningMetric("mae", window=4)
    for v in [1e16, 1.0, 1.0, 1.0] + [0.1] * 8:
        m.update(v, 0.0)
    assert m.get() == pytest.approx(0.1, rel=1e-15)
