"""Every compiled function of edgereg, one module per family, no classes.

``linalg`` holds the shared linear algebra (Cholesky, triangular and
tridiagonal solves, the symmetric mat-vec, Jacobi); ``dfop``, ``sparse``,
``norma``, ``selective``, ``mores`` and ``fleet`` hold each family's step and
block kernels. The model classes (``edgereg/dfop.py`` and so on) validate,
own the arrays and call these; nothing here raises from inside a loop: a
kernel reports a bad sample with a status code. CONVENTIONS.md describes the
shape; docs/design/<family>.md the derivations and measured choices.
"""
