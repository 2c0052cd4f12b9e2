"""Classification streams: SEA, rotating hyperplane, Gaussian mixtures, concept switches.

Labels are -1.0 / +1.0. See ``edgereg.streams`` for the conventions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, overload

import numpy as np

from .._validate import check_float, check_int
from ._common import _random_unit_orthogonal, _rotate_towards, _stage_index, _unit_sphere

# --------------------------------------------------------------------------- SEA


def sea(
    n_samples: int = 50_000,
    *,
    thresholds: Sequence[float] = (7.0, 8.0, 9.0, 9.5),
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SEA concepts stream (Street & Kim 2001), docs/algorithms/streams_and_metrics.md.

    Generative model, for t = 0, ..., n_samples - 1::

        x_t ~ U[0, 10]^3                         (x_t[2] is irrelevant)
        k_t = floor(t * K / n_samples)           (K = len(thresholds) equal stages)
        clean label  +1 if x_t[0] + x_t[1] <= thresholds[k_t], else -1
        y_t = -clean label with probability ``noise`` (independently per sample),
              the clean label otherwise.

    Parameters
    ----------
    n_samples : int
        Stream length (the paper: 50,000, four stages of 12,500).
    thresholds : sequence of float
        The threshold b of each stage, in order (the paper: 7, 8, 9, 9.5).
    noise : float in [0, 1]
        Probability that a label is flipped (the original SEA paper: 10%).
        The realised fraction of flipped labels is Binomial(n, noise) / n.
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
    y : ndarray of shape (n_samples,)
        Labels in {-1.0, +1.0}; +1 means x1 + x2 <= b (before noise).
    concept : ndarray of int64, shape (n_samples,)
        Stage index k_t of each sample.
    """
    n = check_int("n_samples", n_samples)
    b = np.asarray(thresholds, dtype=np.float64)
    if b.ndim != 1 or b.size == 0 or not np.all(np.isfinite(b)):
        raise ValueError(
            f"thresholds must be a non-empty sequence of finite numbers, got {thresholds!r}"
        )
    noise = check_float("noise", noise, 0.0, 1.0)
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 10.0, size=(n, 3))
    flip = rng.random(n) < noise
    concept = _stage_index(n, b.size)
    clean = X[:, 0] + X[:, 1] <= b[concept]
    y = np.where(clean != flip, 1.0, -1.0)
    return X, y, concept


# ----------------------------------------------------------- rotating hyperplane


@overload
def rotating_hyperplane(
    n_samples: int = ...,
    n_features: int = ...,
    *,
    n_stages: int = ...,
    angle: float = ...,
    return_hyperplanes: Literal[False] = ...,
    seed: int = ...,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@overload
def rotating_hyperplane(
    n_samples: int = ...,
    n_features: int = ...,
    *,
    n_stages: int = ...,
    angle: float = ...,
    return_hyperplanes: Literal[True],
    seed: int = ...,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


def rotating_hyperplane(
    n_samples: int = 90_000,
    n_features: int = 10,
    *,
    n_stages: int = 9,
    angle: float = np.pi / 4,
    return_hyperplanes: bool = False,
    seed: int = 0,
) -> tuple[np.ndarray, ...]:
    """Rotating-hyperplane stream with abrupt stage changes, docs/algorithms/streams_and_metrics.md.

    Generative model (d = n_features, c = (1/2, ..., 1/2) the centre of the cube)::

        w_0 ~ uniform on the unit sphere of R^d
        w_{k+1} = cos(angle) w_k + sin(angle) z_k,
                  z_k a random unit vector orthogonal to w_k     (k = 0..K-2)
        w_k0 = w_k^T c                        (the hyperplane passes through c)
        x_t ~ U[0, 1]^d,  k_t = floor(t * K / n_samples)
        y_t = +1 if w_{k_t}^T x_t - w_{k_t,0} >= 0, else -1

    So each stage's hyperplane is the previous one rotated by exactly ``angle``
    about the centre of the cube, in a random 2-plane containing the old
    normal. Every hyperplane goes through c, so the classes stay balanced in
    every stage; consecutive concepts disagree on roughly ``angle / pi`` of the
    inputs (exactly so for a spherically symmetric input distribution).
    No label noise.

    Parameters
    ----------
    n_samples : int
        Stream length (the paper: 90,000, nine stages of 10,000).
    n_features : int
        Dimension d >= 2 (the paper: 10).
    n_stages : int
        Number K of concepts (the paper: 9).
    angle : float in (0, pi]
        Rotation between consecutive stages, in radians (default 45 degrees).
    return_hyperplanes : bool
        Also return the hyperplanes.
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), labels in {-1.0, +1.0}
    concept : ndarray of int64, shape (n_samples,), the stage k_t
    hyperplanes : ndarray of shape (n_stages, n_features + 1), only if requested
        Row k is ``[w_k0, w_k]`` (offset first, then the unit normal).
    """
    n = check_int("n_samples", n_samples)
    d = check_int("n_features", n_features, 2)
    K = check_int("n_stages", n_stages)
    angle = check_float("angle", angle, 0.0, np.pi, low_open=True)
    rng = np.random.default_rng(seed)
    W = np.empty((K, d))
    W[0] = _unit_sphere(rng, 1, d)[0]
    for k in range(1, K):
        W[k] = _rotate_towards(W[k - 1], _random_unit_orthogonal(rng, W[k - 1]), angle)
    offsets = W @ np.full(d, 0.5)
    X = rng.random((n, d))
    concept = _stage_index(n, K)
    score = np.einsum("ij,ij->i", X, W[concept]) - offsets[concept]
    y = np.where(score >= 0.0, 1.0, -1.0)
    if return_hyperplanes:
        return X, y, concept, np.ascontiguousarray(np.column_stack([offsets, W]))
    return X, y, concept


# ---------------------------------------------------- NORMA's Gaussian mixtures


def gaussian_mixture_drift(
    n_samples: int = 10_000,
    *,
    n_features: int = 2,
    kind: Literal["drifting", "switching"] = "drifting",
    n_components: int = 2,
    spread: float = 2.0,
    std: float = 0.5,
    drift_scale: float = 0.01,
    switch_every: int = 1000,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Drifting / switching Gaussian-mixture classification stream (NORMA's experiments).

    docs/algorithms/streams_and_metrics.md, after Kivinen, Smola & Williamson, "Online learning
    with kernels": each of the two classes is a mixture of Gaussians whose
    centres drift slowly ("drifting") or are redrawn abruptly ("switching").
    The paper does not give every constant; edgereg's model is, with
    d = n_features and K = n_components::

        centres at t = 0:  m_{c,j} ~ N(0, spread^2 I_d),  c in {-1,+1}, j = 1..K
        drifting:   m_{c,j}(t) = m_{c,j}(t-1) + N(0, drift_scale^2 I_d)
                    (every centre takes an independent Gaussian random-walk step
                    at every sample)
        switching:  m_{c,j}(t) = m_{c,j}(t-1), except when t > 0 is a multiple
                    of ``switch_every``: all 2K centres are redrawn afresh
                    from N(0, spread^2 I_d)
        y_t uniform on {-1, +1},  j_t uniform on {1..K}
        x_t ~ N(m_{y_t, j_t}(t), std^2 I_d)

    Classes are balanced, the Bayes boundary is non-linear for K >= 2 (a job
    for a Gaussian kernel), and the class overlap is set by ``std`` relative
    to ``spread``.

    Parameters
    ----------
    n_samples : int
        Stream length.
    n_features : int
        Input dimension d (2 as in the paper's plots).
    kind : {"drifting", "switching"}
        Kind of non-stationarity.
    n_components : int
        Gaussians per class, K.
    spread : float > 0
        Standard deviation of the centres around the origin.
    std : float > 0
        Standard deviation of each Gaussian around its centre.
    drift_scale : float >= 0
        Random-walk step of each centre coordinate per sample ("drifting").
    switch_every : int
        Steps between switches ("switching").
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), labels in {-1.0, +1.0}
    """
    n = check_int("n_samples", n_samples)
    d = check_int("n_features", n_features)
    if kind not in ("drifting", "switching"):
        raise ValueError(f"kind must be 'drifting' or 'switching', got {kind!r}")
    K = check_int("n_components", n_components)
    spread = check_float("spread", spread, 0.0, low_open=True)
    std = check_float("std", std, 0.0, low_open=True)
    drift_scale = check_float("drift_scale", drift_scale, 0.0)
    k = check_int("switch_every", switch_every)
    rng = np.random.default_rng(seed)

    cls = rng.integers(0, 2, size=n)  # 0 -> class -1, 1 -> class +1
    comp = rng.integers(0, K, size=n)
    which = cls * K + comp  # index of the centre used, in [0, 2K)
    if kind == "drifting":
        centres0 = rng.normal(0.0, spread, size=(2 * K, d))
        # Only the trajectory of the centre actually sampled is needed at each
        # t, but it depends on all the steps of that centre: cumulate the
        # steps of every centre (n * 2K * d numbers).
        steps = rng.normal(0.0, drift_scale, size=(n, 2 * K, d))
        steps[0] = 0.0
        centres = centres0[None, :, :] + np.cumsum(steps, axis=0)
        means = centres[np.arange(n), which]
    else:
        n_blocks = (n - 1) // k + 1
        centres = rng.normal(0.0, spread, size=(n_blocks, 2 * K, d))
        means = centres[np.arange(n) // k, which]
    X = means + rng.normal(0.0, std, size=(n, d))
    y = np.where(cls == 1, 1.0, -1.0)
    return np.ascontiguousarray(X), y


# ----------------------------------------------------------------- switch stream


@overload
def switch_stream(
    n_samples: int = ...,
    n_features: int = ...,
    *,
    switch_at: int | None = ...,
    distance: float = ...,
    concepts: np.ndarray | Sequence[Sequence[float]] | None = ...,
    seed: int = ...,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


@overload
def switch_stream(
    n_samples: int = ...,
    n_features: int = ...,
    *,
    switch_at: Sequence[int],
    distance: float = ...,
    concepts: np.ndarray | Sequence[Sequence[float]] | None = ...,
    seed: int = ...,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


def switch_stream(
    n_samples: int = 10_000,
    n_features: int = 5,
    *,
    switch_at: int | Sequence[int] | None = None,
    distance: float = 1.0,
    concepts: np.ndarray | Sequence[Sequence[float]] | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, ...]:
    """Linear classification stream with abrupt switches, docs/algorithms/selective.md.

    Generative model (d = n_features)::

        u ~ uniform on the unit sphere of R^d
        v = cos(theta) u + sin(theta) z,  z a random unit vector orthogonal
            to u,  cos(theta) = 1 - distance^2 / 2,  so ||v|| = 1 and
            ||u - v|| = distance exactly (up to rounding)
        x_t ~ uniform on the unit sphere of R^d
        P(y_t = +1 | x_t) = (1 + c_t^T x_t) / 2,  y_t in {-1, +1}
        c_t = u for t < switch_at, v for t >= switch_at

    so E[y_t | x_t] = c_t^T x_t, the model of the BBQ analysis.

    Several switches: pass ``switch_at`` as an increasing sequence of
    0-based indices t_1 < ... < t_k. The concepts are then c_0, ..., c_k
    (in force on [0, t_1), [t_1, t_2), ..., [t_k, n)): either ``concepts``
    (k + 1 vectors) or, by default, a chain
    in which each c_{i+1} is at ``distance`` from c_i, built as v from u above.

    Parameters
    ----------
    n_samples : int
        Stream length n.
    n_features : int
        Dimension d >= 2.
    switch_at : int, sequence of int or None
        Index of the first sample of the new concept; default ``n // 2``.
    distance : float in (0, 2]
        ||c_{i+1} - c_i|| for generated concepts (2 means c_{i+1} = -c_i).
    concepts : array of shape (k + 1, d), optional
        Explicit concepts (normalised to unit length), one more than the
        switches; with an int ``switch_at``, ``[u, v]``. To draw a holdout set
        from a known concept c (docs/algorithms/streams_and_metrics.md), use
        ``switch_stream(m, d, switch_at=m, concepts=[c, c], seed=other)``.
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    With an int (or None) ``switch_at``: ``(X, y, u, v)``; with a sequence:
    ``(X, y, concepts)``.

    X : ndarray of shape (n_samples, n_features), rows of unit norm
    y : ndarray of shape (n_samples,), labels in {-1.0, +1.0}
    u, v : ndarray of shape (n_features,), the concepts before / after
    concepts : ndarray of shape (len(switch_at) + 1, n_features)
    """
    n = check_int("n_samples", n_samples)
    d = check_int("n_features", n_features, 2)
    distance = check_float("distance", distance, 0.0, 2.0, low_open=True)
    single = switch_at is None or isinstance(switch_at, (int, np.integer))
    if single:
        at = np.array([n // 2 if switch_at is None else switch_at], dtype=np.int64)
    else:
        at = np.asarray(switch_at)
        if at.ndim != 1 or at.size == 0 or at.dtype.kind not in "iu":
            raise ValueError(f"switch_at must be an int or a sequence of ints, got {switch_at!r}")
        at = at.astype(np.int64)
    if np.any(at < 0) or np.any(at > n) or np.any(np.diff(at) <= 0):
        raise ValueError(
            "switch_at must be strictly increasing indices in "
            f"[0, n_samples={n}], got {at.tolist()}"
        )
    rng = np.random.default_rng(seed)
    if concepts is None:
        cos_theta = 1.0 - 0.5 * distance * distance
        theta = float(np.arccos(np.clip(cos_theta, -1.0, 1.0)))
        C = np.empty((at.size + 1, d))
        C[0] = _unit_sphere(rng, 1, d)[0]
        for i in range(at.size):
            C[i + 1] = _rotate_towards(C[i], _random_unit_orthogonal(rng, C[i]), theta)
    else:
        C = np.array(concepts, dtype=np.float64)
        if C.shape != (at.size + 1, d) or not np.all(np.isfinite(C)):
            raise ValueError(
                f"concepts must be a finite array of shape ({at.size + 1}, {d}), "
                f"got shape {C.shape}"
            )
        norms = np.linalg.norm(C, axis=1, keepdims=True)
        if np.any(norms == 0.0):
            raise ValueError("concepts must be non-zero vectors")
        C /= norms
    X = _unit_sphere(rng, n, d)
    segment = np.searchsorted(at, np.arange(n), side="right")
    p_plus = 0.5 * (1.0 + np.einsum("ij,ij->i", X, C[segment]))
    y = np.where(rng.random(n) < p_plus, 1.0, -1.0)
    if single:
        return X, y, np.ascontiguousarray(C[0]), np.ascontiguousarray(C[1])
    return X, y, C
