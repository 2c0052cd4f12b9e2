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
from numba.core import cgutils
from numba.core import config as numba_config
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array, populate_array

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
    passes over P stay float32 (docs/design/float32.md).

    In a kernel it is an intrinsic, not a function that numba compiles: a
    kernel compiled without NRT (the banks' steps, ``_nrt=False``) refuses a
    function that returns a new array, and the kernels such a kernel calls
    are compiled without NRT too when it compiles them first (numba's flags
    are inherited): a float32 bank's first learn_many in a fresh process
    failed so while ``scratch_of`` was an overload returning ``work.view``."""
    return work.view(np.float32) if A.dtype == np.float32 else work


@intrinsic
def _scratch_of(typingctx, work, A):
    if not (isinstance(work, types.Array) and isinstance(A, types.Array) and work.ndim == 1
            and work.dtype == types.float64 and A.dtype in (types.float32, types.float64)):
        return None
    if A.dtype == work.dtype:
        def same(context, builder, signature, args):
            return impl_ret_borrowed(context, builder, signature.return_type, args[0])

        return work(work, A), same
    view = types.Array(A.dtype, 1, "C")

    def codegen(context, builder, signature, args):
        src = make_array(signature.args[0])(context, builder, value=args[0])
        out = make_array(signature.return_type)(context, builder)
        itemsize = context.get_constant(types.intp, 4)
        nitems = builder.mul(src.nitems, context.get_constant(types.intp, 2))
        populate_array(out, data=builder.bitcast(src.data, out.data.type),
                       shape=cgutils.pack_array(builder, [nitems]),
                       strides=cgutils.pack_array(builder, [itemsize]),
                       itemsize=itemsize, meminfo=src.meminfo, parent=src.parent)
        # a view shares work's memory record: with NRT the caller owns one more reference
        return impl_ret_borrowed(context, builder, signature.return_type, out._getvalue())

    return view(work, A), codegen


if not numba_config.DISABLE_JIT:
    scratch_of = _scratch_of  # noqa: F811  (kernels import the intrinsic; plain NumPy without the JIT)


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

