"""The dtype of a kernel's arithmetic: scalars and scratch seen in an array's dtype.

numba types an expression by its operands: a float32 entry times a float64
scalar is a float64 product, so a float32 model's pass over P would run at
float64's vector width. ``like`` converts a scalar once to the dtype of an
array, ``scratch_of`` sees a float64 scratch block in it
(docs/design/float32.md); both are identities for float64. ``by_dtype`` makes
one function of a float64 and a float32 kernel. All are plain NumPy under
``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import inspect

import numpy as np
from numba import types
from numba.extending import overload

from .._jit import python_function


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


def by_dtype(name, float64_kernel, float32_kernel):
    """One function that runs ``float64_kernel`` or ``float32_kernel`` by the dtype
    of its argument ``name`` (an array or a scalar), chosen when numba types
    the call.

    Both kernels take the same arguments (those of ``float64_kernel``); the
    one for the other dtype is never typed, so a float64 model's code holds
    no float32 path at all. (A branch on ``A.itemsize`` is read at run time:
    it made float64 NORMA's learn_many 13% slower, measured; a branch on a
    constant still types the path it never takes: with a float32 view in
    it, SelectiveSampler's float64 learn_many ran 3-5% slower.) Under
    ``NUMBA_DISABLE_JIT=1`` the returned function dispatches at run time.
    """
    function = python_function(float64_kernel)
    signature = inspect.signature(function)
    k = list(signature.parameters).index(name)

    def dispatch(*args):
        float32 = getattr(args[k], "dtype", None) == np.float32
        return (float32_kernel if float32 else float64_kernel)(*args)

    def choose(*args):
        A = args[k]
        float32 = (A.dtype if isinstance(A, types.Array) else A) == types.float32
        return python_function(float32_kernel if float32 else float64_kernel)

    dispatch.__signature__ = choose.__signature__ = signature
    dispatch.__name__ = dispatch.__qualname__ = function.__name__.removesuffix("64")
    # Compiled as the kernels are: inlined only if they are (a d^2 loop
    # inlined where a call was made SelectiveSampler's learn_many 20% slower
    # at d = 10, measured), with their error model.
    options = [getattr(f, "targetoptions", {}) for f in (float64_kernel, float32_kernel)]
    inline = options[0].get("inline", "never")
    if options[1].get("inline", "never") != inline:
        raise TypeError("by_dtype: both kernels must be inlined, or neither")
    jit_options = {o: v for o, v in options[0].items() if o in ("nogil", "error_model")}
    overload(dispatch, inline=inline, jit_options=jit_options)(choose)
    return dispatch

