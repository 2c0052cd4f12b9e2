"""C-callable shims of a model's kernels, built from the model's own blocks.

A shim takes one raw pointer per block of the model (in the order of
:func:`blocks`) and the sample's pointers, makes the arrays with
``numba.carray`` (no allocation) and calls the same kernel the class calls,
so the exported code is the JIT's code. Sizes (d, block lengths) are
constants of the export: one object per (model, d, dtype).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .._kernels.selective_block import _label_of

#: numba options of every shim: no CPython wrapper (no Py* symbol), NumPy's
#: error model (a division by zero is inf/NaN, never an exception).
SHIM_OPTIONS = {"no_cpython_wrapper": True, "error_model": "numpy", "boundscheck": False,
                "nogil": True}


@dataclass
class Block:
    """One caller-owned block: its name, dtype and length (elements)."""

    name: str
    dtype: np.dtype
    size: int
    initial: np.ndarray  # the block of a freshly reset model (the init image)


@dataclass
class Field:
    """A named field of the state (or work) as a slice of a block."""

    name: str
    block: str
    offset: int  # elements of the block's dtype from its start
    shape: tuple
    dtype: np.dtype
    learnt: bool
    #: Element strides when the field is not contiguous in its block (a bank's
    #: members' w, rows of the stacked P and w); () when it is.
    strides: tuple = ()
    #: Block elements the field covers when its dtype is narrower than the block's
    #: (DFOP's float32 arithmetic keeps a float32 in a float64 slot); 0 otherwise.
    span: int = 0

    def runs(self) -> list[tuple[int, int]]:
        """(first element, count) of the field's contiguous runs in its block."""
        n = int(np.prod(self.shape))
        if self.span:
            return [(self.offset, self.span)]
        if not self.strides:
            return [(self.offset, n)]
        if len(self.shape) > 1 and list(self.strides[1:]) != [
                int(np.prod(self.shape[i + 1:])) for i in range(1, len(self.shape))]:
            raise ValueError(f"field {self.name}: rows are not contiguous")
        inner = n // self.shape[0]
        return [(self.offset + i * self.strides[0], inner) for i in range(self.shape[0])]


@dataclass
class Family:
    """What the exporter needs of a model family (DFOP/RLS, SOMOR/PARegressor)."""

    prefix: str
    d: int
    dtype: np.dtype
    task: str
    blocks: list[Block]
    fields: list[Field]
    hyper: dict[str, float] = field(default_factory=dict)  # name -> value
    codes: dict[str, int] = field(default_factory=dict)
    functions: dict[str, Any] = field(default_factory=dict)  # C name -> (pyfunc, sig, ctype)
    #: The model's live blocks (export_state's struct, the tests' hash of the JIT).
    current: dict[str, np.ndarray] = field(default_factory=dict)
    #: 0: one output (y a double, predict_one returns it); m: y and yhat are m doubles.
    n_outputs: int = 0
    #: Whether learn_many reads per-step forgetting factors (else n_mu must be 0).
    forgetting: bool = True
    #: The type of y, yhat, Y, mu and out in C: float64, or float32 for a model whose
    #: arithmetic is float32 only (a double there would need soft-double code).
    io: np.dtype = field(default_factory=lambda: np.dtype(np.float64))
    #: Bytes of scratch each call keeps on its own stack rather than in the struct
    #: (0: the scratch, if any, is a field of the struct).
    stack_scratch: int = 0
    #: C declarations of the family's further calls (beyond learn_one, learn_many and
    #: predict_one; each a ``functions`` entry compiled as ``<prefix>_<name>_blocks``):
    #: prototypes, their comments and ``static inline`` wrappers over the state,
    #: written into the header after the three standard calls. ``@prefix@`` and
    #: ``@PREFIX@`` in them become the export's prefix (lower and upper case).
    c_api: list[str] = field(default_factory=list)


def _base_of(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def locate_fields(blocks: dict[str, np.ndarray], groups: list[tuple[Any, bool]]) -> list[Field]:
    """Where every field of the model's state and work NamedTuples sits in its block,
    found by address (so a field added to a family's ``_allocate`` flows through)."""
    out = []
    for fields, learnt in groups:
        for name, view in fields._asdict().items():
            if not isinstance(view, np.ndarray):
                continue
            start = _address(view)
            for bname, block in blocks.items():
                lo = _address(block)
                if lo <= start < lo + block.nbytes:
                    if view.itemsize < block.itemsize:  # in the block's elements
                        offset, rest = divmod(start - lo, block.itemsize)
                        if rest or not view.flags.c_contiguous:
                            raise ValueError(f"field {name} does not start a slot of {bname}")
                        out.append(Field(name, bname, offset, tuple(view.shape), view.dtype,
                                         learnt, span=-(-view.nbytes // block.itemsize)))
                        break
                    offset, rest = divmod(start - lo, view.itemsize)
                    if rest:
                        raise ValueError(f"field {name} is not aligned in block {bname}")
                    strides = () if view.flags.c_contiguous else tuple(
                        st // view.itemsize for st in view.strides)
                    out.append(Field(name, bname, offset, tuple(view.shape),
                                     view.dtype, learnt, strides))
                    break
            else:
                raise ValueError(f"field {name} is in none of the blocks {list(blocks)}")
    return out


#: CPython 3.11's ast.parse fails in two threads at once ("AST constructor
#: recursion depth mismatch"): exports run from threads parse one at a time.
_PARSE_LOCK = threading.Lock()


def _parse(module: Any) -> Any:
    import ast
    import inspect

    source = inspect.getsource(module)
    with _PARSE_LOCK:
        return ast.parse(source)


def index_names(module: Any, kind: str) -> dict[str, int]:
    """The index constants of ``hyper`` (kind "hyper") or ``codes`` ("codes") in a
    kernel module, read from the module, never spelled here: names with the
    scheme's prefix (``HYPER_``, ``CODE_``) when the module uses it, else the
    names assigned in the statement just before its ``N_HYPER`` / ``N_CODES``
    count (``MU, P0 = 0, 1`` then ``N_HYPER = 2``)."""
    import ast

    prefix, count = {"hyper": ("HYPER_", "N_HYPER"), "codes": ("CODE_", "N_CODES")}[kind]
    values = vars(module)
    try:
        own = {t.id for node in _parse(module).body
               if isinstance(node, ast.Assign) for target in node.targets
               for t in (target.elts if isinstance(target, ast.Tuple) else [target])
               if isinstance(t, ast.Name)}
    except (OSError, TypeError):  # no source (a module made in memory): all its names
        own = set(values)
    named = {k: v for k, v in values.items()
             if k.startswith(prefix) and type(v) is int and k in own}
    if named:
        return dict(sorted(named.items(), key=lambda kv: kv[1]))
    body = _parse(module).body
    for i, node in enumerate(body):
        targets = getattr(node, "targets", [])
        if (i and isinstance(node, ast.Assign) and len(targets) == 1
                and isinstance(targets[0], ast.Name) and targets[0].id == count):
            before = body[i - 1]
            if isinstance(before, ast.Assign):
                target = before.targets[0]
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                found = {n.id: values[n.id] for n in names if isinstance(n, ast.Name)}
                if sorted(found.values()) == list(range(values[count])):
                    return dict(sorted(found.items(), key=lambda kv: kv[1]))
    raise ValueError(f"cannot find the {kind} index names of {module.__name__}")


def nocopy_reshape(nd, dims_p, strides_p, newnd, newdims_p, newstrides_p, itemsize, is_f_order):
    """numba's ``numba_attempt_nocopy_reshape`` for an exported object, for
    C-contiguous arrays only (every reshape in the kernels is of a contiguous
    slice of a block): 1 with the new C strides, or 0 (numba's reshape then
    fails, the C wrapper returns its error status): never a wrong view."""
    dims = carray(dims_p, (nd,))
    strides = carray(strides_p, (nd,))
    newdims = carray(newdims_p, (newnd,))
    newstrides = carray(newstrides_p, (newnd,))
    if is_f_order != 0:
        return np.intc(0)
    size = 1
    for i in range(nd - 1, -1, -1):
        if dims[i] != 1 and strides[i] != size * itemsize:
            return np.intc(0)  # not C-contiguous: numba's full algorithm not ported
        size *= dims[i]
    newsize = 1
    for i in range(newnd):
        newsize *= newdims[i]
    if newsize != size:
        return np.intc(0)
    step = itemsize
    for i in range(newnd - 1, -1, -1):
        newstrides[i] = step
        step *= newdims[i] if newdims[i] > 0 else 1
    return np.intc(1)


def nocopy_reshape_signature():
    """The C signature numba declares for ``numba_attempt_nocopy_reshape``."""
    from numba import types

    p = types.CPointer(types.intp)
    return types.intc(types.intp, p, p, types.intp, p, p, types.intp, types.intc)


# ------------------------------------------------ what every family's shims share
#: Status of learn_one (the kernels' OK / INVALID) and of the shims.
BAD_FORGETTING = -2  # learn_many: a per-step forgetting factor outside [0, 1)
BAD_LENGTH = -3  # learn_many: n_mu is neither 0, 1 nor n


@njit(inline="always", **SHIM_OPTIONS)
def _labels_into(Yp, n, out):
    """The block's labels by the classifiers' one policy (``_label_of``: 1 -> 1,
    0 or -1 -> -1, else NaN: invalid), written into out, which the kernel then
    reads as Y (row t is read before out[t] is written)."""
    Y = carray(Yp, (n,))
    for t in range(n):
        out[t] = _label_of(Y[t])
    return out


@njit(inline="always", **SHIM_OPTIONS)
def _signs(out, n):
    """A classifier's predictions as the class returns them (-1 for a refused row's NaN)."""
    for t in range(n):
        out[t] = 1.0 if out[t] >= 0.0 else -1.0


def _numba_float(dtype: np.dtype):
    return types.float32 if np.dtype(dtype) == np.float32 else types.float64


@intrinsic
def _stack_double(typingctx):
    """A pointer to one double on the caller's stack (an ``alloca``: no allocation),
    so that a scalar y reaches the multi-output kernels as a (1,) array."""

    def codegen(context, builder, signature, args):
        return cgutils.alloca_once(builder, context.get_value_type(types.float64))

    return types.CPointer(types.float64)(), codegen


@intrinsic
def _stack_float(typingctx):
    """``_stack_double`` for one float (the float32 arithmetic's scalar y)."""

    def codegen(context, builder, signature, args):
        return cgutils.alloca_once(builder, context.get_value_type(types.float32))

    return types.CPointer(types.float32)(), codegen


@njit(inline="always", **SHIM_OPTIONS)
def _factors_status(mup, n_mu, n):
    """learn_many's per-step forgetting factors (float64) checked before a row is
    learnt: 0 when usable (n_mu 0: the model's own; 1: one for every row; n: one
    per row; each in [0, 1)), else BAD_LENGTH or BAD_FORGETTING."""
    if n_mu == 0:
        return 0
    if n_mu != n and n_mu != 1:
        return BAD_LENGTH
    MU = carray(mup, (n_mu,))
    for t in range(n_mu):
        if not (MU[t] >= 0.0 and MU[t] < 1.0):
            return BAD_FORGETTING
    return 0


def stack_array(n: int, item: Any, align: int = 0):
    """An intrinsic giving a pointer to n values of numba type ``item`` on the calling
    function's stack (an ``alloca`` in its entry block, aligned to ``align`` bytes when
    given, not zeroed: the kernels write every element before they read it). No
    allocation, no symbol, reentrant."""

    @intrinsic
    def stack(typingctx):
        def codegen(context, builder, signature, args):
            with builder.goto_entry_block():
                ptr = builder.alloca(context.get_data_type(item),
                                     size=context.get_constant(types.intp, n))
                if align:
                    ptr.align = align
            return ptr

        return types.CPointer(item)(), codegen

    return stack


@njit(inline="always", **SHIM_OPTIONS)
def _label_of32(v):
    """``_label_of`` in float32 (a float32 y; no double compare)."""
    if v == np.float32(1.0):
        return np.float32(1.0)
    if v == np.float32(0.0) or v == np.float32(-1.0):
        return np.float32(-1.0)
    return np.float32(np.nan)


@njit(inline="always", **SHIM_OPTIONS)
def _sign32(v):
    return np.float32(1.0) if v >= np.float32(0.0) else np.float32(-1.0)
