"""The dtype of a kernel's arithmetic: scalars and scratch seen in an array's dtype.

numba types an expression by its operands: a float32 entry times a float64
scalar is a float64 product, so a float32 model's pass over P would run at
float64's vector width. ``like`` converts a scalar once to the dtype of an
array, ``scratch_of`` sees a float64 scratch block in it (issue 18,
docs/design/float32.md). Both are identities for float64, and plain NumPy
under ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload


def like(value, A):
    """``value`` as a scalar of A's dtype: float32 arithmetic stays float32.

    numba types an expression by its operands: a float32 entry times a
    float64 scalar is a float64 product (4 lanes of AVX2, 2 of NEON, not 8
    and 4). The kernels of a float32 model convert their scalars once with
    this; for float64 it is the identity.
    """
    return A.dtype.type(value)


@overload(like, inline="always")
def _like(value, A):
    if isinstance(A, types.Array) and A.dtype == types.float32:
        return lambda value, A: np.float32(value)
    return lambda value, A: np.float64(value)


def scratch_of(work, A):
    """The float64 scratch ``work`` seen in A's dtype (a view: float32 gives twice
    the entries). Scratch vectors of a float32 model are float32 so that the
    passes over P stay float32 (docs/design/float32.md)."""
    return work.view(np.float32) if A.dtype == np.float32 else work


@overload(scratch_of, inline="always")
def _scratch_of(work, A):
    if isinstance(A, types.Array) and A.dtype == types.float32:
        return lambda work, A: work.view(np.float32)
    return lambda work, A: work
