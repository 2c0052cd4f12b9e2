"""Synthetic data and model discovery for the contract tests.

Every public model class in ``edgereg.__all__`` is tested with each parameter
set of its ``_unit_test_params()`` (river's convention) on a small stream that
suits its task (``model._task``).

A ``Fleet`` is a model whose sample is one row per member: its streams here
are sample-major, X of shape (n, K, d) and Y (n, K), so ``X[t]`` is what its
``learn_one`` takes, and the helpers below hand its block methods the
member-major (K, n, d) they take. Its counters are one per member; ``seen``
and ``skipped`` check that they agree (every member gets the same rows).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import edgereg
from edgereg import Fleet
from edgereg._base import OnlineModel


def hostile_examples(developer: int) -> int:
    """Examples per model for the property-based hostile suites.

    ``EDGEREG_HOSTILE=ci`` asks for 2,000 (a deep run by hand); a number asks
    for that many (CI's hostile stage); unset, a developer's ``developer``.
    """
    depth = os.environ.get("EDGEREG_HOSTILE", "")
    if depth == "ci":
        return 2000
    return int(depth) if depth.isdigit() else developer


def model_classes() -> list[type[OnlineModel]]:
    out = []
    for name in edgereg.__all__:
        obj = getattr(edgereg, name)
        if isinstance(obj, type) and issubclass(obj, OnlineModel) and obj is not OnlineModel:
            out.append(obj)
    return out


def model_cases(include_fleet: bool = True) -> list[tuple[str, type[OnlineModel], dict[str, Any]]]:
    cases = []
    for cls in model_classes():
        if issubclass(cls, Fleet) and not include_fleet:  # Fleet and FleetBank
            continue
        for i, params in enumerate(cls._unit_test_params()):
            cases.append((f"{cls.__name__}-{i}", cls, params))
    return cases


def make_stream(model: OnlineModel, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray | None]:
    """A stream (X, Y) the model can learn; Y is None for novelty detection."""
    rng = np.random.default_rng(seed)
    d = model.n_features
    if isinstance(model, Fleet):
        K = model.n_models
        X = rng.normal(size=(n, K, d))
        w = rng.normal(size=(K, d))
        score = np.einsum("nkd,kd->nk", X, w)
        if model._task == "classification":
            return X, np.where(score + 0.3 * rng.normal(size=(n, K)) >= 0, 1.0, -1.0)
        return X, score + 0.1 * rng.normal(size=(n, K))
    X = rng.normal(size=(n, d))
    task = model._task
    if task == "novelty":
        return X, None
    if task == "multioutput":
        m = model.n_outputs
        W = rng.normal(size=(d, m))
        return X, X @ W + 0.1 * rng.normal(size=(n, m))
    w = rng.normal(size=d)
    if task == "classification":
        y = np.where(X @ w + 0.3 * rng.normal(size=n) >= 0, 1.0, -1.0)
        return X, y
    return X, X @ w + 0.1 * rng.normal(size=n)


def learn_many(model: OnlineModel, X: np.ndarray, Y: np.ndarray | None, **kw: Any) -> np.ndarray:
    if isinstance(model, Fleet):
        return model.learn_many(np.swapaxes(X, 0, 1), np.swapaxes(Y, 0, 1), **kw).T
    return model.learn_many(X, **kw) if Y is None else model.learn_many(X, Y, **kw)


def predict_many(model: OnlineModel, X: np.ndarray) -> np.ndarray:
    if isinstance(model, Fleet):
        return model.predict_many(np.swapaxes(X, 0, 1)).T
    return model.predict_many(X)


def seen(model: OnlineModel) -> int:
    """n_seen_ (a Fleet's members must all agree)."""
    return _one_count(model.n_seen_)


def skipped(model: OnlineModel) -> int:
    """n_skipped_ (a Fleet's members must all agree)."""
    return _one_count(model.n_skipped_)


def _one_count(value: Any) -> int:
    values = np.unique(np.asarray(value))
    assert values.size == 1, f"the members' counts differ: {value}"
    return int(values[0])


def learn_one(model: OnlineModel, x: np.ndarray, y: Any) -> Any:
    return model.learn_one(x) if y is None else model.learn_one(x, y)


def row(Y: np.ndarray | None, t: int) -> Any:
    return None if Y is None else Y[t]


def state_arrays(model: OnlineModel) -> dict[str, np.ndarray]:
    """Copies of the learnt state's arrays (``state`` holds no scratch)."""
    return {k: np.array(v, copy=True) for k, v in model.state._asdict().items()}


def assert_same_state(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=f"state field {k!r} differs")
