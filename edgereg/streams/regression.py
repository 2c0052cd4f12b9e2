"""Regression streams: drifting linear models, drift regimes, sparse state space, MORES.

See ``edgereg.streams`` for the conventions.
"""

from __future__ import annotations

from typing import Literal, overload

import numpy as np
import scipy.sparse as sp
from scipy.signal import lfilter

from .._validate import check_float, check_int

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
    """Linear regression with a drifting true weight vector, docs/algorithms/streams_and_metrics.md.

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
    judging self-tuning forgetting (``forgetting="auto"``): a fixed mu can be right for one
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
    """The state-space sparse stream of Sparse-DFOP's synthetic check (docs/algorithms/).

    The system, with D = n_features and s = sparsity (the paper: s = 10)::

        r_{t+1} = A r_t + B xi_t,   x_{t+1} = C r_t,
        A = 0.1 I_D,  B = [I_s; 0] (D x s),  C = [I_s 0; 0 0] (D x D),
        xi_t ~ U(-1, 1)^s  i.i.d.

    B only feeds the first s coordinates of r and C only reads them, so
    ``x_t`` is zero outside the first s coordinates and each of those follows
    an AR(1) process. With 0-based sample index t (row t of ``X``), starting
    from r = 0 before the first innovation::

        x_0[:s] = xi_0,   x_t[:s] = 0.1 x_{t-1}[:s] + xi_t,   x_t[s:] = 0

    (the paper's x_{t+1} = C r_t is this recursion up to the name of the index;
    the first sample is the first non-zero one).

    True weights: ``w_t`` is s-sparse. Because x only lives on the first s
    coordinates, the support of w must be those same coordinates (any weight
    outside them never affects y), so that is the support::

        w_0[:s] ~ N(0, I_s),  w_0[s:] = 0
        w_t = w_{t-1} + [jump_scale * N(0, I_s); 0]  when t > 0 is a multiple
              of ``jump_every``,  w_t = w_{t-1} otherwise
        y_t = w_t^T x_t + noise * N(0, 1)

    The paper's "N(0, 0.1) noise" is read as a standard deviation of 0.1 (pass
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
        Standard deviation of the output noise (the paper states none: 0).
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


# ------------------------------------------------------------- MORES synthetic


def mores_synthetic(
    n_samples: int = 500,
    *,
    combination: tuple[float, float] = (0.5, 0.5),
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MORES' synthetic multiple-output regression set, docs/algorithms/streams_and_metrics.md.

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
