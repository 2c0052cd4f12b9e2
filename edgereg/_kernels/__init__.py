"""Every compiled function of edgereg, one module per family, no classes.

``linalg`` holds the shared linear algebra (Cholesky, triangular solves, the
symmetric mat-vec), ``eigen`` MORES's Jacobi eigensolver and tridiagonal
solves, ``dtype`` the helpers that keep a float32 model's arithmetic in
float32; each family's step and block kernels are in ``dfop`` (with
``guards``, the admission checks, ``prior``, the bound on P, and
``dfop_pass``, the block's pass over P), ``sparse``
(with ``hashing``, the generator of the projection), ``norma``,
``selective`` (the round's helpers and the blocks' layout, with
``selective_one``, the one-sample path, and ``selective_block``),
``eprocess`` (the change-point test of SelectiveSampler and DriftAlarm),
``mores`` (with ``pa``, SOMOR's and PA's steps) and ``fleet``. A module that
calls another's kernels says so with ``_jit.recompile_with`` (numba's cache
sees one file only). Every family's entry kernels take its blocks in one
order, (inputs, learnt blocks, work, hyper, codes), with the index names of
hyper and codes in the family's module: the same blocks a C caller would
pass.

The model classes (``edgereg/dfop.py`` and so on) validate, own the arrays
and call these; nothing here raises from inside a loop: a kernel reports a
bad sample with a status code. docs/design/calling_convention.md describes the calls;
docs/design/<family>.md the derivations and measured choices.
"""
