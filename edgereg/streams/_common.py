"""Helpers the stream generators share (random directions, stage indices)."""

from __future__ import annotations

import numpy as np


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
