"""MORES's symmetric eigen-decomposition and tridiagonal solves, allocation-free.

Used by ``mores.py`` only; the routines every family shares (Cholesky,
triangular inverses, symmetric mat-vec) are in ``linalg.py``. Each works in
place on caller-owned arrays, as plain loops over C-contiguous rows.

``jacobi_eigh(A, V, tol, max_sweeps)``
    Cyclic Jacobi eigensolver for a symmetric matrix; warm-startable.
``tridiagonalize(M, A, diag, off, beta, p)``
    Householder reduction Q^T M Q = T of a symmetric matrix (T tridiagonal).
``apply_reflectors(A, beta, R, t, transpose)``
    R <- Q^T R or Q R with the Q of ``tridiagonalize``.
``shifted_tridiagonal_solve(diag, off, c, R, piv)``
    R[:, j] <- (I + c_j T)^-1 R[:, j] for a symmetric tridiagonal T.
"""

from __future__ import annotations

import math

from .._jit import inline_kernel, kernel

__all__ = [
    "jacobi_eigh",
    "tridiagonalize",
    "apply_reflectors",
    "shifted_tridiagonal_solve",
    "add_rows",
]


@inline_kernel
def _rotate(A, Ap, Aq, p, q, c, s, lo, hi):
    """Jacobi's rotation of rows/columns p, q of the symmetric A over k in [lo, hi).

    Called on the three ranges k != p, q, so that no loop holds a branch.
    """
    for k in range(lo, hi):
        akp = Ap[k]
        akq = Aq[k]
        vp = c * akp - s * akq
        vq = s * akp + c * akq
        Ap[k] = vp
        Aq[k] = vq
        A[k, p] = vp
        A[k, q] = vq


@kernel
def jacobi_eigh(A, V, tol, max_sweeps):
    """Cyclic Jacobi eigenvalue iteration for a symmetric matrix, in place.

    On return ``A`` is diagonal up to ``tol * ||A||_F`` (its diagonal holds
    the eigenvalues, unsorted) and the rows of ``V`` have been rotated along:
    every rotation J applied as A <- J^T A J is also applied as V <- J^T V.
    So if on entry A = V0 X V0^T for some symmetric X (V0 orthogonal), on
    return A = V X V^T with V's rows the eigenvectors of X. Passing V = I
    diagonalises A itself; passing the previous step's eigenvectors (A
    rotated into that basis, U^T A U) is a warm start that
    converges in one or two sweeps when X changed little.

    Each rotation zeroes a_pq with the stable formulas of Golub & Van Loan
    (alg. 8.4.1): theta = (a_qq - a_pp) / (2 a_pq),
    t = sign(theta) / (|theta| + sqrt(1 + theta^2)), c = 1/sqrt(1 + t^2),
    s = t c, a_pp -= t a_pq, a_qq += t a_pq, a_pq = 0. Only the rows and
    columns p, q change and they are written mirrored, so A stays exactly
    symmetric. Off-diagonal entries with |a_pq| <= tol ||A||_F are skipped
    (threshold Jacobi); the iteration stops after a sweep with no rotation or
    after ``max_sweeps`` sweeps.

    Returns
    -------
    int
        The number of sweeps that performed at least one rotation.
    """
    n = A.shape[0]
    frob = 0.0
    for i in range(n):
        Ai = A[i]
        for j in range(n):
            frob += Ai[j] * Ai[j]
    frob = math.sqrt(frob)
    thr = tol * frob
    if not frob > 0.0:
        return 0
    sweeps = 0
    for _ in range(max_sweeps):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                if abs(apq) <= thr:
                    continue
                rotated = True
                app = A[p, p]
                aqq = A[q, q]
                theta = (aqq - app) / (2.0 * apq)
                if abs(theta) > 1e150:
                    # theta^2 would overflow; t -> 1/(2 theta) in the limit
                    t = 0.5 / theta
                else:
                    t = 1.0 / (abs(theta) + math.sqrt(1.0 + theta * theta))
                    if theta < 0.0:
                        t = -t
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = t * c
                Ap = A[p]
                Aq = A[q]
                # k != p, q, in three ranges (no branch in the loops)
                _rotate(A, Ap, Aq, p, q, c, s, 0, p)
                _rotate(A, Ap, Aq, p, q, c, s, p + 1, q)
                _rotate(A, Ap, Aq, p, q, c, s, q + 1, n)
                Ap[p] = app - t * apq
                Aq[q] = aqq + t * apq
                Ap[q] = 0.0
                Aq[p] = 0.0
                Vp = V[p]
                Vq = V[q]
                for k in range(n):
                    vpk = Vp[k]
                    vqk = Vq[k]
                    Vp[k] = c * vpk - s * vqk
                    Vq[k] = s * vpk + c * vqk
        if not rotated:
            break
        sweeps += 1
    return sweeps


@kernel
def tridiagonalize(M, A, diag, off, beta, p):
    """Householder reduction of a symmetric M to tridiagonal form, Q^T M Q = T.

    Q = H_0 H_1 ... H_{n-3}, H_k = I - beta_k v_k v_k^T, where v_k is zero in
    its first k + 1 entries and is stored in row k of ``A`` (entries k+1..n-1).
    Only the upper triangle of ``M`` is read and only the upper triangle of
    the scratch ``A`` (n x n) is written. T has diagonal ``diag`` (n) and
    off-diagonal ``off`` (first n - 1 entries). ``beta`` (n) receives the
    beta_k (0 where column k needed no reflection); ``p`` (n) is scratch.

    Golub & Van Loan, alg. 8.3.1: each step forms p = beta A22 v (symmetric
    product from the upper triangle: a dot product and an axpy per row),
    w = p - (beta/2)(p^T v) v, and the rank-two update A22 <- A22 - v w^T - w v^T
    on the upper triangle. The reflector is chosen so that
    v_0 = x_0 + sign(x_0) ||x|| (no cancellation) and
    beta = 1 / (||x|| (||x|| + |x_0|)).
    Both loops take the rows of A22 two at a time (two independent dot
    products in flight, half as many short inner loops) with every sum kept
    in the row-by-row order, so the result is bit for bit that of one row at
    a time. Cost: about 2 n^3 / 3 multiply-adds.
    """
    n = M.shape[0]
    for i in range(n):
        Mi = M[i]
        Ai = A[i]
        for j in range(i, n):
            Ai[j] = Mi[j]
    for k in range(n - 2):
        Ak = A[k]
        diag[k] = Ak[k]
        x0 = Ak[k + 1]
        ss = 0.0
        for i in range(k + 2, n):
            ss += Ak[i] * Ak[i]
        if ss == 0.0:  # already tridiagonal in this column
            beta[k] = 0.0
            off[k] = x0
            continue
        nrm = math.sqrt(x0 * x0 + ss)
        alpha = -nrm if x0 >= 0.0 else nrm
        off[k] = alpha
        Ak[k + 1] = x0 - alpha
        b = 1.0 / (nrm * (nrm + abs(x0)))
        beta[k] = b
        for i in range(k + 1, n):
            p[i] = 0.0
        # p = b A22 v from the upper triangle: row l gives a dot product (entries
        # i >= l) and an axpy (entries i > l). Rows two at a time, every sum in
        # the order of one row after the other.
        l = k + 1
        while l + 1 < n:
            Al = A[l]
            An = A[l + 1]
            vl = b * Ak[l]
            vn = b * Ak[l + 1]
            acc = Al[l] * Ak[l]
            ali = Al[l + 1]
            acc += ali * Ak[l + 1]
            p[l + 1] += vl * ali
            accn = An[l + 1] * Ak[l + 1]
            for i in range(l + 2, n):
                ali = Al[i]
                ani = An[i]
                aki = Ak[i]
                acc += ali * aki
                accn += ani * aki
                p[i] = p[i] + vl * ali + vn * ani
            p[l] += b * acc
            p[l + 1] += b * accn
            l += 2
        if l < n:
            p[l] += b * (A[l, l] * Ak[l])
        pv = 0.0
        for i in range(k + 1, n):
            pv += p[i] * Ak[i]
        h = 0.5 * b * pv
        for i in range(k + 1, n):  # w = p - h v
            p[i] -= h * Ak[i]
        i = k + 1
        while i + 1 < n:  # A22 -= v w^T + w v^T (upper triangle), two rows at a time
            vi = Ak[i]
            wi = p[i]
            vn = Ak[i + 1]
            wn = p[i + 1]
            Ai = A[i]
            An = A[i + 1]
            Ai[i] -= vi * wi + wi * vi
            for j in range(i + 1, n):
                pj = p[j]
                akj = Ak[j]
                Ai[j] -= vi * pj + wi * akj
                An[j] -= vn * pj + wn * akj
            i += 2
        if i < n:
            vi = Ak[i]
            wi = p[i]
            A[i, i] -= vi * wi + wi * vi
    if n >= 2:
        diag[n - 2] = A[n - 2, n - 2]
        off[n - 2] = A[n - 2, n - 1]
    diag[n - 1] = A[n - 1, n - 1]


@inline_kernel
def add_rows(out, c, R, start, stop):
    """out += sum_{i = start}^{stop - 1} c_i R_i (rows of R), two rows per inner loop.

    For rows of a few entries the loop overhead outweighs the arithmetic;
    the sums keep their row-by-row order, (out + c_i R_i) + c_{i+1} R_{i+1}.
    """
    m = out.shape[0]
    i = start
    while i + 1 < stop:
        a = c[i]
        b = c[i + 1]
        Ri = R[i]
        Rn = R[i + 1]
        for j in range(m):
            out[j] = out[j] + a * Ri[j] + b * Rn[j]
        i += 2
    if i < stop:
        a = c[i]
        Ri = R[i]
        for j in range(m):
            out[j] += a * Ri[j]


@kernel
def apply_reflectors(A, beta, R, t, transpose):
    """R <- Q^T R (``transpose`` True) or R <- Q R, with Q from :func:`tridiagonalize`.

    ``A`` and ``beta`` are as left by :func:`tridiagonalize`; ``R`` is n x m
    and ``t`` (m) is scratch. Each reflector is applied as
    R <- R - v (beta v^T R), with axpys over R's contiguous rows, two rows per
    inner loop (for m of a few, the loop overhead outweighs the arithmetic;
    the sums keep their row-by-row order).
    Cost: n^2 m multiply-adds.
    """
    n = A.shape[0]
    m = R.shape[1]
    for kk in range(n - 2):
        k = kk if transpose else n - 3 - kk
        b = beta[k]
        if b == 0.0:
            continue
        Ak = A[k]
        for j in range(m):
            t[j] = 0.0
        add_rows(t, Ak, R, k + 1, n)  # t = v^T R
        for j in range(m):
            t[j] *= b
        i = k + 1
        while i + 1 < n:
            vi = Ak[i]
            vn = Ak[i + 1]
            Ri = R[i]
            Rn = R[i + 1]
            for j in range(m):
                tj = t[j]
                Ri[j] -= vi * tj
                Rn[j] -= vn * tj
            i += 2
        if i < n:
            vi = Ak[i]
            Ri = R[i]
            for j in range(m):
                Ri[j] -= vi * t[j]


@kernel
def shifted_tridiagonal_solve(diag, off, c, R, piv):
    """R[:, j] <- (I + c_j T)^-1 R[:, j] for every column j, T symmetric tridiagonal.

    T has diagonal ``diag`` and off-diagonal ``off`` (as from
    :func:`tridiagonalize`); ``c`` (m) holds the shifts' scales and ``piv``
    (n x m) is scratch. Gaussian elimination without pivoting (the LDL^T
    factorisation of I + c_j T), all m columns side by side. Meant for
    I + c_j T positive definite (T PSD and c_j >= 0: then I + c_j T >= I and
    every pivot is >= 1, so no pivoting is needed). Cost: O(n m).
    """
    n = diag.shape[0]
    m = R.shape[1]
    for j in range(m):
        piv[0, j] = 1.0 + c[j] * diag[0]
    for i in range(1, n):
        Ri = R[i]
        Rp = R[i - 1]
        Pi = piv[i]
        Pp = piv[i - 1]
        di = diag[i]
        ei = off[i - 1]
        for j in range(m):
            e = c[j] * ei
            f = e / Pp[j]
            Pi[j] = (1.0 + c[j] * di) - f * e
            Ri[j] -= f * Rp[j]
    Rl = R[n - 1]
    Pl = piv[n - 1]
    for j in range(m):
        Rl[j] /= Pl[j]
    for i in range(n - 2, -1, -1):
        Ri = R[i]
        Rn = R[i + 1]
        Pi = piv[i]
        ei = off[i]
        for j in range(m):
            Ri[j] = (Ri[j] - c[j] * ei * Rn[j]) / Pi[j]
