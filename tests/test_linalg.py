"""The allocation-free linear algebra of edgereg._kernels.linalg and .eigen against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereg._kernels.eigen import (
    apply_reflectors,
    jacobi_eigh,
    shifted_tridiagonal_solve,
    tridiagonalize,
)
from edgereg._kernels.linalg import (
    cholesky,
    invert_upper_in_place,
    set_identity,
    shifted_cholesky,
    spd_inverse,
    symv,
    upper_cholesky_in_place,
)

TOL = 64 * np.finfo(np.float64).eps


def _sym(rng, n):
    A = rng.normal(size=(n, n))
    return (A + A.T) / 2


def _orthogonal(rng, n):
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def _check_eigh(A0, A, V):
    n = A0.shape[0]
    scale = np.linalg.norm(A0) + 1e-300
    # A is diagonal, V orthonormal, and V^T diag V reproduces A0
    off = A - np.diag(np.diag(A))
    assert np.abs(off).max() <= 1e-13 * scale
    np.testing.assert_allclose(V @ V.T, np.eye(n), atol=1e-13)
    np.testing.assert_allclose(V.T @ np.diag(np.diag(A)) @ V, A0, atol=1e-12 * scale)
    np.testing.assert_allclose(
        np.sort(np.diag(A)), np.linalg.eigvalsh(A0), atol=1e-12 * scale
    )
    np.testing.assert_array_equal(A, A.T)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 24), seed=st.integers(0, 2**31 - 1))
def test_jacobi_cold_start_matches_eigh(n, seed):
    rng = np.random.default_rng(seed)
    A0 = _sym(rng, n) * 10.0 ** rng.uniform(-5, 5)
    A = A0.copy()
    V = np.empty((n, n))
    set_identity(V)
    sweeps = jacobi_eigh(A, V, TOL, 50)
    assert sweeps < 50
    _check_eigh(A0, A, V)


@pytest.mark.parametrize("n", [2, 7, 22])
def test_jacobi_warm_start_from_previous_basis(n):
    """Rotated into a neighbour's eigenbasis, fewer sweeps than from the identity."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(5 * n, n))
    M_prev = X.T @ X
    _, vecs = np.linalg.eigh(M_prev)
    U = np.ascontiguousarray(vecs.T)  # rows = eigenvectors
    x = rng.normal(size=n)
    M = 0.99 * M_prev + np.outer(x, x)
    A = U @ M @ U.T
    A = 0.5 * (A + A.T)  # exactly symmetric, as jacobi_eigh requires
    sweeps = jacobi_eigh(A, U, TOL, 50)
    _check_eigh(M, A, U)
    cold = jacobi_eigh(M.copy(), np.eye(n), TOL, 50)
    assert 1 <= sweeps <= cold and (n <= 2 or sweeps < cold)


def test_jacobi_rank_deficient_and_zero():
    rng = np.random.default_rng(1)
    x = rng.normal(size=9)
    A0 = np.outer(x, x)
    A, V = A0.copy(), np.eye(9)
    jacobi_eigh(A, V, TOL, 50)
    _check_eigh(A0, A, V)
    Z, V = np.zeros((4, 4)), np.eye(4)
    assert jacobi_eigh(Z, V, TOL, 50) == 0
    np.testing.assert_array_equal(V, np.eye(4))


def test_jacobi_repeated_eigenvalues():
    rng = np.random.default_rng(2)
    Q = _orthogonal(rng, 6)
    A0 = Q @ np.diag([1.0, 1.0, 1.0, 2.0, 2.0, 5.0]) @ Q.T
    A0 = (A0 + A0.T) / 2
    A, V = A0.copy(), np.eye(6)
    jacobi_eigh(A, V, TOL, 50)
    _check_eigh(A0, A, V)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 2**31 - 1))
def test_cholesky_and_inverse_match_numpy(n, seed):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, n))
    A = B @ B.T + 0.1 * np.eye(n)
    L = np.empty((n, n))
    assert cholesky(A, L, 1e-300) == 0
    np.testing.assert_allclose(L, np.linalg.cholesky(A), rtol=1e-10, atol=1e-12)
    assert np.all(np.triu(L, 1) == 0.0)
    inv = np.empty((n, n))
    assert spd_inverse(A, inv, np.empty((n, n)), np.empty((n, n)), 1e-300) == 0
    ref = np.linalg.inv(A)
    np.testing.assert_allclose(inv, ref, rtol=1e-8, atol=1e-10 * np.abs(ref).max())
    np.testing.assert_array_equal(inv, inv.T)


def test_cholesky_clamps_indefinite_pivots():
    A = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3, -1
    L = np.empty((2, 2))
    assert cholesky(A, L, 1e-8) == 1
    assert np.all(np.isfinite(L))


def _tridiagonalize(M):
    """Run tridiagonalize; return T (dense) and the explicit Q (Q^T M Q = T)."""
    n = M.shape[0]
    A, diag, off, beta, p = np.empty((n, n)), np.empty(n), np.zeros(n), np.empty(n), np.empty(n)
    M0 = M.copy()
    tridiagonalize(M, A, diag, off, beta, p)
    np.testing.assert_array_equal(M, M0)  # input untouched
    T = np.diag(diag) + np.diag(off[: n - 1], 1) + np.diag(off[: n - 1], -1)
    Q = np.eye(n)
    apply_reflectors(A, beta, Q, np.empty(n), False)  # Q <- Q I
    Qt = np.eye(n)
    apply_reflectors(A, beta, Qt, np.empty(n), True)  # Q^T I
    np.testing.assert_allclose(Qt, Q.T, atol=1e-14)
    return T, Q, (A, diag, off, beta)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 24), seed=st.integers(0, 2**31 - 1), rank=st.integers(0, 30))
def test_tridiagonalize_matches_the_matrix(n, seed, rank):
    """Q orthogonal, Q T Q^T = M, T with the eigenvalues of M; also for PSD rank-deficient M."""
    rng = np.random.default_rng(seed)
    if rank >= n:
        M = _sym(rng, n) * 10.0 ** rng.uniform(-5, 5)
    else:
        X = rng.normal(size=(rank, n))
        M = X.T @ X
    T, Q, _ = _tridiagonalize(M)
    scale = np.abs(M).max() + 1e-300
    np.testing.assert_allclose(Q @ Q.T, np.eye(n), atol=1e-13)
    np.testing.assert_allclose(Q @ T @ Q.T, M, atol=1e-12 * scale)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(T), np.linalg.eigvalsh(M), atol=1e-12 * scale
    )


def test_tridiagonalize_skips_columns_already_reduced():
    """A diagonal, a tridiagonal and the zero matrix: no reflection (beta = 0), T == M."""
    rng = np.random.default_rng(5)
    d, e = rng.normal(size=6), rng.normal(size=5)
    for M in (np.diag(d), np.diag(d) + np.diag(e, 1) + np.diag(e, -1), np.zeros((6, 6))):
        T, Q, (_, _, _, beta) = _tridiagonalize(M)
        assert np.all(beta[:4] == 0.0)
        np.testing.assert_array_equal(Q, np.eye(6))
        np.testing.assert_array_equal(T, M)


@pytest.mark.parametrize("n", [1, 2, 3, 22, 51])
def test_shifted_tridiagonal_solve_all_shifts_at_once(n):
    """(I + c_j M)^-1 r_j through Q (I + c_j T)^-1 Q^T, against np.linalg.solve."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(max(1, n // 2), n))  # PSD, rank-deficient for n >= 2
    M = X.T @ X
    m = 4
    c = np.array([0.0, 1e-3, 1.0, 1e4])  # no shift up to an ill-conditioned one
    R0 = rng.normal(size=(n, m))
    T, Q, (A, diag, off, beta) = _tridiagonalize(M)
    R = R0.copy()
    t = np.empty(m)
    apply_reflectors(A, beta, R, t, True)
    shifted_tridiagonal_solve(diag, off, c, R, np.empty((n, m)))
    apply_reflectors(A, beta, R, t, False)
    for j in range(m):
        Aj = np.eye(n) + c[j] * M
        want = np.linalg.solve(Aj, R0[:, j])
        # backward error: the residual is at rounding level of ||A|| ||y||
        res = Aj @ R[:, j] - R0[:, j]
        assert np.abs(res).max() <= 1e-13 * np.abs(Aj).max() * (np.abs(want).max() + 1)
        np.testing.assert_allclose(R[:, j], want, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(R[:, 0], R0[:, 0], rtol=1e-14, atol=1e-14)  # c = 0: Q Q^T = I


def test_tridiagonalize_reads_only_the_upper_triangle():
    rng = np.random.default_rng(6)
    M = _sym(rng, 7)
    Mu = np.triu(M) + np.tril(np.full((7, 7), np.nan), -1)
    n = 7
    out = []
    for A_in in (M, Mu):
        A = np.full((n, n), np.nan)  # scratch content does not matter either
        diag, off, beta, p = np.empty(n), np.zeros(n), np.empty(n), np.empty(n)
        tridiagonalize(A_in, A, diag, off, beta, p)
        out.append((diag.copy(), off[: n - 1].copy(), beta[: n - 2].copy(), np.triu(A, 1).copy()))
    for a, b in zip(*out, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.all(np.isfinite(out[1][0])) and np.all(np.isfinite(out[1][1]))


@pytest.mark.parametrize("n", [1, 3, 9, 30])
def test_shifted_cholesky_factors_the_shifted_matrix_or_stops(n):
    rng = np.random.default_rng(n)
    B = rng.normal(size=(n, n))
    A = B @ B.T + np.eye(n)
    lam = np.linalg.eigvalsh(A)
    L = np.full((n, n), np.nan)
    shift = 0.5 * lam[0]
    assert shifted_cholesky(A, shift, L, 0.0, True) == 0
    np.testing.assert_allclose(L, np.linalg.cholesky(A - shift * np.eye(n)), rtol=1e-12,
                               atol=1e-12 * lam[-1])
    # Beyond the smallest eigenvalue the shifted matrix is indefinite: it stops.
    assert shifted_cholesky(A, 1.01 * lam[0], L, 0.0, True) == -1
    # cholesky is the unshifted case, bit for bit.
    L0, L1 = np.empty((n, n)), np.empty((n, n))
    assert cholesky(A, L0, 1e-300) == 0
    shifted_cholesky(A, 0.0, L1, 1e-300, False)
    np.testing.assert_array_equal(L0, L1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 4, 17])
def test_upper_cholesky_and_its_inverse_in_place(n, dtype):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(3 * n, n))
    A = np.eye(n) + X.T @ X  # >= I, as SelectiveSampler's demo matrix
    V = np.triu(A).astype(dtype)
    upper_cholesky_in_place(V)
    U = np.linalg.cholesky(A).T
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(np.triu(V), U, rtol=tol, atol=tol * np.abs(U).max())
    invert_upper_in_place(V, np.empty(n))
    np.testing.assert_allclose(np.triu(V), np.linalg.inv(U), rtol=tol * 10,
                               atol=tol * 10 * np.abs(np.linalg.inv(U)).max())


def test_symv_is_the_symmetric_product():
    rng = np.random.default_rng(3)
    B = rng.normal(size=(6, 6))
    P, x, out = B + B.T, rng.normal(size=6), np.empty(6)
    pmin = symv(P, x, out)
    np.testing.assert_allclose(out, P @ x, rtol=1e-14, atol=1e-14)
    assert pmin == np.diag(P).min()  # DFOP's diagonal guard reads it (guards._proven)
    P32, out32 = P.astype(np.float32), np.empty(6, dtype=np.float32)
    assert symv(P32, x.astype(np.float32), out32) == np.float64(np.diag(P32).min())
    np.testing.assert_allclose(out32, P32 @ x.astype(np.float32), rtol=1e-5, atol=1e-5)


def _kernel_of_64(A, x):
    return A[0] + x


def _kernel_of_32(A, x):
    return A[0] * x + missing_name  # noqa: F821 - typed only if ever chosen


def test_by_dtype_types_only_the_kernel_of_the_dtype():
    """A float64 caller compiles with a float32 kernel that cannot be typed:
    the float32 path is no code at all in it (docs/design/float32.md); a
    float32 caller gets the float32 kernel (here: its typing error)."""
    import numba

    from edgereg._jit import inline_kernel, kernel
    from edgereg._kernels.dtype import by_dtype

    for decorate in (kernel, inline_kernel):
        of = by_dtype("A", decorate(_kernel_of_64), decorate(_kernel_of_32))
        assert of.__name__ == "_kernel_of_"
        caller = numba.njit(lambda A, x, of=of: of(A, x))
        assert caller(np.full(2, 3.0), 1.0) == 4.0
        if numba.config.DISABLE_JIT:
            with pytest.raises(NameError):
                caller(np.full(2, 3.0, dtype=np.float32), 2.0)
        else:
            with pytest.raises(numba.errors.TypingError, match="missing_name"):
                caller(np.full(2, 3.0, dtype=np.float32), 2.0)
    if not numba.config.DISABLE_JIT:  # (plain functions have no inline option)
        with pytest.raises(TypeError, match="both kernels"):
            by_dtype("A", kernel(_kernel_of_64), inline_kernel(_kernel_of_32))
