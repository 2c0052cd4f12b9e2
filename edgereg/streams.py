"""Synthetic data streams of the papers edgereg implements (SPEC.md section 7).

Every generator is a plain function that returns a whole stream at once as
float64, C-contiguous NumPy arrays (feed them to ``learn_many``, or loop over
the rows with ``learn_one``). Each is deterministic given ``seed``: it draws
everything from one ``np.random.default_rng(seed)``, in a fixed order, so the
same arguments always give the same arrays bit for bit.

Sample indices are 0-based: row ``t`` of ``X`` is the ``t``-th sample of the
stream. Classification labels are ``-1.0`` / ``+1.0``, the coding every edgereg
classifier predicts in. Concepts, stages and true parameters are returned next
to the data so that tracking error and holdout accuracy on the current concept
(SPEC.md section 6) can be computed.

Where the papers leave a detail open, the docstring says what was chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, overload

import numpy as np
import scipy.sparse as sp
from scipy.signal import lfilter

from ._validate import check_float, check_int

__all__ = [
    "drift_regimes",
    "drifting_linear",
    "gaussian_mixture_drift",
    "mores_synthetic",
    "rotating_hyperplane",
    "sea",
    "sparse_state_space",
    "switch_stream",
]


def _stage_index(n_samples: int, n_stages: int) -> np.ndarray:
    """Stage of each sample when ``n_samples`` are cut into ``n_stages`` equal parts.

    Sample t is in stage ``floor(t * n_stages / n_samples)``; the stages differ in
    length by at most one sample when ``n_samples`` is not a multiple.
    """
    return (np.arange(n_samples, dtype=np.int64) * n_stages) // n_samples


def _random_unit_orthogonal(rng: np.random.Generator, u: np.ndarray) -> np.ndarray:
    """A random unit vector orthogonal to the unit vector ``u`` (needs len(u) >= 2)."""
    while True:
        z = rng.standard_normal(u.shape[0])
        z -= (z @ u) * u
        z -= (z @ u) * u  # second Gram-Schmidt pass: orthogonal to rounding error
        norm = np.linalg.norm(z)
        if norm > 1e-8:
            return z / norm


def _rotate_towards(u: np.ndarray, z: np.ndarray, angle: float) -> np.ndarray:
    """cos(angle) u + sin(angle) z for orthonormal u, z, renormalised to unit length."""
    v = np.cos(angle) * u + np.sin(angle) * z
    return v / np.linalg.norm(v)


def _unit_sphere(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n points uniform on the unit sphere of R^d (normalised standard Gaussians)."""
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X


# --------------------------------------------------------------------------- SEA


def sea(
    n_samples: int = 50_000,
    *,
    thresholds: Sequence[float] = (7.0, 8.0, 9.0, 9.5),
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SEA concepts stream (Street & Kim 2001), SPEC.md section 7.

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
    """Rotating-hyperplane stream with abrupt stage changes, SPEC.md section 7.

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


# --------------------------------------------------------------- drifting linear


def drifting_linear(
    n_samples: int = 10_000,
    n_features: int = 10,
    *,
    drift: Literal["random_walk", "jumps"] = "random_walk",
    drift_scale: float | None = None,
    jump_every: int = 1000,
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Linear regression with a drifting true weight vector, SPEC.md section 7.

    Generative model, for t = 0, ..., n_samples - 1 (sigma = ``drift_scale``)::

        w_0 ~ N(0, I_d)
        w_t = w_{t-1} + s_t                                       (t >= 1)
            random_walk: s_t ~ N(0, sigma^2 I_d) at every step
            jumps:       s_t ~ N(0, sigma^2 I_d) when t is a multiple of
                         ``jump_every``, s_t = 0 otherwise
        x_t ~ N(0, I_d)
        y_t = w_t^T x_t + e_t,   e_t ~ N(0, noise^2)

    Gaussian increments are the sub-Gaussian drift of the DFOP analysis.

    Parameters
    ----------
    n_samples, n_features : int
        Stream length n and dimension d.
    drift : {"random_walk", "jumps"}
        Additive drift at every step, or piecewise-constant w with jumps.
    drift_scale : float >= 0, optional
        Standard deviation sigma of each coordinate of s_t. Default 0.01 for
        ``"random_walk"`` (w moves by about 0.01 sqrt(t) per coordinate) and
        1.0 for ``"jumps"`` (each jump as large as w_0 itself).
    jump_every : int
        Period k of the jumps (ignored for ``"random_walk"``).
    noise : float >= 0
        Standard deviation of the additive output noise.
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    W : ndarray of shape (n_samples, n_features)
        ``W[t]`` is the true w_t used for sample t.
    """
    n = check_int("n_samples", n_samples)
    d = check_int("n_features", n_features)
    if drift not in ("random_walk", "jumps"):
        raise ValueError(f"drift must be 'random_walk' or 'jumps', got {drift!r}")
    if drift_scale is None:
        drift_scale = 0.01 if drift == "random_walk" else 1.0
    sigma = check_float("drift_scale", drift_scale, 0.0)
    k = check_int("jump_every", jump_every)
    noise = check_float("noise", noise, 0.0)
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal(d)
    if drift == "random_walk":
        S = rng.normal(0.0, sigma, size=(n, d))
        S[0] = w0
        W = np.cumsum(S, axis=0)
    else:
        n_jumps = (n - 1) // k
        jumps = rng.normal(0.0, sigma, size=(n_jumps, d))
        levels = np.cumsum(np.vstack([w0[None, :], jumps]), axis=0)
        W = levels[np.arange(n) // k]
    X = rng.standard_normal((n, d))
    y = np.einsum("ij,ij->i", X, W) + rng.normal(0.0, noise, size=n)
    return X, y, np.ascontiguousarray(W)


def drift_regimes(
    n_samples: int = 30_000,
    n_features: int = 5,
    *,
    task: Literal["regression", "classification"] = "regression",
    drift_scale: float = 0.01,
    switch_every: int = 1000,
    noise: float = 0.5,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A linear stream whose drift *rate* changes: no single forgetting factor suits it.

    Three regimes of equal length (the third takes the remainder), each
    calling for a different memory: a stationary stretch (forget nothing),
    slow drift (forget slowly), abrupt switches (forget fast). Made for
    judging self-tuning forgetting (issue 16): a fixed mu can be right for one
    regime only. Generative model, for t = 0, ..., n - 1 and r = n // 3::

        w_0 ~ N(0, I_d)
        t < r         (stationary): w_t = w_{t-1}
        r <= t < 2r   (slow drift): w_t = w_{t-1} + s_t, s_t ~ N(0, sigma^2 I_d)
        t >= 2r       (switches):   w_t ~ N(0, I_d) afresh when (t - 2r) is a
                                    multiple of ``switch_every``, else w_{t-1}
        x_t ~ N(0, I_d)
        regression:     y_t = w_t^T x_t + e_t,        e_t ~ N(0, noise^2)
        classification: y_t = sign(w_t^T x_t + e_t)   (+1 for a zero score)

    Parameters
    ----------
    n_samples : int >= 3
        Stream length n.
    n_features : int
        Dimension d.
    task : {"regression", "classification"}
    drift_scale : float >= 0
        Standard deviation sigma of each coordinate of the slow drift's step.
    switch_every : int
        Samples between switches in the third regime.
    noise : float >= 0
        Standard deviation of e_t (for classification, label noise near the
        boundary).
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    W : ndarray of shape (n_samples, n_features), ``W[t]`` the true w_t
    regime : ndarray of int64 (n_samples,), 0 stationary, 1 slow drift, 2 switches
    """
    n = check_int("n_samples", n_samples, 3)
    d = check_int("n_features", n_features)
    if task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression' or 'classification', got {task!r}")
    sigma = check_float("drift_scale", drift_scale, 0.0)
    k = check_int("switch_every", switch_every)
    noise = check_float("noise", noise, 0.0)
    rng = np.random.default_rng(seed)
    r = n // 3
    regime = np.minimum(np.arange(n) // r, 2).astype(np.int64)
    steps = np.zeros((n, d))
    steps[0] = rng.standard_normal(d)
    steps[r:2 * r] = rng.normal(0.0, sigma, size=(r, d))
    W = np.cumsum(steps, axis=0)
    starts = np.arange(2 * r, n, k)
    fresh = rng.standard_normal((starts.size, d))
    for i, start in enumerate(starts):
        W[start:] = fresh[i]
    X = rng.standard_normal((n, d))
    y = np.einsum("ij,ij->i", X, W) + rng.normal(0.0, noise, size=n)
    if task == "classification":
        y = np.where(y >= 0.0, 1.0, -1.0)
    return X, y, np.ascontiguousarray(W), regime


# ----------------------------------------------------------- sparse state space


@overload
def sparse_state_space(
    n_samples: int = ...,
    n_features: int = ...,
    *,
    sparsity: int = ...,
    jump_every: int = ...,
    jump_scale: float = ...,
    noise: float = ...,
    support: Literal["first", "random"] = ...,
    as_csr: Literal[False] = ...,
    seed: int = ...,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@overload
def sparse_state_space(
    n_samples: int = ...,
    n_features: int = ...,
    *,
    sparsity: int = ...,
    jump_every: int = ...,
    jump_scale: float = ...,
    noise: float = ...,
    support: Literal["first", "random"] = ...,
    as_csr: Literal[True],
    seed: int = ...,
) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix]: ...


def sparse_state_space(
    n_samples: int = 5000,
    n_features: int = 1000,
    *,
    sparsity: int = 10,
    jump_every: int = 500,
    jump_scale: float = 0.1,
    noise: float = 0.0,
    support: Literal["first", "random"] = "first",
    as_csr: bool = False,
    seed: int = 0,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, np.ndarray | sp.csr_matrix]:
    """The state-space sparse stream of Sparse-DFOP's synthetic check, SPEC.md section 2.

    The SPEC's system, with D = n_features and s = sparsity (the paper: s = 10)::

        r_{t+1} = A r_t + B xi_t,   x_{t+1} = C r_t,
        A = 0.1 I_D,  B = [I_s; 0] (D x s),  C = [I_s 0; 0 0] (D x D),
        xi_t ~ U(-1, 1)^s  i.i.d.

    B only feeds the first s coordinates of r and C only reads them, so
    ``x_t`` is zero outside the first s coordinates and each of those follows
    an AR(1) process. With 0-based sample index t (row t of ``X``), starting
    from r = 0 before the first innovation::

        x_0[:s] = xi_0,   x_t[:s] = 0.1 x_{t-1}[:s] + xi_t,   x_t[s:] = 0

    (the SPEC's x_{t+1} = C r_t is this recursion up to the name of the index;
    the first sample is the first non-zero one).

    True weights: ``w_t`` is s-sparse. Because x only lives on the first s
    coordinates, the support of w must be those same coordinates (any weight
    outside them never affects y), so that is the support::

        w_0[:s] ~ N(0, I_s),  w_0[s:] = 0
        w_t = w_{t-1} + [jump_scale * N(0, I_s); 0]  when t > 0 is a multiple
              of ``jump_every``,  w_t = w_{t-1} otherwise
        y_t = w_t^T x_t + noise * N(0, 1)

    The SPEC's "N(0, 0.1) noise" is read as a standard deviation of 0.1 (pass
    ``jump_scale=0.1 ** 0.5`` for the variance reading).

    With ``support="random"`` one random permutation of the D coordinates is
    applied to both x and w (y unchanged): the common support is then a
    random s-subset instead of the first s coordinates. That changes nothing
    for a learner that compresses with i.i.d. random columns, but keeps a
    sparse-recovery test from benefiting from the support being a prefix.

    Parameters
    ----------
    n_samples : int
        Stream length (the paper: 5000 would give 10 segments of 500).
    n_features : int
        Ambient dimension D >= sparsity (the paper: 1000).
    sparsity : int
        s, the number of non-zeros of x_t and of w_t (the paper: 10).
    jump_every : int
        Steps between jumps of w (the paper: 500).
    jump_scale : float >= 0
        Standard deviation of each non-zero coordinate of a jump.
    noise : float >= 0
        Standard deviation of the output noise (the SPEC states none: 0).
    support : {"first", "random"}
        Where the common support of x and w lies (see above).
    as_csr : bool
        Return ``X`` and ``W`` as ``scipy.sparse.csr_matrix`` with exactly s
        stored entries per row and sorted indices, built without a dense
        intermediate (use it for large D: a dense (n, D) array does not fit).
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    W : ndarray or csr_matrix of shape (n_samples, n_features)
        ``W[t]`` is the true w_t used for sample t (dense when ``as_csr`` is
        False: n * D * 8 bytes).
    """
    n = check_int("n_samples", n_samples)
    D = check_int("n_features", n_features)
    s = check_int("sparsity", sparsity)
    if s > D:
        raise ValueError(f"sparsity must be <= n_features={D}, got {s}")
    k = check_int("jump_every", jump_every)
    jump_scale = check_float("jump_scale", jump_scale, 0.0)
    noise = check_float("noise", noise, 0.0)
    if support not in ("first", "random"):
        raise ValueError(f"support must be 'first' or 'random', got {support!r}")
    rng = np.random.default_rng(seed)

    xi = rng.uniform(-1.0, 1.0, size=(n, s))
    # x_t = 0.1 x_{t-1} + xi_t with zero initial state, per coordinate.
    Xs = np.ascontiguousarray(lfilter([1.0], [1.0, -0.1], xi, axis=0))
    w0 = rng.standard_normal(s)
    n_jumps = (n - 1) // k
    jumps = rng.normal(0.0, jump_scale, size=(n_jumps, s))
    levels = np.cumsum(np.vstack([w0[None, :], jumps]), axis=0)
    Ws = np.ascontiguousarray(levels[np.arange(n) // k])
    y = np.einsum("ij,ij->i", Xs, Ws) + rng.normal(0.0, noise, size=n)

    if support == "first":
        cols = np.arange(s)
    else:
        cols = rng.permutation(D)[:s]
    order = np.argsort(cols)  # CSR rows with sorted column indices
    cols = cols[order].astype(np.int64)
    Xs = np.ascontiguousarray(Xs[:, order])
    Ws = np.ascontiguousarray(Ws[:, order])

    if as_csr:
        indptr = np.arange(0, n * s + 1, s, dtype=np.int64)
        indices = np.tile(cols, n)
        X = sp.csr_matrix((Xs.ravel(), indices, indptr), shape=(n, D))
        W = sp.csr_matrix((Ws.ravel(), indices.copy(), indptr.copy()), shape=(n, D))
        return X, y, W
    X = np.zeros((n, D))
    X[:, cols] = Xs
    W = np.zeros((n, D))
    W[:, cols] = Ws
    return X, y, W


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

    SPEC.md section 7, after Kivinen, Smola & Williamson, "Online learning
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
    """Linear classification stream with abrupt switches, SPEC.md section 4.

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
        from a known concept c (SPEC.md section 6), use
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


# ------------------------------------------------------------- MORES synthetic


def mores_synthetic(
    n_samples: int = 500,
    *,
    combination: tuple[float, float] = (0.5, 0.5),
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MORES' synthetic multiple-output regression set, SPEC.md section 7.

    Generative model, with (a, b) = ``combination`` and sigma = ``noise``::

        w_1, w_2 ~ N(0, I_11)
        x_t = (z_t, 1),  z_t ~ N(0, I_10)          (d = 11, last entry a bias)
        y_t1 = w_1^T x_t + e_t1
        y_t2 = w_2^T x_t + e_t2
        y_t3 = a y_t1 + b y_t2 + e_t3,   e_tj ~ N(0, sigma^2) i.i.d.

    so W = [w_1, w_2, a w_1 + b w_2] (11 x 3) gives E[y_t | x_t] = W^T x_t, and
    the residuals y_t - W^T x_t = (e_1, e_2, a e_1 + b e_2 + e_3) are
    correlated: with the defaults, corr(r_1, r_3) = corr(r_2, r_3) =
    0.5 / sqrt(1.5) ~ 0.41 and Cov(r) = sigma^2 [[1, 0, a], [0, 1, b],
    [a, b, a^2 + b^2 + 1]] -- the residual structure MORES' S is meant to learn.

    Parameters
    ----------
    n_samples : int
        Number of samples (the paper: 500).
    combination : (float, float)
        (a, b) in y_3 = a y_1 + b y_2 + e_3.
    noise : float >= 0
        Standard deviation sigma of each e_tj (the paper: 0.1).
    seed : int
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, 11)
    Y : ndarray of shape (n_samples, 3)
    W : ndarray of shape (11, 3), the true coefficients
    """
    n = check_int("n_samples", n_samples)
    if len(combination) != 2:
        raise ValueError(f"combination must be a pair (a, b), got {combination!r}")
    a = check_float("combination[0]", combination[0])
    b = check_float("combination[1]", combination[1])
    noise = check_float("noise", noise, 0.0)
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal(11)
    w2 = rng.standard_normal(11)
    W = np.column_stack([w1, w2, a * w1 + b * w2])
    X = np.empty((n, 11))
    X[:, :10] = rng.standard_normal((n, 10))
    X[:, 10] = 1.0
    E = rng.normal(0.0, noise, size=(n, 3))
    Y = np.empty((n, 3))
    Y[:, 0] = X @ w1 + E[:, 0]
    Y[:, 1] = X @ w2 + E[:, 1]
    Y[:, 2] = a * Y[:, 0] + b * Y[:, 1] + E[:, 2]
    return X, Y, np.ascontiguousarray(W)
